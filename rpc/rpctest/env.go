package rpctest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/vtcode/vtcode-ls/config"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/rpc"
	"github.com/vtcode/vtcode-ls/session"
)

// DefaultTimeout bounds every wait of an Env: a call, an Await, the end of
// the server.
const DefaultTimeout = 20 * time.Second

// Options configure [Run].
type Options struct {
	// Files are written into the workspace folder (paths relative to it)
	// before the server starts, e.g. {"vtcode.toml": "..."}.
	Files map[string]string
	// Clients builds provider clients; nil means Clients(env.Blocking).
	Clients session.ClientFactory
	// InitOptions are the initializationOptions (a partial policy).
	InitOptions json.RawMessage
	// WorkDoneProgress advertises window.workDoneProgress.
	WorkDoneProgress bool
	// RefuseProgress makes the editor refuse window/workDoneProgress/create.
	RefuseProgress bool
	// PressureInterval is rpc.Options.PressureInterval.
	PressureInterval time.Duration
	// MaxMessageBytes is rpc.Options.MaxMessageBytes.
	MaxMessageBytes int64
	// Timeout replaces DefaultTimeout.
	Timeout time.Duration
	// Logger receives the server's log; nil logs warnings and errors to
	// the test output.
	Logger *slog.Logger
	// Workspace, when set, is the workspace folder instead of a fresh
	// temporary one (several editors on one workspace).
	Workspace string
	// Serve serves the connection in place of rpc.Serve (see
	// [TranscriptOptions]); nil means rpc.Serve.
	Serve func(ctx context.Context, r io.Reader, w io.Writer, opts rpc.Options) error
}

// An Env is a connected, initialized fake editor.
type Env struct {
	T *testing.T
	// Workspace is the workspace folder.
	Workspace string
	// Blocking is the provider of "blocking" routes (with default Clients).
	Blocking *Blocking
	// Init is the server's initialize result.
	Init rpc.InitializeResult

	ctx     context.Context
	conn    *jsonrpc2.Conn
	timeout time.Duration
	serveCh chan error
	done    bool // shutdown and exit sent

	mu      sync.Mutex // guards state, changed and nextID
	state   *State
	changed chan struct{} // closed and replaced on each notification
	nextID  uint64
}

