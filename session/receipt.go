package session

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/vtcode/vtcode-ls/compaction"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/catalog"
	"github.com/vtcode/vtcode-ls/store"
)

// A receipt is what a session's provider calls cost, from the provider's
// own usage, beside an estimate of what the same requests would have cost
// without vtcode-ls. Every recorded answer keeps its bill in the session
// log (receiptLine, in the response event), so a replay, a resumed session
// and `vtcode-ls report` add the same numbers.
//
// Every summarizer call the engine makes (a compaction's, a preview's, a
// two-pass pass 1's: the model writer, a native compaction, the agent's
// model in proxy mode) is billed once, when it answers, whatever becomes of
// its outcome: an event of its own (evBill) naming the attempt that made
// it. The boundary that commits an attempt's outcome lists the attempts it
// commits (its own, the preview it applies, the pass 1 whose note it used),
// which makes their bills that compaction's cost; the bills no boundary
// committed are the receipt's Unused. A pass 1 answers in the background:
// its bills wait in the session's pendingBills and are recorded in the
// session's next turn (one is queued for them), before any other event, or
// when the session closes. Logs of older versions carry a compaction's bill
// in its boundary (Cost) instead, and nothing for the calls it did not
// commit.
//
// The counterfactual is the agent's whole request each time: the history
// before clearing, plus everything vtcode-ls compacted away (the agent's own
// and the provider's compactions happen either way), at most the window,
// scaled by the provider's count over the local estimate of the request
// actually sent. Its cache is the agent's own breakpoints: the previous such
// request is read from the cache while the cache lives (the route's TTL, an
// hour when the answer wrote 1-hour entries; on the first request, what the
// provider read), the rest is written. A request vtcode-ls did not change
// costs the same both ways.

// receiptLine is one billed call as the session log keeps it.
type receiptLine struct {
	Provider string       `json:"provider"`
	Model    string       `json:"model"`
	Agent    string       `json:"agent,omitempty"`
	Bill     catalog.Bill `json:"bill"`
	// Without estimates the same request sent without vtcode-ls; nil for
	// the calls of a compaction.
	Without *catalog.Bill `json:"without,omitempty"`
}

// Receipt is the bill of a session (or of several, added): the tokens by
// kind the provider reported, their cost under list prices, the estimate
// without vtcode-ls, and the compactions with what each cost. Costs are in
// US dollars; a cost is absent when a model's price is unknown (Unpriced
// names it): a receipt never shows a made-up price.
//
// Tokens and PaidUSD include every summarizer call vtcode-ls made: those
// of the compactions (Compactions) and those whose outcome no compaction
// committed (Unused); Requests counts the answers.
type Receipt struct {
	Requests int          `json:"requests"`
	Tokens   catalog.Bill `json:"tokens"`
	PaidUSD  *float64     `json:"paidUsd,omitempty"`
	// Without are the tokens and cost of the same requests without
	// vtcode-ls: an estimate (see the package's receipt.go).
	WithoutTokens catalog.Bill `json:"withoutTokens"`
	WithoutUSD    *float64     `json:"withoutUsd,omitempty"`
	SavedUSD      *float64     `json:"savedUsd,omitempty"`
	Estimate      bool         `json:"withoutIsEstimate"`
	// TierRequests counts the requests billed at a long-context tier, and
	// WithoutTierRequests those that would have been without vtcode-ls.
	TierRequests        int                 `json:"tierRequests,omitempty"`
	WithoutTierRequests int                 `json:"withoutTierRequests,omitempty"`
	Compactions         []CompactionReceipt `json:"compactions,omitempty"`
	// Unused are the summarizer calls whose outcome no compaction
	// committed: previews never applied or replaced, pass-1 notes
	// discarded or not used yet, compactions that failed or changed nothing
	// after their calls answered.
	Unused     *UnusedReceipt `json:"unused,omitempty"`
	Unpriced   []string       `json:"unpriced,omitempty"`
	PricesAsOf string         `json:"pricesAsOf,omitempty"`
}

