package providers_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/anthropic"
	"github.com/vtcode/vtcode-ls/providers/chatcompat"
	"github.com/vtcode/vtcode-ls/providers/httpapi"
	"github.com/vtcode/vtcode-ls/providers/providertest"
)

// TestStrictAcrossForms: a tool's strict flag survives translation to the
// chat-completions and Anthropic forms (false as well as true), and a tool
// that sets none gets none there.
func TestStrictAcrossForms(t *testing.T) {
	tools := []json.RawMessage{
		json.RawMessage(`{"type":"function","name":"a","parameters":{"type":"object"},"strict":false}`),
		json.RawMessage(`{"type":"function","name":"b","parameters":{"type":"object"},"strict":true}`),
		json.RawMessage(`{"type":"function","name":"c","parameters":{"type":"object"}}`),
	}
	want := map[string]any{"a": false, "b": true, "c": nil}
	for _, vendor := range []string{"chatcompat", "anthropic"} {
		reply := providertest.JSON(200, `{"id":"c","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"ok"}}]}`)
		if vendor == "anthropic" {
			reply = providertest.AnthropicText("ok", 1, 1)
		}
		srv := providertest.NewServer(t, reply)
		ep := httpapi.Endpoint{BaseURL: srv.URL + "/v1", Model: "m", Retry: httpapi.RetryPolicy{MaxAttempts: 1}}
		var g providers.Generator
		var err error
		if vendor == "anthropic" {
			ep.Provider = "anthropic"
			g, err = anthropic.New(anthropic.Config{Endpoint: ep})
		} else {
			ep.Provider = "llamacpp"
			g, err = chatcompat.New(chatcompat.Config{Endpoint: ep})
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.Generate(context.Background(), &providers.Request{Model: "claude-sonnet-4-5", MaxOutputTokens: 100, Tools: tools,
			Messages: []history.Message{history.NewText(history.User, "hi")}}); err != nil {
			t.Fatalf("%s: %v", vendor, err)
		}
		sent, _ := srv.Last().JSON()["tools"].([]any)
		if len(sent) != len(want) {
			t.Fatalf("%s: tools %v", vendor, sent)
		}
		for _, tl := range sent {
			m := tl.(map[string]any)
			if fn, ok := m["function"].(map[string]any); ok {
				m = fn
			}
			name := m["name"].(string)
			if got := m["strict"]; got != want[name] {
				t.Errorf("%s: tool %s strict %v, want %v", vendor, name, got, want[name])
			}
		}
	}
}
