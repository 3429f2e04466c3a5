package rpc_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/rpc"
	"github.com/vtcode/vtcode-ls/rpc/rpctest"
)

// rawServer is a server driven with raw bytes.
type rawServer struct {
	t      *testing.T
	in     *io.PipeWriter
	frames chan json.RawMessage // server frames, closed at the end of its output
	done   chan error           // Serve's result
}

func startRaw(t *testing.T, opts rpc.Options) *rawServer {
	t.Helper()
	toServer, in := io.Pipe()
	out, fromServer := io.Pipe()
	r := &rawServer{t: t, in: in, frames: make(chan json.RawMessage, 100), done: make(chan error, 1)}
	go func() { r.done <- rpc.Serve(context.Background(), toServer, fromServer, opts) }()
	go func() {
		defer close(r.frames)
		br := bufio.NewReader(out)
		for {
			body, err := rpctest.ReadFrame(br)
			if err != nil {
				if err != io.EOF {
					t.Errorf("reading the server: %v", err)
				}
				io.Copy(io.Discard, out)
				return
			}
			r.frames <- body
		}
	}()
	t.Cleanup(func() {
		in.Close()
		for range r.frames {
		}
	})
	return r
}

func (r *rawServer) send(raw string) {
	r.t.Helper()
	if _, err := io.WriteString(r.in, raw); err != nil {
		r.t.Fatalf("writing to the server: %v", err)
	}
}

