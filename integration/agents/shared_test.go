//go:build agents && linux

package agents_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/vtcode/vtcode-ls/proxy/proxytest"
)

// editor is a protocol client attached to the shared daemon (vtcode-ls
// with no arguments) that can wait for what it receives.
type editor struct {
	client
	cmd     *exec.Cmd
	changed chan struct{} // closed and replaced on each notification
	cmu     sync.Mutex
}

func (e *editor) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	e.client.Handle(ctx, conn, req)
	e.cmu.Lock()
	close(e.changed)
	e.changed = make(chan struct{})
	e.cmu.Unlock()
}

// await waits until ok holds for the notifications received so far.
func (e *editor) await(t *testing.T, what string, ok func(e *editor) bool) {
	t.Helper()
	deadline := time.NewTimer(4 * time.Minute)
	defer deadline.Stop()
	for {
		e.cmu.Lock()
		ch := e.changed
		e.cmu.Unlock()
		if ok(e) {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func attachEditor(t *testing.T, bin string, env []string, ws string) *editor {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Dir, cmd.Env = ws, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	e := &editor{cmd: cmd, changed: make(chan struct{})}
	e.conn = jsonrpc2.NewConn(context.Background(), jsonrpc2.NewBufferedStream(rwc{stdout, stdin}, jsonrpc2.VSCodeObjectCodec{}), e)
	t.Cleanup(func() {
		e.conn.Close()
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("editor on %s, stderr: %s", filepath.Base(ws), tailOf(stderr.String(), 2000))
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	init := map[string]any{"processId": os.Getpid(), "rootUri": "file://" + ws,
		"capabilities": map[string]any{"window": map[string]any{"workDoneProgress": true}}}
	if err := e.conn.Call(ctx, "initialize", init, nil); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	_ = e.conn.Notify(ctx, "initialized", map[string]any{})
	return e
}

type listed struct {
	SessionID string `json:"sessionId"`
	Workspace string `json:"workspace"`
}

func (e *editor) list(t *testing.T) []listed {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []listed
	if err := e.conn.Call(ctx, "vtcode/listSessions", map[string]any{}, &out); err != nil {
		t.Fatalf("vtcode/listSessions: %v", err)
	}
	return out
}

// pressured returns the sessions of workspace ws this editor got a
// tokenPressure of, and how many it got.
func (e *editor) pressured(ws string) (map[string]int, int) {
	ids := map[string]int{}
	n := 0
	for _, p := range e.notes("vtcode/tokenPressure") {
		var ev struct {
			SessionID string `json:"sessionId"`
			Workspace string `json:"workspace"`
		}
		json.Unmarshal(p, &ev)
		if ws == "" || ev.Workspace == ws {
			ids[ev.SessionID]++
			n++
		}
	}
	return ids, n
}

type agentRun struct {
	out  []byte
	err  error
	errb string
}

// runVia starts an agent with vtcode-ls run in the background.
func runVia(bin string, env []string, ws string, args ...string) chan agentRun {
	done := make(chan agentRun, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"run", "--workspace", ws, "--"}, args...)...)
		cmd.Dir, cmd.Env = ws, env
		outFile, err := os.CreateTemp("", "agent-stdout")
		if err != nil {
			done <- agentRun{err: err}
			return
		}
		defer os.Remove(outFile.Name())
		defer outFile.Close()
		var errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = outFile, &errb
		err = cmd.Run()
		out, _ := os.ReadFile(outFile.Name())
		done <- agentRun{out: out, err: err, errb: errb.String()}
	}()
	return done
}

// TestSharedDaemonAgents: three editors (two on workspace A, one on B) and
// two real agents started with vtcode-ls run (Claude Code in A, Codex CLI
// in B) on one shared daemon at the same time. Each editor sees exactly its
// workspace's sessions; a compaction requested by the second editor of A
// reaches Claude Code's next request; the daemon is SIGKILLed in the
// middle: run starts a new one on the same address, both agents finish in
// the same sessions, with no tool call recorded twice.
func TestSharedDaemonAgents(t *testing.T) {
	bin := mustEnv(t, "VTCODE_LS_BIN")
	claude := mustEnv(t, "VTCODE_CLAUDE")
	codex := mustEnv(t, "VTCODE_CODEX")
	offline(t)
	wsA, wsB := workspace(t), workspace(t)
	anth := startUpstream(t, claudeScript(wsA, singles, batches), proxytest.Options{})
	execCall := func(cmd string) proxytest.Call {
		return proxytest.Call{Name: "exec_command", Input: input(map[string]string{"cmd": cmd})}
	}
	oai := startUpstream(t, script(wsB, singles, batches, func(path string) proxytest.Call { return execCall("cat " + filepath.Base(path)) }, execCall), proxytest.Options{})
	// The workspaces' files (window, clearing); the one user configuration
	// of the daemon: both upstreams and a fixed proxy port.
	configure(t, wsA, anth.URL, oai.URL+"/v1", 64000, 2)
	configure(t, wsB, anth.URL, oai.URL+"/v1", 36000, 2)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	proxyAddr := ln.Addr().String()
	ln.Close()
	xdg := t.TempDir()
	if err := os.MkdirAll(filepath.Join(xdg, "vtcode"), 0o700); err != nil {
		t.Fatal(err)
	}
	user := fmt.Sprintf("[providers.anthropic]\nbase_url = %q\n\n[providers.openai]\nbase_url = %q\n\n[proxy]\nlisten = %q\n", anth.URL, oai.URL+"/v1", proxyAddr)
	if err := os.WriteFile(filepath.Join(xdg, "vtcode", "vtcode.toml"), []byte(user), 0o600); err != nil {
		t.Fatal(err)
	}
	sock, err := os.MkdirTemp("", "vtd")
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + home, "XDG_CONFIG_HOME=" + xdg, "VTCODE_DAEMON_DIR=" + sock, "TERM=dumb"}
	t.Cleanup(func() {
		cmdStop := exec.Command(bin, "stop")
		cmdStop.Env = env
		out, _ := cmdStop.CombinedOutput()
		t.Logf("vtcode-ls stop: %s", strings.TrimSpace(string(out)))
		if t.Failed() {
			if log, err := os.ReadFile(filepath.Join(sock, "daemon.log")); err == nil {
				t.Logf("daemon log:\n%s", tailOf(string(log), 6000))
			}
		}
		os.RemoveAll(sock)
	})
	a1 := attachEditor(t, bin, env, wsA)
	a2 := attachEditor(t, bin, env, wsA)
	b := attachEditor(t, bin, env, wsB)

	// Codex's own configuration: the model only; run adds the provider.
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o700); err != nil {
		t.Fatal(err)
	}
	codexCfg := "model = \"gpt-5.1-codex\"\ncheck_for_update_on_startup = false\n\n[features]\nplugins = false\n\n[analytics]\nenabled = false\n[feedback]\nenabled = false\n[otel]\nexporter = \"none\"\n"
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(codexCfg), 0o600); err != nil {
		t.Fatal(err)
	}
	claudeRun := runVia(bin, append(env, "ANTHROPIC_API_KEY=sk-ant-fake-key", "IS_SANDBOX=1", "DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"), wsA,
		claude, "-p", "Read every module of this folder, one by one, then count the files.",
		"--output-format", "json", "--dangerously-skip-permissions", "--no-session-persistence")
	codexRun := runVia(bin, append(env, "OPENAI_API_KEY=sk-fake-key"), wsB,
		codex, "exec", "--skip-git-repo-check", "--json", "--dangerously-bypass-approvals-and-sandbox", "--ephemeral",
		"Read every module of this folder, one by one, then count the files.")

	// Both editors of A follow Claude Code's session live; B's editor sees
	// only Codex's.
	var sid string
	a2.await(t, "tokenPressure of A's agent session on the second editor of A", func(e *editor) bool {
		ids, _ := e.pressured(wsA)
		for id, n := range ids {
			if n >= 6 {
				sid = id
				return true
			}
		}
		return false
	})
	a1.await(t, "the same session on the first editor of A", func(e *editor) bool { ids, _ := e.pressured(wsA); return ids[sid] > 0 })
	b.await(t, "tokenPressure of B's agent session", func(e *editor) bool { _, n := e.pressured(wsB); return n > 0 })
	for _, s := range a2.list(t) {
		if s.Workspace != wsA {
			t.Errorf("an editor of A lists a session of %s", s.Workspace)
		}
	}
	for _, s := range b.list(t) {
		if s.Workspace != wsB || s.SessionID == sid {
			t.Errorf("the editor of B lists %+v", s)
		}
	}
	if _, n := b.pressured(wsA); n > 0 {
		t.Errorf("the editor of B got %d tokenPressure of A", n)
	}

	// The second editor of A compacts Claude Code's session: its next
	// request upstream carries the summary.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	before := len(anth.Requests())
	var manual struct {
		Mode string `json:"mode"`
	}
	if err := a2.conn.Call(ctx, "vtcode/compact", map[string]any{"sessionId": sid}, &manual); err != nil {
		t.Fatalf("vtcode/compact from the second editor of A: %v", err)
	}
	a1.await(t, "the boundary of the compaction on the first editor of A", func(e *editor) bool {
		for _, p := range e.notes("vtcode/compactBoundary") {
			if bytes.Contains(p, []byte(sid)) {
				return true
			}
		}
		return false
	})
	_, seen := a1.pressured(wsA)
	a1.await(t, "Claude Code's next request after the compaction", func(e *editor) bool { _, n := e.pressured(wsA); return n > seen+1 })

	// SIGKILL of the shared daemon in the middle of both runs.
	st := exec.Command(bin, "status", "--json")
	st.Env = env
	out, err := st.Output()
	if err != nil {
		t.Fatalf("status: %v", err)
	}
	var status struct {
		PID  int `json:"pid"`
		Runs int `json:"runs"`
	}
	json.Unmarshal(out, &status)
	if status.Runs != 2 {
		t.Errorf("status before the kill: %s, want 2 runs held", out)
	}
	if err := syscall.Kill(status.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, e := range []*editor{a1, a2, b} {
		<-e.conn.DisconnectNotify() // each editor sees its connection drop
	}

	for name, ch := range map[string]chan agentRun{"claude": claudeRun, "codex": codexRun} {
		r := <-ch
		if r.err != nil {
			t.Errorf("%s through vtcode-ls run: %v\nstdout: %s\nstderr: %s", name, r.err, tailOf(string(r.out), 2000), tailOf(r.errb, 2000))
			continue
		}
		if !bytes.Contains(r.out, []byte("FINAL")) {
			t.Errorf("%s did not finish: %s", name, tailOf(string(r.out), 2000))
		}
		if !strings.Contains(r.errb, "went away") {
			t.Errorf("%s's run did not report the daemon going away: %s", name, tailOf(r.errb, 1000))
		}
	}
	main := proxytest.Bodies(anth.Requests()[before:], "main")
	if !proxytest.Contains(main, "Previous conversation summary") {
		t.Error("no request of Claude Code after the editor's compaction carried the summary")
	}

	// A new editor of A (the new daemon) finds the same session, its live
	// history with every tool call once.
	a3 := attachEditor(t, bin, env, wsA)
	found := false
	for _, s := range a3.list(t) {
		found = found || s.SessionID == sid
	}
	if !found {
		t.Fatalf("after the kill, A lists no session %s", sid)
	}
	var opened struct {
		Resumed bool `json:"resumed"`
	}
	if err := a3.conn.Call(ctx, "vtcode/openSession", map[string]any{"sessionId": sid}, &opened); err != nil || !opened.Resumed {
		t.Fatalf("openSession %s after the kill: %v %+v", sid, err, opened)
	}
	var hist struct {
		Messages []struct {
			ToolCalls []struct {
				ID string `json:"id"`
			} `json:"toolCalls"`
		} `json:"messages"`
	}
	if err := a3.conn.Call(ctx, "vtcode/history", map[string]any{"sessionId": sid}, &hist); err != nil {
		t.Fatal(err)
	}
	calls := map[string]int{}
	for _, m := range hist.Messages {
		for _, c := range m.ToolCalls {
			calls[c.ID]++
			if calls[c.ID] == 2 {
				t.Errorf("tool call %s recorded twice", c.ID)
			}
		}
	}
	t.Logf("session %s after the kill: %d live messages, %d tool calls", sid, len(hist.Messages), len(calls))
	if len(calls) == 0 {
		t.Error("the resumed session has no tool calls after the kill")
	}
}
