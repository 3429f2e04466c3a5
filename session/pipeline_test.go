package session_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/session"
)

func prepare(t *testing.T, e *env, p session.PrepareParams, prog session.Progress) *session.PrepareResult {
	t.Helper()
	res, err := e.m.PrepareRequest(context.Background(), p, prog)
	if err != nil {
		t.Fatalf("PrepareRequest: %v", err)
	}
	return res
}

func TestPrepareClearsOldToolResults(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	id := e.open(session.OpenParams{ContextWindow: 32000})
	msgs := turns(20, 4000)
	res := prepare(t, e, session.PrepareParams{SessionID: id, Messages: msgs, SystemPrompt: "You are a coding agent."}, nil)

	st := res.Stats
	if st.ClearedResults == 0 || st.ProjectedTokens >= st.OriginalTokens {
		t.Fatalf("clearing did not engage: %+v", st)
	}
	if res.Compaction != nil || res.Trimmed {
		t.Fatalf("no compaction or trim expected: compaction=%+v trimmed=%v", res.Compaction, res.Trimmed)
	}
	// capacity 32,000, 4,096 reserved, prefix → docs/design.md §7.1.
	if want := min(40000, (32000-4096-st.PrefixTokens)*3/5); st.LocalTrigger != want {
		t.Errorf("localTrigger = %d, want %d", st.LocalTrigger, want)
	}
	if st.Capacity != 32000 || st.ReservedOutput != 4096 || st.Messages != len(msgs) {
		t.Errorf("stats = %+v", st)
	}
	stubs := 0
	for _, m := range res.Messages {
		if m.Role == history.Tool && strings.HasPrefix(m.Content.Text(), "[tool result cleared") {
			stubs++
		}
	}
	if stubs != st.ClearedResults {
		t.Errorf("projection has %d stubs, stats say %d", stubs, st.ClearedResults)
	}
	// The session history is never modified by clearing.
	if got, want := jsonOf(t, e.history(id)), jsonOf(t, msgs); got != want {
		t.Fatal("history changed by clearing")
	}
	// Two identical requests return identical projections.
	again := prepare(t, e, session.PrepareParams{SessionID: id, SystemPrompt: "You are a coding agent."}, nil)
	if jsonOf(t, again.Messages) != jsonOf(t, res.Messages) {
		t.Fatal("projection not stable across identical requests")
	}
	if got := e.stats(id); jsonOf(t, *got) != jsonOf(t, again.Stats) {
		t.Errorf("projectionStats differ from the last prepare's stats:\n%s\n%s", jsonOf(t, *got), jsonOf(t, again.Stats))
	}
}

func TestPrepareAutoCompactsAtThreshold(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	id := e.open(session.OpenParams{ContextWindow: 16000})
	e.setPolicy(id, `{"toolResultClearing":{"enabled":false}}`)
	msgs := turns(20, 4000)
	prog := newProgress()
	res := prepare(t, e, session.PrepareParams{SessionID: id, Messages: msgs}, prog)

	c := res.Compaction
	if c == nil || c.Error != "" || c.ArtifactID == "" {
		t.Fatalf("auto compaction did not run: %+v", c)
	}
	if c.Trigger != "auto" || c.Mode != "local" || c.Strategy != "local" || c.OriginalMessageCount != len(msgs) {
		t.Errorf("compaction = %+v", c)
	}
	ev := prog.list()
	if len(ev) < 3 || ev[0] != "begin: Compacting context..." || !strings.HasPrefix(ev[1], "report: ") {
		t.Fatalf("progress = %q", ev)
	}
	if !slicesContain(ev, "report: Summarizing") {
		t.Errorf("no summarizing report in %q", ev)
	}
	end := ev[len(ev)-1]
	if !strings.HasPrefix(end, "end: Context compacted · ") || !strings.Contains(end, "messages, local)") ||
		!strings.Contains(end, "prompt cache") {
		t.Errorf("end = %q", end)
	}
	bs := e.rec.boundaries()
	if len(bs) != 1 || bs[0].ArtifactID != c.ArtifactID || bs[0].SessionID != id || bs[0].Trigger != "auto" {
		t.Fatalf("boundaries = %+v", bs)
	}
	h := e.history(id)
	if len(h) != c.CompactedMessageCount || !strings.HasPrefix(h[0].Content.Text(), "Previous conversation summary:\n") {
		t.Fatalf("live history after compaction: %d messages, first %q", len(h), h[0].Content.Text())
	}
	if res.Stats.Compactions != 1 || res.Stats.LastCompaction == nil || res.Stats.LastCompaction.ArtifactID != c.ArtifactID {
		t.Errorf("stats = %+v", res.Stats)
	}
	if res.Stats.ProjectedTokens+res.Stats.PrefixTokens >= res.Stats.CompactionThreshold {
		t.Errorf("still over the threshold after compaction: %+v", res.Stats)
	}
	if jsonOf(t, res.Messages) != jsonOf(t, h) {
		t.Error("projection is not the rebuilt live history")
	}
	arts, err := e.m.ListArtifacts(context.Background(), id, nil)
	if err != nil || len(arts) != 1 || arts[0].Messages != len(msgs) || arts[0].Trigger != "auto" || arts[0].Mode != "local" {
		t.Fatalf("artifacts = %+v, %v", arts, err)
	}
}

