package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/proxy"
	"github.com/vtcode/vtcode-ls/session"
)

// ProxyResult compares the proxy with a plain httputil.ReverseProxy on the
// same streamed Messages request, both in front of the same upstream (which
// reads the body and streams a canned answer).
type ProxyResult struct {
	RequestTokens  int `json:"requestTokens"` // o200k estimate of the messages
	RequestBytes   int `json:"requestBytes"`
	ForwardedBytes int `json:"forwardedBytes"` // what the proxy sent upstream
	StreamEvents   int `json:"streamEvents"`
	Reps           int `json:"reps"`
	// Medians, in ns.
	PlainTTFBNs  int64 `json:"plainTTFBNs"`
	PlainTotalNs int64 `json:"plainTotalNs"`
	// PlainCPUNs is the CPU time of the whole process (client, upstream,
	// proxy) per request through ReverseProxy; 0 where unknown.
	PlainCPUNs int64 `json:"plainCPUNs"`
	// Same is the proxy with clearing off: it forwards the agent's bytes
	// unchanged, so the upstream's work is the same as behind the plain
	// proxy and the difference is the proxy's own cost.
	Same ProxyVariant `json:"same"`
	// Cleared is the proxy with the default policy: it clears old results
	// and forwards ForwardedBytes.
	Cleared ProxyVariant `json:"cleared"`
}

// ProxyVariant is one configuration of the proxy in [ProxyResult].
type ProxyVariant struct {
	TTFBNs  int64 `json:"ttfbNs"`
	TotalNs int64 `json:"totalNs"`
	// ColdTTFBNs is the first request (a session that does not know the
	// conversation yet: every message estimated).
	ColdTTFBNs int64   `json:"coldTTFBNs"`
	TTFBRatio  float64 `json:"ttfbRatio"`  // proxy / plain
	TotalRatio float64 `json:"totalRatio"` // proxy / plain
	// CPUNs is the process's CPU time per request through this proxy, its
	// answer's recording included, beside PlainCPUNs (Same only).
	CPUNs int64 `json:"cpuNs,omitempty"`
}

// proxyConversation builds a Claude Code-like streamed request of about
// tokens o200k tokens: a prompt, then Read calls with their large results,
// after a system prompt and tool schemas of Claude Code's size (some 16 kB
// and 45 kB: an agent resends them with every request).
func proxyConversation(est *history.Estimator, tokens int) ([]byte, int) {
	msgs := []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Read the modules and explain the request flow."}}}}
	total := 0
	for i := 0; total < tokens; i++ {
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
		m := history.NewToolResult(id, "Read", sb.String())
		total += est.Message(&m) + 20
	}
	last := msgs[len(msgs)-1].(map[string]any)["content"].([]any)[0].(map[string]any)
	last["cache_control"] = map[string]string{"type": "ephemeral"}
	var system strings.Builder
	system.WriteString("You are a coding agent.\n")
	for i := 0; system.Len() < 16000; i++ {
		fmt.Fprintf(&system, "- Rule %d: follow the repository's conventions, keep changes small and run the tests before you answer.\n", i)
	}
	tools := []any{}
	for i := 0; i < 16; i++ {
		var desc strings.Builder
		for l := 0; desc.Len() < 2800; l++ {
			fmt.Fprintf(&desc, "Tool %d, usage note %d: pass absolute paths; the output is truncated past 30000 characters. ", i, l)
		}
		tools = append(tools, map[string]any{"name": fmt.Sprintf("Tool%02d", i), "description": desc.String(),
			"input_schema": map[string]any{"type": "object", "properties": map[string]any{"file_path": map[string]string{"type": "string", "description": "The absolute path"}}, "required": []string{"file_path"}}})
	}
	body, _ := json.Marshal(map[string]any{
		"model": "claude-bench", "max_tokens": 8192, "stream": true,
		"system":   []any{map[string]any{"type": "text", "text": system.String(), "cache_control": map[string]string{"type": "ephemeral"}}},
		"tools":    tools,
		"messages": msgs,
	})
	return body, total
}

// cannedStream is a Messages API event stream answering text, in 40-byte
// deltas.
func cannedStream(text string) [][]byte {
	ev := func(name string, v any) []byte {
		b, _ := json.Marshal(v)
		return []byte("event: " + name + "\ndata: " + string(b) + "\n\n")
	}
	out := [][]byte{
		ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_bench", "type": "message", "role": "assistant",
			"model": "bench", "content": []any{}, "usage": map[string]int{"input_tokens": 200000, "output_tokens": 1}}}),
		ev("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}}),
	}
	for len(text) > 0 {
		n := min(40, len(text))
		out = append(out, ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": text[:n]}}))
		text = text[n:]
	}
	return append(out,
		ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0}),
		ev("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "end_turn"}, "usage": map[string]int{"output_tokens": 600}}),
		ev("message_stop", map[string]any{"type": "message_stop"}))
}

