package transcript

import (
	"encoding/json"
	"sort"

	"github.com/vtcode/vtcode-ls/history"
)

// AgentCompaction is a compaction the agent itself ran, as its record holds
// it: Claude Code's compact summary, a Codex rollout's compacted item,
// Copilot CLI's and opencode's summaries.
type AgentCompaction struct {
	// At is the index in Messages where the compaction took effect:
	// Messages[:At] is the prefix the agent summarized. When the summary is
	// imported as a message, Messages[At] is that message.
	At int
	// Summary is what the agent continued with in place of the prefix: its
	// summary message, or a Codex rollout's replacement history.
	Summary []history.Message
}

// AgentCompactions returns the agent's own compactions the record holds, in
// the order they ran: every message marked isCompactSummary, and the
// compacted items of a Codex rollout. It reads the transcript only.
func (t *Transcript) AgentCompactions() []AgentCompaction {
	out := append([]AgentCompaction(nil), t.compactions...)
	for i := range t.Messages {
		if isTrue(t.Messages[i].Extra["isCompactSummary"]) {
			out = append(out, AgentCompaction{At: i, Summary: []history.Message{t.Messages[i]}})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At < out[j].At })
	return out
}

// codexReplacement converts the replacement history of a Codex compacted
// item (Responses API items) to messages, for [AgentCompaction.Summary].
func codexReplacement(items json.RawMessage) []history.Message {
	c := &codexConv{b: newBuilder(FormatCodex), open: -1, names: map[string]string{}}
	for _, raw := range rawArray(items) {
		if p := object(raw); p != nil {
			c.item(p, raw)
		}
	}
	c.flushReasoning()
	return c.out
}
