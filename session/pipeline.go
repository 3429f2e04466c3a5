package session

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/vtcode/vtcode-ls/clearing"
	"github.com/vtcode/vtcode-ls/compaction"
	"github.com/vtcode/vtcode-ls/config"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/catalog"
)

// env is what one operation resolved from a route, the effective policy and
// the request (docs/design.md): capacity (§4), thresholds (§8.1) and the clearing budget (§7.1).
type env struct {
	cfg      config.Config
	pol      config.Policy
	cat      *catalog.Catalog
	r        route
	route    providers.Route
	capacity int
	reserved int
	prefix   int
	rp       compaction.RoutePolicy
	th       compaction.Thresholds
	clear    clearing.Policy
	budget   clearing.Budget
	cost     catalog.CacheCost // the route's cache pricing (cache.go)
	tier     int               // the price tier's threshold capping capacity, 0 if none
}

// env resolves the environment of route r with the given reserved output
// (nil: the policy's) and prefix tokens.
func (s *Session) env(r route, reserved *int, prefix int) *env {
	cfg, pol, cat := s.effective()
	e := &env{cfg: cfg, pol: pol, cat: cat, r: r, route: providerRoute(r, cfg, cat), prefix: prefix}
	window := r.ContextWindow
	mi, known := cat.Lookup(e.route.Provider, r.Model)
	if window <= 0 && known {
		window = mi.ContextWindow
	}
	e.capacity = intersect(window, pol.Context.MaxContextTokens)
	e.reserved = pol.Context.ReservedOutputTokens
	if reserved != nil {
		e.reserved = *reserved
	}
	if t := mi.Price.TierTokens; pol.Context.StayBelowPriceTier && t > 0 && e.capacity > t+e.reserved {
		// Requests stay under the long-context tier: the prompt gets at
		// most its threshold, the output its reserve.
		e.capacity, e.tier = t+e.reserved, t
	}
	e.rp = compaction.ResolveRoutePolicy(e.route, routeOverrides(cfg, s.agent), compaction.RoutePolicy{
		ThresholdRatio:     pol.RoutePolicy.ThresholdRatio,
		RetainRatio:        pol.RoutePolicy.RetainRatio,
		MaxOverflowRetries: pol.RoutePolicy.MaxOverflowRetries,
	})
	e.th = compaction.Readiness(e.capacity, e.reserved, pol.AutoCompaction.ThresholdTokens, pol.AutoCompaction.ThresholdRatio, e.rp)
	tc := pol.ToolResultClearing
	e.clear = clearing.Policy{Enabled: tc.Enabled, TriggerTokens: tc.TriggerTokens, KeepToolUses: tc.KeepToolUses,
		KeepRecentToolBatches: tc.KeepRecentToolBatches, ClearToolInputs: tc.ClearToolInputs,
		ClearAtLeastTokens: tc.ClearAtLeastTokens, CacheAware: tc.CacheAware}
	e.budget = clearing.Budget{Capacity: e.capacity, ReservedOutput: e.reserved, Prefix: prefix, Ceiling: e.ceiling()}
	e.cost = cat.Cost(e.route.Provider, r.Model)
	return e
}

// intersect is the minimum of the positive values among a and b, 0 when
// neither is positive.
func intersect(a, b int) int {
	switch {
	case a > 0 && b > 0:
		return min(a, b)
	case a > 0:
		return a
	case b > 0:
		return b
	}
	return 0
}

// anthropicEdits reports whether a request on e's route asking for native
// context edits really carries them: an Anthropic-format route that supports
// the clearing edits. Only then is local clearing skipped.
func (e *env) anthropicEdits(asked bool) bool {
	return asked && catalog.WireOf(e.route.Provider) == providers.WireAnthropic && e.route.SupportsContextEdits
}

// projection is a request projection and what it took to build it.
type projection struct {
	msgs []history.Message
	// source is the number of messages of the history projected (the live
	// one, or what a request makes it), as sent: a call still waiting for
	// its result counts the placeholder result the projection gives it.
	source   int
	clear    clearing.Stats
	original int // estimate of the normalized history before clearing
	tokens   int // estimate of msgs
	trimmed  bool
	horizon  clearing.Horizon // the cleared horizon after this projection
	cold     bool             // the route's prompt cache had expired
	// shared is the number of leading messages msgs shares with the last
	// request sent (cacheState.prev), when the projection was built on it
	// (base); the reuse and delta comparisons start there.
	shared int
}

