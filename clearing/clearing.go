// Package clearing replaces old tool results in a request projection with short
// stubs, without calling a model (SPEC §7).
//
// [Trigger] resolves the local trigger from the configured policy and the
// model's budget; [Clear] engages when the projection's estimate exceeds it,
// protects the recent evidence window and the count-retained batches, and
// replaces every other result by a stub such as
//
//	[tool result cleared: read_file call_7, 4,812 tokens; run the tool again if you need it]
//
// Clear is a pure function: no context, clock or I/O. It never modifies its
// input: messages it changes are copied (an assistant message together with
// its ToolCalls slice), and the messages it leaves alone are shared with the
// input. It is idempotent: clearing a cleared projection returns it unchanged,
// because existing stubs are recognized by their [StubPrefix].
//
// Token counts come from the messages' cached estimates (see
// [history.Estimator.Message]); messages without one are estimated on a copy,
// so the input is not written to. The counts Clear derives (stubs, thought
// signatures, large inputs) are memoized process-wide in a bounded table, so
// that a request after an append costs one pass over the history and no
// tokenization; [Warm] fills the table when messages arrive. The table never
// changes a result, only its cost.
package clearing

import (
	"github.com/vtcode/vtcode-ls/history"
)

// Policy is the tool-result clearing policy
// (agent.harness.tool_result_clearing).
type Policy struct {
	Enabled               bool // false: Clear returns its input
	TriggerTokens         int  // configured trigger; the local trigger never exceeds it
	KeepToolUses          int  // newest results kept, each expanded to its whole batch
	KeepRecentToolBatches int  // newest batches kept, by originating order; 0 disables this part only
	ClearToolInputs       bool // replace inputs larger than MaxKeptInputBytes of cleared results
}

// DefaultPolicy returns the defaults of SPEC §7: enabled, a 40,000-token
// trigger, 2 tool uses, 2 recent batches, inputs kept.
func DefaultPolicy() Policy {
	return Policy{Enabled: true, TriggerTokens: 40000, KeepToolUses: 2, KeepRecentToolBatches: 2}
}

// Budget is what the model's window leaves for the history.
type Budget struct {
	Capacity       int // the context window; 0 when unknown
	ReservedOutput int // tokens reserved for the response
	Prefix         int // system prompt and tool schemas
}

// Trigger resolves the local trigger:
//
//	historyBudget = capacity − reservedOutput − prefix   (each subtraction saturating at 0)
//	localTrigger  = min(p.TriggerTokens, max(1, floor(historyBudget × 3 / 5)))
//
// When the capacity is unknown (0) the configured trigger is kept and
// historyBudget is 0.
func Trigger(p Policy, b Budget) (localTrigger, historyBudget int) {
	if b.Capacity <= 0 {
		return p.TriggerTokens, 0
	}
	historyBudget = sub(sub(b.Capacity, b.ReservedOutput), b.Prefix)
	threeFifths := historyBudget/5*3 + historyBudget%5*3/5 // floor(hb*3/5) without overflow
	return min(p.TriggerTokens, max(1, threeFifths)), historyBudget
}

// sub returns a − b saturated at 0; a negative b counts as 0.
func sub(a, b int) int {
	if b < 0 {
		b = 0
	}
	if a <= b {
		return 0
	}
	return a - b
}

// Stats describes one clearing pass. The protection and clearing counts are 0
// when clearing did not engage.
type Stats struct {
	OriginalTokens   int `json:"originalTokens"`   // estimate of the input
	ProjectedTokens  int `json:"projectedTokens"`  // estimate of the output
	ClearedResults   int `json:"clearedResults"`   // unprotected results that are stubs in the output
	ProtectedResults int `json:"protectedResults"` // results kept by the evidence window or count retention
	ProtectedBatches int `json:"protectedBatches"` // batches kept by the evidence window or count retention
	ClearedInputs    int `json:"clearedInputs"`    // calls whose arguments or input were replaced
	LocalTrigger     int `json:"localTrigger"`
	HistoryBudget    int `json:"historyBudget"`
}

