package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/httpapi"
	"github.com/vtcode/vtcode-ls/providers/providertest"
)

const testKey = "sk-test-0123456789abcdefSECRET"

func newClient(t *testing.T, cfg Config) (*Client, *providertest.Sleeper) {
	t.Helper()
	sl := providertest.Prepare(&cfg.Endpoint, testKey, "gpt-5.1-codex")
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, sl
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func sampleHistory() []history.Message {
	return []history.Message{
		history.NewText(history.System, "Previous conversation summary:\nbuilt the parser"),
		history.NewText(history.User, "fix the failing test"),
		{
			Role:    history.Assistant,
			Content: history.Text("Running the tests."),
			ReasoningDetails: []json.RawMessage{
				json.RawMessage(`{"type":"compaction","id":"cmp_1","encrypted_content":"ENC=="}`),
				json.RawMessage(`{"type":"thinking","thinking":"anthropic only","signature":"sig"}`),
				json.RawMessage(`"{\"type\":\"reasoning\",\"id\":\"rs_1\",\"summary\":[]}"`),
			},
			ToolCalls: []history.ToolCall{
				{ID: "call_1", Name: "shell", Arguments: `{"cmd":"go test ./..."}`},
				{ID: "call_2", Name: "apply_patch", Input: "*** Begin Patch"},
			},
		},
		history.NewToolResult("call_1", "shell", "exit 1: FAIL"),
		history.NewToolResult("call_2", "apply_patch", "done"),
		history.NewText(history.User, "continue"),
	}
}

func TestGenerateRequest(t *testing.T) {
	srv := providertest.NewServer(t, providertest.ResponsesText("the summary", 1200, 80))
	c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL + "/v1", Header: http.Header{"OpenAI-Organization": {"org-1"}}}})
	_, err := c.Generate(context.Background(), &providers.Request{
		System:          "You are a summarizer.",
		Messages:        sampleHistory(),
		MaxOutputTokens: 2000,
		Tools: []json.RawMessage{
			json.RawMessage(`{"type":"function","function":{"name":"shell","description":"run","parameters":{"type":"object"}}}`),
			json.RawMessage(`{"type":"function","name":"apply_patch","parameters":{"type":"object"}}`),
			json.RawMessage(`{"type":"web_search"}`),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	req := srv.Last()
	if req.Method != "POST" || req.Path != "/v1/responses" {
		t.Errorf("request = %s %s, want POST /v1/responses", req.Method, req.Path)
	}
	for k, want := range map[string]string{
		"Authorization": "Bearer " + testKey, "Content-Type": "application/json", "OpenAI-Organization": "org-1",
	} {
		if got := req.Header.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	want := providertest.MustJSON(t, `{
		"model":"gpt-5.1-codex",
		"instructions":"You are a summarizer.\n\nPrevious conversation summary:\nbuilt the parser",
		"input":[
			{"type":"message","role":"user","content":"fix the failing test"},
			{"type":"compaction","id":"cmp_1","encrypted_content":"ENC=="},
			{"type":"reasoning","id":"rs_1","summary":[]},
			{"type":"message","role":"assistant","content":"Running the tests."},
			{"type":"function_call","call_id":"call_1","name":"shell","arguments":"{\"cmd\":\"go test ./...\"}"},
			{"type":"custom_tool_call","call_id":"call_2","name":"apply_patch","input":"*** Begin Patch"},
			{"type":"function_call_output","call_id":"call_1","output":"exit 1: FAIL"},
			{"type":"custom_tool_call_output","call_id":"call_2","output":"done"},
			{"type":"message","role":"user","content":"continue"}
		],
		"tools":[
			{"type":"function","name":"shell","description":"run","parameters":{"type":"object"},"strict":false},
			{"type":"function","name":"apply_patch","parameters":{"type":"object"}},
			{"type":"web_search"}
		],
		"tool_choice":"none",
		"max_output_tokens":2000,
		"store":false
	}`)
	if diff := cmp.Diff(want, providertest.MustJSON(t, string(req.Body))); diff != "" {
		t.Errorf("body mismatch (-want +got):\n%s", diff)
	}
}

func TestGenerateParsesResponse(t *testing.T) {
	srv := providertest.NewServer(t, providertest.ResponsesText("the summary", 1200, 80))
	c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL}})
	res, err := c.Generate(context.Background(), &providers.Request{Messages: []history.Message{history.NewText(history.User, "hi")}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Message.Text(); got != "the summary" {
		t.Errorf("text = %q", got)
	}
	if res.Message.Role != history.Assistant || res.Message.Reasoning != "Summarizing the session." {
		t.Errorf("message = %+v", res.Message)
	}
	if len(res.Message.ReasoningDetails) != 1 || !strings.Contains(string(res.Message.ReasoningDetails[0]), `"encrypted_content":"gAAAAfakeEncrypted=="`) {
		t.Errorf("reasoning details = %s", res.Message.ReasoningDetails)
	}
	if res.Usage.InputTokens != 1200 || res.Usage.OutputTokens != 80 || res.StopReason != "completed" {
		t.Errorf("usage %+v stop %q", res.Usage, res.StopReason)
	}
	if body := srv.Last().JSON(); body["tools"] != nil || body["tool_choice"] != nil || body["stream"] != nil {
		t.Errorf("unexpected fields without tools: %v", keys(body))
	}
}

func TestGenerateConsumesStream(t *testing.T) {
	srv := providertest.NewServer(t, providertest.ResponsesStream("streamed summary text"), providertest.ResponsesStream("again"))
	c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL}})
	res, err := c.Generate(context.Background(), &providers.Request{Messages: []history.Message{history.NewText(history.User, "hi")}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Message.Text() != "streamed summary text" || res.Usage.InputTokens != 900 || res.Usage.CacheReadTokens != 512 {
		t.Errorf("got %q usage %+v", res.Message.Text(), res.Usage)
	}
	if srv.Last().JSON()["stream"] != nil {
		t.Error("stream sent without Config.Stream")
	}

	c2, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL, Stream: true}})
	res, err = c2.Generate(context.Background(), &providers.Request{Messages: []history.Message{history.NewText(history.User, "hi")}})
	if err != nil || res.Message.Text() != "again" {
		t.Fatalf("stream: %v %v", res, err)
	}
	last := srv.Last()
	if last.JSON()["stream"] != true || last.Header.Get("Accept") != "text/event-stream" {
		t.Errorf("stream request: stream=%v accept=%q", last.JSON()["stream"], last.Header.Get("Accept"))
	}
}

