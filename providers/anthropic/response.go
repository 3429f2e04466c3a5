package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
)

// messageResponse is a Messages API response.
type messageResponse struct {
	ID         string            `json:"id"`
	Type       string            `json:"type"`
	Role       string            `json:"role"`
	Model      string            `json:"model"`
	Content    []json.RawMessage `json:"content"`
	StopReason string            `json:"stop_reason"`
	Usage      json.RawMessage   `json:"usage"`
}

// usage is the top-level usage object.
type usage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	CacheCreation            struct {
		Ephemeral1h int `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"`
	Iterations []json.RawMessage `json:"iterations"`
}

// Usage converts an Anthropic usage object: the billed sum over the
// message, fallback_message, advisor_message and compaction iterations when
// any is present (see [providers.AnthropicIterations]), else the top-level
// numbers. InputTokens includes cache reads and cache writes. The raw
// iterations are kept: the context size after the response is the last
// message iteration's, which a reader of the usage takes from them.
func Usage(raw json.RawMessage) (history.Usage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return history.Usage{}, nil
	}
	var top usage
	if err := json.Unmarshal(raw, &top); err != nil {
		return history.Usage{}, fmt.Errorf("usage: %w", err)
	}
	for _, it := range top.Iterations {
		if !json.Valid(it) {
			return history.Usage{}, fmt.Errorf("usage iteration: invalid JSON")
		}
	}
	sum := history.Usage{InputTokens: top.InputTokens, OutputTokens: top.OutputTokens,
		CacheReadTokens: top.CacheReadInputTokens, CacheCreationTokens: top.CacheCreationInputTokens}
	if billed, _, ok := providers.AnthropicIterations(top.Iterations); ok {
		sum = billed
	}
	out := history.Usage{
		InputTokens:         sum.InputTokens + sum.CacheReadTokens + sum.CacheCreationTokens,
		OutputTokens:        sum.OutputTokens,
		CacheReadTokens:     sum.CacheReadTokens,
		CacheCreationTokens: sum.CacheCreationTokens,
		// The 1-hour part is reported for the request as a whole.
		CacheCreation1hTokens: min(top.CacheCreation.Ephemeral1h, sum.CacheCreationTokens),
	}
	for _, it := range top.Iterations {
		out.Iterations = append(out.Iterations, providers.CompactJSON(it))
	}
	return out, nil
}

// parseResponse folds the content blocks into the assistant message.
func parseResponse(res *messageResponse) (*providers.Response, error) {
	msg := history.Message{Role: history.Assistant}
	var texts, thoughts []string
	var compaction json.RawMessage
	for _, raw := range res.Content {
		var b struct {
			Type     string           `json:"type"`
			Text     string           `json:"text"`
			Thinking string           `json:"thinking"`
			ID       string           `json:"id"`
			Name     string           `json:"name"`
			Input    json.RawMessage  `json:"input"`
			Content  *json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, fmt.Errorf("content block: %w", err)
		}
		whole := providers.CompactJSON(raw)
		switch b.Type {
		case "text":
			texts = append(texts, b.Text)
		case "tool_use":
			args := "{}"
			if len(b.Input) > 0 && string(b.Input) != "null" {
				args = string(providers.CompactJSON(b.Input))
			}
			msg.ToolCalls = append(msg.ToolCalls, history.ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		case "compaction":
			if b.Content == nil || string(*b.Content) == "null" {
				continue // failed compaction: nothing to replay
			}
			compaction = whole
		case "thinking":
			if b.Thinking != "" {
				thoughts = append(thoughts, b.Thinking)
			}
			msg.ReasoningDetails = append(msg.ReasoningDetails, whole)
		default:
			msg.ReasoningDetails = append(msg.ReasoningDetails, whole)
		}
	}
	if compaction != nil {
		msg.ReasoningDetails = append([]json.RawMessage{compaction}, msg.ReasoningDetails...)
	}
	msg.Content = history.Text(strings.Join(texts, ""))
	msg.Reasoning = strings.Join(thoughts, "\n\n")
	u, err := Usage(res.Usage)
	if err != nil {
		return nil, err
	}
	return &providers.Response{Message: msg, Usage: u, StopReason: res.StopReason, Compaction: compaction}, nil
}
