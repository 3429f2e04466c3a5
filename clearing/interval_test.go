package clearing

import (
	"fmt"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
)

// agentBudget is a 200k-token window with an 8k-token prefix and the
// compaction threshold as the ceiling.
var agentBudget = Budget{Capacity: 200_000, ReservedOutput: 8000, Prefix: 8000, Ceiling: 144_000}

// agentPlay plays an agent's loop of n requests through Project with the
// default policy at agentBudget: request i brings the results of one batch
// of reads of sizes(i) tokens each. It returns the requests (by index, the
// first is 0) whose projection does not start with the previous one, and
// the modelled input cost under pr of the projections and of the agent
// alone, which sends its whole history: a request reads from the cache
// what it shares with the previous one (the prefix included) and writes
// the rest.
func agentPlay(t *testing.T, n int, sizes func(i int) []int, pr Pricing) (breaks []int, cost, alone float64) {
	t.Helper()
	b := agentBudget
	units := func(total, reused int) float64 {
		return float64(reused)*pr.Read + float64(total-reused)*pr.Write
	}
	var hz Horizon
	var h, prev []history.Message
	prevTotal := 0
	for i := range n {
		h = append(h, user(fmt.Sprintf("step %d", i))...)
		h = append(h, batchOf(fmt.Sprintf("r%d.", i), sizes(i)...)...)
		approx.Messages(h)
		msgs := h[:len(h):len(h)]
		r := Project(approx, msgs, Request{Policy: DefaultPolicy(), Budget: b, Horizon: hz, Pricing: pr, CacheCold: i == 0})
		if r.Horizon.Messages < hz.Messages {
			t.Fatalf("request %d: the horizon went back from %d to %d", i, hz.Messages, r.Horizon.Messages)
		}
		if got := r.Stats.ProjectedTokens + b.Prefix; got >= b.Ceiling {
			t.Fatalf("request %d: %d tokens with the prefix, at or over the ceiling %d", i, got, b.Ceiling)
		}
		hz = r.Horizon
		total := approx.Messages(msgs) + b.Prefix
		reused := 0
		if prev != nil {
			k := commonPrefix(t, prev, r.Messages)
			if k < len(prev) {
				breaks = append(breaks, i)
			}
			reused = approx.Messages(r.Messages[:k]) + b.Prefix
		}
		alone += units(total, min(prevTotal, total))
		cost += units(r.Stats.ProjectedTokens+b.Prefix, reused)
		prevTotal = total
		prev = r.Messages
	}
	return breaks, cost, alone
}

var agentPricings = map[string]Pricing{"anthropic": {Read: 0.1, Write: 1.25}, "openai": {Read: 0.1, Write: 1}, "openai-4.1": {Read: 0.25, Write: 1}}

// A loop that grows steadily by one result a request breaks the cached
// prefix at most once per StepInterval requests (at least 90 % of its
// requests start with the previous one byte for byte, as the agent alone
// does), and still costs well under sending the whole history, at
// Anthropic's and OpenAI's cache prices.
func TestAgentLoopBreaksOncePerInterval(t *testing.T) {
	for name, pr := range agentPricings {
		for _, size := range []int{1500, 3000, 6000, 10000} {
			breaks, cost, alone := agentPlay(t, 80, func(int) []int { return []int{size} }, pr)
			t.Logf("%s, %d-token results: breaks at %v, cost %.2f× the agent alone", name, size, breaks, cost/alone)
			for k := 1; k < len(breaks); k++ {
				if breaks[k]-breaks[k-1] < StepInterval {
					t.Errorf("%s, %d-token results: breaks at requests %d and %d, want at least %d apart", name, size, breaks[k-1], breaks[k], StepInterval)
				}
			}
			if len(breaks) == 0 {
				t.Errorf("%s, %d-token results: never stepped in 80 requests", name, size)
			}
			if stable := 79 - len(breaks); stable*10 < 79*9 {
				t.Errorf("%s, %d-token results: %d of 79 requests start with the previous one, want at least 90 %%", name, size, stable)
			}
			// 0.85: an interval-delayed step must still repay in what is
			// left of the horizon it first paid on, which costs the
			// slowest loop (1,500-token results at Anthropic's prices)
			// its first steps until request 56.
			if cost >= 0.85*alone {
				t.Errorf("%s, %d-token results: cost %.0f, the agent alone %.0f: want well under", name, size, cost, alone)
			}
		}
	}
}