// project normalizes msgs and clears old tool results (steps 2 and 3 of docs/design.md §5).
// It never modifies msgs; it may write past their end, into the spare
// capacity of msgs's array (history.NormalizeGrow). With base, the
// projection is built on the last request sent (clearing.Request.Base):
// only a projection whose result is not kept past the operation, or is the
// next request, may be built on it.
func (s *Session) project(msgs []history.Message, e *env, skipClearing, base bool) projection {
	return s.projectFrom(msgs, s.cache.horizon, e, skipClearing, base)
}

// projectFrom is project with the cleared horizon hz: the session's own for
// msgs that are the live history (or what it becomes once a request is
// committed), none for another one (an agent's fresh window).
func (s *Session) projectFrom(msgs []history.Message, hz clearing.Horizon, e *env, skipClearing, base bool) projection {
	norm, _ := history.NormalizeGrow(msgs)
	p := projection{source: len(norm)}
	p.horizon, p.cold = hz, s.cache.cold(s.m.now(), e.cost)
	if e.clear.Enabled && !skipClearing {
		// The live messages leading the input: the history only grows
		// (until a new one replaces it), so those the last projection also
		// had are unchanged.
		live := 0
		if aliases(msgs, s.live) && aliases(norm, s.live) {
			live = min(len(s.live), len(msgs))
		}
		req := clearing.Request{Policy: e.clear, Budget: e.budget,
			Horizon: hz, CacheCold: p.cold, Memo: s.cache.memo, Previous: s.cache.prev,
			Pricing: clearing.Pricing{Read: e.cost.Read, Write: e.cost.Write}}
		if s.cache.projGen == s.cache.gen {
			req.Unchanged = min(s.cache.projLive, live)
		}
		s.cache.projGen, s.cache.projLive = s.cache.gen, live
		if base {
			req.Base = s.cache.prev
		}
		r := clearing.Project(s.est, norm, req)
		p.msgs, p.clear, p.horizon, p.shared = r.Messages, r.Stats, r.Horizon, r.Shared
		p.original, p.tokens = p.clear.OriginalTokens, p.clear.ProjectedTokens
	} else {
		p.msgs = norm
		p.original = s.est.Messages(norm)
		p.tokens = p.original
		p.clear.OriginalTokens, p.clear.ProjectedTokens = p.original, p.original
		p.clear.LocalTrigger, p.clear.HistoryBudget = clearing.Trigger(e.clear, e.budget)
	}
	return p
}

// trim is the last rung (docs/design.md §5 step 5): when the projection plus prefix exceeds
// capacity − reservedOutput, keep the leading system messages and the newest
// messages within trimToPercent % of that budget minus the prefix, cutting
// only at a user message (or, without one, between batches), and never
// dropping the newest preserveRecentTurns user turns.
func (s *Session) trim(p *projection, e *env) {
	budget := e.capacity - e.reserved
	if e.capacity <= 0 || budget <= 0 || p.tokens+e.prefix <= budget {
		return
	}
	pct := e.pol.Context.TrimToPercent
	if pct <= 0 || pct > 100 {
		pct = config.Default().Context.TrimToPercent
	}
	target := budget*pct/100 - e.prefix
	msgs := p.msgs
	lead := 0
	for lead < len(msgs) && msgs[lead].Role == history.System {
		lead++
	}
	// suffix[i] = tokens of msgs[i:].
	suffix := make([]int, len(msgs)+1)
	for i := len(msgs) - 1; i >= 0; i-- {
		suffix[i] = suffix[i+1] + s.est.Message(&msgs[i])
	}
	leadTokens := suffix[0] - suffix[lead]

	var users []int
	for i := lead; i < len(msgs); i++ {
		if msgs[i].Role == history.User {
			users = append(users, i)
		}
	}
	maxStart := len(msgs)
	if keep := e.pol.Context.PreserveRecentTurns; keep > 0 && len(users) > 0 {
		maxStart = users[max(0, len(users)-keep)]
	}
	var cuts []int
	for _, u := range users {
		if u > lead && u <= maxStart {
			cuts = append(cuts, u)
		}
	}
	if len(cuts) == 0 {
		for i := lead + 1; i <= maxStart && i < len(msgs); i++ {
			if msgs[i].Role != history.Tool {
				cuts = append(cuts, i)
			}
		}
	}
	if len(cuts) == 0 {
		return
	}
	start := cuts[len(cuts)-1]
	for _, c := range cuts {
		if leadTokens+suffix[c] <= target {
			start = c
			break
		}
	}
	out := make([]history.Message, 0, lead+len(msgs)-start)
	out = append(out, msgs[:lead]...)
	out = append(out, msgs[start:]...)
	p.msgs = out
	p.tokens = leadTokens + suffix[start]
	p.trimmed = true
	p.shared = 0 // a new list
}

