package history

import (
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
)

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

// TestMessageKeyIsStable: the digests are stored with a proxied session's
// mirror, so a session saved by an earlier release must line up with the
// agent's next request: these digests, computed by the first spelling of
// MessageKey (a streamed sha256 of the same bytes), never change.
func TestMessageKeyIsStable(t *testing.T) {
	long := strings.Repeat("a long assistant answer ", 40)
	for _, tc := range []struct {
		m    Message
		want string
	}{
		{NewToolResult("toolu_01", "Read", "package a"), "be15e1cb704c92314451016120c9178c"},
		{NewToolResult("", "Read", "a result without a call id"), "a04036a86b18eadf90217b86976797b2"},
		{Message{Role: Assistant, Content: Text(" Reading it. "), ToolCalls: []ToolCall{{ID: "c1", Name: "Read"}, {ID: "c2", Name: "Grep"}}}, "bcca81104baf2b1e83de061720cada3c"},
		{NewText(Assistant, long), "6a250f554a65a492606af49ab3bfe79e"},
		{NewText(User, "fix the test"), "d491eb90d4fb5811da15ea61239596b5"},
		{Message{Role: User, Content: Parts(TextPart("look"), Part{Type: "image", Raw: []byte(`{"type":"image"}`)})}, "909a790f1a8aef621c1c41e339cb8d79"},
		{Message{Role: User, Content: Parts(TextPart("<b>a & b</b>\u2028"), TextPart("\t\"q\"\xff"))}, "8a378dc04647403a53ff6ff0b2ddc26a"},
		{Message{Role: System, ID: "s1", Content: Text("x > y && y < z\n")}, "0324c01e35b47e3d0d852a1a19ccd04d"},
		{Message{Role: User, Content: Text("with extra"), Extra: map[string]json.RawMessage{"name": json.RawMessage(` "me" `)}}, "041a3e505bc97b28b3970a63e3aff2f6"},
	} {
		if got := hex.EncodeToString([]byte(MessageKey(&tc.m))); got != tc.want {
			t.Errorf("MessageKey(%s %.30q) = %s, want %s", tc.m.Role, tc.m.Text(), got, tc.want)
		}
	}
}

// TestKeyJSONIsMarshal: the bytes MessageKey hashes for a user or system
// message are json.Marshal's, whatever the text (escapes, HTML, invalid
// UTF-8, line separators) and parts.
func TestKeyJSONIsMarshal(t *testing.T) {
	texts := []string{"", "plain", "<script>&amp;</script>", "a\u2028b\u2029c", "\x00\x1f\x7f", "bad \xff\xfe utf-8", "東京 🙂", `"quoted" \back\slash`, strings.Repeat("<&>", 500)}
	for _, s := range texts {
		for _, m := range []Message{
			NewText(User, s),
			{Role: System, ID: s, Content: Text(s)},
			{Role: User, Content: Parts(TextPart(s), TextPart("and "+s))},
			{Role: User, Content: Parts(TextPart(s), Part{Type: "image", Raw: json.RawMessage(` { "type" : "image" } `)})},
		} {
			want, err := json.Marshal(&m)
			if err != nil {
				t.Fatal(err)
			}
			if got := keyJSON(&m); string(got) != string(want) {
				t.Errorf("keyJSON(%.30q) = %.60s, json.Marshal %.60s", s, got, want)
			}
		}
	}
}
