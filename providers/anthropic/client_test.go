package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

const testKey = "sk-ant-api03-test0123456789SECRET"

func newClient(t *testing.T, cfg Config) (*Client, *providertest.Sleeper) {
	t.Helper()
	sl := providertest.Prepare(&cfg.Endpoint, testKey, "claude-opus-4-6")
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
		{
			Role:    history.Assistant,
			Content: history.Text("Running the tests."),
			ReasoningDetails: []json.RawMessage{
				json.RawMessage(`{"type":"thinking","thinking":"run go test","signature":"sigA"}`),
				json.RawMessage(`{"type":"compaction","id":"cmp_1","encrypted_content":"openai-only"}`),
				json.RawMessage(`{"type":"reasoning","id":"rs_1","summary":[]}`),
			},
			ToolCalls: []history.ToolCall{
				{ID: "toolu_1", Name: "shell", Arguments: `{"cmd":"go test ./..."}`},
				{ID: "toolu_2", Name: "apply_patch", Input: "*** Begin Patch"},
			},
		},
		history.NewToolResult("toolu_1", "shell", "exit 1: FAIL"),
		history.NewToolResult("toolu_2", "apply_patch", "done"),
		history.NewText(history.User, "continue"),
		history.NewText(history.Assistant, "Fixed."),
	}
}

var shellTool = json.RawMessage(`{"type":"function","function":{"name":"shell","description":"run","parameters":{"type":"object"}}}`)