func TestPrepareTrimsWhenCompactionDisabled(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	id := e.open(session.OpenParams{ContextWindow: 16000})
	e.setPolicy(id, `{"autoCompaction":{"enabled":false},"toolResultClearing":{"enabled":false}}`)
	msgs := append([]history.Message{history.NewText(history.System, "Project rules: keep it small.")}, turns(20, 3000)...)
	res := prepare(t, e, session.PrepareParams{SessionID: id, Messages: msgs, PrefixTokens: ptr(500)}, nil)

	if !res.Trimmed || res.Compaction != nil {
		t.Fatalf("trimmed = %v, compaction = %+v", res.Trimmed, res.Compaction)
	}
	st := res.Stats
	budget := (16000-4096)*60/100 - 500
	if st.ProjectedTokens > budget {
		t.Errorf("projected %d > trim budget %d", st.ProjectedTokens, budget)
	}
	if st.State != "critical" {
		t.Errorf("state = %q, want critical", st.State)
	}
	p := res.Messages
	if p[0].Role != history.System || p[1].Role != history.User {
		t.Fatalf("trimmed projection starts %s, %s", p[0].Role, p[1].Role)
	}
	users := 0
	for _, m := range p {
		if m.Role == history.User {
			users++
		}
	}
	if users < 6 {
		t.Errorf("kept %d user turns, want >= 6", users)
	}
	// The newest messages are kept verbatim, in order.
	tail := msgs[len(msgs)-len(p)+1:]
	if jsonOf(t, p[1:]) != jsonOf(t, tail) {
		t.Error("trimmed projection is not the newest messages")
	}
	if err := history.CheckPairing(p); err != nil {
		t.Errorf("trim split a batch: %v", err)
	}
	if len(e.history(id)) != len(msgs) {
		t.Error("trim changed the history")
	}
}

func TestPreserveRecentTurnsWins(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	id := e.open(session.OpenParams{ContextWindow: 16000})
	e.setPolicy(id, `{"autoCompaction":{"enabled":false},"toolResultClearing":{"enabled":false},"context":{"preserveRecentTurns":12}}`)
	msgs := turns(20, 4000)
	res := prepare(t, e, session.PrepareParams{SessionID: id, Messages: msgs}, nil)
	users := 0
	for _, m := range res.Messages {
		if m.Role == history.User {
			users++
		}
	}
	if !res.Trimmed || users != 12 {
		t.Fatalf("trimmed = %v, user turns kept = %d, want 12", res.Trimmed, users)
	}
}

func TestNativeContextEditsSkipClearingOnlyOnAnthropic(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	msgs := turns(20, 4000)
	for _, tc := range []struct {
		provider, model string
		native          bool
		wantCleared     bool
		wantEdits       bool
	}{
		{"anthropic", "claude-sonnet-4-6", true, false, true},
		{"anthropic", "claude-sonnet-4-6", false, true, false},
		{"openai", "gpt-5", true, true, false},
		{"offline", "", true, true, false},
	} {
		id := e.open(session.OpenParams{Provider: tc.provider, Model: tc.model, ContextWindow: 32000})
		e.setPolicy(id, `{"autoCompaction":{"enabled":false}}`)
		res := prepare(t, e, session.PrepareParams{SessionID: id, Messages: msgs, NativeContextEdits: tc.native}, nil)
		if got := res.Stats.ClearedResults > 0; got != tc.wantCleared {
			t.Errorf("%s native=%v: cleared %d results, want cleared=%v", tc.provider, tc.native, res.Stats.ClearedResults, tc.wantCleared)
		}
		if got := res.ContextManagement != nil; got != tc.wantEdits {
			t.Errorf("%s native=%v: contextManagement = %s", tc.provider, tc.native, res.ContextManagement)
		}
		if tc.wantEdits {
			var cm struct {
				Edits []struct {
					Type string `json:"type"`
				} `json:"edits"`
			}
			if err := json.Unmarshal(res.ContextManagement, &cm); err != nil || len(cm.Edits) != 2 ||
				cm.Edits[0].Type != "clear_thinking_20251015" || cm.Edits[1].Type != "clear_tool_uses_20250919" {
				t.Errorf("edits = %s (%v)", res.ContextManagement, err)
			}
		}
	}
}

func TestContextEditsLadderWithCompactEdit(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	id := e.open(session.OpenParams{Provider: "anthropic", Model: "claude-opus-4-5", ContextWindow: 200000})
	res := prepare(t, e, session.PrepareParams{SessionID: id, Messages: turns(2, 100), NativeContextEdits: true}, nil)
	want := `{"edits":[{"type":"clear_thinking_20251015","keep":{"type":"thinking_turns","value":2}},` +
		`{"type":"clear_tool_uses_20250919","trigger":{"type":"input_tokens","value":100000},"keep":{"type":"tool_uses","value":3},` +
		`"clear_at_least":{"type":"input_tokens","value":5000}},` +
		`{"type":"compact_20260112","trigger":{"type":"input_tokens","value":146928},"pause_after_compaction":true}]}`
	if string(res.ContextManagement) != want {
		t.Errorf("contextManagement =\n%s\nwant\n%s", res.ContextManagement, want)
	}
	// clear_at_least_tokens = 0 sends no clear_at_least.
	e.setPolicy(id, `{"toolResultClearing":{"clearAtLeastTokens":0}}`)
	res = prepare(t, e, session.PrepareParams{SessionID: id, NativeContextEdits: true}, nil)
	if strings.Contains(string(res.ContextManagement), "clear_at_least") {
		t.Errorf("clear_at_least sent with clearAtLeastTokens 0: %s", res.ContextManagement)
	}
	if res.Stats.Strategy != "native_inline" {
		t.Errorf("strategy = %q", res.Stats.Strategy)
	}
}

func ptr[T any](v T) *T { return &v }

func slicesContain(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}
