//go:build unix

package session_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/session"
)

// TestStoreStaysInsideWorkspace reproduces a store pointed outside the workspace
// at the session level: a storage.dir from the workspace's own file that is
// absolute or climbs out, and a .vtcode or .vtcode/sessions symlink
// committed in the repository, cannot move the store out of the workspace:
// the storage.dir is ignored (config reports it) and the session lives in the
// default store; a symlink is refused with an error naming the problem.
// Nothing is written outside. (Unix only: creating symlinks on Windows needs a privilege.)
func TestStoreStaysInsideWorkspace(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, ws, outside string)
		want  string
	}{
		{"absolute storage.dir in the workspace file", func(t *testing.T, ws, outside string) {
			os.WriteFile(filepath.Join(ws, "vtcode.toml"), []byte("[storage]\ndir = \""+outside+"\"\n"), 0o600)
		}, ""},
		{"storage.dir climbing out", func(t *testing.T, ws, outside string) {
			rel, _ := filepath.Rel(ws, outside)
			os.WriteFile(filepath.Join(ws, "vtcode.toml"), []byte("[storage]\ndir = \""+rel+"\"\n"), 0o600)
		}, ""},
		{"storage.dir from ~", func(t *testing.T, ws, outside string) {
			os.WriteFile(filepath.Join(ws, "vtcode.toml"), []byte("[storage]\ndir = \"~/vtcode-escape\"\n"), 0o600)
		}, ""},
		{".vtcode symlink", func(t *testing.T, ws, outside string) {
			if err := os.Symlink(outside, filepath.Join(ws, ".vtcode")); err != nil {
				t.Fatal(err)
			}
		}, "symbolic link"},
		{".vtcode/sessions symlink", func(t *testing.T, ws, outside string) {
			os.Mkdir(filepath.Join(ws, ".vtcode"), 0o700)
			if err := os.Symlink(outside, filepath.Join(ws, ".vtcode", "sessions")); err != nil {
				t.Fatal(err)
			}
		}, "symbolic link"},
		{"storage.dir through a symlink", func(t *testing.T, ws, outside string) {
			if err := os.Symlink(outside, filepath.Join(ws, "state")); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(ws, "vtcode.toml"), []byte("[storage]\ndir = \"state/sessions\"\n"), 0o600)
		}, "symbolic link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, outside := t.TempDir(), t.TempDir()
			tc.setup(t, ws, outside)
			m := session.NewManager(offlineOnly(session.Options{NoWatch: true}))
			defer m.Close()
			if err := m.AddWorkspace(ws, nil); err != nil {
				t.Fatal(err)
			}
			_, err := m.OpenSession(context.Background(), session.OpenParams{SessionID: "s1"})
			if tc.want == "" {
				if err != nil {
					t.Errorf("OpenSession = %v, want the session in the default store", err)
				} else if _, err := os.Stat(filepath.Join(ws, ".vtcode", "sessions", "s1")); err != nil {
					t.Errorf("the session is not in the default store inside the workspace: %v", err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("OpenSession = %v, want an error saying %q", err, tc.want)
			}
			if ents, _ := os.ReadDir(outside); len(ents) != 0 {
				t.Errorf("written outside the workspace: %v", ents)
			}
			if _, err := os.Stat(filepath.Join(os.Getenv("HOME"), "vtcode-escape")); err == nil {
				t.Error("a store was created in the home folder")
			}
		})
	}
	// A storage.dir inside the workspace is fine.
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "vtcode.toml"), []byte("[storage]\ndir = \"state/sessions\"\n"), 0o600)
	m := session.NewManager(offlineOnly(session.Options{NoWatch: true}))
	defer m.Close()
	m.AddWorkspace(ws, nil)
	if _, err := m.OpenSession(context.Background(), session.OpenParams{SessionID: "s1"}); err != nil {
		t.Fatalf("storage.dir inside the workspace: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "state", "sessions", "s1", "events.jsonl")); err != nil {
		t.Error(err)
	}
}

// TestUserStorageDirOutsideWorkspace: the user's own configuration may put
// the store anywhere.
func TestUserStorageDirOutsideWorkspace(t *testing.T) {
	ws, elsewhere := t.TempDir(), t.TempDir()
	user := filepath.Join(t.TempDir(), "vtcode.toml")
	os.WriteFile(user, []byte("[storage]\ndir = \""+elsewhere+"\"\n"), 0o600)
	m := session.NewManager(offlineOnly(session.Options{NoWatch: true, UserConfig: user}))
	defer m.Close()
	m.AddWorkspace(ws, nil)
	if _, err := m.OpenSession(context.Background(), session.OpenParams{SessionID: "s1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "s1", "events.jsonl")); err != nil {
		t.Error(err)
	}
}