// Run starts a server on a fresh temporary workspace, connects and
// initializes a fake editor, and calls test with it. When test returns
// (or fails), Run shuts the connection down; when test succeeded it also
// checks that the server exited cleanly (exit code 0).
func Run(t *testing.T, opts Options, test func(t *testing.T, env *Env)) {
	t.Helper()
	dir := opts.Workspace
	if dir == "" {
		dir = t.TempDir()
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	for name, content := range opts.Files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := &Env{
		T:         t,
		Workspace: dir,
		Blocking:  &Blocking{},
		ctx:       context.Background(),
		timeout:   opts.Timeout,
		serveCh:   make(chan error, 1),
		state:     newState(),
		changed:   make(chan struct{}),
		nextID:    1,
	}
	if env.timeout <= 0 {
		env.timeout = DefaultTimeout
	}
	clients := opts.Clients
	if clients == nil {
		clients = Clients(env.Blocking)
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	}

	serverEnd, editorEnd := net.Pipe()
	serve := opts.Serve
	if serve == nil {
		serve = rpc.Serve
	}
	go func() {
		env.serveCh <- serve(context.Background(), serverEnd, serverEnd, rpc.Options{
			Logger:           logger,
			Version:          "test",
			MaxMessageBytes:  opts.MaxMessageBytes,
			PressureInterval: opts.PressureInterval,
			Session:          session.Options{Clients: clients},
		})
	}()
	env.conn = jsonrpc2.NewConn(context.Background(),
		jsonrpc2.NewBufferedStream(editorEnd, jsonrpc2.VSCodeObjectCodec{}),
		&editor{env: env, refuse: opts.RefuseProgress},
		jsonrpc2.SetLogger(discard{}))
	t.Cleanup(func() { env.close() })

	params := rpc.InitializeParams{
		WorkspaceFolders:      []rpc.WorkspaceFolder{{URI: "file://" + filepath.ToSlash(dir), Name: "ws"}},
		InitializationOptions: opts.InitOptions,
	}
	if opts.WorkDoneProgress {
		params.Capabilities.Window = &rpc.WindowClientCapabilities{WorkDoneProgress: true}
	}
	env.Call("initialize", params, &env.Init)
	env.Notify("initialized", struct{}{})

	test(t, env)
	if !t.Failed() {
		env.Shutdown()
	}
}

// Shutdown sends shutdown and exit and checks that the server ended with
// exit code 0. Run calls it after a successful test; a test may call it
// earlier.
func (e *Env) Shutdown() {
	e.T.Helper()
	if e.done {
		return
	}
	e.Call("shutdown", nil, nil)
	e.Notify("exit", nil)
	e.done = true
	select {
	case err := <-e.serveCh:
		e.serveCh <- err
		if code := rpc.ExitCode(err); code != 0 {
			e.T.Fatalf("server exited with code %d: %v", code, err)
		}
	case <-time.After(e.timeout):
		e.T.Fatalf("server did not exit within %v after shutdown and exit", e.timeout)
	}
}

// close ends the connection and waits for the server.
func (e *Env) close() {
	_ = e.conn.Close()
	select {
	case <-e.serveCh:
	case <-time.After(e.timeout):
		e.T.Errorf("server did not stop within %v after the editor disconnected", e.timeout)
	}
}

// editor is the fake editor's jsonrpc2 handler.
type editor struct {
	env    *Env
	refuse bool
}

func (h *editor) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	var params json.RawMessage
	if req.Params != nil {
		params = *req.Params
	}
	if req.Method == "window/workDoneProgress/create" && !req.Notif {
		var p rpc.WorkDoneProgressCreateParams
		_ = json.Unmarshal(params, &p)
		h.env.update(func(s *State) { s.Created = append(s.Created, string(p.Token)) })
		if h.refuse {
			_ = conn.ReplyWithError(ctx, req.ID, &jsonrpc2.Error{Code: jsonrpc2.CodeInternalError, Message: "no progress here"})
			return
		}
		_ = conn.Reply(ctx, req.ID, nil)
		return
	}
	if !req.Notif {
		_ = conn.ReplyWithError(ctx, req.ID, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: req.Method})
		return
	}
	h.env.update(func(s *State) { s.record(req.Method, params) })
}

// update changes the state and wakes Await.
func (e *Env) update(f func(*State)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	f(e.state)
	close(e.changed)
	e.changed = make(chan struct{})
}

// State returns a copy of what the editor has seen so far.
func (e *Env) State() State {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.state.clone()
}

// Await waits until every expectation is met. It fails the test when one
// becomes unmeetable or when the timeout passes.
func (e *Env) Await(expectations ...Expectation) {
	e.T.Helper()
	all := AllOf(expectations...)
	timer := time.NewTimer(e.timeout)
	defer timer.Stop()
	for {
		e.mu.Lock()
		v := all.Check(e.state)
		summary := e.state.String()
		changed := e.changed
		e.mu.Unlock()
		switch v {
		case Met:
			return
		case Unmeetable:
			e.T.Fatalf("unmeetable: %s\nstate:\n%s", all.Description, summary)
		}
		select {
		case <-changed:
		case <-timer.C:
			e.T.Fatalf("timed out after %v waiting for %s\nstate:\n%s", e.timeout, all.Description, summary)
		}
	}
}

// A Call is a request in flight.
type Call struct {
	env    *Env
	ID     jsonrpc2.ID
	method string
	waiter jsonrpc2.Waiter
}

// Go sends a request without waiting for its response.
func (e *Env) Go(method string, params any) *Call {
	e.T.Helper()
	e.mu.Lock()
	id := jsonrpc2.ID{Num: e.nextID}
	e.nextID++
	e.mu.Unlock()
	if params == nil {
		params = json.RawMessage("null")
	}
	w, err := e.conn.DispatchCall(e.ctx, method, params, jsonrpc2.PickID(id))
	if err != nil {
		e.T.Fatalf("sending %s: %v", method, err)
	}
	return &Call{env: e, ID: id, method: method, waiter: w}
}