// CompactionReceipt is one compaction: how, what it removed and what the
// provider calls whose outcome it committed cost (its own, and the pass 1
// whose note it used or the preview it applied). Calls counts them; it is
// 0 for a compaction of an older log, which kept only their sum.
type CompactionReceipt struct {
	Trigger         string       `json:"trigger"`
	Mode            string       `json:"mode"`
	OriginalTokens  int          `json:"originalTokens"`
	CompactedTokens int          `json:"compactedTokens"`
	Model           string       `json:"model,omitempty"`
	Tokens          catalog.Bill `json:"tokens"`
	USD             *float64     `json:"usd,omitempty"`
	Calls           int          `json:"calls,omitempty"`
}

// UnusedReceipt is what the summarizer calls no compaction committed cost.
type UnusedReceipt struct {
	Calls  int          `json:"calls"`
	Tokens catalog.Bill `json:"tokens"`
	USD    *float64     `json:"usd,omitempty"`
}

// spent is the bill of one summarizer call, as receiptState folds it.
type spent struct {
	attempt string // billData.For
	model   string
	bill    catalog.Bill
	usd     float64
	priced  bool
}

// receiptState folds the receipt lines of a session's log.
type receiptState struct {
	requests            int
	paid, without       catalog.Bill
	paidUSD, withoutUSD float64
	tier, withoutTier   int
	unpriced            map[string]bool
	asOf                string
	compactions         []CompactionReceipt
	// open are the bills no boundary committed since the last boundary or
	// restore (a boundary may still commit them), and unused the sum of
	// those it can no longer.
	open   []spent
	unused struct {
		calls int
		bill  catalog.Bill
		usd   float64
	}
	// removed is what vtcode-ls compacted away since the last restore, and
	// lastWithout/lastTime the counterfactual's previous request.
	removed     int
	lastWithout int
	lastTime    time.Time
	// billed is set when a proxied answer's bill was recorded with it.
	billed bool
}

// price returns the list price of a line's model, recording a model without
// one.
func (r *receiptState) price(cat *catalog.Catalog, l *receiptLine) (catalog.Price, bool) {
	mi, _ := cat.Lookup(l.Provider, l.Model)
	if !mi.Price.Known() {
		if r.unpriced == nil {
			r.unpriced = map[string]bool{}
		}
		r.unpriced[strings.TrimPrefix(l.Provider+"/"+l.Model, "/")] = true
		return mi.Price, false
	}
	if mi.Price.AsOf > r.asOf {
		r.asOf = mi.Price.AsOf
	}
	return mi.Price, true
}

// apply folds in the bills an event carries (with the prices of cat): an
// answer's, a summarizer call's, a compaction's; a restore starts the
// counterfactual again.
func (r *receiptState) apply(c *change, cat *catalog.Catalog) {
	r.answer(c.ev.Time, c.receipt, cat)
	if c.bill != nil {
		r.call(c.bill, cat)
	}
	if c.boundary != nil {
		r.compacted(*c.boundary, c.cost, c.claims, cat)
	}
	if c.restore {
		r.restored()
	}
}

// call folds in the bill of a summarizer call, open until a boundary
// commits its attempt.
func (r *receiptState) call(d *billData, cat *catalog.Catalog) {
	r.paid = r.paid.Add(d.Bill)
	sp := spent{attempt: d.For, model: strings.TrimPrefix(d.Provider+"/"+d.Model, "/"), bill: d.Bill}
	if p, ok := r.price(cat, &d.receiptLine); ok {
		sp.usd, sp.priced = p.Cost(d.Bill), true
		r.paidUSD += sp.usd
	}
	r.open = append(r.open, sp)
}

// settle makes the open bills unused: after a boundary or a restore no
// boundary can commit them (their previews are stale, their notes were
// written for another history).
func (r *receiptState) settle() {
	for _, sp := range r.open {
		r.unused.calls++
		r.unused.bill = r.unused.bill.Add(sp.bill)
		r.unused.usd += sp.usd
	}
	r.open = r.open[:0]
}

// answer folds in the line of a recorded answer.
func (r *receiptState) answer(t time.Time, l *receiptLine, cat *catalog.Catalog) {
	if l == nil {
		return
	}
	r.requests++
	r.paid = r.paid.Add(l.Bill)
	w := l.Bill
	if l.Without != nil {
		w = *l.Without
	}
	r.without = r.without.Add(w)
	r.lastWithout, r.lastTime = w.Prompt(), t
	p, ok := r.price(cat, l)
	if !ok {
		return
	}
	r.paidUSD += p.Cost(l.Bill)
	r.withoutUSD += p.Cost(w)
	if p.InTier(l.Bill.Prompt()) {
		r.tier++
	}
	if p.InTier(w.Prompt()) {
		r.withoutTier++
	}
}