func TestGenerateRequest(t *testing.T) {
	srv := providertest.NewServer(t, providertest.AnthropicText("summary", 100, 10))
	c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL + "/v1", Header: http.Header{"Anthropic-Beta": {"caller-set"}, "X-Extra": {"1"}}}})
	_, err := c.Generate(context.Background(), &providers.Request{
		System:          "You are a summarizer.",
		Messages:        sampleHistory(),
		MaxOutputTokens: 2000,
		Tools: []json.RawMessage{shellTool,
			json.RawMessage(`{"name":"apply_patch","input_schema":{"type":"object"}}`),
			json.RawMessage(`{"type":"web_search_20250305","name":"web_search"}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	req := srv.Last()
	if req.Method != "POST" || req.Path != "/v1/messages" {
		t.Errorf("request = %s %s", req.Method, req.Path)
	}
	for k, want := range map[string]string{
		"X-Api-Key": testKey, "Anthropic-Version": "2023-06-01", "Content-Type": "application/json",
		"Anthropic-Beta": "", "Authorization": "", "X-Extra": "1",
	} {
		if got := req.Header.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	want := providertest.MustJSON(t, `{
		"model":"claude-opus-4-6",
		"max_tokens":2000,
		"system":"You are a summarizer.\n\nPrevious conversation summary:\nbuilt the parser",
		"messages":[
			{"role":"user","content":[{"type":"text","text":"fix the failing test"}]},
			{"role":"assistant","content":[
				{"type":"thinking","thinking":"run go test","signature":"sigA"},
				{"type":"text","text":"Running the tests."},
				{"type":"tool_use","id":"toolu_1","name":"shell","input":{"cmd":"go test ./..."}},
				{"type":"tool_use","id":"toolu_2","name":"apply_patch","input":{"input":"*** Begin Patch"}}]},
			{"role":"user","content":[
				{"type":"tool_result","tool_use_id":"toolu_1","content":"exit 1: FAIL"},
				{"type":"tool_result","tool_use_id":"toolu_2","content":"done"},
				{"type":"text","text":"continue"}]},
			{"role":"assistant","content":[{"type":"text","text":"Fixed."}]},
			{"role":"user","content":[{"type":"text","text":"[Continue]"}]}
		],
		"tools":[
			{"name":"shell","description":"run","input_schema":{"type":"object"}},
			{"name":"apply_patch","input_schema":{"type":"object"}},
			{"type":"web_search_20250305","name":"web_search"}
		],
		"tool_choice":{"type":"none"}
	}`)
	if diff := cmp.Diff(want, providertest.MustJSON(t, string(req.Body))); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
}

func TestToolBlocksAsTextWithoutTools(t *testing.T) {
	srv := providertest.NewServer(t, providertest.AnthropicText("summary", 100, 10))
	c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL}})
	if _, err := c.Generate(context.Background(), &providers.Request{Messages: sampleHistory()}); err != nil {
		t.Fatal(err)
	}
	body := string(srv.Last().Body)
	for _, banned := range []string{`"tool_use"`, `"tool_result"`, `"tools"`, `"tool_choice"`} {
		if strings.Contains(body, banned) {
			t.Errorf("body has %s without tool schemas: %s", banned, body)
		}
	}
	for _, want := range []string{`[tool call toolu_1: shell {\"cmd\":\"go test ./...\"}]`, `[tool result toolu_1 (shell)]\nexit 1: FAIL`} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %s: %s", want, body)
		}
	}
	// A base URL without a path (the test server's) takes the API's whole
	// path, as https://api.anthropic.com does.
	if srv.Last().Path != "/v1/messages" {
		t.Errorf("path = %q, want /v1/messages", srv.Last().Path)
	}
}

func TestEditLadder(t *testing.T) {
	noThinking := []history.Message{history.NewText(history.User, "hello"), history.NewText(history.Assistant, "hi")}
	cases := []struct {
		name     string
		model    string
		msgs     []history.Message
		inline   providers.InlineCompaction
		edits    string
		beta     string
		thinking string // JSON of the thinking field, "" for none
	}{
		{
			name: "full ladder", model: "claude-opus-4-6", msgs: sampleHistory(),
			inline: providers.InlineCompaction{ClearingEdits: true, TriggerTokens: 30_000, Instructions: "keep file paths"},
			edits: `[{"type":"clear_thinking_20251015","keep":{"type":"thinking_turns","value":2}},
				{"type":"clear_tool_uses_20250919","trigger":{"type":"input_tokens","value":100000},"keep":{"type":"tool_uses","value":3}},
				{"type":"compact_20260112","trigger":{"type":"input_tokens","value":50000},"pause_after_compaction":true,"instructions":"keep file paths"}]`,
			beta: "context-management-2025-06-27,compact-2026-01-12", thinking: `{"type":"adaptive"}`,
		},
		{
			name: "compact only", model: "claude-sonnet-4-6", msgs: sampleHistory(),
			inline: providers.InlineCompaction{TriggerTokens: 120_000},
			edits:  `[{"type":"compact_20260112","trigger":{"type":"input_tokens","value":120000},"pause_after_compaction":true}]`,
			beta:   "compact-2026-01-12",
		},
		{
			// The whole ladder is sent even with no thinking in the history;
			// clear_thinking needs thinking on, so the request turns it on.
			name: "no thinking to clear", model: "claude-opus-4-6", msgs: noThinking,
			inline: providers.InlineCompaction{ClearingEdits: true},
			edits: `[{"type":"clear_thinking_20251015","keep":{"type":"thinking_turns","value":2}},
				{"type":"clear_tool_uses_20250919","trigger":{"type":"input_tokens","value":100000},"keep":{"type":"tool_uses","value":3}},
				{"type":"compact_20260112","trigger":{"type":"input_tokens","value":50000},"pause_after_compaction":true}]`,
			beta: "context-management-2025-06-27,compact-2026-01-12", thinking: `{"type":"adaptive"}`,
		},
		{
			name: "thinking by default", model: "claude-opus-5", msgs: noThinking,
			inline: providers.InlineCompaction{ClearingEdits: true, TriggerTokens: 80_000},
			edits: `[{"type":"clear_thinking_20251015","keep":{"type":"thinking_turns","value":2}},
				{"type":"clear_tool_uses_20250919","trigger":{"type":"input_tokens","value":100000},"keep":{"type":"tool_uses","value":3}},
				{"type":"compact_20260112","trigger":{"type":"input_tokens","value":80000},"pause_after_compaction":true}]`,
			beta: "context-management-2025-06-27,compact-2026-01-12",
		},
		{
			name: "clear_at_least", model: "claude-opus-5", msgs: noThinking,
			inline: providers.InlineCompaction{ClearingEdits: true, TriggerTokens: 80_000, ClearAtLeastTokens: 10_000},
			edits: `[{"type":"clear_thinking_20251015","keep":{"type":"thinking_turns","value":2}},
				{"type":"clear_tool_uses_20250919","trigger":{"type":"input_tokens","value":100000},"keep":{"type":"tool_uses","value":3},"clear_at_least":{"type":"input_tokens","value":10000}},
				{"type":"compact_20260112","trigger":{"type":"input_tokens","value":80000},"pause_after_compaction":true}]`,
			beta: "context-management-2025-06-27,compact-2026-01-12",
		},
		{
			name: "budgeted thinking on older models", model: "claude-opus-4-1", msgs: sampleHistory(),
			inline: providers.InlineCompaction{ClearingEdits: true},
			edits: `[{"type":"clear_thinking_20251015","keep":{"type":"thinking_turns","value":2}},
				{"type":"clear_tool_uses_20250919","trigger":{"type":"input_tokens","value":100000},"keep":{"type":"tool_uses","value":3}},
				{"type":"compact_20260112","trigger":{"type":"input_tokens","value":50000},"pause_after_compaction":true}]`,
			beta: "context-management-2025-06-27,compact-2026-01-12", thinking: `{"type":"enabled","budget_tokens":16000}`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := providertest.NewServer(t, providertest.AnthropicCompacted("summary"))
			c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL, Model: tc.model, Header: http.Header{"anthropic-beta": {"x"}}}})
			inline := tc.inline
			if _, err := c.Generate(context.Background(), &providers.Request{Messages: tc.msgs, Inline: &inline, Tools: []json.RawMessage{shellTool}}); err != nil {
				t.Fatal(err)
			}
			req := srv.Last()
			if got := req.Header.Get("Anthropic-Beta"); got != tc.beta {
				t.Errorf("anthropic-beta = %q, want %q", got, tc.beta)
			}
			body := req.JSON()
			cm, _ := body["context_management"].(map[string]any)
			if diff := cmp.Diff(providertest.MustJSON(t, tc.edits), cm["edits"]); diff != "" {
				t.Errorf("edits (-want +got):\n%s", diff)
			}
			if len(cm) != 1 {
				t.Errorf("context_management has extra keys: %v", cm)
			}
			if tc.thinking == "" {
				if _, ok := body["thinking"]; ok {
					t.Errorf("thinking sent: %v", body["thinking"])
				}
			} else if diff := cmp.Diff(providertest.MustJSON(t, tc.thinking), body["thinking"]); diff != "" {
				t.Errorf("thinking (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompactionResponseKeptWhole(t *testing.T) {
	srv := providertest.NewServer(t, providertest.AnthropicCompacted("## Goal\nfix the parser"))
	c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL}})
	res, err := c.Generate(context.Background(), &providers.Request{Messages: sampleHistory(), Inline: &providers.InlineCompaction{}})
	if err != nil {
		t.Fatal(err)
	}
	wantBlock := `{"type":"compaction","content":"## Goal\nfix the parser","cache_control":{"type":"ephemeral"},"x_signature":"sig-fake-01"}`
	if string(res.Compaction) != wantBlock {
		t.Errorf("compaction = %s\nwant %s", res.Compaction, wantBlock)
	}
	if len(res.Message.ReasoningDetails) != 1 || string(res.Message.ReasoningDetails[0]) != wantBlock {
		t.Errorf("reasoning details = %s", res.Message.ReasoningDetails)
	}
	if res.StopReason != "compaction" {
		t.Errorf("stop reason = %q", res.StopReason)
	}
	if res.Usage.InputTokens != 180000 || res.Usage.OutputTokens != 3500 || len(res.Usage.Iterations) != 1 {
		t.Errorf("usage = %+v", res.Usage)
	}
}

