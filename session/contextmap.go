package session

import (
	"context"

	"github.com/vtcode/vtcode-ls/clearing"
	"github.com/vtcode/vtcode-ls/history"
)

// evRequest records the pressure of one prepared request and the tool
// results it was the first to carry as stubs, so that the context map's
// timeline survives a restart.
const evRequest = "request_pressure"

// Context-map categories, in the order of the window from its start: what
// the next request holds, then what it leaves free and what it reserves.
const (
	CategoryPrefix       = "prefix"       // the request's system prompt and tool schemas, and system messages of the history
	CategoryUser         = "user"         // user messages
	CategoryAssistant    = "assistant"    // assistant text and reasoning
	CategoryToolCalls    = "toolCalls"    // the calls of assistant messages (names, arguments, input)
	CategoryToolResults  = "toolResults"  // tool results sent in full
	CategoryClearedStubs = "clearedStubs" // stubs replacing cleared tool results
	CategorySummary      = "summary"      // the compaction summary message
	CategoryFree         = "free"         // room left before the reserved output
	CategoryReserved     = "reservedOutput"
)

// largeClearDivisor makes a request's clearing "large" when it frees at
// least 1/largeClearDivisor of the window (capacity − reserved output), or
// largeClearTokens when the window is unknown.
const (
	largeClearDivisor = 10
	largeClearTokens  = 4096
)

// ContextMap is the result of vtcode/contextMap: what the next request of a
// session would hold, by category, and how the session got there.
type ContextMap struct {
	SessionID           string  `json:"sessionId"`
	Capacity            int     `json:"capacity"`
	ReservedOutput      int     `json:"reservedOutput"`
	CompactionThreshold int     `json:"compactionThreshold"`
	UsedTokens          int     `json:"usedTokens"` // prefix + projection
	Pressure            float64 `json:"pressure"`
	State               string  `json:"state"`
	Display             Display `json:"display"` // as in the stats
	Messages            int     `json:"messages"`
	ProjectedMessages   int     `json:"projectedMessages"`
	// Categories are every category of the window, in window order; with a
	// known capacity their tokens add up to it (unless the request
	// overflows, where free is 0).
	Categories []ContextCategory `json:"categories"`
	// Turns are the prepared requests of the session, oldest first.
	Turns []TurnPressure `json:"turns"`
	// Compactions are the compactions of the session, oldest first.
	Compactions []CompactionMark `json:"compactions"`
	// Cleared are the tool results the next request carries as stubs, in
	// history order.
	Cleared   []ClearedResult `json:"cleared"`
	Artifacts []ArtifactInfo  `json:"artifacts"`
	// Receipt is what the session's calls cost so far (receipt.go).
	Receipt *Receipt `json:"receipt,omitempty"`
}

// ContextCategory is one category of [ContextMap.Categories]. Messages
// counts the messages that contribute to it (an assistant message with text
// and calls counts in both).
type ContextCategory struct {
	Category string `json:"category"`
	Tokens   int    `json:"tokens"`
	Messages int    `json:"messages"`
}

// TurnPressure is one prepared request: turn is its 1-based number in the
// session, tokens its estimate (projection + prefix).
type TurnPressure struct {
	Turn     int     `json:"turn"`
	Tokens   int     `json:"tokens"`
	Capacity int     `json:"capacity"`
	Pressure float64 `json:"pressure"`
	State    string  `json:"state"`
	Messages int     `json:"messages"`
	Trimmed  bool    `json:"trimmed,omitempty"`
	// ClearedResults and ClearedTokens count the results this request was
	// the first to send as stubs and the tokens that freed; LargeClear marks
	// a request that freed at least a tenth of the window.
	ClearedResults int  `json:"clearedResults,omitempty"`
	ClearedTokens  int  `json:"clearedTokens,omitempty"`
	LargeClear     bool `json:"largeClear,omitempty"`
	// Compaction is the trigger of a compaction that took effect for this
	// request (auto inside it; manual or model_switch before it).
	Compaction string `json:"compaction,omitempty"`
}

