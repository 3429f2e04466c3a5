//go:build unix

package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/daemon"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/history/historytest"
	"github.com/vtcode/vtcode-ls/proxy"
	"github.com/vtcode/vtcode-ls/proxy/proxytest"
	"github.com/vtcode/vtcode-ls/rpc"
	"github.com/vtcode/vtcode-ls/rpc/rpctest"
	"github.com/vtcode/vtcode-ls/session"
)

// socketPath is a control socket path in a fresh short folder (a Unix
// socket path has a small length limit, which t.TempDir may exceed).
func socketPath(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "vtd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "run", daemon.SocketName)
}

// running is a daemon serving on a goroutine.
type running struct {
	*daemon.Daemon
	done chan error
}

// start listens and serves; the test's end stops it and waits.
func start(t *testing.T, o daemon.Options) *running {
	t.Helper()
	if o.Socket == "" {
		o.Socket = socketPath(t)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	d, err := daemon.Listen(o)
	if err != nil {
		t.Fatal(err)
	}
	r := &running{Daemon: d, done: make(chan error, 1)}
	go func() { r.done <- d.Serve(context.Background()) }()
	t.Cleanup(func() {
		d.Stop()
		r.wait(t)
	})
	return r
}

// wait waits for Serve to return.
func (r *running) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-r.done:
		r.done <- err
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("the daemon did not end")
		return nil
	}
}

// forward is an rpctest Serve function: the connection goes through the
// forwarder to the daemon on socket, and its result is what rpc.Serve
// would have returned for the exit code the daemon reports.
func forward(ctx context.Context, socket string, r io.Reader, w io.Writer, maxBytes int64) error {
	defer closeAll(r, w)
	c, err := daemon.Attach(ctx, socket, maxBytes)
	if err != nil {
		return err
	}
	code, err := c.Forward(r, w)
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("exit code %d", code)
	}
	return nil
}

func closeAll(vs ...any) {
	for _, v := range vs {
		if c, ok := v.(io.Closer); ok {
			c.Close()
		}
	}
}

// via returns the rpctest Serve function of daemon r.
func (r *running) via() func(ctx context.Context, rd io.Reader, w io.Writer, opts rpc.Options) error {
	return func(ctx context.Context, rd io.Reader, w io.Writer, opts rpc.Options) error {
		return forward(ctx, r.Socket(), rd, w, opts.MaxMessageBytes)
	}
}

// TestGoldensThroughForwarder replays every golden transcript of rpc
// through an attached client: each connection is served by a daemon (its
// shared session manager, the chunked socket, the forwarder) and must
// produce the same frames and exit code as the in-process server.
func TestGoldensThroughForwarder(t *testing.T) { replayGoldens(t, forward) }

// handover is an rpctest Serve function through the descriptor handover
// (daemon.AttachFiles): the editor's side is a pair of OS pipes, as an
// editor's stdio is, pumped from and to the transcript's in-memory pipes.
func handover(ctx context.Context, socket string, r io.Reader, w io.Writer, maxBytes int64) error {
	defer closeAll(r, w)
	inR, inW, err := os.Pipe()
	if err != nil {
		return err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return err
	}
	go func() { _, _ = io.Copy(inW, r); inW.Close() }()
	pumped := make(chan struct{})
	go func() { _, _ = io.Copy(w, outR); outR.Close(); close(pumped) }()
	code, ok, err := daemon.AttachFiles(ctx, socket, maxBytes, inR, outW)
	inR.Close()
	outW.Close()
	<-pumped // the daemon's copy is closed: everything it wrote is read
	if !ok {
		return errors.New("OS pipes were not handed over")
	}
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("exit code %d", code)
	}
	return nil
}

// TestGoldensThroughHandover replays every golden transcript with the
// editor's pipes handed over to the daemon, which serves them itself.
func TestGoldensThroughHandover(t *testing.T) { replayGoldens(t, handover) }

