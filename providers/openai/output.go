package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
)

// CompactedCallID is the call id given to a compacted function call or
// output item that has none.
const CompactedCallID = "tool_call_compacted"

// item is the union of the output item fields this package reads.
type item struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Input     string          `json:"input"`
	Output    json.RawMessage `json:"output"`
	Phase     string          `json:"phase"`
	Summary   []struct {
		Text string `json:"text"`
	} `json:"summary"`
}

type part struct {
	Type    string `json:"type"`
	Text    string `json:"text"`
	Refusal string `json:"refusal"`
}

func decodeItem(raw json.RawMessage) (item, error) {
	var it item
	if err := json.Unmarshal(raw, &it); err != nil {
		return it, fmt.Errorf("output item: %w", err)
	}
	return it, nil
}

// responseMessage folds the output of a generation into one assistant
// message.
func responseMessage(output []json.RawMessage) (history.Message, error) {
	msg := history.Message{Role: history.Assistant}
	var texts, reasoning []string
	for _, raw := range output {
		it, err := decodeItem(raw)
		if err != nil {
			return msg, err
		}
		switch it.Type {
		case "message":
			c, err := content(it.Content)
			if err != nil {
				return msg, err
			}
			if t := c.Text(); t != "" {
				texts = append(texts, t)
			}
			setPhase(&msg, it.Phase)
		case "function_call", "custom_tool_call":
			msg.ToolCalls = append(msg.ToolCalls, toolCall(it))
		case "reasoning":
			for _, s := range it.Summary {
				if s.Text != "" {
					reasoning = append(reasoning, s.Text)
				}
			}
			if c, err := content(it.Content); err == nil && c.Text() != "" {
				reasoning = append(reasoning, c.Text())
			}
			msg.ReasoningDetails = append(msg.ReasoningDetails, providers.CompactJSON(raw))
		default:
			msg.ReasoningDetails = append(msg.ReasoningDetails, providers.CompactJSON(raw))
		}
	}
	msg.Content = history.Text(strings.Join(texts, "\n\n"))
	msg.Reasoning = strings.Join(reasoning, "\n\n")
	return msg, nil
}

// compactedMessages turns compaction output items into history messages.
// input supplies tool names for outputs whose call is not in the output.
func compactedMessages(output []json.RawMessage, input []history.Message) ([]history.Message, error) {
	names := map[string]string{}
	for i := range input {
		for _, tc := range input[i].ToolCalls {
			names[tc.ID] = tc.Name
		}
	}
	var out []history.Message
	open := -1 // index of an assistant message that may take further calls
	for _, raw := range output {
		it, err := decodeItem(raw)
		if err != nil {
			return nil, err
		}
		switch it.Type {
		case "message":
			c, err := content(it.Content)
			if err != nil {
				return nil, err
			}
			role := history.Role(it.Role)
			switch it.Role {
			case "developer":
				role = history.System
			case "":
				role = history.Assistant
			}
			if !role.Valid() || role == history.Tool {
				role = history.User
			}
			out = append(out, history.Message{Role: role, Content: c})
			if role == history.Assistant {
				setPhase(&out[len(out)-1], it.Phase)
			}
			open = -1
			if role == history.Assistant {
				open = len(out) - 1
			}
		case "function_call", "custom_tool_call", "tool_call":
			tc := toolCall(it)
			names[tc.ID] = tc.Name
			if open >= 0 {
				out[open].ToolCalls = append(out[open].ToolCalls, tc)
				continue
			}
			out = append(out, history.Message{Role: history.Assistant, ToolCalls: []history.ToolCall{tc}})
			open = len(out) - 1
		case "function_call_output", "custom_tool_call_output", "tool_call_output":
			id := firstNonEmpty(it.CallID, it.ID, CompactedCallID)
			c, err := outputContent(it.Output)
			if err != nil {
				return nil, err
			}
			out = append(out, history.Message{Role: history.Tool, ToolCallID: id, ToolName: names[id], Content: c})
			open = -1
		default:
			out = append(out, history.Message{Role: history.Assistant, ReasoningDetails: []json.RawMessage{providers.CompactJSON(raw)}})
			open = -1
		}
	}
	return out, nil
}

// setPhase records an output message's phase on m (the last one wins when
// several message items fold into one message), for the next request.
func setPhase(m *history.Message, phase string) {
	if phase == "" {
		return
	}
	b, err := json.Marshal(phase)
	if err != nil {
		return
	}
	if m.Extra == nil {
		m.Extra = map[string]json.RawMessage{}
	}
	m.Extra[PhaseKey] = b
}

func toolCall(it item) history.ToolCall {
	tc := history.ToolCall{ID: firstNonEmpty(it.CallID, it.ID, CompactedCallID), Name: it.Name}
	if it.Type == "custom_tool_call" {
		tc.Input = it.Input
		return tc
	}
	var s string
	if len(it.Arguments) > 0 && json.Unmarshal(it.Arguments, &s) == nil {
		tc.Arguments = s
	} else if len(it.Arguments) > 0 && string(it.Arguments) != "null" {
		tc.Arguments = string(providers.CompactJSON(it.Arguments))
	}
	return tc
}

// content decodes a message item's content: a string, or a list of parts of
// which text parts (input_text, output_text, text, refusal) become text and
// every other part is kept verbatim.
func content(raw json.RawMessage) (history.Content, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return history.Text(""), nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return history.Text(s), nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(raw, &raws); err != nil {
		return history.Content{}, fmt.Errorf("message content: %w", err)
	}
	parts := make([]history.Part, 0, len(raws))
	plain := true
	for _, r := range raws {
		var p part
		if err := json.Unmarshal(r, &p); err != nil {
			return history.Content{}, fmt.Errorf("content part: %w", err)
		}
		switch p.Type {
		case "input_text", "output_text", "text", "summary_text", "reasoning_text":
			parts = append(parts, history.TextPart(p.Text))
		case "refusal":
			parts = append(parts, history.TextPart(p.Refusal))
		default:
			plain = false
			parts = append(parts, history.Part{Type: p.Type, Raw: providers.CompactJSON(r)})
		}
	}
	if plain && len(parts) == 1 {
		return history.Text(parts[0].Text), nil
	}
	return history.Parts(parts...), nil
}

// outputContent decodes a function_call_output's output: a string, or a list
// of parts.
func outputContent(raw json.RawMessage) (history.Content, error) {
	c, err := content(raw)
	if err != nil {
		return history.Content{}, fmt.Errorf("call output: %w", err)
	}
	return c, nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
