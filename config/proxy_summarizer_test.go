package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProxySummarizerKey: [proxy] summarizer is offline unless the user
// file says "agent"; a workspace file may not make proxied sessions spend
// the agent's key; other values are rejected with the file's line.
func TestProxySummarizerKey(t *testing.T) {
	if c := DefaultConfig(""); c.Proxy.Summarizer != "" {
		t.Fatalf("default proxy summarizer %q, want \"\" (offline)", c.Proxy.Summarizer)
	}
	user := filepath.Join(t.TempDir(), "user.toml")
	os.WriteFile(user, []byte("[proxy]\nsummarizer = \"agent\"\n"), 0o600)
	c, err := Load(user, t.TempDir())
	if err != nil || c.Proxy.Summarizer != ProxySummarizerAgent {
		t.Fatalf("user file: %q, %v", c.Proxy.Summarizer, err)
	}

	ws := t.TempDir()
	file := filepath.Join(ws, "vtcode.toml")
	os.WriteFile(file, []byte("[compaction]\nwriter = \"offline\"\n[proxy]\nsummarizer = \"agent\"\n"), 0o600)
	c, err = Load("", ws)
	if err != nil {
		t.Fatal(err)
	}
	if c.Proxy.Summarizer != "" || c.Writer != "offline" {
		t.Errorf("workspace file: proxy summarizer %q, writer %q; want \"\" and offline", c.Proxy.Summarizer, c.Writer)
	}
	if len(c.Warnings) != 1 || !strings.HasPrefix(c.Warnings[0].Error(), file+":4: proxy.summarizer: ignored") {
		t.Errorf("warnings %v", c.Warnings)
	}

	os.WriteFile(user, []byte("[proxy]\nsummarizer = \"model\"\n"), 0o600)
	_, err = Load(user, "")
	var fe *FileError
	if !errors.As(err, &fe) || !strings.Contains(fe.Msg, `proxy.summarizer: must be "offline" or "agent"`) || fe.Line != 2 {
		t.Errorf("bad value: %v", err)
	}

	p, ok, err := ProxyFromJSON(json.RawMessage(`{"proxy":{"summarizer":"agent"}}`), Proxy{})
	if err != nil || !ok || p.Summarizer != ProxySummarizerAgent {
		t.Errorf("JSON: %+v %v %v", p, ok, err)
	}
	if _, _, err := ProxyFromJSON(json.RawMessage(`{"proxy":{"summarizer":"yes"}}`), Proxy{}); err == nil {
		t.Error("JSON: an unknown summarizer was accepted")
	}
}