// view is the projection of the live history as the next request would see
// it without compacting: normalized, cleared, trimmed. base: see project.
func (s *Session) view(e *env, skipClearing, base bool) projection {
	p := s.project(s.live, e, skipClearing, base)
	s.trim(&p, e)
	return p
}

// prepare is vtcode/prepareRequest (docs/design.md §5).
func (s *Session) prepare(ctx context.Context, p PrepareParams, prog Progress) (*PrepareResult, error) {
	s.syncEstimator()
	// 1. Synchronize: the messages are committed with the outcome below, so a
	// cancelled request appends nothing. They go into the live history's
	// spare capacity (as appendLive does), which s.live does not see until
	// they are committed: no copy of the whole history per request.
	pre := s.live
	if len(p.Messages) > 0 {
		pre = append(s.live, p.Messages...)
		for i := len(s.live); i < len(pre); i++ {
			s.est.Message(&pre[i])
		}
	}
	prefix := 0
	if p.PrefixTokens != nil {
		prefix = *p.PrefixTokens
	} else {
		prefix = s.est.Prefix(p.SystemPrompt, p.Tools)
	}
	reserved := p.ReservedOutputTokens
	e := s.env(s.route, reserved, prefix)
	skip := e.anthropicEdits(p.NativeContextEdits)

	var envelope *compaction.Envelope
	if p.SystemPrompt != "" || len(p.Tools) > 0 {
		envelope = &compaction.Envelope{Provider: e.route.Provider, Model: e.route.Model, System: p.SystemPrompt, Tools: slices.Clone(p.Tools)}
	}

	// 2–3. Normalize and clear.
	proj := s.project(pre, e, skip, true)
	// The new messages (estimated copies) are committed once: with a
	// compaction boundary when one succeeds, else in their own event. An
	// error reply means neither was written.
	var fresh []history.Message
	if len(p.Messages) > 0 {
		fresh = pre[len(s.live):]
	}

	// 4. Readiness.
	var report *CompactResult
	auto := e.pol.AutoCompaction.Enabled && e.th.Threshold > 0
	used := proj.tokens + prefix
	switch {
	case auto && e.asks() && !e.overLimit(used): // ask.go
		if used >= e.th.Soft {
			s.propose(pre, e, envelope, used)
		}
	case auto && (proj.tokens+prefix >= e.th.Threshold || s.compactWhileCold(e, proj)):
		res, err := s.compactHistory(ctx, pre, compactJob{
			trigger: compaction.TriggerAuto, strategy: "auto", e: e, prog: prog,
			envelope: envelope, twoPass: s.twoPass,
		})
		ok, err := s.settleAuto(ctx, err)
		if err != nil {
			return nil, err
		}
		if ok {
			fresh = nil // committed with the boundary
			proj = s.project(s.live, e, skip, true)
			if e.asks() {
				s.compactedUnasked(used, e)
			}
		}
		report = res
	case auto && proj.tokens+prefix >= e.th.Soft && s.cache.prefireDue(proj.tokens, e.th.Threshold):
		s.prefire(pre, e, envelope, nil)
	}
	// 5. Last rung.
	s.trim(&proj, e)

	// The request's pressure rides on its messages event when it has one.
	st := s.stats(e, proj)
	turn := s.requestRecord(e, proj, pre, reserved, st)
	if len(fresh) > 0 {
		if err := s.record(evMessages, messagesData{Messages: fresh, Request: &turn}); err != nil {
			return nil, err
		}
	}
	// From here on the request is committed: remember its envelope.
	s.envelope, s.prefix, s.reserved, s.skipClearing = envelope, prefix, reserved, skip
	if len(fresh) == 0 {
		s.recordRequest(turn)
	}
	msgs, base := s.sendProjection(proj, pre, prefix, st, true)

	// 6. Result.
	res := &PrepareResult{Messages: msgs, Compaction: report, Trimmed: proj.trimmed, Base: base}
	if p.NativeContextEdits && catalog.WireOf(e.route.Provider) == providers.WireAnthropic {
		res.ContextManagement = contextEdits(e)
	}
	// The stats are the request's: only the history's length changed
	// with the commit.
	res.Stats = st
	res.Stats.Messages = len(s.live)
	s.setSnapshot(res.Stats)
	s.notifyPressure(res.Stats)
	return res, nil
}

