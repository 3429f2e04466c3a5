package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vtcode/vtcode-ls/compaction"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
)

// Human-readable outcomes (docs/design.md §8.8, §10).
const (
	msgAlreadyCompact = "Conversation is already compact."
	msgCancelled      = "Compaction cancelled."
	// modeNone is the mode of a compaction that changed nothing.
	modeNone  = "none"
	cacheNote = " The next request may reuse less of the provider's prompt cache."
)

// maxRootCause bounds the root cause shown to users.
const maxRootCause = 512

// KindStorage is the FailedError kind of a compaction whose outcome could
// not be stored (a full or read-only disk): nothing changed.
const KindStorage = "storage"

// commitWith is what a compaction commits in its boundary event besides the
// new history, so that the whole outcome is one append.
type commitWith struct {
	route    *route        // the route of a model switch
	response *responseData // the response carrying a provider compaction block
	// proxy says the proxy aligns its mirror itself after this commit.
	proxy bool
	bills []string // the attempts whose bills the compaction commits (receipt.go)
}

// compactJob describes one compaction.
type compactJob struct {
	trigger      compaction.Trigger
	strategy     string // auto, local or native
	instructions string
	e            *env // route, capacity and policy to compact for
	prog         Progress
	envelope     *compaction.Envelope
	twoPass      *compaction.TwoPass
	// summarizer is the served request's model client in proxy mode
	// (ProxyRequest.Summarizer), for this job only; nil: none.
	summarizer providers.Generator
	// with is committed with the boundary, only when the compaction
	// succeeds.
	with commitWith
}

// summarizerRoute is the route that writes summaries: compaction.summarizer
// when configured, else the session's.
func summarizerRoute(e *env) providers.Route {
	sum := e.cfg.Summarizer
	if sum.Provider == "" && sum.Model == "" {
		return e.route
	}
	r := e.r
	if sum.Provider != "" {
		r.Provider = sum.Provider
	}
	if sum.Model != "" {
		r.Model = sum.Model
	}
	return providerRoute(r, e.cfg, e.cat)
}

// client returns the generator of route r from the Manager's ClientFactory,
// which chooses every route's client, the offline summarizer's included.
// It also returns the route the client serves: r, or the offline
// summarizer's (offlineRoute) for a proxied session without a client.
func (s *Session) client(r providers.Route, e *env) (providers.Generator, providers.Route, error) {
	if s.m.o.Clients == nil {
		return nil, r, fmt.Errorf("no client for provider %q: the manager has no client factory", r.Provider)
	}
	g, err := s.m.o.Clients(r, e.cfg)
	if err != nil && s.px.init && r.Provider != offlineRoute.Provider {
		// A proxied session: the agent's credentials are never used for
		// the engine's own requests, so without a key of its own the
		// daemon summarizes offline.
		s.m.logger.Debug("session: proxied session summarizes offline", "session", s.id, "reason", err)
		return s.client(offlineRoute, e)
	}
	if err != nil {
		return nil, r, err
	}
	if g == nil {
		return nil, r, fmt.Errorf("no client for provider %q", r.Provider)
	}
	return g, r, nil
}

// offlineRoute is the offline summarizer's route.
var offlineRoute = providers.Route{Provider: "offline"}

// strategy is the compaction strategy a compaction on e would run, as
// compactOptions decides: the offline summarizer's (local) when it is the
// configured writer, or for a proxied session whose summarizer has no
// client (client); else the route's.
func (s *Session) strategy(e *env) compaction.Strategy {
	r := summarizerRoute(e)
	switch {
	case e.cfg.Writer == "offline":
		return compaction.StrategyFor(offlineRoute)
	case e.cfg.Writer != "model" && s.px.init && r.Provider != offlineRoute.Provider && s.m.o.Clients != nil:
		if _, err := s.m.o.Clients(r, e.cfg); err != nil {
			return compaction.StrategyFor(offlineRoute)
		}
	}
	return compaction.StrategyFor(e.route)
}

