package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/config"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/proxy"
	"github.com/vtcode/vtcode-ls/proxy/proxytest"
	"github.com/vtcode/vtcode-ls/session"
	"github.com/vtcode/vtcode-ls/summary"
)

// notes records what the session manager reports.
type notes struct {
	mu       sync.Mutex
	logs     []string
	shows    []string
	block    chan struct{} // when set, TokenPressure waits for it to close
	pressure []session.PressureEvent
	bounds   []session.BoundaryEvent
}

func (n *notes) TokenPressure(ev session.PressureEvent) {
	n.mu.Lock()
	block := n.block
	n.pressure = append(n.pressure, ev)
	n.mu.Unlock()
	if block != nil {
		<-block
	}
}
func (n *notes) CompactBoundary(ev session.BoundaryEvent) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.bounds = append(n.bounds, ev)
}
func (n *notes) ShowMessage(_ int, text string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.shows = append(n.shows, text)
}
func (n *notes) LogMessage(_ int, text string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.logs = append(n.logs, text)
}
func (n *notes) logCount() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.logs)
}

type env struct {
	done  chan struct{} // one per request the proxy finished
	up    *proxytest.Upstream
	mgr   *session.Manager
	srv   *proxy.Server
	url   string
	notes *notes
	ws    string
	user  string // the user configuration file
}

// offlineClients summarizes every compaction offline, as the daemon does
// without API keys of its own.
func offlineClients(providers.Route, config.Config) (providers.Generator, error) {
	return summary.New(), nil
}

// testKey is the agents' API key in these tests.
const testKey = "sk-ant-secret-test-key"

// readTurns is a script that reads files for n turns and then answers.
func readTurns(n int) []proxytest.Turn {
	var turns []proxytest.Turn
	for i := 0; i < n; i++ {
		turns = append(turns, proxytest.Turn{Text: fmt.Sprintf("Reading part %d.", i),
			Calls: []proxytest.Call{{Name: "Read", Input: json.RawMessage(fmt.Sprintf(`{"file_path":"/src/part%d.go"}`, i))}}})
	}
	return append(turns, proxytest.Turn{Text: "FINAL: done."})
}

func setup(t *testing.T, extraTOML string, turns []proxytest.Turn, secret string) *env {
	t.Helper()
	return setupWith(t, proxytest.Options{}, extraTOML, turns, secret, offlineClients, nil)
}

// setupWith is setup with a fake upstream configured by uo, the manager's
// client factory and a change to the proxy's options.
func setupWith(t *testing.T, uo proxytest.Options, extraTOML string, turns []proxytest.Turn, secret string, clients session.ClientFactory, opt func(*proxy.Options)) *env {
	t.Helper()
	up, err := proxytest.Start(turns, uo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	ws := t.TempDir()
	// The upstreams are the user's configuration: a workspace file may not
	// pick an endpoint.
	// Clearing in the seed's mode (every request clears what it may), so a
	// short scripted session shows it.
	const seedMode = "clear_at_least_tokens = 0\ncache_aware = false\n"
	const table = "[agent.harness.tool_result_clearing]\n"
	if strings.Contains(extraTOML, table) {
		extraTOML = strings.Replace(extraTOML, table, table+seedMode, 1)
	} else {
		extraTOML += "\n" + table + seedMode
	}
	toml := fmt.Sprintf("[providers.anthropic]\nbase_url = %q\n[providers.openai]\nbase_url = %q\n%s", up.URL, up.URL+"/v1", extraTOML)
	user := filepath.Join(t.TempDir(), "vtcode.toml")
	if err := os.WriteFile(user, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	n := &notes{}
	mgr := session.NewManager(session.Options{Notifier: n, NoWatch: true, UserConfig: user, Clients: clients})
	t.Cleanup(func() { mgr.Close() })
	if err := mgr.AddWorkspace(ws, nil); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{}, 1024)
	o := proxy.Options{Manager: mgr, Secret: secret, AfterRequest: func() { done <- struct{}{} }}
	if opt != nil {
		opt(&o)
	}
	srv := proxy.New(o)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &env{done: done, up: up, mgr: mgr, srv: srv, url: hs.URL, notes: n, ws: ws, user: user}
}

// settled waits until the proxy finished the request just answered (its
// answer recorded, its stats counted): the agent may see the last byte
// before that.
func settled(t *testing.T, done <-chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the proxy did not finish a request")
	}
}

