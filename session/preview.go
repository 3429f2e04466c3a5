package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vtcode/vtcode-ls/compaction"
	"github.com/vtcode/vtcode-ls/history"
)

// ErrPreviewStale is returned (wrapped, naming the preview) when a preview
// is committed after the live history changed: appended messages, a
// response, a compaction or a restore since the preview was made.
var ErrPreviewStale = errors.New("the history changed since the preview")

// Preview outcomes.
const (
	PreviewTitle   = "Previewing compaction..."
	msgPreviewNone = "Nothing to preview: " + msgAlreadyCompact
)

// CommitParams commit a compaction preview.
type CommitParams struct {
	SessionID string
	PreviewID string
	Summary   *string // nil: the previewed summary
	Place             // the call's place in its queue (see [Manager.Reserve])
}

// CompactPreview is the result of vtcode/compact with preview: true: the
// history the compaction would commit, and nothing committed. PreviewID is
// empty when the history is already compact (Mode "none").
type CompactPreview struct {
	PreviewID string `json:"previewId"`
	// Summary is the summary text (without the summary message's heading);
	// Editable is false when there is none to edit (an opaque
	// provider-native compaction).
	Summary  string `json:"summary"`
	Editable bool   `json:"editable"`
	// Messages is the new live history the commit would swap in: the summary
	// message, the retained user messages and the verbatim tail.
	Messages              []history.Message `json:"messages"`
	Mode                  string            `json:"mode"`
	Strategy              string            `json:"strategy"`
	OriginalMessageCount  int               `json:"originalMessageCount"`
	CompactedMessageCount int               `json:"compactedMessageCount"`
	OriginalTokens        int               `json:"originalTokens"`
	CompactedTokens       int               `json:"compactedTokens"`
	ElapsedMs             int64             `json:"elapsedMs"`
	Message               string            `json:"message"`
}

// previewState holds the compaction preview awaiting its commit, if any.
// It applies the session's events: one that changes the live history (new
// messages, a response, a compaction, a restore) makes the preview stale.
type previewState struct {
	pending *pendingPreview
}

// pendingPreview is a preview awaiting its commit.
type pendingPreview struct {
	id      string
	base    []history.Message // the live history it was made from
	res     *compaction.Result
	summary int // index of the summary message in res.Messages; -1: none
	elapsed time.Duration
	stale   bool // the live history changed since base
}

// apply marks the pending preview stale when c changes the live history.
func (p *previewState) apply(c *change) {
	if p.pending != nil && (c.replace || len(c.msgs) > 0) {
		p.pending.stale = true
	}
}

// previewCompact is vtcode/compact with preview: true. It compacts the live
// history as a manual compaction would and keeps the result for a commit,
// without changing anything: no artifact, no swap; only the bills of its
// provider calls are recorded (receipt.go), whether or not it is
// committed. A newer preview replaces an older one.
func (s *Session) previewCompact(ctx context.Context, p CompactParams, prog Progress) (*CompactPreview, error) {
	s.syncEstimator()
	e := s.env(s.route, s.reserved, s.prefix)
	// No two-pass note: using one would consume it, and a preview commits
	// nothing.
	opts, err := s.compactOptions(compactJob{
		trigger: compaction.TriggerManual, strategy: p.Strategy, instructions: p.Instructions,
		e: e, envelope: s.envelope,
	})
	if prog == nil {
		prog = nopProgress{}
	}
	prog.Begin(PreviewTitle)
	if err != nil {
		var fe *FailedError
		errors.As(err, &fe)
		prog.End("Compaction preview failed: " + fe.RootCause)
		return nil, err
	}
	if opts.Progress == nil {
		opts.Progress = prog.Report
	}
	s.m.order.setCompacting(s.id, true)
	defer s.m.order.setCompacting(s.id, false)
	s.notifyPressure(s.compactingSnapshot())
	defer func() { s.notifyPressure(s.refreshStats()) }()

	id := newID(s.m.now())
	s.billing(&opts, id, billPreview)
	start := time.Now()
	res, err := compaction.Compact(ctx, s.live, opts)
	elapsed := time.Since(start)
	s.logBills()
	if err == nil {
		err = ctx.Err()
	}
	switch {
	case err == nil:
	case ctx.Err() != nil:
		prog.End("Compaction preview cancelled.")
		return nil, ctx.Err()
	case errors.Is(err, compaction.ErrAlreadyCompact):
		n := s.est.Messages(s.live)
		prog.End(msgPreviewNone)
		return &CompactPreview{
			Mode: modeNone, Strategy: string(compaction.StrategyFor(opts.Route)), Messages: []history.Message{},
			OriginalMessageCount: len(s.live), CompactedMessageCount: len(s.live),
			OriginalTokens: n, CompactedTokens: n, ElapsedMs: elapsed.Milliseconds(), Message: msgPreviewNone,
		}, nil
	default:
		fe := failure(err, opts.Route)
		prog.End("Compaction preview failed: " + fe.RootCause)
		return nil, fe
	}

	pp := &pendingPreview{id: id, base: s.live, res: res, summary: res.SummaryIndex, elapsed: elapsed}
	s.preview.pending = pp
	out := &CompactPreview{
		PreviewID: pp.id, Summary: res.Summary, Editable: pp.summary >= 0,
		Messages: append([]history.Message{}, res.Messages...),
		Mode:     res.Mode, Strategy: string(res.Strategy),
		OriginalMessageCount: res.OriginalMessageCount, CompactedMessageCount: res.CompactedMessageCount,
		OriginalTokens: res.OriginalTokens, CompactedTokens: res.CompactedTokens, ElapsedMs: elapsed.Milliseconds(),
	}
	if pp.summary >= 0 {
		// The summary as the message carries it (it may have been bounded).
		out.Summary = compaction.SummaryText(&res.Messages[pp.summary])
	}
	out.Message = fmt.Sprintf("Compaction preview: %d -> %d messages, %s -> %s tokens (%s). Nothing was changed.",
		out.OriginalMessageCount, out.CompactedMessageCount,
		history.FormatCount(out.OriginalTokens), history.FormatCount(out.CompactedTokens), out.Mode)
	prog.End(out.Message)
	return out, nil
}

