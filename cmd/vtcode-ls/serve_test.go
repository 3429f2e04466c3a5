package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// frames encodes bodies as LSP frames.
func frames(bodies ...string) []byte {
	var b bytes.Buffer
	for _, body := range bodies {
		b.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
	}
	return b.Bytes()
}

const (
	initReq     = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`
	shutdownReq = `{"jsonrpc":"2.0","id":2,"method":"shutdown"}`
	exitNote    = `{"jsonrpc":"2.0","method":"exit"}`
)

// readFrames parses the server's output, failing on anything that is not a
// well-formed frame of JSON.
func readFrames(t *testing.T, out []byte) []map[string]any {
	t.Helper()
	var got []map[string]any
	br := bufio.NewReader(bytes.NewReader(out))
	for {
		line, err := br.ReadString('\n')
		if err == io.EOF && line == "" {
			return got
		}
		n, ok := strings.CutPrefix(line, "Content-Length: ")
		if err != nil || !ok || !strings.HasSuffix(n, "\r\n") {
			t.Fatalf("stdout is not frames only: %q", line)
		}
		length, _ := strconv.Atoi(strings.TrimSuffix(n, "\r\n"))
		if blank, _ := br.ReadString('\n'); blank != "\r\n" {
			t.Fatalf("no blank line after the header: %q", blank)
		}
		body := make([]byte, length)
		if _, err := io.ReadFull(br, body); err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("frame body %q: %v", body, err)
		}
		got = append(got, m)
	}
}

// isolate points the user configuration at an empty folder and returns a
// workspace folder.
func isolate(t *testing.T) string {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	isolateDaemon(t)
	return t.TempDir()
}

func TestServeExitCodes(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		name  string
		input []byte
		want  int
		log   string // expected in stderr
	}{
		{"exit after shutdown", frames(initReq, shutdownReq, exitNote), 0, ""},
		{"exit without shutdown", frames(initReq, exitNote), 1, "without shutdown"},
		{"end of input", frames(initReq), 1, "without shutdown"},
		{"malformed header", append(frames(initReq), "Content-Length: twelve\r\n\r\n{}"...), 1, "malformed header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := serve(nil, bytes.NewReader(tc.input), &stdout, &stderr)
			if code != tc.want {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tc.want, stderr.String())
			}
			readFrames(t, stdout.Bytes())
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			switch {
			case tc.log == "" && stderr.Len() != 0:
				t.Errorf("stderr: %s", stderr.String())
			case tc.log != "" && (len(lines) != 1 || !strings.Contains(lines[0], tc.log)):
				t.Errorf("stderr = %q, want one line about %q", stderr.String(), tc.log)
			}
		})
	}
}

func TestServeFlags(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"--help"}, 0},
		{[]string{"--no-such-flag"}, 2},
		{[]string{"--max-message-bytes", "0"}, 2},
		{[]string{"--max-message-bytes", "lots"}, 2},
		{[]string{"extra"}, 2},
	} {
		var stdout, stderr bytes.Buffer
		if code := serve(tc.args, bytes.NewReader(nil), &stdout, &stderr); code != tc.want {
			t.Errorf("serve %q = %d, want %d; stderr:\n%s", tc.args, code, tc.want, stderr.String())
		}
		if help := tc.want == 0; help != strings.Contains(stdout.String(), "usage: vtcode-ls serve") {
			t.Errorf("serve %q: stdout %q", tc.args, stdout.String())
		}
	}
}

func TestServeLogFileAndLimit(t *testing.T) {
	isolate(t)
	logFile := filepath.Join(t.TempDir(), "vtcode.log")
	big := `{"jsonrpc":"2.0","id":5,"method":"vtcode/listSessions","params":{"pad":"` + strings.Repeat("x", 300) + `"}}`
	var stdout, stderr bytes.Buffer
	code := serve([]string{"--log-file", logFile, "--max-message-bytes", "200"},
		bytes.NewReader(frames(initReq, big, exitNote)), &stdout, &stderr)
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr used despite --log-file: %s", stderr.String())
	}
	log, err := os.ReadFile(logFile)
	if err != nil || !strings.Contains(string(log), "without shutdown") {
		t.Errorf("log file: %v %q", err, log)
	}
	got := readFrames(t, stdout.Bytes())
	if len(got) != 2 {
		t.Fatalf("frames %v, want the initialize result and one error", got)
	}
	if e, _ := got[1]["error"].(map[string]any); e == nil || e["code"] != float64(-32700) || got[1]["id"] != float64(5) {
		t.Errorf("oversized frame answered with %v", got[1])
	}
}

// converse runs the binary with args, sends each body as a frame and, after
// a request, waits for its response before sending the next, like an editor.
// The malformed tail, if any, is written raw at the end. It returns the exit
// code, every frame the binary wrote, and its stderr.
func converse(t *testing.T, bin string, args []string, bodies []string, tail string) (int, []map[string]any, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdoutPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	br := bufio.NewReader(io.TeeReader(stdoutPipe, &out))
	for _, body := range bodies {
		if _, err := stdin.Write(frames(body)); err != nil {
			t.Fatalf("writing %s: %v", body, err)
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal([]byte(body), &req)
		if req.ID == nil {
			continue
		}
		for { // read up to the response
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("no response to %s: %v", body, err)
			}
			length, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "Content-Length: ")))
			br.ReadString('\n')
			frame := make([]byte, length)
			if _, err := io.ReadFull(br, frame); err != nil {
				t.Fatal(err)
			}
			var resp struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			_ = json.Unmarshal(frame, &resp)
			if resp.Method == "" && string(resp.ID) == string(req.ID) {
				break
			}
		}
	}
	io.WriteString(stdin, tail)
	stdin.Close()
	io.Copy(io.Discard, br)
	err = cmd.Wait()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, readFrames(t, out.Bytes()), stderr.String()
}

func TestBinaryOverStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	// Build the real binary once, for all the cases below.
	bin := filepath.Join(t.TempDir(), "vtcode-ls")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ws := isolate(t)
	initWS := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"rootUri":"file://` + filepath.ToSlash(ws) + `","capabilities":{}}}`
	open := `{"jsonrpc":"2.0","id":3,"method":"vtcode/openSession","params":{"sessionId":"s1"}}`
	for _, tc := range []struct {
		name   string
		args   []string
		bodies []string
		tail   string
		want   int
		stderr string
	}{
		// In process (the shared daemon's cases are in shared_test.go).
		{"exit after shutdown", inProcess, []string{initWS, open, shutdownReq, exitNote}, "", 0, ""},
		{"serve subcommand", []string{"serve"}, []string{initWS, open, shutdownReq, exitNote}, "", 0, ""},
		{"exit without shutdown", inProcess, []string{initWS, open, exitNote}, "", 1, "without shutdown"},
		{"end of input", inProcess, []string{initWS, open}, "", 1, "without shutdown"},
		{"malformed header", inProcess, []string{initWS, open}, "Content-Length: 1\nx", 1, "malformed header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, got, stderr := converse(t, bin, tc.args, tc.bodies, tc.tail)
			if code != tc.want {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tc.want, stderr)
			}
			// Each run opens s1 again: the previous run released its lock.
			var opened bool
			for _, f := range got {
				if f["id"] == float64(3) && f["result"] != nil {
					opened = true
				}
			}
			if !opened {
				t.Errorf("session s1 not opened: %v", got)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			switch {
			case tc.stderr == "" && stderr != "":
				t.Errorf("stderr: %s", stderr)
			case tc.stderr != "" && (len(lines) != 1 || !strings.Contains(lines[0], tc.stderr)):
				t.Errorf("stderr = %q, want one line about %q", stderr, tc.stderr)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(ws, ".vtcode", "sessions", "s1")); err != nil {
		t.Errorf("no stored session: %v", err)
	}
}
