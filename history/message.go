package history

import (
	"bytes"
	"encoding/json"
	"sort"
)

// Role is the author of a message.
type Role string

// The four roles of the protocol.
const (
	System    Role = "system"
	User      Role = "user"
	Assistant Role = "assistant"
	Tool      Role = "tool"
)

// Valid reports whether r is one of the four protocol roles.
func (r Role) Valid() bool {
	switch r {
	case System, User, Assistant, Tool:
		return true
	}
	return false
}

// Message is one entry of a conversation.
//
// Messages are values. The estimate cache travels with the value; code that
// changes the content of a message that may already have been estimated must
// call [Message.Forget] (the constructors and With* helpers do so).
type Message struct {
	ID               string            // optional client id, preserved
	Role             Role              // system, user, assistant or tool
	Content          Content           // absent, a string, or parts
	ToolCalls        []ToolCall        // assistant only
	ToolCallID       string            // tool only: the call this result answers
	ToolName         string            // tool only
	Reasoning        string            // visible reasoning text
	ReasoningDetails []json.RawMessage // opaque provider blocks, replayed verbatim
	// Extra holds the fields this package does not know, verbatim.
	Extra map[string]json.RawMessage

	est estimate // cached token estimate; zero means unknown
}

// ToolCall is one call requested by an assistant message.
type ToolCall struct {
	ID               string
	Name             string
	Arguments        string // JSON text
	Input            string // freeform input
	ThoughtSignature string
	// Extra holds unknown fields verbatim.
	Extra map[string]json.RawMessage
}

// Usage is the token usage a provider reported for one response.
type Usage struct {
	InputTokens         int `json:"inputTokens"`
	OutputTokens        int `json:"outputTokens"`
	CacheReadTokens     int `json:"cacheReadTokens,omitempty"`
	CacheCreationTokens int `json:"cacheCreationTokens,omitempty"`
	// CacheCreation1hTokens is the part of CacheCreationTokens written with
	// a 1-hour lifetime (Anthropic's cache_creation.ephemeral_1h_input_tokens);
	// the rest has the default 5-minute one.
	CacheCreation1hTokens int `json:"cacheCreation1hTokens,omitempty"`
	// ReasoningTokens is the part of OutputTokens the model spent reasoning.
	ReasoningTokens int               `json:"reasoningTokens,omitempty"`
	Iterations      []json.RawMessage `json:"iterations,omitempty"`
}

// NewText returns a message of role r whose content is the string text.
func NewText(r Role, text string) Message {
	return Message{Role: r, Content: Text(text)}
}

// NewToolResult returns a tool message answering call id of the named tool.
func NewToolResult(callID, name, text string) Message {
	return Message{Role: Tool, ToolCallID: callID, ToolName: name, Content: Text(text)}
}

// Forget drops the cached token estimate; call it after changing a message.
func (m *Message) Forget() { m.est = estimate{} }

// WithContent returns a copy of m with its content replaced and its estimate forgotten.
func (m Message) WithContent(c Content) Message {
	m.Content = c
	m.est = estimate{}
	return m
}

// Text returns the text of the message content: the string, or the text parts
// concatenated without separator.
func (m *Message) Text() string { return m.Content.Text() }

// HasToolCalls reports whether m is an assistant message carrying tool calls.
func (m *Message) HasToolCalls() bool { return m.Role == Assistant && len(m.ToolCalls) > 0 }

// Equal reports whether a and b encode to the same JSON.
func Equal(a, b Message) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