// CompactionMark is one compaction of the session. Turn is the request it
// took effect for: the request whose preparation compacted, or the next
// request after a manual or model-switch compaction.
type CompactionMark struct {
	Turn            int    `json:"turn"`
	Trigger         string `json:"trigger"`
	Mode            string `json:"mode"`
	OriginalTokens  int    `json:"originalTokens"`
	CompactedTokens int    `json:"compactedTokens"`
	ArtifactID      string `json:"artifactId"`
}

// ClearedResult is a tool result the next request carries as a stub.
// Turn is the first request that sent the stub; Pending marks a result no
// request has sent cleared yet (Turn is then the next request's).
type ClearedResult struct {
	Tool           string `json:"tool"`
	CallID         string `json:"callId"`
	OriginalTokens int    `json:"originalTokens"`
	StubTokens     int    `json:"stubTokens"`
	Turn           int    `json:"turn"`
	Pending        bool   `json:"pending,omitempty"`
}

// contextState is what a session remembers for its context map: the
// timeline of its requests and compactions, rebuilt from evRequest and
// evBoundary events on replay.
type contextState struct {
	turns       []TurnPressure
	compactions []CompactionMark
	clearedAt   map[string]int // call id → the turn that first sent its stub
}

// Event payloads of evRequest.
type (
	requestData struct {
		Turn     int     `json:"turn"`
		Tokens   int     `json:"tokens"`
		Capacity int     `json:"capacity"`
		Pressure float64 `json:"pressure"`
		State    string  `json:"state"`
		Messages int     `json:"messages"`
		Trimmed  bool    `json:"trimmed,omitempty"`
		// Window is capacity − reserved output, for the large-clear mark.
		Window int `json:"window,omitempty"`
		// Prefix and Reserved are the request's prefix tokens and reserved
		// output (nil: the policy's): replay restores them, so a resumed
		// session projects as its last request did.
		Prefix   int             `json:"prefix"`
		Reserved *int            `json:"reserved,omitempty"`
		Cleared  []clearedRecord `json:"cleared,omitempty"`
	}
	clearedRecord struct {
		CallID   string `json:"callId"`
		Original int    `json:"original"`
		Stub     int    `json:"stub"`
	}
)

// apply applies the timeline's part of an event: the record of a prepared
// request (from its own event or the messages event it rode on), the state
// a boundary or a restore carried, and a boundary's compaction.
func (c *contextState) apply(ch *change) {
	if ch.request != nil {
		c.applyRequest(*ch.request)
	}
	switch {
	case ch.boundary != nil:
		c.applyBoundary(*ch.boundary, ch.timeline)
	case ch.restore:
		c.checkpoint(ch.timeline)
	}
}

// applyRequest applies an evRequest payload.
func (c *contextState) applyRequest(d requestData) {
	t := TurnPressure{
		Turn: len(c.turns) + 1, Tokens: d.Tokens, Capacity: d.Capacity, Pressure: d.Pressure,
		State: d.State, Messages: d.Messages, Trimmed: d.Trimmed,
	}
	if c.clearedAt == nil {
		c.clearedAt = map[string]int{}
	}
	for _, r := range d.Cleared {
		if _, ok := c.clearedAt[r.CallID]; !ok {
			c.clearedAt[r.CallID] = t.Turn
		}
		t.ClearedResults++
		t.ClearedTokens += max(0, r.Original-r.Stub)
	}
	limit := largeClearTokens
	if d.Window > 0 {
		limit = max(1, d.Window/largeClearDivisor)
	}
	t.LargeClear = t.ClearedTokens >= limit
	for _, cm := range c.compactions {
		if cm.Turn == t.Turn {
			t.Compaction = cm.Trigger
		}
	}
	c.turns = append(c.turns, t)
}

// timelineData is the context map's state as of an event that replaces the
// live history (a compaction boundary, a restore). Those events carry it so
// that a replay that skips the messages events before them (which carry the
// request records) still has the whole timeline.
type timelineData struct {
	Turns       []TurnPressure   `json:"turns"`
	Compactions []CompactionMark `json:"compactions"`
	ClearedAt   map[string]int   `json:"clearedAt,omitempty"`
}

