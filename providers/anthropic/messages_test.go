package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers/proxywire"
)

// agentBody is a request in Claude Code's shape: system blocks with
// breakpoints, a role "system" message, thinking, parallel calls, results
// with is_error, and the moving breakpoint on the last block.
const agentBody = `{"model":"claude-x","max_tokens":1000,"stream":true,` +
	`"system":[{"type":"text","text":"billing"},{"type":"text","text":"You are an agent.","cache_control":{"type":"ephemeral"}}],` +
	`"tools":[{"name":"Read","input_schema":{"type":"object"}}],` +
	`"metadata":{"user_id":"{\"device_id\":\"d\",\"session_id\":\"s-1\"}"},` +
	`"messages":[` +
	`{"role":"user","content":[{"type":"text","text":"<system-reminder>x</system-reminder>"},{"type":"text","text":"Read two files."}]},` +
	`{"role":"system","content":"env: linux"},` +
	`{"role":"assistant","content":[{"type":"thinking","thinking":"plan","signature":"sig"},{"type":"text","text":"Reading."},` +
	`{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/a"}},{"type":"tool_use","id":"t2","name":"Read","input":{"file_path":"/b"}}]},` +
	`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"AAAA","is_error":false},` +
	`{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"BBBB"}]}]},` +
	`{"role":"assistant","content":[{"type":"tool_use","id":"t3","name":"Read","input":{"file_path":"/c"}}]},` +
	`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t3","content":"CCCC","cache_control":{"type":"ephemeral"}}]}` +
	`]}`

