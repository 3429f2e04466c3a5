package session_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/clearing"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/session"
)

// agentRequest is a proxied request of an agent that sends its whole
// conversation msgs with every request.
func agentRequest(msgs []history.Message) session.ProxyRequest {
	return session.ProxyRequest{
		Key: "agent-session-1", Provider: "anthropic", Model: "claude-sonnet-4-6",
		System:   "You are a coding agent. Fix what the user asks, run the tests.",
		Tools:    []json.RawMessage{json.RawMessage(`{"name":"read_file","input_schema":{"type":"object"}}`)},
		Messages: append([]history.Message(nil), msgs...),
	}
}

// proxied is one request an agent sent through the proxy.
type proxied struct {
	plan *session.ProxyPlan
	sent []history.Message // the agent's conversation it carried
}

// playProxied plays msgs like an agent behind a proxy: before each
// assistant message the whole conversation so far goes with ProxyPrepare,
// then the assistant message is recorded as its answer; gap passes on the
// clock between requests. policy is set on the session after its first
// request.
func playProxied(t *testing.T, e *env, msgs []history.Message, clk *clock, gap time.Duration, policy string) []proxied {
	t.Helper()
	ctx := context.Background()
	var out []proxied
	for i, m := range msgs {
		if m.Role != history.Assistant {
			continue
		}
		clk.advance(gap)
		plan, err := e.m.ProxyPrepare(ctx, agentRequest(msgs[:i]), nil)
		if err != nil {
			t.Fatalf("ProxyPrepare %d: %v", len(out), err)
		}
		if plan.Disposition != session.ProxyAppend {
			t.Fatalf("request %d: disposition %s, want append", len(out), plan.Disposition)
		}
		out = append(out, proxied{plan: plan, sent: msgs[:i]})
		if err := e.m.ProxyRecord(ctx, plan.SessionID, plan.Turn, session.ProxyResponse{Message: m}); err != nil {
			t.Fatalf("ProxyRecord %d: %v", len(out), err)
		}
		if len(out) == 1 {
			e.setPolicy(plan.SessionID, policy)
		}
	}
	return out
}

// stable counts, from the first request that clears a result on, the
// requests whose forwarded messages start with the previous request's
// byte for byte, and those requests.
func stable(t *testing.T, reqs []proxied) (kept, total int) {
	started := false
	for i := 1; i < len(reqs); i++ {
		prev, cur := reqs[i-1].plan.Messages, reqs[i].plan.Messages
		started = started || reqs[i-1].plan.Stats.ClearedResults > 0
		if !started {
			continue
		}
		total++
		if leading(t, prev, cur) == len(prev) {
			kept++
		}
	}
	return kept, total
}

// A proxied session runs the cache-aware schedule of a prepared one: once
// clearing starts, the request the proxy forwards starts with the one it
// forwarded before, byte for byte, in at least 90 % of the requests (the
// agent alone: all of them), while clearing still keeps it well below the
// agent's own; the cache prediction compares each request with the one
// forwarded before it; and the horizon survives a restart.
func TestProxiedSessionKeepsTheCache(t *testing.T) {
	clk := newClock()
	e := newEnv(t, session.Options{Clock: clk.now}, "")
	reqs := playProxied(t, e, turns(40, 2400), clk, time.Second, cachePolicy)

	kept, total := stable(t, reqs)
	t.Logf("%d of %d requests after clearing started kept the prefix", kept, total)
	if total < 30 {
		t.Fatalf("clearing started late: %d requests after it", total)
	}
	if kept*10 < total*9 {
		t.Fatalf("%d of %d requests after clearing started kept the previous one as their prefix, want ≥ 90 %%", kept, total)
	}
	last := reqs[len(reqs)-1].plan
	if last.Stats.ClearedResults == 0 || last.Stats.ProjectedTokens*2 > last.Stats.OriginalTokens {
		t.Fatalf("the last request clears %d results, %d of %d tokens: clearing does not keep it small",
			last.Stats.ClearedResults, last.Stats.ProjectedTokens, last.Stats.OriginalTokens)
	}
	r := last.Stats.Reuse
	if r == nil || r.ReusedMessages == 0 || r.ReusedTokens == 0 || r.CacheCold {
		t.Fatalf("the last request predicts no reuse of the one before: %+v", r)
	}
	if r.HeldTokens == 0 {
		// The seed's projection must differ from the held one, or the
		// restart below would prove nothing.
		t.Fatalf("the last request holds nothing back: %+v", r)
	}

	// The last request again, before and after a restart: the same bytes.
	ctx := context.Background()
	conv := reqs[len(reqs)-1].sent
	again := func() *session.ProxyPlan {
		t.Helper()
		plan, err := e.m.ProxyPrepare(ctx, agentRequest(conv), nil)
		if err != nil {
			t.Fatal(err)
		}
		e.m.ProxyAbort(plan.SessionID, plan.Turn)
		return plan
	}
	before := again()
	e.restart("")
	after := again()
	if after.SessionID != before.SessionID {
		t.Fatalf("after a restart the agent's conversation went to session %s, not %s", after.SessionID, before.SessionID)
	}
	if jsonOf(t, after.Messages) != jsonOf(t, before.Messages) {
		t.Fatalf("a restarted daemon forwards other bytes: %d results cleared before, %d after",
			before.Stats.ClearedResults, after.Stats.ClearedResults)
	}
}

