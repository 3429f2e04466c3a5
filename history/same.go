package history

import (
	"bytes"
	"encoding/json"
)

// Same reports whether a and b have the same fields, which is what [Equal]
// compares, without encoding them: equal strings that share their bytes
// compare in constant time, so comparing a message with a copy of itself
// is cheap. The cached estimate is not compared.
func Same(a, b *Message) bool {
	if a.ID != b.ID || a.Role != b.Role || a.ToolCallID != b.ToolCallID || a.ToolName != b.ToolName ||
		a.Reasoning != b.Reasoning || len(a.ToolCalls) != len(b.ToolCalls) ||
		len(a.ReasoningDetails) != len(b.ReasoningDetails) || len(a.Extra) != len(b.Extra) ||
		!sameContent(&a.Content, &b.Content) {
		return false
	}
	for i := range a.ToolCalls {
		x, y := &a.ToolCalls[i], &b.ToolCalls[i]
		if x.ID != y.ID || x.Name != y.Name || x.Arguments != y.Arguments || x.Input != y.Input ||
			x.ThoughtSignature != y.ThoughtSignature || !sameRaw(x.Extra, y.Extra) {
			return false
		}
	}
	for i := range a.ReasoningDetails {
		if !bytes.Equal(a.ReasoningDetails[i], b.ReasoningDetails[i]) {
			return false
		}
	}
	return sameRaw(a.Extra, b.Extra)
}

func sameContent(a, b *Content) bool {
	if a.kind != b.kind || a.text != b.text || len(a.parts) != len(b.parts) || (a.parts == nil) != (b.parts == nil) {
		return false
	}
	for i := range a.parts {
		x, y := &a.parts[i], &b.parts[i]
		if x.Type != y.Type || x.Text != y.Text || !bytes.Equal(x.Raw, y.Raw) {
			return false
		}
	}
	return true
}

func sameRaw(a, b map[string]json.RawMessage) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}
