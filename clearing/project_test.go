package clearing

import (
	"fmt"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
)

// growing returns a session of n turns, each a user message and one batch
// with one result of 1,000 approx tokens, with its prefixes after each turn.
func growing(n int) [][]history.Message {
	var h []history.Message
	var turns [][]history.Message
	for i := range n {
		h = append(h, user(fmt.Sprintf("turn %d", i))...)
		h = append(h, batchOf(fmt.Sprintf("b%d", i), 1000)...)
		approx.Messages(h)
		turns = append(turns, h[:len(h):len(h)])
	}
	return turns
}

// commonPrefix is the number of leading messages two projections share.
func commonPrefix(t *testing.T, a, b []history.Message) int {
	n := 0
	for n < len(a) && n < len(b) && mustJSON(t, a[n]) == mustJSON(t, b[n]) {
		n++
	}
	return n
}

func cleared(msgs []history.Message) map[string]bool {
	out := map[string]bool{}
	for i := range msgs {
		if IsStub(&msgs[i]) {
			out[msgs[i].ToolCallID] = true
		}
	}
	return out
}

// Played turn by turn, the stepped schedule keeps each projection a prefix
// extension of the previous one except on the turns it advances, advances
// only when the held tokens reach the step and StepInterval requests have
// passed since the last step, never clears what the seed keeps, and breaks
// the prefix far less often than the seed.
func TestProjectSteps(t *testing.T) {
	p := Policy{Enabled: true, TriggerTokens: 6000, KeepToolUses: 1, KeepRecentToolBatches: 1, ClearAtLeastTokens: 3000}
	var hz Horizon
	var prev, prevSeed []history.Message
	steps, seedBreaks, last := 0, 0, -1
	for k, h := range growing(40) {
		r := Project(approx, h, Request{Policy: p, Horizon: hz})
		seed, seedSt := Clear(approx, h, p, Budget{})
		if r.Horizon.Messages < hz.Messages {
			t.Fatalf("turn %d: horizon went back from %d to %d", k, hz.Messages, r.Horizon.Messages)
		}
		for id := range cleared(r.Messages) {
			if !cleared(seed)[id] {
				t.Errorf("turn %d: %s cleared but the seed keeps it", k, id)
			}
		}
		if r.Stats.ProjectedTokens < seedSt.ProjectedTokens {
			t.Errorf("turn %d: projected %d under the seed's %d", k, r.Stats.ProjectedTokens, seedSt.ProjectedTokens)
		}
		if prev != nil {
			same := commonPrefix(t, prev, r.Messages) == len(prev)
			if same == r.Advanced && r.Stats.ClearedResults > len(cleared(prev)) {
				t.Errorf("turn %d: advanced=%v but prefix kept=%v", k, r.Advanced, same)
			}
			if !same {
				steps++
			}
			if commonPrefix(t, prevSeed, seed) != len(prevSeed) {
				seedBreaks++
			}
		}
		if r.Advanced && r.Stats.HeldTokens != 0 {
			t.Errorf("turn %d: advanced with %d held", k, r.Stats.HeldTokens)
		}
		// Request k has k+1 answered requests before it (growing).
		if since := k + 1 - hz.Requests; !r.Advanced && r.Stats.HeldTokens >= p.ClearAtLeastTokens && since >= StepInterval {
			t.Errorf("turn %d: holding %d ≥ step %d, %d requests after the last step", k, r.Stats.HeldTokens, p.ClearAtLeastTokens, since)
		}
		if r.Advanced {
			if last >= 0 && k-last < StepInterval {
				t.Errorf("turn %d: stepped %d requests after the step of turn %d, want at least %d", k, k-last, last, StepInterval)
			}
			last = k
		}
		if r.Advanced && r.Stats.ProjectedTokens != seedSt.ProjectedTokens {
			t.Errorf("turn %d: a step clears down to the floor: %d, seed %d", k, r.Stats.ProjectedTokens, seedSt.ProjectedTokens)
		}
		hz, prev, prevSeed = r.Horizon, r.Messages, seed
	}
	if steps == 0 || steps*2 > seedBreaks {
		t.Errorf("stepped schedule broke the prefix %d times, the seed %d", steps, seedBreaks)
	}
}

