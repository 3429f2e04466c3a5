package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCompactionPin: compaction.pin is a list of texts; the user's and the
// workspace's lists add up, each text once; a bad value is a clear error
// with its line.
func TestCompactionPin(t *testing.T) {
	user := filepath.Join(t.TempDir(), "user.toml")
	os.WriteFile(user, []byte("[compaction]\npin = [\"Answer in English.\", \"Never push to main.\"]\n"), 0o600)
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "vtcode.toml"), []byte("[compaction]\npin = [\"Never push to main.\", \"\"\"\n## Build\nRun make check first.\n\"\"\"]\n"), 0o600)
	c, err := Load(user, ws)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Answer in English.", "Never push to main.", "## Build\nRun make check first.\n"}
	if !slices.Equal(c.Pin, want) {
		t.Errorf("pin = %q, want %q", c.Pin, want)
	}
	for _, bad := range []struct{ toml, msg string }{
		{"[compaction]\npin = \"x\"\n", "compaction.pin: must be a list of strings"},
		{"[compaction]\npin = [1]\n", "compaction.pin: must be a list of strings"},
		{"[compaction]\npin = [\"  \"]\n", "compaction.pin: an entry is empty"},
		{"[compaction]\npin = [\"" + strings.Repeat("x", 5000) + "\"]\n", "longer than 4096 bytes"},
	} {
		os.WriteFile(filepath.Join(ws, "vtcode.toml"), []byte(bad.toml), 0o600)
		_, err := Load("", ws)
		var fe *FileError
		if !errors.As(err, &fe) || !strings.Contains(fe.Msg, bad.msg) || fe.Line == 0 {
			t.Errorf("%.40q: error %v, want a line and %q", bad.toml, err, bad.msg)
		}
	}
}

// TestCompactionWriter: compaction.writer is offline, model or auto; the
// workspace's value overrides the user's; another value is an error.
func TestCompactionWriter(t *testing.T) {
	user := filepath.Join(t.TempDir(), "user.toml")
	os.WriteFile(user, []byte("[compaction]\nwriter = \"model\"\n"), 0o600)
	ws := t.TempDir()
	c, err := Load(user, ws)
	if err != nil || c.Writer != "model" {
		t.Fatalf("writer = %q, %v", c.Writer, err)
	}
	os.WriteFile(filepath.Join(ws, "vtcode.toml"), []byte("[compaction]\nwriter = \"offline\"\n"), 0o600)
	if c, err = Load(user, ws); err != nil || c.Writer != "offline" {
		t.Fatalf("writer = %q, %v", c.Writer, err)
	}
	os.WriteFile(filepath.Join(ws, "vtcode.toml"), []byte("[compaction]\nwriter = \"gpt\"\n"), 0o600)
	_, err = Load("", ws)
	var fe *FileError
	if !errors.As(err, &fe) || !strings.Contains(fe.Msg, `compaction.writer: must be "offline", "model" or "auto"`) || fe.Line == 0 {
		t.Errorf("bad writer: %v", err)
	}
}
