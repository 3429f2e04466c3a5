package chatcompat

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
)

const chatBody = `{"model":"m","stream":true,"tools":[{"type":"function","function":{"name":"read","parameters":{}}}],"messages":[` +
	`{"role":"system","content":"You are opencode."},` +
	`{"role":"user","content":[{"type":"text","text":"read it"}]},` +
	`{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{\"filePath\":\"/a\"}"}}]},` +
	`{"role":"tool","tool_call_id":"c1","content":"AAAA"},` +
	`{"role":"assistant","content":"Done."}]}`

func TestChatWire(t *testing.T) {
	r, err := DecodeChat([]byte(chatBody), nil)
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range r.Messages {
		roles = append(roles, string(m.Role))
	}
	if got := strings.Join(roles, " "); got != "system user assistant tool assistant" || r.System != "You are opencode." {
		t.Fatalf("roles %q system %q", got, r.System)
	}
	if tr := r.Messages[3]; tr.ToolName != "read" || tr.Text() != "AAAA" {
		t.Errorf("tool %+v", tr)
	}
	if body, changed, err := r.Encode(r.Messages); err != nil || changed || string(body) != chatBody {
		t.Fatalf("identity: %v %v", changed, err)
	}
	proj := append([]history.Message(nil), r.Messages...)
	proj[3] = proj[3].WithContent(history.Text("[tool result cleared]"))
	body, changed, err := r.Encode(proj)
	if err != nil || !changed || !json.Valid(body) || !bytes.Contains(body, []byte(`"content":"[tool result cleared]"`)) {
		t.Fatalf("cleared: %v %v %s", changed, err, body)
	}
	at := strings.Index(chatBody, `{"role":"tool"`)
	if string(body[:at]) != chatBody[:at] {
		t.Error("bytes before the change differ")
	}
}

func TestChatRecorderMatchesReplay(t *testing.T) {
	stream := `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c7","type":"function","function":{"name":"read","arguments":""}}]}}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"filePath\":\"/q\"}"}}]}}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n" +
		`data: {"choices":[],"usage":{"prompt_tokens":40,"completion_tokens":3}}` + "\n\n" +
		"data: [DONE]\n\n"
	rec := ChatRecorder()
	rec.Write([]byte(stream))
	got, err := rec.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got.StopReason != "tool_calls" || got.Usage.InputTokens != 40 {
		t.Errorf("recorded %+v", got)
	}
	r, err := DecodeChat([]byte(`{"messages":[{"role":"user","content":"x"},{"role":"assistant","content":null,"tool_calls":[{"id":"c7","type":"function","function":{"name":"read","arguments":"{\"filePath\":\"/q\"}"}}]}]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if history.MessageKey(&got.Message) != history.MessageKey(&r.Messages[1]) {
		t.Errorf("recorded %+v, replayed %+v", got.Message, r.Messages[1])
	}
}

// TestChatRecorderKeepsThoughtSignature: a streamed tool call's
// extra_content (Gemini's thought signature, which Gemini requires back on
// the next request) is recorded as the non-streamed answer records it.
func TestChatRecorderKeepsThoughtSignature(t *testing.T) {
	stream := `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"read","arguments":"{}"},"extra_content":{"google":{"thought_signature":"sig-abc"}}}]}}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n" +
		"data: [DONE]\n\n"
	rec := ChatRecorder()
	rec.Write([]byte(stream))
	streamed, err := rec.Close()
	if err != nil {
		t.Fatal(err)
	}
	whole, err := RecordChat([]byte(`{"choices":[{"index":0,"message":{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{}"},"extra_content":{"google":{"thought_signature":"sig-abc"}}}]},"finish_reason":"tool_calls"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(streamed.Message.ToolCalls) != 1 || streamed.Message.ToolCalls[0].ThoughtSignature != "sig-abc" {
		t.Fatalf("streamed tool calls %+v: the thought signature is lost", streamed.Message.ToolCalls)
	}
	if history.MessageKey(&streamed.Message) != history.MessageKey(&whole.Message) {
		t.Errorf("streamed %+v, whole %+v", streamed.Message, whole.Message)
	}
}