// MaxKeptInputBytes is the size up to which the arguments or input of a
// cleared result's call always stay intact.
const MaxKeptInputBytes = 1024

// protectedOrphan marks, in scratch.owner, an unmatched result kept by the
// keep_tool_uses rule.
const protectedOrphan = -2

// batch is one assistant message with tool calls and its results.
type batch struct {
	asst      int32
	first     int32 // results are res[first : first+n], -1 for a missing one
	n         int32
	complete  bool
	protected bool
	edit      bool // some call needs its signature or input cleared
}

// Clear returns the projection of msgs with old tool results replaced by stubs,
// and what it did. msgs should be normalized ([history.Normalize]); a list that
// is not is still handled, pairing results with [history.Pair] and judging
// unmatched results by the keep_tool_uses rule alone. Clear engages only when
// the estimate of msgs is strictly greater than the local trigger; otherwise,
// and when nothing changes, it returns msgs itself.
//
// est should be the estimator whose estimates are cached on msgs; the messages
// Clear creates carry their estimates too.
func Clear(est *history.Estimator, msgs []history.Message, p Policy, b Budget) ([]history.Message, Stats) {
	local, hb := Trigger(p, b)
	st := Stats{LocalTrigger: local, HistoryBudget: hb}
	sc := getScratch(len(msgs))
	defer putScratch(sc)

	total := 0
	for i := range msgs {
		n, ok := est.Cached(&msgs[i])
		if !ok {
			c := msgs[i] // estimate a copy: the input is never written to
			n = est.Message(&c)
		}
		sc.toks[i] = n
		total += n
	}
	st.OriginalTokens, st.ProjectedTokens = total, total
	if !p.Enabled || total <= local {
		return msgs, st
	}

	sc.structure(msgs)
	sc.protect(msgs, p, local, &st)
	ps := pass{est: est, tok: est.Tokenizer(), msgs: msgs, sc: sc, st: &st}
	ps.replaceResults()
	ps.editCalls(p.ClearToolInputs)
	st.ProjectedTokens = total - ps.reduction
	if ps.out == nil {
		return msgs, st
	}
	return ps.out, st
}

// protect marks the protected batches and unmatched results, and counts them.
func (sc *scratch) protect(msgs []history.Message, p Policy, local int, st *Stats) {
	batches, res, toks := sc.batches, sc.res, sc.toks
	// Evidence window: complete batches, newest first, while the running sum
	// of assistant message plus results stays within half the local trigger.
	half, sum := local/2, 0
	for bi := len(batches) - 1; bi >= 0; bi-- {
		bt := &batches[bi]
		if !bt.complete {
			continue
		}
		s := toks[bt.asst]
		for _, r := range res[bt.first : bt.first+bt.n] {
			s += toks[r]
		}
		if sum+s > half {
			break
		}
		sum += s
		bt.protected = true
	}
	// Count retention: the newest keep_tool_uses results expanded to their
	// batches (unmatched results on their own), and the newest
	// keep_recent_tool_batches batches by originating order.
	for i, k := len(msgs)-1, p.KeepToolUses; i >= 0 && k > 0; i-- {
		if msgs[i].Role != history.Tool {
			continue
		}
		k--
		if o := sc.owner[i]; o >= 0 {
			batches[o].protected = true
		} else {
			sc.owner[i] = protectedOrphan
			st.ProtectedResults++
		}
	}
	for bi, k := len(batches)-1, p.KeepRecentToolBatches; bi >= 0 && k > 0; bi, k = bi-1, k-1 {
		batches[bi].protected = true
	}
	for bi := range batches {
		bt := &batches[bi]
		if !bt.protected {
			continue
		}
		st.ProtectedBatches++
		for _, r := range res[bt.first : bt.first+bt.n] {
			if r >= 0 {
				st.ProtectedResults++
			}
		}
	}
}

// pass is the copy-on-write output of one Clear.
type pass struct {
	est       *history.Estimator
	tok       history.Tokenizer
	msgs      []history.Message
	sc        *scratch
	st        *Stats
	out       []history.Message // nil until the first change
	reduction int               // estimate removed so far
}

