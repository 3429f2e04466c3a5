package history

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// canonical messages: known fields in protocol order, unknown fields sorted,
// raw parts and opaque blocks compact. Each must round-trip byte for byte.
var canonicalMessages = []string{
	`{"role":"user","content":"hi"}`,
	`{"role":"system","content":""}`,
	`{"id":"m1","role":"assistant","content":null,"toolCalls":[{"id":"call_0","name":"read_file","arguments":"{\"path\":\"a.go\"}","thoughtSignature":"c2lnbmF0dXJl","extra":{"x":1},"type":"function"}],"reasoning":"think first","reasoningDetails":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"redacted_thinking","data":"zz"},"opaque",42,null],"providerMeta":{"a":[1,2.50,1e3,"x"]},"zz":null}`,
	`{"role":"tool","content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},{"type":"text","text":"b","cache_control":{"type":"ephemeral"}},{"type":"custom","payload":[1,2]},{"text":"no type"},{"type":5},{"type":"text","text":null}],"toolCallId":"call_0","toolName":"read_file"}`,
	`{"role":"assistant","toolCalls":[{"id":"c1","name":"apply_patch","input":"*** Begin Patch\n*** End Patch\n"},{"id":"","name":""}]}`,
	`{"role":"assistant","content":"x","toolCalls":[]}`,
	`{"role":"user","content":[]}`,
	`{"role":"assistant","content":"","reasoningDetails":[]}`,
	`{"role":"user","content":"é \u2028 \"q\" \\ \n\t\u0001 <>& 東京"}`,
	`{"role":"tool","content":"ok","toolCallId":"call_9","toolName":"run","cache_control":{"type":"ephemeral"},"metadata":{"nested":{"deep":[true,false,null]}}}`,
}

func TestRoundTripExact(t *testing.T) {
	for _, in := range canonicalMessages {
		var m Message
		if err := json.Unmarshal([]byte(in), &m); err != nil {
			t.Fatalf("decode %s: %v", in, err)
		}
		out, err := m.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != in {
			t.Errorf("round trip changed the message\n in: %s\nout: %s", in, out)
		}
		// encoding/json agrees (up to its HTML escaping).
		viaStd, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if !jsonEqual(t, viaStd, []byte(in)) {
			t.Errorf("json.Marshal differs semantically\n in: %s\nout: %s", in, viaStd)
		}
	}
}

func TestRoundTripList(t *testing.T) {
	in := "[" + strings.Join(canonicalMessages, ",") + "]"
	var msgs []Message
	if err := json.Unmarshal([]byte(in), &msgs); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(t, out, []byte(in)) {
		t.Errorf("list round trip differs\n in: %s\nout: %s", in, out)
	}
}

// Non-canonical input (whitespace, key order) keeps its meaning.
func TestRoundTripSemantic(t *testing.T) {
	in := `{
	  "zeta": {"b": 1,  "a": [ 1, 2 ]},
	  "content": [ {"text": "hello", "type": "text"}, { "type": "input_image", "image_url": "data:x" } ],
	  "toolName": "read_file",
	  "toolCallId": "call_1",
	  "role": "tool",
	  "alpha": "first"
	}`
	var m Message
	if err := json.Unmarshal([]byte(in), &m); err != nil {
		t.Fatal(err)
	}
	out, _ := m.MarshalJSON()
	if !jsonEqual(t, out, []byte(in)) {
		t.Errorf("meaning changed\n in: %s\nout: %s", in, out)
	}
	want := `{"role":"tool","content":[{"type":"text","text":"hello"},{"type":"input_image","image_url":"data:x"}],"toolCallId":"call_1","toolName":"read_file","alpha":"first","zeta":{"b":1,"a":[1,2]}}`
	if string(out) != want {
		t.Errorf("canonical form\n got: %s\nwant: %s", out, want)
	}
}

func TestDecodeModel(t *testing.T) {
	var m Message
	must(t, json.Unmarshal([]byte(canonicalMessages[3]), &m))
	parts := m.Content.PartList()
	if len(parts) != 7 {
		t.Fatalf("parts = %d, want 7", len(parts))
	}
	if p := parts[0]; p.Type != "text" || p.Text != "a" || p.Raw != nil {
		t.Errorf("plain text part = %+v", p)
	}
	if p := parts[1]; p.Type != "image" || !p.IsMedia() || p.Raw == nil {
		t.Errorf("image part = %+v", p)
	}
	if p := parts[2]; p.Type != "text" || p.Text != "b" || p.Raw == nil || p.IsMedia() {
		t.Errorf("text part with extra fields = %+v", p)
	}
	if p := parts[3]; p.Type != "custom" || string(p.Raw) != `{"type":"custom","payload":[1,2]}` {
		t.Errorf("custom part = %+v", p)
	}
	if p := parts[5]; p.Type != "" || string(p.Raw) != `{"type":5}` {
		t.Errorf("odd part = %+v", p)
	}
	if got := m.Text(); got != "abno type" {
		t.Errorf("Text() = %q, want the parts' text concatenated", got)
	}

	must(t, json.Unmarshal([]byte(canonicalMessages[2]), &m))
	if m.ID != "m1" || m.Role != Assistant || m.Content.IsAbsent() || m.Content.IsString() || m.Content.PartList() != nil {
		t.Errorf("null content decoded as %+v", m.Content)
	}
	if !m.HasToolCalls() || m.ToolCalls[0].ThoughtSignature != "c2lnbmF0dXJl" || string(m.ToolCalls[0].Extra["extra"]) != `{"x":1}` {
		t.Errorf("tool call = %+v", m.ToolCalls[0])
	}
	if len(m.ReasoningDetails) != 5 || string(m.ReasoningDetails[4]) != "null" {
		t.Errorf("reasoningDetails = %q", m.ReasoningDetails)
	}
	if string(m.Extra["providerMeta"]) != `{"a":[1,2.50,1e3,"x"]}` || string(m.Extra["zz"]) != "null" {
		t.Errorf("extra = %q", m.Extra)
	}

	must(t, json.Unmarshal([]byte(canonicalMessages[4]), &m))
	if !m.Content.IsAbsent() || m.ToolCalls[0].Input == "" {
		t.Errorf("absent content / input: %+v", m)
	}
	must(t, json.Unmarshal([]byte(canonicalMessages[5]), &m))
	if m.HasToolCalls() || m.ToolCalls == nil {
		t.Errorf("empty toolCalls: %#v", m.ToolCalls)
	}
}