// compactOptions builds the compaction options of j.
func (s *Session) compactOptions(j compactJob) (compaction.Options, error) {
	r := summarizerRoute(j.e)
	writer := j.e.cfg.Writer
	if writer == "offline" {
		r = providers.Route{Provider: "offline"}
	}
	var client providers.Generator
	var err error
	agent := s.agentWriter(j)
	switch {
	case agent:
		// [proxy] summarizer = "agent": the served request's model, through
		// its per-request client, always locally (its text is checked by
		// the record; a native compaction's could not be).
		client, r.NativeCompaction = j.summarizer, compaction.NativeNever
	case writer == "model" && s.m.o.Clients != nil:
		// The model or a clear failure: no offline fallback, not even in
		// proxy mode.
		client, err = s.m.o.Clients(r, j.e.cfg)
		if err == nil && client == nil {
			err = fmt.Errorf("no client for provider %q", r.Provider)
		}
	default:
		client, _, err = s.client(r, j.e)
	}
	if err != nil {
		return compaction.Options{}, &FailedError{Kind: compaction.KindProvider, Provider: r.Provider, Model: r.Model,
			RootCause: bound(err.Error(), maxRootCause), err: err}
	}
	prompt, _, err := s.ws.compactPrompt()
	if err != nil {
		s.m.logger.Warn("session: compaction prompt unreadable; using the default", "workspace", s.ws.root, "err", err)
		prompt = ""
	}
	opts := compaction.Options{
		Trigger:        j.trigger,
		Strategy:       j.strategy,
		Instructions:   j.instructions,
		Prompt:         prompt,
		Pin:            j.e.cfg.Pin,
		Capacity:       j.e.capacity,
		ReservedOutput: j.e.reserved,
		Prefix:         j.e.prefix,
		RoutePolicy:    j.e.rp,
		Envelope:       j.envelope,
		Route:          r,
		Client:         client,
		Estimator:      s.est,
		TwoPass:        j.twoPass,
		Logger:         s.m.logger.With("session", s.id),
	}
	if r.Provider != "offline" {
		// A model writes the summary: the record's own writer gives it the
		// record and checks what it wrote.
		if rc, _, err := s.client(offlineRoute, j.e); err == nil {
			if sm, ok := rc.(providers.Summarizer); ok {
				opts.Record = sm
			}
		}
		// A failed call of the agent's model leaves the record's summary:
		// the agent is not left with its full history because the engine
		// borrowed its route. The daemon's own model failing is a failed
		// compaction, reported as one (SPEC §8.8).
		opts.RecordFallback = agent
	}
	if j.prog != nil {
		opts.Progress = j.prog.Report
	}
	return opts, nil
}

// compactHistory compacts msgs (the full pre-compaction history, which may
// extend the live one with the messages of a request: they are stored with
// it, in the artifact and in the boundary's history) and commits the
// outcome: the artifact, then one boundary event, then the swap. It returns
// the report of the attempt and:
//   - nil on success;
//   - compaction.ErrAlreadyCompact for a no-op (the report says so);
//   - a *FailedError for a failure (the report carries it), kind
//     [KindStorage] when the store could not take the outcome;
//   - ctx's error when cancelled before the boundary was recorded.
//
// In every case but success nothing changed and no file was left behind.
// The progress end message is built once, from the outcome.
func (s *Session) compactHistory(ctx context.Context, msgs []history.Message, j compactJob) (report *CompactResult, err error) {
	report = &CompactResult{Trigger: string(j.trigger), OriginalMessageCount: len(msgs)}
	prog := j.prog
	if prog == nil {
		prog = nopProgress{}
	}
	prog.Begin(CompactingTitle)
	started, committed := false, false
	defer func() {
		msg := outcomeMessage(report, err)
		if report != nil {
			report.Message = msg
		}
		prog.End(msg)
		if started {
			if !committed {
				s.logBills() // the calls that answered are billed all the same
				// Cancelled, failed or a no-op: the history is as it was, so
				// take the client's gauge out of "compacting" again.
				s.notifyPressure(s.refreshStats())
			}
			s.m.order.setCompacting(s.id, false)
		}
	}()
	opts, err := s.compactOptions(j)
	report.Strategy = string(compaction.StrategyFor(opts.Route))
	if err != nil {
		var fe *FailedError
		errors.As(err, &fe)
		report.Error = fe.RootCause
		return report, err
	}
	tag := newID(s.m.now())
	s.billing(&opts, tag, billCompaction)

	s.m.order.setCompacting(s.id, true)
	started = true
	s.notifyPressure(s.compactingSnapshot())
	if j.twoPass != nil {
		// A pass 1 in flight is further along than a fresh summary would be:
		// let it finish so that its note makes this compaction one call.
		if err := awaitPassOne(ctx, j.twoPass, s.m.passOneWait()); err != nil {
			return nil, err
		}
	}

	start := time.Now()
	res, err := compaction.Compact(ctx, msgs, opts)
	elapsed := time.Since(start)
	report.ElapsedMs = elapsed.Milliseconds()
	if err == nil {
		err = ctx.Err() // a result that arrives after cancellation is dropped
	}
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, compaction.ErrAlreadyCompact):
		report.Mode = modeNone
		report.CompactedMessageCount = len(msgs)
		report.OriginalTokens = s.est.Messages(msgs)
		report.CompactedTokens = report.OriginalTokens
		return report, compaction.ErrAlreadyCompact
	default:
		fe := failure(err, opts.Route)
		report.Error = fe.RootCause
		s.m.logger.Warn("session: compaction failed", "session", s.id, "trigger", j.trigger, "err", err)
		return report, fe
	}
	if res.Fallback != "" {
		s.m.notifyLog(LevelInfo, "vtcode-ls: native compaction fell back to local: "+bound(res.Fallback, maxRootCause))
	}
	if res.WriterFallback != "" {
		s.m.notifyLog(LevelWarning, "vtcode-ls: "+bound(res.WriterFallback, maxRootCause))
	}

	b := Boundary{
		Trigger: string(j.trigger), Mode: res.Mode, Strategy: string(res.Strategy),
		OriginalMessageCount: res.OriginalMessageCount, CompactedMessageCount: res.CompactedMessageCount,
		OriginalTokens: res.OriginalTokens, CompactedTokens: res.CompactedTokens,
		ElapsedMs: elapsed.Milliseconds(),
	}
	with := j.with
	with.bills = []string{tag}
	if res.NoteTag != "" {
		with.bills = append(with.bills, res.NoteTag)
	}
	if err := s.commit(ctx, msgs, res.Messages, res.SummaryIndex, &b, with); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		fe := storageFailure(err)
		report.Error = fe.RootCause
		s.m.logger.Warn("session: compaction not stored", "session", s.id, "trigger", j.trigger, "err", err)
		return report, fe
	}
	committed = true
	*report = resultOf(b)
	return report, nil
}

