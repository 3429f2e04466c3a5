package chatcompat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/proxywire"
)

// This file converts between a chat completions request as an agent sends
// it and history, for a proxy: one chat message is one history message; an
// assistant message is read exactly as an answer is (respMessage.toHistory),
// and a projection is encoded back with the original bytes of every message
// that did not change.

// DecodeChat decodes a chat completions request body for a proxy. cache,
// when not nil, keeps decoded messages across requests.
func DecodeChat(body []byte, cache *proxywire.DecodeCache) (*proxywire.WireRequest, error) {
	members, array, elems, err := proxywire.Members(body, "messages")
	if err != nil {
		return nil, err
	}
	var top struct {
		Model  string
		Stream bool
		Tools  []json.RawMessage
	}
	if err := cache.DecodeMembers(members, map[string]any{"model": &top.Model, "stream": &top.Stream, "tools": &top.Tools}); err != nil {
		return nil, fmt.Errorf("chat request: %w", err)
	}
	if array == (proxywire.Span{}) {
		return nil, errors.New("chat request: messages: must be an array")
	}
	items := make([]json.RawMessage, len(elems))
	msgs := make([]history.Message, 0, len(elems))
	names := map[string]string{}
	var system []string
	for i, sp := range elems {
		items[i] = json.RawMessage(body[sp.Start:sp.End])
		var m history.Message
		if v, ok := cache.Get("chat", items[i]); ok {
			m = v.(history.Message)
		} else {
			if m, err = decodeChatMessage(items[i]); err != nil {
				return nil, fmt.Errorf("messages[%d]: %w", i, err)
			}
			one := []history.Message{m}
			cache.Estimate(one)
			m = one[0]
			cache.Put("chat", bytes.Clone(items[i]), m)
		}
		switch m.Role {
		case history.Assistant:
			for _, tc := range m.ToolCalls {
				names[tc.ID] = tc.Name
			}
		case history.System:
			system = append(system, m.Text())
		case history.Tool:
			m.ToolName = names[m.ToolCallID]
		}
		msgs = append(msgs, m)
	}
	r := proxywire.NewWireRequest(body, array, elems, func(proj []history.Message, slots []proxywire.Slot) ([]json.RawMessage, error) {
		return encodeChat(items, proj, slots), nil
	})
	r.Model, r.Stream, r.Tools, r.Messages = top.Model, top.Stream, top.Tools, msgs
	r.System = strings.Join(system, "\n")
	return r, nil
}

// decodeChatMessage decodes one chat message.
func decodeChatMessage(raw json.RawMessage) (history.Message, error) {
	var rm respMessage
	var extra struct {
		ToolCallID string `json:"tool_call_id"`
	}
	if json.Unmarshal(raw, &rm) != nil || json.Unmarshal(raw, &extra) != nil {
		return history.Message{}, errors.New("must be an object")
	}
	switch rm.Role {
	case "assistant":
		return rm.toHistory()
	case "system", "developer", "user":
		role := history.User
		if rm.Role != "user" {
			role = history.System
		}
		return history.Message{Role: role, Content: userContent(rm.Content)}, nil
	case "tool":
		text, err := rm.text()
		if err != nil {
			return history.Message{}, err
		}
		return history.NewToolResult(extra.ToolCallID, "", text), nil
	}
	return history.Message{}, fmt.Errorf("role: unsupported %q", rm.Role)
}

// userContent decodes user or system content: a string, or parts.
func userContent(raw json.RawMessage) history.Content {
	var s string
	if len(raw) == 0 || string(raw) == "null" {
		return history.Text("")
	}
	if json.Unmarshal(raw, &s) == nil {
		return history.Text(s)
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) != nil {
		return history.Text(string(raw))
	}
	out := make([]history.Part, 0, len(parts))
	for _, p := range parts {
		var t textPart
		if json.Unmarshal(p, &t) == nil && t.Type == "text" {
			out = append(out, history.TextPart(t.Text))
			continue
		}
		out = append(out, history.Part{Type: t.Type, Raw: providers.CompactJSON(p)})
	}
	return history.Parts(out...)
}

// encodeChat builds the messages of a projection.
func encodeChat(items []json.RawMessage, proj []history.Message, slots []proxywire.Slot) []json.RawMessage {
	var c Client
	out := make([]json.RawMessage, 0, len(proj))
	for i := range proj {
		p := &proj[i]
		sl := slots[i]
		switch {
		case sl.Src >= 0 && sl.Same:
			out = append(out, items[sl.Src])
		case sl.Src >= 0 && (p.Role == history.Tool || p.Role == history.Assistant):
			out = append(out, patchChat(items[sl.Src], p))
		default:
			for _, cm := range c.messages([]history.Message{*p}) {
				if b, err := json.Marshal(cm); err == nil {
					out = append(out, b)
				}
			}
		}
	}
	return out
}

// patchChat returns a changed tool result with its new content, or a
// changed assistant message with its calls' new arguments.
func patchChat(raw json.RawMessage, p *history.Message) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return raw
	}
	if p.Role == history.Tool {
		content, _ := json.Marshal(p.Text())
		return proxywire.SetMember(raw, "content", content)
	} else {
		var calls []map[string]json.RawMessage
		_ = json.Unmarshal(m["tool_calls"], &calls)
		args := map[string]string{}
		for _, tc := range p.ToolCalls {
			args[tc.ID] = tc.Arguments
		}
		for _, call := range calls {
			var id string
			_ = json.Unmarshal(call["id"], &id)
			var fn map[string]json.RawMessage
			if a, ok := args[id]; ok && json.Unmarshal(call["function"], &fn) == nil && fn != nil {
				fn["arguments"], _ = json.Marshal(a)
				call["function"], _ = json.Marshal(fn)
			}
		}
		m["tool_calls"], _ = json.Marshal(calls)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return b
}

// ChatRecorder records the assistant message of a chat completions stream
// passed through a proxy.
func ChatRecorder() *proxywire.SSERecorder {
	var st chatStream
	done, failed := false, false
	on := func(_, data string) error {
		if strings.TrimSpace(data) == "[DONE]" {
			done = true
			return io.EOF
		}
		var chunk completion
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			return fmt.Errorf("stream chunk: %w", err)
		}
		if len(chunk.Error) > 0 && string(chunk.Error) != "null" {
			failed = true
			return io.EOF
		}
		st.add(&chunk)
		return nil
	}
	end := func() (history.Response, error) {
		if failed {
			return history.Response{}, errors.New("error chunk in the stream")
		}
		if !done && st.finish == "" {
			return history.Response{}, proxywire.ErrIncomplete
		}
		res := &completion{Usage: st.usage, Choices: []choice{{Message: st.message(), FinishReason: st.finish}}}
		return recordedChat(res)
	}
	return proxywire.NewSSERecorder(on, end)
}

// RecordChat reads a non-streamed chat completions response body.
func RecordChat(body []byte) (history.Response, error) {
	var res completion
	if err := json.Unmarshal(body, &res); err != nil {
		return history.Response{}, fmt.Errorf("chat response: %w", err)
	}
	if len(res.Choices) == 0 {
		return history.Response{}, errors.New("chat response: no choices")
	}
	return recordedChat(&res)
}

func recordedChat(res *completion) (history.Response, error) {
	m, err := res.Choices[0].Message.toHistory()
	if err != nil {
		return history.Response{}, err
	}
	u := res.usage()
	return history.Response{Message: m, Usage: &u, StopReason: res.Choices[0].FinishReason}, nil
}
