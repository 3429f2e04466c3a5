package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vtcode/vtcode-ls/config"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/proxy"
	"github.com/vtcode/vtcode-ls/proxy/proxytest"
	"github.com/vtcode/vtcode-ls/session"
	"github.com/vtcode/vtcode-ls/summary"
)

// modelCalls counts the engine's own model calls (its summarizer).
type modelCalls struct{ n atomic.Int32 }

func (c *modelCalls) factory(providers.Route, config.Config) (providers.Generator, error) {
	return countingGenerator{summary.New(), &c.n}, nil
}

type countingGenerator struct {
	g providers.Generator
	n *atomic.Int32
}

func (g countingGenerator) Generate(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	g.n.Add(1)
	return g.g.Generate(ctx, req)
}

// compactEarly makes the engine compact any conversation of a few thousand
// tokens: a request it took up would make it call its summarizer.
const compactEarly = "[agent.harness]\nauto_compaction_threshold_tokens = 2000\n[agent.harness.tool_result_clearing]\nenabled = false\n"

// storedSessions lists the session folders of the workspace's store.
func storedSessions(t *testing.T, ws string) []string {
	t.Helper()
	list, _ := filepath.Glob(filepath.Join(ws, ".vtcode", "sessions", "*"))
	var out []string
	for _, p := range list {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			out = append(out, filepath.Base(p))
		}
	}
	return out
}

// longConversation is a Messages body of about n KB of plain text turns.
func longConversation(n int) string {
	var msgs []string
	for i := 0; len(strings.Join(msgs, ",")) < n<<10; i++ {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, fmt.Sprintf(`{"role":%q,"content":%q}`, role, strings.Repeat(fmt.Sprintf("turn %d says something about the code. ", i), 60)))
	}
	if len(msgs)%2 == 0 {
		msgs = append(msgs, `{"role":"user","content":"go on"}`)
	}
	return `{"model":"claude-test","max_tokens":100,"messages":[` + strings.Join(msgs, ",") + `]}`
}

func responsesConversation(n int) string {
	var items []string
	for i := 0; len(strings.Join(items, ",")) < n<<10; i++ {
		items = append(items, fmt.Sprintf(`{"type":"message","role":"user","content":%q}`, strings.Repeat(fmt.Sprintf("item %d of the page's text. ", i), 60)))
	}
	return `{"model":"gpt-test","stream":false,"input":[` + strings.Join(items, ",") + `]}`
}

func do(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, b
}

// proxyError reports whether body is the proxy's JSON error naming want.
func proxyError(body []byte, want string) bool {
	var e struct {
		Error struct{ Type, Message string } `json:"error"`
	}
	return json.Unmarshal(body, &e) == nil && e.Error.Type == "proxy_error" && strings.Contains(e.Error.Message, want)
}

// TestWebPageCannotSpendTheKey is the attack: a page in the
// user's browser POSTs a plain-text conversation (a "simple" request, no
// preflight) with its Origin and no credentials, to Messages and Responses.
// Nothing reaches the upstream, the engine calls no model, and the store
// stays empty.
func TestWebPageCannotSpendTheKey(t *testing.T) {
	calls := &modelCalls{}
	e := setupWith(t, proxytest.Options{}, compactEarly, readTurns(1), "", calls.factory, nil)
	for _, c := range []struct{ path, body string }{
		{"/v1/messages", longConversation(220)},
		{"/v1/responses", responsesConversation(220)},
	} {
		for _, h := range []map[string]string{
			{"Content-Type": "text/plain;charset=UTF-8", "Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"},
			{"Content-Type": "application/json", "Origin": "https://evil.example"}, // after a preflight
			{"Content-Type": "text/plain;charset=UTF-8"},                           // no Origin: still not JSON
			{"Content-Type": "application/x-www-form-urlencoded"},
			{"Sec-Fetch-Site": "cross-site", "Content-Type": "application/json"},
		} {
			req, _ := http.NewRequest(http.MethodPost, e.url+c.path, strings.NewReader(c.body))
			req.Header.Del("Content-Type")
			for k, v := range h {
				req.Header.Set(k, v)
			}
			resp, body := do(t, req)
			settled(t, e.done)
			want := http.StatusForbidden
			if h["Origin"] == "" && h["Sec-Fetch-Site"] == "" {
				want = http.StatusUnsupportedMediaType
			}
			if resp.StatusCode != want || !proxyError(body, "vtcode-ls proxy") {
				t.Errorf("%s %v: %d %s, want %d and a JSON error", c.path, h, resp.StatusCode, body, want)
			}
		}
	}
	// The preflight of a cross-site JSON request is refused too.
	req, _ := http.NewRequest(http.MethodOptions, e.url+"/v1/messages", nil)
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	if resp, _ := do(t, req); resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	settled(t, e.done)
	if n := len(e.up.Requests()); n != 0 {
		t.Errorf("the upstream got %d requests from a web page", n)
	}
	if n := calls.n.Load(); n != 0 {
		t.Errorf("the engine made %d model calls for a web page", n)
	}
	if s := storedSessions(t, e.ws); len(s) != 0 {
		t.Errorf("a web page's requests left sessions on disk: %v", s)
	}
}

