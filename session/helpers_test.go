package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/config"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/session"
	"github.com/vtcode/vtcode-ls/summary"
)

// waitLimit bounds every wait of these tests; reaching it is a failure, not
// a synchronization mechanism.
const waitLimit = 20 * time.Second

// recorder is a fake Notifier and Progress source: it records every call in
// order and lets a test await a call matching a predicate.
type recorder struct {
	mu       sync.Mutex
	pressure []session.PressureEvent
	bounds   []session.BoundaryEvent
	shown    []string
	logged   []string
	changed  chan struct{} // closed and replaced at every call
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{})} }

func (r *recorder) note(f func()) {
	r.mu.Lock()
	f()
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

func (r *recorder) TokenPressure(e session.PressureEvent) {
	r.note(func() { r.pressure = append(r.pressure, e) })
}
func (r *recorder) CompactBoundary(e session.BoundaryEvent) {
	r.note(func() { r.bounds = append(r.bounds, e) })
}
func (r *recorder) ShowMessage(level int, text string) {
	r.note(func() { r.shown = append(r.shown, text) })
}
func (r *recorder) LogMessage(level int, text string) {
	r.note(func() { r.logged = append(r.logged, text) })
}

// await waits until cond (called under the lock) holds.
func (r *recorder) await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		ok, ch := cond(), r.changed
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (r *recorder) boundaries() []session.BoundaryEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]session.BoundaryEvent(nil), r.bounds...)
}

func (r *recorder) shownMessages() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.shown...)
}

// progress is a fake Progress recording begin/report/end.
type progress struct {
	mu      sync.Mutex
	events  []string // "begin: …", "report: …", "end: …"
	ended   chan string
	started chan struct{}
}

func newProgress() *progress {
	return &progress{ended: make(chan string, 1), started: make(chan struct{}, 1)}
}

func (p *progress) Begin(title string) {
	p.add("begin: " + title)
	select {
	case p.started <- struct{}{}:
	default:
	}
}
func (p *progress) Report(msg string, pct int) { p.add("report: " + msg) }
func (p *progress) End(msg string) {
	p.add("end: " + msg)
	p.ended <- msg
}
func (p *progress) add(s string) {
	p.mu.Lock()
	p.events = append(p.events, s)
	p.mu.Unlock()
}
func (p *progress) list() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.events...)
}

// blocker is a provider whose Generate blocks until its context ends.
type blocker struct {
	started chan struct{}
}

func newBlocker() *blocker { return &blocker{started: make(chan struct{}, 16)} }

func (b *blocker) Generate(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	b.started <- struct{}{}
	<-ctx.Done()
	return nil, ctx.Err()
}

// failing is a provider that always fails with a provider error.
type failing struct{}

func (failing) Generate(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	return nil, &providers.Error{Kind: providers.KindServer, Provider: "flaky", Model: req.Model, Status: 503, Message: "upstream overloaded"}
}

// clients returns a ClientFactory serving fixed generators per provider,
// and the offline summarizer for "" and "offline" unless m names them, as
// the daemon's factory does.
func clients(m map[string]providers.Generator) session.ClientFactory {
	return func(r providers.Route, cfg config.Config) (providers.Generator, error) {
		if g, ok := m[r.Provider]; ok {
			return g, nil
		}
		if r.Provider == "" || r.Provider == "offline" {
			return summary.New(), nil
		}
		return nil, fmt.Errorf("no client for %s", r.Provider)
	}
}

// fileURI is the file:// URI of the local folder dir, as editors send it
// (file:///C:/x on Windows).
func fileURI(dir string) string {
	p := filepath.ToSlash(dir)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// offlineOnly is the Options of a Manager whose only client is the offline
// summarizer, with o's other fields.
func offlineOnly(o session.Options) session.Options {
	if o.Clients == nil {
		o.Clients = clients(nil)
	}
	return o
}

// env is a test workspace with a Manager.
type env struct {
	t   *testing.T
	dir string
	rec *recorder
	m   *session.Manager
	o   session.Options
}

// newEnv starts a Manager on a fresh workspace. init is the
// initializationOptions (approx tokenizer by default, for speed).
func newEnv(t *testing.T, o session.Options, init string) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), rec: newRecorder(), o: offlineOnly(o)}
	e.o.Notifier = e.rec
	e.o.NoWatch = true
	e.start(init)
	return e
}

