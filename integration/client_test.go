//go:build linux

package integration_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// Wire shapes of the protocol (docs/design.md §2, §10), declared here so the tests
// depend on the protocol only, never on the daemon's Go packages.

type toolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments,omitempty"`
}

type message struct {
	ID         string          `json:"id,omitempty"`
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content,omitempty"`
	ToolCalls  []toolCall      `json:"toolCalls,omitempty"`
	ToolCallID string          `json:"toolCallId,omitempty"`
	ToolName   string          `json:"toolName,omitempty"`
}

// text returns a JSON string.
func text(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

type openResult struct {
	SessionID string          `json:"sessionId"`
	Resumed   bool            `json:"resumed"`
	Messages  int             `json:"messages"`
	Policy    json.RawMessage `json:"policy"`
}

type appendResult struct {
	Messages      int `json:"messages"`
	HistoryTokens int `json:"historyTokens"`
}

type historyResult struct {
	Messages []message `json:"messages"`
	Total    int       `json:"total"`
}

type stats struct {
	SessionID           string  `json:"sessionId"`
	Messages            int     `json:"messages"`
	ProjectedMessages   int     `json:"projectedMessages"`
	OriginalTokens      int     `json:"originalTokens"`
	ProjectedTokens     int     `json:"projectedTokens"`
	PrefixTokens        int     `json:"prefixTokens"`
	ClearedResults      int     `json:"clearedResults"`
	ProtectedResults    int     `json:"protectedResults"`
	Capacity            int     `json:"capacity"`
	CompactionThreshold int     `json:"compactionThreshold"`
	Pressure            float64 `json:"pressure"`
	State               string  `json:"state"`
	Compactions         int     `json:"compactions"`
}

type compactResult struct {
	Mode                  string `json:"mode"`
	Strategy              string `json:"strategy"`
	Trigger               string `json:"trigger"`
	OriginalMessageCount  int    `json:"originalMessageCount"`
	CompactedMessageCount int    `json:"compactedMessageCount"`
	OriginalTokens        int    `json:"originalTokens"`
	CompactedTokens       int    `json:"compactedTokens"`
	ArtifactID            string `json:"artifactId"`
	Message               string `json:"message"`
	Error                 string `json:"error,omitempty"`
}

type prepareResult struct {
	Messages   []message      `json:"messages"`
	Stats      stats          `json:"stats"`
	Compaction *compactResult `json:"compaction,omitempty"`
	Trimmed    bool           `json:"trimmed"`
}

type artifactInfo struct {
	ArtifactID string    `json:"artifactId"`
	CreatedAt  time.Time `json:"createdAt"`
	Messages   int       `json:"messages"`
	Trigger    string    `json:"trigger"`
	Mode       string    `json:"mode"`
}

type failedData struct {
	Kind        string `json:"kind"`
	Provider    string `json:"provider"`
	Model       string `json:"model"`
	InputTokens int    `json:"inputTokens"`
	Budget      int    `json:"budget"`
	RootCause   string `json:"rootCause"`
}

// JSON-RPC error codes of docs/design.md §1.
const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeInvalidParams  = -32602
	codeCancelled      = -32800
	codeFailed         = -32803
	codeUnknownSession = -32001
)

// notification is one notification the daemon sent.
type notification struct {
	Method string
	Params json.RawMessage
}

// noteLog records notifications and lets tests wait for them without
// sleeping: every append closes the current change channel.
type noteLog struct {
	mu      sync.Mutex
	notes   []notification
	changed chan struct{}
	closed  bool
}

func newNoteLog() *noteLog { return &noteLog{changed: make(chan struct{})} }

func (l *noteLog) add(n notification) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.notes = append(l.notes, n)
	close(l.changed)
	l.changed = make(chan struct{})
}

// close wakes every waiter for good (the connection ended).
func (l *noteLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		close(l.changed)
		l.changed = make(chan struct{})
	}
}

// snapshot returns the notifications so far.
func (l *noteLog) snapshot() []notification {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]notification(nil), l.notes...)
}

// await waits until ok holds on the notifications so far, or the timeout
// passes, or the connection ended with ok still false.
func (l *noteLog) await(timeout time.Duration, ok func([]notification) bool) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		l.mu.Lock()
		notes, ch, closed := append([]notification(nil), l.notes...), l.changed, l.closed
		l.mu.Unlock()
		if ok(notes) {
			return nil
		}
		if closed {
			return errors.New("connection ended before the expected notification")
		}
		select {
		case <-ch:
		case <-deadline.C:
			return fmt.Errorf("no expected notification within %s (%d received)", timeout, len(notes))
		}
	}
}