// fmtAdded formats a signed difference of durations in ns.
func fmtAdded(ns int64) string {
	if ns < 0 {
		return "−" + fmtNs(-ns)
	}
	return "+" + fmtNs(ns)
}

// timeStream sends body to url and returns the time to the first byte of
// the answer's body and to its end.
func timeStream(ctx context.Context, c *http.Client, url string, body []byte) (ttfb, total time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", "sk-bench")
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("x-claude-code-session-id", "bench-session")
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	one := make([]byte, 1)
	if _, err := io.ReadFull(resp.Body, one); err != nil {
		return 0, 0, err
	}
	ttfb = time.Since(start)
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("status %d", resp.StatusCode)
	}
	return ttfb, time.Since(start), nil
}

// cannedUpstream is the upstream of benchProxy: it reads the body (the last
// one it read is kept) and streams events, flushing each: nearly free, so
// what the proxies in front of it add stands out.
func cannedUpstream(events [][]byte) (*httptest.Server, *atomic.Pointer[[]byte]) {
	var last atomic.Pointer[[]byte]
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		last.Store(&b)
		w.Header().Set("Content-Type", "text/event-stream")
		fl, _ := w.(http.Flusher)
		for _, ev := range events {
			w.Write(ev)
			fl.Flush()
		}
	}))
	return up, &last
}

// startBenchProxy serves vtcode-ls proxy for upstream on a workspace of its
// own, extra added to its user configuration; it returns the proxy's URL
// and its close. The proxy says on settled when it is done with a request
// (its answer recorded, after the agent had it): the bench sends the next
// request only then, as an agent sends it after reading the answer and
// running its tools, so that no measured request shares the CPU with the
// recording of the one before (the recording's CPU is in the CPU figure).
func startBenchProxy(upstream, extra string, settled chan<- struct{}) (string, func() error, error) {
	ws, err := os.MkdirTemp("", "vtcode-bench-proxy-")
	if err != nil {
		return "", nil, err
	}
	// The upstream's address comes from the user configuration: a
	// workspace file may not pick an endpoint.
	cfg := fmt.Sprintf("[providers.anthropic]\nbase_url = %q\n[context]\nmax_context_tokens = 1000000\n%s", upstream, extra)
	user := filepath.Join(ws, "user.toml")
	if err := os.WriteFile(user, []byte(cfg), 0o600); err != nil {
		return "", nil, err
	}
	mgr := session.NewManager(session.Options{NoWatch: true, UserConfig: user})
	if err := mgr.AddWorkspace(ws, nil); err != nil {
		return "", nil, err
	}
	srv := httptest.NewServer(proxy.New(proxy.Options{Manager: mgr, AfterRequest: func() { settled <- struct{}{} }}))
	return srv.URL, func() error {
		srv.Close()
		err := mgr.Close()
		os.RemoveAll(ws)
		return err
	}, nil
}

