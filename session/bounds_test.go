package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/session"
)

// wantParamError checks that err is a *session.ParamError naming path.
func wantParamError(t *testing.T, err error, path string) {
	t.Helper()
	var pe *session.ParamError
	if !errors.As(err, &pe) || pe.Path != path {
		t.Fatalf("error %v, want a param error naming %s", err, path)
	}
}

func TestHistoryWithAHugeLimitReadsToTheEnd(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	id := e.open(session.OpenParams{ContextWindow: 16000})
	e.append(id, history.NewText(history.User, "a"), history.NewText(history.Assistant, "b"), history.NewText(history.User, "c"))
	for _, p := range []session.HistoryParams{
		{SessionID: id, Offset: 1, Limit: math.MaxInt},
		{SessionID: id, Offset: math.MaxInt, Limit: math.MaxInt},
		{SessionID: id, Offset: 1, Limit: 1},
	} {
		res, err := e.m.History(context.Background(), p)
		if err != nil {
			t.Fatalf("History(%+v): %v", p, err)
		}
		want := min(max(0, 3-min(p.Offset, 3)), p.Limit)
		if len(res.Messages) != want || res.Total != 3 {
			t.Errorf("History(offset %d, limit %d) = %d messages of %d, want %d", p.Offset, p.Limit, len(res.Messages), res.Total, want)
		}
	}
}

func TestTokenCountsAreBounded(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	id := e.open(session.OpenParams{ContextWindow: 16000})
	huge := math.MaxInt - 5
	ctx := context.Background()
	_, err := e.m.PrepareRequest(ctx, session.PrepareParams{SessionID: id, PrefixTokens: &huge}, nil)
	wantParamError(t, err, "prefixTokens")
	_, err = e.m.PrepareRequest(ctx, session.PrepareParams{SessionID: id, ReservedOutputTokens: &huge}, nil)
	wantParamError(t, err, "reservedOutputTokens")
	_, err = e.m.OpenSession(ctx, session.OpenParams{SessionID: "s2", ContextWindow: huge})
	wantParamError(t, err, "contextWindow")
	_, err = e.m.SwitchModel(ctx, session.SwitchParams{SessionID: id, Provider: "offline", ContextWindow: huge}, nil)
	wantParamError(t, err, "contextWindow")
	_, err = e.m.RecordResponse(ctx, session.RecordParams{SessionID: id, Message: history.NewText(history.Assistant, "x"),
		Usage: &history.Usage{InputTokens: huge}})
	wantParamError(t, err, "usage.inputTokens")
	// Nothing of the rejected calls changed the session.
	if h := e.history(id); len(h) != 0 {
		t.Errorf("history after rejected calls: %d messages", len(h))
	}
	if st := e.stats(id); st.Pressure < 0 || st.State != session.StateOK {
		t.Errorf("stats after rejected calls: pressure %v, state %s", st.Pressure, st.State)
	}
}