// set replaces message i of the output, copying the input on the first change.
func (ps *pass) set(i int, m history.Message) {
	if ps.out == nil {
		ps.out = make([]history.Message, len(ps.msgs))
		copy(ps.out, ps.msgs)
	}
	ps.out[i] = m
}

// replaceResults stubs every unprotected result whose stub reduces its
// estimate, and marks the calls of cleared results (new stubs and stubs
// already in the input) for editCalls.
func (ps *pass) replaceResults() {
	sc, msgs := ps.sc, ps.msgs
	for i := range msgs {
		m := &msgs[i]
		if m.Role != history.Tool {
			continue
		}
		o := sc.owner[i]
		if o == protectedOrphan || o >= 0 && sc.batches[o].protected {
			continue
		}
		if !IsStub(m) {
			name := m.ToolName
			if name == "" && o >= 0 {
				name = msgs[sc.batches[o].asst].ToolCalls[sc.callOf[i]].Name
			}
			n := sc.toks[i]
			text, after := stub(ps.est, ps.tok, m, name, n)
			if after >= n {
				continue // a stub would not reduce the estimate
			}
			c := *m
			c.Content = history.Text(text)
			ps.est.SetCached(&c, after)
			ps.set(i, c)
			ps.reduction += n - after
		}
		ps.st.ClearedResults++
		if o >= 0 {
			sc.mark[sc.batches[o].first+sc.callOf[i]] = true
			sc.batches[o].edit = true
		}
	}
}

// editCalls removes the thought signature of every marked call and, with
// clearInputs, replaces its arguments and input larger than
// MaxKeptInputBytes, in a copy of the assistant message and its ToolCalls.
func (ps *pass) editCalls(clearInputs bool) {
	sc := ps.sc
	for bi := range sc.batches {
		bt := &sc.batches[bi]
		if !bt.edit {
			continue
		}
		a := &ps.msgs[bt.asst]
		var calls []history.ToolCall
		delta := 0
		for c := range a.ToolCalls {
			if !sc.mark[bt.first+int32(c)] {
				continue
			}
			tc := &a.ToolCalls[c]
			sig := tc.ThoughtSignature != ""
			args := clearInputs && len(tc.Arguments) > MaxKeptInputBytes
			input := clearInputs && len(tc.Input) > MaxKeptInputBytes
			if !sig && !args && !input {
				continue
			}
			if calls == nil {
				calls = make([]history.ToolCall, len(a.ToolCalls))
				copy(calls, a.ToolCalls)
			}
			nc := &calls[c]
			if sig {
				delta -= textTokens(ps.est, ps.tok, nc.ThoughtSignature)
				nc.ThoughtSignature = ""
			}
			cleared := false
			if args {
				if d, r, ok := clearedInput(ps.est, ps.tok, nc.Arguments); ok {
					delta += d
					nc.Arguments = r
					cleared = true
				}
			}
			if input {
				if d, r, ok := clearedInput(ps.est, ps.tok, nc.Input); ok {
					delta += d
					nc.Input = r
					cleared = true
				}
			}
			if cleared {
				ps.st.ClearedInputs++
			}
		}
		if calls == nil {
			continue
		}
		c := *a
		c.ToolCalls = calls
		// The estimate is additive over fields, so the copy's is the
		// original's plus the change.
		ps.est.SetCached(&c, sc.toks[bt.asst]+delta)
		ps.set(int(bt.asst), c)
		ps.reduction -= delta
	}
}

// clearedInput returns the replacement of a large input, the change of the
// estimate it makes, and whether to apply it: only when it does not increase
// the estimate.
func clearedInput(est *history.Estimator, tok history.Tokenizer, s string) (delta int, r string, ok bool) {
	r = `{"cleared":"` + itoa(len(s)) + ` bytes of arguments"}`
	before, after := textTokens(est, tok, s), textTokens(est, tok, r)
	if after > before {
		return 0, "", false
	}
	return after - before, r, true
}
