package session_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/session"
)

// TestUserConfigFollowsTheFile: the user configuration the proxy trusts is
// the file as it is now: an edit (of another length, or of the same length
// with a new modification time) is seen at the next call, and so is the
// file's removal.
func TestUserConfigFollowsTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vtcode.toml")
	write := func(base string, mod time.Time) {
		t.Helper()
		if err := os.WriteFile(path, []byte("[providers.anthropic]\nbase_url = \""+base+"\"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	m := session.NewManager(session.Options{NoWatch: true, UserConfig: path})
	defer m.Close()
	base := func() string {
		t.Helper()
		cfg, err := m.UserConfig()
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Providers["anthropic"].BaseURL
	}
	t0 := time.Now().Add(-time.Hour)
	write("http://127.0.0.1:1111", t0)
	if got := base(); got != "http://127.0.0.1:1111" {
		t.Fatalf("first load: %q", got)
	}
	if got := base(); got != "http://127.0.0.1:1111" {
		t.Fatalf("unchanged file: %q", got)
	}
	write("http://127.0.0.1:2222", t0.Add(time.Second)) // same length
	if got := base(); got != "http://127.0.0.1:2222" {
		t.Errorf("after an edit of the same length: %q", got)
	}
	write("http://gateway.example:3333", t0.Add(time.Second)) // another length, same time
	if got := base(); got != "http://gateway.example:3333" {
		t.Errorf("after an edit of another length: %q", got)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if got := base(); got == "http://gateway.example:3333" {
		t.Errorf("after the file's removal: still %q", got)
	}
}
