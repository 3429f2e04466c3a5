package session

import (
	"context"
	"fmt"
	"math"
)

// stats builds the stats of projection p under e.
func (s *Session) stats(e *env, p projection) Stats {
	st := Stats{
		SessionID:           s.id,
		Messages:            p.source,
		ProjectedMessages:   len(p.msgs),
		OriginalTokens:      p.original,
		ProjectedTokens:     p.tokens,
		PrefixTokens:        e.prefix,
		ClearedResults:      p.clear.ClearedResults,
		ProtectedResults:    p.clear.ProtectedResults,
		ProtectedBatches:    p.clear.ProtectedBatches,
		ClearedInputs:       p.clear.ClearedInputs,
		LocalTrigger:        p.clear.LocalTrigger,
		HistoryBudget:       p.clear.HistoryBudget,
		Capacity:            e.capacity,
		ReservedOutput:      e.reserved,
		CompactionThreshold: e.th.Threshold,
		Strategy:            string(s.strategy(e)),
		Compactions:         s.compactions,
	}
	used := satAdd(p.tokens, e.prefix)
	if e.th.Effective > 0 {
		st.Pressure = float64(used) / float64(e.th.Effective)
	}
	switch {
	case p.trimmed, st.Pressure > 1:
		// Over the window: no request fits, whatever compaction does.
		st.State = StateCritical
	case e.th.Threshold > 0 && used >= e.th.Threshold:
		if !e.pol.AutoCompaction.Enabled || s.autoFailed {
			st.State = StateCritical
		} else {
			st.State = StateWarn
		}
	case e.th.Threshold > 0 && used >= e.th.Soft:
		st.State = StateWarn
	default:
		st.State = StateOK
	}
	if s.lastCompaction != nil {
		b := *s.lastCompaction
		st.LastCompaction = &b
	}
	s.usage.stats(&st)
	st.Receipt = s.rc.receipt()
	st.Reuse = s.reuseStats(e, p)
	st.Display = newDisplay(used, st.Capacity, st.Pressure)
	return st
}

// satAdd adds two non-negative token counts, saturating at math.MaxInt.
func satAdd(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

// refreshStats recomputes the stats of the live history with the envelope
// of the last request, and remembers them.
func (s *Session) refreshStats() Stats {
	s.syncEstimator()
	e := s.env(s.route, s.reserved, s.prefix)
	st := s.stats(e, s.view(e, e.anthropicEdits(s.skipClearing), true))
	s.setSnapshot(st)
	return st
}

func (s *Session) setSnapshot(st Stats) {
	s.snapMu.Lock()
	s.snap = st
	s.snapMu.Unlock()
}

// snapshot returns the last computed stats, marked as compacting.
func (s *Session) compactingSnapshot() Stats {
	s.snapMu.Lock()
	st := s.snap
	s.snapMu.Unlock()
	st.State = StateCompacting
	return st
}

// notifyPressure reports st as token pressure.
func (s *Session) notifyPressure(st Stats) {
	if s.m.o.Notifier == nil {
		return
	}
	s.m.o.Notifier.TokenPressure(PressureEvent{
		SessionID: s.id, Workspace: s.ws.root,
		ProjectedTokens: st.ProjectedTokens, OriginalTokens: st.OriginalTokens,
		Capacity: st.Capacity, Pressure: st.Pressure, State: st.State,
		Display: st.Display,
	})
}

// ProjectionStats returns the stats of a session's projection as the next
// request would see it (with the last request's prefix and reserved
// output). While a compaction of the session runs it does not wait: it
// returns the last computed stats with state "compacting".
func (m *Manager) ProjectionStats(ctx context.Context, id string) (*Stats, error) {
	if err := checkSessionID(id); err != nil {
		return nil, err
	}
	_, done, err := m.turn(ctx, id, true)
	switch err.(type) {
	case nil:
		defer done()
	case yieldError:
		// A compaction of the open session runs.
		s, err := m.session(id)
		if err != nil {
			return nil, err
		}
		st := s.compactingSnapshot()
		return &st, nil
	default:
		return nil, err
	}
	s, err := m.session(id)
	if err != nil {
		return nil, err
	}
	if s.closed {
		return nil, fmt.Errorf("%w %q", ErrUnknownSession, s.id)
	}
	st := s.refreshStats()
	return &st, nil
}
