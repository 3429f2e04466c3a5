//go:build agents && linux

// Package agents_test runs the real coding agents (Claude Code, Codex CLI,
// opencode and qwen-code, pinned versions from npm) through the proxy of a vtcode-ls daemon,
// offline, against the scripted fake upstream of proxy/proxytest: 30+
// turns of reading large files and running commands. `make test-agents`
// installs the agents under $(CACHE), builds the daemon and this test, and
// runs it in a network namespace with loopback only (unshare -n); the test
// checks that it really is offline before it starts an agent.
//
// Environment (set by the Makefile): VTCODE_LS_BIN, VTCODE_CLAUDE,
// VTCODE_CODEX, VTCODE_OPENCODE, VTCODE_QWEN (its cli.js) and VTCODE_NODE22
// (the Node 22 it needs).
package agents_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/vtcode/vtcode-ls/providers/catalog"
	"github.com/vtcode/vtcode-ls/proxy/proxytest"
)

// The script of every agent: singles turns reading one large file each
// (clearing keeps the request small), then batches turns reading four at
// once (past the engine's threshold: compaction), then a command and the
// final answer. Every file is ~20 KB; there are singles + 4×batches + 1
// model steps with tools, and singles + 4×batches reads.
const (
	singles = 22
	batches = 8
	files   = singles + 4*batches
	steps   = singles + batches + 1 // model steps with tool calls
)

// script builds the turns of an agent whose read call for a file is read,
// and whose shell call for a command is shell.
func script(ws string, singles, batches int, read func(path string) proxytest.Call, shell func(cmd string) proxytest.Call) []proxytest.Turn {
	path := func(i int) string { return filepath.Join(ws, fmt.Sprintf("module%02d.go", i)) }
	var turns []proxytest.Turn
	for i := 0; i < singles; i++ {
		turns = append(turns, proxytest.Turn{Text: fmt.Sprintf("Reading module %02d.", i), Calls: []proxytest.Call{read(path(i))}})
	}
	for b := 0; b < batches; b++ {
		t := proxytest.Turn{Text: fmt.Sprintf("Reading four more modules (batch %d).", b)}
		for k := 0; k < 4; k++ {
			t.Calls = append(t.Calls, read(path(singles+4*b+k)))
		}
		turns = append(turns, t)
	}
	return append(turns,
		proxytest.Turn{Text: "Counting the files.", Calls: []proxytest.Call{shell("ls | wc -l")}},
		proxytest.Turn{Text: "FINAL: all modules read."})
}

func mustEnv(t *testing.T, k string) string {
	t.Helper()
	v := os.Getenv(k)
	if v == "" {
		t.Fatalf("%s is not set: run this test with make test-agents", k)
	}
	if _, err := os.Stat(v); err != nil {
		t.Fatalf("%s: %v", k, err)
	}
	return v
}

// offline fails the test unless the process can reach nothing but
// loopback: the agents must never talk to the outside.
func offline(t *testing.T) {
	t.Helper()
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagLoopback == 0 && ifc.Flags&net.FlagUp != 0 {
			t.Fatalf("network interface %s is up: run in a namespace with loopback only (make test-agents uses unshare -n)", ifc.Name)
		}
	}
	c, err := net.DialTimeout("tcp", "1.1.1.1:443", time.Second)
	if err == nil {
		c.Close()
		t.Fatal("an outside address is reachable: the agents would not be offline")
	}
}

// notification is one message the daemon sent the client.
type notification struct {
	Method string
	Params json.RawMessage
}

// client is a protocol client (as an editor) on the daemon's stdio.
type client struct {
	conn *jsonrpc2.Conn
	mu   sync.Mutex
	seen []notification
}

func (c *client) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	var p json.RawMessage
	if req.Params != nil {
		p = *req.Params
	}
	c.mu.Lock()
	c.seen = append(c.seen, notification{req.Method, p})
	c.mu.Unlock()
	if !req.Notif {
		_ = conn.Reply(ctx, req.ID, nil) // window/workDoneProgress/create
	}
}

func (c *client) notes(method string) []json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []json.RawMessage
	for _, n := range c.seen {
		if n.Method == method {
			out = append(out, n.Params)
		}
	}
	return out
}

type rwc struct {
	io.ReadCloser
	io.WriteCloser
}

func (p rwc) Close() error { p.WriteCloser.Close(); return p.ReadCloser.Close() }