// A cold cache, a ceiling the held results would reach, and a zero step all
// clear everything above the floor at once: the seed's projection.
func TestProjectAdvances(t *testing.T) {
	turns := growing(12)
	h := turns[len(turns)-1]
	p := Policy{Enabled: true, TriggerTokens: 6000, KeepToolUses: 1, KeepRecentToolBatches: 1, ClearAtLeastTokens: 1 << 30, CacheAware: true}
	// The horizon as held after the first turns.
	var hz Horizon
	for _, t := range turns[:len(turns)-1] {
		hz = Project(approx, t, Request{Policy: p, Horizon: hz}).Horizon
	}
	seed, seedSt := Clear(approx, h, p, Budget{})
	held := Project(approx, h, Request{Policy: p, Horizon: hz})
	if held.Advanced || held.Stats.HeldTokens == 0 {
		t.Fatalf("warm cache, huge step: advanced=%v held=%d", held.Advanced, held.Stats.HeldTokens)
	}
	for name, r := range map[string]Request{
		"cold cache": {Policy: p, Horizon: hz, CacheCold: true},
		"ceiling":    {Policy: p, Horizon: hz, Budget: Budget{Ceiling: held.Stats.ProjectedTokens}},
		"zero step":  {Policy: Policy{Enabled: true, TriggerTokens: 6000, KeepToolUses: 1, KeepRecentToolBatches: 1}, Horizon: hz},
		"step reached": {Policy: Policy{Enabled: true, TriggerTokens: 6000, KeepToolUses: 1, KeepRecentToolBatches: 1, ClearAtLeastTokens: held.Stats.HeldTokens},
			Horizon: Horizon{Messages: hz.Messages, Requests: len(turns) - StepInterval}},
	} {
		got := Project(approx, h, r)
		if !got.Advanced || mustJSON(t, got.Messages) != mustJSON(t, seed) || got.Stats.ProjectedTokens != seedSt.ProjectedTokens {
			t.Errorf("%s: advanced=%v projected %d, want the seed's %d", name, got.Advanced, got.Stats.ProjectedTokens, seedSt.ProjectedTokens)
		}
	}
	// The step reached within StepInterval requests of the last one holds.
	soon := Policy{Enabled: true, TriggerTokens: 6000, KeepToolUses: 1, KeepRecentToolBatches: 1, ClearAtLeastTokens: held.Stats.HeldTokens}
	if got := Project(approx, h, Request{Policy: soon, Horizon: Horizon{Messages: hz.Messages, Requests: len(turns) - StepInterval + 1}}); got.Advanced {
		t.Errorf("stepped %d requests after the last step", StepInterval-1)
	}
	// A cold cache without CacheAware holds.
	p.CacheAware = false
	if got := Project(approx, h, Request{Policy: p, Horizon: hz, CacheCold: true}); got.Advanced {
		t.Error("cold cache advanced a policy that is not cache aware")
	}
}

// The projection is a function of the history and the horizon: the same
// inputs give the same bytes (a restarted daemon that replays its horizon
// projects what the first one did), and reapplying it changes nothing.
func TestProjectDeterministic(t *testing.T) {
	turns := growing(20)
	p := Policy{Enabled: true, TriggerTokens: 6000, KeepToolUses: 1, KeepRecentToolBatches: 1, ClearAtLeastTokens: 3000}
	var hz Horizon
	var rs []Result
	for _, h := range turns {
		r := Project(approx, h, Request{Policy: p, Horizon: hz})
		rs = append(rs, r)
		hz = r.Horizon
	}
	for i, h := range turns {
		in := Horizon{}
		if i > 0 {
			in = rs[i-1].Horizon
		}
		again := Project(approx, h, Request{Policy: p, Horizon: in, Memo: NewMemo()})
		if mustJSON(t, again.Messages) != mustJSON(t, rs[i].Messages) || again.Horizon != rs[i].Horizon {
			t.Fatalf("turn %d: a second projection from the same state differs", i)
		}
		twice := Project(approx, rs[i].Messages, Request{Policy: p, Horizon: rs[i].Horizon})
		if mustJSON(t, twice.Messages) != mustJSON(t, rs[i].Messages) {
			t.Fatalf("turn %d: reprojecting the projection changed it", i)
		}
	}
}