// TestAllowedOriginIsServed: an origin the user allowed is served like an
// agent.
func TestAllowedOriginIsServed(t *testing.T) {
	e := setupWith(t, proxytest.Options{}, "", readTurns(1), "", offlineClients, func(o *proxy.Options) { o.AllowedOrigins = []string{"https://app.example"} })
	for origin, want := range map[string]int{"https://app.example": 200, "https://APP.example/": 200, "https://evil.example": 403, "null": 403} {
		req, _ := http.NewRequest(http.MethodPost, e.url+"/v1/messages", strings.NewReader(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-api-key", testKey)
		req.Header.Set("Origin", origin)
		if resp, body := do(t, req); resp.StatusCode != want {
			t.Errorf("Origin %s: %d %s, want %d", origin, resp.StatusCode, body, want)
		}
		settled(t, e.done)
	}
}

// TestNoCredentialsNoEngine: a request without any credential header (a
// local client, not a browser) is forwarded as it came, and whatever the
// upstream answers, the engine neither calls a model nor writes a session.
func TestNoCredentialsNoEngine(t *testing.T) {
	calls := &modelCalls{}
	e := setupWith(t, proxytest.Options{}, compactEarly, readTurns(4), "", calls.factory, nil)
	body := longConversation(300)
	for _, status := range []int{401, 200} {
		if status != 200 {
			e.up.FailNext(proxytest.Failure{Status: status, Header: http.Header{"Content-Type": {"application/json"}},
				Body: `{"type":"error","error":{"type":"authentication_error","message":"x-api-key header is required"}}`})
		}
		req, _ := http.NewRequest(http.MethodPost, e.url+"/v1/messages", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, _ := do(t, req)
		settled(t, e.done)
		reqs := e.up.Requests()
		if resp.StatusCode != status || string(reqs[len(reqs)-1].Body) != body {
			t.Errorf("upstream answered %d: the agent saw %d; forwarded unchanged %v", status, resp.StatusCode, string(reqs[len(reqs)-1].Body) == body)
		}
	}
	if n := calls.n.Load(); n != 0 {
		t.Errorf("a request without credentials made the engine call a model %d times", n)
	}
	if s := storedSessions(t, e.ws); len(s) != 0 {
		t.Errorf("requests without credentials left sessions on disk: %v", s)
	}
	if st := e.srv.Stats(); st.Recent[0].Disposition != "unauthenticated" {
		t.Errorf("disposition %q, want unauthenticated", st.Recent[0].Disposition)
	}
}

// TestRejectedKeyWritesNothing: a key the upstream rejects (401, 403)
// leaves nothing in the store and costs no model call of the engine, even
// for a conversation the engine would compact; the same conversation with
// a key the upstream accepts is taken up.
func TestRejectedKeyWritesNothing(t *testing.T) {
	calls := &modelCalls{}
	e := setupWith(t, proxytest.Options{}, compactEarly, readTurns(4), "", calls.factory, nil)
	body := longConversation(300)
	for _, status := range []int{401, 403, 401} {
		e.up.FailNext(proxytest.Failure{Status: status, Header: http.Header{"Content-Type": {"application/json"}},
			Body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`})
		resp, _ := post(t, e, "/v1/messages", body, map[string]string{"x-api-key": "sk-ant-wrong", "x-claude-code-session-id": "rejected-1"})
		if resp.StatusCode != status {
			t.Fatalf("the agent saw %d, want the upstream's %d", resp.StatusCode, status)
		}
		reqs := e.up.Requests()
		if string(reqs[len(reqs)-1].Body) != body {
			t.Error("a request with a key not yet accepted was rewritten")
		}
	}
	if n := calls.n.Load(); n != 0 {
		t.Errorf("requests the upstream rejected made the engine call a model %d times", n)
	}
	if s := storedSessions(t, e.ws); len(s) != 0 {
		t.Errorf("requests the upstream rejected left sessions on disk: %v", s)
	}
	// The test can fail: with a good key the conversation is taken up.
	post(t, e, "/v1/messages", body, map[string]string{"x-claude-code-session-id": "rejected-1"})
	if s := storedSessions(t, e.ws); len(s) != 1 {
		t.Errorf("an accepted key's conversation: sessions %v, want one", s)
	}
}

// TestRebindingHostIsRefused: a page whose DNS name was rebound to
// 127.0.0.1 sends its own name in Host; the proxy answers 421 to it (the
// stats too) and forwards nothing.
func TestRebindingHostIsRefused(t *testing.T) {
	e := setup(t, "", readTurns(1), "")
	_, port, _ := strings.Cut(strings.TrimPrefix(e.url, "http://"), ":")
	for _, c := range []struct{ method, path, body string }{
		{http.MethodGet, proxy.StatsPath, ""},
		{http.MethodPost, "/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`},
		{http.MethodGet, "/v1/models", ""},
	} {
		for host, want := range map[string]int{"evil.example:" + port: 421, "127.0.0.1.evil.example:" + port: 421, "localhost:" + port: 200, "127.0.0.1:" + port: 200, "[::1]:" + port: 200} {
			req, _ := http.NewRequest(c.method, e.url+c.path, strings.NewReader(c.body))
			req.Host = host
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("x-api-key", testKey)
			resp, body := do(t, req)
			settled(t, e.done)
			if resp.StatusCode != want || want == 421 && !proxyError(body, "not this proxy's address") {
				t.Errorf("%s %s Host %s: %d %s, want %d", c.method, c.path, host, resp.StatusCode, body, want)
			}
		}
	}
	// The POST and the GET of each loopback Host, none of the others.
	if n := len(e.up.Requests()); n != 6 {
		t.Errorf("the upstream got %d requests, want 6", n)
	}
}

// TestListenHostIsAccepted: the proxy's own listen name is a valid Host.
func TestListenHostIsAccepted(t *testing.T) {
	e := setupWith(t, proxytest.Options{}, "", readTurns(1), "", offlineClients, func(o *proxy.Options) { o.Listen = "devbox.lan:8787" })
	for host, want := range map[string]int{"devbox.lan:8787": 200, "DEVBOX.LAN": 200, "other.lan:8787": 421, "192.0.2.1:8787": 421} {
		req, _ := http.NewRequest(http.MethodGet, e.url+proxy.StatsPath, nil)
		req.Host = host
		if resp, _ := do(t, req); resp.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, want)
		}
		settled(t, e.done)
	}
}

// TestUnconfiguredLocalProvidersAreUnreachable: /p/llamacpp/ and
// /p/ollama/ (whose defaults are loopback ports) and any provider the
// user's configuration does not name reach nothing, with any method; a
// workspace file cannot make them reachable.
func TestUnconfiguredLocalProvidersAreUnreachable(t *testing.T) {
	rt := &recordHosts{}
	e := setupWith(t, proxytest.Options{}, "", readTurns(1), "", offlineClients, func(o *proxy.Options) { o.Client = &http.Client{Transport: rt} })
	if err := os.WriteFile(filepath.Join(e.ws, "vtcode.toml"), []byte("[providers.ollama]\nnative_compaction = \"never\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ method, path string }{
		{http.MethodPost, "/p/llamacpp/v1/chat/completions"},
		{http.MethodGet, "/p/llamacpp/slots"},
		{http.MethodDelete, "/p/ollama/api/delete"},
		{http.MethodGet, "/p/ollama/api/tags"},
		{http.MethodPost, "/p/lmstudio/v1/chat/completions"},
	} {
		req, _ := http.NewRequest(c.method, e.url+c.path, strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Content-Type", "application/json")
		resp, body := do(t, req)
		settled(t, e.done)
		if resp.StatusCode != http.StatusNotFound || !proxyError(body, "is not configured") {
			t.Errorf("%s %s: %d %s, want 404 naming the missing configuration", c.method, c.path, resp.StatusCode, body)
		}
	}
	if len(rt.hosts) != 0 {
		t.Errorf("unconfigured providers were dialled: %v", rt.hosts)
	}
}

// TestConfiguredLocalProviderIsReachable: naming the provider in the user
// configuration opens it (its default loopback endpoint).
func TestConfiguredLocalProviderIsReachable(t *testing.T) {
	rt := &recordHosts{}
	e := setupWith(t, proxytest.Options{}, "[providers.ollama]\nnative_compaction = \"never\"\n", readTurns(1), "", offlineClients, func(o *proxy.Options) { o.Client = &http.Client{Transport: rt} })
	req, _ := http.NewRequest(http.MethodGet, e.url+"/p/ollama/api/tags", nil)
	do(t, req)
	settled(t, e.done)
	if len(rt.hosts) != 1 || rt.hosts[0] != "localhost:11434" {
		t.Errorf("a configured ollama: dialled %v, want localhost:11434", rt.hosts)
	}
}

// TestTraversalPathsAreRefused: dot segments, encoded separators and
// double slashes are refused before anything is forwarded.
func TestTraversalPathsAreRefused(t *testing.T) {
	rt := &recordHosts{}
	e := setupWith(t, proxytest.Options{}, "[providers.openrouter]\nbase_url = \"http://127.0.0.1:9/api/v1\"\n", readTurns(1), "", offlineClients,
		func(o *proxy.Options) { o.Client = &http.Client{Transport: rt} })
	for _, p := range []string{
		"/p/openrouter/../../admin",
		"/p/openrouter/v1/../../../x",
		"/p/openrouter/v1/%2e%2e/%2e%2e/x",
		"/p/openrouter/v1%2f..%2fx",
		"/p/openrouter/v1%5c..%5cx",
		"/p/openrouter//v1/models",
		"/v1/./messages",
		"/v1//messages",
	} {
		req, _ := http.NewRequest(http.MethodGet, e.url+"/", nil)
		req.URL.Opaque = p // sent as written, not cleaned by the client
		resp, body := do(t, req)
		settled(t, e.done)
		if resp.StatusCode != http.StatusBadRequest || !proxyError(body, "request path") {
			t.Errorf("%s: %d %s, want 400", p, resp.StatusCode, body)
		}
	}
	if len(rt.hosts) != 0 {
		t.Errorf("traversal paths were forwarded: %v", rt.hosts)
	}
	// A normal path still goes.
	req, _ := http.NewRequest(http.MethodGet, e.url+"/p/openrouter/v1/models/", nil)
	do(t, req)
	settled(t, e.done)
	if len(rt.hosts) != 1 {
		t.Errorf("a normal path: dialled %v", rt.hosts)
	}
}

// TestDuplicateKeysAreForwardedAsSent: a body with two "messages" members
// and a system member between them is what the API reads with the last
// member winning; the engine does not merge them: the body goes as sent.
func TestDuplicateKeysAreForwardedAsSent(t *testing.T) {
	e := setup(t, "", readTurns(1), "")
	var many []string
	for i := 0; i < 30; i++ {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		many = append(many, fmt.Sprintf(`{"role":%q,"content":"m%d"}`, role, i))
	}
	many = append(many, `{"role":"user","content":"last"}`)
	body := `{"model":"m","max_tokens":5,"messages":[` + strings.Join(many, ",") + `],"system":"be brief","messages":[{"role":"user","content":"only this"}]}`
	resp, _ := post(t, e, "/v1/messages", body, nil)
	reqs := e.up.Requests()
	if resp.StatusCode != 200 || len(reqs) != 1 || string(reqs[0].Body) != body {
		t.Fatalf("status %d; upstream body %q, want the agent's bytes", resp.StatusCode, reqs[0].Body)
	}
	if st := e.srv.Stats(); st.FailOpen != 1 {
		t.Errorf("stats %+v: want one fail-open", st)
	}
	// No session holds the merged conversation (31 messages the API never saw).
	list, _ := e.mgr.ListSessions(context.Background(), session.ListParams{})
	for _, l := range list {
		if h, _ := e.mgr.History(context.Background(), session.HistoryParams{SessionID: l.SessionID}); h.Total > 2 {
			t.Errorf("session %s recorded %d messages of a body whose last messages member has 1", l.SessionID, h.Total)
		}
	}
}

// TestOversizedBodyIs413: a body over the API endpoints' limit gets a
// clear 413 and nothing of it reaches the upstream, whether it declares
// its length or is chunked.
func TestOversizedBodyIs413(t *testing.T) {
	e := setup(t, "", readTurns(1), "")
	big := make([]byte, proxy.MaxAPIBody+1)
	copy(big, `{"model":"m","messages":[{"role":"user","content":"`)
	for i := 50; i < len(big); i++ {
		big[i] = 'a'
	}
	for _, chunked := range []bool{false, true} {
		var r io.Reader = bytes.NewReader(big)
		if chunked {
			r = io.MultiReader(r) // hides the length
		}
		req, _ := http.NewRequest(http.MethodPost, e.url+"/v1/messages", r)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-api-key", testKey)
		resp, body := do(t, req)
		settled(t, e.done)
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !proxyError(body, "MiB") {
			t.Errorf("chunked %v: %d %s, want 413", chunked, resp.StatusCode, body)
		}
	}
	if n := len(e.up.Requests()); n != 0 {
		t.Errorf("the upstream got %d (truncated) requests", n)
	}
}