// sendProjection commits what sending projection proj (made from pre,
// with prefix tokens and stats st) leaves behind, for a prepared request
// and a proxied one alike: the cleared horizon, when keep (the projection
// is of the live history as it stands once the request is committed), and
// the request as sent, which the next projection is built on and predicted
// against. The horizon is kept after the commit: failing to keep it costs
// a restarted daemon byte-identical projections, never the request (an
// error reply must mean nothing changed). It returns the messages to send,
// which share no array with pre or the live history: they are the next
// request's base (project), and the live history's spare capacity takes
// the next messages.
func (s *Session) sendProjection(proj projection, pre []history.Message, prefix int, st Stats, keep bool) ([]history.Message, ProjectionBase) {
	if keep {
		s.keepCleared(proj.horizon)
	}
	msgs := proj.msgs
	if aliases(msgs, pre) || aliases(msgs, s.live) {
		msgs = slices.Clone(msgs)
	}
	return msgs, s.cache.sent(msgs, proj.shared, prefix, s.m.now(), *st.Reuse)
}

// keepCleared keeps the cleared horizon h of a committed request, logging a
// failure (see sendProjection).
func (s *Session) keepCleared(h clearing.Horizon) {
	if err := s.keepHorizon(h); err != nil {
		s.m.logger.Warn("session: cleared horizon not kept", "session", s.id, "err", err)
	}
}

// aliases reports whether a and b start at the same element of one array.
func aliases(a, b []history.Message) bool {
	return len(a) > 0 && len(b) > 0 && &a[0] == &b[0]
}

// prefire starts pass 1 of two-pass compaction in the background (docs/design.md §8.6).
// summarizer is the served request's model client in proxy mode, nil
// otherwise.
func (s *Session) prefire(msgs []history.Message, e *env, envelope *compaction.Envelope, summarizer providers.Generator) {
	opts, err := s.compactOptions(compactJob{trigger: compaction.TriggerAuto, strategy: "auto", e: e, envelope: envelope, twoPass: s.twoPass, summarizer: summarizer})
	if err != nil {
		s.m.logger.Debug("session: no pass 1", "session", s.id, "err", err)
		return
	}
	// The pass runs on its own copy with its own estimator.
	opts.Estimator = history.NewEstimator(s.est.Tokenizer())
	s.billing(&opts, newID(s.m.now()), billPassOne)
	s.twoPass.Prefire(s.life, slices.Clone(msgs), opts)
}

// contextEdits returns the edit ladder for a request on an Anthropic route
// (docs/design.md §8.4, built by [providers.AnthropicEdits]): the clearing edits when the
// route supports context edits, then the compact edit when the model
// compacts natively and auto compaction is on, triggered at the threshold.
// Nil when the ladder is empty.
func contextEdits(e *env) json.RawMessage {
	compact := e.pol.AutoCompaction.Enabled && compaction.StrategyFor(e.route) == compaction.NativeInline
	edits := providers.AnthropicEdits(e.route.SupportsContextEdits, compact, e.th.Threshold, "")
	edits = providers.AnthropicClearAtLeast(edits, e.clear.ClearAtLeastTokens)
	if len(edits) == 0 {
		return nil
	}
	out, _ := json.Marshal(struct {
		Edits []providers.AnthropicEdit `json:"edits"`
	}{edits})
	return out
}

// settleAuto settles an automatic compaction's outcome for the request
// that triggered it: ok when the history was compacted, else the error
// that fails the request. A compaction that found nothing to do or failed
// with a [FailedError] lets the request go on with the full history: it
// marks the session so the next request does not retry at once, and a
// failure is reported to the client.
func (s *Session) settleAuto(ctx context.Context, err error) (ok bool, _ error) {
	switch {
	case err == nil:
		s.autoFailed = false
		return true, nil
	case ctx.Err() != nil:
		return false, ctx.Err()
	case errors.Is(err, compaction.ErrAlreadyCompact):
		s.autoFailed = true
		return false, nil
	}
	var fe *FailedError
	if !errors.As(err, &fe) {
		return false, err
	}
	s.autoFailed = true
	s.m.notifyLog(LevelWarning, "vtcode-ls: automatic compaction failed; continuing with the full history: "+fe.RootCause)
	return false, nil
}
