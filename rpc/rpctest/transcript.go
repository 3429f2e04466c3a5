package rpctest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vtcode/vtcode-ls/rpc"
	"github.com/vtcode/vtcode-ls/session"
)

// TranscriptOptions configure [RunTranscript].
type TranscriptOptions struct {
	// Update rewrites the server and exit sections from the actual output.
	Update bool
	// Timeout replaces DefaultTimeout for each wait.
	Timeout time.Duration
	// Logger receives the server's log; nil logs warnings and errors to the
	// test output.
	Logger *slog.Logger
	// Serve serves the connection in place of rpc.Serve (which it must
	// behave like: return what rpc.Serve would, close r and w), e.g.
	// through the shared daemon's forwarder; nil means rpc.Serve.
	Serve func(ctx context.Context, r io.Reader, w io.Writer, opts rpc.Options) error
}

// RunTranscript plays the golden transcript in the txtar file at path
// against a fresh server (a temporary workspace, the fake providers of
// [Clients], every vtcode/tokenPressure delivered uncoalesced) and compares
// what the server sends with the file.
//
// Sections:
//
//   - The comment (before the first section) explains the scenario.
//   - "workspace/NAME" sections are written into the workspace folder.
//   - "editor" holds what the editor sends: one frame body per line, sent
//     verbatim, so a line may be invalid JSON on purpose. Blank lines and
//     lines starting with "#" are skipped, except these directives:
//     "#async" (do not wait for the response of the next request),
//     "#await TEXT" (wait until a normalized server frame contains TEXT),
//     "#blocked" (wait until a call of the "blocking" fake provider is in
//     progress), "#raw QUOTED" (write the Go-quoted bytes as they are,
//     without framing), "#close" (end the editor's output).
//   - "server" holds the frames the server sends, normalized, one per line.
//   - "exit" holds the exit code ([rpc.ExitCode] of Serve's result).
//
// Each request is sent after the response to the previous one arrived
// (unless #async), which makes the output deterministic. The editor
// accepts window/workDoneProgress/create with a null result; those server
// requests appear in the server section, the editor's answers do not. At
// the end of the editor section the editor waits for every response, then
// closes its output and reads the server's frames to the end.
//
// Editor lines may use $WORKSPACE (the folder path), $WORKSPACE_URI (its
// file URI) and the placeholders of generated ids seen so far. Server frames
// are normalized: keys are sorted; the workspace path becomes $WORKSPACE;
// generated session, artifact and preview ids and projection revisions
// become $SESSION1, $ARTIFACT1, $PREVIEW1, $REVISION1, ... in
// order of appearance; elapsedMs becomes "$MS", updatedAt/createdAt "$TIME",
// durations after "·" in messages "$DUR", and process ids "$PID".
func RunTranscript(t *testing.T, path string, opts TranscriptOptions) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ar := parseTxtar(data)
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	dir := t.TempDir()
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	var editorText string
	for _, f := range ar.files {
		if name, ok := strings.CutPrefix(f.name, "workspace/"); ok {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, f.data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if f.name == "editor" {
			editorText = string(f.data)
		}
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	}

	toServer, editorOut := io.Pipe()
	editorIn, fromServer := io.Pipe()
	blocking := &Blocking{}
	serveCh := make(chan error, 1)
	serve := opts.Serve
	if serve == nil {
		serve = rpc.Serve
	}
	go func() {
		serveCh <- serve(context.Background(), toServer, fromServer, rpc.Options{
			Logger:           logger,
			Version:          "test",
			PressureInterval: -1,
			Session:          session.Options{Clients: Clients(blocking)},
		})
	}()

	r := &transcriptRun{
		t:       t,
		timeout: timeout,
		w:       editorOut,
		norm: &normalizer{
			workspace: dir,
			editor:    editorText,
			vars:      map[string]string{},
			counts:    map[string]int{},
		},
		responded: map[string]bool{},
		changed:   make(chan struct{}),
	}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		r.read(bufio.NewReader(editorIn))
	}()
	defer func() {
		// On a failure, make sure the server and the reader end.
		editorOut.Close()
		editorIn.Close()
		<-readDone
		select {
		case <-serveCh:
		case <-time.After(timeout):
			t.Errorf("server did not stop within %v", timeout)
		}
	}()

	r.play(editorText, blocking)
	r.waitFor("every response", func() bool {
		for _, id := range r.requests {
			if !r.responded[id] {
				return false
			}
		}
		return true
	})
	editorOut.Close()
	select {
	case <-readDone:
	case <-time.After(timeout):
		t.Fatalf("server output did not end within %v", timeout)
	}
	var serveErr error
	select {
	case serveErr = <-serveCh:
		serveCh <- serveErr
	case <-time.After(timeout):
		t.Fatalf("server did not stop within %v", timeout)
	}

	r.mu.Lock()
	got := strings.Join(r.frames, "\n") + "\n"
	if r.readErr != nil {
		got += "!read error: " + r.readErr.Error() + "\n"
	}
	r.mu.Unlock()
	gotExit := strconv.Itoa(rpc.ExitCode(serveErr)) + "\n"

	if opts.Update {
		ar.set("server", got)
		ar.set("exit", gotExit)
		if err := os.WriteFile(path, ar.format(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, _ := ar.get("server")
	if diff := cmp.Diff(strings.Split(want, "\n"), strings.Split(got, "\n")); diff != "" {
		t.Errorf("%s: server frames differ (-want +got):\n%s", path, diff)
	}
	if wantExit, _ := ar.get("exit"); wantExit != gotExit {
		t.Errorf("%s: exit code %q, want %q (Serve returned %v)", path, strings.TrimSpace(gotExit), strings.TrimSpace(wantExit), serveErr)
	}
}

// transcriptRun is the state of one RunTranscript.
type transcriptRun struct {
	t       *testing.T
	timeout time.Duration
	norm    *normalizer

	wmu sync.Mutex // serializes writes to w
	w   io.WriteCloser

	mu        sync.Mutex // guards the fields below
	frames    []string   // normalized server frames
	requests  []string   // ids of the editor's requests (compact JSON)
	responded map[string]bool
	readErr   error
	changed   chan struct{} // closed and replaced when frames grow
}

// read collects the server's frames until the end of its output,
// answering its requests.
func (r *transcriptRun) read(br *bufio.Reader) {
	for {
		body, err := ReadFrame(br)
		if err != nil {
			r.mu.Lock()
			if err != io.EOF {
				r.readErr = err
			}
			close(r.changed)
			r.changed = make(chan struct{})
			r.mu.Unlock()
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		if m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null" {
			r.write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":null}`))
		}
		r.mu.Lock()
		r.frames = append(r.frames, r.norm.frame(body))
		if m.Method == "" && len(m.ID) > 0 {
			r.responded[compactJSON(m.ID)] = true
		}
		close(r.changed)
		r.changed = make(chan struct{})
		r.mu.Unlock()
	}
}

// write sends one frame; errors (the server may have gone) are ignored.
func (r *transcriptRun) write(body []byte) {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	_ = WriteFrame(r.w, body)
}

// waitFor waits until cond (called with r.mu held) holds.
func (r *transcriptRun) waitFor(what string, cond func() bool) {
	r.t.Helper()
	timer := time.NewTimer(r.timeout)
	defer timer.Stop()
	for {
		r.mu.Lock()
		ok := cond()
		changed := r.changed
		frames := strings.Join(r.frames, "\n")
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-timer.C:
			r.t.Fatalf("timed out after %v waiting for %s; server frames so far:\n%s", r.timeout, what, frames)
		}
	}
}

// play sends the editor section.
func (r *transcriptRun) play(text string, blocking *Blocking) {
	r.t.Helper()
	async := false
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		switch {
		case strings.TrimSpace(line) == "":
			continue
		case line == "#async":
			async = true
			continue
		case strings.HasPrefix(line, "#await "):
			want := strings.TrimPrefix(line, "#await ")
			r.waitFor(strconv.Quote(want), func() bool {
				return slices.ContainsFunc(r.frames, func(f string) bool { return strings.Contains(f, want) })
			})
			continue
		case line == "#blocked":
			select {
			case <-blocking.Started():
			case <-time.After(r.timeout):
				r.t.Fatalf("editor line %d: the blocking provider was not called within %v", n+1, r.timeout)
			}
			continue
		case strings.HasPrefix(line, "#raw "):
			raw, err := strconv.Unquote(strings.TrimPrefix(line, "#raw "))
			if err != nil {
				r.t.Fatalf("editor line %d: #raw wants a Go-quoted string: %v", n+1, err)
			}
			r.wmu.Lock()
			_, _ = io.WriteString(r.w, raw)
			r.wmu.Unlock()
			continue
		case line == "#close":
			r.w.Close()
			continue
		case strings.HasPrefix(line, "#"):
			continue
		}
		r.mu.Lock()
		body := r.norm.substitute(line)
		r.mu.Unlock()
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		isRequest := json.Unmarshal([]byte(body), &m) == nil && m.Method != "" && echoable(m.ID)
		var id string
		if isRequest {
			id = compactJSON(m.ID)
			r.mu.Lock()
			r.requests = append(r.requests, id)
			r.mu.Unlock()
		}
		r.write([]byte(body))
		if isRequest && !async {
			r.waitFor("the response to "+id, func() bool { return r.responded[id] })
		}
		async = false
	}
}

