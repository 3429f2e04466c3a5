//go:build linux

package integration_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/providers/providertest"
)

// rawDaemon is a vtcode-ls process driven with raw bytes on stdin; its
// stdout is parsed into frames.
type rawDaemon struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	frames chan []byte // bodies of the frames on stdout, closed at its end
	badOut chan error  // stdout that is not frames
	stderr string
	exited chan struct{}
	code   int
}

func startRaw(t *testing.T, args ...string) *rawDaemon {
	t.Helper()
	return startRawIn(t, t.TempDir(), nil, args...)
}

// startRawIn starts a raw daemon in folder dir with extra environment.
func startRawIn(t *testing.T, dir string, env []string, args ...string) *rawDaemon {
	t.Helper()
	stderr := filepath.Join(t.TempDir(), "stderr.log")
	ef, err := os.Create(stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	cmd := exec.Command(daemonBin, append([]string{"serve"}, args...)...)
	cmd.Env = append(daemonEnv(), env...)
	cmd.Dir = dir
	cmd.Stderr = ef
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &rawDaemon{t: t, cmd: cmd, stdin: stdin, frames: make(chan []byte, 1000), badOut: make(chan error, 1),
		stderr: stderr, exited: make(chan struct{})}
	go func() {
		defer close(r.frames)
		br := bufio.NewReader(stdout)
		for {
			body, err := readFrame(br)
			if err != nil {
				if err != io.EOF {
					r.badOut <- err
				}
				_, _ = io.Copy(io.Discard, stdout)
				break
			}
			r.frames <- body
		}
		// Wait only after stdout is drained (exec's rule for pipes).
		_ = cmd.Wait()
		r.code = cmd.ProcessState.ExitCode()
		close(r.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-r.exited
	})
	return r
}

// readFrame reads one LSP frame written by the daemon, strictly.
func readFrame(br *bufio.Reader) ([]byte, error) {
	n := -1
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if err == io.EOF && line == "" && n < 0 {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("daemon output: %w after %q", err, line)
		}
		if line == "\r\n" {
			break
		}
		name, value, ok := strings.Cut(strings.TrimSuffix(line, "\r\n"), ": ")
		if !ok || !strings.HasSuffix(line, "\r\n") {
			return nil, fmt.Errorf("daemon output: bad header line %q", line)
		}
		if strings.EqualFold(name, "Content-Length") {
			n, err = strconv.Atoi(value)
			if err != nil {
				return nil, fmt.Errorf("daemon output: %q", line)
			}
		}
	}
	if n < 0 {
		return nil, errors.New("daemon output: frame without Content-Length")
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(br, body); err != nil {
		return nil, err
	}
	return body, nil
}

func (r *rawDaemon) send(b string) {
	r.t.Helper()
	if _, err := io.WriteString(r.stdin, b); err != nil {
		r.t.Fatalf("writing to the daemon: %v\nstderr:\n%s", err, readFile(r.t, r.stderr))
	}
}

// sendLoose writes b, ignoring a daemon that stopped reading (it may end
// the connection in the middle of a malformed header).
func (r *rawDaemon) sendLoose(b string) {
	_, _ = io.WriteString(r.stdin, b)
}

func (r *rawDaemon) frame(body string) {
	r.t.Helper()
	r.send("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}

// response is a response frame, decoded.
type response struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	raw []byte
}

func (r response) code() int64 {
	if r.Error == nil {
		return 0
	}
	return r.Error.Code
}

// next returns the next response, skipping notifications; ok is false when
// the output ended.
func (r *rawDaemon) next() (response, bool) {
	r.t.Helper()
	timer := time.NewTimer(20 * time.Second)
	defer timer.Stop()
	for {
		select {
		case body, ok := <-r.frames:
			if !ok {
				return response{}, false
			}
			var m response
			if err := json.Unmarshal(body, &m); err != nil {
				r.t.Fatalf("daemon frame is not JSON: %q", body)
			}
			m.raw = body
			if m.Method != "" {
				continue
			}
			return m, true
		case err := <-r.badOut:
			r.t.Fatal(err)
		case <-timer.C:
			r.t.Fatalf("no response within 20s\nstderr:\n%s", readFile(r.t, r.stderr))
		}
	}
}

// expect reads the next response and checks its id and error code (0 for
// a result).
func (r *rawDaemon) expect(what, id string, code int64) response {
	r.t.Helper()
	m, ok := r.next()
	if !ok {
		r.t.Fatalf("%s: the daemon's output ended (exit %v)\nstderr:\n%s", what, r.exitCode(), readFile(r.t, r.stderr))
	}
	if string(m.ID) != id || m.code() != code {
		r.t.Fatalf("%s: got %s, want id %s code %d", what, m.raw, id, code)
	}
	return m
}

// exitCode waits for the process to end and returns its exit code.
func (r *rawDaemon) exitCode() int {
	select {
	case <-r.exited:
		return r.code
	case <-time.After(20 * time.Second):
		r.t.Fatalf("the daemon did not exit within 20s")
		return 0
	}
}

const rawInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`

// ping sends a request that must succeed, proving the connection usable.
func (r *rawDaemon) ping(id int) {
	r.t.Helper()
	r.frame(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"vtcode/listSessions","params":{}}`, id))
	r.expect("a request after the bad input", strconv.Itoa(id), 0)
}