// replayGoldens replays every golden transcript of rpc, each connection
// served by a daemon of its own and attached with attach (forward or
// handover).
func replayGoldens(t *testing.T, attach func(ctx context.Context, socket string, r io.Reader, w io.Writer, maxBytes int64) error) {
	files, err := filepath.Glob(filepath.Join("..", "rpc", "testdata", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			rpctest.RunTranscript(t, file, rpctest.TranscriptOptions{
				Serve: func(ctx context.Context, r io.Reader, w io.Writer, opts rpc.Options) error {
					so := opts.Session
					so.Logger = opts.Logger
					// The daemon serves the proxy setting of the transcripts
					// (127.0.0.1:0, any free port), so a client asking for it is
					// told nothing (TestProxySettingNotice).
					d := start(t, daemon.Options{Session: so, RPC: opts, Idle: -1, Logger: opts.Logger, Version: "test", ProxyListen: "127.0.0.1:0"})
					return attach(ctx, d.Socket(), r, w, opts.MaxMessageBytes)
				},
			})
		})
	}
}

func user(text string) history.Message { return history.NewText(history.User, text) }

func realDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestClientsShareWorkspaceSessions: two editors on workspace A and one on
// B attach to one daemon. The second editor of A sees the session the
// first one works on live and can compact it; the editor of B sees none of
// it, and A's see nothing of B's.
func TestClientsShareWorkspaceSessions(t *testing.T) {
	wsA, wsB := realDir(t), realDir(t)
	d := start(t, daemon.Options{Session: session.Options{Clients: rpctest.Clients(&rpctest.Blocking{})}, Idle: -1})
	opts := func(ws string) rpctest.Options {
		return rpctest.Options{Workspace: ws, Serve: d.via(), PressureInterval: -1}
	}
	rpctest.Run(t, opts(wsA), func(t *testing.T, a1 *rpctest.Env) {
		rpctest.Run(t, opts(wsA), func(t *testing.T, a2 *rpctest.Env) {
			rpctest.Run(t, opts(wsB), func(t *testing.T, b *rpctest.Env) {
				sa := a1.OpenSession(session.OpenParams{ContextWindow: 16000}).SessionID
				sb := b.OpenSession(session.OpenParams{ContextWindow: 100000}).SessionID
				a1.Append(sa, user("hello from window one"))
				// The second window of A sees the first window's session live.
				a2.Await(rpctest.PressureWhere(sa, "workspace A", func(ev session.PressureEvent) bool {
					return ev.Workspace == wsA && ev.OriginalTokens > 0
				}))
				var list []session.SessionInfo
				a2.Call("vtcode/listSessions", struct{}{}, &list)
				if len(list) != 1 || list[0].SessionID != sa {
					t.Errorf("window two of A lists %+v, want only %s", list, sa)
				}
				b.Call("vtcode/listSessions", struct{}{}, &list)
				if len(list) != 1 || list[0].SessionID != sb {
					t.Errorf("the window of B lists %+v, want only %s", list, sb)
				}
				// Both windows of A work on the same session: the second
				// appends and compacts, the first sees the boundary.
				a2.Append(sa, historytest.Turns(16, 400)...)
				if h := a1.History(sa); len(h.Messages) != 1+16*4 {
					t.Errorf("window one sees %d messages, want %d (both windows' appends)", len(h.Messages), 1+16*4)
				}
				a2.Compact(session.CompactParams{SessionID: sa})
				a1.Await(rpctest.Boundary(sa, "manual"))
				// B's editor saw nothing of A, A's nothing of B.
				b.Append(sb, user("B's own"))
				b.Await(rpctest.PressureWhere(sb, "workspace B", func(ev session.PressureEvent) bool { return ev.Workspace == wsB }))
				for _, ev := range b.State().Pressure {
					if ev.SessionID == sa {
						t.Errorf("the window of B got A's pressure %+v", ev)
					}
				}
				if n := len(b.State().Boundaries); n != 0 {
					t.Errorf("the window of B got %d boundaries of A", n)
				}
				for _, env := range []*rpctest.Env{a1, a2} {
					if _, ok := env.State().Pressure[sb]; ok {
						t.Errorf("a window of A got B's pressure")
					}
				}
			})
		})
		// A client that left does not end the others' sessions.
		a1.Append(a1.OpenSession(session.OpenParams{}).SessionID, user("still here"))
	})
}

