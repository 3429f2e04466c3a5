package proxy_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/proxy"
	"github.com/vtcode/vtcode-ls/session"
)

// benchConversation is a Claude Code-like streamed Messages request of
// about n tool turns of 20 kB results each (the shape of cmd/vtcode-bench's
// proxy section: 10 turns are about 50k o200k tokens), with a system prompt
// and tool schemas of about prefix bytes (Claude Code's are some 60 kB).
func benchConversation(n, prefix int) []byte {
	msgs := []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Read the modules and explain the request flow."}}}}
	for i := 0; i < n; i++ {
		var sb strings.Builder
		for l := 0; sb.Len() < 20000; l++ {
			fmt.Fprintf(&sb, "%d\tfunc handler%02d_%04d(w http.ResponseWriter, r *http.Request) { serve(w, r, %d) } // module %d\n", l+1, i, l, l*i, i)
		}
		id := fmt.Sprintf("toolu_bench_%04d", i)
		msgs = append(msgs,
			map[string]any{"role": "assistant", "content": []any{
				map[string]any{"type": "text", "text": fmt.Sprintf("Reading module %d.", i)},
				map[string]any{"type": "tool_use", "id": id, "name": "Read", "input": map[string]string{"file_path": fmt.Sprintf("/src/module%02d.go", i)}}}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": sb.String()}}})
	}
	last := msgs[len(msgs)-1].(map[string]any)["content"].([]any)[0].(map[string]any)
	last["cache_control"] = map[string]string{"type": "ephemeral"}
	system := "You are a coding agent."
	tools := []any{map[string]any{"name": "Read", "description": "Read a file", "input_schema": map[string]any{"type": "object"}}}
	if prefix > 0 {
		system = strings.Repeat("Follow the repository's conventions; run the tests before you answer. ", prefix/4/70)
		for i := 0; i < 20; i++ {
			tools = append(tools, map[string]any{"name": fmt.Sprintf("Tool%02d", i),
				"description":  strings.Repeat(fmt.Sprintf("Tool %d does one thing well and reports what it did. ", i), prefix*3/4/20/52),
				"input_schema": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]string{"type": "string"}}}})
		}
	}
	body, _ := json.Marshal(map[string]any{
		"model": "claude-bench", "max_tokens": 8192, "stream": true,
		"system":   []any{map[string]any{"type": "text", "text": system, "cache_control": map[string]string{"type": "ephemeral"}}},
		"tools":    tools,
		"messages": msgs,
	})
	return body
}

// benchStream is a short Messages API event stream.
func benchStream() []byte {
	var b bytes.Buffer
	ev := func(name, data string) { fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", name, data) }
	ev("message_start", `{"type":"message_start","message":{"id":"msg_bench","type":"message","role":"assistant","model":"bench","content":[],"usage":{"input_tokens":200000,"output_tokens":1}}}`)
	ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	for i := 0; i < 100; i++ {
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"The request flow goes from the handler. "}}`)
	}
	ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
	ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":600}}`)
	ev("message_stop", `{"type":"message_stop"}`)
	return b.Bytes()
}

// BenchmarkWarmRequest is one streamed request of a warm session through
// the proxy, its answer recorded, the body the previous request byte for
// byte: with clearing off (the agent's bytes forwarded unchanged) and with
// the default policy (nothing to clear in a 1M window), with a tiny prefix
// or a Claude Code-sized one. Its profile is where the proxy's time goes
// (make bench reports the time against httputil.ReverseProxy).
func BenchmarkWarmRequest(b *testing.B) {
	stream := benchStream()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(stream)
	}))
	defer up.Close()
	for _, pc := range []struct{ name, extra string }{
		{"same", "[agent.harness.tool_result_clearing]\nenabled = false\n"},
		{"default", ""},
	} {
		ws := b.TempDir()
		user := filepath.Join(b.TempDir(), "vtcode.toml")
		cfg := fmt.Sprintf("[providers.anthropic]\nbase_url = %q\n[context]\nmax_context_tokens = 1000000\n%s", up.URL, pc.extra)
		if err := os.WriteFile(user, []byte(cfg), 0o600); err != nil {
			b.Fatal(err)
		}
		mgr := session.NewManager(session.Options{NoWatch: true, UserConfig: user})
		defer mgr.Close()
		if err := mgr.AddWorkspace(ws, nil); err != nil {
			b.Fatal(err)
		}
		done := make(chan struct{}, 1)
		srv := httptest.NewServer(proxy.New(proxy.Options{Manager: mgr, AfterRequest: func() { done <- struct{}{} }}))
		defer srv.Close()
		c := &http.Client{Transport: &http.Transport{DisableCompression: true}}
		send := func(body []byte) {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/messages?beta=true", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("x-api-key", "sk-bench")
			req.Header.Set("anthropic-version", "2023-06-01")
			req.Header.Set("x-claude-code-session-id", "bench-session")
			resp, err := c.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Fatalf("status %d", resp.StatusCode)
			}
			<-done // recorded
		}
		for _, tc := range []struct {
			name   string
			prefix int
		}{{"tiny-prefix", 0}, {"60k-prefix", 60 << 10}} {
			body := benchConversation(40, tc.prefix) // about 200k tokens
			b.Run(pc.name+"/"+tc.name, func(b *testing.B) {
				send(body)
				send(body)
				b.SetBytes(int64(len(body)))
				for b.Loop() {
					send(body)
				}
			})
		}
	}
}