func TestGenerateStreamFromItemsOnly(t *testing.T) {
	// A proxy whose response.completed carries no output: items are rebuilt
	// from output_item.done events.
	srv := providertest.NewServer(t, providertest.SSE(
		providertest.Event{Name: "response.output_item.done", Data: `{"type":"response.output_item.done","output_index":1,"item":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"second"}]}}`},
		providertest.Event{Name: "response.output_item.done", Data: `{"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning","id":"rs_9","summary":[{"type":"summary_text","text":"think"}]}}`},
		providertest.Event{Name: "response.completed", Data: `{"type":"response.completed","response":{"id":"r","status":"completed","output":[],"usage":{"input_tokens":5,"output_tokens":1}}}`},
	))
	c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL}})
	res, err := c.Generate(context.Background(), &providers.Request{Messages: []history.Message{history.NewText(history.User, "hi")}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Message.Text() != "second" || res.Message.Reasoning != "think" {
		t.Errorf("got %+v", res.Message)
	}
}

func TestCompactPayloadExactFields(t *testing.T) {
	srv := providertest.NewServer(t,
		providertest.ResponsesCompacted(providertest.UserItem("fix the failing test"), providertest.CompactionItem("cmp_2", "ENC2")),
		providertest.ResponsesCompacted(providertest.CompactionItem("cmp_3", "ENC3")))
	c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL + "/v1"}})
	_, err := c.Compact(context.Background(), &providers.CompactRequest{
		Model:                "gpt-5.2",
		Input:                sampleHistory(),
		Instructions:         "keep file paths",
		ServiceTier:          "priority",
		PromptCacheKey:       "session-42",
		PromptCacheOptions:   json.RawMessage(`{"mode":"prefix"}`),
		PromptCacheRetention: "24h",
	})
	if err != nil {
		t.Fatal(err)
	}
	req := srv.Last()
	if req.Method != "POST" || req.Path != "/v1/responses/compact" {
		t.Errorf("request = %s %s", req.Method, req.Path)
	}
	if req.Header.Get("Authorization") != "Bearer "+testKey || req.Header.Get("Content-Type") != "application/json" {
		t.Errorf("headers = %v", req.Header)
	}
	body := req.JSON()
	wantKeys := []string{"input", "instructions", "model", "prompt_cache_key", "prompt_cache_options", "prompt_cache_retention", "service_tier"}
	if diff := cmp.Diff(wantKeys, keys(body)); diff != "" {
		t.Errorf("compact payload keys (-want +got):\n%s", diff)
	}
	for _, banned := range []string{"stream", "max_output_tokens", "store", "include", "reasoning", "text", "previous_response_id", "tools", "tool_choice"} {
		if _, ok := body[banned]; ok {
			t.Errorf("compact payload has %q", banned)
		}
	}
	if body["model"] != "gpt-5.2" || body["instructions"] != "keep file paths" || body["service_tier"] != "priority" ||
		body["prompt_cache_key"] != "session-42" || body["prompt_cache_retention"] != "24h" {
		t.Errorf("payload values = %v", body)
	}
	if diff := cmp.Diff(providertest.MustJSON(t, `{"mode":"prefix"}`), body["prompt_cache_options"]); diff != "" {
		t.Error(diff)
	}
	input := body["input"].([]any)
	if first := input[0].(map[string]any); first["role"] != "system" || first["content"] != "Previous conversation summary:\nbuilt the parser" {
		t.Errorf("system message not kept in place: %v", first)
	}

	// Minimal request: only model and input.
	if _, err := c.Compact(context.Background(), &providers.CompactRequest{Input: sampleHistory()[1:2]}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"input", "model"}, keys(srv.Last().JSON())); diff != "" {
		t.Errorf("minimal payload keys (-want +got):\n%s", diff)
	}
}