// The agents' script (integration/agents): 22 requests with one 6,000-token
// result, then 8 with four (past what the window holds between steps), then
// a small one. The ceiling forces steps in the second part; the schedule
// spends no warm step that the ceiling would have made anyway, so that the
// run breaks the prefix three times in 31 requests, and costs less than the
// agent alone.
func TestAgentScriptBreaks(t *testing.T) {
	sizes := func(i int) []int {
		switch {
		case i < 22:
			return []int{6000}
		case i < 30:
			return []int{6000, 6000, 6000, 6000}
		}
		return []int{50}
	}
	for name, pr := range agentPricings {
		breaks, cost, alone := agentPlay(t, 32, sizes, pr)
		t.Logf("%s: breaks at %v, cost %.2f× the agent alone", name, breaks, cost/alone)
		if len(breaks) > 3 {
			t.Errorf("%s: %d breaks in 31 requests (%v), want at most 3", name, len(breaks), breaks)
		}
		if cost >= alone {
			t.Errorf("%s: cost %.0f, the agent alone %.0f: want less", name, cost, alone)
		}
	}
}

// A request that breaks the previous one's prefix anyway, before or at the
// first result a step would clear (the agent cleared or masked a held
// result itself, or a compaction replaced the history), takes the step with that break instead
// of breaking a later request: the step is coalesced, whatever the
// interval. A change after the first held result is no such break: the
// step would rewrite more than it does, and the schedule holds.
func TestStepCoalescesWithTheAgentsBreak(t *testing.T) {
	p := Policy{Enabled: true, TriggerTokens: 6000, KeepToolUses: 1, KeepRecentToolBatches: 1, ClearAtLeastTokens: 1000}
	var hz Horizon
	var last Result
	turns := growing(30)
	k := 0
	for ; k < len(turns); k++ {
		r := Project(approx, turns[k], Request{Policy: p, Horizon: hz, Previous: last.Messages})
		hz, last = r.Horizon, r
		if r.Advanced {
			break
		}
	}
	// Three more requests: within the interval, results are held.
	for k++; k < len(turns) && k < 20; k++ {
		r := Project(approx, turns[k], Request{Policy: p, Horizon: hz, Previous: last.Messages})
		if r.Advanced {
			t.Fatalf("turn %d: stepped within the interval", k)
		}
		hz, last = r.Horizon, r
		if r.Stats.HeldTokens >= 3000 {
			break
		}
	}
	if last.Stats.HeldTokens == 0 {
		t.Fatalf("nothing held after turn %d", k)
	}
	next := turns[k+1]
	var held []int // indexes of the held results, oldest first
	for i := hz.Messages; i < len(last.Messages); i++ {
		if m := &last.Messages[i]; m.Role == history.Tool && !IsStub(m) {
			held = append(held, i)
		}
	}
	if len(held) < 3 {
		t.Fatalf("held results at %v: want at least 3", held)
	}
	agentCleared := func(i int) []history.Message {
		h := append([]history.Message(nil), next...)
		h[i] = history.NewToolResult(h[i].ToolCallID, h[i].ToolName, "[cleared by the agent]")
		approx.Messages(h)
		return h
	}
	req := Request{Policy: p, Horizon: hz, Previous: last.Messages}
	if r := Project(approx, next, req); r.Advanced {
		t.Fatal("an appended request stepped within the interval")
	}
	early := Project(approx, agentCleared(held[0]), req)
	if !early.Advanced || early.Stats.HeldTokens != 0 {
		t.Errorf("the agent cleared the first held result: advanced=%v, %d held; want the step taken with its break", early.Advanced, early.Stats.HeldTokens)
	}
	if got := commonPrefix(t, last.Messages, early.Messages); got > held[0] {
		t.Errorf("the coalesced request shares %d messages with the previous one, want the break at %d at the latest", got, held[0])
	}
	// Gemini CLI masks its own old results: the first held result is
	// rewritten in place, still large enough to clear. The agent breaks
	// the prefix at that result, so the step goes with its break.
	masked := append([]history.Message(nil), next...)
	masked[held[0]] = history.NewToolResult(masked[held[0]].ToolCallID, masked[held[0]].ToolName, "<tool_output_masked>\n"+masked[held[0]].Text())
	approx.Messages(masked)
	if r := Project(approx, masked, req); !r.Advanced || r.Stats.HeldTokens != 0 {
		t.Errorf("the agent masked the first held result: advanced=%v, %d held; want the step taken with its break", r.Advanced, r.Stats.HeldTokens)
	} else if got := commonPrefix(t, last.Messages, r.Messages); got > held[0] {
		t.Errorf("the request with the masked result shares %d messages with the previous one, want the break at %d at the latest", got, held[0])
	}
	if r := Project(approx, agentCleared(held[len(held)-2]), req); r.Advanced {
		t.Error("a change after the first held result stepped: the step rewrites from before it")
	}
	noPrev := req
	noPrev.Previous = nil
	if r := Project(approx, agentCleared(held[0]), noPrev); r.Advanced {
		t.Error("stepped without a previous request to compare with")
	}
	// A compaction: the previous request was another history.
	req.Previous = []history.Message{history.NewText(history.User, "a summary of another history")}
	if r := Project(approx, next, req); !r.Advanced {
		t.Error("a request after a new history held its results: the prefix is rewritten anyway")
	}
}

