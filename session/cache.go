package session

import (
	"math"
	"strconv"
	"time"

	"github.com/vtcode/vtcode-ls/clearing"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/catalog"
)

// evHorizon records a move of the cleared horizon (clearing.Horizon), so a
// resumed session projects exactly what the running one did.
const evHorizon = "clear_horizon"

// horizonData is the payload of evHorizon.
type horizonData struct {
	Messages int `json:"messages"`
	Requests int `json:"requests,omitempty"`
	Due      int `json:"due,omitempty"`
}

// cacheState is the session's prompt-cache state: the cleared horizon
// (persisted), the token memo of clearing, and the last request as sent, to
// predict how much of the next one the provider's cache serves.
type cacheState struct {
	horizon clearing.Horizon
	memo    *clearing.Memo
	// last is the time of the last request (prepared, or answered on
	// replay); zero when there is none.
	last time.Time
	// prev is the last projection returned and prevPrefix its prefix
	// tokens; resp is the response recorded after it, if any.
	prev       []history.Message
	prevPrefix int
	// prevResults are the texts of prev's tool results by call id, built
	// when first asked for (sentResult).
	prevResults map[string]string
	// prevOwn are the tool results prev was built from with the agent's
	// own text where the recorded one differs (a proxied agent cleared or
	// masked them), by call id: sent as they are or cleared from them.
	prevOwn map[string]string
	resp    *history.Message
	// predicted is the reuse predicted for the last prepared request, for
	// the comparison with the cache counts its response reports.
	predicted *ReuseStats
	// reported are the cache counts of the last response, with the
	// prediction for the request it answered.
	reported *ReuseReport
	// rev names prev (nonce.seq); see ProjectionBase.
	nonce, rev string
	seq        int
	// prefired is the projection estimate at the last start of pass 1 of
	// two-pass compaction; 0 when none since the last new history.
	prefired int
	// gen counts the histories the live one replaced; projGen and
	// projLive are gen and the live messages leading the input of the
	// last projection made with memo (what clearing.Request.Unchanged
	// vouches for).
	gen, projGen, projLive int
}

// prefireDue reports whether pass 1 of two-pass compaction should start
// again for a projection of tokens: the first time past the soft threshold,
// then only when the projection grew by a twentieth of the threshold since,
// so that a session hovering under the threshold does not summarize its
// whole history again in the background on every turn.
func (c *cacheState) prefireDue(tokens, threshold int) bool {
	if c.prefired > 0 && tokens < c.prefired+threshold/20 {
		return false
	}
	c.prefired = tokens
	return true
}

// ReuseStats predict how much of a request the provider's prompt cache
// serves: the prefix it shares with the previous request and its answer
// (nothing when the cache is cold), and the request's cost in units of
// uncached input tokens under the route's cache pricing.
type ReuseStats struct {
	// ReusedTokens is the estimate of the leading part of the request
	// (prefix and messages) that is byte-identical to the previous request
	// and its answer; RequestTokens the estimate of the whole request.
	ReusedTokens  int     `json:"reusedTokens"`
	RequestTokens int     `json:"requestTokens"`
	Ratio         float64 `json:"ratio"`
	// ReusedMessages is the number of leading messages shared.
	ReusedMessages int `json:"reusedMessages"`
	// CostUnits is reused × read + the rest × write (catalog.CacheCost).
	CostUnits float64 `json:"costUnits"`
	// CacheCold says the previous request is older than the route's cache
	// TTL (or there is none): nothing is reused.
	CacheCold bool `json:"cacheCold"`
	// ClearedHorizon is the cleared horizon (messages of the normalized
	// history before which old results may be cleared) and HeldTokens
	// what clearing is holding back above the floor for the cache.
	ClearedHorizon int `json:"clearedHorizon"`
	HeldTokens     int `json:"heldTokens"`
	// Pricing is the route's cache pricing the cost is computed with.
	Pricing Pricing `json:"pricing"`
	// LastResponse compares the cache counts the last response reported
	// with the prediction for the request it answered.
	LastResponse *ReuseReport `json:"lastResponse,omitempty"`
}

