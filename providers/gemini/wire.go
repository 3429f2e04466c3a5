// Package gemini is the Gemini API wire format (generateContent,
// streamGenerateContent, countTokens) for a proxy: it decodes the request
// body an agent such as Gemini CLI sends into the engine's history, encodes
// a projection back into the agent's own body (every content and part the
// engine did not change copied byte for byte, thoughtSignature included),
// and records the assistant message and usage of an answer, streamed (SSE,
// alt=sse) or not.
package gemini

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/proxywire"
)

// How the Gemini shapes map onto history:
//
//   - a "model" content is one assistant message: its text parts are the
//     text, thought parts the reasoning (the parts themselves kept in
//     ReasoningDetails), functionCall parts the tool calls with their
//     thoughtSignature;
//   - a "user" content is a user message, split around its
//     functionResponse parts, each of which is a tool result;
//   - systemInstruction is the system prompt, tools the declarations.
//
// The API's calls often carry no id (Gemini CLI then makes one up, which an
// answer never shows), so a call's history id is derived from the call
// itself: its message's first thoughtSignature, its position among the
// message's calls, its name and its arguments ([CallID]). The id read from
// the answer and the one decoded from the agent's next request agree, which
// is how the session knows the request extends the conversation. A result
// is paired with the call of the preceding model content that has its id,
// else its name, else the next unanswered one, as the API pairs them.

// part is the decoded head of one part. Both the camelCase and the
// snake_case field names are accepted, as the API does.
type part struct {
	Text              *string           `json:"text"`
	Thought           bool              `json:"thought"`
	ThoughtSignature  string            `json:"thoughtSignature"`
	ThoughtSignature2 string            `json:"thought_signature"`
	FunctionCall      *functionCall     `json:"functionCall"`
	FunctionCall2     *functionCall     `json:"function_call"`
	FunctionResponse  *functionResponse `json:"functionResponse"`
	FunctionResponse2 *functionResponse `json:"function_response"`
}

type functionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type functionResponse struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

func (p *part) signature() string {
	if p.ThoughtSignature != "" {
		return p.ThoughtSignature
	}
	return p.ThoughtSignature2
}

func (p *part) call() *functionCall {
	if p.FunctionCall != nil {
		return p.FunctionCall
	}
	return p.FunctionCall2
}

func (p *part) response() *functionResponse {
	if p.FunctionResponse != nil {
		return p.FunctionResponse
	}
	return p.FunctionResponse2
}

// wireIDKey is the ToolCall.Extra field keeping a call's own id.
const wireIDKey = "geminiId"

// CallID is the history id of the index-th function call of a model
// message whose first signed call carries signature: a digest of these and
// of the call's name and arguments (compared in their canonical JSON form).
func CallID(signature string, index int, name string, args json.RawMessage) string {
	h := sha256.New()
	h.Write([]byte(signature))
	h.Write([]byte{0})
	h.Write([]byte(strconv.Itoa(index)))
	h.Write([]byte{0})
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write(canonical(args))
	return "gemini_" + hex.EncodeToString(h.Sum(nil)[:12])
}

// canonical is a JSON value in one form (keys sorted, Go's escaping), so
// that a re-serialization by the agent does not change a call's id.
func canonical(raw json.RawMessage) []byte {
	if len(bytes.TrimSpace(raw)) == 0 {
		return []byte("{}")
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return providers.CompactJSON(raw)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return providers.CompactJSON(raw)
	}
	return b
}

// element is one decoded content, cached by its bytes: its parts, and the
// history messages it stands for with the indices of their parts. Tool
// results are not paired yet (that needs the preceding content).
type element struct {
	raw   json.RawMessage
	role  string
	parts []json.RawMessage
	heads []part
	msgs  []history.Message
	of    [][]int
}

// origin is where a history message came from: a content of the request
// and the indices of its parts.
type origin struct {
	item  int
	parts []int
}