// echoable reports whether a request id is one a server can answer: a
// string or a non-negative integer.
func echoable(id json.RawMessage) bool {
	var s string
	if json.Unmarshal(id, &s) == nil {
		return true
	}
	_, err := strconv.ParseUint(string(id), 10, 63)
	return err == nil
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// A normalizer rewrites server frames into their stable, comparable form.
type normalizer struct {
	workspace string
	editor    string            // the editor section: ids given there are not generated
	vars      map[string]string // generated value → placeholder
	counts    map[string]int    // placeholders per kind
}

var (
	durationRE = regexp.MustCompile(`· [0-9][0-9.]*(ms|s|m|µs)([0-9.]+(ms|s))?`)
	pidRE      = regexp.MustCompile(`process [0-9]+`)
)

// frame normalizes one server frame.
func (n *normalizer) frame(body []byte) string {
	text := strings.ReplaceAll(string(body), n.workspace, "$WORKSPACE")
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "!invalid JSON: " + strconv.Quote(text)
	}
	v = n.walk("", v)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "!unencodable: " + err.Error()
	}
	out := strings.TrimSuffix(b.String(), "\n")
	actuals := make([]string, 0, len(n.vars))
	for a := range n.vars {
		actuals = append(actuals, a)
	}
	slices.SortFunc(actuals, func(a, b string) int { return len(b) - len(a) })
	for _, a := range actuals {
		out = strings.ReplaceAll(out, a, n.vars[a])
	}
	out = durationRE.ReplaceAllString(out, "· $$DUR")
	out = pidRE.ReplaceAllString(out, "process $$PID")
	return out
}

