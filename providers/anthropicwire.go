package providers

import (
	"encoding/json"

	"github.com/vtcode/vtcode-ls/history"
)

// The Anthropic wire facts that other packages need (session builds the edit
// ladder a client sends and reads usage iterations, compaction recognizes
// compaction blocks): one definition here, used by providers/anthropic too.

// The context-management edits of the inline ladder (docs/design.md §8.4).
const (
	AnthropicEditClearThinking = "clear_thinking_20251015"
	AnthropicEditClearToolUses = "clear_tool_uses_20250919"
	AnthropicEditCompact       = "compact_20260112"
	// AnthropicCompactTriggerFloor is the provider's smallest compact
	// trigger (input tokens); smaller triggers are raised to it.
	AnthropicCompactTriggerFloor = 50_000
	// AnthropicClearToolUsesTrigger and AnthropicClearToolUsesKeep
	// configure the tool-use clearing edit, AnthropicClearThinkingKeep the
	// thinking clearing edit.
	AnthropicClearToolUsesTrigger = 100_000
	AnthropicClearToolUsesKeep    = 3
	AnthropicClearThinkingKeep    = 2
)

// AnthropicEdit is one context-management edit, in its wire form.
type AnthropicEdit struct {
	Type                 string           `json:"type"`
	Trigger              *AnthropicAmount `json:"trigger,omitempty"`
	Keep                 *AnthropicAmount `json:"keep,omitempty"`
	ClearAtLeast         *AnthropicAmount `json:"clear_at_least,omitempty"`
	PauseAfterCompaction bool             `json:"pause_after_compaction,omitempty"`
	Instructions         string           `json:"instructions,omitempty"`
}

// AnthropicAmount is an edit's trigger or keep value.
type AnthropicAmount struct {
	Type  string `json:"type"`
	Value int    `json:"value"`
}

// AnthropicClearAtLeast sets clear_at_least (input tokens) on the
// clear_tool_uses_20250919 edit of edits when tokens > 0: the server then
// clears only in steps that free at least that much, so a cleared prefix
// pays for the prompt cache it breaks. It returns edits.
func AnthropicClearAtLeast(edits []AnthropicEdit, tokens int) []AnthropicEdit {
	if tokens <= 0 {
		return edits
	}
	for i := range edits {
		if edits[i].Type == AnthropicEditClearToolUses {
			edits[i].ClearAtLeast = &AnthropicAmount{"input_tokens", tokens}
		}
	}
	return edits
}

// AnthropicEdits returns the edit ladder: with clearing,
// clear_thinking_20251015 (keep 2 thinking turns) and
// clear_tool_uses_20250919 (trigger 100,000 input tokens, keep 3 tool uses);
// with compact, compact_20260112 (trigger max(50,000, trigger) input tokens,
// pause_after_compaction, instructions when set). Nil when both are off.
func AnthropicEdits(clearing, compact bool, trigger int, instructions string) []AnthropicEdit {
	var edits []AnthropicEdit
	if clearing {
		edits = append(edits,
			AnthropicEdit{Type: AnthropicEditClearThinking, Keep: &AnthropicAmount{"thinking_turns", AnthropicClearThinkingKeep}},
			AnthropicEdit{Type: AnthropicEditClearToolUses, Trigger: &AnthropicAmount{"input_tokens", AnthropicClearToolUsesTrigger},
				Keep: &AnthropicAmount{"tool_uses", AnthropicClearToolUsesKeep}})
	}
	if compact {
		edits = append(edits, AnthropicEdit{Type: AnthropicEditCompact,
			Trigger:              &AnthropicAmount{"input_tokens", max(AnthropicCompactTriggerFloor, trigger)},
			PauseAfterCompaction: true, Instructions: instructions})
	}
	return edits
}

// anthropicIteration is one entry of usage.iterations, in Anthropic's
// names or this protocol's camelCase ones.
type anthropicIteration struct {
	Type           string `json:"type"`
	Input          *int   `json:"input_tokens"`
	Output         *int   `json:"output_tokens"`
	CacheRead      *int   `json:"cache_read_input_tokens"`
	CacheCreate    *int   `json:"cache_creation_input_tokens"`
	InputC         *int   `json:"inputTokens"`
	OutputC        *int   `json:"outputTokens"`
	CacheReadC     *int   `json:"cacheReadTokens"`
	CacheCreationC *int   `json:"cacheCreationTokens"`
}

func (it *anthropicIteration) usage() history.Usage {
	return history.Usage{
		InputTokens:         firstInt(it.Input, it.InputC),
		OutputTokens:        firstInt(it.Output, it.OutputC),
		CacheReadTokens:     firstInt(it.CacheRead, it.CacheReadC),
		CacheCreationTokens: firstInt(it.CacheCreate, it.CacheCreationC),
	}
}

func firstInt(ps ...*int) int {
	for _, p := range ps {
		if p != nil {
			return *p
		}
	}
	return 0
}

// anthropicBilled are the iteration types summed for billing.
var anthropicBilled = map[string]bool{"message": true, "fallback_message": true, "advisor_message": true, "compaction": true}

// anthropicSampled are the iterations that produced the answer: the last of
// them is the conversation's size after the response.
var anthropicSampled = map[string]bool{"message": true, "fallback_message": true}

// AnthropicIterations reads the usage.iterations of an Anthropic answer.
// billed sums the message, fallback_message, advisor_message and compaction
// iterations (what the request cost; counts are exclusive of cache, as
// Anthropic reports them). context is the last message (or
// fallback_message) iteration alone: the size of the conversation the model
// saw when it answered, which is what pressure and the window compare with.
// A compaction iteration read the whole history before it was compacted and
// says nothing about the context after it. ok is false when no iteration is
// recognized; the top-level numbers apply then. When only compaction or
// advisor iterations are present, context is the last recognized one.
func AnthropicIterations(its []json.RawMessage) (billed, context history.Usage, ok bool) {
	haveSampled := false
	for _, raw := range its {
		var it anthropicIteration
		if json.Unmarshal(raw, &it) != nil || !anthropicBilled[it.Type] {
			continue
		}
		ok = true
		u := it.usage()
		billed.InputTokens += u.InputTokens
		billed.OutputTokens += u.OutputTokens
		billed.CacheReadTokens += u.CacheReadTokens
		billed.CacheCreationTokens += u.CacheCreationTokens
		if anthropicSampled[it.Type] {
			context, haveSampled = u, true
		} else if !haveSampled {
			context = u
		}
	}
	return billed, context, ok
}
