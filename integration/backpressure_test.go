//go:build linux

package integration_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestClientThatStopsReading pipelines 10,000 vtcode/history requests whose
// answers (100 KB each, a gigabyte in all) the client never reads, then
// ends the connection the three ways an editor can: shutdown and exit, the
// end of input, SIGTERM. The daemon stops reading requests once its outbox
// is full, so its peak RSS stays far below what the answers would take, and
// it exits each time although its output was never read.
func TestClientThatStopsReading(t *testing.T) {
	const requests = 10000
	limit := int64(400 << 20)
	if raceEnabled {
		limit *= 4
	}
	for _, end := range []string{"exit", "eof", "sigterm"} {
		t.Run(end, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			cmd := exec.Command(daemonBin, "serve")
			cmd.Env = daemonEnv()
			cmd.Dir = ws
			stderr := filepath.Join(t.TempDir(), "stderr.log")
			ef, err := os.Create(stderr)
			if err != nil {
				t.Fatal(err)
			}
			defer ef.Close()
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
			exited := make(chan struct{})
			go func() { _ = cmd.Wait(); close(exited) }()
			t.Cleanup(func() {
				_ = cmd.Process.Kill()
				<-exited
			})
			send := func(body string) error {
				_, err := io.WriteString(stdin, "Content-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
				return err
			}
			br := bufio.NewReader(stdout)
			await := func(id int) {
				t.Helper()
				for {
					body, err := readFrame(br)
					if err != nil {
						t.Fatalf("reading the daemon: %v", err)
					}
					var m struct {
						ID *int `json:"id"`
					}
					if json.Unmarshal(body, &m) == nil && m.ID != nil && *m.ID == id {
						return
					}
				}
			}
			ws = filepath.ToSlash(ws)
			var msgs []string
			for i := range 40 {
				msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":%q}`, words(uint64(i), 400)))
			}
			for _, body := range []string{
				`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":"file://` + ws + `","capabilities":{}}}`,
				`{"jsonrpc":"2.0","id":2,"method":"vtcode/openSession","params":{"sessionId":"s1","contextWindow":200000}}`,
				`{"jsonrpc":"2.0","id":3,"method":"vtcode/appendMessages","params":{"sessionId":"s1","messages":[` + strings.Join(msgs, ",") + `]}}`,
			} {
				if err := send(body); err != nil {
					t.Fatal(err)
				}
			}
			await(3)
			// From here on the client reads nothing.
			written := make(chan error, 1)
			go func() {
				for i := range requests {
					if err := send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"vtcode/history","params":{"sessionId":"s1"}}`, 100+i)); err != nil {
						written <- err
						return
					}
				}
				switch end {
				case "exit":
					written <- errorsJoin(send(`{"jsonrpc":"2.0","id":99,"method":"shutdown"}`), send(`{"jsonrpc":"2.0","method":"exit"}`))
				case "eof":
					written <- stdin.Close()
				case "sigterm":
					written <- cmd.Process.Signal(syscall.SIGTERM)
				}
			}()
			select {
			case err := <-written:
				if err != nil {
					t.Fatalf("writing the requests: %v", err)
				}
			case <-exited:
				t.Fatalf("the daemon exited early\nstderr:\n%s", readTail(stderr))
			case <-time.After(2 * time.Minute):
				t.Fatal("the daemon stopped reading before the end: its read-ahead should take 10,000 small requests")
			}
			select {
			case <-exited:
			case <-time.After(60 * time.Second):
				t.Fatalf("the daemon still runs 60 s after %s with its output unread\nstderr:\n%s", end, readTail(stderr))
			}
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Errorf("exit code %d after %s without reading, want 1", code, end)
			}
			ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			if !ok {
				t.Fatal("no rusage")
			}
			peak := ru.Maxrss * 1024
			t.Logf("peak RSS %d MiB for %d unread answers of ~100 KB", peak>>20, requests)
			if peak > limit {
				t.Errorf("peak RSS %d MiB with the client not reading, want at most %d MiB", peak>>20, limit>>20)
			}
			checkNoPanicText(t, readTail(stderr))
		})
	}
}

func errorsJoin(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func readTail(path string) string {
	b, _ := os.ReadFile(path)
	return tail(string(b), 4000)
}
