package session

import (
	"github.com/vtcode/vtcode-ls/compaction"
	"github.com/vtcode/vtcode-ls/history"
)

// The engine's own summary message is known by its place in the live
// history, never by its words. A compaction boundary records the index of
// the summary it wrote (compaction.Result.SummaryIndex), a restore the
// index its artifact's history had, and the history only grows by appends
// until the next of them. Only a history nobody marked is read for the
// summary's heading (compaction.IsSummaryMessage): the events of a log
// older than the mark, decoded once on replay, and a window an agent
// compacted itself.

// summaryMark is where a history holds the engine's summary message: its
// index + 1; noSummary (the zero value) when it holds none; unknownSummary
// for the history of a past event of an older log, which replay does not
// decode.
type summaryMark int

const (
	noSummary      summaryMark = 0
	unknownSummary summaryMark = -1
)

// markAt is the mark of a summary at index i (none when i < 0).
func markAt(i int) summaryMark {
	if i < 0 {
		return noSummary
	}
	return summaryMark(i + 1)
}

// index is the summary's index, -1 when there is none (or it is unknown).
func (m summaryMark) index() int {
	if m <= noSummary {
		return -1
	}
	return int(m) - 1
}

// recorded is the mark as an event records it (the index, -1 for none).
func (m summaryMark) recorded() *int {
	i := m.index()
	return &i
}

// markOf is the mark of an event's history: the index the event recorded,
// else (an older log) the one msgs show when they were decoded, else
// unknown.
func markOf(recorded *int, msgs []history.Message, decoded bool) summaryMark {
	switch {
	case recorded != nil:
		return markAt(*recorded)
	case decoded:
		return markAt(findSummary(msgs))
	}
	return unknownSummary
}

// findSummary is the index of the first message of msgs that reads as the
// engine's summary, -1 when none does: for histories nobody marked.
func findSummary(msgs []history.Message) int {
	for i := range msgs {
		if compaction.IsSummaryMessage(&msgs[i]) {
			return i
		}
	}
	return -1
}

// summaryIn is the index in projection p of the live history's summary
// message, -1 when there is none or p does not hold it in place. A
// projection keeps every message before the history's first tool exchange
// at its index (normalization moves and adds only tool results, clearing
// rewrites results, trimming keeps the leading system messages), and a
// compaction's summary leads the history it writes.
func (s *Session) summaryIn(p projection) int {
	k := s.summary.index()
	if k < 0 || k >= len(s.live) || k >= len(p.msgs) {
		return -1
	}
	for i := range s.live[:k+1] {
		m := &s.live[i]
		if m.Role == history.Tool || m.HasToolCalls() || p.trimmed && m.Role != history.System {
			return -1
		}
	}
	return k
}