// TestStatusStopAndIdle: status names the daemon, its clients,
// workspaces, sessions and proxy; the daemon ends after its idle time once
// the last client left; stop ends it and frees the socket name.
func TestStatusStopAndIdle(t *testing.T) {
	ws := realDir(t)
	d := start(t, daemon.Options{Idle: 2 * time.Second, ProxyListen: "127.0.0.1:0", Version: "v9"})
	ctx := context.Background()
	rpctest.Run(t, rpctest.Options{Workspace: ws, Serve: d.via()}, func(t *testing.T, env *rpctest.Env) {
		env.OpenSession(session.OpenParams{})
		st, err := daemon.GetStatus(ctx, d.Socket())
		if err != nil {
			t.Fatal(err)
		}
		if st.PID != os.Getpid() || st.Version != "v9" || st.Clients != 1 || st.Sessions != 1 ||
			len(st.Workspaces) != 1 || st.Workspaces[0].Root != ws || st.Proxy != d.ProxyAddr() || st.Proxy == "" {
			t.Errorf("status %+v", st)
		}
		if st.Workspaces[0].ProxyBase != d.ProxyBase(ws) {
			t.Errorf("proxy base %q", st.Workspaces[0].ProxyBase)
		}
	})
	// The last client left: the idle time runs out and the daemon ends.
	if err := d.wait(t); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if _, err := os.Stat(d.Socket()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket is still there after the end: %v", err)
	}
	if _, err := daemon.GetStatus(ctx, d.Socket()); !errors.Is(err, daemon.ErrNotRunning) {
		t.Errorf("status after the end: %v, want ErrNotRunning", err)
	}

	// stop: the daemon answers with its pid, ends, and the name is free.
	d2 := start(t, daemon.Options{Socket: d.Socket(), Idle: -1})
	pid, err := daemon.StopDaemon(ctx, d2.Socket())
	if err != nil || pid != os.Getpid() {
		t.Fatalf("stop: %d %v", pid, err)
	}
	d2.wait(t)
	start(t, daemon.Options{Socket: d.Socket(), Idle: -1}) // the name is free
}

// TestOneDaemonPerSocket: a second daemon on a running one's socket is
// refused; a stale socket (its daemon gone) is replaced.
func TestOneDaemonPerSocket(t *testing.T) {
	sock := socketPath(t)
	d := start(t, daemon.Options{Socket: sock, Idle: -1})
	if _, err := daemon.Listen(daemon.Options{Socket: sock}); !errors.Is(err, daemon.ErrRunning) {
		t.Fatalf("second Listen: %v, want ErrRunning", err)
	}
	d.Stop()
	d.wait(t)

	// A stale socket file, nobody listening.
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, err := os.Stat(sock); err != nil {
		t.Fatal(err)
	}
	d3 := start(t, daemon.Options{Socket: sock, Idle: -1})
	if _, err := daemon.GetStatus(context.Background(), d3.Socket()); err != nil {
		t.Fatalf("the daemon that replaced the stale socket does not answer: %v", err)
	}
}

// TestSocketPermissions: the socket folder is 0700 (tightened when it was
// not) and the socket 0600.
func TestSocketPermissions(t *testing.T) {
	sock := socketPath(t)
	if err := os.MkdirAll(filepath.Dir(sock), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(sock), 0o755); err != nil {
		t.Fatal(err)
	}
	start(t, daemon.Options{Socket: sock, Idle: -1})
	fi, err := os.Stat(filepath.Dir(sock))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("socket folder mode %v %v, want 0700", fi.Mode().Perm(), err)
	}
	fi, err = os.Stat(sock)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v %v, want 0600", fi.Mode().Perm(), err)
	}
}

