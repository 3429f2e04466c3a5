//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/vtcode/vtcode-ls/daemon"
	"github.com/vtcode/vtcode-ls/proxy"
)

// sharedEnv isolates the test (config, home, daemon folder) and gives the
// daemon a user configuration whose proxy listens on a free port.
func sharedEnv(t *testing.T) (ws string) {
	t.Helper()
	ws = isolate(t)
	cfg := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "vtcode")
	if err := os.MkdirAll(cfg, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "vtcode.toml"), []byte("[proxy]\nlisten = \"127.0.0.1:0\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(ws)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "vtcode-ls")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// status runs "vtcode-ls status --json".
func status(t *testing.T, bin string) (*daemon.Status, int) {
	t.Helper()
	out, err := exec.Command(bin, "status", "--json").Output()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != 0 {
		return nil, code
	}
	var st daemon.Status
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	return &st, 0
}

func resultOf(t *testing.T, frames []map[string]any, id float64) map[string]any {
	t.Helper()
	for _, f := range frames {
		if f["id"] == id {
			if r, ok := f["result"].(map[string]any); ok {
				return r
			}
			t.Fatalf("request %v failed: %v", id, f)
		}
	}
	t.Fatalf("no response to %v in %v", id, frames)
	return nil
}

// TestSharedDaemon: vtcode-ls with no arguments starts the shared daemon
// and attaches; the next connection attaches to the same daemon and finds
// the session open there; exit codes pass through the forwarder; status
// and stop report and end it.
func TestSharedDaemon(t *testing.T) {
	bin := buildBinary(t)
	ws := sharedEnv(t)
	initWS := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"rootUri":"file://` + filepath.ToSlash(ws) + `","capabilities":{}}}`
	open := `{"jsonrpc":"2.0","id":3,"method":"vtcode/openSession","params":{"sessionId":"s1"}}`
	if _, code := status(t, bin); code != 3 {
		t.Fatalf("status before any client: exit %d, want 3 (none running)", code)
	}

	code, got, stderr := converse(t, bin, nil, []string{initWS, open, shutdownReq, exitNote}, "")
	if code != 0 || stderr != "" {
		t.Fatalf("first client: exit %d, stderr %q", code, stderr)
	}
	if r := resultOf(t, got, 3); r["resumed"] != false {
		t.Errorf("first open: %v, want a new session", r)
	}
	st, _ := status(t, bin)
	if st == nil || st.Clients != 0 || len(st.Workspaces) != 1 || st.Workspaces[0].Root != ws || st.Proxy == "" {
		t.Fatalf("status after the first client: %+v", st)
	}
	first := st.PID

	// The second client reaches the same daemon: s1 is open there (no
	// "busy" error), and resumed.
	code, got, stderr = converse(t, bin, nil, []string{initWS, open, exitNote}, "")
	if code != 1 || stderr != "" {
		t.Errorf("exit without shutdown through the forwarder: exit %d (want 1), stderr %q", code, stderr)
	}
	if r := resultOf(t, got, 3); r["resumed"] != true {
		t.Errorf("second open: %v, want the session resumed", r)
	}
	if st, _ := status(t, bin); st == nil || st.PID != first {
		t.Errorf("the second client started another daemon: %+v, first pid %d", st, first)
	}

	// A malformed header ends the connection as in process.
	code, _, _ = converse(t, bin, nil, []string{initWS}, "Content-Length: 1\nx")
	if code != 1 {
		t.Errorf("malformed header through the forwarder: exit %d, want 1", code)
	}

	out, err := exec.Command(bin, "stop").CombinedOutput()
	if err != nil || !strings.Contains(string(out), strconv.Itoa(first)) {
		t.Fatalf("stop: %v\n%s", err, out)
	}
	if _, code := status(t, bin); code != 3 {
		t.Errorf("status after stop: exit %d, want 3", code)
	}
	// The session was closed cleanly, its lock released: an in-process
	// server can open it (resultOf fails on a "busy" error).
	code, got, _ = converse(t, bin, inProcess, []string{initWS, open, shutdownReq, exitNote}, "")
	if r := resultOf(t, got, 3); code != 0 || r["sessionId"] != "s1" {
		t.Errorf("after stop, in process: exit %d, open %v", code, r)
	}
}

// client is a long-running protocol client process.
type client struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	br     *bufio.Reader
	stderr *bytes.Buffer
	nextID int
}

func startClient(t *testing.T, bin string, ws string) *client {
	t.Helper()
	cmd := exec.Command(bin)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, cmd: cmd, stdin: stdin, br: bufio.NewReader(stdout), stderr: &bytes.Buffer{}, nextID: 1}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	c.call("initialize", map[string]any{"rootUri": "file://" + filepath.ToSlash(ws), "capabilities": map[string]any{}})
	return c
}

// call sends a request and returns its result, reading past
// notifications.
func (c *client) call(method string, params any) map[string]any {
	c.t.Helper()
	id := c.nextID
	c.nextID++
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if _, err := c.stdin.Write(frames(string(body))); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	for {
		frame, err := readOne(c.br)
		if err != nil {
			c.t.Fatalf("%s: no response: %v; stderr %s", method, err, c.stderr)
		}
		var resp struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		_ = json.Unmarshal(frame, &resp)
		if resp.Method != "" || resp.ID == nil || *resp.ID != id {
			continue
		}
		if resp.Error != nil {
			c.t.Fatalf("%s failed: %s", method, resp.Error)
		}
		var r map[string]any
		_ = json.Unmarshal(resp.Result, &r)
		return r
	}
}

func readOne(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "Content-Length: ")))
	if err != nil {
		return nil, fmt.Errorf("bad header %q", line)
	}
	if _, err := br.ReadString('\n'); err != nil {
		return nil, err
	}
	b := make([]byte, n)
	_, err = io.ReadFull(br, b)
	return b, err
}

// TestKilledDaemon: SIGKILL of the shared daemon. The attached client sees
// the connection drop (exit 1, one line on stderr); the next client starts
// a new daemon, which resumes the session with every acknowledged message.
func TestKilledDaemon(t *testing.T) {
	bin := buildBinary(t)
	ws := sharedEnv(t)
	a := startClient(t, bin, ws)
	a.call("vtcode/openSession", map[string]any{"sessionId": "k1"})
	for i := range 3 {
		a.call("vtcode/appendMessages", map[string]any{"sessionId": "k1",
			"messages": []map[string]any{{"role": "user", "content": []map[string]any{{"type": "text", "text": fmt.Sprintf("acknowledged %d", i)}}}}})
	}
	st, _ := status(t, bin)
	if st == nil || st.Clients != 1 {
		t.Fatalf("status: %+v", st)
	}
	if err := syscall.Kill(st.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, a.br); err != nil {
		t.Fatal(err)
	}
	err := a.cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("the attached client after the kill: %v, want exit 1", err)
	}
	if lines := strings.Split(strings.TrimSpace(a.stderr.String()), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "closed the connection") {
		t.Errorf("the client's stderr: %q, want one line saying the daemon went away", a.stderr)
	}

	b := startClient(t, bin, ws)
	r := b.call("vtcode/openSession", map[string]any{"sessionId": "k1"})
	if r["resumed"] != true || r["messages"] != float64(3) {
		t.Errorf("after the kill: %v, want k1 resumed with its 3 messages", r)
	}
	h := b.call("vtcode/history", map[string]any{"sessionId": "k1"})
	msgs, _ := h["messages"].([]any)
	if len(msgs) != 3 {
		t.Errorf("history after the kill: %v", h)
	}
	if st2, _ := status(t, bin); st2 == nil || st2.PID == st.PID {
		t.Errorf("no new daemon: %+v", st2)
	}
}

// TestRun: vtcode-ls run points each known agent at the daemon's proxy
// under the workspace's prefix, passes the agent's arguments and exit code
// through, adds nothing else to its environment and writes nothing to the
// workspace.
func TestRun(t *testing.T) {
	bin := buildBinary(t)
	ws := sharedEnv(t)
	tools := t.TempDir()
	script := "#!/bin/sh\nenv > \"$DUMP\"\nprintf '%s\\n' \"$@\" > \"$DUMP.args\"\nexit 7\n"
	for _, name := range []string{"claude", "codex", "opencode", "qwen", "gemini", "mytool"} {
		if err := os.WriteFile(filepath.Join(tools, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	before := listDir(t, ws)
	dump := filepath.Join(t.TempDir(), "env")
	baseEnv := append(os.Environ(), "DUMP="+dump, "OPENAI_API_KEY=sk-test-user-key", "ANTHROPIC_BASE_URL=https://user:s3cr3t@gateway.example")
	runAgent := func(args ...string) (int, map[string]string, []string, string) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"run", "--workspace", ws}, args...)...)
		cmd.Env = baseEnv
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		env := map[string]string{}
		data, _ := os.ReadFile(dump)
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				env[k] = v
			}
		}
		argData, _ := os.ReadFile(dump + ".args")
		os.Remove(dump)
		os.Remove(dump + ".args")
		return code, env, strings.Fields(string(argData)), stderr.String()
	}
	code, env, args, stderr := runAgent("--", filepath.Join(tools, "claude"), "-p", "hello")
	st, _ := status(t, bin)
	if st == nil || st.Proxy == "" {
		t.Fatalf("no daemon with a proxy after run: %+v (stderr %s)", st, stderr)
	}
	key, err := os.ReadFile(filepath.Join(os.Getenv(daemon.DirEnv), "proxy.key"))
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + st.Proxy + proxy.WorkspaceBase(ws, key)
	if code != 7 || env["ANTHROPIC_BASE_URL"] != base || !slices.Equal(args, []string{"-p", "hello"}) {
		t.Errorf("claude: exit %d, ANTHROPIC_BASE_URL %q (want %q), args %q, stderr %s", code, env["ANTHROPIC_BASE_URL"], base, args, stderr)
	}
	// The base URL that was set is replaced with a note that does not
	// repeat it (a URL may carry a credential).
	if !strings.Contains(stderr, "ANTHROPIC_BASE_URL was set") || strings.Contains(stderr, "s3cr3t") {
		t.Errorf("run's note about the replaced base URL: %q", stderr)
	}
	// Nothing but the base URL was added: no credential, no other setting.
	for k, v := range env {
		if k == "ANTHROPIC_BASE_URL" || k == "PWD" || k == "SHLVL" || k == "_" || k == "OLDPWD" {
			continue
		}
		if !slices.Contains(baseEnv, k+"="+v) {
			t.Errorf("run added %s to the agent's environment", k)
		}
	}

	_, _, args, _ = runAgent(filepath.Join(tools, "codex"), "exec", "hi")
	joined := strings.Join(args, " ")
	for _, want := range []string{`model_provider="vtcode"`, `model_providers.vtcode.base_url="` + base + `/v1"`,
		`model_providers.vtcode.wire_api="responses"`, `model_providers.vtcode.env_key="OPENAI_API_KEY"`, "exec hi"} {
		if !strings.Contains(joined, want) {
			t.Errorf("codex args %q lack %q", joined, want)
		}
	}
	_, env, _, _ = runAgent(filepath.Join(tools, "opencode"), "run", "x")
	var oc struct {
		Provider map[string]struct {
			Options map[string]string `json:"options"`
		} `json:"provider"`
	}
	if err := json.Unmarshal([]byte(env["OPENCODE_CONFIG_CONTENT"]), &oc); err != nil || oc.Provider["anthropic"].Options["baseURL"] != base+"/v1" ||
		oc.Provider["openai"].Options["baseURL"] != base+"/v1" {
		t.Errorf("opencode config %q (%v)", env["OPENCODE_CONFIG_CONTENT"], err)
	}
	if _, env, _, _ = runAgent(filepath.Join(tools, "qwen")); env["OPENAI_BASE_URL"] != base+"/v1" {
		t.Errorf("qwen OPENAI_BASE_URL %q", env["OPENAI_BASE_URL"])
	}
	if _, env, _, _ = runAgent(filepath.Join(tools, "gemini")); env["GOOGLE_GEMINI_BASE_URL"] != base {
		t.Errorf("gemini GOOGLE_GEMINI_BASE_URL %q", env["GOOGLE_GEMINI_BASE_URL"])
	}
	if _, env, _, _ = runAgent("--env", "MY_URL", filepath.Join(tools, "mytool")); env["MY_URL"] != base {
		t.Errorf("--env MY_URL: %q", env["MY_URL"])
	}
	if code, _, _, stderr := runAgent(filepath.Join(tools, "mytool")); code != 2 || !strings.Contains(stderr, "--env NAME") {
		t.Errorf("an unknown agent without --env: exit %d, stderr %q", code, stderr)
	}
	if after := listDir(t, ws); !slices.Equal(before, after) {
		t.Errorf("run changed the workspace: %v -> %v", before, after)
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TestRunKeepsDaemon: the daemon stays while run's agent runs (status
// counts it), and when the daemon is killed under the agent, run starts a
// new one on the same proxy address at once, held again.
func TestRunKeepsDaemon(t *testing.T) {
	bin := buildBinary(t)
	ws := isolate(t)
	// A fixed proxy port (a free one), as the default 127.0.0.1:8787 is.
	port := freePort(t)
	cfg := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "vtcode")
	if err := os.MkdirAll(cfg, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "vtcode.toml"), []byte(fmt.Sprintf("[proxy]\nlisten = \"127.0.0.1:%d\"\n", port)), 0o600); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	// The agent: records the status, kills the daemon, waits (bounded)
	// until a daemon answers again with a run held, records that status.
	script := `#!/bin/sh
