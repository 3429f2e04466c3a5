package chatcompat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/httpapi"
	"github.com/vtcode/vtcode-ls/providers/providertest"
)

const testKey = "sk-or-v1-test0123456789abcdefSECRET"

func newClient(t *testing.T, cfg Config) (*Client, *providertest.Sleeper) {
	t.Helper()
	if cfg.Provider == "" {
		cfg.Provider = "openrouter"
	}
	key := testKey
	if cfg.Provider == "ollama" {
		key = ""
	}
	sl := providertest.Prepare(&cfg.Endpoint, key, "deepseek/deepseek-chat")
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, sl
}

func sampleHistory() []history.Message {
	return []history.Message{
		history.NewText(history.System, "Previous conversation summary:\nbuilt the parser"),
		history.NewText(history.User, "fix the failing test"),
		{Role: history.Assistant, ReasoningDetails: []json.RawMessage{json.RawMessage(`{"type":"compaction","encrypted_content":"x"}`)}},
		{
			Role: history.Assistant, Content: history.Text("Running the tests."), Reasoning: "private chain",
			ToolCalls: []history.ToolCall{{ID: "call_1", Name: "shell", Arguments: `{"cmd":"go test ./..."}`, ThoughtSignature: "TS1"}},
		},
		history.NewToolResult("call_1", "shell", "exit 1: FAIL"),
		history.NewText(history.User, "continue"),
	}
}

func TestGenerateRequest(t *testing.T) {
	srv := providertest.NewServer(t, providertest.ChatText("summary", 100, 10))
	c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL + "/api/v1", Header: http.Header{"HTTP-Referer": {"https://vtcode.dev"}}}})
	_, err := c.Generate(context.Background(), &providers.Request{
		System:          "You are a summarizer.",
		Messages:        sampleHistory(),
		MaxOutputTokens: 1500,
		Tools: []json.RawMessage{
			json.RawMessage(`{"type":"function","name":"shell","description":"run","parameters":{"type":"object"}}`),
			json.RawMessage(`{"type":"function","function":{"name":"read","parameters":{"type":"object"}}}`),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	req := srv.Last()
	if req.Method != "POST" || req.Path != "/api/v1/chat/completions" {
		t.Errorf("request = %s %s", req.Method, req.Path)
	}
	for k, want := range map[string]string{"Authorization": "Bearer " + testKey, "Content-Type": "application/json", "Http-Referer": "https://vtcode.dev"} {
		if got := req.Header.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	want := providertest.MustJSON(t, `{
		"model":"deepseek/deepseek-chat",
		"messages":[
			{"role":"system","content":"You are a summarizer."},
			{"role":"system","content":"Previous conversation summary:\nbuilt the parser"},
			{"role":"user","content":"fix the failing test"},
			{"role":"assistant","content":"Running the tests.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"shell","arguments":"{\"cmd\":\"go test ./...\"}"}}]},
			{"role":"tool","content":"exit 1: FAIL","tool_call_id":"call_1"},
			{"role":"user","content":"continue"}
		],
		"tools":[
			{"type":"function","function":{"name":"shell","description":"run","parameters":{"type":"object"}}},
			{"type":"function","function":{"name":"read","parameters":{"type":"object"}}}
		],
		"tool_choice":"none",
		"max_tokens":1500,
		"stream":false
	}`)
	if diff := cmp.Diff(want, providertest.MustJSON(t, string(req.Body))); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
}

func TestLocalServerAndGemini(t *testing.T) {
	srv := providertest.NewServer(t,
		providertest.ChatText("ok", 1, 1),
		providertest.JSON(200, `{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"","tool_calls":[
			{"id":"fc_1","type":"function","function":{"name":"read","arguments":"{}"},"extra_content":{"google":{"thought_signature":"SIG2"}}}]},"finish_reason":"tool_calls"}]}`))
	c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{Provider: "ollama", BaseURL: srv.URL + "/v1", Model: "qwen3-coder"}})
	if _, err := c.Generate(context.Background(), &providers.Request{Messages: sampleHistory()}); err != nil {
		t.Fatal(err)
	}
	if h := srv.Last().Header.Get("Authorization"); h != "" {
		t.Errorf("local server got Authorization %q", h)
	}
	if strings.Contains(string(srv.Last().Body), "extra_content") {
		t.Error("thought signature sent to a non-gemini route")
	}

	g, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{Provider: "gemini", BaseURL: srv.URL, Model: "gemini-2.5-pro"}})
	res, err := g.Generate(context.Background(), &providers.Request{Messages: sampleHistory()})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(srv.Last().Body), `"extra_content":{"google":{"thought_signature":"TS1"}}`) {
		t.Errorf("gemini thought signature not sent: %s", srv.Last().Body)
	}
	if len(res.Message.ToolCalls) != 1 || res.Message.ToolCalls[0].ThoughtSignature != "SIG2" || res.StopReason != "tool_calls" {
		t.Errorf("tool calls = %+v", res.Message.ToolCalls)
	}

	for p, want := range map[string]string{
		"ollama":   "http://localhost:11434/v1/chat/completions",
		"llamacpp": "http://localhost:8080/v1/chat/completions",
		"deepseek": "https://api.deepseek.com/v1/chat/completions", // its base without /v1: the whole path
		"gemini":   "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions",
	} {
		c, err := New(Config{Endpoint: httpapi.Endpoint{Provider: p}})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.CompletionsURL(); got != want {
			t.Errorf("%s URL = %q, want %q", p, got, want)
		}
	}
	if _, err := New(Config{Endpoint: httpapi.Endpoint{Provider: "my-proxy"}}); err == nil {
		t.Error("unknown provider without base URL: no error")
	}
}