// outcomeMessage is the human-readable outcome of a compaction attempt: the
// report's message and the progress end message, for every outcome.
func outcomeMessage(report *CompactResult, err error) string {
	var fe *FailedError
	switch {
	case err == nil && report != nil:
		return fmt.Sprintf("Context compacted · %.1fs (%d -> %d messages, %s).%s",
			float64(report.ElapsedMs)/1000, report.OriginalMessageCount, report.CompactedMessageCount, report.Mode, cacheNote)
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return msgCancelled
	case errors.Is(err, compaction.ErrAlreadyCompact):
		return msgAlreadyCompact
	case errors.As(err, &fe):
		return "Compaction failed: " + fe.RootCause
	case err != nil:
		return "Compaction failed: " + bound(err.Error(), maxRootCause)
	}
	return ""
}

// storageFailure is the *FailedError of a compaction outcome the store
// could not take.
func storageFailure(err error) *FailedError {
	return &FailedError{Kind: KindStorage, RootCause: bound("could not store the compaction: "+err.Error(), maxRootCause), err: err}
}

// DefaultPassOneWait bounds how long a compaction waits for a background
// pass 1 still in flight before it gives up on it and summarizes in one
// pass: a pass 1 stuck at a hung provider must not hold the session for the
// provider's whole timeout. [Options].PassOneWait changes it.
const DefaultPassOneWait = 20 * time.Second

// awaitPassOne waits until no pass 1 of tp runs, or ctx ends. After limit
// it cancels the pass (its note is lost; the compaction then makes its own
// summary) and waits for it to wind down.
func awaitPassOne(ctx context.Context, tp *compaction.TwoPass, limit time.Duration) error {
	done := make(chan struct{})
	go func() { // ends with the pass, which ends with the session at the latest
		tp.Wait()
		close(done)
	}()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		tp.Invalidate()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// commit makes a compaction outcome durable and current, in the order of
// docs/design.md §8.8: the artifact of the full pre-compaction history first, then one
// boundary event carrying the new live history, the artifact's ref and what
// is committed with it, then the swap (by applying that event) and the
// notification. The append is the commit point: when it fails, or ctx is
// cancelled before it, the artifact is removed and nothing changed. It
// fills b.ArtifactID. summary is the index in next of the engine's summary
// message, -1 for none.
func (s *Session) commit(ctx context.Context, pre, next []history.Message, summary int, b *Boundary, with commitWith) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.ArtifactID = newID(s.m.now())
	ref, err := s.log.WriteArtifact(b.ArtifactID, pre)
	if err != nil {
		return err // "write artifact <id>: ..."
	}
	if err := ctx.Err(); err != nil {
		s.dropArtifact(ref.ID)
		return err
	}
	d := boundaryData{Boundary: *b, Messages: next, Artifact: &ref, Route: with.route, Response: with.response, Timeline: s.cm.timeline(), Bills: with.bills,
		Summary: markAt(summary).recorded()}
	if err := s.record(evBoundary, d); err != nil {
		s.dropArtifact(ref.ID)
		return err
	}
	s.retainArtifacts()
	if !with.proxy {
		s.proxyReplaced()
	}
	if n := s.m.o.Notifier; n != nil {
		n.CompactBoundary(BoundaryEvent{SessionID: s.id, Workspace: s.ws.root, Boundary: *b})
	}
	return nil
}