// Pricing is a route's cache pricing on the wire.
type Pricing struct {
	Read       float64 `json:"read"`
	Write      float64 `json:"write"`
	TTLSeconds int     `json:"ttlSeconds"`
}

// ReuseReport compares the provider's cache counts for one response with
// the prediction.
type ReuseReport struct {
	PredictedReadTokens int `json:"predictedReadTokens"`
	CacheReadTokens     int `json:"cacheReadTokens"`
	CacheWriteTokens    int `json:"cacheWriteTokens"`
	// Difference is cacheReadTokens − predictedReadTokens.
	Difference int `json:"difference"`
}

// warm estimates-on-arrival hook: memoizes clearing's counts for msgs.
func (c *cacheState) warm(est *history.Estimator, msgs []history.Message) {
	if c.memo == nil {
		c.memo = clearing.NewMemo()
	}
	c.memo.Warm(est, msgs)
}

// apply applies the cache's part of a session event (live and on replay):
// the horizon's own event, the time of an answer, a new history or route
// (nothing cached applies) and the response recorded after the last
// request.
func (c *cacheState) apply(ch *change) {
	if h := ch.horizon; h != nil {
		c.horizon = clearing.Horizon{Messages: max(h.Messages, 0), Requests: max(h.Requests, 0), Due: max(h.Due, 0)}
		c.last = ch.ev.Time
	}
	if ch.newHistory || ch.switched {
		// prev stays, for the next projection's relation to it.
		c.horizon = clearing.Horizon{}
		c.resp = nil
		c.prefired = 0
	}
	if ch.switched {
		c.last = time.Time{} // another model's cache: cold
	}
	if ch.ev.Type == evResponse {
		c.last = ch.ev.Time
	}
	if ch.replace {
		c.gen++ // a new history: no projection of the old one serves
	}
	if ch.answer != nil {
		c.responded(*ch.answer, ch.usage)
	}
}

// responded remembers the response recorded after the last request, and
// compares its reported cache counts with the prediction.
func (c *cacheState) responded(m history.Message, u *history.Usage) {
	if c.prev != nil && c.resp == nil {
		c.resp = &m
	}
	if u == nil {
		return
	}
	read, write := u.CacheReadTokens, u.CacheCreationTokens
	// The request the prediction was for is the last sampled iteration.
	if _, last, ok := providers.AnthropicIterations(u.Iterations); ok {
		read, write = last.CacheReadTokens, last.CacheCreationTokens
	}
	r := &ReuseReport{CacheReadTokens: read, CacheWriteTokens: write}
	if c.predicted != nil {
		r.PredictedReadTokens = c.predicted.ReusedTokens
	}
	r.Difference = r.CacheReadTokens - r.PredictedReadTokens
	c.reported = r
}

// cold reports whether the route's cache has expired at now.
func (c *cacheState) cold(now time.Time, cc catalog.CacheCost) bool {
	return c.last.IsZero() || cc.TTL <= 0 || now.Sub(c.last) > cc.TTL
}

// predict returns the reuse of a request of msgs (estimated at tokens, the
// sum of their estimates) with prefix tokens against the previous request
// and its answer; msgs is known to share its first shared messages with the
// previous request. Only the messages after the shared ones are visited.
func (c *cacheState) predict(est *history.Estimator, msgs []history.Message, tokens, shared, prefix int, cold bool, cc catalog.CacheCost) ReuseStats {
	r := ReuseStats{RequestTokens: prefix + tokens, CacheCold: cold, ClearedHorizon: c.horizon.Messages,
		Pricing: Pricing{Read: cc.Read, Write: cc.Write, TTLSeconds: int(cc.TTL / time.Second)}}
	if !cold && c.prev != nil && prefix == c.prevPrefix {
		n := c.common(msgs, shared)
		if n == len(c.prev) && c.resp != nil && n < len(msgs) && history.Same(&msgs[n], c.resp) {
			n++
		}
		r.ReusedTokens = r.RequestTokens
		for i := n; i < len(msgs); i++ {
			r.ReusedTokens -= est.Message(&msgs[i])
		}
		r.ReusedMessages = n
	}
	if r.RequestTokens > 0 {
		r.Ratio = float64(r.ReusedTokens) / float64(r.RequestTokens)
	}
	r.CostUnits = math.Round(cc.Units(r.RequestTokens, r.ReusedTokens)*100) / 100
	return r
}