// Wait waits for the response and decodes a result into result (which may
// be nil). It returns the error response, if any, as a *jsonrpc2.Error.
func (c *Call) Wait(result any) error {
	c.env.T.Helper()
	ctx, cancel := context.WithTimeout(c.env.ctx, c.env.timeout)
	defer cancel()
	err := c.waiter.Wait(ctx, result)
	if errors.Is(err, context.DeadlineExceeded) {
		c.env.T.Fatalf("%s: no response within %v", c.method, c.env.timeout)
	}
	return err
}

// WantError waits for the response and returns its error; it fails the
// test when the request succeeded or the error code is not code.
func (c *Call) WantError(code int64) *jsonrpc2.Error {
	c.env.T.Helper()
	err := c.Wait(nil)
	var re *jsonrpc2.Error
	if !errors.As(err, &re) {
		c.env.T.Fatalf("%s: want error %d, got %v", c.method, code, err)
	}
	if re.Code != code {
		c.env.T.Fatalf("%s: want error %d, got %d %q", c.method, code, re.Code, re.Message)
	}
	return re
}

// Cancel sends $/cancelRequest for the call.
func (c *Call) Cancel() {
	c.env.T.Helper()
	c.env.Notify("$/cancelRequest", rpc.CancelParams{ID: json.RawMessage(c.ID.String())})
}

// Call sends a request, waits for its response and decodes the result into
// result (which may be nil). An error response fails the test.
func (e *Env) Call(method string, params, result any) {
	e.T.Helper()
	if err := e.Go(method, params).Wait(result); err != nil {
		e.T.Fatalf("%s: %v", method, err)
	}
}

// CallError sends a request and returns its error response; it fails the
// test when the request succeeded or the code is not code.
func (e *Env) CallError(method string, params any, code int64) *jsonrpc2.Error {
	e.T.Helper()
	return e.Go(method, params).WantError(code)
}

// Notify sends a notification.
func (e *Env) Notify(method string, params any) {
	e.T.Helper()
	if params == nil {
		params = json.RawMessage("null")
	}
	if err := e.conn.Notify(e.ctx, method, params); err != nil {
		e.T.Fatalf("sending %s: %v", method, err)
	}
}

// OpenSession calls vtcode/openSession.
func (e *Env) OpenSession(p session.OpenParams) *session.OpenResult {
	e.T.Helper()
	var res session.OpenResult
	e.Call("vtcode/openSession", p, &res)
	return &res
}

// Append calls vtcode/appendMessages.
func (e *Env) Append(id string, msgs ...history.Message) *session.AppendResult {
	e.T.Helper()
	var res session.AppendResult
	e.Call("vtcode/appendMessages", session.AppendParams{SessionID: id, Messages: msgs}, &res)
	return &res
}

// History calls vtcode/history for the whole live history.
func (e *Env) History(id string) *session.HistoryResult {
	e.T.Helper()
	var res session.HistoryResult
	e.Call("vtcode/history", session.HistoryParams{SessionID: id}, &res)
	return &res
}

// Prepare calls vtcode/prepareRequest.
func (e *Env) Prepare(p session.PrepareParams) *session.PrepareResult {
	e.T.Helper()
	var res session.PrepareResult
	e.Call("vtcode/prepareRequest", p, &res)
	return &res
}

// Compact calls vtcode/compact.
func (e *Env) Compact(p session.CompactParams) *session.CompactResult {
	e.T.Helper()
	var res session.CompactResult
	e.Call("vtcode/compact", p, &res)
	return &res
}

// Stats calls vtcode/projectionStats.
func (e *Env) Stats(id string) *session.Stats {
	e.T.Helper()
	var res session.Stats
	e.Call("vtcode/projectionStats", map[string]string{"sessionId": id}, &res)
	return &res
}

// SetPolicy calls vtcode/setPolicy with a partial policy.
func (e *Env) SetPolicy(id string, policy string) *config.Policy {
	e.T.Helper()
	var res config.Policy
	e.Call("vtcode/setPolicy", session.SetPolicyParams{SessionID: id, Policy: json.RawMessage(policy)}, &res)
	return &res
}

// discard is a jsonrpc2 logger that drops everything.
type discard struct{}

func (discard) Printf(string, ...any) {}
