//go:build linux

package integration_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/proxy/proxytest"
)

// TestProxyCommand runs vtcode-ls proxy on its own: its first stderr line
// names the address (":0" picks a port), a streamed Messages request goes
// through to the configured upstream and is recorded in the workspace's
// store, SIGTERM stops it with code 0; a non-loopback address needs
// --allow-remote.
func TestProxyCommand(t *testing.T) {
	up, err := proxytest.Start([]proxytest.Turn{{Text: "unused: a request without tools gets the side answer"}}, proxytest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	// The upstream is the user's configuration (--config): a workspace file
	// may not pick an endpoint.
	ws := newWorkspace(t, "")
	user := filepath.Join(t.TempDir(), "vtcode.toml")
	if err := os.WriteFile(user, []byte(fmt.Sprintf("[providers.anthropic]\nbase_url = %q\n", up.URL)), 0o600); err != nil {
		t.Fatal(err)
	}

	out, err := exec.Command(daemonBin, "proxy", "--listen", "0.0.0.0:0", "--workspace", ws, "--config", user).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "--allow-remote") {
		t.Errorf("a non-loopback address without --allow-remote: %v %s", err, out)
	}

	cmd := exec.Command(daemonBin, "proxy", "--listen", "127.0.0.1:0", "--workspace", ws, "--config", user)
	cmd.Env = daemonEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stderr)
	first := make(chan string, 1)
	go func() {
		if lines.Scan() {
			first <- lines.Text()
		}
		close(first)
		io.Copy(io.Discard, stderr)
	}()
	var url string
	select {
	case line := <-first:
		var ok bool
		if url, ok = strings.CutPrefix(line, "vtcode-ls proxy listening on "); !ok || !strings.HasPrefix(url, "http://127.0.0.1:") {
			t.Fatalf("first stderr line %q", line)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no first line on stderr")
	}
	body := `{"model":"claude-test","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/messages?beta=true", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", "sk-ant-integration")
	req.Header.Set("x-claude-code-session-id", "0000-integration")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(got), "Fake side answer.") || !strings.Contains(string(got), "message_stop") {
		t.Errorf("through the proxy: %d %s", resp.StatusCode, got)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the proxy did not stop on SIGTERM")
	}
	sessions, _ := filepath.Glob(filepath.Join(ws, ".vtcode", "sessions", "proxy-*", "events.jsonl"))
	if len(sessions) != 1 {
		t.Fatalf("stored proxied sessions %v, want one", sessions)
	}
	events, _ := os.ReadFile(sessions[0])
	if !strings.Contains(string(events), "Fake side answer.") || strings.Contains(string(events), "sk-ant-integration") {
		t.Errorf("the stored session lacks the answer or holds the key:\n%s", events)
	}
}