func TestDecodeIndentedOpaqueBlocksCompacted(t *testing.T) {
	in := `{"role":"assistant","reasoningDetails":[ { "type" : "thinking",
	  "signature": "s" } ],"extra": { "a" : 1 }}`
	var m Message
	must(t, json.Unmarshal([]byte(in), &m))
	out, _ := m.MarshalJSON()
	want := `{"role":"assistant","reasoningDetails":[{"type":"thinking","signature":"s"}],"extra":{"a":1}}`
	if string(out) != want {
		t.Errorf("got %s\nwant %s", out, want)
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"content":"x"}`, "role"},
		{`{"role":"robot"}`, "role"},
		{`{"role":7}`, "role"},
		{`{"role":"user","content":5}`, "content"},
		{`{"role":"user","content":{"type":"text"}}`, "content"},
		{`{"role":"user","content":[1]}`, "content[0]: part must be an object"},
		{`{"role":"assistant","toolCalls":{}}`, "toolCalls"},
		{`{"role":"assistant","toolCalls":[{"id":1,"name":"x"}]}`, "id"},
		{`{"role":"assistant","toolCalls":[null]}`, "toolCalls"},
		{`{"role":"tool","toolCallId":["x"]}`, "toolCallId"},
		{`{"role":"assistant","reasoningDetails":{}}`, "reasoningDetails"},
		{`{"role":"user","id":false}`, "id"},
		{`[]`, ""},
		{`null`, "object"},
	} {
		var m Message
		err := json.Unmarshal([]byte(tc.in), &m)
		if err == nil {
			t.Errorf("%s: decoded without error", tc.in)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %q does not name %q", tc.in, err, tc.want)
		}
	}
}

func TestContentKinds(t *testing.T) {
	for _, tc := range []struct {
		c              Content
		json           string
		absent, isText bool
		text           string
	}{
		{Content{}, "null", true, false, ""},
		{Text("s"), `"s"`, false, true, "s"},
		{Text(""), `""`, false, true, ""},
		{Parts(), "[]", false, false, ""},
		{Parts(TextPart("a"), TextPart("b")), `[{"type":"text","text":"a"},{"type":"text","text":"b"}]`, false, false, "ab"},
	} {
		b, _ := tc.c.MarshalJSON()
		if string(b) != tc.json || tc.c.IsAbsent() != tc.absent || tc.c.IsString() != tc.isText || tc.c.Text() != tc.text {
			t.Errorf("%#v: json %s absent %v string %v text %q", tc.c, b, tc.c.IsAbsent(), tc.c.IsString(), tc.c.Text())
		}
	}
	// Absent content is omitted; null content is written.
	b, _ := Message{Role: User}.MarshalJSON()
	if string(b) != `{"role":"user"}` {
		t.Errorf("absent content: %s", b)
	}
	var null Content
	must(t, null.UnmarshalJSON([]byte(" null ")))
	b, _ = Message{Role: User, Content: null}.MarshalJSON()
	if string(b) != `{"role":"user","content":null}` {
		t.Errorf("null content: %s", b)
	}
}

func TestConstructors(t *testing.T) {
	m := NewToolResult("call_1", "read_file", "body")
	b, _ := m.MarshalJSON()
	if string(b) != `{"role":"tool","content":"body","toolCallId":"call_1","toolName":"read_file"}` {
		t.Errorf("NewToolResult: %s", b)
	}
	if !Equal(NewText(User, "x"), Message{Role: User, Content: Text("x")}) || Equal(NewText(User, "x"), NewText(User, "y")) {
		t.Error("Equal")
	}
	for _, r := range []Role{System, User, Assistant, Tool} {
		if !r.Valid() {
			t.Errorf("%s not valid", r)
		}
	}
	if Role("robot").Valid() {
		t.Error("robot valid")
	}
}

func TestUsageJSON(t *testing.T) {
	in := `{"inputTokens":10,"outputTokens":2,"cacheReadTokens":5,"iterations":[{"type":"compaction","input_tokens":3}]}`
	var u Usage
	must(t, json.Unmarshal([]byte(in), &u))
	out, _ := json.Marshal(u)
	if string(out) != in {
		t.Errorf("usage: %s", out)
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	da := json.NewDecoder(bytes.NewReader(a))
	da.UseNumber()
	db := json.NewDecoder(bytes.NewReader(b))
	db.UseNumber()
	if err := da.Decode(&va); err != nil {
		t.Fatalf("decode %s: %v", a, err)
	}
	if err := db.Decode(&vb); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