// daemonOptions configure startDaemon.
type daemonOptions struct {
	Workspace        string   // workspace folder (rootUri); "" = none
	Env              []string // extra environment (KEY=value)
	Args             []string // serve flags
	WorkDoneProgress bool     // advertise window.workDoneProgress
	InitOptions      any      // initializationOptions; nil = none
	NoInitialize     bool     // leave the lifecycle to the test
	Stderr           string   // stderr file; "" = a new file in a temp dir
	RecordWire       bool     // keep every frame received, for secret scans
}

// daemon is a running vtcode-ls process with a JSON-RPC client on its
// stdin and stdout.
type daemon struct {
	tb     testing.TB
	cmd    *exec.Cmd
	conn   *jsonrpc2.Conn
	stdin  io.WriteCloser
	notes  *noteLog
	stderr string // path of the file receiving the child's stderr
	nextID atomic.Uint64

	wireMu sync.Mutex
	wire   [][]byte // every frame received, when recorded

	exited   chan struct{} // closed when the process has been reaped
	exitCode int           // valid after exited
	killed   atomic.Bool
}

// pipeRWC joins the child's stdout (read) and stdin (write).
type pipeRWC struct {
	io.Reader
	io.WriteCloser
}

// startDaemon starts vtcode-ls serve and, unless told not to, initializes
// the connection. The process is killed when the test ends if it still runs.
func startDaemon(tb testing.TB, o daemonOptions) *daemon {
	tb.Helper()
	d, err := launch(tb, o)
	if err != nil {
		tb.Fatal(err)
	}
	if !o.NoInitialize {
		if err := d.initialize(o); err != nil {
			d.kill()
			tb.Fatalf("initialize: %v\nstderr:\n%s", err, d.stderrText())
		}
	}
	return d
}

// launch starts the process and the client without any request.
func launch(tb testing.TB, o daemonOptions) (*daemon, error) {
	stderrPath := o.Stderr
	if stderrPath == "" {
		stderrPath = filepath.Join(tb.TempDir(), "stderr.log")
	}
	ef, err := os.OpenFile(stderrPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	defer ef.Close() // the child holds its own descriptor
	args := append([]string{"serve"}, o.Args...)
	cmd := exec.Command(daemonBin, args...)
	cmd.Env = append(daemonEnv(), o.Env...)
	if o.Workspace != "" {
		cmd.Dir = o.Workspace
	}
	cmd.Stderr = ef
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", daemonBin, err)
	}
	d := &daemon{tb: tb, cmd: cmd, stdin: stdin, notes: newNoteLog(), stderr: stderrPath, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		d.exitCode = cmd.ProcessState.ExitCode() // -1 when killed by a signal
		close(d.exited)
	}()
	stream := jsonrpc2.NewBufferedStream(pipeRWC{stdout, stdin}, jsonrpc2.VSCodeObjectCodec{})
	opts := []jsonrpc2.ConnOpt{jsonrpc2.SetLogger(discardLogger{})}
	if o.RecordWire {
		opts = append(opts, jsonrpc2.OnRecv(d.record))
	}
	d.conn = jsonrpc2.NewConn(context.Background(), stream, jsonrpc2.HandlerWithError(d.handle).SuppressErrClosed(), opts...)
	go func() {
		<-d.conn.DisconnectNotify()
		d.notes.close()
	}()
	tb.Cleanup(func() {
		d.kill()
		_ = d.conn.Close()
	})
	return d, nil
}

// daemonEnv is the environment of a child: the test's, without provider
// keys or a user configuration that could change the daemon's behaviour.
func daemonEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasSuffix(k, "_API_KEY") || k == "XDG_CONFIG_HOME" || k == "HOME" || k == "GORACE" {
			continue
		}
		env = append(env, kv)
	}
	// No user config file; race reports fail the child loudly.
	return append(env, "XDG_CONFIG_HOME=/nonexistent-vtcode-test", "HOME=/nonexistent-vtcode-test",
		"GORACE=halt_on_error=1 exitcode=66")
}

// record keeps a received frame (a request or notification from the
// daemon, or a response).
func (d *daemon) record(req *jsonrpc2.Request, resp *jsonrpc2.Response) {
	var b []byte
	if resp != nil {
		b, _ = json.Marshal(resp)
	} else if req != nil {
		b, _ = json.Marshal(req)
	}
	d.wireMu.Lock()
	d.wire = append(d.wire, b)
	d.wireMu.Unlock()
}

// wireText returns every recorded frame, one per line.
func (d *daemon) wireText() string {
	d.wireMu.Lock()
	defer d.wireMu.Unlock()
	return string(bytes.Join(d.wire, []byte("\n")))
}

