package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/proxywire"
)

// This file converts between a Messages API request as an agent sends it
// and history, for a proxy: DecodeMessages reads the request, and the
// WireRequest it returns encodes a projection back, reusing the original
// bytes of every message (and content block) that did not change, so that
// cache_control breakpoints stay where the agent put them.

// origin is where a history message came from: a message of the request and
// the indices of its content blocks (nil for string content).
type origin struct {
	item   int
	blocks []int
}

// wireMessage is one element of a request's messages.
type wireMessage struct {
	raw     json.RawMessage
	role    string
	blocks  []json.RawMessage // nil for string content
	nhist   int               // history messages decoded from it
	isBlock bool
}

// element is one decoded element: the wire message, its history messages
// and, for each, the indices of its blocks. Cached by the element's bytes.
type element struct {
	w      wireMessage
	msgs   []history.Message
	blocks [][]int
}

// DecodeMessages decodes a Messages API request body (also a count_tokens
// body) for a proxy. cache, when not nil, keeps decoded messages across
// requests.
func DecodeMessages(body []byte, cache *proxywire.DecodeCache) (*proxywire.WireRequest, error) {
	members, array, elems, err := proxywire.Members(body, "messages")
	if err != nil {
		return nil, err
	}
	var top struct {
		Model    string
		Stream   bool
		Tools    []json.RawMessage
		Metadata struct {
			UserID string `json:"user_id"`
		}
	}
	if err := cache.DecodeMembers(members, map[string]any{"model": &top.Model, "stream": &top.Stream, "tools": &top.Tools, "metadata": &top.Metadata}); err != nil {
		return nil, fmt.Errorf("messages request: %w", err)
	}
	if array == (proxywire.Span{}) {
		return nil, fmt.Errorf("messages request: messages: must be an array")
	}
	var msgs []history.Message
	var origins []origin
	wire := make([]wireMessage, len(elems))
	names := map[string]string{}
	for i, sp := range elems {
		raw := body[sp.Start:sp.End]
		var el *element
		if v, ok := cache.Get("anthropic", raw); ok {
			el = v.(*element)
		} else {
			if el, err = decodeElement(json.RawMessage(bytes.Clone(raw)), names); err != nil {
				return nil, fmt.Errorf("messages[%d]: %w", i, err)
			}
			cache.Estimate(el.msgs)
			cache.Put("anthropic", el.w.raw, el)
		}
		wire[i] = el.w
		for k := range el.msgs {
			m := el.msgs[k]
			if m.Role == history.Tool && m.ToolName == "" {
				m.ToolName = names[m.ToolCallID]
			}
			for _, tc := range m.ToolCalls {
				names[tc.ID] = tc.Name
			}
			msgs = append(msgs, m)
			origins = append(origins, origin{item: i, blocks: el.blocks[k]})
		}
	}
	r := proxywire.NewWireRequest(body, array, elems, func(proj []history.Message, slots []proxywire.Slot) ([]json.RawMessage, error) {
		return encodeMessages(wire, msgs, origins, proj, slots)
	})
	r.Model, r.Stream, r.Tools, r.Messages = top.Model, top.Stream, top.Tools, msgs
	r.System = proxywire.Member(cache, "anthropic system", members["system"], systemText)
	r.SessionHint = userSession(top.Metadata.UserID)
	return r, nil
}