// compacted folds in a compaction boundary and the bills of the calls it
// commits: the open bills of the attempts it names (claims), or the bill
// of an older log's boundary (l).
func (r *receiptState) compacted(b Boundary, l *receiptLine, claims []string, cat *catalog.Catalog) {
	switch b.Mode {
	case "agent", "provider", modeNone:
		// The agent's and the provider's own compactions happen without
		// vtcode-ls too.
	default:
		r.removed += max(0, b.OriginalTokens-b.CompactedTokens)
	}
	c := CompactionReceipt{Trigger: b.Trigger, Mode: b.Mode,
		OriginalTokens: b.OriginalTokens, CompactedTokens: b.CompactedTokens}
	if l != nil {
		c.Model, c.Tokens = strings.TrimPrefix(l.Provider+"/"+l.Model, "/"), l.Bill
		r.paid = r.paid.Add(l.Bill)
		if p, ok := r.price(cat, l); ok {
			usd := p.Cost(l.Bill)
			r.paidUSD += usd
			c.USD = usdOf(usd)
		}
	}
	usd, priced := 0.0, true
	r.open = slices.DeleteFunc(r.open, func(sp spent) bool {
		if !slices.Contains(claims, sp.attempt) {
			return false
		}
		if c.Model == "" {
			c.Model = sp.model
		}
		c.Tokens, c.Calls = c.Tokens.Add(sp.bill), c.Calls+1
		usd, priced = usd+sp.usd, priced && sp.priced
		return true
	})
	if c.Calls > 0 && priced {
		c.USD = usdOf(usd)
	}
	r.settle()
	r.compactions = append(r.compactions, c)
}

// restored starts the counterfactual again from the restored history.
func (r *receiptState) restored() {
	r.removed = 0
	r.settle()
}

// receipt returns the receipt so far; nil before any billed call.
func (r *receiptState) receipt() *Receipt {
	if r.requests == 0 && r.paid == (catalog.Bill{}) {
		return nil
	}
	rc := &Receipt{Requests: r.requests, Tokens: r.paid, WithoutTokens: r.without, Estimate: true,
		TierRequests: r.tier, WithoutTierRequests: r.withoutTier,
		Compactions: append([]CompactionReceipt(nil), r.compactions...)}
	for m := range r.unpriced {
		rc.Unpriced = append(rc.Unpriced, m)
	}
	sort.Strings(rc.Unpriced)
	u, usd := UnusedReceipt{Calls: r.unused.calls, Tokens: r.unused.bill}, r.unused.usd
	for _, sp := range r.open {
		u.Calls, u.Tokens, usd = u.Calls+1, u.Tokens.Add(sp.bill), usd+sp.usd
	}
	if u.Calls > 0 {
		rc.Unused = &u
	}
	if len(rc.Unpriced) == 0 {
		rc.PaidUSD, rc.WithoutUSD = usdOf(r.paidUSD), usdOf(r.withoutUSD)
		rc.SavedUSD = usdOf(r.withoutUSD - r.paidUSD)
		rc.PricesAsOf = r.asOf
		if rc.Unused != nil {
			rc.Unused.USD = usdOf(usd)
		}
	}
	return rc
}

func usdOf(v float64) *float64 {
	v = catalog.RoundUSD(v)
	return &v
}

