package session_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/vtcode/vtcode-ls/session"
)

// BenchmarkPrepareRequest measures one agent turn (prepare with the turn's
// messages) on a long session with clearing engaged and compaction off: the
// steady-state cost of the pipeline per request.
func BenchmarkPrepareRequest(b *testing.B) {
	for _, tc := range []struct {
		name string
		init string
	}{
		{"approx", `{"context":{"tokenizer":"approx"},"autoCompaction":{"enabled":false}}`},
		{"o200k", `{"autoCompaction":{"enabled":false}}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			m := session.NewManager(offlineOnly(session.Options{NoWatch: true}))
			defer m.Close()
			if err := m.AddWorkspace(b.TempDir(), json.RawMessage(tc.init)); err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			res, err := m.OpenSession(ctx, session.OpenParams{ContextWindow: 200000})
			if err != nil {
				b.Fatal(err)
			}
			id := res.SessionID
			if _, err := m.AppendMessages(ctx, session.AppendParams{SessionID: id, Messages: turns(200, 4000)}); err != nil {
				b.Fatal(err)
			}
			turn := turns(1, 4000)
			b.ResetTimer()
			for b.Loop() {
				if _, err := m.PrepareRequest(ctx, session.PrepareParams{SessionID: id, Messages: turn, SystemPrompt: "You are a coding agent."}, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
