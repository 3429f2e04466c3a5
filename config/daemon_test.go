package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDaemonTable(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "user.toml")
	for _, c := range []struct {
		toml string
		want time.Duration
	}{
		{"[daemon]\nidle = \"10m\"\n", 10 * time.Minute},
		{"[daemon]\nidle = \" 90s \"\n", 90 * time.Second},
		{"[daemon]\nidle = \"0\"\n", -1},
		{"[daemon]\nidle = \"-1s\"\n", -1},
		{"", 0},
	} {
		os.WriteFile(user, []byte(c.toml), 0o600)
		cfg, err := Load(user, "")
		if err != nil || cfg.Daemon.Idle != c.want {
			t.Errorf("%q: idle %v (%v), want %v", c.toml, cfg.Daemon.Idle, err, c.want)
		}
	}
	for _, bad := range []struct{ toml, msg string }{
		{"[daemon]\nidle = \"soon\"\n", "daemon.idle: must be a duration"},
		{"[daemon]\nidle = 180\n", "daemon.idle: must be a string"},
		{"[daemon]\nidel = \"3m\"\n", "daemon.idel: unknown key"},
	} {
		os.WriteFile(user, []byte(bad.toml), 0o600)
		_, err := Load(user, "")
		var fe *FileError
		if !errors.As(err, &fe) || !strings.Contains(fe.Msg, bad.msg) || fe.Line == 0 {
			t.Errorf("%q: error %v, want a line and %q", bad.toml, err, bad.msg)
		}
	}
	// A repository does not decide how long the user's daemon lives.
	os.WriteFile(user, []byte("[daemon]\nidle = \"5m\"\n"), 0o600)
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "vtcode.toml"), []byte("[daemon]\nidle = \"0\"\n"), 0o600)
	cfg, err := Load(user, ws)
	if err != nil || cfg.Daemon.Idle != 5*time.Minute || len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0].Msg, "daemon.idle: ignored") {
		t.Errorf("a workspace [daemon] idle: %v, warnings %v, %v", cfg.Daemon.Idle, cfg.Warnings, err)
	}
}