// TestOtherUserCannotConnect runs a dialer as user nobody (setpriv) against
// the daemon's socket: it must be refused, while the same dialer run as
// this user connects.
func TestOtherUserCannotConnect(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run a process as another user (setpriv to nobody); CI runs as root")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv is not installed")
	}
	sock := socketPath(t)
	// The temporary parent is open to all, so that only the daemon's own
	// permissions stand between nobody and the socket.
	if err := os.Chmod(filepath.Dir(filepath.Dir(sock)), 0o755); err != nil {
		t.Fatal(err)
	}
	start(t, daemon.Options{Socket: sock, Idle: -1})
	// The dialer is this test binary, copied where nobody can run it.
	dir, err := os.MkdirTemp("", "vtd-dialer")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "dialer")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	dial := func(asNobody bool) (string, error) {
		args := []string{"-test.run=^TestHelperDial$"}
		name := bin
		if asNobody {
			args = append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", bin}, args...)
			name = setpriv
		}
		cmd := exec.Command(name, args...)
		cmd.Env = append(os.Environ(), "VTCODE_TEST_DIAL="+sock)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := dial(false); err != nil || !strings.Contains(out, "DIAL OK") {
		t.Fatalf("the dialer as this user: %v\n%s", err, out)
	}
	out, err := dial(true)
	if strings.Contains(out, "DIAL OK") {
		t.Fatalf("user nobody connected to the daemon's socket:\n%s", out)
	}
	if !strings.Contains(out, "DIAL FAILED") || !strings.Contains(out, "permission denied") {
		t.Fatalf("the dialer as nobody did not report a refused connection (%v):\n%s", err, out)
	}
}