func TestCompactParsesOutput(t *testing.T) {
	items := []string{
		`{"type":"message","role":"developer","content":[{"type":"input_text","text":"rules"}]}`,
		providertest.UserItem("fix the failing test"),
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Running."}]}`,
		`{"type":"function_call","id":"fc_1","call_id":"call_1","name":"shell","arguments":"{\"cmd\":\"ls\"}"}`,
		`{"type":"function_call","name":"shell","arguments":"{}"}`,
		`{"type":"function_call_output","call_id":"call_1","output":"a.go"}`,
		`{"type":"function_call_output","output":[{"type":"input_text","text":"b.go"}]}`,
		`{"type":"compaction","id":"cmp_1","encrypted_content":"gAAA==","created_by":"server"}`,
		`{"type":"function_call","call_id":"call_9","name":"read","arguments":"{}"}`,
	}
	srv := providertest.NewServer(t, providertest.ResponsesCompacted(items...))
	c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL}})
	res, err := c.Compact(context.Background(), &providers.CompactRequest{Input: sampleHistory()})
	if err != nil {
		t.Fatal(err)
	}
	want := []history.Message{
		history.NewText(history.System, "rules"),
		history.NewText(history.User, "fix the failing test"),
		{Role: history.Assistant, Content: history.Text("Running."), ToolCalls: []history.ToolCall{
			{ID: "call_1", Name: "shell", Arguments: `{"cmd":"ls"}`},
			{ID: CompactedCallID, Name: "shell", Arguments: "{}"},
		}},
		history.NewToolResult("call_1", "shell", "a.go"),
		history.NewToolResult(CompactedCallID, "shell", "b.go"),
		{Role: history.Assistant, ReasoningDetails: []json.RawMessage{json.RawMessage(`{"type":"compaction","id":"cmp_1","encrypted_content":"gAAA==","created_by":"server"}`)}},
		{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: "call_9", Name: "read", Arguments: "{}"}}},
	}
	if len(res.Output) != len(want) {
		t.Fatalf("got %d messages, want %d: %s", len(res.Output), len(want), dump(res.Output))
	}
	for i := range want {
		if !history.Equal(want[i], res.Output[i]) {
			t.Errorf("message %d:\n got %s\nwant %s", i, dump(res.Output[i:i+1]), dump(want[i:i+1]))
		}
	}
	if res.Usage.InputTokens != 139000 || res.Usage.OutputTokens != 4200 {
		t.Errorf("usage = %+v", res.Usage)
	}

	// The opaque item is kept whole in the history, and replayed in its
	// input form: type, id and encrypted_content only (created_by is an
	// output field).
	srv.Push(providertest.ResponsesText("ok", 1, 1))
	if _, err := c.Generate(context.Background(), &providers.Request{Messages: res.Output}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(srv.Last().Body), `{"type":"compaction","id":"cmp_1","encrypted_content":"gAAA=="}`) || strings.Contains(string(srv.Last().Body), "created_by") {
		t.Errorf("compaction item not replayed in its input form: %s", srv.Last().Body)
	}
}