// daemon starts vtcode-ls serve on ws as an editor would, and returns the
// client and the in-process proxy's URL.
func daemon(t *testing.T, ws string) (*client, string) {
	bin := mustEnv(t, "VTCODE_LS_BIN")
	cmd := exec.Command(bin, "serve")
	cmd.Dir = ws
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + userConfigHome(ws)}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	c := &client{}
	c.conn = jsonrpc2.NewConn(context.Background(), jsonrpc2.NewBufferedStream(rwc{stdout, stdin}, jsonrpc2.VSCodeObjectCodec{}), c)
	urlc := make(chan string, 1)
	var logMu sync.Mutex
	var log bytes.Buffer
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			logMu.Lock()
			log.WriteString(line + "\n")
			logMu.Unlock()
			if u, ok := strings.CutPrefix(line, "vtcode-ls proxy listening on "); ok {
				urlc <- u
			}
		}
	}()
	t.Cleanup(func() {
		if t.Failed() {
			logMu.Lock()
			t.Logf("daemon stderr:\n%s", tailOf(log.String(), 4000))
			logMu.Unlock()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	init := map[string]any{"processId": os.Getpid(), "rootUri": "file://" + ws,
		"capabilities": map[string]any{"window": map[string]any{"workDoneProgress": true}}}
	if err := c.conn.Call(ctx, "initialize", init, nil); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	_ = c.conn.Notify(ctx, "initialized", map[string]any{})
	select {
	case u := <-urlc:
		return c, u
	case <-ctx.Done():
		t.Fatal("the daemon did not report its proxy address")
	}
	return nil, ""
}

func tailOf(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// workspace writes the files the agents read and the configuration: the
// upstreams, the in-process proxy on a free port, and a 64k-token context
// (less for Codex, which truncates long outputs itself, and for opencode,
// whose prompt is smaller) for the engine, so that clearing and compaction both happen within the
// run while the agents (which see the usage of the smaller requests) never
// compact themselves.
func workspace(t *testing.T) string {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < files; i++ {
		var sb strings.Builder
		for l := 0; sb.Len() < 20000; l++ {
			fmt.Fprintf(&sb, "// file %02d line %04d: func handler%02d_%04d(w http.ResponseWriter, r *http.Request) { serve(w, r, %d) }\n", i, l, i, l, l*i)
		}
		if err := os.WriteFile(filepath.Join(ws, fmt.Sprintf("module%02d.go", i)), []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// userConfigHome is the XDG_CONFIG_HOME of the daemon serving ws: the
// upstreams are the user's configuration, since a workspace file may not
// pick an endpoint.
func userConfigHome(ws string) string { return ws + ".xdg" }

// configure writes the user configuration (the upstreams) and the
// workspace configuration (the proxy and the policy).
func configure(t *testing.T, ws, anthropicURL, openaiURL string, window, keep int) {
	user := fmt.Sprintf(`[providers.anthropic]
base_url = %q

[providers.openai]
base_url = %q
`, anthropicURL, openaiURL)
	dir := filepath.Join(userConfigHome(ws), "vtcode")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "vtcode.toml"), []byte(user), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`[proxy]
listen = "127.0.0.1:0"

[context]
max_context_tokens = %d
reserved_output_tokens = 8000

[agent.harness.tool_result_clearing]
keep_tool_uses = %d
keep_recent_tool_batches = %d
`, window, keep, keep)
	if err := os.WriteFile(filepath.Join(ws, "vtcode.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
}

// proxyStats reads the proxy's statistics.
type proxyStats struct {
	Requests  int `json:"requests"`
	Rewritten int `json:"rewritten"`
	FailOpen  int `json:"failOpen"`
	Recent    []struct {
		Path        string `json:"path"`
		SessionID   string `json:"sessionId"`
		Disposition string `json:"disposition"`
		Status      int    `json:"status"`
		BytesIn     int    `json:"bytesIn"`
		BytesOut    int    `json:"bytesOut"`
		Rewritten   bool   `json:"rewritten"`
		Cleared     int    `json:"clearedResults"`
		Compacted   bool   `json:"compacted"`
	} `json:"recent"`
}

func statsOf(t *testing.T, proxyURL string) proxyStats {
	resp, err := http.Get(proxyURL + "/vtcode-ls/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st proxyStats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// run runs an agent command in ws with a clean environment.
func run(t *testing.T, ws string, env []string, name string, args ...string) ([]byte, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = ws
	cmd.Env = env
	cmd.Stdin = nil
	// stdout goes to a file: a Node program that exits right after writing
	// to a pipe loses what the pipe did not take yet (64 KiB).
	outFile, err := os.Create(filepath.Join(t.TempDir(), "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer outFile.Close()
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = outFile, &errb
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	out, rerr := os.ReadFile(outFile.Name())
	if rerr != nil {
		t.Fatal(rerr)
	}
	if err != nil {
		t.Fatalf("%s exited with %v after %s\nstdout:\n%s\nstderr:\n%s", filepath.Base(name), err, took, tailOf(string(out), 3000), tailOf(errb.String(), 3000))
	}
	return out, took
}

// checkEngine asserts what the upstream and the editor saw of one agent's
// run: cleared results and, past the threshold, a summary, in requests
// smaller than the agent's; the session, its pressure and the compaction
// progress on the protocol client.
func checkEngine(t *testing.T, c *client, up *proxytest.Upstream, proxyURL, endpoint string) {
	t.Helper()
	main := proxytest.Bodies(up.Requests(), "main")
	if len(main) < steps+1 {
		t.Errorf("upstream got %d main requests, want at least %d", len(main), steps+1)
	}
	if !proxytest.Contains(main, "[tool result cleared") {
		t.Error("no request reached the upstream with cleared tool results")
	}
	if !proxytest.Contains(main, "Previous conversation summary") {
		t.Error("no request reached the upstream with a compaction summary")
	}
	st := statsOf(t, proxyURL)
	if st.FailOpen != 0 {
		t.Errorf("%d requests failed open", st.FailOpen)
	}
	sessionID := ""
	var rewritten, compacted, maxIn, maxOut, seen int
	for _, r := range st.Recent {
		if !strings.HasSuffix(strings.TrimSuffix(r.Path, "/"), endpoint) {
			continue
		}
		seen++
		if r.Status != 200 {
			t.Errorf("request to %s answered %d", r.Path, r.Status)
		}
		// The first request's key is not known good yet: it goes as it
		// came, and its answer makes the engine take the conversation up.
		if r.Disposition != "append" && (seen > 1 || r.Disposition != "unverified") {
			t.Errorf("request to %s was taken as %q, want every turn to extend the one conversation", r.Path, r.Disposition)
		}
		if r.SessionID == "" {
			continue
		}
		sessionID = r.SessionID
		maxIn, maxOut = max(maxIn, r.BytesIn), max(maxOut, r.BytesOut)
		if !r.Rewritten {
			continue
		}
		rewritten++
		if r.Compacted {
			compacted++
		}
		if r.BytesOut >= r.BytesIn {
			t.Errorf("a rewritten request forwarded %d bytes, not fewer than the agent's %d", r.BytesOut, r.BytesIn)
		}
	}
	t.Logf("%s: %d requests through the proxy, %d rewritten, %d compacted; largest agent request %d bytes, largest forwarded %d bytes",
		endpoint, len(main), rewritten, compacted, maxIn, maxOut)
	if rewritten == 0 || compacted == 0 {
		t.Errorf("rewritten %d, compacted %d: want both", rewritten, compacted)
	}
	// The editor's view: the session, its pressure, the compaction progress.
	var list []struct {
		SessionID string `json:"sessionId"`
		Messages  int    `json:"messages"`
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.conn.Call(ctx, "vtcode/listSessions", map[string]any{}, &list); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range list {
		found = found || s.SessionID == sessionID
	}
	if !found {
		t.Errorf("vtcode/listSessions %v does not show the proxied session %s", list, sessionID)
	}
	pressure := 0
	for _, p := range c.notes("vtcode/tokenPressure") {
		var ev struct {
			SessionID string `json:"sessionId"`
		}
		json.Unmarshal(p, &ev)
		if ev.SessionID == sessionID {
			pressure++
		}
	}
	if pressure == 0 {
		t.Errorf("no vtcode/tokenPressure for session %s", sessionID)
	}
	compacting := false
	for _, p := range c.notes("$/progress") {
		compacting = compacting || bytes.Contains(p, []byte(`"title":"Compacting context..."`))
	}
	if !compacting {
		t.Error(`no $/progress "Compacting context..." reached the client`)
	}
	if t.Failed() {
		for _, p := range c.notes("window/logMessage") {
			t.Logf("window/logMessage %s", p)
		}
		for _, p := range c.notes("$/progress") {
			t.Logf("$/progress %s", p)
		}
	}
	// vtcode/compact (the editor's Compact Context) acts on the session.
	var manual struct {
		Mode    string `json:"mode"`
		Message string `json:"message"`
	}
	if err := c.conn.Call(ctx, "vtcode/compact", map[string]any{"sessionId": sessionID}, &manual); err != nil {
		t.Errorf("vtcode/compact on the proxied session: %v", err)
	} else if manual.Mode != "local" && manual.Mode != "none" {
		t.Errorf("vtcode/compact answered %+v", manual)
	}
	bounds := 0
	for _, p := range c.notes("vtcode/compactBoundary") {
		if bytes.Contains(p, []byte(sessionID)) {
			bounds++
		}
	}
	if bounds == 0 {
		t.Errorf("no vtcode/compactBoundary for session %s", sessionID)
	}
}

func startUpstream(t *testing.T, turns []proxytest.Turn, o proxytest.Options) *proxytest.Upstream {
	up, err := proxytest.Start(turns, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	return up
}

func input(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// claudeScript is the script with Claude Code's Read and Bash tools.
func claudeScript(ws string, singles, batches int) []proxytest.Turn {
	return script(ws, singles, batches,
		func(path string) proxytest.Call {
			return proxytest.Call{Name: "Read", Input: input(map[string]string{"file_path": path})}
		},
		func(cmd string) proxytest.Call {
			return proxytest.Call{Name: "Bash", Input: input(map[string]string{"command": cmd, "description": "Run " + cmd})}
		})
}

// runClaude runs Claude Code through the proxy and checks that it finished
// without an error after every step of the script.
func runClaude(t *testing.T, ws, baseURL string, extra ...string) {
	claude := mustEnv(t, "VTCODE_CLAUDE")
	home := t.TempDir()
	args := append([]string{"-p", "Read every module of this folder, one by one, then count the files.",
		"--output-format", "json", "--dangerously-skip-permissions", "--no-session-persistence"}, extra...)
	out, took := run(t, ws, []string{"PATH=/usr/bin:/bin", "HOME=" + home, "TERM=dumb",
		"ANTHROPIC_BASE_URL=" + baseURL, "ANTHROPIC_API_KEY=sk-ant-fake-key",
		"IS_SANDBOX=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}, claude, args...)
	var res struct {
		IsError  bool   `json:"is_error"`
		Subtype  string `json:"subtype"`
		Result   string `json:"result"`
		NumTurns int    `json:"num_turns"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("claude output is not its JSON result: %v\n%s", err, tailOf(string(out), 2000))
	}
	t.Logf("claude: %d turns in %s, result %q", res.NumTurns, took.Round(time.Millisecond), res.Result)
	if res.IsError || res.Subtype != "success" || !strings.Contains(res.Result, "FINAL") {
		t.Errorf("claude saw an error or did not finish: %+v", res)
	}
	if res.NumTurns < steps+1 {
		t.Errorf("claude ran %d turns, want at least %d", res.NumTurns, steps+1)
	}
}

func TestClaudeCode(t *testing.T) {
	mustEnv(t, "VTCODE_CLAUDE")
	offline(t)
	p := runPair(t, func(ws string) []proxytest.Turn { return claudeScript(ws, singles, batches) }, "anthropic", 64000,
		func(t *testing.T, ws, baseURL string) { runClaude(t, ws, baseURL) })
	checkEngine(t, p.c, p.engine, p.proxyURL, "/v1/messages")
	compareCache(t, p)
}

// TestClaudeCodeCompactsItself makes Claude Code compact on its own (the
// fake reports 3× the tokens it receives, and --autocompact is at its
// minimum): its summarization request is projected but not recorded, and
// the fresh window it starts afterwards becomes a boundary of trigger
// "agent" in the same session, not a branch.
func TestClaudeCodeCompactsItself(t *testing.T) {
	mustEnv(t, "VTCODE_CLAUDE")
	offline(t)
	ws := workspace(t)
	// Single reads only: batches of four refill Claude Code's window right
	// after each of its compactions, which it stops as thrashing.
	anth := startUpstream(t, claudeScript(ws, 28, 0), proxytest.Options{TokenScale: 3, Strict: true})
	oai := startUpstream(t, []proxytest.Turn{{Text: "unused"}}, proxytest.Options{})
	configure(t, ws, anth.URL, oai.URL+"/v1", 400000, 2)
	c, proxyURL := daemon(t, ws)
	runClaude(t, ws, proxyURL, "--autocompact", "100000")
	if r := anth.Strictness().Rejected; len(r) > 0 {
		t.Errorf("the upstream refused %d requests as the API would: %s", len(r), strings.Join(r[:min(len(r), 3)], "; "))
	}

	compacts := proxytest.Bodies(anth.Requests(), "compact")
	if len(compacts) == 0 {
		t.Fatal("Claude Code never compacted on its own: the test does not exercise its compaction")
	}
	st := statsOf(t, proxyURL)
	disp := map[string]int{}
	sessions := map[string]bool{}
	for _, r := range st.Recent {
		disp[r.Disposition]++
		if r.SessionID != "" {
			sessions[r.SessionID] = true
		}
	}
	t.Logf("claude compacted itself %d times; dispositions %v", len(compacts), disp)
	if disp["side"] != len(compacts) || disp["window"] != len(compacts) || disp["branch"] != 0 || disp["fail-open"] != 0 {
		t.Errorf("dispositions %v: want one side and one window per agent compaction (%d), no branch, no fail-open", disp, len(compacts))
	}
	if len(sessions) != 1 {
		t.Errorf("sessions %v: the agent's compaction must stay in its one session", sessions)
	}
	agentBounds := 0
	for _, p := range c.notes("vtcode/compactBoundary") {
		if bytes.Contains(p, []byte(`"trigger":"agent"`)) {
			agentBounds++
		}
	}
	if agentBounds != len(compacts) {
		t.Errorf("%d compactBoundary notifications with trigger agent, want %d", agentBounds, len(compacts))
	}
}

func TestCodex(t *testing.T) {
	mustEnv(t, "VTCODE_CODEX")
	offline(t)
	exec := func(cmd string) proxytest.Call {
		return proxytest.Call{Name: "exec_command", Input: input(map[string]string{"cmd": cmd})}
	}
	p := runPair(t, func(ws string) []proxytest.Turn {
		return script(ws, singles, batches, func(path string) proxytest.Call { return exec("cat " + filepath.Base(path)) }, exec)
	}, "openai", 36000, runCodex)
	checkEngine(t, p.c, p.engine, p.proxyURL, "/v1/responses")
	compareCache(t, p)
}

// runCodex runs codex exec on ws against baseURL and checks that it ran
// every command and finished.
func runCodex(t *testing.T, ws, baseURL string) {
	codex := mustEnv(t, "VTCODE_CODEX")
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`model = "gpt-5.1-codex"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "%s/v1"
wire_api = "responses"
env_key = "FAKE_API_KEY"

[features]
plugins = false

[analytics]
enabled = false
[feedback]
enabled = false
[otel]
exporter = "none"
`, baseURL)
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	out, took := run(t, ws, []string{"PATH=/usr/bin:/bin", "HOME=" + home, "TERM=dumb", "FAKE_API_KEY=sk-fake-key"},
		codex, "exec", "--skip-git-repo-check", "--json", "--dangerously-bypass-approvals-and-sandbox", "--ephemeral",
		"Read every module of this folder, one by one, then count the files.")
	turnsDone, commands, final := 0, 0, ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var ev struct {
			Type string `json:"type"`
			Item struct {
				Type     string `json:"type"`
				Text     string `json:"text"`
				Message  string `json:"message"`
				ExitCode *int   `json:"exit_code"`
			} `json:"item"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		switch {
		case ev.Type == "turn.completed":
			turnsDone++
		case ev.Type == "turn.failed" || ev.Type == "error":
			t.Errorf("codex reported an error: %s", sc.Text())
		case ev.Type == "item.completed" && ev.Item.Type == "command_execution":
			commands++
			if ev.Item.ExitCode == nil || *ev.Item.ExitCode != 0 {
				t.Errorf("a command failed: %s", sc.Text())
			}
		case ev.Type == "item.completed" && ev.Item.Type == "agent_message":
			final = ev.Item.Text
		case ev.Type == "item.completed" && ev.Item.Type == "error" && !strings.Contains(ev.Item.Message, "Model metadata"):
			t.Errorf("codex error item: %s", sc.Text())
		}
	}
	t.Logf("codex: %d commands in %s, final %q", commands, took.Round(time.Millisecond), final)
	if turnsDone != 1 || !strings.Contains(final, "FINAL") {
		t.Errorf("codex did not finish its turn: %d turn.completed, final message %q", turnsDone, final)
	}
	if commands < files+1 {
		t.Errorf("codex ran %d commands, want at least %d", commands, files+1)
	}
}

func TestOpencode(t *testing.T) {
	mustEnv(t, "VTCODE_OPENCODE")
	offline(t)
	p := runPair(t, func(ws string) []proxytest.Turn {
		return script(ws, singles, batches,
			func(path string) proxytest.Call {
				return proxytest.Call{Name: "read", Input: input(map[string]string{"filePath": path})}
			},
			func(cmd string) proxytest.Call {
				return proxytest.Call{Name: "bash", Input: input(map[string]string{"command": cmd, "description": "Run " + cmd})}
			})
	}, "openai", 44000, runOpencode)
	checkEngine(t, p.c, p.engine, p.proxyURL, "/v1/chat/completions")
	compareCache(t, p)
}

// runOpencode runs opencode on ws against baseURL and checks that every
// tool completed and it finished.
func runOpencode(t *testing.T, ws, baseURL string) {
	opencode := mustEnv(t, "VTCODE_OPENCODE")
	home := t.TempDir()
	cfgDir := filepath.Join(home, ".config", "opencode")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`{"model":"fake/fake-model","small_model":"fake/fake-model","autoupdate":false,"share":"disabled",
 "permission":{"*":"allow"},
 "provider":{"fake":{"npm":"@ai-sdk/openai-compatible","name":"Fake",
   "options":{"baseURL":"%s/v1","apiKey":"sk-fake-key"},
   "models":{"fake-model":{"name":"Fake","tool_call":true,"limit":{"context":400000,"output":8192}}}}}}`, baseURL)
	if err := os.WriteFile(filepath.Join(cfgDir, "opencode.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	out, took := run(t, ws, []string{"PATH=/usr/bin:/bin", "HOME=" + home, "TERM=dumb",
		"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1",
		"OPENCODE_DISABLE_DEFAULT_PLUGINS=1", "OPENCODE_DISABLE_SHARE=1", "OPENCODE_DISABLE_CLAUDE_CODE=1",
		"OPENCODE_DISABLE_EXTERNAL_SKILLS=1"},
		opencode, "run", "--format", "json", "Read every module of this folder, one by one, then count the files.")
	tools, final := 0, ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var ev struct {
			Type string `json:"type"`
			Part struct {
				Text  string `json:"text"`
				State struct {
					Status string `json:"status"`
				} `json:"state"`
			} `json:"part"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		switch ev.Type {
		case "tool_use":
			tools++
			if ev.Part.State.Status != "completed" {
				t.Errorf("a tool did not complete: %s", tailOf(sc.Text(), 500))
			}
		case "text":
			final = ev.Part.Text
		case "error":
			t.Errorf("opencode reported an error: %s", tailOf(sc.Text(), 1000))
		}
	}
	t.Logf("opencode: %d tool calls in %s, final %q", tools, took.Round(time.Millisecond), final)
	if tools < files+1 || !strings.Contains(final, "FINAL") {
		t.Errorf("opencode ran %d tools, final %q: want at least %d and the final answer", tools, final, files+1)
	}
}

// TestQwenCode: qwen-code sends no session id; the session is found by
// the fingerprint of its system prompt and first user message.
func TestQwenCode(t *testing.T) {
	mustEnv(t, "VTCODE_QWEN")
	mustEnv(t, "VTCODE_NODE22")
	offline(t)
	p := runPair(t, func(ws string) []proxytest.Turn {
		return script(ws, singles, batches,
			func(path string) proxytest.Call {
				return proxytest.Call{Name: "read_file", Input: input(map[string]string{"file_path": path})}
			},
			func(cmd string) proxytest.Call {
				return proxytest.Call{Name: "run_shell_command", Input: input(map[string]string{"command": cmd, "description": "Run " + cmd})}
			})
	}, "openai", 64000, runQwen)
	checkEngine(t, p.c, p.engine, p.proxyURL, "/v1/chat/completions")
	compareCache(t, p)
}

// runQwen runs qwen-code on ws against baseURL and checks that it ran every
// tool and finished.
func runQwen(t *testing.T, ws, baseURL string) {
	cli := mustEnv(t, "VTCODE_QWEN")
	node := mustEnv(t, "VTCODE_NODE22")
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".qwen"), 0o700); err != nil {
		t.Fatal(err)
	}
	settings := `{"security":{"auth":{"selectedType":"openai"}},"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false},
 "general":{"disableAutoUpdate":true,"disableUpdateNag":true},"memory":{"enableManagedAutoMemory":false},
 "model":{"skipNextSpeakerCheck":true,"skipLoopDetection":true}}`
	if err := os.WriteFile(filepath.Join(home, ".qwen", "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	out, took := run(t, ws, []string{"PATH=" + filepath.Dir(node) + ":/usr/bin:/bin", "HOME=" + home, "TERM=dumb",
		"OPENAI_BASE_URL=" + baseURL + "/v1", "OPENAI_API_KEY=sk-fake-key", "OPENAI_MODEL=fake-model"},
		node, cli, "--auth-type", "openai", "--approval-mode", "yolo", "--output-format", "json",
		"Read every module of this folder, one by one, then count the files.")
	var events []struct {
		Type    string `json:"type"`
		IsError bool   `json:"is_error"`
		Result  string `json:"result"`
		Message struct {
			Content []struct {
				Type string `json:"type"`
			} `json:"content"`
		} `json:"message"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out[bytes.IndexByte(out, '['):]), &events); err != nil {
		t.Fatalf("qwen output is not its JSON array: %v\n%s", err, tailOf(string(out), 2000))
	}
	tools, final, failed := 0, "", false
	for _, ev := range events {
		for _, p := range ev.Message.Content {
			if p.Type == "tool_use" {
				tools++
			}
		}
		if ev.Type == "result" {
			final, failed = ev.Result, ev.IsError
		}
	}
	t.Logf("qwen-code: %d tool calls in %s, final %q", tools, took.Round(time.Millisecond), final)
	if failed || tools < files+1 || !strings.Contains(final, "FINAL") {
		t.Errorf("qwen-code: error %v, %d tools, final %q: want no error, at least %d tools and the final answer", failed, tools, final, files+1)
	}
}

// pair is one agent's script run three times against strict upstreams:
// by the agent alone (direct); through the daemon's proxy with a window
// of cacheWindow (cached), behind a tap that lets the upstream compare what
// it gets with what the agent sent; and through the proxy with a window
// small enough for the engine to compact within the run (engine).
type pair struct {
	wire                   string
	direct, cached, engine *proxytest.Upstream
	c                      *client
	proxyURL               string // the engine run's
}

// cacheWindow is the engine's window in the runs that compare the prompt
// cache with the agent alone: a real model's, where clearing runs and
// nothing forces it to break the cache at every request.
const cacheWindow = 200_000

// runPair runs script (built for a workspace) with run: direct, then through
// the proxy of a daemon whose upstream for wire ("anthropic", "openai" or
// "gemini") is the strict one, with a window of cacheWindow and of window
// tokens.
func runPair(t *testing.T, script func(ws string) []proxytest.Turn, wire string, window int, run func(t *testing.T, ws, baseURL string)) pair {
	t.Helper()
	o := proxytest.Options{Strict: true, Thinking: true}
	dws := workspace(t)
	p := pair{wire: wire}
	p.direct = startUpstream(t, script(dws), o)
	run(t, dws, p.direct.URL)

	proxied := func(window int) (*proxytest.Upstream, *client, string) {
		ws := workspace(t)
		up := startUpstream(t, script(ws), o)
		t.Cleanup(func() {
			if rej := up.Strictness().Rejected; t.Failed() && len(rej) > 0 {
				t.Logf("window %d: the strict upstream refused %d requests: %s", window, len(rej), tailOf(strings.Join(rej, "\n"), 3000))
			}
		})
		unused := startUpstream(t, []proxytest.Turn{{Text: "unused"}}, proxytest.Options{})
		switch wire {
		case "anthropic":
			configure(t, ws, up.URL, unused.URL+"/v1", window, 2)
		case "gemini":
			configure(t, ws, unused.URL, unused.URL+"/v1", window, 2)
			configureGemini(t, ws, up.URL)
		default:
			configure(t, ws, unused.URL, up.URL+"/v1", window, 2)
		}
		c, proxyURL := daemon(t, ws)
		tap, err := up.Tap(proxyURL)
		if err != nil {
			t.Fatal(err)
		}
		run(t, ws, tap)
		return up, c, proxyURL
	}
	p.cached, _, _ = proxied(cacheWindow)
	p.engine, p.c, p.proxyURL = proxied(window)
	return p
}

// pricing names the cache pricing of a cost comparison: a provider's and
// model's, or with no model each request's own (the model a Gemini API
// path names).
type pricing struct{ name, provider, model string }

// inputCost is the modelled input cost of every model request an upstream
// answered, under pricing pr, in units of uncached tokens (4 bytes).
func inputCost(up *proxytest.Upstream, pr pricing) float64 {
	var cat *catalog.Catalog // the built-in cost table
	sum := 0.0
	for _, e := range up.Strictness().Entries {
		model := pr.model
		if model == "" {
			_, m, _ := strings.Cut(e.Path, "/models/")
			model, _, _ = strings.Cut(m, ":")
		}
		sum += cat.Cost(pr.provider, model).Units(e.PromptBytes/4, e.CachedBytes/4)
	}
	return sum
}

// stableShare is the least share of prefix-stable requests through the
// proxy, relative to the agent alone (issue 19). A break of the prefix
// through the proxy is a step of the cleared horizon (the cache-aware
// schedule of clearing): at most one warm step per clearing.StepInterval
// (10) requests, steps the window forces when the four-file batches come
// faster than it holds them, and steps coalesced with the agent's own
// breaks (qwen-code clearing old results itself). The runs measure 90–94 %
// of the agent's own share while costing 0.77–0.95× of it.
const stableShare = 0.9

// compareCache asserts that no request of any run was one an API would
// refuse, and that with a real window the proxy keeps the prompt cache
// nearly as stable as the agent alone (stableShare) and costs less than the agent
// alone under Anthropic's and OpenAI's cache pricing.
func compareCache(t *testing.T, p pair) {
	t.Helper()
	for _, r := range []struct {
		name string
		up   *proxytest.Upstream
	}{{"direct", p.direct}, {"proxied", p.cached}, {"proxied with compactions", p.engine}} {
		if rej := r.up.Strictness().Rejected; len(rej) > 0 {
			t.Errorf("%s: the upstream refused %d requests as the API would: %s", r.name, len(rej), strings.Join(rej[:min(len(rej), 3)], "; "))
		}
	}
	ds, dn := p.direct.Strictness().Stable("main")
	ps, pn := p.cached.Strictness().Stable("main")
	if dn == 0 || pn == 0 {
		t.Fatalf("no main requests to compare: %d direct, %d proxied", dn, pn)
	}
	dshare, pshare := float64(ds)/float64(dn), float64(ps)/float64(pn)
	t.Logf("prefix-stable: %d/%d direct, %d/%d through the proxy (%.0f %% of direct)", ds, dn, ps, pn, 100*pshare/dshare)
	if pshare < stableShare*dshare {
		for i, e := range p.cached.Strictness().Entries {
			if e.Divergence != "" {
				t.Logf("request %d (%s) does not start with the previous one %s", i, e.Kind, e.Divergence)
			}
		}
		t.Errorf("through the proxy %d/%d requests start with the previous one, the agent alone %d/%d: want at least %.0f %% of its share", ps, pn, ds, dn, 100*stableShare)
	}
	pricings := []pricing{{"Anthropic", "anthropic", "claude-sonnet-4-6"}, {"OpenAI", "openai", "gpt-5.1-codex"}}
	if p.wire == "gemini" {
		// Each request at its model's price (Gemini CLI routes its turns
		// to gemini-3.1-pro-preview, its side requests to a Flash model).
		pricings = append(pricings, pricing{"Gemini", "gemini", ""})
	}
	for _, pr := range pricings {
		d, x := inputCost(p.direct, pr), inputCost(p.cached, pr)
		t.Logf("modelled input cost under %s cache pricing: %.0f direct, %.0f through the proxy (%.2f×)", pr.name, d, x, x/d)
		if x >= d {
			t.Errorf("through the proxy the modelled input cost under %s cache pricing is %.0f, the agent alone %.0f: want less", pr.name, x, d)
		}
	}
}