// Add returns the sum of two receipts (a report's total over sessions). A
// cost is kept only when both have it.
func (a Receipt) Add(b Receipt) Receipt {
	out := Receipt{Requests: a.Requests + b.Requests, Tokens: a.Tokens.Add(b.Tokens),
		WithoutTokens: a.WithoutTokens.Add(b.WithoutTokens), Estimate: true,
		TierRequests: a.TierRequests + b.TierRequests, WithoutTierRequests: a.WithoutTierRequests + b.WithoutTierRequests}
	out.Compactions = append(append([]CompactionReceipt(nil), a.Compactions...), b.Compactions...)
	seen := map[string]bool{}
	for _, m := range append(append([]string(nil), a.Unpriced...), b.Unpriced...) {
		if !seen[m] {
			seen[m] = true
			out.Unpriced = append(out.Unpriced, m)
		}
	}
	sort.Strings(out.Unpriced)
	sum := func(x, y *float64) *float64 {
		if len(out.Unpriced) > 0 || (x == nil && y == nil) {
			return nil
		}
		var v float64
		if x != nil {
			v += *x
		}
		if y != nil {
			v += *y
		}
		return usdOf(v)
	}
	out.PaidUSD, out.WithoutUSD, out.SavedUSD = sum(a.PaidUSD, b.PaidUSD), sum(a.WithoutUSD, b.WithoutUSD), sum(a.SavedUSD, b.SavedUSD)
	if a.Unused != nil || b.Unused != nil {
		var x, y UnusedReceipt
		if a.Unused != nil {
			x = *a.Unused
		}
		if b.Unused != nil {
			y = *b.Unused
		}
		out.Unused = &UnusedReceipt{Calls: x.Calls + y.Calls, Tokens: x.Tokens.Add(y.Tokens), USD: sum(x.USD, y.USD)}
	}
	out.PricesAsOf = max(a.PricesAsOf, b.PricesAsOf)
	return out
}

// billOf converts a usage in this session's convention (input without the
// cached part when the route reports it so, see [catalog.ModelInfo]) to
// a bill. With Anthropic usage iterations the billed iterations are summed.
func billOf(u history.Usage, excludesCache bool) catalog.Bill {
	if b, _, ok := providers.AnthropicIterations(u.Iterations); ok {
		b.CacheCreation1hTokens = min(u.CacheCreation1hTokens, b.CacheCreationTokens)
		b.ReasoningTokens = u.ReasoningTokens
		u, excludesCache = b, true
	}
	read, write := max(u.CacheReadTokens, 0), max(u.CacheCreationTokens, 0)
	in := max(u.InputTokens, 0)
	if !excludesCache && read+write <= in {
		in -= read + write
	}
	oneHour := min(max(u.CacheCreation1hTokens, 0), write)
	return catalog.Bill{Input: in, CacheRead: read, CacheWrite5m: write - oneHour, CacheWrite1h: oneHour,
		Output: max(u.OutputTokens, 0), Reasoning: min(max(u.ReasoningTokens, 0), max(u.OutputTokens, 0))}
}

// receiptOf returns the receipt line of an answer with usage u (in this
// session's convention) to the request estimated at estimate tokens; nil
// without usage. Call it before recording the answer.
func (s *Session) receiptOf(u *history.Usage, agent string) *receiptLine {
	if u == nil {
		return nil
	}
	_, _, cat := s.effective()
	mi, _ := cat.Lookup(s.route.Provider, s.route.Model)
	l := &receiptLine{Provider: catalog.CanonicalProvider(s.route.Provider), Model: s.route.Model, Agent: agent,
		Bill: billOf(*u, mi.UsageExcludesCache)}
	s.snapMu.Lock()
	snap := s.snap
	s.snapMu.Unlock()
	sent := snap.ProjectedTokens + snap.PrefixTokens
	whole := snap.OriginalTokens + snap.PrefixTokens + s.rc.removed
	// Without vtcode-ls the request is bounded by the model's window alone
	// (not by a price tier vtcode-ls keeps requests under).
	window := s.route.ContextWindow
	if window <= 0 {
		window = mi.ContextWindow
	}
	if window > 0 {
		whole = min(whole, window)
	}
	prompt := l.Bill.Prompt()
	if sent <= 0 || whole <= sent || prompt == 0 {
		return l // vtcode-ls sent what the agent would have
	}
	w := int(math.Round(float64(whole) * float64(prompt) / float64(sent)))
	cc := cat.Cost(s.route.Provider, s.route.Model)
	ttl := cc.TTL
	if l.Bill.CacheWrite1h > 0 {
		ttl = max(ttl, time.Hour)
	}
	read := 0
	switch {
	case s.rc.lastWithout == 0:
		// The session's first request: what the provider had cached before
		// it (a shared prefix) it would have had either way.
		read = min(l.Bill.CacheRead, w)
	case s.m.now().Sub(s.rc.lastTime) <= ttl:
		read = min(s.rc.lastWithout, w)
	}
	wb := catalog.Bill{CacheRead: read, Output: l.Bill.Output, Reasoning: l.Bill.Reasoning}
	switch {
	case cc.Write <= 1: // no write premium: the rest is plain input
		wb.Input = w - read
	case l.Bill.CacheWrite1h > 0:
		wb.CacheWrite1h = w - read
	default:
		wb.CacheWrite5m = w - read
	}
	l.Without = &wb
	return l
}