// finish ends the lifecycle and checks the exit code and stderr.
func (r *rawDaemon) finish() {
	r.t.Helper()
	r.frame(`{"jsonrpc":"2.0","id":999,"method":"shutdown"}`)
	r.expect("shutdown", "999", 0)
	r.frame(`{"jsonrpc":"2.0","method":"exit"}`)
	if code := r.exitCode(); code != 0 {
		r.t.Errorf("exit code %d after shutdown and exit", code)
	}
	checkNoPanicText(r.t, readFile(r.t, r.stderr))
}

// TestMalformedInput feeds the daemon hostile bytes (docs/design.md §1, rpc/doc.go
// "Framing"): frames that can be skipped get an error reply and the
// connection stays usable; a malformed header ends the process with exit
// code 1 and one log line; nothing ever panics.
func TestMalformedInput(t *testing.T) {
	t.Run("skippable", func(t *testing.T) {
		r := startRaw(t, "--max-message-bytes", "4096")
		r.frame(`{not json at all`)
		r.expect("garbage body before initialize", "null", codeParse)
		r.frame(rawInit)
		r.expect("initialize", "1", 0)
		r.frame(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)

		r.frame("\x00\x01\x02\xff garbage \x7f")
		r.expect("binary garbage body", "null", codeParse)
		r.frame("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"vtcode/listSessions\",\"params\":{\"x\":\"\xff\xfe\xfd\"}}")
		r.expect("invalid UTF-8 in a JSON body", "null", codeParse)
		r.frame(`{"jsonrpc":"2.0","id":6,"method":"vtcode/listSessions","params":{}`)
		r.expect("truncated JSON", "null", codeParse)
		r.frame(`[{"jsonrpc":"2.0","id":7,"method":"vtcode/listSessions"}]`)
		r.expect("a batch", "null", codeInvalidRequest)
		r.frame(`{"jsonrpc":"1.0","id":8,"method":"vtcode/listSessions"}`)
		r.expect("wrong jsonrpc version", "8", codeInvalidRequest)
		r.frame(`{"jsonrpc":"2.0","id":9,"method":"vtcode/listSessions","params":"x"}`)
		r.expect("string params", "9", codeInvalidRequest)
		r.frame(`"just a string"`)
		r.expect("a JSON string", "null", codeInvalidRequest)

		// Larger than --max-message-bytes: answered at once with the id
		// read from the first bytes, then skipped.
		big := `{"jsonrpc":"2.0","id":10,"method":"vtcode/appendMessages","params":{"sessionId":"s","messages":[{"role":"user","content":"` +
			strings.Repeat("x", 10000) + `"}]}}`
		r.frame(big)
		m := r.expect("an oversized frame", "10", codeParse)
		if len(m.Error.Message) > 1024 {
			t.Errorf("the oversized frame's error is %d bytes", len(m.Error.Message))
		}
		// A frame split across writes, with a Content-Type header.
		body := `{"jsonrpc":"2.0","id":11,"method":"vtcode/listSessions","params":{}}`
		r.send("Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body[:7])
		r.send(body[7:])
		r.expect("a frame in two writes", "11", 0)
		r.ping(12)
		r.finish()
	})

	t.Run("huge-content-length", func(t *testing.T) {
		r := startRaw(t)
		r.frame(rawInit)
		r.expect("initialize", "1", 0)
		start := time.Now()
		r.send("Content-Length: 1000000000000\r\n\r\n" + `{"jsonrpc":"2.0","id":2,"method":"vtcode/listSessions","params":{}}`)
		r.expect("a Content-Length of 10^12", "2", codeParse)
		// The body never arrives: the daemon consumes the input to its end.
		r.sendLoose(strings.Repeat("z", 1<<20))
		_ = r.stdin.Close()
		if code := r.exitCode(); code != 1 {
			t.Errorf("exit code %d at the end of input without shutdown, want 1", code)
		}
		checkNoPanicText(t, readFile(t, r.stderr))
		t.Logf("10^12 Content-Length: parse error, input consumed to EOF, exit in %s", time.Since(start).Round(time.Millisecond))
	})

	headers := []struct{ name, input string }{
		{"not-a-header", "hello world\r\n\r\n"},
		{"bare-newlines", "Content-Length: 2\n\n{}"},
		{"non-numeric-length", "Content-Length: abc\r\n\r\n{}"},
		{"negative-length", "Content-Length: -5\r\n\r\n{}"},
		{"conflicting-lengths", "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}"},
		{"no-length", "Content-Type: application/json\r\n\r\n{}"},
		{"overlong-header", "X-Junk: " + strings.Repeat("a", 100<<10) + "\r\n\r\n"},
		{"binary-header", "\x00\xff\xfe\x01\r\n\r\n"},
	}
	for _, h := range headers {
		t.Run("header/"+h.name, func(t *testing.T) {
			r := startRaw(t)
			r.frame(rawInit)
			r.expect("initialize", "1", 0)
			r.sendLoose(h.input)
			if _, ok := r.next(); ok {
				t.Errorf("the daemon answered after a malformed header")
			}
			if code := r.exitCode(); code != 1 {
				t.Errorf("exit code %d after a malformed header, want 1", code)
			}
			log := strings.TrimSpace(readFile(t, r.stderr))
			checkNoPanicText(t, log)
			if n := len(strings.Split(log, "\n")); log == "" || n != 1 {
				t.Errorf("stderr has %d lines after a malformed header, want one:\n%s", n, tail(log, 2000))
			}
			if len(log) > 2048 {
				t.Errorf("the log line is %d bytes", len(log))
			}
		})
	}

	// A malformed header while a compaction waits on a provider: the
	// request in flight is cancelled and answered before the process ends.
	t.Run("header/with-request-in-flight", func(t *testing.T) {
		h := &hangs{held: make(chan struct{}, 1), released: make(chan struct{}, 1), stop: make(chan struct{})}
		srv := providertest.NewServer(t, h.reply(false))
		t.Cleanup(func() { close(h.stop) })
		ws := newWorkspace(t, "")
		user := userConfig(t, fmt.Sprintf("[providers.openai]\nbase_url = %q\napi_key_env = \"VTCODE_TEST_KEY\"\nnative_compaction = \"never\"\n", srv.URL+"/v1"))
		r := startRawIn(t, ws, []string{user, "VTCODE_TEST_KEY=" + testKey})
		r.frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"rootUri":"file://` + ws + `","capabilities":{}}}`)
		r.expect("initialize", "1", 0)
		r.frame(`{"jsonrpc":"2.0","id":2,"method":"vtcode/openSession","params":{"sessionId":"s","provider":"openai","model":"gpt-5.1-codex","contextWindow":16000}}`)
		r.expect("openSession", "2", 0)
		var msgs []string
		for i := 0; i < 6; i++ {
			msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":%q},{"role":"assistant","content":%q}`, words(uint64(i), 60), words(uint64(i+9), 900)))
		}
		r.frame(`{"jsonrpc":"2.0","id":3,"method":"vtcode/appendMessages","params":{"sessionId":"s","messages":[` + strings.Join(msgs, ",") + `]}}`)
		r.expect("appendMessages", "3", 0)
		r.frame(`{"jsonrpc":"2.0","id":4,"method":"vtcode/compact","params":{"sessionId":"s"}}`)
		select {
		case <-h.held:
		case <-time.After(callTimeout):
			t.Fatal("the provider never received the summary request")
		}
		r.sendLoose("Content-Length: twelve\r\n\r\n")
		m, ok := r.next()
		if !ok || string(m.ID) != "4" || m.code() != codeCancelled {
			t.Errorf("the compaction in flight at a malformed header: got %s (output open: %v), want id 4 with -32800", m.raw, ok)
		}
		if code := r.exitCode(); code != 1 {
			t.Errorf("exit code %d, want 1", code)
		}
		checkNoPanicText(t, readFile(t, r.stderr))
		if strings.Contains(readFile(t, r.stderr), testKey) {
			t.Errorf("the API key appears in stderr")
		}
	})

	// Seeded random bytes, framed and unframed: the daemon answers or ends
	// with code 1, and never panics.
	t.Run("random", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 11))
		framedOK, ended := 0, 0
		for i := 0; i < 12; i++ {
			r := startRaw(t)
			r.frame(rawInit)
			r.expect("initialize", "1", 0)
			junk := make([]byte, 1+rng.IntN(3000))
			for k := range junk {
				junk[k] = byte(rng.IntN(256))
			}
			if i%2 == 0 {
				r.frame(string(junk))
				r.expect("a random framed body", "null", codeParse)
				r.ping(2)
				r.finish()
				framedOK++
				continue
			}
			r.sendLoose(string(junk))
			_ = r.stdin.Close()
			for {
				if _, ok := r.next(); !ok {
					break
				}
			}
			if code := r.exitCode(); code != 1 {
				t.Errorf("random unframed bytes: exit code %d, want 1", code)
			}
			checkNoPanicText(t, readFile(t, r.stderr))
			ended++
		}
		t.Logf("random input: %d framed bodies answered with -32700 (connection kept), %d unframed streams ended with exit 1", framedOK, ended)
	})
}