// decodeElement decodes one element of messages; names maps the call ids
// seen so far to their tool names.
func decodeElement(raw json.RawMessage, names map[string]string) (*element, error) {
	var head struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("must be an object: %w", err)
	}
	el := &element{w: wireMessage{raw: raw, role: head.Role}}
	w := &el.w
	add := func(m history.Message, blocks []int) {
		el.msgs = append(el.msgs, m)
		el.blocks = append(el.blocks, blocks)
	}
	var s string
	if json.Unmarshal(head.Content, &s) == nil {
		role := history.Role(w.role)
		if !role.Valid() || role == history.Tool {
			return nil, fmt.Errorf("role: unsupported %q", w.role)
		}
		add(history.NewText(role, s), nil)
		w.nhist = 1
		return el, nil
	}
	if err := json.Unmarshal(head.Content, &w.blocks); err != nil {
		return nil, fmt.Errorf("content: must be a string or an array of blocks")
	}
	if w.blocks == nil {
		w.blocks = []json.RawMessage{}
	}
	w.isBlock = true
	switch w.role {
	case "assistant":
		m, err := assistantFromBlocks(w.blocks)
		if err != nil {
			return nil, err
		}
		idx := make([]int, len(w.blocks))
		for j := range idx {
			idx[j] = j
		}
		add(m, idx)
	case "user", "system":
		role := history.Role(w.role)
		var parts []history.Part
		var partIdx []int
		flush := func() {
			if partIdx == nil {
				return
			}
			add(history.Message{Role: role, Content: partsContent(parts)}, partIdx)
			parts, partIdx = nil, nil
		}
		for j, b := range w.blocks {
			var bh struct {
				Type      string          `json:"type"`
				Text      string          `json:"text"`
				ToolUseID string          `json:"tool_use_id"`
				Content   json.RawMessage `json:"content"`
			}
			if err := json.Unmarshal(b, &bh); err != nil {
				return nil, fmt.Errorf("content[%d]: must be an object", j)
			}
			switch bh.Type {
			case "tool_result":
				flush()
				add(history.Message{Role: history.Tool, ToolCallID: bh.ToolUseID,
					ToolName: names[bh.ToolUseID], Content: resultFromWire(bh.Content)}, []int{j})
			case "text":
				parts = append(parts, history.TextPart(bh.Text))
				partIdx = append(partIdx, j)
			default:
				parts = append(parts, history.Part{Type: bh.Type, Raw: withoutCacheControl(b)})
				partIdx = append(partIdx, j)
			}
		}
		if partIdx == nil && len(el.msgs) == 0 {
			partIdx = []int{} // an empty message still stands for its element
		}
		flush()
	default:
		return nil, fmt.Errorf("role: unsupported %q", w.role)
	}
	w.nhist = len(el.msgs)
	return el, nil
}

// userSession returns the session id inside a metadata.user_id that is a
// JSON object in a string (Claude Code's), else the user_id itself.
func userSession(uid string) string {
	var v struct {
		SessionID string `json:"session_id"`
	}
	if json.Unmarshal([]byte(uid), &v) == nil && v.SessionID != "" {
		return v.SessionID
	}
	return uid
}

// systemText is the text of a system field: a string or text blocks.
func systemText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []textBlock
	_ = json.Unmarshal(raw, &blocks)
	texts := make([]string, 0, len(blocks))
	for _, b := range blocks {
		texts = append(texts, b.Text)
	}
	return strings.Join(texts, "\n")
}

// partsContent is user content from parts: a string for one text part.
func partsContent(parts []history.Part) history.Content {
	if len(parts) == 1 && parts[0].Raw == nil {
		return history.Text(parts[0].Text)
	}
	return history.Parts(parts...)
}

// resultFromWire decodes a tool_result's content: a string, or blocks.
func resultFromWire(raw json.RawMessage) history.Content {
	var s string
	if len(raw) == 0 || string(raw) == "null" {
		return history.Text("")
	}
	if json.Unmarshal(raw, &s) == nil {
		return history.Text(s)
	}
	var blocks []json.RawMessage
	if json.Unmarshal(raw, &blocks) != nil {
		return history.Text(string(raw))
	}
	var parts []history.Part
	for _, b := range blocks {
		var t textBlock
		if json.Unmarshal(b, &t) == nil && t.Type == "text" {
			parts = append(parts, history.TextPart(t.Text))
			continue
		}
		parts = append(parts, history.Part{Type: t.Type, Raw: withoutCacheControl(b)})
	}
	return partsContent(parts)
}

// withoutCacheControl returns a block without its cache_control field: a
// breakpoint is where the agent asks for caching, not content.
func withoutCacheControl(b json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil || m["cache_control"] == nil {
		return providers.CompactJSON(b)
	}
	delete(m, "cache_control")
	return marshal(m)
}

// assistantFromBlocks folds an assistant message's blocks the way a
// response is folded (see parseResponse).
func assistantFromBlocks(blocks []json.RawMessage) (history.Message, error) {
	stripped := make([]json.RawMessage, len(blocks))
	for i, b := range blocks {
		stripped[i] = withoutCacheControl(b)
	}
	res, err := parseResponse(&messageResponse{Content: stripped})
	if err != nil {
		return history.Message{}, err
	}
	return res.Message, nil
}