// A step is billed only what it rewrites: the newest messages (the last
// answer and its results) are written by the request with or without it.
// Old results held before a large new batch are cleared on a request that
// writes that batch anyway, though the same results held before as large
// an old, protected batch are not worth the rewrite.
func TestStepBilledOnlyItsRewrite(t *testing.T) {
	p := Policy{Enabled: true, TriggerTokens: 30000, KeepToolUses: 1, KeepRecentToolBatches: 1, ClearAtLeastTokens: 1000, CacheAware: true}
	pr := Pricing{Read: 0.1, Write: 1.25}
	var small []history.Message
	for i := range StepInterval {
		small = append(small, hist(user(fmt.Sprintf("turn %d", i)), batchOf(fmt.Sprintf("s%d", i), 10))...)
	}
	old := batchOf("old", 12000)
	// Fresh: the large batch is the newest, answered since the last request.
	fresh := hist(small, old, user("go on"), batchOf("big", 20000))
	// Not fresh: the large batch is protected by count retention (the
	// newest tool use) but older than the newest answer, which calls none.
	protected := hist(small, old, user("go on"), batchOf("big", 20000), []history.Message{history.NewText(history.Assistant, "thinking it over")}, user("and?"))
	for _, c := range []struct {
		name string
		msgs []history.Message
		want bool
	}{{"a large new batch", fresh, true}, {"a large old batch", protected, false}} {
		approx.Messages(c.msgs)
		r := Project(approx, c.msgs, Request{Policy: p, Pricing: pr})
		if r.Advanced != c.want {
			t.Errorf("12,000 tokens held before %s: advanced %v, want %v (held %d)", c.name, r.Advanced, c.want, r.Stats.HeldTokens)
		}
	}
}

// The budget's step is not optional: when holding would leave the request
// at or over the ceiling, the horizon advances though the interval since
// the last step has not passed and the step would not repay.
func TestBudgetStepAlwaysTaken(t *testing.T) {
	p := DefaultPolicy()
	pr := Pricing{Read: 0.1, Write: 1.25}
	var h []history.Message
	for i := range 12 {
		h = append(h, hist(user(fmt.Sprintf("turn %d", i)), batchOf(fmt.Sprintf("r%d", i), 6000))...)
	}
	approx.Messages(h)
	requests := 12
	hz := Horizon{Requests: requests - 1} // stepped on the last request
	free := Budget{Capacity: 200_000, ReservedOutput: 8000, Prefix: 8000}
	r := Project(approx, h, Request{Policy: p, Budget: free, Horizon: hz, Pricing: pr})
	if r.Advanced || r.Stats.HeldTokens == 0 {
		t.Fatalf("without a ceiling: advanced %v, %d held; want the results held within the interval", r.Advanced, r.Stats.HeldTokens)
	}
	tight := free
	tight.Ceiling = r.Stats.ProjectedTokens + free.Prefix // holding reaches it
	r = Project(approx, h, Request{Policy: p, Budget: tight, Horizon: hz, Pricing: pr})
	if !r.Advanced || r.Stats.HeldTokens != 0 {
		t.Errorf("at the ceiling: advanced %v, %d held; want the budget's step taken", r.Advanced, r.Stats.HeldTokens)
	}
	if got := r.Stats.ProjectedTokens + tight.Prefix; got >= tight.Ceiling {
		t.Errorf("at the ceiling: %d tokens with the prefix after the step, want under %d", got, tight.Ceiling)
	}
}

// A step that cannot repay before the session ends is not taken: a steady
// loop of 15 to 45 requests, whatever the size of its results, costs at
// most 2 % over the agent alone at Anthropic's and OpenAI's prices. When
// a marginal first step the interval held back was taken as soon as the
// interval let it go, judged with the horizon of the whole session so
// far, such loops cost up to 9 % more than the agent alone.
func TestShortLoopsNeverCostMore(t *testing.T) {
	for _, name := range []string{"anthropic", "openai"} {
		pr := agentPricings[name]
		for _, size := range []int{1500, 2000, 3000, 4500, 6000} {
			worst, at := 0.0, 0
			for n := 15; n <= 45; n += 2 {
				_, cost, alone := agentPlay(t, n, func(int) []int { return []int{size} }, pr)
				if r := cost / alone; r > worst {
					worst, at = r, n
				}
			}
			t.Logf("%s, %d-token results: at most %.3f× the agent alone (%d requests)", name, size, worst, at)
			if worst > 1.02 {
				t.Errorf("%s, %d-token results: a loop of %d requests costs %.3f× the agent alone, want at most 1.02×", name, size, at, worst)
			}
		}
	}
}