// MarshalJSON writes the protocol form: known fields in a fixed order, then unknown
// fields sorted by name.
func (m Message) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 64+m.Content.approxLen())
	b = append(b, '{')
	first := true
	key := func(k string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendString(b, k)
		b = append(b, ':')
	}
	if m.ID != "" {
		key("id")
		b = appendString(b, m.ID)
	}
	key("role")
	b = appendString(b, string(m.Role))
	if m.Content.kind != contentAbsent {
		key("content")
		b = m.Content.appendJSON(b)
	}
	if m.ToolCalls != nil {
		key("toolCalls")
		b = append(b, '[')
		for i, tc := range m.ToolCalls {
			if i > 0 {
				b = append(b, ',')
			}
			b = tc.appendJSON(b)
		}
		b = append(b, ']')
	}
	if m.ToolCallID != "" {
		key("toolCallId")
		b = appendString(b, m.ToolCallID)
	}
	if m.ToolName != "" {
		key("toolName")
		b = appendString(b, m.ToolName)
	}
	if m.Reasoning != "" {
		key("reasoning")
		b = appendString(b, m.Reasoning)
	}
	if m.ReasoningDetails != nil {
		key("reasoningDetails")
		b = appendRawArray(b, m.ReasoningDetails)
	}
	for _, k := range sortedKeys(m.Extra) {
		key(k)
		b = append(b, m.Extra[k]...)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON decodes the protocol form, keeping unknown fields verbatim.
// It rejects a missing or unknown role and fields of the wrong type with a
// *FieldError naming the field.
func (m *Message) UnmarshalJSON(data []byte) error {
	out, err := decodeMessage(data)
	if err != nil {
		return err
	}
	*m = out
	return nil
}

func (tc ToolCall) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, tc.ID)
	b = append(b, `,"name":`...)
	b = appendString(b, tc.Name)
	if tc.Arguments != "" {
		b = append(b, `,"arguments":`...)
		b = appendString(b, tc.Arguments)
	}
	if tc.Input != "" {
		b = append(b, `,"input":`...)
		b = appendString(b, tc.Input)
	}
	if tc.ThoughtSignature != "" {
		b = append(b, `,"thoughtSignature":`...)
		b = appendString(b, tc.ThoughtSignature)
	}
	for _, k := range sortedKeys(tc.Extra) {
		b = append(b, ',')
		b = appendString(b, k)
		b = append(b, ':')
		b = append(b, tc.Extra[k]...)
	}
	return append(b, '}')
}

// MarshalJSON writes the tool call in protocol form.
func (tc ToolCall) MarshalJSON() ([]byte, error) { return tc.appendJSON(nil), nil }

// UnmarshalJSON decodes a tool call, keeping unknown fields; a field of the
// wrong type is a *FieldError.
func (tc *ToolCall) UnmarshalJSON(data []byte) error { return tc.decode(data) }

func compactRaw(v json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return append(json.RawMessage(nil), v...)
	}
	return buf.Bytes()
}

func sortedKeys(m map[string]json.RawMessage) []string {
	if len(m) == 0 {
		return nil
	}
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func appendRawArray(b []byte, items []json.RawMessage) []byte {
	b = append(b, '[')
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		if len(it) == 0 {
			b = append(b, "null"...)
			continue
		}
		b = append(b, it...)
	}
	return append(b, ']')
}

// Size returns the bytes of the message's text: its content, tool calls,
// ids, reasoning and opaque fields, which is about its JSON size without the
// syntax. Callers bound messages with it.
func (m *Message) Size() int {
	n := len(m.ID) + len(m.Role) + len(m.ToolCallID) + len(m.ToolName) + len(m.Reasoning)
	switch m.Content.kind {
	case contentString:
		n += len(m.Content.text)
	case contentParts:
		for _, p := range m.Content.parts {
			n += len(p.Type) + len(p.Text) + len(p.Raw)
		}
	}
	for i := range m.ToolCalls {
		tc := &m.ToolCalls[i]
		n += len(tc.ID) + len(tc.Name) + len(tc.Arguments) + len(tc.Input) + len(tc.ThoughtSignature) + rawSize(tc.Extra)
	}
	for _, d := range m.ReasoningDetails {
		n += len(d)
	}
	return n + rawSize(m.Extra)
}

func rawSize(extra map[string]json.RawMessage) int {
	n := 0
	for k, v := range extra {
		n += len(k) + len(v)
	}
	return n
}