// encodeMessages builds the messages array of a projection.
func encodeMessages(wire []wireMessage, req []history.Message, origins []origin, proj []history.Message, slots []proxywire.Slot) ([]json.RawMessage, error) {
	fresh := func(i int) (string, []json.RawMessage) { return freshBlocks(&proj[i]) }
	kept := func(i int) (int, string, []json.RawMessage) {
		p, sl := &proj[i], slots[i]
		o := origins[sl.Src]
		w := &wire[o.item]
		var blocks []json.RawMessage
		switch {
		case !w.isBlock && sl.Same:
		case !w.isBlock:
			_, blocks = freshBlocks(p)
		case sl.Same:
			for _, j := range o.blocks {
				blocks = append(blocks, w.blocks[j])
			}
		default:
			blocks = patchBlocks(w, o, p)
		}
		return o.item, w.role, blocks
	}
	outs := proxywire.GroupProjection(slots[:len(proj)], fresh, kept)
	items := make([]json.RawMessage, 0, len(outs))
	for _, o := range outs {
		if o.Src >= 0 {
			w := &wire[o.Src]
			first := -1
			for k := range origins {
				if origins[k].item == o.Src {
					first = k
					break
				}
			}
			if o.Whole(first, w.nhist) {
				items = append(items, w.raw)
				continue
			}
			if !w.isBlock && len(o.Parts) == 0 {
				items = append(items, w.raw) // unchanged string content
				continue
			}
			// Only the content changes: the message's other members keep
			// their bytes, and the rest of it (a large result) is not
			// decoded again.
			items = append(items, proxywire.SetMember(w.raw, "content", marshal(o.Parts)))
			continue
		}
		items = append(items, marshal(message{Role: o.Role, Content: o.Parts}))
	}
	return items, nil
}

// patchBlocks returns the blocks of a changed message, keeping each
// original block's other fields (cache_control, is_error): a tool result
// gets its new content, an assistant message's tool_use blocks their new
// input.
func patchBlocks(w *wireMessage, o origin, p *history.Message) []json.RawMessage {
	var out []json.RawMessage
	switch p.Role {
	case history.Tool:
		for _, j := range o.blocks {
			out = append(out, setField(w.blocks[j], "content", marshal(resultContent(p.Content))))
		}
	case history.Assistant:
		calls := map[string]history.ToolCall{}
		for _, tc := range p.ToolCalls {
			calls[tc.ID] = tc
		}
		for _, j := range o.blocks {
			b := w.blocks[j]
			var head struct {
				Type string `json:"type"`
				ID   string `json:"id"`
			}
			_ = json.Unmarshal(b, &head)
			if tc, ok := calls[head.ID]; ok && head.Type == "tool_use" {
				b = setField(b, "input", toolInput(tc))
			}
			out = append(out, b)
		}
	default:
		_, out = freshBlocks(p)
	}
	return out
}

// setField returns the object b with field k set to v, its other bytes
// kept.
func setField(b json.RawMessage, k string, v json.RawMessage) json.RawMessage {
	return proxywire.SetMember(b, k, v)
}

// freshBlocks converts one history message to the role and blocks of a
// Messages API message. A system message (a summary) becomes a user message.
func freshBlocks(m *history.Message) (string, []json.RawMessage) {
	switch m.Role {
	case history.System, history.User:
		return "user", contentBlocks(m.Content)
	case history.Tool:
		return "user", []json.RawMessage{marshal(toolResultBlock{"tool_result", m.ToolCallID, resultContent(m.Content)})}
	}
	_, out, _ := convert([]history.Message{*m}, false)
	for _, om := range out {
		if om.Role == "assistant" {
			return "assistant", om.Content
		}
	}
	return "assistant", nil
}

// MessagesRecorder records the assistant message of a Messages API stream
// passed through a proxy.
func MessagesRecorder() *proxywire.SSERecorder {
	s := newMessageStream()
	finish := func() (history.Response, error) {
		if !s.done {
			return history.Response{}, proxywire.ErrIncomplete
		}
		return recorded(s.response())
	}
	return proxywire.NewSSERecorder(s.add, finish)
}

// RecordMessage reads a non-streamed Messages API response body.
func RecordMessage(body []byte) (history.Response, error) {
	var res messageResponse
	if err := json.Unmarshal(body, &res); err != nil {
		return history.Response{}, fmt.Errorf("messages response: %w", err)
	}
	return recorded(&res)
}

func recorded(res *messageResponse) (history.Response, error) {
	r, err := parseResponse(res)
	if err != nil {
		return history.Response{}, err
	}
	u := r.Usage
	return history.Response{Message: r.Message, Usage: &u, StopReason: r.StopReason}, nil
}
