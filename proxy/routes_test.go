package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/proxy"
	"github.com/vtcode/vtcode-ls/proxy/proxytest"
	"github.com/vtcode/vtcode-ls/session"
)

func post(t *testing.T, e *env, path, body string, h map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", testKey) // the agent's key, as agents send it
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	settled(t, e.done)
	return resp, b
}

func TestRoutesAndBaseURLConventions(t *testing.T) {
	up, err := proxytest.Start(readTurns(1), proxytest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	extra := fmt.Sprintf("[providers.openrouter]\nbase_url = %q\n[providers.claudegw]\nbase_url = %q\n", up.URL+"/api/v1", up.URL+"/gw/v1")
	e := setup(t, extra, readTurns(1), "")
	chat := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	msg := `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
	for _, c := range []struct {
		path, body string
		upstream   *proxytest.Upstream
		want       string
	}{
		{"/v1/messages?beta=true", msg, e.up, "/v1/messages"},                                                               // https://api.anthropic.com convention
		{"/v1/responses", `{"model":"m","input":[{"type":"message","role":"user","content":"hi"}]}`, e.up, "/v1/responses"}, // …/v1 convention
		{"/p/openrouter/v1/chat/completions", chat, up, "/api/v1/chat/completions"},
		{"/p/claudegw/v1/messages", msg, up, "/gw/v1/messages"},
	} {
		before := len(c.upstream.Requests())
		resp, body := post(t, e, c.path, c.body, nil)
		reqs := c.upstream.Requests()
		if resp.StatusCode != 200 || len(reqs) != before+1 || reqs[len(reqs)-1].Path != c.want {
			t.Errorf("%s: status %d %s; upstream paths %v, want %s", c.path, resp.StatusCode, body, paths(reqs), c.want)
		}
	}
	// Any other path passes through untouched, headers included.
	req, _ := http.NewRequest(http.MethodGet, e.url+"/v1/models?limit=5", nil)
	req.Header.Set("Authorization", "Bearer sk-secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	settled(t, e.done)
	reqs := e.up.Requests()
	last := reqs[len(reqs)-1]
	if resp.StatusCode != 200 || last.Path != "/v1/models" || last.Method != "GET" || last.Header.Get("Authorization") != "[redacted]" {
		t.Errorf("pass-through: %d %+v", resp.StatusCode, last)
	}
	if st := e.srv.Stats(); st.PassThrough != 1 {
		t.Errorf("stats %+v: want one pass-through", st)
	}
}

func paths(reqs []proxytest.Request) []string {
	var out []string
	for _, r := range reqs {
		out = append(out, r.Path)
	}
	return out
}

func TestUpstreamUnreachable(t *testing.T) {
	e := setup(t, "[providers.openrouter]\nbase_url = \"http://127.0.0.1:1/v1\"\n", readTurns(1), "")
	resp, body := post(t, e, "/p/openrouter/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		map[string]string{"Authorization": "Bearer sk-very-secret"})
	if resp.StatusCode != http.StatusBadGateway || !json.Valid(body) || bytes.Contains(body, []byte("sk-very-secret")) {
		t.Errorf("unreachable upstream: %d %s", resp.StatusCode, body)
	}
	// A key no upstream accepted yet, and no answer: nothing is written.
	if list, _ := e.mgr.ListSessions(context.Background(), session.ListParams{}); len(list) != 0 {
		t.Fatalf("a request that got no answer left sessions %v", list)
	}
}

// TestCountTokensCountsTheProjection: count_tokens is forwarded as the
// messages request would be (cleared), and records nothing.
func TestCountTokensCountsTheProjection(t *testing.T) {
	e := setup(t, clearingTOML, readTurns(8), "")
	a := newAgent(t, e, "cccccccc-0000-0000-0000-000000000003", "Read.")
	for i := 0; i < 6; i++ {
		a.step()
	}
	list, _ := e.mgr.ListSessions(context.Background(), session.ListParams{})
	before, _ := e.mgr.History(context.Background(), session.HistoryParams{SessionID: list[0].SessionID})
	body := a.body()
	resp, out := post(t, e, "/v1/messages/count_tokens?beta=true", string(body), map[string]string{"x-claude-code-session-id": a.session})
	reqs := e.up.Requests()
	last := reqs[len(reqs)-1]
	if resp.StatusCode != 200 || last.Kind != "count" || !bytes.Contains(last.Body, []byte("[tool result cleared")) || len(last.Body) >= len(body) {
		t.Fatalf("count_tokens: %d %s; upstream got %d bytes (agent %d), cleared %v", resp.StatusCode, out, len(last.Body), len(body),
			bytes.Contains(last.Body, []byte("[tool result cleared")))
	}
	after, _ := e.mgr.History(context.Background(), session.HistoryParams{SessionID: list[0].SessionID})
	if after.Total != before.Total {
		t.Errorf("count_tokens changed the history: %d -> %d", before.Total, after.Total)
	}
}

// responsesBody is a Codex-like stateless request.
func responsesBody(items ...string) string {
	return `{"model":"gpt-test","instructions":"You are Codex.","stream":false,"prompt_cache_key":"th-1","input":[` + strings.Join(items, ",") + `]}`
}

// TestCodexWindowChangeIsAnAgentBoundary: a request whose
// x-codex-window-id changed starts the agent's fresh window: recorded in
// the same session as a boundary of trigger "agent", not as a branch.
func TestCodexWindowChangeIsAnAgentBoundary(t *testing.T) {
	e := setup(t, "", []proxytest.Turn{{Text: "ok"}}, "")
	user := func(s string) string { return `{"type":"message","role":"user","content":"` + s + `"}` }
	asst := `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Fake side answer."}]}` // what the fake answers
	h := map[string]string{"session-id": "th-1", "x-codex-window-id": "th-1:0"}
	post(t, e, "/v1/responses", responsesBody(user("env"), user("do it")), h)
	post(t, e, "/v1/responses", responsesBody(user("env"), user("do it"), asst, user("more")), h)
	h["x-codex-window-id"] = "th-1:1"
	post(t, e, "/v1/responses", responsesBody(user("env"), user("do it"), user("Another language model started to solve this problem. Summary: x")), h)
	list, _ := e.mgr.ListSessions(context.Background(), session.ListParams{})
	if len(list) != 1 {
		t.Fatalf("sessions %v, want one; requests %+v", list, e.srv.Stats().Recent)
	}
	hist, _ := e.mgr.History(context.Background(), session.HistoryParams{SessionID: list[0].SessionID})
	if hist.Total != 4 || !strings.HasPrefix(hist.Messages[2].Text(), "Another language model") {
		t.Errorf("history after the new window: %d messages %v", hist.Total, hist.Messages)
	}
	if len(e.notes.bounds) != 1 || e.notes.bounds[0].Trigger != "agent" {
		t.Errorf("boundaries %+v, want one of trigger agent", e.notes.bounds)
	}
	arts, _ := e.mgr.ListArtifacts(context.Background(), list[0].SessionID, nil)
	if len(arts) != 1 {
		t.Errorf("artifacts %v: the old window must be kept", arts)
	}
}

// TestWorkspaceCannotRedirectCredentials: a workspace file (untrusted, it
// comes with the repository) that points a provider at another host does not
// get the agent's credentials there (the configuration ignores the key); the
// same base_url in the user's configuration is honoured.
func TestWorkspaceCannotRedirectCredentials(t *testing.T) {
	const evil = "http://192.0.2.7:9/v1" // TEST-NET: never dialled in this test
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "vtcode.toml"), []byte("[providers.openrouter]\nbase_url = \""+evil+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	try := func(user string) (hosts []string, code int) {
		mgr := session.NewManager(session.Options{UserConfig: user, NoWatch: true, Clients: offlineClients})
		defer mgr.Close()
		if err := mgr.AddWorkspace(ws, nil); err != nil {
			t.Fatal(err)
		}
		rt := &recordHosts{}
		srv := proxy.New(proxy.Options{Manager: mgr, Client: &http.Client{Transport: rt}})
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8787/p/openrouter/v1/chat/completions", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Authorization", "Bearer sk-user-key")
		req.Header.Set("Content-Type", "application/json")
		srv.ServeHTTP(rec, req)
		if strings.Contains(rec.Body.String(), "sk-user-key") {
			t.Errorf("the answer echoes the credential: %s", rec.Body)
		}
		return rt.hosts, rec.Code
	}
	if hosts, _ := try(""); slices.Contains(hosts, "192.0.2.7:9") {
		t.Errorf("a base_url only the workspace file names was dialled with the agent's credentials: %v", hosts)
	}
	user := filepath.Join(t.TempDir(), "vtcode.toml")
	if err := os.WriteFile(user, []byte("[providers.openrouter]\nbase_url = \""+evil+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if hosts, code := try(user); !slices.Contains(hosts, "192.0.2.7:9") || code != http.StatusBadGateway {
		t.Errorf("a base_url of the user's configuration was not tried: %d %v", code, hosts)
	}
}

// recordHosts is a transport that records the host of every request and
// fails it without dialling.
type recordHosts struct {
	mu    sync.Mutex
	hosts []string
}

func (r *recordHosts) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.hosts = append(r.hosts, req.URL.Host)
	r.mu.Unlock()
	return nil, errors.New("refused by the test")
}

// TestOpencodeSummaryThenWindow: opencode's summarization agent (its own
// system prompt, no tools) summarizes the main conversation; the window it
// starts next is an agent boundary of the same session.
func TestOpencodeSummaryThenWindow(t *testing.T) {
	e := setup(t, "", []proxytest.Turn{{Text: "ok"}}, "")
	h := map[string]string{"x-session-id": "ses_oc1"}
	chat := func(msgs ...string) string {
		return `{"model":"m","stream":false,"tools":[{"type":"function","function":{"name":"read","parameters":{}}}],"messages":[` + strings.Join(msgs, ",") + `]}`
	}
	sys := `{"role":"system","content":"You are opencode."}`
	user := func(s string) string { return `{"role":"user","content":"` + s + `"}` }
	asst := `{"role":"assistant","content":"Fake side answer."}` // what the fake answers a request without scripted tools
	post(t, e, "/v1/chat/completions", chat(sys, user("fix it")), h)
	post(t, e, "/v1/chat/completions", chat(sys, user("fix it"), asst, user("go on")), h)
	// The summarization agent: a system prompt of its own, no tools.
	post(t, e, "/v1/chat/completions", `{"model":"m","stream":false,"messages":[{"role":"system","content":"You are a context summarization agent."},`+
		user("Here is the conversation so far: [User]: fix it")+`]}`, h)
	post(t, e, "/v1/chat/completions", chat(sys, user("What did we do so far?"), `{"role":"assistant","content":"We fixed half of it."}`, user("Continue")), h)
	st := e.srv.Stats()
	var disp []string
	for _, r := range st.Recent {
		disp = append(disp, r.Disposition)
	}
	// The first request's key is not known good yet: it goes as it came,
	// and its 2xx answer makes the engine take the conversation up.
	if strings.Join(disp, " ") != "unverified append side window" {
		t.Errorf("dispositions %v, want unverified append side window", disp)
	}
	list, _ := e.mgr.ListSessions(context.Background(), session.ListParams{})
	if len(list) != 1 || len(e.notes.bounds) != 1 || e.notes.bounds[0].Trigger != "agent" {
		t.Errorf("sessions %v, boundaries %+v: want one session with one agent boundary", list, e.notes.bounds)
	}
}

// TestStreamIsNotBuffered: each event reaches the agent while the upstream
// is still holding the rest of the stream.
func TestStreamIsNotBuffered(t *testing.T) {
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":5}}}\n\n")
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}))
	defer up.Close()
	e := setup(t, "[providers.slow]\nbase_url = \""+up.URL+"\"\n", readTurns(1), "")
	req, _ := http.NewRequest(http.MethodPost, e.url+"/p/slow/v1/messages", strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make(chan string, 1)
	go func() {
		buf := make([]byte, 4096)
		n, _ := resp.Body.Read(buf)
		first <- string(buf[:n])
	}()
	select {
	case got := <-first:
		if !strings.HasPrefix(got, "event: message_start") {
			t.Errorf("first bytes %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the first event did not arrive while the upstream held the rest: the proxy buffers")
	}
	close(release)
	rest, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(rest), "message_stop") {
		t.Errorf("rest of the stream %q", rest)
	}
	settled(t, e.done)
}
