package history

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"strings"
)

// MessageKey is a stable digest of a message, for comparing the messages
// of successive requests of one conversation (an agent that keeps its own
// conversation resends all of it): a tool result is its call id (agents
// clear or trim their own old results in place: that is not a new
// conversation), an assistant message its text and call ids and names, any
// other message its role and JSON form. Digests are stored with a proxied
// session's mirror: what is hashed never changes. The bytes are gathered
// in one buffer (on the stack for most messages) and hashed at once: the
// proxy digests every message of every request.
func MessageKey(m *Message) string {
	var stack [256]byte
	b := stack[:0]
	switch m.Role {
	case Tool:
		b = append(append(append(b, "tool\x00"...), m.ToolCallID...), 0)
		if m.ToolCallID == "" {
			b = append(b, m.Text()...)
		}
	case Assistant:
		b = append(b, "assistant\x00"...)
		b = append(b, strings.TrimSpace(m.Text())...)
		for _, tc := range m.ToolCalls {
			b = append(append(append(append(b, 0), tc.ID...), 0), tc.Name...)
		}
	default:
		b = keyJSON(m)
	}
	sum := sha256.Sum256(b)
	return string(sum[:16])
}

// keyJSON returns json.Marshal(m), the bytes MessageKey hashes for a user
// or system message. A message of plain text holds no verbatim JSON, so its
// own encoding is already compact and only needs json.Marshal's HTML
// escaping: encoding/json's validating pass over every byte (most of the
// proxy's digesting of a request with long user messages) is skipped.
func keyJSON(m *Message) []byte {
	plain := m.ToolCalls == nil && m.ReasoningDetails == nil && len(m.Extra) == 0
	for _, p := range m.Content.parts {
		plain = plain && p.Raw == nil
	}
	if !plain {
		b, _ := json.Marshal(m)
		return b
	}
	b, _ := m.MarshalJSON()
	if !bytes.ContainsAny(b, "<>&") {
		return b
	}
	var esc bytes.Buffer
	json.HTMLEscape(&esc, b)
	return esc.Bytes()
}

// Response is a provider's answer to one request: the assistant message,
// the usage the provider reported (nil when it reported none) and its stop
// reason as the provider spelled it.
type Response struct {
	Message    Message
	Usage      *Usage
	StopReason string
}