// TestToolStrictCarried: a translated function tool carries strict: the
// chat form's own value (false too), else false, since a Responses function
// tool without strict is strict and would refuse a schema the chat route
// accepted. A Responses tool's own strict passes; the chat client keeps
// a strict flag it is given.
func TestToolStrictCarried(t *testing.T) {
	srv := providertest.NewServer(t, providertest.ResponsesText("ok", 1, 1))
	c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL}})
	_, err := c.Generate(context.Background(), &providers.Request{Messages: sampleHistory(), Tools: []json.RawMessage{
		json.RawMessage(`{"type":"function","function":{"name":"a","parameters":{"type":"object"},"strict":false}}`),
		json.RawMessage(`{"type":"function","function":{"name":"b","parameters":{"type":"object","additionalProperties":false},"strict":true}}`),
		json.RawMessage(`{"type":"function","function":{"name":"c","parameters":{"type":"object"}}}`),
		json.RawMessage(`{"name":"d","input_schema":{"type":"object"}}`),
		json.RawMessage(`{"type":"function","name":"e","parameters":{"type":"object"},"strict":true}`),
	}})
	if err != nil {
		t.Fatal(err)
	}
	tools, _ := srv.Last().JSON()["tools"].([]any)
	want := map[string]any{"a": false, "b": true, "c": false, "d": false, "e": true}
	if len(tools) != len(want) {
		t.Fatalf("tools %v", tools)
	}
	for _, tl := range tools {
		m := tl.(map[string]any)
		name := m["name"].(string)
		if got, ok := m["strict"]; !ok || got != want[name] {
			t.Errorf("tool %s: strict %v (present %v), want %v", name, got, ok, want[name])
		}
	}
}

// TestPhaseKeptOnReplay: the phase of an assistant output message
// ("commentary", "final_answer") is kept on the history message and sent
// back with it, as the Responses API asks for gpt-5.3-codex and later.
func TestPhaseKeptOnReplay(t *testing.T) {
	srv := providertest.NewServer(t, providertest.JSON(200, `{"id":"r","object":"response","status":"completed","output":[`+
		`{"type":"message","id":"m1","role":"assistant","status":"completed","phase":"final_answer","content":[{"type":"output_text","text":"done"}]}],`+
		`"usage":{"input_tokens":3,"output_tokens":1}}`), providertest.ResponsesText("ok", 1, 1))
	c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL}})
	res, err := c.Generate(context.Background(), &providers.Request{Messages: []history.Message{history.NewText(history.User, "go")}})
	if err != nil {
		t.Fatal(err)
	}
	// Through the store's JSON form and back, as a session would keep it.
	b, _ := json.Marshal(res.Message)
	var stored history.Message
	if err := json.Unmarshal(b, &stored); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Generate(context.Background(), &providers.Request{Messages: []history.Message{
		history.NewText(history.User, "go"), stored, history.NewText(history.User, "next")}}); err != nil {
		t.Fatal(err)
	}
	input, _ := srv.Last().JSON()["input"].([]any)
	if len(input) != 3 {
		t.Fatalf("input %v", input)
	}
	if got := input[1].(map[string]any); got["role"] != "assistant" || got["phase"] != "final_answer" {
		t.Errorf("assistant item %v: phase not sent back", got)
	}
	if _, ok := input[2].(map[string]any)["phase"]; ok {
		t.Errorf("user item has a phase: %v", input[2])
	}
}

func dump(msgs []history.Message) string {
	b, _ := json.Marshal(msgs)
	return string(b)
}

func TestCompactEmptyAndMissingOutput(t *testing.T) {
	srv := providertest.NewServer(t,
		providertest.ResponsesCompacted(),
		providertest.JSON(200, `{"id":"cmp_x","object":"response.compaction"}`),
		providertest.JSON(200, `{"id":"resp_x","object":"response","status":"completed","output":[]}`))
	c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL}})
	in := &providers.CompactRequest{Input: sampleHistory()}
	if _, err := c.Compact(context.Background(), in); providers.KindOf(err) != providers.KindEmpty {
		t.Errorf("empty output: %v, want kind empty", err)
	}
	if _, err := c.Compact(context.Background(), in); providers.KindOf(err) != providers.KindMalformed {
		t.Errorf("missing output: %v, want kind malformed", err)
	}
	if _, err := c.Generate(context.Background(), &providers.Request{Messages: sampleHistory()}); providers.KindOf(err) != providers.KindEmpty {
		t.Errorf("generate with empty output: %v, want kind empty", err)
	}
}