func TestParseResponses(t *testing.T) {
	srv := providertest.NewServer(t,
		providertest.JSON(200, `{"id":"c1","choices":[{"index":0,"message":{"role":"assistant","content":"final","reasoning_content":"deep thought"},"finish_reason":"stop"}],
			"usage":{"prompt_tokens":500,"completion_tokens":50,"prompt_cache_hit_tokens":300,"prompt_cache_miss_tokens":200}}`),
		providertest.JSON(200, `{"id":"c2","choices":[{"index":0,"message":{"role":"assistant","content":"<think>\nhmm\n</think>\n\nanswer"},"finish_reason":"stop"}]}`),
		providertest.JSON(200, `{"id":"c3","choices":[{"index":0,"message":{"role":"assistant","content":"x","reasoning":"or-reasoning",
			"reasoning_details":[{"type":"reasoning.text","text":"or-reasoning","format":"anthropic-claude-v1","index":0}]},"finish_reason":"length"}],
			"usage":{"prompt_tokens":10,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":4}}}`),
	)
	c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL}})
	get := func() *providers.Response {
		t.Helper()
		res, err := c.Generate(context.Background(), &providers.Request{Messages: sampleHistory()})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	r := get()
	if r.Message.Text() != "final" || r.Message.Reasoning != "deep thought" || !cmp.Equal(r.Usage, history.Usage{InputTokens: 500, OutputTokens: 50, CacheReadTokens: 300}) {
		t.Errorf("deepseek: %+v %+v", r.Message, r.Usage)
	}
	r = get()
	if r.Message.Text() != "answer" || r.Message.Reasoning != "hmm" {
		t.Errorf("think tags: text %q reasoning %q", r.Message.Text(), r.Message.Reasoning)
	}
	r = get()
	if r.Message.Reasoning != "or-reasoning" || len(r.Message.ReasoningDetails) != 1 || r.StopReason != "length" || r.Usage.CacheReadTokens != 4 {
		t.Errorf("openrouter: %+v stop %q usage %+v", r.Message, r.StopReason, r.Usage)
	}
}

