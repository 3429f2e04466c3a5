package chatcompat

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/sse"
)

// completion is a chat completion (also the accumulated stream).
type completion struct {
	ID      string          `json:"id"`
	Choices []choice        `json:"choices"`
	Usage   *chatUsage      `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type choice struct {
	Index        int         `json:"index"`
	Message      respMessage `json:"message"`
	Delta        respMessage `json:"delta"`
	FinishReason string      `json:"finish_reason"`
}

type respMessage struct {
	Role             string            `json:"role"`
	Content          json.RawMessage   `json:"content"`
	ReasoningContent string            `json:"reasoning_content"`
	Reasoning        string            `json:"reasoning"`
	ReasoningDetails []json.RawMessage `json:"reasoning_details"`
	ToolCalls        []toolCall        `json:"tool_calls"`
}

type chatUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	PromptCacheHitTokens    int `json:"prompt_cache_hit_tokens"` // DeepSeek
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func (r *completion) usage() history.Usage {
	if r.Usage == nil {
		return history.Usage{}
	}
	u := history.Usage{InputTokens: r.Usage.PromptTokens, OutputTokens: r.Usage.CompletionTokens,
		CacheReadTokens: r.Usage.PromptCacheHitTokens}
	if d := r.Usage.PromptTokensDetails; d != nil && d.CachedTokens > 0 {
		u.CacheReadTokens = d.CachedTokens
	}
	if d := r.Usage.CompletionTokensDetails; d != nil {
		u.ReasoningTokens = d.ReasoningTokens
	}
	return u
}

// text returns the message content: a string, or the text of a part list.
func (m *respMessage) text() (string, error) {
	if len(m.Content) == 0 || string(m.Content) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(m.Content, &parts); err != nil {
		return "", fmt.Errorf("message content: %w", err)
	}
	var sb strings.Builder
	for _, p := range parts {
		sb.WriteString(p.Text)
	}
	return sb.String(), nil
}

// toHistory converts the answer to an assistant message.
func (m *respMessage) toHistory() (history.Message, error) {
	text, err := m.text()
	if err != nil {
		return history.Message{}, err
	}
	reasoning := m.ReasoningContent
	if reasoning == "" {
		reasoning = m.Reasoning
	}
	if reasoning == "" {
		if rest, ok := strings.CutPrefix(strings.TrimLeft(text, " \n"), "<think>"); ok {
			if thought, after, ok := strings.Cut(rest, "</think>"); ok {
				reasoning, text = strings.TrimSpace(thought), strings.TrimLeft(after, "\n")
			}
		}
	}
	msg := history.Message{Role: history.Assistant, Content: history.Text(text), Reasoning: reasoning}
	for _, d := range m.ReasoningDetails {
		msg.ReasoningDetails = append(msg.ReasoningDetails, providers.CompactJSON(d))
	}
	for _, tc := range m.ToolCalls {
		call := history.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}
		if len(tc.ExtraContent) > 0 {
			var ec struct {
				Google struct {
					ThoughtSignature string `json:"thought_signature"`
				} `json:"google"`
			}
			if json.Unmarshal(tc.ExtraContent, &ec) == nil {
				call.ThoughtSignature = ec.Google.ThoughtSignature
			}
		}
		msg.ToolCalls = append(msg.ToolCalls, call)
	}
	return msg, nil
}

// chatStream accumulates the chunks of a chat completions event stream:
// content, reasoning and tool call deltas of choice 0 (a tool call's
// extra_content, Gemini's thought signature, included), the finish reason,
// and the usage of the last chunk that has one. The client and the proxy's
// recorder share it.
type chatStream struct {
	content, reasoning, reasoningAlt strings.Builder
	details                          []json.RawMessage
	calls                            map[int]*toolCall
	usage                            *chatUsage
	finish                           string
}

// add folds one chunk in.
func (s *chatStream) add(chunk *completion) {
	if chunk.Usage != nil {
		s.usage = chunk.Usage
	}
	for _, ch := range chunk.Choices {
		if ch.Index != 0 {
			continue
		}
		d := ch.Delta
		if t, err := d.text(); err == nil {
			s.content.WriteString(t)
		}
		s.reasoning.WriteString(d.ReasoningContent)
		s.reasoningAlt.WriteString(d.Reasoning)
		s.details = append(s.details, d.ReasoningDetails...)
		for i, tc := range d.ToolCalls {
			idx := i
			if tc.Index != nil {
				idx = *tc.Index
			}
			if s.calls == nil {
				s.calls = map[int]*toolCall{}
			}
			cur := s.calls[idx]
			if cur == nil {
				cur = &toolCall{}
				s.calls[idx] = cur
			}
			if tc.ID != "" {
				cur.ID = tc.ID
			}
			cur.Function.Name += tc.Function.Name
			cur.Function.Arguments += tc.Function.Arguments
			if len(tc.ExtraContent) > 0 {
				cur.ExtraContent = tc.ExtraContent
			}
		}
		if ch.FinishReason != "" {
			s.finish = ch.FinishReason
		}
	}
}

// message is the assistant message accumulated so far, its tool calls in
// index order.
func (s *chatStream) message() respMessage {
	msg := respMessage{Role: "assistant", ReasoningContent: s.reasoning.String(), Reasoning: s.reasoningAlt.String(), ReasoningDetails: s.details}
	msg.Content, _ = json.Marshal(s.content.String())
	idx := make([]int, 0, len(s.calls))
	for i := range s.calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		msg.ToolCalls = append(msg.ToolCalls, *s.calls[i])
	}
	return msg
}

// readStream accumulates a chat completions event stream (see chatStream).
// An error chunk is classified like an HTTP error. The stream ends at
// [DONE]; a stream cut before [DONE] and before any finish reason is a
// KindNetwork error.
func (c *Client) readStream(ctx context.Context, model string, resp *http.Response) (*completion, error) {
	var st chatStream
	done := false
	var streamErr error
	err := sse.Read(resp.Body, func(_, data string) error {
		if strings.TrimSpace(data) == "[DONE]" {
			done = true
			return io.EOF
		}
		var chunk completion
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			return c.caller.Malformed(model, err)
		}
		if len(chunk.Error) > 0 && string(chunk.Error) != "null" {
			streamErr = c.caller.Classify(model, 0, []byte(data), nil)
			return io.EOF
		}
		st.add(&chunk)
		return nil
	})
	if err != nil {
		return nil, c.caller.StreamError(ctx, model, err)
	}
	if streamErr != nil {
		return nil, streamErr
	}
	if !done && st.finish == "" {
		return nil, c.caller.Fail(model, providers.KindNetwork, "stream ended before [DONE]")
	}
	res := &completion{Usage: st.usage}
	msg := st.message()
	if st.content.Len() == 0 && len(msg.ToolCalls) == 0 && st.finish == "" && msg.ReasoningContent == "" {
		return res, nil // no choice at all: reported as empty
	}
	res.Choices = []choice{{Message: msg, FinishReason: st.finish}}
	return res, nil
}
