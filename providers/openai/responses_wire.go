package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/proxywire"
)

// This file converts between a Responses API request as an agent sends it
// (stateless: the whole conversation in input) and history, for a proxy.
// A run of assistant-side items (reasoning, assistant message, function and
// custom tool calls) is one assistant message, folded exactly as a
// response's output is (responseMessage), so that the message an agent
// replays equals the one recorded from the stream. Items of other types are
// kept as system messages carrying the item verbatim, in place.

// itemKey is the Extra field holding an item of a type this file does not
// convert.
const itemKey = "responsesItem"

// DecodeResponses decodes a Responses API request body for a proxy.
// cache, when not nil, keeps decoded items across requests.
func DecodeResponses(body []byte, cache *proxywire.DecodeCache) (*proxywire.WireRequest, error) {
	members, array, elems, err := proxywire.Members(body, "input")
	if err != nil {
		return nil, err
	}
	var top struct {
		Model, PreviousResponseID, PromptCacheKey string
		Stream                                    bool
		Instructions, Conversation                json.RawMessage
		Tools                                     []json.RawMessage
	}
	if err := cache.DecodeMembers(members, map[string]any{
		"model": &top.Model, "stream": &top.Stream, "instructions": &top.Instructions, "tools": &top.Tools,
		"previous_response_id": &top.PreviousResponseID, "conversation": &top.Conversation,
		"prompt_cache_key": &top.PromptCacheKey,
	}); err != nil {
		return nil, fmt.Errorf("responses request: %w", err)
	}
	stateful := top.PreviousResponseID != "" || (len(top.Conversation) > 0 && string(top.Conversation) != "null")
	if array == (proxywire.Span{}) && !stateful {
		return nil, errors.New("responses request: input: not an item list")
	}
	items := make([]json.RawMessage, 0, len(elems))
	for _, sp := range elems {
		items = append(items, json.RawMessage(body[sp.Start:sp.End]))
	}
	msgs, origins, err := itemsToHistory(items, cache)
	if err != nil {
		return nil, err
	}
	r := proxywire.NewWireRequest(body, array, elems, func(proj []history.Message, slots []proxywire.Slot) ([]json.RawMessage, error) {
		return encodeItems(items, msgs, origins, proj, slots), nil
	})
	r.Model, r.Stream, r.Tools, r.Messages, r.Stateful = top.Model, top.Stream, top.Tools, msgs, stateful
	r.SessionHint = top.PromptCacheKey
	var s string
	if json.Unmarshal(top.Instructions, &s) == nil {
		r.System = s
	}
	return r, nil
}

// itemsToHistory converts input items to history messages and, for each
// message, the indices of the items it stands for.
func itemsToHistory(items []json.RawMessage, cache *proxywire.DecodeCache) ([]history.Message, [][]int, error) {
	var msgs []history.Message
	var origins [][]int
	var run []int // pending assistant-side items
	flush := func() error {
		if run == nil {
			return nil
		}
		out := make([]json.RawMessage, len(run))
		for k, j := range run {
			out[k] = items[j]
		}
		m, err := responseMessage(out)
		if err != nil {
			return err
		}
		msgs = append(msgs, m)
		origins = append(origins, run)
		run = nil
		return nil
	}
	for i, raw := range items {
		it, err := decodeItem(raw)
		if err != nil {
			return nil, nil, fmt.Errorf("input[%d]: %w", i, err)
		}
		if it.Type == "" && it.Role != "" {
			it.Type = "message"
		}
		switch {
		case it.Type == "reasoning", it.Type == "function_call", it.Type == "custom_tool_call",
			it.Type == "message" && it.Role == "assistant":
			run = append(run, i)
			continue
		}
		if err := flush(); err != nil {
			return nil, nil, fmt.Errorf("input[%d]: %w", i, err)
		}
		if v, ok := cache.Get("responses", raw); ok {
			for _, m := range v.([]history.Message) {
				if m.Role == history.Tool && m.ToolName == "" {
					m.ToolName = toolName(msgs, m.ToolCallID)
				}
				msgs = append(msgs, m)
				origins = append(origins, []int{i})
			}
			continue
		}
		switch it.Type {
		case "message", "function_call_output", "custom_tool_call_output":
			one := raw
			var typed struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(raw, &typed) == nil && typed.Type == "" {
				// An item without a type is a message (EasyInputMessage).
				var m map[string]json.RawMessage
				_ = json.Unmarshal(raw, &m)
				m["type"] = mustJSON("message")
				one = mustJSON(m)
			}
			conv, err := compactedMessages([]json.RawMessage{one}, msgs)
			if err != nil {
				return nil, nil, fmt.Errorf("input[%d]: %w", i, err)
			}
			cache.Estimate(conv)
			cache.Put("responses", bytes.Clone(raw), conv)
			for _, m := range conv {
				msgs = append(msgs, m)
				origins = append(origins, []int{i})
			}
			continue
		}
		msgs = append(msgs, history.Message{Role: history.System, Extra: map[string]json.RawMessage{itemKey: providers.CompactJSON(raw)}})
		origins = append(origins, []int{i})
	}
	if err := flush(); err != nil {
		return nil, nil, err
	}
	return msgs, origins, nil
}