// A proxied request is recorded in the session's timeline as a prepared
// one is: the context map counts the requests, and a result cleared by an
// earlier request says at which.
func TestProxiedRequestsInTheTimeline(t *testing.T) {
	clk := newClock()
	e := newEnv(t, session.Options{Clock: clk.now}, "")
	reqs := playProxied(t, e, turns(30, 2400), clk, time.Second, cachePolicy)
	id := reqs[0].plan.SessionID
	for i, r := range reqs {
		// "N of M messages sent": M counts the request's own messages too.
		if st := r.plan.Stats; st.ProjectedMessages > st.Messages {
			t.Fatalf("request %d: %d of %d messages sent", i+1, st.ProjectedMessages, st.Messages)
		}
	}

	check := func(when string) {
		t.Helper()
		cm, err := e.m.ContextMap(context.Background(), id, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(cm.Turns) != len(reqs) {
			t.Fatalf("%s: the timeline has %d requests, the agent sent %d", when, len(cm.Turns), len(reqs))
		}
		if len(cm.Cleared) == 0 {
			t.Fatalf("%s: nothing cleared", when)
		}
		for _, c := range cm.Cleared {
			if c.Pending || c.Turn < 1 || c.Turn > len(reqs) {
				t.Fatalf("%s: %s cleared at turn %d (pending %v), want one of the %d requests sent", when, c.CallID, c.Turn, c.Pending, len(reqs))
			}
		}
		first := 0
		for i, r := range reqs {
			if r.plan.Stats.ClearedResults > 0 {
				first = i + 1
				break
			}
		}
		if cm.Cleared[0].Turn != first {
			t.Fatalf("%s: the oldest result cleared at turn %d; the first request clearing one was %d", when, cm.Cleared[0].Turn, first)
		}
	}
	check("running")
	e.restart("")
	if _, err := e.m.OpenSession(context.Background(), session.OpenParams{SessionID: id}); err != nil {
		t.Fatal(err)
	}
	check("after a restart")
}

// The strategy a proxied session shows is the one its compactions would
// run: without a client of the daemon's own for the route (the agent's key
// is never used for the engine's calls) the offline summarizer's, local;
// with one, the route's native strategy.
func TestProxiedStrategyIsTheOneThatRuns(t *testing.T) {
	for _, c := range []struct {
		name    string
		clients map[string]providers.Generator
		want    string
	}{
		{"no client", nil, "local"},
		{"a client", map[string]providers.Generator{"anthropic": failing{}}, "native_inline"},
	} {
		e := newEnv(t, session.Options{Clients: clients(c.clients)}, "")
		plan, err := e.m.ProxyPrepare(context.Background(), agentRequest(turns(1, 100)[:1]), nil)
		if err != nil {
			t.Fatal(err)
		}
		if plan.Stats.Strategy != c.want {
			t.Errorf("%s: the proxied session shows strategy %q, want %q", c.name, plan.Stats.Strategy, c.want)
		}
		if st := e.stats(plan.SessionID); st.Strategy != c.want {
			t.Errorf("%s: projectionStats shows strategy %q, want %q", c.name, st.Strategy, c.want)
		}
	}
}

// The cache reuse a proxied session shows is the prediction for the request
// the proxy forwarded, compared with the cache counts its answer reported.
func TestProxiedReusePredictionMeetsTheReportedUsage(t *testing.T) {
	clk := newClock()
	e := newEnv(t, session.Options{Clock: clk.now}, "")
	msgs := turns(3, 2400)
	reqs := playProxied(t, e, msgs[:len(msgs)-1], clk, time.Second, cachePolicy)
	ctx := context.Background()
	plan, err := e.m.ProxyPrepare(ctx, agentRequest(msgs[:len(msgs)-1]), nil)
	if err != nil {
		t.Fatal(err)
	}
	predicted := plan.Stats.Reuse.ReusedTokens
	if predicted == 0 || plan.Stats.Reuse.ReusedMessages != len(reqs[len(reqs)-1].plan.Messages)+1 {
		t.Fatalf("the request predicts %+v: want the previous request and its answer reused", plan.Stats.Reuse)
	}
	usage := &history.Usage{InputTokens: 200, CacheReadTokens: 4321, OutputTokens: 10}
	if err := e.m.ProxyRecord(ctx, plan.SessionID, plan.Turn, session.ProxyResponse{Message: msgs[len(msgs)-1], Usage: usage}); err != nil {
		t.Fatal(err)
	}
	last := e.stats(plan.SessionID).Reuse.LastResponse
	if last == nil || last.PredictedReadTokens != predicted || last.CacheReadTokens != 4321 || last.Difference != 4321-predicted {
		t.Fatalf("last response %+v: want the prediction %d beside the reported 4321", last, predicted)
	}
}

// An agent that clears its own old tool results (qwen-code's
// microcompaction: "[Old tool result content cleared]") breaks its prefix
// there, alone as through the proxy. Through the proxy, a result the agent
// cleared while the engine still held it goes out as the agent's text, and
// stays so on the later requests: the engine does not swap it for its own
// stub, or the original, once its horizon passes it (which would break the
// prefix a second time for the same result).
func TestProxiedAgentClearsItsOwnResults(t *testing.T) {
	clk := newClock()
	e := newEnv(t, session.Options{Clock: clk.now}, "")
	msgs := turns(28, 2400)
	const from = 45 // the request from which the agent clears its old results
	ctx := context.Background()
	var plans []*session.ProxyPlan
	var clearedAt, cut int
	for i, m := range msgs {
		if m.Role != history.Assistant {
			continue
		}
		clk.advance(time.Second)
		conv := append([]history.Message(nil), msgs[:i]...)
		if len(plans) >= from {
			if clearedAt == 0 {
				clearedAt, cut = len(plans), len(conv)-6
			}
			// Once: every result but the newest 6 messages' then.
			for j := range conv[:cut] {
				if conv[j].Role == history.Tool {
					conv[j] = history.NewToolResult(conv[j].ToolCallID, conv[j].ToolName, "[Old tool result content cleared]")
				}
			}
		}
		plan, err := e.m.ProxyPrepare(ctx, agentRequest(conv), nil)
		if err != nil {
			t.Fatalf("ProxyPrepare %d: %v", len(plans), err)
		}
		plans = append(plans, plan)
		if err := e.m.ProxyRecord(ctx, plan.SessionID, plan.Turn, session.ProxyResponse{Message: m}); err != nil {
			t.Fatalf("ProxyRecord %d: %v", len(plans), err)
		}
		if len(plans) == 1 {
			e.setPolicy(plan.SessionID, cachePolicy)
		}
	}
	if r := plans[clearedAt-1].Stats.Reuse; r == nil || r.HeldTokens == 0 {
		t.Fatalf("the engine held nothing when the agent cleared its results: %+v", r)
	}
	const agents = "[Old tool result content cleared]"
	for i := clearedAt + 1; i < len(plans); i++ {
		prev, cur := plans[i-1].Messages, plans[i].Messages
		if k := leading(t, prev, cur); k < len(prev) && prev[k].Role == history.Tool && prev[k].Text() == agents {
			t.Errorf("request %d: result %s went out as the agent's text, now as %.60q", i, prev[k].ToolCallID, cur[k].Text())
		}
	}
}

// An agent that masks its own old tool results in place (Gemini CLI's
// tool output masking: "<tool_output_masked>" and a preview) before the
// engine's horizon reaches them: the request that first masks them breaks
// the prefix there, so the engine's step goes with it and clears the
// agent's text; its stub counts the masked result, and the later
// requests must carry the same stub, not one of the recorded original (a
// second break of the prefix for the same result).
func TestProxiedAgentMasksResultsAsTheEngineClears(t *testing.T) {
	msgs := turns(28, 2400)
	ctx := context.Background()
	play := func(from int) []*session.ProxyPlan {
		clk := newClock()
		e := newEnv(t, session.Options{Clock: clk.now}, "")
		var plans []*session.ProxyPlan
		masked := map[int]bool{}
		for i, m := range msgs {
			if m.Role != history.Assistant {
				continue
			}
			clk.advance(time.Second)
			conv := append([]history.Message(nil), msgs[:i]...)
			if from >= 0 && len(plans) >= from {
				for j := range conv {
					if conv[j].Role != history.Tool {
						continue
					}
					// From then on the agent masks its two oldest results,
					// and keeps them so.
					if len(masked) < 2 && len(plans) == from {
						masked[j] = true
					}
					if masked[j] {
						conv[j] = history.NewToolResult(conv[j].ToolCallID, conv[j].ToolName, "<tool_output_masked>\n"+conv[j].Text()[:min(200, len(conv[j].Text()))])
					}
				}
			}
			plan, err := e.m.ProxyPrepare(ctx, agentRequest(conv), nil)
			if err != nil {
				t.Fatalf("ProxyPrepare %d: %v", len(plans), err)
			}
			plans = append(plans, plan)
			if err := e.m.ProxyRecord(ctx, plan.SessionID, plan.Turn, session.ProxyResponse{Message: m}); err != nil {
				t.Fatalf("ProxyRecord %d: %v", len(plans), err)
			}
			if len(plans) == 1 {
				e.setPolicy(plan.SessionID, cachePolicy)
			}
		}
		return plans
	}
	// The request at which the engine first clears, left alone.
	first := -1
	for i, p := range play(-1) {
		if p.Stats.ClearedResults > 0 {
			first = i
			break
		}
	}
	if first < 0 {
		t.Fatal("the engine never cleared: the test does not exercise its horizon")
	}
	from := first - 5 // the agent masks its two oldest results from here on
	plans := play(from)
	cleared := -1
	for i, p := range plans {
		if p.Stats.ClearedResults > 0 {
			cleared = i
			break
		}
	}
	// The agent's masking breaks the prefix at its oldest results, so the
	// engine's step goes with that break: it clears from the request that
	// first masks, and clears the masked text.
	if cleared != from {
		t.Fatalf("the engine first cleared at request %d, the agent masked from %d: want the step taken with the agent's break", cleared, from)
	}
	first = cleared
	for i := first + 1; i < len(plans); i++ {
		prev, cur := plans[i-1].Messages, plans[i].Messages
		k := leading(t, prev, cur)
		if k < len(prev) && k < len(cur) && prev[k].Role == history.Tool && cur[k].ToolCallID == prev[k].ToolCallID &&
			clearing.IsStub(&prev[k]) && clearing.IsStub(&cur[k]) {
			t.Errorf("request %d: the stub of result %s changed from %q to %q", i, prev[k].ToolCallID, prev[k].Text(), cur[k].Text())
		}
	}
}