func TestDecodeMessages(t *testing.T) {
	r, err := DecodeMessages([]byte(agentBody), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Model != "claude-x" || !r.Stream || len(r.Tools) != 1 || r.SessionHint != "s-1" || r.System != "billing\nYou are an agent." {
		t.Errorf("request fields %q %v %d %q %q", r.Model, r.Stream, len(r.Tools), r.SessionHint, r.System)
	}
	var roles []string
	for _, m := range r.Messages {
		roles = append(roles, string(m.Role))
	}
	if got := strings.Join(roles, " "); got != "user system assistant tool tool assistant tool" {
		t.Fatalf("roles %q", got)
	}
	a := r.Messages[2]
	if a.Text() != "Reading." || len(a.ToolCalls) != 2 || a.ToolCalls[1].Arguments != `{"file_path":"/b"}` || len(a.ReasoningDetails) != 1 {
		t.Errorf("assistant %+v", a)
	}
	if tr := r.Messages[4]; tr.ToolCallID != "t2" || tr.ToolName != "Read" || tr.Text() != "BBBB" {
		t.Errorf("tool result %+v", tr)
	}
	if bytes.Contains([]byte(r.Messages[6].Text()), []byte("cache_control")) {
		t.Error("cache_control leaked into the content")
	}
}

func TestEncodeKeepsUnchangedBytes(t *testing.T) {
	r, err := DecodeMessages([]byte(agentBody), proxywire.NewDecodeCache(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	body, changed, err := r.Encode(r.Messages)
	if err != nil || changed || string(body) != agentBody {
		t.Fatalf("identity projection: changed=%v err=%v\n%s", changed, err, body)
	}

	// Clear t1's result: only that block changes; is_error stays.
	proj := append([]history.Message(nil), r.Messages...)
	proj[3] = proj[3].WithContent(history.Text("[tool result cleared: Read t1]"))
	body, changed, err = r.Encode(proj)
	if err != nil || !changed || !json.Valid(body) {
		t.Fatalf("cleared: changed=%v err=%v valid=%v", changed, err, json.Valid(body))
	}
	first := strings.Index(agentBody, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"`)
	if string(body[:first]) != agentBody[:first] {
		t.Error("bytes before the changed message differ")
	}
	tail := agentBody[strings.Index(agentBody, `,{"role":"assistant","content":[{"type":"tool_use","id":"t3"`):]
	if !strings.HasSuffix(string(body), tail) {
		t.Error("bytes after the changed message differ")
	}
	if !bytes.Contains(body, []byte(`"content":"[tool result cleared: Read t1]","is_error":false`)) {
		t.Errorf("the cleared block lost its fields: %s", body)
	}

	// A summary standing for the first four messages, then the tail.
	sum := history.NewText(history.System, "Previous conversation summary:\nread /a and /b")
	proj = append([]history.Message{sum}, r.Messages[5:]...)
	body, _, err = r.Encode(proj)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
		System json.RawMessage `json:"system"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Messages) != 3 || out.Messages[0].Role != "user" || !bytes.Contains(out.Messages[0].Content[0], []byte("read /a and /b")) {
		t.Fatalf("summary projection: %s", body)
	}
	if !bytes.Contains(body, []byte(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t3","content":"CCCC","cache_control":{"type":"ephemeral"}}]}`)) {
		t.Error("the last message lost its breakpoint")
	}
	if string(out.System) != `[{"type":"text","text":"billing"},{"type":"text","text":"You are an agent.","cache_control":{"type":"ephemeral"}}]` {
		t.Errorf("system changed: %s", out.System)
	}
}

func TestCachedDecodeIsTheSame(t *testing.T) {
	cache := proxywire.NewDecodeCache(1 << 20)
	a, err := DecodeMessages([]byte(agentBody), cache)
	if err != nil {
		t.Fatal(err)
	}
	b, err := DecodeMessages([]byte(agentBody), cache)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Messages {
		if !history.Equal(a.Messages[i], b.Messages[i]) {
			t.Errorf("message %d differs when decoded from the cache", i)
		}
	}
}

// TestRecordedAnswerMatchesReplay: the assistant message recorded from a
// stream has the same digest as the same message replayed by the agent in
// its next request, so the conversation is seen as extended.
func TestRecordedAnswerMatchesReplay(t *testing.T) {
	stream := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":50,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Read\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ing.\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t9\",\"name\":\"Read\",\"input\":{}}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"file_path\\\":\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"/z\\\"}\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":9}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	rec := MessagesRecorder()
	for i := 0; i < len(stream); i += 17 { // arbitrary chunking
		rec.Write([]byte(stream[i:min(i+17, len(stream))]))
	}
	got, err := rec.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got.StopReason != "tool_use" || got.Usage == nil || got.Usage.InputTokens != 50 || got.Usage.OutputTokens != 9 {
		t.Errorf("recorded %+v %+v", got, got.Usage)
	}
	replay := `{"model":"m","messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"text","text":"Reading."},{"type":"tool_use","id":"t9","name":"Read","input":{"file_path":"/z"}}]}]}`
	r, err := DecodeMessages([]byte(replay), nil)
	if err != nil {
		t.Fatal(err)
	}
	if history.MessageKey(&got.Message) != history.MessageKey(&r.Messages[1]) {
		t.Errorf("recorded %+v and replayed %+v differ", got.Message, r.Messages[1])
	}

	cut := MessagesRecorder()
	cut.Write([]byte(stream[:len(stream)/2]))
	if _, err := cut.Close(); err == nil {
		t.Error("a stream cut before message_stop was recorded")
	}
}

func TestDecodeRejectsBadShapes(t *testing.T) {
	for _, body := range []string{
		`[]`, `{"messages":"x"}`, `{"messages":[{"role":"tool","content":"x"}]}`,
		`{"messages":[{"role":"user","content":5}]}`, `{"messages":[1]}`, `{"model":"m"`,
	} {
		if _, err := DecodeMessages([]byte(body), nil); err == nil {
			t.Errorf("%s decoded without error", body)
		}
	}
}

// TestLongStreamRecordedWhole: an answer streamed in many small deltas
// (text, thinking, signature, a field an unknown delta extends, escapes
// split across deltas) is recorded as the same message as the whole answer
// sent at once.
func TestLongStreamRecordedWhole(t *testing.T) {
	ev := func(name string, v any) string {
		b, _ := json.Marshal(v)
		return "event: " + name + "\ndata: " + string(b) + "\n\n"
	}
	delta := func(i int, d map[string]any) string {
		return ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d})
	}
	var text, thinking strings.Builder
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&text, "line %d: \"quoted\" \\ back\u2028slash\ttab é ", i)
		fmt.Fprintf(&thinking, "step %d\n", i)
	}
	var sb strings.Builder
	sb.WriteString(ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "m", "type": "message", "role": "assistant", "content": []any{},
		"usage": map[string]int{"input_tokens": 10, "output_tokens": 1}}}))
	sb.WriteString(ev("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": "", "note": "n:"}}))
	for r := []rune(thinking.String()); len(r) > 0; {
		n := min(7, len(r))
		sb.WriteString(delta(0, map[string]any{"type": "thinking_delta", "thinking": string(r[:n])}))
		r = r[n:]
	}
	for _, part := range []string{"c2ln", "LWFi", "Yw=="} {
		sb.WriteString(delta(0, map[string]any{"type": "signature_delta", "signature": part}))
		sb.WriteString(delta(0, map[string]any{"type": "note_delta", "note": part}))
	}
	sb.WriteString(ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0}))
	sb.WriteString(ev("content_block_start", map[string]any{"type": "content_block_start", "index": 1, "content_block": map[string]any{"type": "text", "text": ""}}))
	for r := []rune(text.String()); len(r) > 0; {
		n := min(5, len(r))
		sb.WriteString(delta(1, map[string]any{"type": "text_delta", "text": string(r[:n])}))
		r = r[n:]
	}
	sb.WriteString(ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": 1}))
	sb.WriteString(ev("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "end_turn"}, "usage": map[string]int{"output_tokens": 900}}))
	sb.WriteString(ev("message_stop", map[string]any{"type": "message_stop"}))

	rec := MessagesRecorder()
	stream := sb.String()
	for i := 0; i < len(stream); i += 4096 {
		rec.Write([]byte(stream[i:min(i+4096, len(stream))]))
	}
	got, err := rec.Close()
	if err != nil {
		t.Fatal(err)
	}
	whole, _ := json.Marshal(map[string]any{"id": "m", "type": "message", "role": "assistant", "stop_reason": "end_turn",
		"content": []any{
			map[string]any{"type": "thinking", "thinking": thinking.String(), "signature": "c2ln" + "LWFi" + "Yw==", "note": "n:c2lnLWFiYw=="},
			map[string]any{"type": "text", "text": text.String()},
		},
		"usage": map[string]int{"input_tokens": 10, "output_tokens": 900}})
	want, err := RecordMessage(whole)
	if err != nil {
		t.Fatal(err)
	}
	if !history.Equal(got.Message, want.Message) || history.MessageKey(&got.Message) != history.MessageKey(&want.Message) {
		t.Errorf("streamed answer recorded as\n%+v\nwant\n%+v", got.Message, want.Message)
	}
	if got.Message.Text() != text.String() || got.Message.Reasoning != thinking.String() {
		t.Errorf("text or thinking lost: %d/%d bytes of text, %d/%d of thinking", len(got.Message.Text()), text.Len(), len(got.Message.Reasoning), thinking.Len())
	}
	if got.StopReason != "end_turn" || got.Usage == nil || got.Usage.OutputTokens != 900 {
		t.Errorf("stop reason %q, usage %+v", got.StopReason, got.Usage)
	}
}

// TestDecodedMessagesCarryEstimates: with the sessions' estimator, the
// messages of a request carry their token estimates, the same as a fresh
// estimate of each, when decoded and when taken from the cache again, so a
// resent message (an assistant message too) is not tokenized again.
func TestDecodedMessagesCarryEstimates(t *testing.T) {
	plain, err := DecodeMessages([]byte(agentBody), nil)
	if err != nil {
		t.Fatal(err)
	}
	fresh := history.NewEstimator(history.O200k)
	cache := proxywire.NewDecodeCache(1 << 20)
	if r, _ := DecodeMessages([]byte(agentBody), cache); r != nil {
		if _, ok := fresh.Cached(&r.Messages[0]); ok {
			t.Error("a decode without an estimator estimated")
		}
	}
	cache = proxywire.NewDecodeCache(1 << 20).Estimating(history.NewEstimator(history.O200k))
	for pass := 0; pass < 2; pass++ {
		c := cache
		if pass == 1 {
			c = cache.Estimating(nil) // the same elements: found with their estimates
		}
		r, err := DecodeMessages([]byte(agentBody), c)
		if err != nil {
			t.Fatal(err)
		}
		for i := range r.Messages {
			n, ok := fresh.Cached(&r.Messages[i])
			if want := fresh.Message(&plain.Messages[i]); !ok || n != want {
				t.Errorf("pass %d, message %d (%s): estimate %d, %v; want %d", pass, i, r.Messages[i].Role, n, ok, want)
			}
		}
	}
	if _, ok := history.NewEstimator(history.Approx).Cached(&plain.Messages[0]); ok {
		t.Error("a message decoded without an estimator carries an approx estimate")
	}
}