// resultOf is the compact result of a recorded boundary.
func resultOf(b Boundary) CompactResult {
	return CompactResult{
		Mode: b.Mode, Strategy: b.Strategy, Trigger: b.Trigger, ElapsedMs: b.ElapsedMs,
		OriginalMessageCount: b.OriginalMessageCount, CompactedMessageCount: b.CompactedMessageCount,
		OriginalTokens: b.OriginalTokens, CompactedTokens: b.CompactedTokens, ArtifactID: b.ArtifactID,
	}
}

// failure turns a compaction error into a *FailedError with a bounded root
// cause: the provider's own message and kind when a provider failed, else
// the compaction engine's diagnostic and kind (budget, empty, unsupported).
func failure(err error, r providers.Route) *FailedError {
	fe := &FailedError{Kind: compaction.KindProvider, Provider: r.Provider, Model: r.Model, err: err}
	cause := err.Error()
	var ce *compaction.Error
	if errors.As(err, &ce) {
		fe.Kind, fe.InputTokens, fe.Budget = ce.Kind, ce.InputTokens, ce.Budget
		if ce.Provider != "" {
			fe.Provider, fe.Model = ce.Provider, ce.Model
		}
	}
	var pe *providers.Error
	if errors.As(err, &pe) {
		fe.Kind = string(pe.Kind) // the more precise: capacity, auth, rate_limit, ...
		if fe.InputTokens == 0 {
			fe.InputTokens = pe.InputTokens
		}
		msg := pe.Message
		if msg == "" {
			msg = string(pe.Kind)
		}
		if pe.Status != 0 {
			msg = fmt.Sprintf("HTTP %d: %s", pe.Status, msg)
		}
		cause = fmt.Sprintf("%s %s: %s", orUnknown(pe.Provider, fe.Provider), orUnknown(pe.Model, fe.Model), msg)
	}
	fe.RootCause = bound(strings.TrimSpace(cause), maxRootCause)
	return fe
}

func orUnknown(s, fallback string) string {
	if s != "" {
		return s
	}
	if fallback != "" {
		return fallback
	}
	return "unknown"
}

type nopProgress struct{}

func (nopProgress) Begin(string)       {}
func (nopProgress) Report(string, int) {}
func (nopProgress) End(string)         {}

// compact is vtcode/compact.
func (s *Session) compact(ctx context.Context, p CompactParams, prog Progress) (*CompactResult, error) {
	s.syncEstimator()
	e := s.env(s.route, s.reserved, s.prefix)
	report, err := s.compactHistory(ctx, s.live, compactJob{
		trigger: compaction.TriggerManual, strategy: p.Strategy, instructions: p.Instructions,
		e: e, prog: prog, envelope: s.envelope, twoPass: s.twoPass,
	})
	switch {
	case err == nil:
		s.autoFailed = false
		s.notifyPressure(s.refreshStats())
	case errors.Is(err, compaction.ErrAlreadyCompact):
		// compactHistory already reported the unchanged pressure.
	default:
		return nil, err
	}
	return report, nil
}

// switchModel is vtcode/switchModel.
func (s *Session) switchModel(ctx context.Context, p SwitchParams, prog Progress) (*SwitchResult, error) {
	s.syncEstimator()
	next := route{Provider: p.Provider, Model: p.Model, ContextWindow: p.ContextWindow}
	name := strings.TrimSpace(p.Provider + "/" + p.Model)
	if next == s.route {
		return &SwitchResult{Message: "Already on " + name + "."}, nil
	}
	res := &SwitchResult{Message: "Model switched to " + name + "."}
	switched := false // recorded with a compaction boundary

	e := s.env(next, s.reserved, s.prefix)
	if e.pol.AutoCompaction.CompactOnModelSwitch && e.th.Threshold > 0 {
		proj := s.project(s.live, e, false, false)
		if proj.tokens+e.prefix >= e.th.Threshold {
			// No envelope and no two-pass note: both belong to the old route.
			report, err := s.compactHistory(ctx, s.live, compactJob{
				trigger: compaction.TriggerModelSwitch, strategy: "auto", e: e, prog: prog, with: commitWith{route: &next},
			})
			var fe *FailedError
			switch {
			case err == nil:
				switched = true
				s.autoFailed = false
			case ctx.Err() != nil:
				return nil, ctx.Err()
			case errors.Is(err, compaction.ErrAlreadyCompact):
			case errors.As(err, &fe):
				res.Message = "Model switched, but context compaction failed: " + strings.TrimSuffix(fe.RootCause, ".") + ". Continuing with full history."
				s.m.notifyLog(LevelWarning, "vtcode-ls: "+res.Message)
			default:
				return nil, err
			}
			res.Compaction = report
		}
	}
	if !switched {
		if err := s.record(evModelSwitch, next); err != nil {
			return nil, err
		}
	}
	s.notifyPressure(s.refreshStats())
	return res, nil
}