// benchProxy measures the proxy's added time to first byte and total on a
// streamed request of about tokens tokens, against httputil.ReverseProxy,
// interleaving the two reps times.
func benchProxy(ctx context.Context, tokens, reps int) (_ *ProxyResult, err error) {
	answer := strings.Repeat("The request flow goes from the handler to the router and back. ", 64)
	events := cannedStream(answer)
	up, last := cannedUpstream(events)
	defer up.Close()
	target, _ := url.Parse(up.URL)
	plain := httputil.NewSingleHostReverseProxy(target)
	plain.FlushInterval = -1
	// A transport of its own, as the proxy has: http.DefaultTransport is
	// the process's, and every httptest server's Close closes its idle
	// connections, which a connection just taken up can lose.
	plainTransport := http.DefaultTransport.(*http.Transport).Clone()
	defer plainTransport.CloseIdleConnections()
	plain.Transport = plainTransport
	plainSrv := httptest.NewServer(plain)
	defer plainSrv.Close()

	sameDone, clearDone := make(chan struct{}, 1), make(chan struct{}, 1)
	sameURL, closeSame, err := startBenchProxy(up.URL, "[agent.harness.tool_result_clearing]\nenabled = false\n", sameDone)
	if err != nil {
		return nil, err
	}
	defer closeSame()
	clearURL, closeClear, err := startBenchProxy(up.URL, "", clearDone)
	if err != nil {
		return nil, err
	}
	defer closeClear()

	body, tok := proxyConversation(history.NewEstimator(history.O200k), tokens)
	c := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 4}}
	res := &ProxyResult{RequestTokens: tok, RequestBytes: len(body), Reps: reps, StreamEvents: len(events)}

	path := "/v1/messages?beta=true"
	if _, _, err := timeStream(ctx, c, plainSrv.URL+path, body); err != nil {
		return nil, fmt.Errorf("reverse proxy: %w", err)
	}
	settle := func(done chan struct{}) error {
		if done == nil {
			return nil
		}
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for _, v := range []struct {
		url  string
		out  *ProxyVariant
		done chan struct{}
	}{{sameURL, &res.Same, sameDone}, {clearURL, &res.Cleared, clearDone}} {
		cold, _, err := timeStream(ctx, c, v.url+path, body)
		if err != nil {
			return nil, fmt.Errorf("proxy: %w", err)
		}
		if err := settle(v.done); err != nil {
			return nil, err
		}
		v.out.ColdTTFBNs = cold.Nanoseconds()
		if v.out == &res.Same && !bytes.Equal(*last.Load(), body) {
			return nil, fmt.Errorf("the proxy with clearing off changed the request")
		}
	}
	var pt, ptot, st, stot, ct, ctot samples
	for i := 0; i < reps; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for _, v := range []struct {
			url         string
			ttfb, total *samples
			done        chan struct{}
		}{{plainSrv.URL, &pt, &ptot, nil}, {sameURL, &st, &stot, sameDone}, {clearURL, &ct, &ctot, clearDone}} {
			a, b, err := timeStream(ctx, c, v.url+path, body)
			if err != nil {
				return nil, err
			}
			if err := settle(v.done); err != nil {
				return nil, err
			}
			*v.ttfb, *v.total = append(*v.ttfb, a), append(*v.total, b)
		}
	}
	// What the clearing proxy sent last, on the warm session (the first
	// request of a session goes as it came, before the key is known good).
	res.ForwardedBytes = len(*last.Load())
	// The CPU of the whole process (client, upstream and proxy) over a run
	// of requests through each; the difference is the proxy's own work per
	// request beyond ReverseProxy's, its answer's recording included.
	cpuOver := func(url string, done chan struct{}) (time.Duration, bool, error) {
		before, ok := cpuTime()
		if !ok {
			return 0, false, nil
		}
		for i := 0; i < reps; i++ {
			if _, _, err := timeStream(ctx, c, url+path, body); err != nil {
				return 0, false, err
			}
			if err := settle(done); err != nil {
				return 0, false, err
			}
		}
		after, _ := cpuTime()
		return (after - before) / time.Duration(reps), true, nil
	}
	plainCPU, ok, err := cpuOver(plainSrv.URL, nil)
	if err != nil {
		return nil, err
	}
	if ok {
		sameCPU, _, err := cpuOver(sameURL, sameDone)
		if err != nil {
			return nil, err
		}
		res.PlainCPUNs, res.Same.CPUNs = plainCPU.Nanoseconds(), sameCPU.Nanoseconds()
	}
	res.PlainTTFBNs, res.PlainTotalNs = pt.median().Nanoseconds(), ptot.median().Nanoseconds()
	fill := func(v *ProxyVariant, ttfb, total samples) {
		v.TTFBNs, v.TotalNs = ttfb.median().Nanoseconds(), total.median().Nanoseconds()
		v.TTFBRatio, v.TotalRatio = ratio(ttfb.median(), pt.median()), ratio(total.median(), ptot.median())
	}
	fill(&res.Same, st, stot)
	fill(&res.Cleared, ct, ctot)
	return res, nil
}

// proxyTargets checks the proxy's overhead on a warm session with nothing
// cleared (issue 19 §7): the first byte at most 1.5 ms after
// httputil.ReverseProxy's, the whole answer within twice its time.
func proxyTargets(x *ProxyResult) []Target {
	if x == nil {
		return nil
	}
	on := fmt.Sprintf("%s-token streamed request, warm", formatInt(int64(x.RequestTokens)))
	added := float64(x.Same.TTFBNs-x.PlainTTFBNs) / 1e6
	return []Target{
		{Name: "proxy first byte − ReverseProxy's (same bytes)", Want: "≤ +1.5 ms", Got: added, Unit: "+ms", Pass: added <= 1.5, Measured: on},
		{Name: "proxy total / ReverseProxy's (same bytes)", Want: "≤ 2×", Got: x.Same.TotalRatio, Unit: "x", Pass: x.Same.TotalRatio <= 2, Measured: on},
	}
}