// TestHelperDial is the dialer of TestOtherUserCannotConnect.
func TestHelperDial(t *testing.T) {
	sock := os.Getenv("VTCODE_TEST_DIAL")
	if sock == "" {
		return // not run as the helper
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := daemon.GetStatus(ctx, sock); err != nil {
		fmt.Println("DIAL FAILED:", err)
		return
	}
	fmt.Println("DIAL OK")
}

// TestProxyRoutesWorkspaces: an agent pointed at the daemon's proxy under
// workspace B's prefix files its session under B: B's editor sees it live
// (listed, tokenPressure), A's editor sees nothing of it.
func TestProxyRoutesWorkspaces(t *testing.T) {
	up, err := proxytest.Start([]proxytest.Turn{{Text: "hi there"}}, proxytest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	cfgDir := t.TempDir()
	userCfg := filepath.Join(cfgDir, "vtcode.toml")
	if err := os.WriteFile(userCfg, []byte(fmt.Sprintf("[providers.anthropic]\nbase_url = %q\n", up.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	wsA, wsB := realDir(t), realDir(t)
	d := start(t, daemon.Options{Idle: -1, ProxyListen: "127.0.0.1:0",
		Session: session.Options{UserConfig: userCfg, Clients: rpctest.Clients(&rpctest.Blocking{})}})
	opts := func(ws string) rpctest.Options {
		return rpctest.Options{Workspace: ws, Serve: d.via(), PressureInterval: -1}
	}
	rpctest.Run(t, opts(wsA), func(t *testing.T, a *rpctest.Env) {
		rpctest.Run(t, opts(wsB), func(t *testing.T, b *rpctest.Env) {
			body := `{"model":"claude-test","max_tokens":100,"messages":[{"role":"user","content":"hello proxy"}]}`
			url := "http://" + d.ProxyAddr() + d.ProxyBase(wsB) + "/v1/messages"
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
			req.Header.Set("content-type", "application/json")
			req.Header.Set("anthropic-version", "2023-06-01")
			req.Header.Set("x-api-key", "sk-ant-test") // an agent sends its key; a request without one causes nothing
			req.Header.Set("x-claude-code-session-id", "agent-session-b")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			out, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !bytes.Contains(out, []byte(`"type":"message"`)) {
				t.Fatalf("proxied answer %d %s", resp.StatusCode, out)
			}
			if n := len(up.Requests()); n != 1 || up.Requests()[0].Path != "/v1/messages" {
				t.Fatalf("upstream got %d requests (%v), want one to /v1/messages", n, up.Requests())
			}
			b.Await(rpctest.Expectation{Description: "a tokenPressure of the agent's session", Check: func(s *rpctest.State) rpctest.Verdict {
				for _, ev := range s.Pressure {
					if ev.Workspace == wsB {
						return rpctest.Met
					}
				}
				return rpctest.Unmet
			}})
			var list []session.SessionInfo
			b.Call("vtcode/listSessions", struct{}{}, &list)
			if len(list) != 1 || list[0].Workspace != wsB {
				t.Fatalf("B lists %+v, want the agent's session", list)
			}
			a.Call("vtcode/listSessions", struct{}{}, &list)
			if len(list) != 0 {
				t.Errorf("A lists %+v, want nothing", list)
			}
			if len(a.State().Pressure) != 0 {
				t.Errorf("A got B's pressure: %v", a.State().Pressure)
			}

			// A prefix made without the daemon's key (a caller of the port
			// naming a folder of its choice) is refused, and nothing is
			// written there or sent.
			other := realDir(t)
			for _, forged := range []string{proxy.WorkspaceBase(other, []byte("not the daemon's key")),
				strings.Split(d.ProxyBase(other), ".")[0], "/w/" + strings.Split(d.ProxyBase(wsB), "/")[2] + "x"} {
				resp, err = http.Post("http://"+d.ProxyAddr()+forged+"/v1/messages", "application/json", strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if _, statErr := os.Stat(filepath.Join(other, ".vtcode")); resp.StatusCode != http.StatusForbidden || statErr == nil || len(up.Requests()) != 1 {
					t.Errorf("forged prefix %s: %d, .vtcode created %v, upstream requests %d", forged, resp.StatusCode, statErr == nil, len(up.Requests()))
				}
			}

			// A prefix that names no folder is refused, and nothing is sent.
			bad := "http://" + d.ProxyAddr() + d.ProxyBase(filepath.Join(wsB, "missing")) + "/v1/messages"
			resp, err = http.Post(bad, "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var e struct {
				Error struct{ Message string } `json:"error"`
			}
			_ = json.Unmarshal(msg, &e)
			if resp.StatusCode != http.StatusNotFound || !strings.Contains(e.Error.Message, "no such folder") || len(up.Requests()) != 1 {
				t.Errorf("bad prefix: %d %s, upstream requests %d", resp.StatusCode, msg, len(up.Requests()))
			}
		})
	})
}

// TestProxiedCompactionProgress: a proxied request of workspace B that
// compacts shows its progress and boundary to B's editor, and nothing to
// A's.
func TestProxiedCompactionProgress(t *testing.T) {
	up, err := proxytest.Start([]proxytest.Turn{{Text: "ok"}}, proxytest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	userCfg := filepath.Join(t.TempDir(), "vtcode.toml")
	if err := os.WriteFile(userCfg, []byte(fmt.Sprintf("[providers.anthropic]\nbase_url = %q\n", up.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	wsA, wsB := realDir(t), realDir(t)
	small := "[context]\nmax_context_tokens = 6000\nreserved_output_tokens = 500\n"
	if err := os.WriteFile(filepath.Join(wsB, "vtcode.toml"), []byte(small), 0o600); err != nil {
		t.Fatal(err)
	}
	d := start(t, daemon.Options{Idle: -1, ProxyListen: "127.0.0.1:0",
		Session: session.Options{UserConfig: userCfg, Clients: rpctest.Clients(&rpctest.Blocking{})}})
	opts := func(ws string) rpctest.Options {
		return rpctest.Options{Workspace: ws, Serve: d.via(), PressureInterval: -1, WorkDoneProgress: true}
	}
	rpctest.Run(t, opts(wsA), func(t *testing.T, a *rpctest.Env) {
		rpctest.Run(t, opts(wsB), func(t *testing.T, b *rpctest.Env) {
			var msgs []map[string]any
			for i := range 16 {
				msgs = append(msgs, map[string]any{"role": "user", "content": fmt.Sprintf("Step %d: %s", i, strings.Repeat("the parser fails on nested blocks again ", 40))},
					map[string]any{"role": "assistant", "content": fmt.Sprintf("Fixed step %d.", i)})
			}
			msgs = append(msgs, map[string]any{"role": "user", "content": "Go on."})
			body, _ := json.Marshal(map[string]any{"model": "claude-test", "max_tokens": 100, "messages": msgs})
			req, _ := http.NewRequest(http.MethodPost, "http://"+d.ProxyAddr()+d.ProxyBase(wsB)+"/v1/messages", bytes.NewReader(body))
			req.Header.Set("content-type", "application/json")
			req.Header.Set("anthropic-version", "2023-06-01")
			req.Header.Set("x-api-key", "sk-ant-test") // an agent sends its key; a request without one causes nothing
			req.Header.Set("x-claude-code-session-id", "agent-b")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("proxied answer %d", resp.StatusCode)
			}
			b.Await(rpctest.CompletedWork(session.CompactingTitle, 1, false))
			if n := len(b.State().Boundaries); n == 0 {
				t.Error("B's editor got no compactBoundary of the proxied compaction")
			}
			st := a.State()
			if len(st.Work) != 0 || len(st.Boundaries) != 0 {
				t.Errorf("A's editor got B's compaction: work %v, boundaries %v", st.Work, st.Boundaries)
			}
		})
	})
}

// TestProxySettingNotice: a client whose initializationOptions ask for a
// proxy address the daemon does not serve is told once, by a warning naming
// the daemon's proxy; a client asking for the daemon's own address (or a
// loopback spelling of it), or for none, is told nothing.
func TestProxySettingNotice(t *testing.T) {
	ws := realDir(t)
	d := start(t, daemon.Options{Idle: -1, ProxyListen: "127.0.0.1:0"})
	addr := d.ProxyAddr()
	_, port, _ := net.SplitHostPort(addr)
	init := func(listen string) json.RawMessage {
		if listen == "" {
			return nil
		}
		return json.RawMessage(fmt.Sprintf(`{"proxy":{"listen":%q}}`, listen))
	}
	for _, c := range []struct {
		listen string
		told   bool
	}{
		{"127.0.0.1:1", true},
		{addr, false},
		{"localhost:" + port, false},
		{"", false},
	} {
		rpctest.Run(t, rpctest.Options{Workspace: ws, Serve: d.via(), InitOptions: init(c.listen), PressureInterval: -1}, func(t *testing.T, env *rpctest.Env) {
			var list []session.SessionInfo
			env.Call("vtcode/listSessions", struct{}{}, &list) // a round trip after initialize
			shown := env.State().ShowMessages
			if !c.told {
				if len(shown) != 0 {
					t.Errorf("proxy setting %q (the daemon serves %s): told %+v", c.listen, addr, shown)
				}
				return
			}
			env.Await(rpctest.ShownMessage("http://" + addr))
			shown = env.State().ShowMessages
			if len(shown) != 1 || shown[0].Type != rpc.MessageWarning || !strings.Contains(shown[0].Message, c.listen) || !strings.Contains(shown[0].Message, "--no-shared") {
				t.Errorf("proxy setting %q: told %+v, want one warning naming %s and the daemon's %s", c.listen, shown, c.listen, addr)
			}
		})
	}

	// A daemon without a proxy says it has none.
	off := start(t, daemon.Options{Idle: -1})
	rpctest.Run(t, rpctest.Options{Workspace: ws, Serve: off.via(), InitOptions: init("127.0.0.1:8787"), PressureInterval: -1}, func(t *testing.T, env *rpctest.Env) {
		env.Await(rpctest.ShownMessage("has none"))
	})
}
