// Package clearing replaces old tool results in a request projection with short
// stubs, without calling a model (docs/design.md §7).
//
// [Trigger] resolves the local trigger from the configured policy and the
// model's budget; [Clear] engages when the projection's estimate exceeds it,
// protects the recent evidence window and the count-retained batches, and
// replaces every other result by a stub such as
//
//	[tool result cleared: read_file call_7, 4,812 tokens; run the tool again if you need it]
//
// [Project] adds the cache-aware schedule on top of that floor: results the
// seed would clear are cleared only below a cleared horizon, which advances
// in steps of at least [Policy.ClearAtLeastTokens] (or freely when the
// provider's prompt cache is cold, or when the budget requires it), so that
// between steps the projection's prefix stays byte-identical and the
// provider's cache keeps serving it. The horizon is the caller's state: it
// goes in with the history and comes out with the projection.
//
// A warm step (the cache is neither cold nor the budget short) is also
// taken at most once per [StepInterval] requests, counted from the last
// step or, before the first, from the first request that held anything:
// the promise that a rewrite of the cached prefix breaks at most one
// request in ten, so that through vtcode-ls an agent's requests start with
// the previous one on at least 90 % of the requests they would alone. It
// makes every step clear at least ten requests of growth, and it leaves
// room for the steps the budget forces: a session whose growth the window
// cannot hold for ten requests steps when it must, not also in between.
// The cost-minimizing interval of [Pricing.pays] still applies above it,
// and a step the interval holds back is judged from the request where it
// first paid, less the requests it waited: waiting gives a bet no more
// requests to repay in ([Horizon.Due]).
// A request that breaks the previous one ([Request.Previous]) anyway before
// or at the first result a step would clear — the agent rewrote its own
// history there (Gemini CLI masks its old results in place), or a
// compaction replaced it — takes the step with that break (coalesced), so
// that the break it would cost later is saved.
//
// Clear and Project are pure functions: no context, clock, I/O or package
// state. They never modify their input: messages they change are copied (an
// assistant message together with its ToolCalls slice), and the messages they
// leave alone are shared with the input. They are idempotent: clearing a
// cleared projection returns it unchanged, because existing stubs are
// recognized by their [StubPrefix].
//
// Token counts come from the messages' cached estimates (see
// [history.Estimator.Message]); messages without one are estimated on a copy,
// so the input is not written to. The counts clearing derives (stubs, thought
// signatures, large inputs) can be memoized in a caller-owned [Memo], so that
// a request after an append costs one pass over the history and no
// tokenization; [Memo.Warm] fills it when messages arrive. A memo never
// changes a result, only its cost.
//
// A session's requests grow by appending, and so does the work they need
// to redo: given the last projection as [Request.Base] and the caller's word
// for how many leading messages are unchanged ([Request.Unchanged]), the
// memo's record of the last projection serves for the prefix before the
// horizon where nothing is protected, only the messages after it are
// decided, and the result extends Base's array instead of copying the
// history (frozen.go).
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
	// ClearAtLeastTokens is the smallest step of the cleared horizon
	// ([Project]): results above the floor are cleared only when doing so
	// removes at least this many tokens. 0 clears everything above the floor
	// on every request (the seed's behaviour).
	ClearAtLeastTokens int
	// CacheAware lets [Project] advance the horizon by any amount when the
	// provider's prompt cache is cold anyway (Request.CacheCold).
	CacheAware bool
}

// DefaultClearAtLeastTokens is the default step of the cleared horizon.
const DefaultClearAtLeastTokens = 5000

// DefaultPolicy returns the defaults: those of docs/design.md §7 (enabled, a
// 40,000-token trigger, 2 tool uses, 2 recent batches, inputs kept) with the
// cache-aware schedule on (steps of DefaultClearAtLeastTokens, TTL aware).
func DefaultPolicy() Policy {
	p := SeedPolicy()
	p.ClearAtLeastTokens, p.CacheAware = DefaultClearAtLeastTokens, true
	return p
}

// SeedPolicy returns the policy of docs/design.md §7 exactly: every request clears
// everything above the floor.
func SeedPolicy() Policy {
	return Policy{Enabled: true, TriggerTokens: 40000, KeepToolUses: 2, KeepRecentToolBatches: 2}
}

