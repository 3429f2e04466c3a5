package history

import "encoding/json"

// UnmarshalJSON decodes a usage in this protocol's camelCase shape, or as a
// provider reports it: Anthropic's input_tokens, output_tokens,
// cache_read_input_tokens and cache_creation_input_tokens; OpenAI's
// input_tokens (or prompt_tokens), output_tokens (or completion_tokens),
// input_tokens_details.cached_tokens (or prompt_tokens_details.cached_tokens)
// and cache_write_tokens (top level or in the details). A camelCase field
// wins over a provider's name for the same count.
func (u *Usage) UnmarshalJSON(data []byte) error {
	type details struct {
		Cached     *int `json:"cached_tokens"`
		CacheWrite *int `json:"cache_write_tokens"`
	}
	var w struct {
		InputTokens         *int              `json:"inputTokens"`
		OutputTokens        *int              `json:"outputTokens"`
		CacheReadTokens     *int              `json:"cacheReadTokens"`
		CacheCreationTokens *int              `json:"cacheCreationTokens"`
		Iterations          []json.RawMessage `json:"iterations"`

		Input         *int     `json:"input_tokens"`
		Output        *int     `json:"output_tokens"`
		Prompt        *int     `json:"prompt_tokens"`
		Completion    *int     `json:"completion_tokens"`
		CacheRead     *int     `json:"cache_read_input_tokens"`
		CacheCreation *int     `json:"cache_creation_input_tokens"`
		CacheWrite    *int     `json:"cache_write_tokens"`
		InputDetails  *details `json:"input_tokens_details"`
		PromptDetails *details `json:"prompt_tokens_details"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	d := w.InputDetails
	if d == nil {
		d = w.PromptDetails
	}
	if d == nil {
		d = &details{}
	}
	*u = Usage{
		InputTokens:         firstOf(w.InputTokens, w.Input, w.Prompt),
		OutputTokens:        firstOf(w.OutputTokens, w.Output, w.Completion),
		CacheReadTokens:     firstOf(w.CacheReadTokens, w.CacheRead, d.Cached),
		CacheCreationTokens: firstOf(w.CacheCreationTokens, w.CacheCreation, w.CacheWrite, d.CacheWrite),
		Iterations:          w.Iterations,
	}
	return nil
}

func firstOf(ps ...*int) int {
	for _, p := range ps {
		if p != nil {
			return *p
		}
	}
	return 0
}
