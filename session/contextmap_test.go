package session_test

import (
	"context"
	"slices"
	"testing"

	"github.com/vtcode/vtcode-ls/clearing"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/session"
)

// contextMap returns the context map of session id.
func (e *env) contextMap(id string) *session.ContextMap {
	e.t.Helper()
	cm, err := e.m.ContextMap(context.Background(), id, nil)
	if err != nil {
		e.t.Fatalf("ContextMap: %v", err)
	}
	return cm
}

func category(cm *session.ContextMap, name string) session.ContextCategory {
	for _, c := range cm.Categories {
		if c.Category == name {
			return c
		}
	}
	return session.ContextCategory{}
}

// isStubOf reports whether msgs carry the result of callID as a stub.
func isStubOf(msgs []history.Message, callID string) bool {
	for i := range msgs {
		if msgs[i].ToolCallID == callID {
			return clearing.IsStub(&msgs[i])
		}
	}
	return false
}

// TestContextMap prepares a session turn by turn, with tool-result clearing
// and a manual compaction, and checks what the map shows against what the
// requests really carried, before and after a restart.
func TestContextMap(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	ctx := context.Background()
	id := e.open(session.OpenParams{ContextWindow: 32000})
	e.setPolicy(id, `{"autoCompaction":{"enabled":false},"toolResultClearing":{"triggerTokens":6000,"keepToolUses":2,"keepRecentToolBatches":1,"clearAtLeastTokens":0,"cacheAware":false}}`)

	var prepared []*session.PrepareResult
	all := turns(10, 2400)
	for i := 0; i < len(all); i += 6 {
		res, err := e.m.PrepareRequest(ctx, session.PrepareParams{SessionID: id, Messages: all[i : i+6], SystemPrompt: "You are a coding agent."}, nil)
		if err != nil {
			t.Fatal(err)
		}
		prepared = append(prepared, res)
	}
	cm := e.contextMap(id)

	// The window by category: the request's parts add up to what it uses,
	// and with free space and reserved output to the window.
	want := []string{"prefix", "user", "assistant", "toolCalls", "toolResults", "clearedStubs", "summary", "free", "reservedOutput"}
	var names []string
	used, total := 0, 0
	for _, c := range cm.Categories {
		names = append(names, c.Category)
		total += c.Tokens
		if c.Category != "free" && c.Category != "reservedOutput" {
			used += c.Tokens
		}
	}
	if !slices.Equal(names, want) {
		t.Fatalf("categories = %v", names)
	}
	last := prepared[len(prepared)-1].Stats
	if used != cm.UsedTokens || cm.UsedTokens != last.ProjectedTokens+last.PrefixTokens || total != 32000 {
		t.Errorf("used %d (map says %d, last request %d), total %d of 32000", used, cm.UsedTokens, last.ProjectedTokens+last.PrefixTokens, total)
	}
	if p := category(cm, "prefix"); p.Tokens != last.PrefixTokens || p.Tokens == 0 {
		t.Errorf("prefix = %+v, request prefix %d", p, last.PrefixTokens)
	}
	if u := category(cm, "user"); u.Messages != 10 || u.Tokens == 0 {
		t.Errorf("user = %+v", u)
	}
	if c := category(cm, "toolCalls"); c.Messages != 20 || c.Tokens == 0 {
		t.Errorf("toolCalls = %+v", c)
	}
	if r := category(cm, "reservedOutput"); r.Tokens != 4096 {
		t.Errorf("reservedOutput = %+v", r)
	}
	stubs := category(cm, "clearedStubs")
	if stubs.Messages == 0 || stubs.Messages != last.ClearedResults || stubs.Messages != len(cm.Cleared) {
		t.Fatalf("clearedStubs = %+v, request cleared %d, list %d", stubs, last.ClearedResults, len(cm.Cleared))
	}
	if s := category(cm, "summary"); s.Tokens != 0 {
		t.Errorf("summary before any compaction = %+v", s)
	}

	// The pressure of every prepared request.
	if len(cm.Turns) != len(prepared) {
		t.Fatalf("%d turns, %d requests", len(cm.Turns), len(prepared))
	}
	for i, tp := range cm.Turns {
		st := prepared[i].Stats
		if tp.Turn != i+1 || tp.Tokens != st.ProjectedTokens+st.PrefixTokens || tp.State != st.State || tp.Pressure != st.Pressure || tp.Messages != len(prepared[i].Messages) {
			t.Errorf("turn %d = %+v, request stats %+v", i+1, tp, st)
		}
	}

	// Each cleared result names the first request that sent its stub.
	freed := map[int]int{}
	for _, c := range cm.Cleared {
		if c.Tool != "read_file" || c.OriginalTokens <= c.StubTokens || c.Pending {
			t.Errorf("cleared = %+v", c)
		}
		if !isStubOf(prepared[c.Turn-1].Messages, c.CallID) || (c.Turn > 1 && isStubOf(prepared[c.Turn-2].Messages, c.CallID)) {
			t.Errorf("%s: turn %d is not the first request that cleared it", c.CallID, c.Turn)
		}
		freed[c.Turn] += c.OriginalTokens - c.StubTokens
	}
	window := 32000 - 4096
	for _, tp := range cm.Turns {
		if tp.ClearedTokens != freed[tp.Turn] || (tp.ClearedResults > 0) != (freed[tp.Turn] > 0) {
			t.Errorf("turn %d freed %d by %d results, cleared list says %d", tp.Turn, tp.ClearedTokens, tp.ClearedResults, freed[tp.Turn])
		}
		if tp.LargeClear != (tp.ClearedTokens >= window/10) {
			t.Errorf("turn %d: largeClear %v for %d tokens freed", tp.Turn, tp.LargeClear, tp.ClearedTokens)
		}
	}

	// A manual compaction is marked for the next request, which shows the
	// summary; its artifact is listed.
	res, err := e.m.Compact(ctx, session.CompactParams{SessionID: id}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.PrepareRequest(ctx, session.PrepareParams{SessionID: id, Messages: turns(1, 100), SystemPrompt: "You are a coding agent."}, nil); err != nil {
		t.Fatal(err)
	}
	cm = e.contextMap(id)
	n := len(prepared) + 1
	if len(cm.Compactions) != 1 || cm.Compactions[0].Turn != n || cm.Compactions[0].Trigger != "manual" || cm.Compactions[0].ArtifactID != res.ArtifactID {
		t.Errorf("compactions = %+v", cm.Compactions)
	}
	if len(cm.Turns) != n || cm.Turns[n-1].Compaction != "manual" || cm.Turns[n-2].Compaction != "" {
		t.Errorf("turns = %+v", cm.Turns)
	}
	if s := category(cm, "summary"); s.Messages != 1 || s.Tokens == 0 {
		t.Errorf("summary = %+v", s)
	}
	if len(cm.Artifacts) != 1 || cm.Artifacts[0].ID != res.ArtifactID {
		t.Errorf("artifacts = %+v", cm.Artifacts)
	}

	// All of it survives a restart.
	before := jsonOf(t, cm)
	e.restart("")
	e.open(session.OpenParams{SessionID: id})
	if after := jsonOf(t, e.contextMap(id)); after != before {
		t.Errorf("after a restart:\n%s\nbefore:\n%s", after, before)
	}
}

// TestContextMapPendingClear shows a result that the next request will be
// the first to clear (after a policy change) as pending, and a session with
// no capacity without free or reserved space.
func TestContextMapPendingClear(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	id := e.open(session.OpenParams{ContextWindow: 32000})
	e.append(id, turns(6, 2400)...)
	if cm := e.contextMap(id); len(cm.Cleared) != 0 || len(cm.Turns) != 0 {
		t.Fatalf("before clearing: %+v", cm)
	}
	e.setPolicy(id, `{"toolResultClearing":{"triggerTokens":2000,"keepToolUses":1,"keepRecentToolBatches":1}}`)
	cm := e.contextMap(id)
	if len(cm.Cleared) == 0 {
		t.Fatal("nothing cleared")
	}
	for _, c := range cm.Cleared {
		if !c.Pending || c.Turn != 1 {
			t.Errorf("cleared = %+v", c)
		}
	}

	id2 := e.open(session.OpenParams{})
	e.append(id2, history.NewText(history.User, "hello"))
	cm = e.contextMap(id2)
	if cm.Capacity != 0 || category(cm, "free").Tokens != 0 || category(cm, "reservedOutput").Tokens != 0 || category(cm, "user").Tokens == 0 {
		t.Errorf("no capacity: %+v", cm)
	}
}