// Stepped reports whether p schedules clearing in steps (ClearAtLeastTokens
// > 0 or CacheAware); otherwise Project is exactly Clear.
func (p Policy) Stepped() bool { return p.ClearAtLeastTokens > 0 || p.CacheAware }

// Budget is what the model's window leaves for the history.
type Budget struct {
	Capacity       int // the context window; 0 when unknown
	ReservedOutput int // tokens reserved for the response
	Prefix         int // system prompt and tool schemas
	// Ceiling is what the projection plus Prefix must stay under for the
	// request to go out as it is (the compaction threshold, else the
	// window minus the reserved output); 0 when unknown. [Project] advances
	// the horizon whenever holding it would leave the request at or over the
	// ceiling: the budget wins over the cache.
	Ceiling int
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
	// HeldTokens is what clearing everything above the floor would remove
	// on top of the projection: results kept for the prompt cache, below
	// the next step ([Project]); 0 for [Clear].
	HeldTokens int `json:"heldTokens"`
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
// and what it did: every result above the floor is cleared (docs/design.md §7, the
// seed). msgs should be normalized ([history.Normalize]); a list that is not
// is still handled, pairing results with [history.Pair] and judging
// unmatched results by the keep_tool_uses rule alone. Clear engages only when
// the estimate of msgs is strictly greater than the local trigger; otherwise,
// and when nothing changes, it returns msgs itself. The step fields of p
// (ClearAtLeastTokens, CacheAware) are not used.
//
// est should be the estimator whose estimates are cached on msgs; the messages
// Clear creates carry their estimates too.
func Clear(est *history.Estimator, msgs []history.Message, p Policy, b Budget) ([]history.Message, Stats) {
	p.ClearAtLeastTokens, p.CacheAware = 0, false
	r := Project(est, msgs, Request{Policy: p, Budget: b})
	return r.Messages, r.Stats
}

// Horizon is the cleared horizon of a session: the results before message
// index Messages of the normalized history may be cleared, those after it are
// kept (besides the floor, which is always kept). It only moves forward
// while the history grows; a compaction or a restore starts it again at 0.
//
// Requests is the number of requests (assistant messages) the history held
// when the horizon last moved (or a held-back step was declined): a warm
// step waits until StepInterval more have been made ([Project]).
//
// Due is the number of requests the history held when a step the interval
// holds back first paid (0: none): when the interval lets it go, it is
// judged by the horizon it had then, less the requests it waited
// ([Pricing.pays]); declined, it is judged again an interval later.
type Horizon struct {
	Messages int `json:"messages"`
	Requests int `json:"requests,omitempty"`
	Due      int `json:"due,omitempty"`
}

// StepInterval is the fewest requests between two warm steps of the cleared
// horizon: a stepped schedule rewrites the cached prefix at most once per
// StepInterval requests, so that at least StepInterval−1 of every
// StepInterval requests start with the previous one byte for byte. It is
// derived from the bar the proxy is held to (issue 19): prefix-stable on at
// least 90 % of the requests the agent alone keeps stable, one break in 10.
// The budget (Budget.Ceiling) and a cold cache, which rewrites the prefix
// anyway, step regardless.
const StepInterval = 10

// Request is the input of [Project]: the policy, the budget, the session's
// horizon and whether the provider's prompt cache is cold.
type Request struct {
	Policy  Policy
	Budget  Budget
	Horizon Horizon
	// CacheCold says the previous request is older than the route's cache
	// TTL (or there is none): the prefix is written again anyway, so a
	// CacheAware policy clears everything above the floor.
	CacheCold bool
	// Memo memoizes derived token counts; nil memoizes nothing.
	Memo *Memo
	// Pricing is the route's cache pricing; a step is taken only when it
	// pays for the cache it breaks. Zero: any step of ClearAtLeastTokens
	// pays.
	Pricing Pricing
	// Base is an earlier projection of a history that msgs extends (the
	// caller's last request): when every message of Base is the one this
	// projection holds at its index (the same fields and estimate), the
	// result is Base extended in place, appending after its last message,
	// instead of a copy of the whole history. The caller must hold no
	// slice of Base's array longer than Base: its spare capacity is
	// written. Base never changes what the result holds, only its cost.
	Base []history.Message
	// Previous is the last request sent (its projection; read only). When
	// the projection that holds the results already differs from it
	// before or at the first result a step would clear (the agent rewrote
	// its own history there, or a compaction replaced it), the provider rewrites
	// the prefix from there anyway: the step is taken with that break
	// (coalesced) instead of breaking a later request. Nil: no previous
	// request to compare with.
	Previous []history.Message
	// Unchanged is the caller's word that the first Unchanged messages of
	// msgs are, one for one, those of the last projection made with Memo
	// (the same values: messages are never changed in place). The memo's
	// record of that projection then serves for them, so that a request
	// after an append decides only what follows (frozen.go). 0 promises
	// nothing; it never changes a result, only its cost.
	Unchanged int
}

// Pricing is what a route bills per input token, relative to an uncached
// one: a cached token read, and a token written to the cache.
type Pricing struct {
	Read, Write float64
}

// step is what a step of the cleared horizon would do to the request being
// projected and the requests after it ([Pricing.pays]).
type step struct {
	// gain is what the step removes: the held results' tokens less their
	// stubs, read from the cache on every later request if they stay.
	gain int
	// rewrite is what the step writes to the cache that holding would
	// have read from it: the request after the break (the first result
	// it clears), stubbed, less the messages new since the last request
	// (its answer and their results), which the cache never held and are
	// written whether the step is taken or not.
	rewrite int
	// cleared is what earlier steps cleared; requests the requests the
	// session has made so far (its assistant messages).
	cleared, requests int
	// spent is the number of requests the interval has held the step back
	// since it first paid (Horizon.Due); 0 when it did not.
	spent int
}

// pays reports whether a step repays the cache it breaks. Taken, it costs
// rewrite × (write − read) on this request and saves gain × read on it and
// on each request after it; so it pays when
//
//	gain × read × (1 + horizon) ≥ rewrite × (write − read)
//
// for the number of later requests it can count on, horizon: the shorter
// of two.
//
//   - a quarter of the requests the session has made so far. How long a
//     session goes on is unknown, and a step that has not paid for itself
//     when the session ends made it dearer than sending everything: asking
//     for a quick payback keeps steps late in a session from losing, while
//     a session with most of its requests ahead still steps.
//   - half the requests the session takes to grow gain clearable tokens
//     again, at its mean growth (cleared, the gain so far, per request):
//     after that the next step would have cleared them anyway, and holding
//     instead costs on average half the growth per request until then. So
//     a session that grows g tokens a request steps every
//     √(2·(write − read)·rewrite / (read·g)) requests, the interval that
//     minimizes the cost per request of holding against rewriting: the
//     step size grows with the growth per request and with the price
//     ratio write/read, and each step is followed by that many stable
//     requests. A single large result in a slowly growing session is
//     cleared as soon as the first horizon allows.
//
// Only the rewrite is billed against the step: the newest messages are
// written by this request with or without it, so a step whose request is
// mostly new content costs little more than holding.
//
// A step the interval holds back gains no requests by waiting: when the
// interval lets it go it is judged by the first horizon as it was when the
// step first paid, less the requests it waited (spent). Judged as if it
// had not waited, a marginal step that first paid a few requests after the
// first held result was taken ten requests later with a horizon of a
// quarter of the session, and in a session that ended soon after it never
// repaid (a 30-turn loop of 6 KB results through the proxy cost 1.10× the
// agent alone). So the interval keeps the cache stable, and a bet it
// delays is taken only if it still repays in what is left of the horizon
// it was made on, or on its own request.
func (p Pricing) pays(s step) bool {
	if p.Read <= 0 || p.Write <= p.Read {
		return true
	}
	requests := float64(max(s.requests, 1))
	horizon := requests / payback
	if s.spent > 0 {
		// Judged when it first paid; the requests it waited are spent.
		horizon = max((requests-float64(s.spent))/payback-float64(s.spent), 0)
	}
	if grown := s.cleared + s.gain; grown > 0 {
		horizon = min(horizon, float64(s.gain)*requests/(2*float64(grown)))
	}
	return float64(s.gain)*p.Read*(1+horizon) >= float64(max(s.rewrite, 0))*(p.Write-p.Read)
}

// payback: a step pays for itself within requests/payback requests.
const payback = 4

// Result is the output of [Project].
type Result struct {
	Messages []history.Message
	Stats    Stats
	// Horizon is the horizon after this projection: the caller keeps it for
	// the next request (and persists it when it changed).
	Horizon Horizon
	// Advanced reports that the horizon moved: this projection clears
	// results the previous one kept, so its prefix differs from there on.
	Advanced bool
	// Shared is the number of leading messages Messages has in common with
	// Request.Base (byte for byte); when it is len(Base), Messages extends
	// Base's array.
	Shared int
}

// Project returns the projection of msgs under the cache-aware schedule.
//
// The floor is that of [Clear]: nothing it protects is ever cleared, and
// clearing engages only above the local trigger. Above the floor, results
// before r.Horizon are cleared (stubs are byte-stable, so those messages are
// the same bytes as in the previous request); the results between the
// horizon and the floor are held while clearing them would remove fewer than
// ClearAtLeastTokens tokens. The horizon advances to the end of msgs
// (clearing everything above the floor, down to the low-water mark) when the
// held results reach ClearAtLeastTokens, pay for the rewrite (judged from
// r.Horizon.Due when the interval held the step back) and StepInterval
// requests have passed since r.Horizon.Requests, when the cache is cold
// and the
// policy is CacheAware, when holding would leave the request at or over
// Budget.Ceiling, or always when the policy is not [Policy.Stepped]. Between
// steps the next requests keep the prefix byte-identical.
func Project(est *history.Estimator, msgs []history.Message, r Request) Result {
	res, coalesce := projectOnce(est, msgs, r, false)
	if coalesce {
		res, _ = projectOnce(est, msgs, r, true)
	}
	return res
}

// projectOnce is Project; coalesce takes the step as if the cache were cold.
// It reports that the projection held results though it breaks
// r.Previous before the first of them anyway: then the step should be
// coalesced with that break.
func projectOnce(est *history.Estimator, msgs []history.Message, r Request, coalesce bool) (Result, bool) {
	p, b := r.Policy, r.Budget
	local, hb := Trigger(p, b)
	st := Stats{LocalTrigger: local, HistoryBudget: hb}
	hz := Horizon{Messages: min(max(r.Horizon.Messages, 0), len(msgs)), Requests: max(r.Horizon.Requests, 0), Due: max(r.Horizon.Due, 0)}
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
	// The memo's record of its last projection; a projection that cannot
	// have it (another one holds it) extends nothing in place either.
	base := r.Base
	fz, own := r.Memo.takeFrozen()
	defer r.Memo.putFrozen(fz)
	if r.Memo != nil && !own {
		base = nil
	}
	if !p.Enabled || total <= local {
		fz.invalidate()
		ps := pass{est: est, msgs: msgs, sc: sc, base: base}
		out, shared := ps.output(0)
		return Result{Messages: out, Stats: st, Horizon: hz, Shared: shared}, false
	}

	sc.structure(msgs)
	sc.protect(msgs, p, local, &st)
	ps := pass{est: est, memo: r.Memo, tok: est.Tokenizer(), msgs: msgs, sc: sc, st: &st, limit: len(msgs), base: base}
	ps.idx = r.Memo.takeIndex()
	defer r.Memo.putIndex(ps.idx)
	key := frozenKey{policy: p, budget: b, tok: ps.tok}
	lo, from := 0, partial{}
	floor := sc.firstProtected(len(msgs))
	if own {
		if lo = ps.frozenPrefix(fz, key, hz.Messages, r.Unchanged, floor); lo > 0 {
			from = fz.cum[lo]
		}
	}
	sc.perMessage(lo)
	sv := ps.savings(hz.Messages, lo, from)
	before, held, end := sv.before, sv.after, sv.end
	advance := held > 0
	// Requests since the horizon last moved; a history shorter than that
	// (a new one) is not waited on.
	since := sv.requests - hz.Requests
	stp := step{gain: held, rewrite: sv.tail - held - sv.fresh, cleared: before, requests: sv.requests}
	due := hz.Due > 0 && hz.Due <= sv.requests
	if due {
		stp.spent = sv.requests - hz.Due
	}
	if advance && p.Stepped() {
		switch {
		case held >= p.ClearAtLeastTokens && (since < 0 || since >= StepInterval) &&
			r.Pricing.pays(stp):
		case p.CacheAware && r.CacheCold, coalesce:
		case b.Ceiling > 0 && total-before+b.Prefix >= b.Ceiling:
		default:
			advance = false
			st.HeldTokens = held
			if hz.Messages == 0 && hz.Requests == 0 {
				// The first results held: the interval runs from here.
				hz.Requests = sv.requests
			}
			switch {
			case due && since >= StepInterval && held >= p.ClearAtLeastTokens:
				// Held back until now, the step does not repay in what
				// is left of its horizon: declined, judged again an
				// interval on.
				hz.Requests, hz.Due = sv.requests, 0
			case !due && held >= p.ClearAtLeastTokens && r.Pricing.pays(stp):
				hz.Due = sv.requests
			}
		}
	}
	if advance {
		// Past the last clearable result: what the floor protects now is
		// after the horizon, so it is held when it leaves the floor.
		hz.Messages = max(hz.Messages, end)
		hz.Requests, hz.Due = sv.requests, 0
	} else {
		ps.limit = hz.Messages
	}
	ps.replaceResults(lo, from)
	ps.editCalls(p.ClearToolInputs, lo, from)
	st.ProjectedTokens = total - ps.reduction
	out, shared := ps.output(lo)
	if own {
		ps.record(fz, key, lo, out, floor)
	}
	res := Result{Messages: out, Stats: st, Horizon: hz, Advanced: advance, Shared: shared}
	if !advance && p.Stepped() && sv.first >= 0 && breaksBefore(out, r.Previous, sv.first+1) {
		fz.invalidate()
		return res, true
	}
	return res, false
}

// breaksBefore reports whether out does not start with prev, differing from
// it before index at: the request rewrites the provider's cached prefix
// from before there anyway. The projection asks with at just past the
// first result a step would clear: an agent that masks or trims its own
// old results (Gemini CLI) breaks the prefix at that result itself, and a
// step taken with that break rewrites at most that result's batch before
// where the agent's own request breaks anyway.
func breaksBefore(out, prev []history.Message, at int) bool {
	if len(prev) == 0 {
		return false
	}
	n := min(at, len(prev), len(out))
	for i := range n {
		if !history.Same(&out[i], &prev[i]) {
			return true
		}
	}
	// Shorter than prev up to at: prev is not a prefix of out.
	return n < len(prev) && n == len(out)
}

// output materializes the projection: Base extended when it is a prefix of
// it, else msgs itself when nothing changed, else a copy with the changes.
// shared is the number of leading messages in common with Base.
//
// The first lo messages are the last projection's (frozenPrefix): Base's.
func (ps *pass) output(lo int) (out []history.Message, shared int) {
	msgs, sc, base := ps.msgs, ps.sc, ps.base
	shared = lo
	at := func(i int) *history.Message {
		if i < lo {
			return &base[i]
		}
		if ps.changed {
			switch sc.from[i] {
			case fromRepl:
				return &sc.repl[i]
			case fromBase:
				return &base[i]
			}
		}
		return &msgs[i]
	}
	for shared < len(base) && shared < len(msgs) &&
		((ps.changed && sc.from[shared] == fromBase) || sameAs(ps.est, at(shared), &base[shared])) {
		shared++
	}
	switch {
	case base != nil && shared == len(base):
		out = base
		for i := shared; i < len(msgs); i++ {
			out = append(out, *at(i))
		}
	case !ps.changed && lo == 0:
		out = msgs
	default:
		// Room to grow: the next projection extends this one in place.
		out = make([]history.Message, len(msgs), len(msgs)+len(msgs)/4+16)
		for i := range msgs {
			out[i] = *at(i)
		}
	}
	if ps.changed {
		for i, f := range sc.from[:len(msgs)] {
			if f == fromRepl { // the scratch pins no message past the call
				sc.repl[i] = history.Message{}
			}
		}
	}
	return out, shared
}

// sameAs reports whether a and b are the same message with the same cached
// estimate.
func sameAs(est *history.Estimator, a, b *history.Message) bool {
	na, oka := est.Cached(a)
	nb, okb := est.Cached(b)
	return na == nb && oka == okb && history.Same(a, b)
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

// pass is the copy-on-write output of one projection.
type pass struct {
	est       *history.Estimator
	memo      *Memo
	tok       history.Tokenizer
	limit     int // results at this index or after are kept
	msgs      []history.Message
	sc        *scratch
	st        *Stats
	base      []history.Message // Request.Base
	idx       *[]indexedStub    // the memo's per-index stubs, owned by this pass
	changed   bool              // some message is replaced (scratch.from)
	reduction int               // estimate removed so far
}

// Where message i of the output comes from (scratch.from).
const (
	fromInput uint8 = iota
	fromRepl        // scratch.repl[i]
	fromBase        // pass.base[i], the same message
)

// set replaces message i of the output by m: by Base's message i when that
// is the same message, without copying it.
func (ps *pass) set(i int, m *history.Message) {
	if !ps.changed {
		ps.changed = true
		ps.sc.repl = grow(ps.sc.repl, len(ps.msgs))
		ps.sc.from = grow(ps.sc.from, len(ps.msgs))
		clear(ps.sc.from)
	}
	if i < len(ps.base) && sameAs(ps.est, m, &ps.base[i]) {
		ps.sc.from[i] = fromBase
		return
	}
	ps.sc.repl[i], ps.sc.from[i] = *m, fromRepl
}

// clearable reports whether message i is an unprotected tool result.
func (ps *pass) clearable(i int) bool {
	if ps.msgs[i].Role != history.Tool {
		return false
	}
	o := ps.sc.owner[i]
	return o != protectedOrphan && (o < 0 || !ps.sc.batches[o].protected)
}

// stubOf returns the stub of result i and its estimate, computed once per
// pass.
func (ps *pass) stubOf(i int) (string, int) {
	if st := &ps.sc.stubs[i]; st.ok {
		return st.text, st.tokens
	}
	m := &ps.msgs[i]
	name := m.ToolName
	if o := ps.sc.owner[i]; name == "" && o >= 0 {
		name = ps.msgs[ps.sc.batches[o].asst].ToolCalls[ps.sc.callOf[i]].Name
	}
	// A plain result's stub depends on its key alone: the last
	// projection's stub at this index serves when the key is the same.
	plain := ps.idx != nil && len(m.ToolCalls) == 0 && m.Reasoning == "" && m.ReasoningDetails == nil
	k := stubKey{tok: ps.tok, name: name, id: m.ToolCallID, n: ps.sc.toks[i]}
	if plain && i < len(*ps.idx) {
		if e := &(*ps.idx)[i]; e.key == k {
			ps.sc.stubs[i] = stubOf{text: e.text, tokens: e.tokens, ok: true}
			return e.text, e.tokens
		}
	}
	text, n := ps.memo.stub(ps.est, ps.tok, m, name, ps.sc.toks[i])
	ps.sc.stubs[i] = stubOf{text: text, tokens: n, ok: true}
	if plain {
		idx := *ps.idx
		if len(idx) <= i {
			idx = append(idx, make([]indexedStub, len(ps.msgs)-len(idx))...)
		}
		idx[i] = indexedStub{key: k, text: text, tokens: n}
		*ps.idx = idx
	}
	return text, n
}

// saving is what stubbing the clearable results would remove before index
// from and at or after it; end is the index after the last clearable result
// (0 when there is none), tail the estimate of the messages from the first
// one at or after from that stubbing would shrink, fresh the part of the
// tail that is new since the last request (from the last assistant
// message on: its answer and what followed), as a step leaves it
// (stubbed), requests the number of assistant messages (the requests the
// session has made so far).
type saving struct {
	before, after, end, tail, fresh, requests int
	first                                     int // the first result a step would clear, -1 for none
}

// The first lo messages are the last projection's, whose sums over them are
// sum.
func (ps *pass) savings(from, lo int, sum partial) saving {
	sv := saving{before: sum.stubRed, end: sum.end, requests: sum.requests}
	first := -1
	// The fresh messages: from the last assistant message on, in the tail
	// (from the first result a step would clear), as the step leaves them.
	// Without an assistant message after lo, none is counted as fresh.
	answered := false
	for i := lo; i < len(ps.msgs); i++ {
		if ps.msgs[i].Role == history.Assistant {
			sv.requests++
			sv.fresh, answered = 0, true
		}
		if first >= 0 {
			sv.tail += ps.sc.toks[i]
			sv.fresh += ps.sc.toks[i]
		}
		if !ps.clearable(i) {
			continue
		}
		sv.end = i + 1
		if IsStub(&ps.msgs[i]) {
			continue
		}
		if _, n := ps.stubOf(i); n < ps.sc.toks[i] {
			if i < from {
				sv.before += ps.sc.toks[i] - n
			} else {
				sv.after += ps.sc.toks[i] - n
				if first < 0 {
					first = i
					sv.tail, sv.fresh = ps.sc.toks[i], ps.sc.toks[i]
				}
				sv.fresh -= ps.sc.toks[i] - n
			}
		}
	}
	sv.first = first
	if !answered {
		sv.fresh = 0
	}
	return sv
}

// replaceResults stubs every unprotected result before ps.limit whose stub
// reduces its estimate, and marks the calls of cleared results (new stubs
// and stubs already in the input) for editCalls.
//
// The first lo messages are the last projection's, whose sums over them are
// sum.
func (ps *pass) replaceResults(lo int, sum partial) {
	sc, msgs := ps.sc, ps.msgs
	ps.st.ClearedResults += sum.cleared
	ps.reduction += sum.stubRed
	for i := lo; i < len(msgs); i++ {
		m := &msgs[i]
		if !ps.clearable(i) {
			continue
		}
		o := sc.owner[i]
		if !IsStub(m) {
			if i >= ps.limit {
				continue
			}
			n := sc.toks[i]
			text, after := ps.stubOf(i)
			if after >= n {
				continue // a stub would not reduce the estimate
			}
			c := *m
			c.Content = history.Text(text)
			ps.est.SetCached(&c, after)
			ps.set(i, &c)
			ps.reduction += n - after
			sc.stubRed[i] = n - after
		}
		ps.st.ClearedResults++
		sc.clearedAt[i] = 1
		if o >= 0 {
			sc.mark[sc.batches[o].first+sc.callOf[i]] = true
			sc.batches[o].edit = true
		}
	}
}

// editCalls removes the thought signature of every marked call and, with
// clearInputs, replaces its arguments and input larger than
// MaxKeptInputBytes, in a copy of the assistant message and its ToolCalls.
//
// The batches of the first lo messages are the last projection's, whose
// sums over them are sum.
func (ps *pass) editCalls(clearInputs bool, lo int, sum partial) {
	sc := ps.sc
	ps.st.ClearedInputs += sum.inputs
	ps.reduction += sum.editRed
	for bi := range sc.batches {
		bt := &sc.batches[bi]
		if !bt.edit || int(bt.asst) < lo {
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
				delta -= ps.memo.textTokens(ps.est, ps.tok, nc.ThoughtSignature)
				nc.ThoughtSignature = ""
			}
			cleared := false
			if args {
				if d, r, ok := ps.memo.clearedInput(ps.est, ps.tok, nc.Arguments); ok {
					delta += d
					nc.Arguments = r
					cleared = true
				}
			}
			if input {
				if d, r, ok := ps.memo.clearedInput(ps.est, ps.tok, nc.Input); ok {
					delta += d
					nc.Input = r
					cleared = true
				}
			}
			if cleared {
				ps.st.ClearedInputs++
				sc.inputsAt[bt.asst]++
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
		ps.set(int(bt.asst), &c)
		ps.reduction -= delta
		sc.editRed[bt.asst] = -delta
	}
}

// clearedInput returns the replacement of a large input, the change of the
// estimate it makes, and whether to apply it: only when it does not increase
// the estimate.
func (mm *Memo) clearedInput(est *history.Estimator, tok history.Tokenizer, s string) (delta int, r string, ok bool) {
	r = `{"cleared":"` + itoa(len(s)) + ` bytes of arguments"}`
	before, after := mm.textTokens(est, tok, s), mm.textTokens(est, tok, r)
	if after > before {
		return 0, "", false
	}
	return after - before, r, true
}
