package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/session"
)

// askRecorder is a notifier that keeps the proposals and boundaries.
type askRecorder struct {
	*recorder
	mu        sync.Mutex
	proposals []session.ProposalEvent
	shown     []string
}

func (r *askRecorder) CompactionProposed(ev session.ProposalEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.proposals = append(r.proposals, ev)
}

func (r *askRecorder) ShowMessage(level int, text string) {
	r.mu.Lock()
	r.shown = append(r.shown, text)
	r.mu.Unlock()
	r.recorder.ShowMessage(level, text)
}

func (r *askRecorder) counts() (proposals int, shown []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.proposals), append([]string(nil), r.shown...)
}

// With auto_compaction_mode = "ask", a scripted session of 300 turns that
// crosses the soft threshold again and again never sends a request over
// the window, and compacts only when the user approves a proposal (a
// manual compaction) or at the hard limit (the request would not fit),
// saying so.
func TestAskModeCompactsOnlyWhenApprovedOrAtTheLimit(t *testing.T) {
	rec := &askRecorder{recorder: newRecorder()}
	dir := t.TempDir() // removed after the manager closed its files (Windows keeps open files)
	m := session.NewManager(offlineOnly(session.Options{Notifier: rec, NoWatch: true}))
	t.Cleanup(func() { m.Close() })
	if err := m.AddWorkspace(dir, json.RawMessage(`{"context":{"tokenizer":"approx"},"autoCompaction":{"mode":"ask"}}`)); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	o, err := m.OpenSession(ctx, session.OpenParams{SessionID: "ask", ContextWindow: 20000})
	if err != nil {
		t.Fatal(err)
	}
	id := o.SessionID
	answered, approved, declined, atLimit := 0, 0, 0, 0
	for turn := 0; turn < 300; turn++ {
		msgs := []history.Message{
			history.NewText(history.User, fmt.Sprintf("Turn %d: %s", turn, strings.Repeat(fmt.Sprintf("explain how module m%d retries. ", turn), 25))),
			history.NewText(history.Assistant, fmt.Sprintf("Turn %d: %s", turn, strings.Repeat(fmt.Sprintf("m%d retries with backoff. ", turn), 30))),
		}
		before := len(rec.boundaries())
		res, err := m.PrepareRequest(ctx, session.PrepareParams{SessionID: id, Messages: msgs, SystemPrompt: "You are a coding agent."}, nil)
		if err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		st := res.Stats
		limit := st.Capacity - st.ReservedOutput
		if used := st.ProjectedTokens + st.PrefixTokens; used > limit {
			t.Fatalf("turn %d: the request holds %d tokens, over the window's %d", turn, used, limit)
		}
		if bs := rec.boundaries(); len(bs) > before {
			b := bs[len(bs)-1]
			if b.Trigger != "auto" || b.OriginalTokens+st.PrefixTokens <= limit {
				t.Fatalf("turn %d: compacted unasked (trigger %s) from %d tokens, under the %d limit", turn, b.Trigger, b.OriginalTokens, limit)
			}
			atLimit++
		}
		// The user answers each new proposal: in every other stretch
		// between compactions it approves the first one, in the others it
		// declines them all (the history then grows to the hard limit).
		if n, _ := rec.counts(); n > answered {
			answered = n
			if len(rec.boundaries())%2 == 0 {
				if _, err := m.Compact(ctx, session.CompactParams{SessionID: id, Strategy: "local"}, nil); err != nil {
					t.Fatalf("turn %d: approving: %v", turn, err)
				}
				if bs := rec.boundaries(); bs[len(bs)-1].Trigger != "manual" {
					t.Fatalf("turn %d: the approved compaction has trigger %q", turn, bs[len(bs)-1].Trigger)
				}
				approved++
			} else {
				if _, err := m.DeclineCompaction(ctx, session.DeclineParams{SessionID: id}); err != nil {
					t.Fatal(err)
				}
				declined++
			}
		}
	}
	proposals, shown := rec.counts()
	if proposals < 5 || approved < 3 || declined < 2 {
		t.Errorf("%d proposals (%d approved, %d declined) in 300 turns: the script must cross the soft threshold at least 5 times", proposals, approved, declined)
	}
	if got := len(rec.boundaries()); got != approved+atLimit {
		t.Errorf("%d compactions, want the %d approved + %d at the hard limit", got, approved, atLimit)
	}
	unasked := 0
	for _, s := range shown {
		if strings.Contains(s, "compacted without asking") {
			unasked++
		}
	}
	if unasked != atLimit || atLimit == 0 {
		t.Errorf("%d compactions at the hard limit, %d messages saying so; want them equal and at least one (a declined proposal grows to the limit)", atLimit, unasked)
	}
	t.Logf("%d proposals, %d approved, %d declined, %d at the hard limit", proposals, approved, declined, atLimit)
}