func (e *env) start(init string) {
	e.t.Helper()
	if init == "" {
		init = `{"context":{"tokenizer":"approx"}}`
	}
	e.m = session.NewManager(e.o)
	if err := e.m.AddWorkspace(e.dir, json.RawMessage(init)); err != nil {
		e.t.Fatalf("AddWorkspace: %v", err)
	}
	e.t.Cleanup(func() { e.m.Close() })
}

// restart closes the Manager and starts a new one on the same workspace.
func (e *env) restart(init string) {
	e.t.Helper()
	if err := e.m.Close(); err != nil {
		e.t.Fatalf("Close: %v", err)
	}
	e.start(init)
}

func (e *env) open(p session.OpenParams) string {
	e.t.Helper()
	res, err := e.m.OpenSession(context.Background(), p)
	if err != nil {
		e.t.Fatalf("OpenSession: %v", err)
	}
	return res.SessionID
}

func (e *env) append(id string, msgs ...history.Message) {
	e.t.Helper()
	if _, err := e.m.AppendMessages(context.Background(), session.AppendParams{SessionID: id, Messages: msgs}); err != nil {
		e.t.Fatalf("AppendMessages: %v", err)
	}
}

func (e *env) history(id string) []history.Message {
	e.t.Helper()
	res, err := e.m.History(context.Background(), session.HistoryParams{SessionID: id})
	if err != nil {
		e.t.Fatalf("History: %v", err)
	}
	return res.Messages
}

func (e *env) stats(id string) *session.Stats {
	e.t.Helper()
	st, err := e.m.ProjectionStats(context.Background(), id, nil)
	if err != nil {
		e.t.Fatalf("ProjectionStats: %v", err)
	}
	return st
}

func (e *env) setPolicy(id, patch string) {
	e.t.Helper()
	if _, err := e.m.SetPolicy(context.Background(), session.SetPolicyParams{SessionID: id, Policy: json.RawMessage(patch)}); err != nil {
		e.t.Fatalf("SetPolicy %s: %v", patch, err)
	}
}

// jsonOf encodes v for comparisons.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// turns builds a realistic agent history of n user turns; each turn reads a
// file (a tool result of about resultBytes bytes) and runs the tests.
func turns(n, resultBytes int) []history.Message {
	var out []history.Message
	for i := range n {
		out = append(out, history.NewText(history.User, fmt.Sprintf("Step %d: fix the failing test in pkg/mod%d; never edit the vendor folder.", i, i)))
		read := fmt.Sprintf("call_r%d", i)
		run := fmt.Sprintf("call_t%d", i)
		out = append(out,
			history.Message{Role: history.Assistant, Content: history.Text("Reading the file."), ToolCalls: []history.ToolCall{
				{ID: read, Name: "read_file", Arguments: fmt.Sprintf(`{"path":"pkg/mod%d/mod.go"}`, i)},
			}},
			history.NewToolResult(read, "read_file", fileText(i, resultBytes)),
			history.Message{Role: history.Assistant, Content: history.Text("Running the tests."), ToolCalls: []history.ToolCall{
				{ID: run, Name: "run_shell", Arguments: fmt.Sprintf(`{"command":"go test ./pkg/mod%d/..."}`, i)},
			}},
			history.NewToolResult(run, "run_shell", fmt.Sprintf("ok  \tpkg/mod%d\t0.01s\nexit code 0", i)),
			history.NewText(history.Assistant, fmt.Sprintf("Fixed pkg/mod%d; tests pass.", i)),
		)
	}
	return out
}

func fileText(i, n int) string {
	var sb strings.Builder
	for line := 0; sb.Len() < n; line++ {
		fmt.Fprintf(&sb, "func f%d_%d(x int) int { return x*%d + %d } // module %d\n", i, line, line, i, i)
	}
	return sb.String()[:n]
}