func TestBaseURLs(t *testing.T) {
	srv := providertest.NewServer(t,
		providertest.ResponsesCompacted(providertest.CompactionItem("a", "b")),
		providertest.ResponsesCompacted(providertest.CompactionItem("a", "b")),
		providertest.ResponsesText("x", 1, 1))
	for _, base := range []string{srv.URL, srv.URL + "/v1/"} {
		c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{Provider: "openresponses", BaseURL: base}})
		if _, err := c.Compact(context.Background(), &providers.CompactRequest{Input: sampleHistory()}); err != nil {
			t.Fatal(err)
		}
		if p := srv.Last().Path; p != "/v1/responses/compact" {
			t.Errorf("openresponses base %q: path %q, want /v1/responses/compact", base, p)
		}
	}
	c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{Provider: "xai", BaseURL: srv.URL + "/v1"}})
	if _, err := c.Generate(context.Background(), &providers.Request{Messages: sampleHistory()}); err != nil {
		t.Fatal(err)
	}
	if p := srv.Last().Path; p != "/v1/responses" {
		t.Errorf("xai path %q", p)
	}
	if r := c.Route(); r.Provider != "xai" || r.Model != "gpt-5.1-codex" {
		t.Errorf("route = %+v", r)
	}

	if _, err := New(Config{Endpoint: httpapi.Endpoint{Provider: "openresponses"}}); err == nil {
		t.Error("openresponses without base URL: no error")
	}
	if _, err := New(Config{Endpoint: httpapi.Endpoint{BaseURL: "ftp://x"}}); err == nil {
		t.Error("ftp base URL: no error")
	}
	for p, want := range map[string]string{
		"openai": "https://api.openai.com/v1/responses/compact",
		"vercel": "https://ai-gateway.vercel.sh/v1/responses/compact",
		"xai":    "https://api.x.ai/v1/responses/compact",
	} {
		c, err := New(Config{Endpoint: httpapi.Endpoint{Provider: p}})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.CompactURL(); got != want {
			t.Errorf("%s compact URL = %q, want %q", p, got, want)
		}
	}
}