func TestStream(t *testing.T) {
	srv := providertest.NewServer(t, providertest.ChatStream("streamed summary"), providertest.ChatStream("again"),
		providertest.SSE(
			providertest.Event{Data: `{"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"th"}}]}`},
			providertest.Event{Data: `{"choices":[{"index":0,"delta":{"reasoning_content":"ink","tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"sh","arguments":"{\"a\""}}]}}]}`},
			providertest.Event{Data: `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]},"finish_reason":"tool_calls"}]}`},
		))
	c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL}})
	res, err := c.Generate(context.Background(), &providers.Request{Messages: sampleHistory()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Message.Text() != "streamed summary" || res.Usage.InputTokens != 700 || res.StopReason != "stop" {
		t.Errorf("got %q usage %+v stop %q", res.Message.Text(), res.Usage, res.StopReason)
	}
	if body := srv.Last().JSON(); body["stream"] != false || body["stream_options"] != nil {
		t.Errorf("non-stream request: %v", body)
	}
	cs, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL, Stream: true}})
	if _, err := cs.Generate(context.Background(), &providers.Request{Messages: sampleHistory()}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(providertest.MustJSON(t, `{"include_usage":true}`), srv.Last().JSON()["stream_options"]); diff != "" || srv.Last().JSON()["stream"] != true {
		t.Errorf("stream request: %v", srv.Last().JSON())
	}
	res, err = c.Generate(context.Background(), &providers.Request{Messages: sampleHistory()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Message.Reasoning != "think" || len(res.Message.ToolCalls) != 1 || res.Message.ToolCalls[0].Arguments != `{"a":1}` || res.Message.ToolCalls[0].ID != "call_a" {
		t.Errorf("streamed tool call: %+v", res.Message)
	}
}

func TestErrors(t *testing.T) {
	cases := []struct {
		name      string
		reply     []providertest.Reply
		kind      providers.Kind
		requests  int
		inputToks int
	}{
		{"deepseek capacity", []providertest.Reply{providertest.OpenAIError(400, "invalid_request_error", "invalid_request_error",
			"This model's maximum context length is 131072 tokens. However, you requested 140000 tokens (132000 in the messages, 8000 in the completion). Please reduce the length of the messages or completion.")},
			providers.KindCapacity, 1, 132000},
		{"gemini capacity", []providertest.Reply{providertest.JSON(400, `[{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}]`)},
			providers.KindCapacity, 1, 1200000},
		{"openrouter upstream capacity", []providertest.Reply{providertest.JSON(400, `{"error":{"message":"Provider returned error","code":400,
			"metadata":{"raw":"{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long: 210000 tokens > 200000 maximum\"}}","provider_name":"Anthropic"}}}`)},
			providers.KindCapacity, 1, 210000},
		{"openrouter context message", []providertest.Reply{providertest.JSON(400, `{"error":{"message":"This endpoint's maximum context length is 163840 tokens. However, you requested about 201234 tokens (193234 of text input, 8000 in the output). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.","code":400}}`)},
			providers.KindCapacity, 1, 201234},
		{"llama.cpp capacity", []providertest.Reply{providertest.JSON(400, `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":40210,"n_ctx":32768}}`)},
			providers.KindCapacity, 1, 40210},
		{"openrouter credits", []providertest.Reply{providertest.JSON(402, `{"error":{"message":"Insufficient credits. Add more using https://openrouter.ai/settings/credits","code":402}}`)},
			providers.KindQuota, 1, 0},
		{"deepseek balance", []providertest.Reply{providertest.JSON(402, `{"error":{"message":"Insufficient Balance","type":"unknown_error","param":null,"code":"invalid_request_error"}}`)},
			providers.KindQuota, 1, 0},
		{"ollama missing model", []providertest.Reply{providertest.JSON(404, `{"error":"model \"qwen9\" not found, try pulling it first"}`)},
			providers.KindRejected, 1, 0},
		{"error in 200 answer", []providertest.Reply{providertest.JSON(200, `{"id":"x","choices":[],"error":{"message":"Upstream overloaded","code":502}}`)},
			providers.KindServer, 1, 0},
		{"error chunk in stream", []providertest.Reply{providertest.SSE(providertest.Event{Data: `{"id":"x","object":"chat.completion.chunk","error":{"message":"Rate limit exceeded","code":429},"choices":[]}`})},
			providers.KindRateLimit, 1, 0},
		{"cut mid stream", []providertest.Reply{providertest.ChatStream("a long streamed reply").Truncated(2)}, providers.KindNetwork, 1, 0},
		{"invalid JSON", []providertest.Reply{providertest.JSON(200, `{"choices":[{"message":`)}, providers.KindMalformed, 1, 0},
		{"no choices", []providertest.Reply{providertest.JSON(200, `{"id":"x","choices":[]}`)}, providers.KindEmpty, 1, 0},
		{"503 then success", []providertest.Reply{providertest.JSON(503, `upstream connect error`), providertest.ChatText("ok", 1, 1)}, "", 2, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := providertest.NewServer(t, tc.reply...)
			c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL}})
			_, err := c.Generate(context.Background(), &providers.Request{Messages: sampleHistory()})
			if got := providers.KindOf(err); got != tc.kind {
				t.Fatalf("kind = %q (%v), want %q", got, err, tc.kind)
			}
			if n := len(srv.Requests()); n != tc.requests {
				t.Errorf("requests = %d, want %d", n, tc.requests)
			}
			var pe *providers.Error
			if errors.As(err, &pe) && pe.InputTokens != tc.inputToks {
				t.Errorf("input tokens = %d, want %d", pe.InputTokens, tc.inputToks)
			}
		})
	}
}

func TestRateLimitRetryAfterDate(t *testing.T) {
	when := time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)
	srv := providertest.NewServer(t, providertest.RateLimited("1").WithHeader("Retry-After", when), providertest.ChatText("ok", 1, 1))
	c, sl := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL}})
	if _, err := c.Generate(context.Background(), &providers.Request{Messages: sampleHistory()}); err != nil {
		t.Fatal(err)
	}
	w := sl.Waits()
	if len(w) != 1 || w[0] < 25*time.Second || w[0] > 31*time.Second {
		t.Errorf("waits = %v, want about 30s", w)
	}
}

func TestNoSecretsInErrorsOrLogs(t *testing.T) {
	const key = "sk-or-v1-RECOGNIZABLE0123456789"
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv := providertest.NewServer(t,
		providertest.JSON(401, `{"error":{"message":"No auth credentials found for Bearer `+key+`","code":401}}`),
		providertest.JSON(502, `bad gateway for `+key), providertest.JSON(502, `bad gateway for `+key), providertest.JSON(502, `bad gateway for `+key))
	c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL, APIKey: key, Logger: logger}})
	for range 2 {
		_, err := c.Generate(context.Background(), &providers.Request{Messages: sampleHistory()})
		if err == nil {
			t.Fatal("no error")
		}
		if strings.Contains(err.Error(), "RECOGNIZABLE") {
			t.Errorf("error holds the key: %v", err)
		}
	}
	if strings.Contains(logs.String(), "RECOGNIZABLE") {
		t.Errorf("logs hold the key:\n%s", logs.String())
	}
}
