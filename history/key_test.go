package history

import "testing"

// MessageKey tells the messages of successive requests of one conversation
// apart the way an agent's resending needs: what agents change in place
// (a cleared tool result, an assistant's thinking or call arguments) keeps
// the key; what makes it another message changes it.
func TestMessageKey(t *testing.T) {
	call := func(id, name, args string) Message {
		return Message{Role: Assistant, Content: Text("Reading it."), ToolCalls: []ToolCall{{ID: id, Name: name, Arguments: args}}}
	}
	thinking := func(m Message) Message {
		m.Reasoning = "the file may be long"
		return m
	}
	same := []struct {
		name string
		a, b Message
	}{
		{"a tool result cleared in place", NewToolResult("c1", "read", "package a\n\nfunc A() {}\n"), NewToolResult("c1", "read", "[cleared]")},
		{"an assistant message with other arguments", call("c1", "read", `{"path":"a.go"}`), call("c1", "read", `{"path":"b.go"}`)},
		{"an assistant message with thinking", call("c1", "read", "{}"), thinking(call("c1", "read", "{}"))},
		{"an assistant message's surrounding space", NewText(Assistant, "Done."), NewText(Assistant, "  Done.\n")},
		{"the same user message", NewText(User, "fix the test"), NewText(User, "fix the test")},
	}
	for _, c := range same {
		if MessageKey(&c.a) != MessageKey(&c.b) {
			t.Errorf("%s: keys differ", c.name)
		}
	}
	differ := []struct {
		name string
		a, b Message
	}{
		{"tool results of two calls", NewToolResult("c1", "read", "x"), NewToolResult("c2", "read", "x")},
		{"results without a call id", NewToolResult("", "read", "x"), NewToolResult("", "read", "y")},
		{"assistant calls of other tools", call("c1", "read", "{}"), call("c1", "write", "{}")},
		{"assistant calls with other ids", call("c1", "read", "{}"), call("c2", "read", "{}")},
		{"assistant texts", NewText(Assistant, "Done."), NewText(Assistant, "Not done.")},
		{"user texts", NewText(User, "fix the test"), NewText(User, "fix the tests")},
		{"roles", NewText(User, "hello"), NewText(System, "hello")},
	}
	for _, c := range differ {
		if MessageKey(&c.a) == MessageKey(&c.b) {
			t.Errorf("%s: same key", c.name)
		}
	}
}