func (r *rawServer) frame(body string) {
	r.t.Helper()
	r.send("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}

// next returns the next response (skipping notifications).
func (r *rawServer) next() (id string, code int64, msg string) {
	r.t.Helper()
	timer := time.NewTimer(20 * time.Second)
	defer timer.Stop()
	for {
		select {
		case body, ok := <-r.frames:
			if !ok {
				r.t.Fatal("the server's output ended")
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Error  *struct {
					Code    int64  `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &m); err != nil {
				r.t.Fatalf("server frame %q: %v", body, err)
			}
			if m.Method != "" {
				continue
			}
			if m.Error != nil {
				return string(m.ID), m.Error.Code, m.Error.Message
			}
			return string(m.ID), 0, ""
		case <-timer.C:
			r.t.Fatal("no response within 20s")
		}
	}
}

func (r *rawServer) wait() error {
	r.t.Helper()
	r.in.Close()
	select {
	case err := <-r.done:
		return err
	case <-time.After(20 * time.Second):
		r.t.Fatal("Serve did not return within 20s of the end of input")
		return nil
	}
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`

func TestOversizedFrameKeepsConnection(t *testing.T) {
	r := startRaw(t, rpc.Options{MaxMessageBytes: 4096})
	r.frame(initialize)
	if id, code, _ := r.next(); id != "1" || code != 0 {
		t.Fatalf("initialize: id %s code %d", id, code)
	}
	big := `{"jsonrpc":"2.0","id":7,"method":"vtcode/appendMessages","params":{"sessionId":"s1","messages":[{"role":"user","content":"` +
		strings.Repeat("x", 1<<20) + `"}]}}`
	r.frame(big)
	if id, code, msg := r.next(); id != "7" || code != -32700 || !strings.Contains(msg, "exceeds the limit of 4096 bytes") {
		t.Errorf("oversized frame: id %s code %d %q", id, code, msg)
	}
	r.frame(`{"jsonrpc":"2.0","id":8,"method":"vtcode/listSessions"}`)
	if id, code, msg := r.next(); id != "8" || code != 0 {
		t.Errorf("after the oversized frame: id %s code %d %q", id, code, msg)
	}
	r.frame(`{"jsonrpc":"2.0","id":9,"method":"shutdown"}`)
	r.next()
	r.frame(`{"jsonrpc":"2.0","method":"exit"}`)
	if err := r.wait(); err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
}

func TestAbsurdContentLength(t *testing.T) {
	r := startRaw(t, rpc.Options{})
	r.frame(initialize)
	r.next()
	r.send("Content-Length: 1000000000000000000\r\n\r\n" + `{"jsonrpc":"2.0","id":5,"method":"vtcode/listSessions","params":{`)
	if id, code, _ := r.next(); id != "5" || code != -32700 {
		t.Errorf("absurd length: id %s code %d, want a parse error for 5", id, code)
	}
	r.send(strings.Repeat("still the same body ", 1000))
	if err := r.wait(); !errors.Is(err, rpc.ErrNoShutdown) {
		t.Errorf("Serve = %v, want ErrNoShutdown", err)
	}
}

func TestMalformedHeaderEndsConnection(t *testing.T) {
	r := startRaw(t, rpc.Options{})
	r.frame(initialize)
	r.next()
	r.send("Content-Length: 10\nbroken\n\n")
	var fe *rpc.FramingError
	select {
	case err := <-r.done:
		if !errors.As(err, &fe) || rpc.ExitCode(err) != 1 {
			t.Errorf("Serve = %v, want a FramingError and exit code 1", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return after a malformed header")
	}
}

func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		frames []string
		want   int
	}{
		{"exit after shutdown", []string{initialize, `{"jsonrpc":"2.0","id":2,"method":"shutdown"}`, `{"jsonrpc":"2.0","method":"exit"}`}, 0},
		{"exit without shutdown", []string{initialize, `{"jsonrpc":"2.0","method":"exit"}`}, 1},
		{"exit before initialize", []string{`{"jsonrpc":"2.0","method":"exit"}`}, 1},
		{"end of input after shutdown", []string{initialize, `{"jsonrpc":"2.0","id":2,"method":"shutdown"}`}, 0},
		{"end of input", []string{initialize}, 1},
		{"nothing at all", nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in bytes.Buffer
			for _, f := range tc.frames {
				in.WriteString("Content-Length: " + strconv.Itoa(len(f)) + "\r\n\r\n" + f)
			}
			err := rpc.Serve(context.Background(), &in, io.Discard, rpc.Options{})
			if got := rpc.ExitCode(err); got != tc.want {
				t.Errorf("exit code %d (%v), want %d", got, err, tc.want)
			}
		})
	}
}

func TestServeStopsWithContext(t *testing.T) {
	in, _ := io.Pipe()
	defer in.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rpc.Serve(ctx, in, io.Discard, rpc.Options{}) }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Serve = %v, want context.Canceled", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Serve ignored its context")
	}
}

// FuzzFrames feeds arbitrary bytes to a server: it must never panic and
// must end when its input ends. Inputs that could name a folder on disk
// (a workspace) are skipped, so that the fuzzer cannot make the server
// write session files into real folders.
func FuzzFrames(f *testing.F) {
	frame := func(bodies ...string) []byte {
		var b bytes.Buffer
		for _, body := range bodies {
			b.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
		}
		return b.Bytes()
	}
	f.Add(frame(initialize, `{"jsonrpc":"2.0","id":2,"method":"vtcode/listSessions"}`, `{"jsonrpc":"2.0","id":3,"method":"shutdown"}`, `{"jsonrpc":"2.0","method":"exit"}`))
	f.Add(frame(`{"jsonrpc":"2.0","id":1,"method":"vtcode/history","params":{"sessionId":"s"}}`))
	f.Add(frame("{nope", "[]", "\xff\xfe", `{"jsonrpc":"2.0","id":-1,"method":"x"}`))
	f.Add([]byte("Content-Length: 99999999999999999999\r\n\r\n"))
	f.Add([]byte("Content-Length: 100\r\n\r\n{\"jsonrpc\""))
	f.Add([]byte("Content-Length: 5\n\n{}\n"))
	f.Add([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lower := bytes.ToLower(data)
		for _, risky := range []string{"workspace", "root", "\\u"} {
			if bytes.Contains(lower, []byte(risky)) {
				t.Skip("may name a folder")
			}
		}
		done := make(chan error, 1)
		go func() {
			done <- rpc.Serve(context.Background(), bytes.NewReader(data), io.Discard, rpc.Options{MaxMessageBytes: 1 << 16})
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("Serve did not end for input %q", data)
		}
	})
}