// agent is a minimal Messages API agent: it keeps the conversation, sends
// it whole with a moving cache_control breakpoint, and answers every Read
// with a large file.
type agent struct {
	t        *testing.T
	done     <-chan struct{}
	url      string
	session  string
	msgs     []map[string]any
	sent     [][]byte // request bodies
	answered []string // raw response bodies
	header   http.Header
}

func newAgent(t *testing.T, e *env, sessionID, prompt string) *agent {
	a := &agent{t: t, done: e.done, url: e.url, session: sessionID, header: http.Header{}}
	a.msgs = []map[string]any{{"role": "user", "content": []any{map[string]any{"type": "text", "text": prompt}}}}
	return a
}

func fileText(i int) string {
	var sb strings.Builder
	for l := 0; l < 300; l++ {
		fmt.Fprintf(&sb, "%d\tfunc part%dLine%d() int { return %d } // some code to read\n", l+1, i, l, l*i)
	}
	return sb.String()
}

func (a *agent) body() []byte {
	msgs := make([]map[string]any, len(a.msgs))
	copy(msgs, a.msgs)
	// The breakpoint on the last block of the last message only.
	last := map[string]any{}
	for k, v := range msgs[len(msgs)-1] {
		last[k] = v
	}
	blocks := append([]any(nil), last["content"].([]any)...)
	lb := map[string]any{}
	for k, v := range blocks[len(blocks)-1].(map[string]any) {
		lb[k] = v
	}
	lb["cache_control"] = map[string]string{"type": "ephemeral"}
	blocks[len(blocks)-1] = lb
	last["content"] = blocks
	msgs[len(msgs)-1] = last
	b, _ := json.Marshal(map[string]any{
		"model": "claude-test", "max_tokens": 4096, "stream": true,
		"system":   []any{map[string]any{"type": "text", "text": "You are a test agent.", "cache_control": map[string]string{"type": "ephemeral"}}},
		"tools":    []any{map[string]any{"name": "Read", "description": "read a file", "input_schema": map[string]any{"type": "object"}}},
		"messages": msgs,
		"metadata": map[string]string{"user_id": `{"device_id":"d","session_id":"` + a.session + `"}`},
	})
	return b
}

// step sends one request and folds the answer in; it returns false when
// the model made no tool call.
func (a *agent) step() (more bool, status int) {
	body := a.body()
	a.sent = append(a.sent, body)
	req, _ := http.NewRequest(http.MethodPost, a.url+"/v1/messages?beta=true", bytes.NewReader(body))
	req.Header = a.header.Clone()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", testKey)
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("x-claude-code-session-id", a.session)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	settled(a.t, a.done)
	a.answered = append(a.answered, string(raw))
	if resp.StatusCode != 200 {
		return false, resp.StatusCode
	}
	blocks := map[int]map[string]any{}
	partial := map[int]string{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type         string         `json:"type"`
			Index        int            `json:"index"`
			ContentBlock map[string]any `json:"content_block"`
			Delta        map[string]any `json:"delta"`
		}
		json.Unmarshal([]byte(line), &ev)
		switch ev.Type {
		case "content_block_start":
			blocks[ev.Index] = ev.ContentBlock
		case "content_block_delta":
			if s, ok := ev.Delta["text"].(string); ok {
				blocks[ev.Index]["text"] = blocks[ev.Index]["text"].(string) + s
			}
			if s, ok := ev.Delta["partial_json"].(string); ok {
				partial[ev.Index] += s
			}
		}
	}
	var content, results []any
	for i := 0; i < len(blocks); i++ {
		b := blocks[i]
		if b["type"] == "tool_use" {
			var in map[string]any
			json.Unmarshal([]byte(partial[i]), &in)
			b["input"] = in
			results = append(results, map[string]any{"type": "tool_result", "tool_use_id": b["id"], "content": fileText(len(a.msgs))})
		}
		content = append(content, b)
	}
	a.msgs = append(a.msgs, map[string]any{"role": "assistant", "content": content})
	if len(results) == 0 {
		return false, 200
	}
	a.msgs = append(a.msgs, map[string]any{"role": "user", "content": results})
	return true, 200
}