// DecodeRequest decodes a generateContent or streamGenerateContent request
// body (also a countTokens body: its contents, or those of its
// generateContentRequest) for a proxy. The model and streaming are in the
// URL, not the body: model is the one the path names, stream whether it is
// streamGenerateContent. cache, when not nil, keeps decoded contents across
// requests.
func DecodeRequest(body []byte, model string, stream bool, cache *proxywire.DecodeCache) (*proxywire.WireRequest, error) {
	members, array, elems, err := proxywire.Members(body, "contents")
	if err != nil {
		return nil, err
	}
	if _, ok := members["contents"]; !ok {
		if inner, ok := members["generateContentRequest"]; ok {
			return decodeNested(body, inner, model, stream, cache)
		}
	}
	if array == (proxywire.Span{}) {
		return nil, errors.New("gemini request: contents: must be an array")
	}
	return decodeAt(body, 0, members, array, elems, model, stream, cache)
}

// decodeNested decodes the generateContentRequest of a countTokens body;
// inner is a slice of body.
func decodeNested(body, inner []byte, model string, stream bool, cache *proxywire.DecodeCache) (*proxywire.WireRequest, error) {
	off := cap(body) - cap(inner)
	if off < 0 || off+len(inner) > len(body) {
		return nil, errors.New("gemini request: generateContentRequest: not in the body")
	}
	members, array, elems, err := proxywire.Members(inner, "contents")
	if err != nil {
		return nil, fmt.Errorf("gemini request: generateContentRequest: %w", err)
	}
	if array == (proxywire.Span{}) {
		return nil, errors.New("gemini request: generateContentRequest.contents: must be an array")
	}
	return decodeAt(body, off, members, array, elems, model, stream, cache)
}

func decodeAt(body []byte, off int, members map[string]json.RawMessage, array proxywire.Span, elems []proxywire.Span, model string, stream bool, cache *proxywire.DecodeCache) (*proxywire.WireRequest, error) {
	var top struct {
		Model             string
		SystemInstruction struct {
			Parts []part `json:"parts"`
		}
		Tools []struct {
			FunctionDeclarations  []json.RawMessage `json:"functionDeclarations"`
			FunctionDeclarations2 []json.RawMessage `json:"function_declarations"`
		}
		RawTools []json.RawMessage
	}
	if err := proxywire.DecodeMembers(members, map[string]any{"model": &top.Model, "tools": &top.Tools}); err != nil {
		return nil, fmt.Errorf("gemini request: %w", err)
	}
	_ = proxywire.DecodeMembers(members, map[string]any{"tools": &top.RawTools})
	sys := members["systemInstruction"]
	if sys == nil {
		sys = members["system_instruction"]
	}
	if len(sys) > 0 && string(sys) != "null" {
		if err := json.Unmarshal(sys, &top.SystemInstruction); err != nil {
			return nil, fmt.Errorf("gemini request: systemInstruction: %w", err)
		}
	}
	if model == "" {
		model = strings.TrimPrefix(top.Model, "models/")
	}
	array = proxywire.Span{Start: array.Start + off, End: array.End + off}
	shifted := make([]proxywire.Span, len(elems))
	els := make([]*element, len(elems))
	for i, sp := range elems {
		shifted[i] = proxywire.Span{Start: sp.Start + off, End: sp.End + off}
		raw := body[shifted[i].Start:shifted[i].End]
		if v, ok := cache.Get("gemini", raw); ok {
			els[i] = v.(*element)
			continue
		}
		own := bytes.Clone(raw)
		el, err := decodeContent(json.RawMessage(own))
		if err != nil {
			return nil, fmt.Errorf("contents[%d]: %w", i, err)
		}
		cache.Put("gemini", own, el)
		els[i] = el
	}
	msgs, origins := pair(els)
	r := proxywire.NewWireRequest(body, array, shifted, func(proj []history.Message, slots []proxywire.Slot) ([]json.RawMessage, error) {
		return encodeContents(els, msgs, origins, proj, slots), nil
	})
	r.Model, r.Stream, r.Messages = model, stream, msgs
	for _, t := range top.Tools {
		r.Tools = append(r.Tools, t.FunctionDeclarations...)
		r.Tools = append(r.Tools, t.FunctionDeclarations2...)
	}
	for i, t := range top.Tools {
		if len(t.FunctionDeclarations) == 0 && len(t.FunctionDeclarations2) == 0 && i < len(top.RawTools) {
			r.Tools = append(r.Tools, top.RawTools[i]) // googleSearch, codeExecution, …
		}
	}
	var texts []string
	for _, p := range top.SystemInstruction.Parts {
		if p.Text != nil {
			texts = append(texts, *p.Text)
		}
	}
	r.System = strings.Join(texts, "\n")
	return r, nil
}

