package openai

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
)

// codexBody is a stateless Responses request in Codex's shape.
const codexBody = `{"model":"gpt-x","instructions":"You are Codex.","stream":true,"store":false,"prompt_cache_key":"thread-1",` +
	`"tools":[{"type":"function","name":"exec_command","parameters":{"type":"object"}}],"input":[` +
	`{"type":"additional_tools","role":"developer","tools":[]},` +
	`{"type":"message","role":"developer","content":[{"type":"input_text","text":"rules"}]},` +
	`{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context/>"}]},` +
	`{"type":"message","role":"user","content":[{"type":"input_text","text":"cat the files"}]},` +
	`{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"enc"},` +
	`{"type":"function_call","call_id":"c1","name":"exec_command","arguments":"{\"cmd\":\"cat a\"}"},` +
	`{"type":"function_call","call_id":"c2","name":"exec_command","arguments":"{\"cmd\":\"cat b\"}"},` +
	`{"type":"function_call_output","call_id":"c1","output":"AAAA"},` +
	`{"type":"function_call_output","call_id":"c2","output":"BBBB"},` +
	`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Done."}]}` +
	`]}`

func TestDecodeResponses(t *testing.T) {
	r, err := DecodeResponses([]byte(codexBody), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Model != "gpt-x" || r.System != "You are Codex." || r.SessionHint != "thread-1" || r.Stateful {
		t.Errorf("fields %q %q %q %v", r.Model, r.System, r.SessionHint, r.Stateful)
	}
	var roles []string
	for _, m := range r.Messages {
		roles = append(roles, string(m.Role))
	}
	if got := strings.Join(roles, " "); got != "system system user user assistant tool tool assistant" {
		t.Fatalf("roles %q", got)
	}
	a := r.Messages[4]
	if len(a.ToolCalls) != 2 || a.ToolCalls[0].Arguments != `{"cmd":"cat a"}` || len(a.ReasoningDetails) != 1 {
		t.Errorf("assistant run %+v", a)
	}
	if tr := r.Messages[6]; tr.ToolCallID != "c2" || tr.ToolName != "exec_command" || tr.Text() != "BBBB" {
		t.Errorf("output %+v", tr)
	}
}

func TestEncodeResponses(t *testing.T) {
	r, err := DecodeResponses([]byte(codexBody), nil)
	if err != nil {
		t.Fatal(err)
	}
	if body, changed, err := r.Encode(r.Messages); err != nil || changed || string(body) != codexBody {
		t.Fatalf("identity: changed=%v err=%v", changed, err)
	}
	proj := append([]history.Message(nil), r.Messages...)
	proj[5] = proj[5].WithContent(history.Text("[tool result cleared]"))
	body, changed, err := r.Encode(proj)
	if err != nil || !changed || !json.Valid(body) {
		t.Fatalf("cleared: %v %v", changed, err)
	}
	at := strings.Index(codexBody, `{"type":"function_call_output","call_id":"c1"`)
	if string(body[:at]) != codexBody[:at] || !bytes.Contains(body, []byte(`"output":"[tool result cleared]"`)) {
		t.Errorf("cleared projection: %s", body)
	}
	// A summary replacing the conversation before the second call batch;
	// the additional_tools item stays first.
	sum := history.NewText(history.System, "Previous conversation summary:\nread a and b")
	proj = append([]history.Message{r.Messages[0], sum}, r.Messages[7:]...)
	body, _, err = r.Encode(proj)
	if err != nil || !json.Valid(body) {
		t.Fatal(err)
	}
	var out struct {
		Input []map[string]any `json:"input"`
	}
	json.Unmarshal(body, &out)
	if len(out.Input) != 3 || out.Input[0]["type"] != "additional_tools" || out.Input[1]["role"] != "system" || out.Input[2]["role"] != "assistant" {
		t.Errorf("summary projection: %s", body)
	}
}

func TestStatefulResponses(t *testing.T) {
	r, err := DecodeResponses([]byte(`{"model":"m","previous_response_id":"resp_1","input":"more"}`), nil)
	if err != nil || !r.Stateful {
		t.Fatalf("stateful: %v %+v", err, r)
	}
	if _, err := DecodeResponses([]byte(`{"model":"m","input":"hello"}`), nil); err == nil {
		t.Error("a string input decoded as a conversation")
	}
}

func TestResponsesRecorderMatchesReplay(t *testing.T) {
	item := `{"type":"function_call","id":"fc_1","status":"completed","call_id":"c9","name":"exec_command","arguments":"{\"cmd\":\"ls\"}"}`
	stream := "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r\",\"output\":[]}}\n\n" +
		"event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":" + item + "}\n\n" +
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\",\"status\":\"completed\",\"output\":[" + item + "],\"usage\":{\"input_tokens\":70,\"output_tokens\":5,\"input_tokens_details\":{\"cached_tokens\":20}}}}\n\n"
	rec := ResponsesRecorder()
	rec.Write([]byte(stream))
	got, err := rec.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got.Usage.InputTokens != 70 || got.Usage.CacheReadTokens != 20 || len(got.Message.ToolCalls) != 1 {
		t.Errorf("recorded %+v", got)
	}
	r, err := DecodeResponses([]byte(`{"model":"m","input":[{"type":"message","role":"user","content":"go"},`+item+`]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if history.MessageKey(&got.Message) != history.MessageKey(&r.Messages[1]) {
		t.Errorf("recorded %+v, replayed %+v", got.Message, r.Messages[1])
	}
	failed := ResponsesRecorder()
	failed.Write([]byte("event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\"}}\n\n"))
	if _, err := failed.Close(); err == nil {
		t.Error("a failed response was recorded")
	}
}