const clearingTOML = `
[agent.harness.tool_result_clearing]
trigger_tokens = 4000
keep_tool_uses = 2
keep_recent_tool_batches = 2
`

func TestMessagesThroughTheEngine(t *testing.T) {
	e := setup(t, clearingTOML, readTurns(8), "")
	a := newAgent(t, e, "11111111-2222-3333-4444-555555555555", "Read the parts.")
	for i := 0; i < 20; i++ {
		more, status := a.step()
		if status != 200 {
			t.Fatalf("step %d: status %d: %s", i, status, a.answered[len(a.answered)-1])
		}
		if !more {
			break
		}
	}
	reqs := e.up.Requests()
	if len(reqs) != 9 || len(a.sent) != 9 {
		t.Fatalf("upstream got %d requests, agent sent %d; want 9 each", len(reqs), len(a.sent))
	}
	// The answer reached the agent byte for byte: the fake's stream for
	// the last turn, replayed directly, is the same.
	direct, err := http.Post(e.up.URL+"/v1/messages", "application/json", bytes.NewReader(reqs[len(reqs)-1].Body))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := io.ReadAll(direct.Body)
	direct.Body.Close()
	if got := a.answered[len(a.answered)-1]; got != string(want) {
		t.Errorf("the stream the agent saw differs from the upstream's:\n got %.200q\nwant %.200q", got, want)
	}
	cleared := 0
	for i, r := range reqs {
		sent := a.sent[i]
		if r.Header.Get("X-Api-Key") != "[redacted]" {
			t.Errorf("request %d: the agent's x-api-key did not reach the upstream", i)
		}
		if !bytes.Contains(r.Body, []byte("[tool result cleared")) {
			if !bytes.Equal(r.Body, sent) {
				t.Errorf("request %d: nothing cleared, yet the body changed", i)
			}
			continue
		}
		cleared++
		if len(r.Body) >= len(sent) {
			t.Errorf("request %d: forwarded %d bytes, not fewer than the agent's %d", i, len(r.Body), len(sent))
		}
		// Nothing before the first changed message is altered.
		p := commonPrefix(r.Body, sent)
		first := bytes.Index(sent, []byte(`{"type":"tool_result"`))
		if p < first {
			t.Errorf("request %d: bodies differ at byte %d, before the first tool result at %d", i, p, first)
		}
		// The moving breakpoint stays on the last block, the system ones stay.
		if bytes.Count(r.Body, []byte(`"cache_control"`)) != bytes.Count(sent, []byte(`"cache_control"`)) {
			t.Errorf("request %d: cache_control breakpoints changed", i)
		}
		if !bytes.HasSuffix(bytes.TrimRight(r.Body[:bytes.LastIndex(r.Body, []byte(`"cache_control"`))], `,`), []byte(`rn 0 } // some code to read\n"`)) &&
			!bytes.Contains(r.Body[bytes.LastIndex(r.Body, []byte(`"tool_result"`)):], []byte(`"cache_control"`)) {
			t.Errorf("request %d: the last breakpoint is not on the last tool result", i)
		}
	}
	if cleared == 0 {
		t.Fatal("no request reached the upstream with cleared tool results")
	}
	// The session holds the whole conversation, once: 9 user/tool turns
	// and 9 answers.
	list, err := e.mgr.ListSessions(context.Background(), session.ListParams{})
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions: %v %v", list, err)
	}
	h, err := e.mgr.History(context.Background(), session.HistoryParams{SessionID: list[0].SessionID})
	if err != nil {
		t.Fatal(err)
	}
	if h.Total != 1+8*2+1 {
		t.Errorf("session history has %d messages, want %d (prompt, 8 calls with results, final answer)", h.Total, 1+8*2+1)
	}
	if e.notes.logCount() != 0 {
		t.Errorf("log messages on a clean run: %v", e.notes.logs)
	}
	st := e.srv.Stats()
	if st.Requests != 9 || st.FailOpen != 0 || st.Rewritten != cleared {
		t.Errorf("stats %+v, want 9 requests, %d rewritten, no fail-open", st, cleared)
	}
	if b, _ := json.Marshal(st); bytes.Contains(b, []byte("sk-ant-secret")) {
		t.Error("the stats echo the agent's key")
	}
}

func commonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func TestUpstreamErrorsPassThroughAndRecordNothing(t *testing.T) {
	e := setup(t, "", readTurns(3), "")
	a := newAgent(t, e, "aaaaaaaa-0000-0000-0000-000000000001", "Read.")
	if more, status := a.step(); !more || status != 200 {
		t.Fatalf("first step: %v %d", more, status)
	}
	list, _ := e.mgr.ListSessions(context.Background(), session.ListParams{})
	id := list[0].SessionID
	before, _ := e.mgr.History(context.Background(), session.HistoryParams{SessionID: id})

	e.up.FailNext(proxytest.Failure{Status: 429, Header: http.Header{"Retry-After": {"7"}, "Content-Type": {"application/json"}, "X-Request-Id": {"req_1"}},
		Body: `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`})
	req, _ := http.NewRequest(http.MethodPost, e.url+"/v1/messages", bytes.NewReader(a.body()))
	req.Header.Set("x-claude-code-session-id", a.session)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	settled(t, e.done)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" || resp.Header.Get("X-Request-Id") != "req_1" ||
		string(body) != `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}` {
		t.Errorf("the agent saw %d %v %s, not the upstream's error", resp.StatusCode, resp.Header, body)
	}
	after, _ := e.mgr.History(context.Background(), session.HistoryParams{SessionID: id})
	if after.Total != before.Total {
		t.Errorf("a failed request changed the history: %d -> %d messages", before.Total, after.Total)
	}
	// The retry goes through and is recorded once.
	if _, status := a.step(); status != 200 {
		t.Fatalf("retry: %d", status)
	}
	again, _ := e.mgr.History(context.Background(), session.HistoryParams{SessionID: id})
	if again.Total != before.Total+2 {
		t.Errorf("after the retry the history has %d messages, want %d", again.Total, before.Total+2)
	}
}

func TestFailOpenForwardsUnchanged(t *testing.T) {
	e := setup(t, "", readTurns(1), "")
	body := `{"model":"m","messages":"not a list","stream":false}`
	resp, err := postKey(e.url+"/v1/messages", body)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	settled(t, e.done)
	reqs := e.up.Requests()
	if len(reqs) != 1 || string(reqs[0].Body) != body {
		t.Fatalf("upstream got %v, want the body unchanged", reqs)
	}
	if e.notes.logCount() != 1 || !strings.Contains(e.notes.logs[0], "forwarded it unchanged") {
		t.Errorf("log messages %q, want one saying the request went unchanged", e.notes.logs)
	}
	if st := e.srv.Stats(); st.FailOpen != 1 {
		t.Errorf("stats %+v, want one fail-open", st)
	}
}