// catalog is the session's model catalog.
func (s *Session) catalog() *catalog.Catalog {
	_, _, cat := s.effective()
	return cat
}

// proxyUsage converts the usage a proxy read from an answer (the provider
// clients' form: input with the cached part) to this session's convention,
// in which an Anthropic-format route's input excludes it, as the provider
// reports it.
func (s *Session) proxyUsage(u *history.Usage) *history.Usage {
	if u == nil || catalog.WireOf(s.route.Provider) != providers.WireAnthropic {
		return u
	}
	c := *u
	if cached := c.CacheReadTokens + c.CacheCreationTokens; cached <= c.InputTokens {
		c.InputTokens -= cached
	}
	return &c
}

// compactionCost is the receipt line of a compaction's provider calls on
// route r with client c; nil for a local summarizer (the offline one: a
// [providers.Summarizer]), which no provider bills.
func compactionCost(c providers.Generator, r providers.Route, u history.Usage) *receiptLine {
	if _, local := c.(providers.Summarizer); local || r.Provider == "offline" ||
		u.InputTokens == 0 && u.OutputTokens == 0 && u.CacheReadTokens == 0 && u.CacheCreationTokens == 0 {
		return nil
	}
	// The provider clients report input with the cached part.
	return &receiptLine{Provider: catalog.CanonicalProvider(r.Provider), Model: r.Model, Bill: billOf(u, false)}
}

// agentOf names the agent family of a proxied session's key ("claude",
// "codex", "opencode": the proxy's identification of the agent), "" when
// the key does not say (a fingerprint of the conversation).
func agentOf(key string) string {
	if a, _, ok := strings.Cut(key, "\x00"); ok && a != "fingerprint" {
		return a
	}
	return ""
}

// agentIs reports whether a [[compaction.routes]] agent names the agent
// family a: its own name, or the agent's product name ("claude-code").
func agentIs(name, a string) bool {
	name = strings.ToLower(strings.TrimSpace(name))
	return a != "" && (name == a || strings.TrimSuffix(name, "-code") == a || strings.TrimSuffix(name, "-cli") == a)
}

// StoredReceipt is the receipt of one stored session, read from its log
// without opening the session (a session another process owns is read as
// far as it is written).
type StoredReceipt struct {
	SessionID string    `json:"sessionId"`
	Workspace string    `json:"workspace,omitempty"` // set by a report over several workspaces
	UpdatedAt time.Time `json:"updatedAt"`
	Agent     string    `json:"agent,omitempty"`
	Provider  string    `json:"provider,omitempty"`
	Model     string    `json:"model,omitempty"`
	Receipt   Receipt   `json:"receipt"`
}

// ReadReceipts returns the receipts of the sessions of st updated at or
// after since (zero: all), most recently updated first, pricing them with
// cat. Sessions without a billed call are left out.
func ReadReceipts(st *store.Store, cat *catalog.Catalog, since time.Time) ([]StoredReceipt, error) {
	infos, err := st.List()
	if err != nil {
		return nil, err
	}
	var out []StoredReceipt
	for _, info := range infos {
		if !since.IsZero() && info.UpdatedAt.Before(since) {
			continue
		}
		sr, err := readReceipt(st, info.ID, cat)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("session %s: %w", info.ID, err)
		}
		if sr.Receipt.Requests == 0 && len(sr.Receipt.Compactions) == 0 && sr.Receipt.Unused == nil {
			continue
		}
		sr.UpdatedAt = info.UpdatedAt
		out = append(out, sr)
	}
	return out, nil
}