// timeline returns a copy of the state for an event to carry.
func (c *contextState) timeline() *timelineData {
	t := &timelineData{
		Turns:       append([]TurnPressure{}, c.turns...),
		Compactions: append([]CompactionMark{}, c.compactions...),
	}
	if len(c.clearedAt) > 0 {
		t.ClearedAt = make(map[string]int, len(c.clearedAt))
		for k, v := range c.clearedAt {
			t.ClearedAt[k] = v
		}
	}
	return t
}

// checkpoint replaces the state with the one an event carried; nil (an
// event of a version without it) keeps the state replayed so far.
func (c *contextState) checkpoint(t *timelineData) {
	if t == nil {
		return
	}
	c.turns = append([]TurnPressure{}, t.Turns...)
	c.compactions = append([]CompactionMark{}, t.Compactions...)
	c.clearedAt = make(map[string]int, len(t.ClearedAt))
	for k, v := range t.ClearedAt {
		c.clearedAt[k] = v
	}
}

// applyBoundary applies the state a boundary carried (see checkpoint) and
// marks its compaction for the next request.
func (c *contextState) applyBoundary(b Boundary, t *timelineData) {
	c.checkpoint(t)
	c.compactions = append(c.compactions, CompactionMark{
		Turn: len(c.turns) + 1, Trigger: b.Trigger, Mode: b.Mode,
		OriginalTokens: b.OriginalTokens, CompactedTokens: b.CompactedTokens, ArtifactID: b.ArtifactID,
	})
}

// requestRecord is the record of a prepared request whose projection is p
// under e, made from msgs (the history it projected), with the results it
// is the first to send cleared. reserved is the request's
// reservedOutputTokens (nil: the policy's), st its stats.
func (s *Session) requestRecord(e *env, p projection, msgs []history.Message, reserved *int, st Stats) requestData {
	d := requestData{
		Turn: len(s.cm.turns) + 1, Tokens: st.ProjectedTokens + st.PrefixTokens, Capacity: st.Capacity,
		Pressure: st.Pressure, State: st.State, Messages: len(p.msgs), Trimmed: p.trimmed,
		Window: max(0, e.capacity-e.reserved), Prefix: e.prefix, Reserved: reserved,
	}
	if p.clear.ClearedResults == 0 {
		return d
	}
	// The first p.shared messages were in the previous request, whose
	// record holds their stubs.
	var fresh []*history.Message
	for i := p.shared; i < len(p.msgs); i++ {
		m := &p.msgs[i]
		if clearing.IsStub(m) {
			if _, seen := s.cm.clearedAt[m.ToolCallID]; !seen {
				fresh = append(fresh, m)
			}
		}
	}
	if len(fresh) == 0 {
		return d
	}
	originals := resultTokens(s.est, msgs)
	for _, m := range fresh {
		if orig, ok := originals[m.ToolCallID]; ok {
			d.Cleared = append(d.Cleared, clearedRecord{CallID: m.ToolCallID, Original: orig, Stub: s.est.Message(m)})
		}
	}
	return d
}

// recordRequest records d in an event of its own (a request without new
// messages, or whose messages a compaction committed). A failure is
// logged: the request itself has been committed.
func (s *Session) recordRequest(d requestData) {
	if err := s.record(evRequest, d); err != nil {
		s.m.logger.Warn("session: request pressure not recorded", "session", s.id, "err", err)
	}
}

// resultTokens maps the call id of every tool result of msgs that is not a
// stub to its estimate.
func resultTokens(est *history.Estimator, msgs []history.Message) map[string]int {
	out := map[string]int{}
	for i := range msgs {
		m := &msgs[i]
		if m.Role == history.Tool && m.ToolCallID != "" && !clearing.IsStub(m) {
			out[m.ToolCallID] = est.Message(m)
		}
	}
	return out
}

