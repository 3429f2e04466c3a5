package session

import (
	"context"
	"fmt"

	"github.com/vtcode/vtcode-ls/compaction"
	"github.com/vtcode/vtcode-ls/history"
)

// Ask mode (agent.harness.auto_compaction_mode = "ask"): automatic
// compaction waits for the user. When a request crosses the soft threshold
// the session prepares the compaction in the background (pass 1, as the
// automatic mode does) and proposes it once ([ProposalNotifier],
// vtcode/compactionProposed). Until the user answers (a manual compaction,
// a committed preview, or a decline), requests go on with clearing only,
// past the compaction threshold. At the hard limit (the request would not
// fit the window) the session compacts anyway, and says so: a request is
// never sent over budget, and an agent is never blocked waiting for a
// person. A declined proposal is made again when the request has grown by
// another gap between the soft threshold and the threshold; a compaction
// ends the proposal.

// CompactModeAsk is the AutoCompaction.Mode that proposes compaction.
const CompactModeAsk = "ask"

// ProposalEvent is the body of vtcode/compactionProposed.
type ProposalEvent struct {
	SessionID string `json:"sessionId"`
	Workspace string `json:"workspace"`
	// UsedTokens is the request that crossed the soft threshold (prefix +
	// projection); Threshold is where automatic mode would compact and
	// Limit what fits the window (capacity − reserved output), where the
	// session compacts without asking.
	UsedTokens int    `json:"usedTokens"`
	Threshold  int    `json:"threshold"`
	Limit      int    `json:"limit"`
	Message    string `json:"message"`
}

// ProposalNotifier is implemented by a [Notifier] that tells clients of a
// compaction proposal; other notifiers get the proposal as a shown message.
type ProposalNotifier interface {
	CompactionProposed(ProposalEvent)
}

// askState is a session's proposal.
type askState struct {
	proposed   bool // a proposal is out and unanswered
	declinedAt int  // the request size when the user declined; 0: none
}

// asks reports whether automatic compaction asks first under e.
func (e *env) asks() bool { return e.pol.AutoCompaction.Mode == CompactModeAsk }

// overLimit reports whether a request of used tokens does not fit the
// window.
func (e *env) overLimit(used int) bool { return e.th.Effective > 0 && used > e.th.Effective }

// propose prepares and proposes a compaction for a request of used tokens
// at or past the soft threshold, unless one is out or was declined at a
// size the request has not outgrown.
func (s *Session) propose(msgs []history.Message, e *env, envelope *compaction.Envelope, used int) {
	gap := max(e.th.Threshold-e.th.Soft, 1)
	if s.ask.proposed || s.ask.declinedAt > 0 && used < s.ask.declinedAt+gap {
		return
	}
	s.ask = askState{proposed: true}
	s.prefire(msgs, e, envelope, nil)
	ev := ProposalEvent{SessionID: s.id, Workspace: s.ws.root, UsedTokens: used, Threshold: e.th.Threshold, Limit: e.th.Effective,
		Message: fmt.Sprintf("vtcode-ls: session %s holds %s of %s tokens. Compact it now? Until you answer, requests go on with clearing only; at %s tokens it compacts anyway.",
			s.id, history.FormatCount(used), history.FormatCount(e.th.Effective), history.FormatCount(e.th.Effective))}
	switch n := s.m.o.Notifier.(type) {
	case nil:
	case ProposalNotifier:
		n.CompactionProposed(ev)
	default:
		n.ShowMessage(LevelInfo, ev.Message)
	}
}

// compactedUnasked tells the user that the session compacted without an
// answer because the request would not fit.
func (s *Session) compactedUnasked(used int, e *env) {
	s.m.notifyShow(LevelWarning, fmt.Sprintf("vtcode-ls: session %s compacted without asking: the request (%s tokens) would not fit the window (%s).",
		s.id, history.FormatCount(used), history.FormatCount(e.th.Effective)))
}

// DeclineParams are the parameters of vtcode/declineCompaction.
type DeclineParams struct {
	SessionID string `json:"sessionId"`
	Place            // the call's place in its queue (see [Manager.Reserve])
}

// DeclineCompaction is vtcode/declineCompaction: the user said "not now" to
// a proposal. Requests go on with clearing only; the proposal is made
// again when the request has grown by the gap between the soft threshold
// and the threshold, and the session still compacts at the hard limit.
func (m *Manager) DeclineCompaction(ctx context.Context, p DeclineParams) (*Stats, error) {
	if err := checkSessionID(p.SessionID); err != nil {
		return nil, err
	}
	return run(ctx, m, p.Ticket, p.SessionID, func(ctx context.Context, s *Session) (*Stats, error) {
		st := s.refreshStats()
		s.ask = askState{declinedAt: max(st.ProjectedTokens+st.PrefixTokens, 1)}
		return &st, nil
	})
}