func (n *normalizer) walk(key string, v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = n.walk(k, x)
		}
		return v
	case []any:
		for i, x := range v {
			v[i] = n.walk(key, x)
		}
		return v
	case json.Number:
		switch key {
		case "elapsedMs":
			return "$MS"
		case "pid":
			return "$PID"
		}
	case string:
		switch key {
		case "updatedAt", "createdAt":
			return "$TIME"
		case "artifactId", "backupArtifactId":
			if v != "" {
				return n.name("ARTIFACT", v)
			}
		case "previewId":
			if v != "" {
				return n.name("PREVIEW", v)
			}
		case "sessionId":
			if v != "" && !strings.Contains(n.editor, strconv.Quote(v)) {
				return n.name("SESSION", v)
			}
		case "revision", "baseRevision":
			if v != "" {
				return n.name("REVISION", v)
			}
		}
	}
	return v
}

// name returns the placeholder of a generated value.
func (n *normalizer) name(kind, actual string) string {
	if ph, ok := n.vars[actual]; ok {
		return ph
	}
	n.counts[kind]++
	ph := "$" + kind + strconv.Itoa(n.counts[kind])
	n.vars[actual] = ph
	return ph
}

// substitute expands the placeholders of an editor line.
func (n *normalizer) substitute(line string) string {
	line = strings.ReplaceAll(line, "$WORKSPACE_URI", "file://"+filepath.ToSlash(n.workspace))
	line = strings.ReplaceAll(line, "$WORKSPACE", n.workspace)
	type pair struct{ ph, actual string }
	var pairs []pair
	for a, ph := range n.vars {
		pairs = append(pairs, pair{ph, a})
	}
	slices.SortFunc(pairs, func(a, b pair) int { return len(b.ph) - len(a.ph) })
	for _, p := range pairs {
		line = strings.ReplaceAll(line, p.ph, p.actual)
	}
	return line
}

// txtar is a minimal txtar archive (golang.org/x/tools/txtar's format).
type txtar struct {
	comment []byte
	files   []txtarFile
}

type txtarFile struct {
	name string
	data []byte
}

func parseTxtar(data []byte) *txtar {
	a := &txtar{}
	var cur *txtarFile
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i+1], data[i+1:]
		} else {
			data = nil
		}
		trimmed := strings.TrimRight(string(line), "\r\n")
		if strings.HasPrefix(trimmed, "-- ") && strings.HasSuffix(trimmed, " --") && len(trimmed) > 6 {
			a.files = append(a.files, txtarFile{name: strings.TrimSpace(trimmed[3 : len(trimmed)-3])})
			cur = &a.files[len(a.files)-1]
			continue
		}
		if cur == nil {
			a.comment = append(a.comment, line...)
		} else {
			cur.data = append(cur.data, line...)
		}
	}
	return a
}

func (a *txtar) get(name string) (string, bool) {
	for _, f := range a.files {
		if f.name == name {
			return string(f.data), true
		}
	}
	return "", false
}

func (a *txtar) set(name, data string) {
	for i := range a.files {
		if a.files[i].name == name {
			a.files[i].data = []byte(data)
			return
		}
	}
	a.files = append(a.files, txtarFile{name: name, data: []byte(data)})
}

func (a *txtar) format() []byte {
	var b bytes.Buffer
	b.Write(a.comment)
	for _, f := range a.files {
		fmt.Fprintf(&b, "-- %s --\n", f.name)
		b.Write(f.data)
		if len(f.data) > 0 && f.data[len(f.data)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}