// decodeContent decodes one element of contents.
func decodeContent(raw json.RawMessage) (*element, error) {
	var head struct {
		Role  string            `json:"role"`
		Parts []json.RawMessage `json:"parts"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("must be a content object: %w", err)
	}
	el := &element{raw: raw, role: head.Role, parts: head.Parts, heads: make([]part, len(head.Parts))}
	for j, pr := range head.Parts {
		if err := json.Unmarshal(pr, &el.heads[j]); err != nil {
			return nil, fmt.Errorf("parts[%d]: must be an object", j)
		}
	}
	switch head.Role {
	case "model":
		idx := make([]int, len(head.Parts))
		for j := range idx {
			idx[j] = j
		}
		el.msgs = append(el.msgs, assistantMessage(head.Parts, el.heads))
		el.of = append(el.of, idx)
	case "user", "function", "":
		var parts []history.Part
		var idx []int
		flush := func() {
			if idx == nil {
				return
			}
			el.msgs = append(el.msgs, history.Message{Role: history.User, Content: userContent(parts)})
			el.of = append(el.of, idx)
			parts, idx = nil, nil
		}
		for j := range head.Parts {
			h := &el.heads[j]
			if fr := h.response(); fr != nil {
				flush()
				el.msgs = append(el.msgs, history.Message{Role: history.Tool, ToolName: fr.Name, Content: history.Text(responseText(fr.Response))})
				el.of = append(el.of, []int{j})
				continue
			}
			if h.Text != nil && len(rawFields(head.Parts[j])) == 1 {
				parts = append(parts, history.TextPart(*h.Text))
			} else {
				parts = append(parts, history.Part{Type: partType(head.Parts[j]), Raw: providers.CompactJSON(head.Parts[j])})
			}
			idx = append(idx, j)
		}
		if idx == nil && len(el.msgs) == 0 {
			idx = []int{} // an empty content still stands for its element
		}
		flush()
	default:
		return nil, fmt.Errorf("role: unsupported %q", head.Role)
	}
	return el, nil
}

// rawFields returns the member names of a part.
func rawFields(raw json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	return m
}

// partType names a part that is not plain text by its data member
// (inlineData, fileData, executableCode, …).
func partType(raw json.RawMessage) string {
	fields := rawFields(raw)
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys) // one name for a part, whatever the order of its fields
	for _, k := range keys {
		switch k {
		case "thought", "thoughtSignature", "thought_signature", "videoMetadata", "video_metadata", "partMetadata", "mediaResolution":
			continue
		case "inlineData", "inline_data":
			return "image"
		case "fileData", "file_data":
			return "file"
		}
		return k
	}
	return "gemini"
}

// userContent is user content from parts: a string for one text part.
func userContent(parts []history.Part) history.Content {
	if len(parts) == 1 && parts[0].Raw == nil {
		return history.Text(parts[0].Text)
	}
	return history.Parts(parts...)
}

// responseText is the text of a functionResponse.response: its output (or
// error) when that is a string, else the object's JSON.
func responseText(raw json.RawMessage) string {
	var v struct {
		Output *string `json:"output"`
		Error  *string `json:"error"`
	}
	if json.Unmarshal(raw, &v) == nil {
		if v.Output != nil {
			return *v.Output
		}
		if v.Error != nil {
			return *v.Error
		}
	}
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(providers.CompactJSON(raw))
}

// assistantMessage folds the parts of a model content (or of an answer)
// into one assistant message.
func assistantMessage(raws []json.RawMessage, heads []part) history.Message {
	m := history.Message{Role: history.Assistant}
	sig := ""
	for i := range heads {
		if heads[i].call() != nil && heads[i].signature() != "" {
			sig = heads[i].signature()
			break
		}
	}
	var text, reasoning strings.Builder
	var other []history.Part
	calls := 0
	for i := range heads {
		h := &heads[i]
		switch fc := h.call(); {
		case fc != nil:
			args := "{}"
			if len(bytes.TrimSpace(fc.Args)) > 0 && string(fc.Args) != "null" {
				args = string(providers.CompactJSON(fc.Args))
			}
			tc := history.ToolCall{ID: CallID(sig, calls, fc.Name, fc.Args), Name: fc.Name, Arguments: args, ThoughtSignature: h.signature()}
			if fc.ID != "" {
				tc.Extra = map[string]json.RawMessage{wireIDKey: mustJSON(fc.ID)}
			}
			m.ToolCalls = append(m.ToolCalls, tc)
			calls++
		case h.Thought:
			if h.Text != nil {
				reasoning.WriteString(*h.Text)
			}
			m.ReasoningDetails = append(m.ReasoningDetails, providers.CompactJSON(raws[i]))
		case h.Text != nil:
			text.WriteString(*h.Text)
			if h.signature() != "" {
				m.ReasoningDetails = append(m.ReasoningDetails, providers.CompactJSON(raws[i]))
			}
		default:
			other = append(other, history.Part{Type: partType(raws[i]), Raw: providers.CompactJSON(raws[i])})
		}
	}
	m.Reasoning = reasoning.String()
	switch {
	case other != nil:
		parts := []history.Part{}
		if text.Len() > 0 {
			parts = append(parts, history.TextPart(text.String()))
		}
		m.Content = history.Parts(append(parts, other...)...)
	case text.Len() > 0 || len(m.ToolCalls) == 0:
		m.Content = history.Text(text.String())
	}
	return m
}

// pair turns the decoded contents into the request's messages, pairing
// each tool result with its call.
func pair(els []*element) ([]history.Message, []origin) {
	var msgs []history.Message
	var origins []origin
	var calls []history.ToolCall // of the last model content
	var answered []bool
	for i, el := range els {
		if el.role == "model" {
			calls = el.msgs[0].ToolCalls
			answered = make([]bool, len(calls))
		}
		for k := range el.msgs {
			m := el.msgs[k]
			if m.Role == history.Tool {
				fr := el.heads[el.of[k][0]].response()
				j := matchCall(calls, answered, fr)
				if j >= 0 {
					answered[j] = true
					m.ToolCallID = calls[j].ID
				} else {
					m.ToolCallID = "gemini_result_" + CallID("", i, fr.Name, el.parts[el.of[k][0]])[len("gemini_"):]
				}
			}
			msgs = append(msgs, m)
			origins = append(origins, origin{item: i, parts: el.of[k]})
		}
	}
	return msgs, origins
}

// matchCall is the unanswered call a function response answers: the one
// with its id (Gemini CLI prefixes the call's id with "name__"), else the
// first with its name, else the first; -1 for none.
func matchCall(calls []history.ToolCall, answered []bool, fr *functionResponse) int {
	if fr.ID != "" {
		for j, tc := range calls {
			var id string
			_ = json.Unmarshal(tc.Extra[wireIDKey], &id)
			if !answered[j] && id != "" && (id == fr.ID || strings.TrimPrefix(fr.ID, tc.Name+"__") == strings.TrimPrefix(id, tc.Name+"__")) {
				return j
			}
		}
	}
	for j, tc := range calls {
		if !answered[j] && tc.Name == fr.Name {
			return j
		}
	}
	for j := range calls {
		if !answered[j] {
			return j
		}
	}
	return -1
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// encodeContents builds the contents array of a projection.
func encodeContents(els []*element, req []history.Message, origins []origin, proj []history.Message, slots []proxywire.Slot) []json.RawMessage {
	fresh := func(i int) (string, []json.RawMessage) { return freshParts(&proj[i]) }
	kept := func(i int) (int, string, []json.RawMessage) {
		o := origins[slots[i].Src]
		el := els[o.item]
		if !slots[i].Same {
			return o.item, el.role, patchParts(el, o, &proj[i])
		}
		var parts []json.RawMessage
		for _, j := range o.parts {
			parts = append(parts, el.parts[j])
		}
		return o.item, el.role, parts
	}
	outs := proxywire.GroupProjection(slots[:len(proj)], fresh, kept)
	items := make([]json.RawMessage, 0, len(outs))
	for _, o := range outs {
		if o.Src < 0 {
			items = append(items, mustJSON(struct {
				Role  string            `json:"role"`
				Parts []json.RawMessage `json:"parts"`
			}{o.Role, o.Parts}))
			continue
		}
		el := els[o.Src]
		first := -1
		for k := range origins {
			if origins[k].item == o.Src {
				first = k
				break
			}
		}
		if o.Whole(first, len(el.msgs)) {
			items = append(items, el.raw)
			continue
		}
		items = append(items, proxywire.SetMember(el.raw, "parts", joinArray(o.Parts)))
	}
	return items
}

// joinArray writes elements as a JSON array, each element's bytes kept.
func joinArray(elems []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, e := range elems {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(e)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// patchParts returns the parts of a changed message, each original part's
// other fields (thoughtSignature, id, name) kept: a tool result gets its new
// output, a model content's function calls their new arguments.
func patchParts(el *element, o origin, p *history.Message) []json.RawMessage {
	var out []json.RawMessage
	switch p.Role {
	case history.Tool:
		for _, j := range o.parts {
			out = append(out, patchResponse(el.parts[j], &el.heads[j], p.Text()))
		}
	case history.Assistant:
		calls := map[string]history.ToolCall{}
		for _, tc := range p.ToolCalls {
			calls[tc.ID] = tc
		}
		orig := el.msgs[0].ToolCalls
		k := 0
		for _, j := range o.parts {
			raw := el.parts[j]
			if el.heads[j].call() != nil {
				if k < len(orig) {
					if tc, ok := calls[orig[k].ID]; ok && tc.Arguments != orig[k].Arguments && json.Valid([]byte(tc.Arguments)) {
						key := "functionCall"
						if el.heads[j].FunctionCall == nil {
							key = "function_call"
						}
						fc := rawFields(raw)[key]
						raw = proxywire.SetMember(raw, key, proxywire.SetMember(fc, "args", json.RawMessage(tc.Arguments)))
					}
				}
				k++
			}
			out = append(out, raw)
		}
	default:
		_, out = freshParts(p)
	}
	return out
}

// patchResponse returns a functionResponse part with output text, its
// other bytes kept.
func patchResponse(raw json.RawMessage, h *part, text string) json.RawMessage {
	key := "functionResponse"
	if h.FunctionResponse == nil {
		key = "function_response"
	}
	fr := rawFields(raw)[key]
	if fr == nil {
		return raw
	}
	resp := rawFields(fr)["response"]
	var obj map[string]json.RawMessage
	if json.Unmarshal(resp, &obj) == nil && obj != nil {
		if _, ok := obj["output"]; ok {
			resp = proxywire.SetMember(resp, "output", mustJSON(text))
		} else if _, ok := obj["error"]; ok {
			resp = proxywire.SetMember(resp, "error", mustJSON(text))
		} else {
			resp = mustJSON(map[string]string{"output": text})
		}
	} else {
		resp = mustJSON(map[string]string{"output": text})
	}
	return proxywire.SetMember(raw, key, proxywire.SetMember(fr, "response", resp))
}

// freshParts converts one history message to the role and parts of a
// content. A system message (a summary) becomes a user content.
func freshParts(m *history.Message) (string, []json.RawMessage) {
	textPart := func(s string) json.RawMessage { return mustJSON(map[string]string{"text": s}) }
	contentParts := func(c history.Content) []json.RawMessage {
		if c.IsString() || c.PartList() == nil {
			if t := c.Text(); t != "" {
				return []json.RawMessage{textPart(t)}
			}
			return nil
		}
		var out []json.RawMessage
		for _, p := range c.PartList() {
			switch {
			case p.Raw == nil:
				out = append(out, textPart(p.Text))
			case json.Valid(p.Raw):
				out = append(out, p.Raw)
			}
		}
		return out
	}
	switch m.Role {
	case history.Tool:
		fr := map[string]any{"name": m.ToolName, "response": map[string]string{"output": m.Text()}}
		return "user", []json.RawMessage{mustJSON(map[string]any{"functionResponse": fr})}
	case history.Assistant:
		out := contentParts(m.Content)
		for _, tc := range m.ToolCalls {
			fc := map[string]any{"name": tc.Name, "args": json.RawMessage(canonical(json.RawMessage(tc.Arguments)))}
			var id string
			if json.Unmarshal(tc.Extra[wireIDKey], &id) == nil && id != "" {
				fc["id"] = id
			}
			p := map[string]any{"functionCall": fc}
			if tc.ThoughtSignature != "" {
				p["thoughtSignature"] = tc.ThoughtSignature
			}
			out = append(out, mustJSON(p))
		}
		return "model", out
	}
	return "user", contentParts(m.Content)
}