// toolName is the name of call id among msgs' calls.
func toolName(msgs []history.Message, id string) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, tc := range msgs[i].ToolCalls {
			if tc.ID == id {
				return tc.Name
			}
		}
	}
	return ""
}

// encodeItems builds the input items of a projection.
func encodeItems(items []json.RawMessage, req []history.Message, origins [][]int, proj []history.Message, slots []proxywire.Slot) []json.RawMessage {
	var out []json.RawMessage
	for i := range proj {
		p := &proj[i]
		sl := slots[i]
		if sl.Src < 0 {
			if raw, ok := p.Extra[itemKey]; ok {
				out = append(out, raw)
				continue
			}
			fresh, _ := toInput([]history.Message{*p}, false)
			out = append(out, fresh...)
			continue
		}
		for _, j := range origins[sl.Src] {
			if sl.Same {
				out = append(out, items[j])
				continue
			}
			out = append(out, patchItem(items[j], p))
		}
	}
	return out
}

// patchItem returns an input item of a changed message: a call output with
// the message's new text, a call with its new arguments or input.
func patchItem(raw json.RawMessage, p *history.Message) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return raw
	}
	var typ, callID string
	_ = json.Unmarshal(m["type"], &typ)
	_ = json.Unmarshal(m["call_id"], &callID)
	switch typ {
	case "function_call_output", "custom_tool_call_output":
		if p.Role != history.Tool {
			return raw
		}
		return proxywire.SetMember(raw, "output", mustJSON(p.Text()))
	case "function_call", "custom_tool_call":
		for _, tc := range p.ToolCalls {
			if tc.ID != callID {
				continue
			}
			if typ == "custom_tool_call" {
				return proxywire.SetMember(raw, "input", mustJSON(tc.Input))
			}
			return proxywire.SetMember(raw, "arguments", mustJSON(tc.Arguments))
		}
	}
	return raw
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// ResponsesRecorder records the assistant message of a Responses API
// stream passed through a proxy.
func ResponsesRecorder() *proxywire.SSERecorder {
	var final *response
	items := map[int]json.RawMessage{}
	failed := false
	on := func(event, data string) error {
		if strings.TrimSpace(data) == "[DONE]" {
			return io.EOF
		}
		var ev streamEvent
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return fmt.Errorf("stream event: %w", err)
		}
		if ev.Type == "" {
			ev.Type = event
		}
		switch ev.Type {
		case "response.completed", "response.done":
			final = ev.Response
			return io.EOF
		case "response.incomplete", "response.failed", "error":
			failed = true
			return io.EOF
		case "response.output_item.done":
			if len(ev.Item) > 0 {
				items[ev.OutputIndex] = ev.Item
			}
		}
		return nil
	}
	finish := func() (history.Response, error) {
		if failed {
			return history.Response{}, errors.New("the response failed")
		}
		if final == nil {
			return history.Response{}, proxywire.ErrIncomplete
		}
		if len(final.Output) == 0 {
			idx := make([]int, 0, len(items))
			for i := range items {
				idx = append(idx, i)
			}
			sort.Ints(idx)
			for _, i := range idx {
				final.Output = append(final.Output, items[i])
			}
		}
		return recordedResponse(final)
	}
	return proxywire.NewSSERecorder(on, finish)
}

// RecordResponse reads a non-streamed Responses API response body.
func RecordResponse(body []byte) (history.Response, error) {
	var res response
	if err := json.Unmarshal(body, &res); err != nil {
		return history.Response{}, fmt.Errorf("responses response: %w", err)
	}
	return recordedResponse(&res)
}

func recordedResponse(res *response) (history.Response, error) {
	msg, err := responseMessage(res.Output)
	if err != nil {
		return history.Response{}, err
	}
	u := res.usage()
	return history.Response{Message: msg, Usage: &u, StopReason: res.Status}, nil
}
