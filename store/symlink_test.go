//go:build unix

package store

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
)

// TestSymlinksSwappedAfterOpen reproduces a store swapped for a symlink: the
// artifacts folder, or the whole session folder, replaced by a symlink to
// a folder outside the store after the session was opened. The next
// artifact write is refused (artifacts/) or lands in the session's own
// folder wherever it moved (session folder); nothing is written outside.
func TestSymlinksSwappedAfterOpen(t *testing.T) {
	msgs := []history.Message{history.NewText(history.User, "hi")}
	t.Run("artifacts", func(t *testing.T) {
		st := openStore(t)
		l := openLog(t, st, "s1")
		outside := t.TempDir()
		art := filepath.Join(l.Dir(), "artifacts")
		os.Remove(art)
		if err := os.Symlink(outside, art); err != nil {
			t.Fatal(err)
		}
		if _, err := l.WriteArtifact("a1", msgs); !errors.Is(err, ErrSymlink) {
			t.Errorf("WriteArtifact through a swapped artifacts/ = %v, want ErrSymlink", err)
		}
		if _, err := l.ReadArtifact(ArtifactRef{ID: "a1"}); err == nil {
			t.Error("ReadArtifact through a swapped artifacts/ succeeded")
		}
		if ents, _ := os.ReadDir(outside); len(ents) != 0 {
			t.Errorf("written outside the store: %v", ents)
		}
		// A link that stays inside the store is refused too.
		os.Remove(art)
		os.Mkdir(filepath.Join(l.Dir(), "elsewhere"), 0o700)
		os.Symlink("elsewhere", art)
		if _, err := l.WriteArtifact("a1", msgs); !errors.Is(err, ErrSymlink) {
			t.Errorf("WriteArtifact through an inner link = %v, want ErrSymlink", err)
		}
	})
	t.Run("session folder", func(t *testing.T) {
		st := openStore(t)
		l := openLog(t, st, "s1")
		outside := t.TempDir()
		moved := filepath.Join(st.Root(), "moved")
		if err := os.Rename(l.Dir(), moved); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, l.Dir()); err != nil {
			t.Fatal(err)
		}
		if _, err := l.WriteArtifact("a1", msgs); err != nil {
			t.Fatal(err)
		}
		if err := l.Append(Event{Type: "messages", Messages: 1}); err != nil {
			t.Fatal(err)
		}
		if ents, _ := os.ReadDir(outside); len(ents) != 0 {
			t.Errorf("written outside the store: %v", ents)
		}
		if _, err := os.Stat(filepath.Join(moved, "artifacts", "a1.jsonl")); err != nil {
			t.Errorf("the artifact is not in the session's own folder: %v", err)
		}
	})
	t.Run("files", func(t *testing.T) {
		st := openStore(t)
		l := openLog(t, st, "s1")
		l.Close()
		outside := filepath.Join(t.TempDir(), "target")
		os.WriteFile(outside, nil, 0o600)
		ev := filepath.Join(l.Dir(), "events.jsonl")
		os.Remove(ev)
		os.Symlink(outside, ev)
		if l, err := st.OpenSession("s1"); err == nil {
			l.Close()
			t.Error("OpenSession with events.jsonl a symlink succeeded")
		}
		os.Remove(ev)
		os.Symlink("lock", ev) // inside the folder: still a link
		if l, err := st.OpenSession("s1"); !errors.Is(err, ErrSymlink) {
			if err == nil {
				l.Close()
			}
			t.Errorf("OpenSession with events.jsonl a link to a sibling = %v", err)
		}
		os.Remove(ev)
		os.Symlink(outside, filepath.Join(st.Root(), promptFile))
		if _, _, err := st.ReadPrompt(); err == nil {
			t.Error("ReadPrompt through a symlink succeeded")
		}
	})
}

// TestOpenInRefusesEscapes: OpenIn creates the store inside its base and
// refuses a relative path that leaves it or a folder on the way that is a
// symlink, even one pointing inside the base.
func TestOpenInRefusesEscapes(t *testing.T) {
	base, outside := t.TempDir(), t.TempDir()
	for _, rel := range []string{"../x", "/abs", "a/../../x", ""} {
		if st, err := OpenIn(base, rel, Options{}); err == nil {
			st.Close()
			t.Errorf("OpenIn(%q) succeeded", rel)
		}
	}
	os.Symlink(outside, filepath.Join(base, ".vtcode"))
	if _, err := OpenIn(base, ".vtcode/sessions", Options{}); !errors.Is(err, ErrSymlink) {
		t.Errorf("OpenIn through a .vtcode symlink = %v, want ErrSymlink", err)
	}
	os.Mkdir(filepath.Join(base, "real"), 0o700)
	os.Symlink("real", filepath.Join(base, "inner"))
	if _, err := OpenIn(base, "inner/sessions", Options{}); !errors.Is(err, ErrSymlink) {
		t.Errorf("OpenIn through an inner symlink = %v, want ErrSymlink", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("created outside the base: %v", ents)
	}
	st, err := OpenIn(base, "real/.vtcode/sessions", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l := openLog(t, st, "s1")
	if _, err := os.Stat(filepath.Join(base, "real", ".vtcode", "sessions", "s1", "events.jsonl")); err != nil || l.Dir() != filepath.Join(base, "real", ".vtcode", "sessions", "s1") {
		t.Errorf("store not where asked: %v, %s", err, l.Dir())
	}
	for _, d := range []string{"real/.vtcode", "real/.vtcode/sessions"} {
		if fi, _ := os.Stat(filepath.Join(base, d)); fi == nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, want 0700", d, fi)
		}
	}
}