// contextMap is vtcode/contextMap.
func (s *Session) contextMap() (*ContextMap, error) {
	s.syncEstimator()
	e := s.env(s.route, s.reserved, s.prefix)
	p := s.view(e, e.anthropicEdits(s.skipClearing), false)
	st := s.stats(e, p)
	s.setSnapshot(st)

	cm := &ContextMap{
		SessionID: s.id, Capacity: e.capacity, ReservedOutput: e.reserved, CompactionThreshold: e.th.Threshold,
		UsedTokens: p.tokens + e.prefix, Pressure: st.Pressure, State: st.State, Display: st.Display,
		Messages: p.source, ProjectedMessages: len(p.msgs),
		Turns:       append([]TurnPressure{}, s.cm.turns...),
		Compactions: append([]CompactionMark{}, s.cm.compactions...),
		Cleared:     []ClearedResult{},
		Receipt:     st.Receipt,
	}
	cm.Categories = s.categories(e, p)

	originals := map[string]int{}
	if p.clear.ClearedResults > 0 || hasStub(p.msgs) {
		originals = resultTokens(s.est, s.live)
	}
	next := len(s.cm.turns) + 1
	for i := range p.msgs {
		m := &p.msgs[i]
		if !clearing.IsStub(m) {
			continue
		}
		stub := s.est.Message(m)
		c := ClearedResult{Tool: m.ToolName, CallID: m.ToolCallID, StubTokens: stub, OriginalTokens: stub}
		if orig, ok := originals[m.ToolCallID]; ok {
			c.OriginalTokens = orig
		}
		if t, ok := s.cm.clearedAt[m.ToolCallID]; ok {
			c.Turn = t
		} else {
			c.Turn, c.Pending = next, true
		}
		cm.Cleared = append(cm.Cleared, c)
	}
	arts, err := s.listArtifacts()
	if err != nil {
		return nil, err
	}
	cm.Artifacts = arts
	return cm, nil
}

func hasStub(msgs []history.Message) bool {
	for i := range msgs {
		if clearing.IsStub(&msgs[i]) {
			return true
		}
	}
	return false
}

// categories splits projection p under e into the categories of the window.
func (s *Session) categories(e *env, p projection) []ContextCategory {
	names := []string{CategoryPrefix, CategoryUser, CategoryAssistant, CategoryToolCalls, CategoryToolResults,
		CategoryClearedStubs, CategorySummary, CategoryFree, CategoryReserved}
	out := make([]ContextCategory, len(names))
	idx := map[string]*ContextCategory{}
	for i, n := range names {
		out[i].Category = n
		idx[n] = &out[i]
	}
	add := func(cat string, tokens int) {
		c := idx[cat]
		c.Tokens += tokens
		c.Messages++
	}
	idx[CategoryPrefix].Tokens = e.prefix
	summary := s.summaryIn(p)
	for i := range p.msgs {
		m := &p.msgs[i]
		t := s.est.Message(m)
		switch m.Role {
		case history.System:
			if i == summary {
				add(CategorySummary, t)
			} else {
				add(CategoryPrefix, t)
			}
		case history.User:
			add(CategoryUser, t)
		case history.Tool:
			if clearing.IsStub(m) {
				add(CategoryClearedStubs, t)
			} else {
				add(CategoryToolResults, t)
			}
		default:
			calls := 0
			for _, tc := range m.ToolCalls {
				calls += s.est.Text(tc.Name) + s.est.Text(tc.Arguments) + s.est.Text(tc.Input)
			}
			calls = min(calls, t)
			if len(m.ToolCalls) > 0 {
				add(CategoryToolCalls, calls)
			}
			if t-calls > 0 || len(m.ToolCalls) == 0 {
				add(CategoryAssistant, t-calls)
			}
		}
	}
	if e.capacity > 0 {
		idx[CategoryReserved].Tokens = e.reserved
		idx[CategoryFree].Tokens = max(0, e.capacity-e.reserved-e.prefix-p.tokens)
	}
	return out
}

// ContextMap returns the context map of a session (vtcode/contextMap), in
// t's place when t is not nil (see [Place]).
func (m *Manager) ContextMap(ctx context.Context, id string, t *Ticket) (*ContextMap, error) {
	return run(ctx, m, t, id, func(ctx context.Context, s *Session) (*ContextMap, error) {
		return s.contextMap()
	})
}