// ProjectionBase relates a prepared projection to the one the session
// prepared before it: Revision names this projection, Previous the one
// before ("" when the session has prepared none since it was opened), and
// Keep is how many leading messages the two share, byte for byte.
// Revisions are unique to a session and to the daemon process.
type ProjectionBase struct {
	Revision string
	Previous string
	Keep     int
}

// common is the number of leading messages msgs shares with the previous
// request, knowing that it shares the first shared.
func (c *cacheState) common(msgs []history.Message, shared int) int {
	n := min(shared, len(msgs), len(c.prev))
	for n < len(msgs) && n < len(c.prev) && history.Same(&msgs[n], &c.prev[n]) {
		n++
	}
	return n
}

// sentResult reports whether the last request sent carried tool result m
// as it is (the same call id and text), or its stub where it was built
// from m as the agent rewrote it (prevOwn).
func (c *cacheState) sentResult(m *history.Message) bool {
	if t, ok := c.prevOwn[m.ToolCallID]; ok && t == m.Text() {
		return true
	}
	if c.prevResults == nil && c.prev != nil {
		c.prevResults = make(map[string]string)
		for i := range c.prev {
			if p := &c.prev[i]; p.Role == history.Tool {
				c.prevResults[p.ToolCallID] = p.Text()
			}
		}
	}
	t, ok := c.prevResults[m.ToolCallID]
	return ok && t == m.Text()
}

// sent remembers the request just prepared (msgs, sharing its first shared
// messages with the previous one) and returns its relation to the previous
// one.
func (c *cacheState) sent(msgs []history.Message, shared, prefix int, now time.Time, pred ReuseStats) ProjectionBase {
	b := ProjectionBase{Previous: c.rev, Keep: c.common(msgs, shared)}
	if c.nonce == "" {
		c.nonce = newID(now)
	}
	c.seq++
	c.rev = c.nonce + "." + strconv.Itoa(c.seq)
	b.Revision = c.rev
	c.prev, c.prevPrefix, c.resp, c.last = msgs, prefix, nil, now
	c.prevResults, c.prevOwn = nil, nil
	c.predicted = &pred
	return b
}

// ceiling is what a request's projection plus prefix must stay under on e
// (clearing.Budget.Ceiling): the compaction threshold when automatic
// compaction is on, else the window minus the reserved output.
func (e *env) ceiling() int {
	if e.pol.AutoCompaction.Enabled && e.th.Threshold > 0 {
		return e.th.Threshold
	}
	return max(e.th.Effective, 0)
}

// reuseStats predicts the reuse of projection p on e against the last
// request sent.
func (s *Session) reuseStats(e *env, p projection) *ReuseStats {
	r := s.cache.predict(s.est, p.msgs, p.tokens, p.shared, e.prefix, p.cold, e.cost)
	r.ClearedHorizon, r.HeldTokens = p.horizon.Messages, p.clear.HeldTokens
	if s.cache.reported != nil {
		rep := *s.cache.reported
		r.LastResponse = &rep
	}
	return &r
}

// keepHorizon records the cleared horizon of a committed request when it
// moved.
func (s *Session) keepHorizon(h clearing.Horizon) error {
	if h == s.cache.horizon {
		return nil
	}
	return s.record(evHorizon, horizonData{Messages: h.Messages, Requests: h.Requests, Due: h.Due})
}

// compactWhileCold reports whether a request whose projection p is near the
// compaction threshold (over the soft threshold of docs/design.md §8.6) should compact now
// because the route's prompt cache has expired: the next request rewrites the
// whole prefix anyway, so compacting now costs no cache, while compacting
// later, at the threshold, would break a warm one.
func (s *Session) compactWhileCold(e *env, p projection) bool {
	return e.clear.CacheAware && p.cold && !s.cache.last.IsZero() && e.th.Soft > 0 && p.tokens+e.prefix >= e.th.Soft
}