// TestPrefixOverTheWindowIsCritical: a request whose prefix alone exceeds
// the window has pressure over 1, and state critical, not warn.
func TestPrefixOverTheWindowIsCritical(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	id := e.open(session.OpenParams{ContextWindow: 16000})
	prefix := 30000
	res, err := e.m.PrepareRequest(context.Background(), session.PrepareParams{SessionID: id, PrefixTokens: &prefix,
		Messages: []history.Message{history.NewText(history.User, strings.Repeat("word ", 50))}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []session.Stats{res.Stats, *e.stats(id)} {
		if st.Pressure <= 1 || st.State != session.StateCritical {
			t.Errorf("prefix of %d tokens in a window of 16000: pressure %v, state %s; want > 1 and critical", prefix, st.Pressure, st.State)
		}
	}
}

// TestStoreErrorsNameTheSessionOnce: an error from the store reaches the
// caller with one "open session <id>" prefix, not one per layer.
func TestStoreErrorsNameTheSessionOnce(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	dir := filepath.Join(e.dir, ".vtcode", "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// A file where the session's folder belongs.
	if err := os.WriteFile(filepath.Join(dir, "s1"), []byte("not a folder"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := e.m.OpenSession(context.Background(), session.OpenParams{SessionID: "s1"})
	if err == nil {
		t.Fatal("opened a session whose folder is a file")
	}
	if n := strings.Count(err.Error(), "open session s1"); n != 1 {
		t.Errorf("error %q names the session %d times, want once", err, n)
	}
}

// TestLimitsPerCall: a message with too many tool calls or too many bytes,
// a call with too many messages, a prefix too large: each is refused with a
// param error naming it, and nothing of the call is applied.
func TestLimitsPerCall(t *testing.T) {
	e := newEnv(t, session.Options{Limits: session.Limits{MaxToolCalls: 3, MaxMessageBytes: 1000, MaxMessagesPerCall: 5}}, "")
	id := e.open(session.OpenParams{ContextWindow: 16000})
	e.append(id, history.NewText(history.User, "start"))
	calls := func(n int) history.Message {
		m := history.Message{Role: history.Assistant, Content: history.Text("calls")}
		for i := range n {
			m.ToolCalls = append(m.ToolCalls, history.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "read_file", Arguments: `{}`})
		}
		return m
	}
	big := history.NewText(history.User, strings.Repeat("x", 1001))
	many := make([]history.Message, 6)
	for i := range many {
		many[i] = history.NewText(history.User, "m")
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		call func() error
		path string
	}{
		{"tool calls", func() error {
			_, err := e.m.AppendMessages(ctx, session.AppendParams{SessionID: id, Messages: []history.Message{history.NewText(history.User, "ok"), calls(4)}})
			return err
		}, "messages[1].toolCalls"},
		{"bytes", func() error {
			_, err := e.m.PrepareRequest(ctx, session.PrepareParams{SessionID: id, Messages: []history.Message{big}}, nil)
			return err
		}, "messages[0]"},
		{"messages", func() error {
			_, err := e.m.AppendMessages(ctx, session.AppendParams{SessionID: id, Messages: many})
			return err
		}, "messages"},
		{"response", func() error {
			_, err := e.m.RecordResponse(ctx, session.RecordParams{SessionID: id, Message: calls(4)})
			return err
		}, "message.toolCalls"},
		{"system prompt", func() error {
			_, err := e.m.PrepareRequest(ctx, session.PrepareParams{SessionID: id, SystemPrompt: strings.Repeat("s", 1001)}, nil)
			return err
		}, "systemPrompt"},
		{"tools", func() error {
			_, err := e.m.PrepareRequest(ctx, session.PrepareParams{SessionID: id, SystemPrompt: strings.Repeat("s", 600),
				Tools: []json.RawMessage{json.RawMessage(`"` + strings.Repeat("t", 500) + `"`)}}, nil)
			return err
		}, "tools"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantParamError(t, tc.call(), tc.path)
			if h := e.history(id); len(h) != 1 {
				t.Errorf("history has %d messages after a refused call, want 1", len(h))
			}
		})
	}
	// At the limits, everything is accepted.
	e.append(id, calls(3), history.NewText(history.User, strings.Repeat("x", 990)))
	if h := e.history(id); len(h) != 3 {
		t.Errorf("history has %d messages, want 3", len(h))
	}
}

// TestArtifactErrorNamesTheArtifactOnce: a compaction whose artifact cannot
// be written fails with the store's error, not wrapped a second time with
// "write artifact".
func TestArtifactErrorNamesTheArtifactOnce(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	id := e.open(session.OpenParams{SessionID: "s1", ContextWindow: 16000})
	e.append(id, turns(16, 400)...)
	arts := filepath.Join(e.dir, ".vtcode", "sessions", id, "artifacts")
	if err := os.RemoveAll(arts); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(arts, []byte("not a folder"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := e.m.Compact(context.Background(), session.CompactParams{SessionID: id}, nil)
	if err == nil {
		t.Fatal("compacted with no place for the artifact")
	}
	if n := strings.Count(err.Error(), "write artifact"); n != 1 {
		t.Errorf("error %q says \"write artifact\" %d times, want once", err, n)
	}
}
