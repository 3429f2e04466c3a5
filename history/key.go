package history

import (
	"crypto/sha256"
	"encoding/json"
	"io"
	"strings"
)

// MessageKey is a stable digest of a message, for comparing the messages
// of successive requests of one conversation (an agent that keeps its own
// conversation resends all of it): a tool result is its call id (agents
// clear or trim their own old results in place: that is not a new
// conversation), an assistant message its text and call ids and names, any
// other message its role and JSON form.
func MessageKey(m *Message) string {
	h := sha256.New()
	switch m.Role {
	case Tool:
		io.WriteString(h, "tool\x00"+m.ToolCallID+"\x00")
		if m.ToolCallID == "" {
			io.WriteString(h, m.Text())
		}
	case Assistant:
		io.WriteString(h, "assistant\x00")
		io.WriteString(h, strings.TrimSpace(m.Text()))
		for _, tc := range m.ToolCalls {
			io.WriteString(h, "\x00"+tc.ID+"\x00"+tc.Name)
		}
	default:
		b, _ := json.Marshal(m)
		h.Write(b)
	}
	return string(h.Sum(nil)[:16])
}

// Response is a provider's answer to one request: the assistant message,
// the usage the provider reported (nil when it reported none) and its stop
// reason as the provider spelled it.
type Response struct {
	Message    Message
	Usage      *Usage
	StopReason string
}