"$VTBIN" status --json > "$OUT/before.json"
kill -9 "$(sed -n 's/.*"pid": \([0-9]*\).*/\1/p' "$OUT/before.json" | head -1)"
i=0
while [ $i -lt 3000 ]; do
  if "$VTBIN" status --json > "$OUT/after.json" 2>/dev/null && grep -q '"runs": 1' "$OUT/after.json"; then exit 0; fi
  i=$((i+1))
done
exit 9
`
	agent := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(agent, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--workspace", ws, "--", agent)
	cmd.Env = append(os.Environ(), "VTBIN="+bin, "OUT="+out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	var before, after daemon.Status
	for name, st := range map[string]*daemon.Status{"before": &before, "after": &after} {
		data, err := os.ReadFile(filepath.Join(out, name+".json"))
		if err != nil || json.Unmarshal(data, st) != nil {
			t.Fatalf("%s: %v %s", name, err, data)
		}
	}
	if before.Runs != 1 || after.Runs != 1 || after.PID == before.PID || after.Proxy != before.Proxy || before.Proxy != fmt.Sprintf("127.0.0.1:%d", port) {
		t.Errorf("before the kill %+v, after %+v", before, after)
	}
	if !strings.Contains(stderr.String(), "went away") {
		t.Errorf("run's stderr: %q", stderr.String())
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestDaemonIdleConfig: the idle time of a daemon a client starts is
// [daemon] idle of the user configuration, unless VTCODE_DAEMON_IDLE says
// otherwise; status reports it.
func TestDaemonIdleConfig(t *testing.T) {
	bin := buildBinary(t)
	for _, c := range []struct {
		env  string
		want float64
		line string
	}{
		{"", 7 * 60, "idle       7m0s after the last client"},
		{"45s", 45, "idle       45s after the last client"},
	} {
		ws := sharedEnv(t)
		user := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "vtcode", "vtcode.toml")
		if err := os.WriteFile(user, []byte("[proxy]\nlisten = \"127.0.0.1:0\"\n\n[daemon]\nidle = \"7m\"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv(idleEnv, c.env)
		startClient(t, bin, ws)
		st, _ := status(t, bin)
		if st == nil || st.IdleSec != c.want {
			t.Errorf("%s=%q: status %+v, want idle %vs", idleEnv, c.env, st, c.want)
		}
		out, _ := exec.Command(bin, "status").Output()
		if !strings.Contains(string(out), c.line) {
			t.Errorf("%s=%q: status prints\n%s\nwant %q", idleEnv, c.env, out, c.line)
		}
	}
}