type discardLogger struct{}

func (discardLogger) Printf(string, ...any) {}

// handle answers the daemon's requests and records its notifications. It
// runs on the client's read loop, so it never blocks.
func (d *daemon) handle(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	var params json.RawMessage
	if req.Params != nil {
		params = append(json.RawMessage(nil), *req.Params...)
	}
	if req.Notif {
		d.notes.add(notification{Method: req.Method, Params: params})
		return nil, nil
	}
	d.notes.add(notification{Method: "request:" + req.Method, Params: params})
	switch req.Method {
	case "window/workDoneProgress/create":
		return nil, nil
	}
	return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "the test client does not serve " + req.Method}
}

func (d *daemon) initialize(o daemonOptions) error {
	params := map[string]any{"processId": os.Getpid()}
	if o.Workspace != "" {
		params["rootUri"] = "file://" + o.Workspace
	}
	caps := map[string]any{}
	if o.WorkDoneProgress {
		caps["window"] = map[string]any{"workDoneProgress": true}
	}
	params["capabilities"] = caps
	if o.InitOptions != nil {
		params["initializationOptions"] = o.InitOptions
	}
	var res struct {
		ServerInfo struct {
			Name string `json:"name"`
		} `json:"serverInfo"`
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if err := d.call(ctx, "initialize", params, &res); err != nil {
		return err
	}
	if res.ServerInfo.Name != "vtcode-ls" {
		return fmt.Errorf("serverInfo.name = %q", res.ServerInfo.Name)
	}
	return d.conn.Notify(ctx, "initialized", map[string]any{})
}

// callTimeout bounds one request of a test; it is a hang detector, never
// hit by a healthy daemon.
var callTimeout = 60 * time.Second

// pending is a request in flight.
type pending struct {
	id     uint64
	method string
	w      jsonrpc2.Waiter
	sent   time.Time
}

// dispatch sends a request without waiting for its answer.
func (d *daemon) dispatch(method string, params any) (*pending, error) {
	id := d.nextID.Add(1)
	start := time.Now()
	w, err := d.conn.DispatchCall(context.Background(), method, params, jsonrpc2.PickID(jsonrpc2.ID{Num: id}))
	if err != nil {
		return nil, err
	}
	return &pending{id: id, method: method, w: w, sent: start}, nil
}

// wait waits for the answer of p.
func (p *pending) wait(ctx context.Context, result any) error {
	err := p.w.Wait(ctx, result)
	if errors.Is(err, jsonrpc2.ErrClosed) {
		return fmt.Errorf("%s #%d: connection closed before the answer: %w", p.method, p.id, err)
	}
	return err
}

// call sends a request and waits for its answer.
func (d *daemon) call(ctx context.Context, method string, params, result any) error {
	p, err := d.dispatch(method, params)
	if err != nil {
		return err
	}
	return p.wait(ctx, result)
}

// must calls method and fails the test on any error.
func (d *daemon) must(method string, params, result any) {
	d.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if err := d.call(ctx, method, params, result); err != nil {
		d.tb.Fatalf("%s: %v\nstderr tail:\n%s", method, err, tail(d.stderrText(), 2000))
	}
}

// callErr calls method, expecting a JSON-RPC error, and returns it.
func (d *daemon) callErr(method string, params any) *jsonrpc2.Error {
	d.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	var res json.RawMessage
	err := d.call(ctx, method, params, &res)
	var je *jsonrpc2.Error
	if !errors.As(err, &je) {
		d.tb.Fatalf("%s: want a JSON-RPC error, got result %s, err %v", method, res, err)
	}
	return je
}

// cancel sends $/cancelRequest for p.
func (d *daemon) cancel(p *pending) error {
	return d.conn.Notify(context.Background(), "$/cancelRequest", map[string]any{"id": p.id})
}

// kill SIGKILLs the process (if it runs) and reaps it.
func (d *daemon) kill() {
	select {
	case <-d.exited:
		return
	default:
	}
	d.killed.Store(true)
	_ = d.cmd.Process.Signal(syscall.SIGKILL)
	<-d.exited
}

// waitExit waits for the process to end on its own and returns its code.
func (d *daemon) waitExit(timeout time.Duration) (int, error) {
	select {
	case <-d.exited:
		return d.exitCode, nil
	case <-time.After(timeout):
		return 0, fmt.Errorf("the daemon did not exit within %s", timeout)
	}
}

// shutdown runs the orderly end of the lifecycle and expects exit code 0.
func (d *daemon) shutdown() {
	d.tb.Helper()
	d.must("shutdown", nil, nil)
	_ = d.conn.Notify(context.Background(), "exit", nil)
	code, err := d.waitExit(30 * time.Second)
	if err != nil {
		d.kill()
		d.tb.Fatal(err)
	}
	if code != 0 {
		d.tb.Fatalf("exit code %d after shutdown and exit\nstderr:\n%s", code, tail(d.stderrText(), 4000))
	}
	d.checkNoPanic()
}

// stderrText returns what the child wrote to stderr so far.
func (d *daemon) stderrText() string {
	b, _ := os.ReadFile(d.stderr)
	return string(b)
}

// checkNoPanic fails the test when the child's stderr holds a panic, a
// goroutine dump, or a race report.
func (d *daemon) checkNoPanic() {
	d.tb.Helper()
	checkNoPanicText(d.tb, d.stderrText())
}

func checkNoPanicText(tb testing.TB, s string) {
	tb.Helper()
	for _, bad := range []string{"panic:", "goroutine ", "WARNING: DATA RACE", "fatal error:"} {
		if i := strings.Index(s, bad); i >= 0 {
			tb.Errorf("daemon stderr holds %q:\n%s", bad, tail(s[i:], 4000))
			return
		}
	}
}

// pid returns the child's process id.
func (d *daemon) pid() int { return d.cmd.Process.Pid }

// vmHWM returns the peak resident set size of the child, in bytes, from
// /proc/<pid>/status.
func (d *daemon) vmHWM() (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", d.pid()))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			fields := strings.Fields(v)
			if len(fields) < 1 {
				break
			}
			kb, err := strconv.ParseInt(fields[0], 10, 64)
			if err != nil {
				return 0, err
			}
			return kb * 1024, nil
		}
	}
	return 0, errors.New("no VmHWM in /proc status")
}