// commitPreview is vtcode/compact with a previewId: it commits exactly the
// previewed history (with the summary replaced when p.Summary is set), as a
// manual compaction. It fails, changing nothing, when the preview is
// unknown or the history changed since it was made.
func (s *Session) commitPreview(ctx context.Context, p CommitParams) (*CompactResult, error) {
	pp := s.preview.pending
	if pp == nil || pp.id != p.PreviewID {
		return nil, paramErr("previewId", "no compaction preview %q in session %s (a preview is kept until it is committed, a newer one replaces it, or the session closes)", p.PreviewID, s.id)
	}
	if pp.stale {
		s.preview.pending = nil
		return nil, fmt.Errorf("preview %s: %w (%d messages then, %d now); preview again", pp.id, ErrPreviewStale, len(pp.base), len(s.live))
	}
	s.syncEstimator()
	next := pp.res.Messages
	edited := false
	if p.Summary != nil {
		text := strings.TrimSpace(*p.Summary)
		switch {
		case text == "":
			return nil, paramErr("summary", "must not be empty")
		case pp.summary < 0:
			return nil, paramErr("summary", "this compaction has no summary text to replace (%s)", pp.res.Mode)
		}
		if text != strings.TrimSpace(compaction.SummaryText(&next[pp.summary])) {
			next = append([]history.Message{}, next...)
			next[pp.summary] = compaction.SummaryMessage(text)
			edited = true
		}
	}
	compacted := s.est.Messages(next)
	if edited {
		e := s.env(s.route, s.reserved, s.prefix)
		if compacted >= pp.res.OriginalTokens {
			return nil, paramErr("summary", "the edited summary makes the history %s tokens, not smaller than the %s before",
				history.FormatCount(compacted), history.FormatCount(pp.res.OriginalTokens))
		}
		if window := e.capacity - e.reserved - e.prefix; e.capacity > 0 && compacted > window {
			return nil, paramErr("summary", "the edited summary makes the history %s tokens, more than the %s the window holds",
				history.FormatCount(compacted), history.FormatCount(window))
		}
	}
	b := Boundary{
		Trigger: string(compaction.TriggerManual), Mode: pp.res.Mode, Strategy: string(pp.res.Strategy),
		OriginalMessageCount: pp.res.OriginalMessageCount, CompactedMessageCount: len(next),
		OriginalTokens: pp.res.OriginalTokens, CompactedTokens: compacted,
		ElapsedMs: pp.elapsed.Milliseconds(),
	}
	if err := s.commit(ctx, pp.base, next, pp.summary, &b, commitWith{bills: []string{pp.id}}); err != nil {
		return nil, err
	}
	s.preview.pending = nil
	s.autoFailed = false
	s.notifyPressure(s.refreshStats())
	report := resultOf(b)
	how := "the previewed summary"
	if edited {
		how = "the edited summary"
	}
	report.Message = fmt.Sprintf("Context compacted with %s (%d -> %d messages, %s).%s",
		how, b.OriginalMessageCount, b.CompactedMessageCount, b.Mode, cacheNote)
	return &report, nil
}

// PreviewCompact previews a manual compaction of a session (vtcode/compact
// with preview: true).
func (m *Manager) PreviewCompact(ctx context.Context, p CompactParams, prog Progress) (*CompactPreview, error) {
	switch p.Strategy {
	case "", "auto", "local", "native":
	default:
		return nil, paramErr("strategy", "must be auto, local or native")
	}
	return run(ctx, m, p.Ticket, p.SessionID, func(ctx context.Context, s *Session) (*CompactPreview, error) {
		return s.previewCompact(ctx, p, prog)
	})
}

// CommitPreview commits a compaction preview (vtcode/compact with a
// previewId).
func (m *Manager) CommitPreview(ctx context.Context, p CommitParams) (*CompactResult, error) {
	if p.PreviewID == "" {
		return nil, paramErr("previewId", "must not be empty")
	}
	return run(ctx, m, p.Ticket, p.SessionID, func(ctx context.Context, s *Session) (*CompactResult, error) {
		return s.commitPreview(ctx, p)
	})
}
