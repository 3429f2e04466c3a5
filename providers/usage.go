package providers

import (
	"encoding/json"

	"github.com/vtcode/vtcode-ls/history"
)

// ReportedUsage is a response's usage as a client passes it on: in this
// protocol's camelCase shape (inputTokens, outputTokens, cacheReadTokens,
// cacheCreationTokens, iterations), or as the provider reported it:
// Anthropic's input_tokens, output_tokens, cache_read_input_tokens and
// cache_creation_input_tokens; OpenAI's input_tokens (or prompt_tokens),
// output_tokens (or completion_tokens), input_tokens_details.cached_tokens
// (or prompt_tokens_details.cached_tokens) and cache_write_tokens (top level
// or in the details). The 1-hour part of the cache writes is
// cacheCreation1hTokens or Anthropic's
// cache_creation.ephemeral_1h_input_tokens; the reasoning part of the output
// reasoningTokens or OpenAI's output_tokens_details.reasoning_tokens (or
// completion_tokens_details.reasoning_tokens). It decodes with
// encoding/json's own rules, so a decoding error names the field.
type ReportedUsage struct {
	InputTokens         *int              `json:"inputTokens,omitempty"`
	OutputTokens        *int              `json:"outputTokens,omitempty"`
	CacheReadTokens     *int              `json:"cacheReadTokens,omitempty"`
	CacheCreationTokens *int              `json:"cacheCreationTokens,omitempty"`
	CacheCreation1h     *int              `json:"cacheCreation1hTokens,omitempty"`
	ReasoningTokens     *int              `json:"reasoningTokens,omitempty"`
	Iterations          []json.RawMessage `json:"iterations,omitempty"`

	Input         *int          `json:"input_tokens,omitempty"`
	Output        *int          `json:"output_tokens,omitempty"`
	Prompt        *int          `json:"prompt_tokens,omitempty"`
	Completion    *int          `json:"completion_tokens,omitempty"`
	CacheRead     *int          `json:"cache_read_input_tokens,omitempty"`
	CacheCreation *int          `json:"cache_creation_input_tokens,omitempty"`
	CacheWrite    *int          `json:"cache_write_tokens,omitempty"`
	InputDetails  *usageDetails `json:"input_tokens_details,omitempty"`
	PromptDetails *usageDetails `json:"prompt_tokens_details,omitempty"`
	// Anthropic's split of the cache writes by lifetime, OpenAI's output details.
	CacheCreationSplit *struct {
		Ephemeral1h *int `json:"ephemeral_1h_input_tokens,omitempty"`
	} `json:"cache_creation,omitempty"`
	OutputDetails     *outputDetails `json:"output_tokens_details,omitempty"`
	CompletionDetails *outputDetails `json:"completion_tokens_details,omitempty"`
}

type usageDetails struct {
	Cached     *int `json:"cached_tokens,omitempty"`
	CacheWrite *int `json:"cache_write_tokens,omitempty"`
}

type outputDetails struct {
	Reasoning *int `json:"reasoning_tokens,omitempty"`
}

// Usage returns the counts in this protocol's shape; a camelCase field wins
// over a provider's name for the same count.
func (r *ReportedUsage) Usage() history.Usage {
	d := r.InputDetails
	if d == nil {
		d = r.PromptDetails
	}
	if d == nil {
		d = &usageDetails{}
	}
	var oneHour, reasoning *int
	if c := r.CacheCreationSplit; c != nil {
		oneHour = c.Ephemeral1h
	}
	for _, o := range []*outputDetails{r.OutputDetails, r.CompletionDetails} {
		if o != nil && reasoning == nil {
			reasoning = o.Reasoning
		}
	}
	return history.Usage{
		InputTokens:           firstCount(r.InputTokens, r.Input, r.Prompt),
		OutputTokens:          firstCount(r.OutputTokens, r.Output, r.Completion),
		CacheReadTokens:       firstCount(r.CacheReadTokens, r.CacheRead, d.Cached),
		CacheCreationTokens:   firstCount(r.CacheCreationTokens, r.CacheCreation, r.CacheWrite, d.CacheWrite),
		CacheCreation1hTokens: firstCount(r.CacheCreation1h, oneHour),
		ReasoningTokens:       firstCount(r.ReasoningTokens, reasoning),
		Iterations:            r.Iterations,
	}
}

func firstCount(ps ...*int) int {
	for _, p := range ps {
		if p != nil {
			return *p
		}
	}
	return 0
}