func TestErrors(t *testing.T) {
	hist := &providers.Request{Messages: sampleHistory()}
	cases := []struct {
		name      string
		replies   []providertest.Reply
		kind      providers.Kind
		requests  int
		waits     []time.Duration
		inputToks int
	}{
		{
			name: "capacity",
			replies: []providertest.Reply{providertest.OpenAIError(400, "invalid_request_error", "context_length_exceeded",
				"Your input exceeds the context window of this model. Please adjust your input and try again.")},
			kind: providers.KindCapacity, requests: 1,
		},
		{
			name: "capacity legacy message",
			replies: []providertest.Reply{providertest.OpenAIError(400, "invalid_request_error", "",
				"This model's maximum context length is 128000 tokens. However, your messages resulted in 140213 tokens. Please reduce the length of the messages.")},
			kind: providers.KindCapacity, requests: 1, inputToks: 140213,
		},
		{
			name:    "auth",
			replies: []providertest.Reply{providertest.OpenAIError(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided.")},
			kind:    providers.KindAuth, requests: 1,
		},
		{
			name: "quota is not retried",
			replies: []providertest.Reply{providertest.OpenAIError(429, "insufficient_quota", "insufficient_quota",
				"You exceeded your current quota, please check your plan and billing details.")},
			kind: providers.KindQuota, requests: 1,
		},
		{
			name:    "rate limit honours retry-after then succeeds",
			replies: []providertest.Reply{providertest.RateLimited("7"), providertest.ResponsesText("ok", 1, 1)},
			kind:    "", requests: 2, waits: []time.Duration{7 * time.Second},
		},
		{
			name: "retry-after-ms",
			replies: []providertest.Reply{providertest.RateLimited("1").WithHeader("Retry-After-Ms", "1500"),
				providertest.ResponsesText("ok", 1, 1)},
			kind: "", requests: 2, waits: []time.Duration{1500 * time.Millisecond},
		},
		{
			name:    "retry-after beyond the cap is not waited for",
			replies: []providertest.Reply{providertest.RateLimited("3600")},
			kind:    providers.KindRateLimit, requests: 1,
		},
		{
			name:    "500 then success",
			replies: []providertest.Reply{providertest.OpenAIError(500, "server_error", "", "The server had an error."), providertest.ResponsesText("ok", 1, 1)},
			kind:    "", requests: 2,
		},
		{
			name: "persistent 503 gives up after 3 attempts",
			replies: []providertest.Reply{providertest.JSON(503, `<html>Service Unavailable</html>`),
				providertest.JSON(503, `<html>Service Unavailable</html>`), providertest.JSON(503, `<html>Service Unavailable</html>`)},
			kind: providers.KindServer, requests: 3,
		},
		{
			name:    "x-should-retry false",
			replies: []providertest.Reply{providertest.OpenAIError(500, "server_error", "", "boom").WithHeader("X-Should-Retry", "false")},
			kind:    providers.KindServer, requests: 1,
		},
		{
			name:    "bad request",
			replies: []providertest.Reply{providertest.OpenAIError(400, "invalid_request_error", "unknown_parameter", "Unknown parameter: 'foo'.")},
			kind:    providers.KindRejected, requests: 1,
		},
		{
			name:    "invalid JSON",
			replies: []providertest.Reply{providertest.JSON(200, `{"id":"resp_1","output":[`)},
			kind:    providers.KindMalformed, requests: 1,
		},
		{
			name:    "reset mid body",
			replies: []providertest.Reply{providertest.ResponsesText("long answer", 1, 1).Truncated(40)},
			kind:    providers.KindNetwork, requests: 1,
		},
		{
			name:    "reset mid stream",
			replies: []providertest.Reply{providertest.ResponsesStream("some streamed text").Truncated(5)},
			kind:    providers.KindNetwork, requests: 1,
		},
		{
			name:    "hangup before answering is not retried",
			replies: []providertest.Reply{providertest.Hangup()},
			kind:    providers.KindNetwork, requests: 1,
		},
		{
			name: "failed response in stream",
			replies: []providertest.Reply{providertest.SSE(providertest.Event{Name: "response.failed",
				Data: `{"type":"response.failed","response":{"id":"r","status":"failed","output":[],"error":{"code":"context_length_exceeded","message":"Your input exceeds the context window of this model."}}}`})},
			kind: providers.KindCapacity, requests: 1,
		},
		{
			name:    "error event in stream",
			replies: []providertest.Reply{providertest.SSE(providertest.Event{Name: "error", Data: `{"type":"error","code":"server_error","message":"The server had an error while processing your request.","param":null}`})},
			kind:    providers.KindServer, requests: 1,
		},
		{
			name:    "stream without terminal event",
			replies: []providertest.Reply{providertest.SSE(providertest.Event{Name: "response.created", Data: `{"type":"response.created","response":{"id":"r","status":"in_progress","output":[]}}`})},
			kind:    providers.KindNetwork, requests: 1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := providertest.NewServer(t, tc.replies...)
			c, sl := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL}})
			_, err := c.Generate(context.Background(), hist)
			if got := providers.KindOf(err); got != tc.kind {
				t.Fatalf("kind = %q (%v), want %q", got, err, tc.kind)
			}
			if n := len(srv.Requests()); n != tc.requests {
				t.Errorf("requests = %d, want %d", n, tc.requests)
			}
			if tc.waits != nil {
				if diff := cmp.Diff(tc.waits, sl.Waits()); diff != "" {
					t.Errorf("waits (-want +got):\n%s", diff)
				}
			}
			var pe *providers.Error
			if err != nil {
				if !errors.As(err, &pe) {
					t.Fatalf("error %T is not *providers.Error", err)
				}
				if len(err.Error()) > providers.MaxErrorText {
					t.Errorf("error text is %d bytes", len(err.Error()))
				}
				if pe.Provider != "openai" || pe.Model != "gpt-5.1-codex" {
					t.Errorf("error provider/model = %q/%q", pe.Provider, pe.Model)
				}
				if tc.inputToks != 0 && pe.InputTokens != tc.inputToks {
					t.Errorf("input tokens = %d, want %d", pe.InputTokens, tc.inputToks)
				}
				if tc.kind == providers.KindRateLimit && pe.RetryAfter != time.Hour {
					t.Errorf("retry after = %v", pe.RetryAfter)
				}
			}
		})
	}
}