func TestNullCompactionFallsBack(t *testing.T) {
	srv := providertest.NewServer(t, providertest.JSON(200, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-6",
		"content":[{"type":"compaction","content":null}],"stop_reason":"compaction",
		"usage":{"input_tokens":10,"output_tokens":0}}`))
	c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL}})
	res, err := c.Generate(context.Background(), &providers.Request{Messages: sampleHistory(), Inline: &providers.InlineCompaction{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Compaction != nil || len(res.Message.ReasoningDetails) != 0 || res.StopReason != "compaction" {
		t.Errorf("null compaction: compaction=%s details=%s stop=%q", res.Compaction, res.Message.ReasoningDetails, res.StopReason)
	}
}

func TestCompactionReplayAndThinkingBoundary(t *testing.T) {
	block := `{"type":"compaction","content":"summary text","cache_control":{"type":"ephemeral"}}`
	msgs := []history.Message{
		history.NewText(history.User, "start"),
		{Role: history.Assistant, Content: history.Text("old"), ReasoningDetails: []json.RawMessage{
			json.RawMessage(`{"type":"thinking","thinking":"A","signature":"sA"}`)}},
		history.NewText(history.User, "more"),
		{Role: history.Assistant, Content: history.Text("after compaction"), ReasoningDetails: []json.RawMessage{
			json.RawMessage(`{"type":"thinking","thinking":"B","signature":"sB"}`),
			json.RawMessage(`"` + strings.ReplaceAll(block, `"`, `\"`) + `"`), // stored as a JSON string
			json.RawMessage(`{"type":"thinking","thinking":"D","signature":"sD"}`),
			json.RawMessage(`{"type":"redacted_thinking","data":"xyz"}`),
		}},
		history.NewText(history.User, "next"),
	}
	srv := providertest.NewServer(t, providertest.AnthropicText("ok", 1, 1))
	c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL}})
	if _, err := c.Generate(context.Background(), &providers.Request{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	// The conversation starts at the compaction block: the turns before it
	// are read by no one, and the block must be the first one sent.
	want := providertest.MustJSON(t, `[
		{"role":"assistant","content":[`+block+`,
			{"type":"thinking","thinking":"D","signature":"sD"},
			{"type":"redacted_thinking","data":"xyz"},
			{"type":"text","text":"after compaction"}]},
		{"role":"user","content":[{"type":"text","text":"next"}]}
	]`)
	if diff := cmp.Diff(want, srv.Last().JSON()["messages"]); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(srv.Last().Body), block) {
		t.Errorf("compaction block not replayed byte for byte: %s", srv.Last().Body)
	}
}

func TestUsage(t *testing.T) {
	cases := []struct {
		raw  string
		want history.Usage
	}{
		{`{"input_tokens":100,"output_tokens":20,"cache_read_input_tokens":1000,"cache_creation_input_tokens":50}`,
			history.Usage{InputTokens: 1150, OutputTokens: 20, CacheReadTokens: 1000, CacheCreationTokens: 50}},
		{`{"input_tokens":45000,"output_tokens":1234,"iterations":[
			{"type":"compaction","input_tokens":180000,"output_tokens":3500},
			{"type":"message","input_tokens":23000,"output_tokens":1000,"cache_read_input_tokens":500},
			{"type":"fallback_message","input_tokens":10,"output_tokens":1},
			{"type":"advisor_message","input_tokens":5,"output_tokens":2},
			{"type":"tool_search","input_tokens":999999,"output_tokens":999999}]}`,
			history.Usage{InputTokens: 203515, OutputTokens: 4503, CacheReadTokens: 500}},
		{`{"input_tokens":7,"output_tokens":3,"iterations":[{"type":"something_new","input_tokens":1,"output_tokens":1}]}`,
			history.Usage{InputTokens: 7, OutputTokens: 3}},
	}
	for i, tc := range cases {
		got, err := Usage(json.RawMessage(tc.raw))
		if err != nil {
			t.Fatal(err)
		}
		n := len(got.Iterations)
		got.Iterations = nil
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("case %d (-want +got):\n%s", i, diff)
		}
		if wantN := strings.Count(tc.raw, `"type"`); n != wantN {
			t.Errorf("case %d: %d raw iterations kept, want %d", i, n, wantN)
		}
	}
}

func TestStreamedResponse(t *testing.T) {
	srv := providertest.NewServer(t, providertest.AnthropicStream("streamed summary"), providertest.SSE(
		providertest.Event{Name: "message_start", Data: `{"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","model":"claude-opus-4-6","content":[],"stop_reason":null,"usage":{"input_tokens":0,"output_tokens":0}}}`},
		providertest.Event{Name: "content_block_start", Data: `{"type":"content_block_start","index":0,"content_block":{"type":"compaction","content":null}}`},
		providertest.Event{Name: "content_block_delta", Data: `{"type":"content_block_delta","index":0,"delta":{"type":"compaction_delta","content":"the summary"}}`},
		providertest.Event{Name: "content_block_stop", Data: `{"type":"content_block_stop","index":0}`},
		providertest.Event{Name: "content_block_start", Data: `{"type":"content_block_start","index":1,"content_block":{"type":"thinking","thinking":"","signature":""}}`},
		providertest.Event{Name: "content_block_delta", Data: `{"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":"let me "}}`},
		providertest.Event{Name: "content_block_delta", Data: `{"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":"think"}}`},
		providertest.Event{Name: "content_block_delta", Data: `{"type":"content_block_delta","index":1,"delta":{"type":"signature_delta","signature":"SIG"}}`},
		providertest.Event{Name: "content_block_stop", Data: `{"type":"content_block_stop","index":1}`},
		providertest.Event{Name: "content_block_start", Data: `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_9","name":"shell","input":{}}}`},
		providertest.Event{Name: "content_block_delta", Data: `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"cmd\": "}}`},
		providertest.Event{Name: "content_block_delta", Data: `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"\"ls\"}"}}`},
		providertest.Event{Name: "content_block_stop", Data: `{"type":"content_block_stop","index":2}`},
		providertest.Event{Name: "message_delta", Data: `{"type":"message_delta","delta":{"stop_reason":"compaction"},"usage":{"output_tokens":9,"iterations":[{"type":"compaction","input_tokens":90000,"output_tokens":900}]}}`},
		providertest.Event{Name: "message_stop", Data: `{"type":"message_stop"}`},
	))
	c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL}})
	res, err := c.Generate(context.Background(), &providers.Request{Messages: sampleHistory()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Message.Text() != "streamed summary" || res.StopReason != "end_turn" || res.Usage.InputTokens != 2500 || res.Usage.OutputTokens != 42 {
		t.Errorf("got %q stop %q usage %+v", res.Message.Text(), res.StopReason, res.Usage)
	}

	c2, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL, Stream: true}})
	res, err = c2.Generate(context.Background(), &providers.Request{Messages: sampleHistory()})
	if err != nil {
		t.Fatal(err)
	}
	if body := srv.Last().JSON(); body["stream"] != true || srv.Last().Header.Get("Accept") != "text/event-stream" {
		t.Errorf("stream request: %v", body["stream"])
	}
	if got := string(res.Compaction); got != `{"content":"the summary","type":"compaction"}` {
		t.Errorf("compaction = %s", got)
	}
	if res.Message.Reasoning != "let me think" || !strings.Contains(string(res.Message.ReasoningDetails[1]), `"signature":"SIG"`) {
		t.Errorf("thinking = %q %s", res.Message.Reasoning, res.Message.ReasoningDetails)
	}
	if len(res.Message.ToolCalls) != 1 || res.Message.ToolCalls[0].Arguments != `{"cmd":"ls"}` {
		t.Errorf("tool calls = %+v", res.Message.ToolCalls)
	}
	if res.StopReason != "compaction" || res.Usage.InputTokens != 90000 || res.Usage.OutputTokens != 900 {
		t.Errorf("stop %q usage %+v", res.StopReason, res.Usage)
	}
}