// cpuTime returns the user and system CPU time the child used so far, from
// /proc/<pid>/stat.
func (d *daemon) cpuTime() (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", d.pid()))
	if err != nil {
		return 0, err
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	f := strings.Fields(s)
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("bad /proc stat")
	}
	const hz = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / hz, nil
}

// notesOf returns the params of the recorded notifications of method.
func notesOf(notes []notification, method string) []json.RawMessage {
	var out []json.RawMessage
	for _, n := range notes {
		if n.Method == method {
			out = append(out, n.Params)
		}
	}
	return out
}

// progressValue is the value of a $/progress notification.
type progressValue struct {
	Kind    string `json:"kind"`
	Title   string `json:"title"`
	Message string `json:"message"`
}

// progressOf returns the progress values reported on token, in order.
func progressOf(notes []notification, token string) []progressValue {
	var out []progressValue
	for _, raw := range notesOf(notes, "$/progress") {
		var p struct {
			Token json.RawMessage `json:"token"`
			Value progressValue   `json:"value"`
		}
		if json.Unmarshal(raw, &p) != nil {
			continue
		}
		var s string
		if json.Unmarshal(p.Token, &s) != nil {
			s = string(p.Token)
		}
		if s == token {
			out = append(out, p.Value)
		}
	}
	return out
}

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// rpcError returns err as a JSON-RPC error, or nil.
func rpcError(err error) *jsonrpc2.Error {
	var je *jsonrpc2.Error
	if errors.As(err, &je) {
		return je
	}
	return nil
}

// errData decodes the data of a -32803 error.
func errData(je *jsonrpc2.Error) (failedData, bool) {
	var fd failedData
	if je == nil || je.Data == nil {
		return fd, false
	}
	return fd, json.Unmarshal(*je.Data, &fd) == nil
}

// newWorkspace returns a fresh workspace folder, with vtcode.toml holding
// toml when it is not empty.
func newWorkspace(tb testing.TB, toml string) string {
	tb.Helper()
	ws := tb.TempDir()
	if toml != "" {
		if err := os.WriteFile(filepath.Join(ws, "vtcode.toml"), []byte(toml), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	return ws
}

// words returns n deterministic pseudo-words seeded by seed, as text a
// tokenizer counts about one token per word.
func words(seed uint64, n int) string {
	var b bytes.Buffer
	x := seed*2654435761 + 1
	for i := 0; i < n; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b.WriteString(vocabulary[x%uint64(len(vocabulary))])
		if i%17 == 16 {
			b.WriteString(".\n")
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

var vocabulary = strings.Fields(`the func return error nil if else for range go test build file read write
open close session history message tool result call assistant user system compact token window budget
pressure clear stub summary artifact event log store lock fsync rename temp json rpc frame header body
content length parse invalid request response cancel progress begin report end server client editor
agent model provider openai anthropic chat completion retry timeout reset capacity limit failed passed
make vet gofmt race panic goroutine stack trace exit code main package import struct interface map slice`)