// stepTurns plays a steadily growing session of n turns under pricing pr,
// with a trigger of trigger tokens, and returns the turns on which the
// horizon advanced.
func stepTurns(n, trigger int, pr Pricing) []int {
	p := Policy{Enabled: true, TriggerTokens: trigger, KeepToolUses: 1, KeepRecentToolBatches: 1, ClearAtLeastTokens: 1000}
	var hz Horizon
	var out []int
	for k, h := range growing(n) {
		r := Project(approx, h, Request{Policy: p, Horizon: hz, Pricing: pr})
		if r.Advanced {
			out = append(out, k)
		}
		hz = r.Horizon
	}
	return out
}

// With a steady growth per request, a step is followed by a run of stable
// requests: never fewer than StepInterval, and longer where the interval
// that minimizes the cost per request of holding against rewriting
// (√(2·(write − read)·floor / (read·growth)) is longer. With a floor of 3,000
// tokens that interval is shorter than StepInterval at both prices, and the
// steps come every StepInterval requests; with a floor of 20,000 it is about
// 21 requests at Anthropic's prices and 11 at OpenAI's, and the dearer
// rewrite steps less often.
func TestProjectStepInterval(t *testing.T) {
	gaps := func(name string, trigger int, pr Pricing) (least float64) {
		steps := stepTurns(200, trigger, pr)
		if len(steps) < 4 {
			t.Fatalf("%s: %d steps in 200 turns: %v", name, len(steps), steps)
		}
		least = 1e9
		for i := 1; i < len(steps); i++ {
			if steps[i]-steps[i-1] < StepInterval {
				t.Errorf("%s: steps %d and %d are %d requests apart, want at least %d", name, steps[i-1], steps[i], steps[i]-steps[i-1], StepInterval)
			}
			if steps[i] > 100 { // late: the quarter horizon is 25 requests and more
				least = min(least, float64(steps[i]-steps[i-1]))
			}
		}
		t.Logf("%s: steps at %v", name, steps)
		return least
	}
	anthropic, openai := Pricing{Read: 0.1, Write: 1.25}, Pricing{Read: 0.25, Write: 1}
	if a, o := gaps("anthropic, small floor", 6000, anthropic), gaps("openai, small floor", 6000, openai); a != StepInterval || o != StepInterval {
		t.Errorf("small floor: late steps %v (Anthropic) and %v (OpenAI) requests apart: want %d", a, o, StepInterval)
	}
	a, o := gaps("anthropic, large floor", 40000, anthropic), gaps("openai, large floor", 40000, openai)
	if a <= o || o < StepInterval {
		t.Errorf("large floor: late steps %v requests apart at Anthropic's prices, %v at OpenAI's: want the dearer rewrite less often, both at least %d", a, o, StepInterval)
	}
}

// A single large result in a slowly growing session is cleared as soon as
// it leaves the floor, a quarter of the requests made repays the rewrite
// and the interval since the last step allows: the interval rule waits for
// the last break to be StepInterval requests old, not for growth to
// accumulate behind a result that already pays.
func TestProjectLargeResultSteps(t *testing.T) {
	p := Policy{Enabled: true, TriggerTokens: 40000, KeepToolUses: 1, KeepRecentToolBatches: 1, ClearAtLeastTokens: 1000}
	pr := Pricing{Read: 0.1, Write: 1.25}
	var hz Horizon
	var h []history.Message
	last := -1 // the last step before the large result
	for i := range 110 {
		size := 1000
		if i == 80 {
			size = 40000
		}
		h = append(h, user(fmt.Sprintf("turn %d", i))...)
		h = append(h, batchOf(fmt.Sprintf("b%d", i), size)...)
		approx.Messages(h)
		r := Project(approx, h[:len(h):len(h)], Request{Policy: p, Horizon: hz, Pricing: pr})
		hz = r.Horizon
		if cleared(r.Messages)["b80a"] {
			if want := max(82, last+StepInterval); i > want {
				t.Errorf("the 40,000-token result of turn 80 first cleared on turn %d (last step before it on turn %d), want by turn %d", i, last, want)
			}
			return
		}
		if r.Advanced {
			last = i
		}
	}
	t.Fatal("the 40,000-token result of turn 80 was never cleared")
}
