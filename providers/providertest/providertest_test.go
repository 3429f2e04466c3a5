package providertest_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/providers/httpapi"
	"github.com/vtcode/vtcode-ls/providers/providertest"
)

func TestServerScriptAndRecords(t *testing.T) {
	srv := providertest.NewServer(t, providertest.ResponsesText("hi", 3, 4).WithHeader("X-Request-Id", "r1"))
	resp, err := http.Post(srv.URL+"/v1/responses?beta=true", "application/json", strings.NewReader(`{"model":"m"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Request-Id") != "r1" || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("reply: %d %v", resp.StatusCode, resp.Header)
	}
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil || v["status"] != "completed" {
		t.Errorf("body %s: %v", body, err)
	}
	req := srv.Last()
	if req.Method != "POST" || req.Path != "/v1/responses" || req.Query != "beta=true" || req.JSON()["model"] != "m" {
		t.Errorf("recorded %+v", req)
	}

	resp, err = http.Post(srv.URL+"/extra", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 500 || srv.Unexpected() != 1 || len(srv.Requests()) != 2 || srv.Remaining() != 0 {
		t.Errorf("unexpected request: %d, %d unexpected", resp.StatusCode, srv.Unexpected())
	}
}

func TestCannedRepliesAreValid(t *testing.T) {
	for name, r := range map[string]providertest.Reply{
		"responses":  providertest.ResponsesText(`quote " and \ newline`+"\n", 1, 2),
		"compacted":  providertest.ResponsesCompacted(providertest.UserItem("u"), providertest.CompactionItem("c", "e")),
		"anthropic":  providertest.AnthropicText("x", 1, 2),
		"compaction": providertest.AnthropicCompacted("s"),
		"chat":       providertest.ChatText("x", 1, 2),
		"oai error":  providertest.OpenAIError(400, "t", "", "m"),
		"ant error":  providertest.AnthropicError(400, "t", "m"),
	} {
		if !json.Valid([]byte(r.Body)) {
			t.Errorf("%s: invalid JSON %s", name, r.Body)
		}
	}
	for name, r := range map[string]providertest.Reply{
		"responses stream": providertest.ResponsesStream("héllo wörld"),
		"anthropic stream": providertest.AnthropicStream("x"),
		"chat stream":      providertest.ChatStream("x"),
	} {
		for _, ev := range r.Events {
			if ev.Data != "[DONE]" && !json.Valid([]byte(ev.Data)) {
				t.Errorf("%s: invalid event %s", name, ev.Data)
			}
		}
	}
}

func TestTruncatedAndHangup(t *testing.T) {
	srv := providertest.NewServer(t, providertest.ChatText("a long enough body", 1, 1).Truncated(10), providertest.Hangup())
	resp, err := http.Post(srv.URL, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Error("truncated body read without error")
	}
	resp.Body.Close()
	if _, err := http.Post(srv.URL, "application/json", nil); err == nil {
		t.Error("hangup answered")
	}
}

func TestPrepareAndSleeper(t *testing.T) {
	e := httpapi.Endpoint{Model: "mine"}
	sl := providertest.Prepare(&e, "key", "default")
	if e.APIKey != "key" || e.Model != "mine" || e.Retry.Sleep == nil {
		t.Fatalf("prepared endpoint = %+v", e)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := e.Retry.Sleep(ctx, time.Hour); err != nil {
		t.Errorf("sleep: %v", err)
	}
	cancel()
	if err := e.Retry.Sleep(ctx, time.Second); !errors.Is(err, context.Canceled) {
		t.Errorf("sleep after cancel: %v", err)
	}
	if w := sl.Waits(); len(w) != 2 || w[0] != time.Hour || w[1] != time.Second {
		t.Errorf("waits = %v", w)
	}
}

func TestMustJSONAndParts(t *testing.T) {
	if v, ok := providertest.MustJSON(t, `{"a":[1]}`).(map[string]any); !ok || len(v["a"].([]any)) != 1 {
		t.Errorf("MustJSON = %v", v)
	}
	parts := providertest.Parts(t, `{"type":"text","text":"hi"}`, `{"type":"image_url","image_url":{"url":"https://x/a.png"}}`)
	if len(parts) != 2 || parts[0].Text != "hi" || parts[1].Type != "image_url" || parts[1].Raw == nil {
		t.Errorf("parts = %+v", parts)
	}
}