func TestErrors(t *testing.T) {
	cases := []struct {
		name      string
		replies   []providertest.Reply
		kind      providers.Kind
		requests  int
		waits     []time.Duration
		inputToks int
	}{
		{"prompt too long", []providertest.Reply{providertest.AnthropicError(400, "invalid_request_error", "prompt is too long: 208310 tokens > 200000 maximum")},
			providers.KindCapacity, 1, nil, 208310},
		{"input plus max_tokens", []providertest.Reply{providertest.AnthropicError(400, "invalid_request_error",
			"input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try again")},
			providers.KindCapacity, 1, nil, 188240},
		{"request too large", []providertest.Reply{providertest.AnthropicError(413, "request_too_large", "Request exceeds the maximum allowed number of bytes.")},
			providers.KindCapacity, 1, nil, 0},
		{"credit", []providertest.Reply{providertest.AnthropicError(400, "invalid_request_error",
			"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.")},
			providers.KindQuota, 1, nil, 0},
		{"auth", []providertest.Reply{providertest.AnthropicError(401, "authentication_error", "invalid x-api-key")},
			providers.KindAuth, 1, nil, 0},
		{"overloaded then success", []providertest.Reply{providertest.AnthropicError(529, "overloaded_error", "Overloaded"), providertest.AnthropicText("ok", 1, 1)},
			"", 2, nil, 0},
		{"rate limit with retry-after", []providertest.Reply{
			providertest.AnthropicError(429, "rate_limit_error", "This request would exceed the rate limit for your organization.").WithHeader("Retry-After", "12"),
			providertest.AnthropicText("ok", 1, 1)},
			"", 2, []time.Duration{12 * time.Second}, 0},
		{"error event in stream", []providertest.Reply{providertest.SSE(
			providertest.Event{Name: "message_start", Data: `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"usage":{"input_tokens":1,"output_tokens":0}}}`},
			providertest.Event{Name: "error", Data: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`})},
			providers.KindServer, 1, nil, 0},
		{"cut mid stream", []providertest.Reply{providertest.AnthropicStream("some long streamed text").Truncated(4)}, providers.KindNetwork, 1, nil, 0},
		{"stream without message_stop", []providertest.Reply{providertest.SSE(providertest.AnthropicStream("x").Events[:3]...)}, providers.KindNetwork, 1, nil, 0},
		{"invalid JSON", []providertest.Reply{providertest.JSON(200, `{"type":"message","content":[{"type":"text"`)}, providers.KindMalformed, 1, nil, 0},
		{"empty content", []providertest.Reply{providertest.JSON(200, `{"type":"message","role":"assistant","content":[],"stop_reason":"end_turn"}`)}, providers.KindEmpty, 1, nil, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := providertest.NewServer(t, tc.replies...)
			c, sl := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL}})
			_, err := c.Generate(context.Background(), &providers.Request{Messages: sampleHistory()})
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
			if err != nil && errors.As(err, &pe) && pe.InputTokens != tc.inputToks {
				t.Errorf("input tokens = %d, want %d", pe.InputTokens, tc.inputToks)
			}
		})
	}
}

func TestBearerAuthAndOneMillion(t *testing.T) {
	srv := providertest.NewServer(t, providertest.AnthropicText("ok", 1, 1))
	c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL, Model: "claude-sonnet-4-5[1m]"}, BearerAuth: true})
	if _, err := c.Generate(context.Background(), &providers.Request{Messages: sampleHistory()}); err != nil {
		t.Fatal(err)
	}
	req := srv.Last()
	if req.Header.Get("Authorization") != "Bearer "+testKey || req.Header.Get("X-Api-Key") != "" {
		t.Errorf("auth headers = %v", req.Header)
	}
	if req.Header.Get("Anthropic-Beta") != BetaContext1M || req.JSON()["model"] != "claude-sonnet-4-5" {
		t.Errorf("1M: beta %q model %v", req.Header.Get("Anthropic-Beta"), req.JSON()["model"])
	}
	if mt := req.JSON()["max_tokens"]; mt != float64(32000) {
		t.Errorf("default max_tokens = %v", mt)
	}
}

func TestNoSecretsInErrorsOrLogs(t *testing.T) {
	const key = "sk-ant-api03-RECOGNIZABLE-abcdef0123"
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	echo := providertest.AnthropicError(401, "authentication_error", fmt.Sprintf("invalid x-api-key: %s", key))
	srv := providertest.NewServer(t, echo,
		providertest.AnthropicError(500, "api_error", "internal error for key "+key),
		providertest.AnthropicError(500, "api_error", "internal error for key "+key),
		providertest.AnthropicError(500, "api_error", "internal error for key "+key))
	c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL, APIKey: key, Logger: logger}})
	for range 2 {
		_, err := c.Generate(context.Background(), &providers.Request{Messages: sampleHistory()})
		if err == nil {
			t.Fatal("no error")
		}
		for e := err; e != nil; e = errors.Unwrap(e) {
			if strings.Contains(e.Error(), "RECOGNIZABLE") {
				t.Errorf("error holds the key: %v", e)
			}
		}
	}
	if strings.Contains(logs.String(), "RECOGNIZABLE") || !strings.Contains(logs.String(), "retrying") {
		t.Errorf("logs:\n%s", logs.String())
	}
}

func TestMediaBlocks(t *testing.T) {
	parts := providertest.Parts(t,
		`{"type":"text","text":"look"}`,
		`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"WFla"}}`,
		`{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,QUJD"}}`,
		`{"type":"input_image","image_url":"https://x/b.png"}`,
		`{"type":"image","data":"QUJD","mime_type":"image/gif"}`,
		`{"type":"document","source":{"type":"url","url":"https://x/a.pdf"}}`,
		`{"type":"input_audio","input_audio":{"data":"x","format":"wav"}}`)
	srv := providertest.NewServer(t, providertest.AnthropicText("ok", 1, 1))
	c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL}})
	msgs := []history.Message{{Role: history.User, Content: history.Parts(parts...)}, history.NewToolResult("t1", "shot", "")}
	msgs[1].Content = history.Parts(history.TextPart("screen"), parts[1])
	msgs = append([]history.Message{history.NewText(history.User, "go"), {Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: "t1", Name: "shot"}}}}, msgs[1], msgs[0])
	if _, err := c.Generate(context.Background(), &providers.Request{Messages: msgs, Tools: []json.RawMessage{shellTool}}); err != nil {
		t.Fatal(err)
	}
	want := providertest.MustJSON(t, `[
		{"role":"user","content":[{"type":"text","text":"go"}]},
		{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"shot","input":{}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"screen"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"WFla"}}]},
			{"type":"text","text":"look"},
			{"type":"image","source":{"type":"base64","media_type":"image/png","data":"WFla"}},
			{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"QUJD"}},
			{"type":"image","source":{"type":"url","url":"https://x/b.png"}},
			{"type":"image","source":{"type":"base64","media_type":"image/gif","data":"QUJD"}},
			{"type":"document","source":{"type":"url","url":"https://x/a.pdf"}},
			{"type":"text","text":"[input_audio part omitted]"}]}
	]`)
	if diff := cmp.Diff(want, srv.Last().JSON()["messages"]); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

// TestCompactionBlockNeedsBeta: a request replaying a compaction block is a
// beta request even without any edit (a local-summary request over a
// history the provider compacted): anthropic-beta must list
// compact-2026-01-12.
func TestCompactionBlockNeedsBeta(t *testing.T) {
	block := `{"type":"compaction","content":"summary so far"}`
	msgs := []history.Message{
		{Role: history.Assistant, ReasoningDetails: []json.RawMessage{json.RawMessage(block)}},
		history.NewText(history.User, "Summarize the conversation."),
	}
	for _, tc := range []struct {
		name string
		msgs []history.Message
		want string
	}{
		{"compaction block, no edit", msgs, BetaCompact},
		{"failed (null) block is not replayed", []history.Message{
			{Role: history.Assistant, Content: history.Text("x"), ReasoningDetails: []json.RawMessage{json.RawMessage(`{"type":"compaction","content":null}`)}},
			history.NewText(history.User, "go on")}, ""},
		{"OpenAI compaction item is not Anthropic's", []history.Message{
			{Role: history.Assistant, Content: history.Text("x"), ReasoningDetails: []json.RawMessage{json.RawMessage(`{"type":"compaction","id":"cmp_1","encrypted_content":"e"}`)}},
			history.NewText(history.User, "go on")}, ""},
	} {
		srv := providertest.NewServer(t, providertest.AnthropicText("ok", 1, 1))
		c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL}})
		if _, err := c.Generate(context.Background(), &providers.Request{Messages: tc.msgs, MaxOutputTokens: 1000}); err != nil {
			t.Fatal(err)
		}
		if got := srv.Last().Header.Get("Anthropic-Beta"); got != tc.want {
			t.Errorf("%s: anthropic-beta %q, want %q", tc.name, got, tc.want)
		}
		if strings.Contains(string(srv.Last().Body), `"compaction"`) != (tc.want != "") {
			t.Errorf("%s: body %s", tc.name, srv.Last().Body)
		}
	}
}