// readReceipt folds the receipt of stored session id from its log, as the
// session's own replay does: the events are decoded without their
// messages.
func readReceipt(st *store.Store, id string, cat *catalog.Catalog) (StoredReceipt, error) {
	var rs receiptState
	sr := StoredReceipt{SessionID: id}
	err := st.ReadEvents(id, func(ev store.Event) error {
		var c change
		switch ev.Type {
		case evResponse, evBoundary, evReceipt, evBill:
			var err error
			if c, err = decoders[ev.Type](ev, nil, true); err != nil {
				return err
			}
		case evRestore:
			c = change{ev: ev, restore: true} // its payload holds nothing a receipt reads
		default:
			return nil
		}
		rs.apply(&c, cat)
		if l := c.receipt; l != nil {
			sr.Provider, sr.Model = l.Provider, l.Model
			if l.Agent != "" {
				sr.Agent = l.Agent
			}
		}
		return nil
	})
	if r := rs.receipt(); r != nil {
		sr.Receipt = *r
	}
	return sr, err
}

// evReceipt is the event of an answer that is not recorded in the history
// (a proxied request that records nothing: the agent's own compaction
// request, a retry): its bill alone.
const evReceipt = "receipt"

// recordReceipt logs the bill of an answer recorded nowhere else.
func (s *Session) recordReceipt(l *receiptLine) error {
	if l == nil {
		return nil
	}
	return s.record(evReceipt, *l)
}

// evBill is the event of a summarizer call that answered: its bill and
// the attempt that made it (billData).
const evBill = "bill"

// What an attempt that bills is (billData.Use).
const (
	billCompaction = "compaction"
	billPreview    = "preview"
	billPassOne    = "pass1"
)

// billData is the bill of one summarizer call. For names the attempt that
// made it (a preview's id, or an id of a compaction's or a pass 1's own),
// which the boundary committing the attempt's outcome lists in its bills.
type billData struct {
	receiptLine
	For string `json:"for"`
	Use string `json:"use"`
}

// pendingBills holds the bills of summarizer calls that answered and are
// not in the log yet; a pass 1 adds to it from its own goroutine.
type pendingBills struct {
	mu    sync.Mutex
	bills []billData
}

func (p *pendingBills) add(b billData) {
	p.mu.Lock()
	p.bills = append(p.bills, b)
	p.mu.Unlock()
}

// take removes and returns the pending bills.
func (p *pendingBills) take() []billData {
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.bills
	p.bills = nil
	return b
}

// putBack returns bills that could not be recorded, before any added since.
func (p *pendingBills) putBack(b []billData) {
	p.mu.Lock()
	p.bills = append(b, p.bills...)
	p.mu.Unlock()
}

// billing makes o bill each provider call of the attempt tag (of kind
// use) as it answers. A pass 1's calls answer in the background: a turn
// of the session is queued to record them.
func (s *Session) billing(o *compaction.Options, tag, use string) {
	client, r := o.Client, o.Route
	o.Tag = tag
	o.Answered = func(u history.Usage) {
		l := compactionCost(client, r, u)
		if l == nil {
			return
		}
		s.bills.add(billData{receiptLine: *l, For: tag, Use: use})
		if use == billPassOne {
			s.m.later(s, (*Session).logBills)
		}
	}
}

// flushBills records the pending bills, in the session's turn; those it
// could not record stay pending.
func (s *Session) flushBills() error {
	bills := s.bills.take()
	for i, b := range bills {
		if err := s.record(evBill, b); err != nil {
			s.bills.putBack(bills[i:])
			return err
		}
	}
	return nil
}

// logBills is flushBills where nothing else is recorded: a failure is
// logged, and the next event tries again.
func (s *Session) logBills() {
	if err := s.flushBills(); err != nil {
		s.m.logger.Warn("session: summarizer bills not recorded yet", "session", s.id, "err", err)
	}
}

// Receipts returns the receipts of the stored sessions of a workspace
// (empty: the first one) updated at or after since (zero: all), priced with
// the workspace's catalog (the built-in list prices and its [[models]]).
func (m *Manager) Receipts(workspace string, since time.Time) ([]StoredReceipt, error) {
	w, err := m.workspaceFor(workspace, "workspace")
	if err != nil {
		return nil, err
	}
	st, err := w.store()
	if err != nil {
		return nil, err
	}
	_, _, cat, _ := w.snapshot()
	return ReadReceipts(st, cat, since)
}

// Receipt returns the receipt of an open session so far (nil before any
// billed call).
func (m *Manager) Receipt(ctx context.Context, id string) (*Receipt, error) {
	var rc *Receipt
	err := m.do(ctx, id, func(ctx context.Context, s *Session) error {
		rc = s.rc.receipt()
		return nil
	})
	return rc, err
}