func TestStatefulResponsesForwardedUntouched(t *testing.T) {
	e := setup(t, "", readTurns(1), "")
	body := `{"model":"gpt-test","previous_response_id":"resp_1","input":[{"type":"message","role":"user","content":"go on"}],"stream":false}`
	resp, err := postKey(e.url+"/v1/responses", body)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	settled(t, e.done)
	reqs := e.up.Requests()
	if len(reqs) != 1 || string(reqs[0].Body) != body || reqs[0].Path != "/v1/responses" {
		t.Fatalf("upstream got %+v, want the body unchanged at /v1/responses", reqs)
	}
	st := e.srv.Stats()
	if st.Stateful != 1 || !st.Recent[0].Stateful {
		t.Errorf("stats %+v, want the request marked stateful", st)
	}
	if list, _ := e.mgr.ListSessions(context.Background(), session.ListParams{}); len(list) != 0 {
		t.Errorf("a stateful request made sessions: %v", list)
	}
}

// postKey posts a JSON body with the agent's key.
func postKey(url, body string) (*http.Response, error) {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testKey)
	return http.DefaultClient.Do(req)
}

func TestSharedSecret(t *testing.T) {
	e := setup(t, "", readTurns(1), "s3cret")
	body := `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	resp, err := http.Post(e.url+"/v1/messages", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	settled(t, e.done)
	if resp.StatusCode != http.StatusUnauthorized || len(e.up.Requests()) != 0 {
		t.Fatalf("without the secret: status %d, upstream requests %d", resp.StatusCode, len(e.up.Requests()))
	}
	req, _ := http.NewRequest(http.MethodPost, e.url+"/v1/messages", strings.NewReader(body))
	req.Header.Set(proxy.SecretHeader, "s3cret")
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	settled(t, e.done)
	reqs := e.up.Requests()
	if resp.StatusCode != 200 || len(reqs) != 1 || reqs[0].Header.Get(proxy.SecretHeader) != "" {
		t.Fatalf("with the secret: status %d, upstream %+v (the secret must not be forwarded)", resp.StatusCode, reqs)
	}
}

func TestBranchKeepsTheStoredSession(t *testing.T) {
	e := setup(t, "", readTurns(4), "")
	a := newAgent(t, e, "bbbbbbbb-0000-0000-0000-000000000002", "Read.")
	for i := 0; i < 3; i++ {
		a.step()
	}
	list, _ := e.mgr.ListSessions(context.Background(), session.ListParams{})
	if len(list) != 1 {
		t.Fatalf("sessions %v", list)
	}
	orig, _ := e.mgr.History(context.Background(), session.HistoryParams{SessionID: list[0].SessionID})
	// The user rewinds to the first answer and edits the prompt's follow-up.
	a.msgs = a.msgs[:3]
	a.msgs[2] = map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Stop, read something else."}}}
	if _, status := a.step(); status != 200 {
		t.Fatal(status)
	}
	list, _ = e.mgr.ListSessions(context.Background(), session.ListParams{})
	if len(list) != 2 {
		t.Fatalf("after a rewind: sessions %v, want the stored one and a branch", list)
	}
	branches := 0
	for _, s := range list {
		h, _ := e.mgr.History(context.Background(), session.HistoryParams{SessionID: s.SessionID})
		if s.SessionID == orig.Messages[0].ID || h.Total == orig.Total {
			if h.Total != orig.Total {
				t.Errorf("the stored session changed: %d -> %d messages", orig.Total, h.Total)
			}
			continue
		}
		branches++
		if h.Total != 4 || h.Messages[2].Text() != "Stop, read something else." {
			t.Errorf("branch has %d messages (%v), want the shared 2, the edit and its answer", h.Total, h.Messages)
		}
	}
	if branches != 1 {
		t.Errorf("%d branches, want 1", branches)
	}
}

func TestCheckListen(t *testing.T) {
	for _, c := range []struct {
		addr   string
		remote bool
		ok     bool
	}{
		{"127.0.0.1:8787", false, true},
		{"localhost:0", false, true},
		{"[::1]:0", false, true},
		{":8787", false, false},
		{":8787", true, false},
		{"0.0.0.0:8787", false, false},
		{"0.0.0.0:8787", true, true},
		{"192.168.1.5:80", false, false},
	} {
		err := proxy.CheckListen(c.addr, c.remote)
		if (err == nil) != c.ok {
			t.Errorf("CheckListen(%q, %v) = %v, want ok=%v", c.addr, c.remote, err, c.ok)
		}
	}
}

// TestEditorCompactionMapsTheAgentsHistory: after vtcode/compact (from the
// editor) on a proxied session, the agent's next request, which still
// carries its whole history, goes out as summary + recent messages and
// extends the same session.
func TestEditorCompactionMapsTheAgentsHistory(t *testing.T) {
	e := setup(t, "[agent.harness.tool_result_clearing]\nenabled = false\n", readTurns(12), "")
	a := newAgent(t, e, "dddddddd-0000-0000-0000-000000000004", "Read the parts.")
	for i := 0; i < 8; i++ {
		a.step()
	}
	list, _ := e.mgr.ListSessions(context.Background(), session.ListParams{})
	id := list[0].SessionID
	res, err := e.mgr.Compact(context.Background(), session.CompactParams{SessionID: id, Strategy: "local"}, nil)
	if err != nil || res.ArtifactID == "" {
		t.Fatalf("compact: %+v %v", res, err)
	}
	before, _ := e.mgr.History(context.Background(), session.HistoryParams{SessionID: id})
	for i := 0; i < 2; i++ {
		if _, status := a.step(); status != 200 {
			t.Fatal(status)
		}
	}
	reqs := e.up.Requests()
	for i, r := range reqs[len(reqs)-2:] {
		sent := a.sent[len(a.sent)-2+i]
		// The results of the first reads are gone: only the summary stands for them.
		// 600 bytes from the middle of the first file read.
		quoted, _ := json.Marshal(fileText(1)[2000:2600])
		first := quoted[1 : len(quoted)-1]
		if !bytes.Contains(sent, first) || !bytes.Contains(r.Body, []byte("Previous conversation summary")) ||
			bytes.Contains(r.Body, first) || len(r.Body) >= len(sent)*2/3 {
			t.Errorf("after the compaction the upstream got %d bytes of the agent's %d, summary %v", len(r.Body), len(sent),
				bytes.Contains(r.Body, []byte("Previous conversation summary")))
		}
	}
	st := e.srv.Stats()
	for i, r := range st.Recent {
		if r.Disposition != "append" && (i > 0 || r.Disposition != "unverified") {
			t.Errorf("request %d taken as %q", i, r.Disposition)
		}
	}
	after, _ := e.mgr.History(context.Background(), session.HistoryParams{SessionID: id})
	if after.Total != before.Total+4 {
		t.Errorf("the two turns after the compaction added %d messages, want 4", after.Total-before.Total)
	}
	if list, _ := e.mgr.ListSessions(context.Background(), session.ListParams{}); len(list) != 1 {
		t.Errorf("sessions %v, want one", list)
	}
}

// restart closes the environment's session manager and starts another on
// the same workspace and configuration, behind a new proxy the agent talks
// to from then on: a daemon killed and started again.
func (e *env) restart(t *testing.T, a *agent) {
	t.Helper()
	if err := e.mgr.Close(); err != nil {
		t.Fatal(err)
	}
	e.notes = &notes{}
	e.mgr = session.NewManager(session.Options{Notifier: e.notes, NoWatch: true, UserConfig: e.user, Clients: offlineClients})
	t.Cleanup(func() { e.mgr.Close() })
	if err := e.mgr.AddWorkspace(e.ws, nil); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{}, 1024)
	e.srv = proxy.New(proxy.Options{Manager: e.mgr, AfterRequest: func() { done <- struct{}{} }})
	hs := httptest.NewServer(e.srv)
	t.Cleanup(hs.Close)
	e.url, e.done = hs.URL, done
	a.url, a.done = hs.URL, done
}

// TestResumeAfterRestart: a daemon that restarts resumes the stored
// session and maps the agent's next request onto it.
func TestResumeAfterRestart(t *testing.T) {
	e := setup(t, "", readTurns(6), "")
	a := newAgent(t, e, "eeeeeeee-0000-0000-0000-000000000005", "Read.")
	for i := 0; i < 3; i++ {
		a.step()
	}
	list, _ := e.mgr.ListSessions(context.Background(), session.ListParams{})
	before, _ := e.mgr.History(context.Background(), session.HistoryParams{SessionID: list[0].SessionID})
	e.restart(t, a)
	if _, status := a.step(); status != 200 {
		t.Fatal(status)
	}
	list, _ = e.mgr.ListSessions(context.Background(), session.ListParams{})
	after, _ := e.mgr.History(context.Background(), session.HistoryParams{SessionID: list[0].SessionID})
	if len(list) != 1 || after.Total != before.Total+2 {
		t.Errorf("after a restart: %d sessions, %d -> %d messages, want 1 session and 2 more messages", len(list), before.Total, after.Total)
	}
}

// TestRestartAfterCompactionKeepsTheSummary: after the engine compacted a
// proxied conversation (automatically on the way out, or from the editor),
// a restarted daemon maps the agent's whole history onto the summary again:
// its next request extends the session and goes out as summary + recent
// messages, instead of being taken for the agent's own new window (a
// boundary of trigger "agent" and the agent's whole history sent, to be
// compacted once more).
func TestRestartAfterCompactionKeepsTheSummary(t *testing.T) {
	for _, c := range []struct {
		name, toml string
		editor     bool
	}{
		{"auto", "[agent.harness]\nauto_compaction_threshold_tokens = 40000\n[agent.harness.tool_result_clearing]\nenabled = false\n", false},
		{"editor", "[agent.harness.tool_result_clearing]\nenabled = false\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := setup(t, c.toml, readTurns(12), "")
			a := newAgent(t, e, "12121212-0000-0000-0000-00000000000"+c.name[:1], "Read the parts.")
			// Turns until the engine compacted on its own (or 5 for the
			// editor), each reading a file of about 6k tokens.
			for i := 0; i < 10 && (i < 5 || !c.editor && len(e.notes.bounds) == 0); i++ {
				if _, status := a.step(); status != 200 {
					t.Fatal(status)
				}
			}
			list, _ := e.mgr.ListSessions(context.Background(), session.ListParams{})
			if len(list) != 1 {
				t.Fatalf("sessions %v", list)
			}
			id := list[0].SessionID
			if c.editor {
				if _, err := e.mgr.Compact(context.Background(), session.CompactParams{SessionID: id, Strategy: "local"}, nil); err != nil {
					t.Fatal(err)
				}
			} else if len(e.notes.bounds) == 0 {
				t.Fatal("no automatic compaction in 10 turns")
			}
			before, _ := e.mgr.History(context.Background(), session.HistoryParams{SessionID: id})
			if len(before.Messages) == 0 || !strings.Contains(before.Messages[0].Text(), "Previous conversation summary") {
				t.Fatalf("the live history does not start with the summary: %+v", before.Messages)
			}

			e.restart(t, a)
			if _, status := a.step(); status != 200 {
				t.Fatal(status)
			}
			reqs := e.up.Requests()
			last := reqs[len(reqs)-1].Body
			// 600 bytes from the middle of the first file read, which the
			// summary stands for.
			quoted, _ := json.Marshal(fileText(1)[2000:2600])
			first := quoted[1 : len(quoted)-1]
			if !bytes.Contains(a.sent[len(a.sent)-1], first) || bytes.Contains(last, first) || !bytes.Contains(last, []byte("Previous conversation summary")) {
				t.Errorf("after the restart the upstream got the first read %v and the summary %v, want only the summary",
					bytes.Contains(last, first), bytes.Contains(last, []byte("Previous conversation summary")))
			}
			for _, r := range e.srv.Stats().Recent {
				if r.Disposition != "append" {
					t.Errorf("after the restart the request was taken as %q, want append", r.Disposition)
				}
			}
			for _, b := range e.notes.bounds {
				t.Errorf("after the restart a compaction boundary (trigger %q) was recorded", b.Trigger)
			}
			after, _ := e.mgr.History(context.Background(), session.HistoryParams{SessionID: id})
			if after.Total != before.Total+2 {
				t.Errorf("the turn after the restart took the history from %d to %d messages, want 2 more", before.Total, after.Total)
			}
			if list, _ := e.mgr.ListSessions(context.Background(), session.ListParams{}); len(list) != 1 {
				t.Errorf("sessions %v, want one", list)
			}
		})
	}
}

// TestRestartInABranch: after a rewind made a branch, a restarted daemon
// goes on in the branch the agent is in, instead of branching once more
// from the stored session.
func TestRestartInABranch(t *testing.T) {
	e := setup(t, "", readTurns(6), "")
	a := newAgent(t, e, "13131313-0000-0000-0000-000000000001", "Read.")
	for i := 0; i < 3; i++ {
		a.step()
	}
	a.msgs = a.msgs[:3]
	a.msgs[2] = map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Stop, read something else."}}}
	if _, status := a.step(); status != 200 {
		t.Fatal(status)
	}
	a.step()
	list, _ := e.mgr.ListSessions(context.Background(), session.ListParams{})
	if len(list) != 2 {
		t.Fatalf("after a rewind: sessions %v, want the stored one and a branch", list)
	}
	branch := list[0].SessionID // the one updated last
	before, _ := e.mgr.History(context.Background(), session.HistoryParams{SessionID: branch})

	e.restart(t, a)
	if _, status := a.step(); status != 200 {
		t.Fatal(status)
	}
	list, _ = e.mgr.ListSessions(context.Background(), session.ListParams{})
	if len(list) != 2 {
		t.Errorf("after the restart: sessions %v, want the same two", list)
	}
	after, _ := e.mgr.History(context.Background(), session.HistoryParams{SessionID: branch})
	if after.Total != before.Total+2 {
		t.Errorf("the branch went from %d to %d messages, want 2 more", before.Total, after.Total)
	}
	for _, r := range e.srv.Stats().Recent {
		if r.Disposition != "append" {
			t.Errorf("after the restart the request was taken as %q, want append", r.Disposition)
		}
	}
}

// TestAgentClearingItsOwnResultsIsNoBranch: an agent that replaces old tool
// results in place (qwen-code's microcompaction) still extends the same
// conversation, and the upstream gets the agent's cleared version.
func TestAgentClearingItsOwnResultsIsNoBranch(t *testing.T) {
	e := setup(t, "", readTurns(6), "")
	a := newAgent(t, e, "ffffffff-0000-0000-0000-000000000006", "Read.")
	for i := 0; i < 3; i++ {
		a.step()
	}
	old := a.msgs[2]["content"].([]any)[0].(map[string]any)
	old["content"] = "[Old tool result content cleared]"
	if _, status := a.step(); status != 200 {
		t.Fatal(status)
	}
	reqs := e.up.Requests()
	if !bytes.Contains(reqs[len(reqs)-1].Body, []byte("[Old tool result content cleared]")) {
		t.Error("the upstream did not get the agent's own cleared result")
	}
	for i, r := range e.srv.Stats().Recent {
		if r.Disposition != "append" && (i > 0 || r.Disposition != "unverified") {
			t.Errorf("request %d taken as %q", i, r.Disposition)
		}
	}
	if list, _ := e.mgr.ListSessions(context.Background(), session.ListParams{}); len(list) != 1 {
		t.Errorf("sessions %v, want one", list)
	}
}