// TestOnlyNewestCompactionBlockFirst: a history holding two compactions
// (the older one earlier in the same message and in an earlier message)
// sends only the newest block, as the first block of the conversation; the
// API would refuse the others as ambiguous or misplaced.
func TestOnlyNewestCompactionBlockFirst(t *testing.T) {
	old := `{"type":"compaction","content":"first summary"}`
	mid := `{"type":"compaction","content":"second summary"}`
	newest := `{"type":"compaction","content":"third summary","encrypted_content":"opaque"}`
	msgs := []history.Message{
		{Role: history.Assistant, ReasoningDetails: []json.RawMessage{json.RawMessage(old)}},
		history.NewText(history.User, "work"),
		{Role: history.Assistant, Content: history.Text("did work")},
		history.NewText(history.User, "more"),
		{Role: history.Assistant, Content: history.Text("after"), ReasoningDetails: []json.RawMessage{
			json.RawMessage(mid),
			json.RawMessage(`{"type":"thinking","thinking":"T","signature":"sT"}`),
			json.RawMessage(newest),
			json.RawMessage(`{"type":"thinking","thinking":"U","signature":"sU"}`),
		}},
		history.NewText(history.User, "next"),
	}
	srv := providertest.NewServer(t, providertest.AnthropicText("ok", 1, 1))
	c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL}})
	if _, err := c.Generate(context.Background(), &providers.Request{Messages: msgs, MaxOutputTokens: 1000}); err != nil {
		t.Fatal(err)
	}
	want := providertest.MustJSON(t, `[
		{"role":"assistant","content":[`+newest+`,{"type":"thinking","thinking":"U","signature":"sU"},{"type":"text","text":"after"}]},
		{"role":"user","content":[{"type":"text","text":"next"}]}
	]`)
	if diff := cmp.Diff(want, srv.Last().JSON()["messages"]); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if n := strings.Count(string(srv.Last().Body), `"type":"compaction"`); n != 1 {
		t.Errorf("%d compaction blocks sent, want 1", n)
	}
}

