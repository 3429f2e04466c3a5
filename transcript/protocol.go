package transcript

import (
	"encoding/json"
	"fmt"

	"github.com/vtcode/vtcode-ls/history"
)

// anyProtocolMessage reports whether some element uses a field only this
// protocol's Message has.
func anyProtocolMessage(objs []map[string]json.RawMessage) bool {
	for _, o := range objs {
		if hasKey(o, "toolCalls") || hasKey(o, "toolCallId") || hasKey(o, "reasoningDetails") || hasKey(o, "toolName") {
			return true
		}
	}
	return false
}

// convertProtocol decodes a JSON array of protocol messages.
func convertProtocol(elems []json.RawMessage) (*Transcript, error) {
	b := newBuilder(FormatMessages)
	for i, e := range elems {
		var m history.Message
		if err := json.Unmarshal(e, &m); err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		b.add(m)
	}
	return b.done(), nil
}

// convertProtocolLines decodes Message JSONL, one message per line, verbatim:
// unknown fields are kept.
func convertProtocolLines(lines []line) (*Transcript, error) {
	b := newBuilder(FormatMessages)
	for _, l := range lines {
		var m history.Message
		if err := json.Unmarshal(l.raw, &m); err != nil {
			return nil, fmt.Errorf("line %d: %w", l.no, err)
		}
		b.add(m)
	}
	return b.done(), nil
}