func TestConnectionRefusedIsRetried(t *testing.T) {
	srv := providertest.NewServer(t)
	url := srv.URL
	srv.Close()
	c, sl := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: url}})
	_, err := c.Generate(context.Background(), &providers.Request{Messages: sampleHistory()})
	if providers.KindOf(err) != providers.KindNetwork {
		t.Fatalf("err = %v", err)
	}
	if n := len(sl.Waits()); n != 2 {
		t.Errorf("waits = %d, want 2 (3 attempts)", n)
	}
}

func TestCancel(t *testing.T) {
	started := make(chan struct{})
	srv := providertest.NewServer(t, providertest.Reply{Func: func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
	}})
	c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL}})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Generate(ctx, &providers.Request{Messages: sampleHistory()})
		errc <- err
	}()
	<-started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestNoSecretsInErrorsOrLogs sets a recognizable key, makes the fake
// provider echo it in error bodies, and checks that neither errors nor log
// lines ever contain it.
func TestNoSecretsInErrorsOrLogs(t *testing.T) {
	const key = "sk-proj-RECOGNIZABLE-KEY-7f3a9c2e1d"
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	echo := func(status int) providertest.Reply {
		return providertest.OpenAIError(status, "invalid_request_error", "invalid_api_key",
			fmt.Sprintf("Incorrect API key provided: %s. You can find your API key at https://platform.openai.com/account/api-keys.", key))
	}
	srv := providertest.NewServer(t, echo(401), echo(500), echo(500), echo(500), echo(400),
		providertest.JSON(200, `{"broken": "`+key))
	c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL + "/v1?key=" + key, APIKey: key, Logger: logger}})
	var errs []error
	for range 4 {
		_, err := c.Generate(context.Background(), &providers.Request{Messages: sampleHistory()})
		errs = append(errs, err)
	}
	_, err := c.Compact(context.Background(), &providers.CompactRequest{Input: sampleHistory()})
	errs = append(errs, err)
	srv.Close()
	_, err = c.Generate(context.Background(), &providers.Request{Messages: sampleHistory()})
	errs = append(errs, err)
	for i, err := range errs {
		if err == nil {
			t.Fatalf("call %d: no error", i)
		}
		for e := err; e != nil; e = errors.Unwrap(e) {
			if s := fmt.Sprintf("%v %+v", e, e); strings.Contains(s, key) || strings.Contains(s, "RECOGNIZABLE") {
				t.Errorf("call %d: error chain holds the key: %s", i, s)
			}
		}
	}
	if strings.Contains(logs.String(), "RECOGNIZABLE") {
		t.Errorf("logs hold the key:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "retrying") {
		t.Errorf("expected retry log lines, got:\n%s", logs.String())
	}
}

func TestMediaParts(t *testing.T) {
	parts := providertest.Parts(t,
		`{"type":"text","text":"look","cache_control":{"type":"ephemeral"}}`,
		`{"type":"image_url","image_url":{"url":"https://x/a.png"}}`,
		`{"type":"image","data":"QUJD","mime_type":"image/jpeg"}`,
		`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"WFla"}}`,
		`{"type":"input_image","image_url":"https://x/b.png","detail":"high"}`,
		`{"type":"file","filename":"a.pdf","file_data":"data:application/pdf;base64,QQ=="}`,
		`{"type":"video","url":"https://x/v.mp4"}`)
	srv := providertest.NewServer(t, providertest.ResponsesText("ok", 1, 1))
	c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL}})
	if _, err := c.Generate(context.Background(), &providers.Request{Messages: []history.Message{{Role: history.User, Content: history.Parts(parts...)}}}); err != nil {
		t.Fatal(err)
	}
	want := providertest.MustJSON(t, `[{"type":"message","role":"user","content":[
		{"type":"input_text","text":"look"},
		{"type":"input_image","image_url":"https://x/a.png","detail":"auto"},
		{"type":"input_image","image_url":"data:image/jpeg;base64,QUJD","detail":"auto"},
		{"type":"input_image","image_url":"data:image/png;base64,WFla","detail":"auto"},
		{"type":"input_image","image_url":"https://x/b.png","detail":"high"},
		{"type":"input_file","filename":"a.pdf","file_data":"data:application/pdf;base64,QQ=="},
		{"type":"input_text","text":"[video part omitted]"}]}]`)
	if diff := cmp.Diff(want, srv.Last().JSON()["input"]); diff != "" {
		t.Errorf("input (-want +got):\n%s", diff)
	}
}