// TestLongSummaryStreams: the official SDK refuses a non-streaming request
// whose max_tokens is expected to take over ten minutes (32,000 tokens is
// 15). Such a request streams and the streamed answer is the response; a
// short one does not stream. Opus 4 and 4.1 stream above 8,192.
func TestLongSummaryStreams(t *testing.T) {
	for _, tc := range []struct {
		model     string
		maxTokens int
		stream    bool
	}{
		{"claude-sonnet-4-6", 32_000, true},
		{"claude-sonnet-4-6", 0, true}, // the default: the catalog's limit capped at 32,000
		{"claude-sonnet-4-6", 21_333, false},
		{"claude-sonnet-4-6", 4_096, false},
		{"claude-opus-4-1-20250805", 16_000, true},
		{"claude-opus-4-1-20250805", 8_192, false},
	} {
		reply := providertest.AnthropicText("summary", 10, 5)
		if tc.stream {
			reply = providertest.AnthropicStream("summary")
		}
		srv := providertest.NewServer(t, reply)
		c, _ := newClient(t, Config{Endpoint: httpapi.Endpoint{BaseURL: srv.URL}})
		res, err := c.Generate(context.Background(), &providers.Request{Model: tc.model, MaxOutputTokens: tc.maxTokens,
			Messages: []history.Message{history.NewText(history.User, "summarize")}})
		if err != nil {
			t.Fatalf("%s max %d: %v", tc.model, tc.maxTokens, err)
		}
		body := srv.Last().JSON()
		if got, _ := body["stream"].(bool); got != tc.stream {
			t.Errorf("%s max_tokens %v: stream %v, want %v", tc.model, body["max_tokens"], got, tc.stream)
		}
		if tc.stream && srv.Last().Header.Get("Accept") != "text/event-stream" {
			t.Errorf("%s: streaming request without Accept: text/event-stream", tc.model)
		}
		if res.Message.Text() != "summary" {
			t.Errorf("%s: text %q", tc.model, res.Message.Text())
		}
	}
}
