package corpus

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The committed corpus is found from a package folder, lists its eight
// sessions without its documents, records for each session where it comes
// from and under which licence, and its fact list names only its sessions.
func TestBuiltin(t *testing.T) {
	t.Setenv(EnvDir, "")
	dir, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := Sessions(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) != 9 {
		t.Fatalf("sessions = %d, want the 9 published ones: %v", len(sessions), sessions)
	}
	sources, err := os.ReadFile(filepath.Join(dir, "SOURCES.md"))
	if err != nil {
		t.Fatal(err)
	}
	licences, err := os.ReadFile(filepath.Join(dir, "LICENSES.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Permission is hereby granted", "Apache License"} {
		if !strings.Contains(string(licences), want) {
			t.Errorf("LICENSES.md lacks %q", want)
		}
	}
	if n := strings.Count(string(sources), "- **License:**"); n != len(sessions) {
		t.Errorf("SOURCES.md names %d licences, want one per session (%d)", n, len(sessions))
	}
	var facts map[string]json.RawMessage
	data, err := os.ReadFile(filepath.Join(dir, Facts))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &facts); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, p := range sessions {
		name := filepath.Base(p)
		names[name] = true
		if !strings.Contains(string(sources), "`"+name+"`") {
			t.Errorf("SOURCES.md does not name %s", name)
		}
	}
	if len(facts) == 0 {
		t.Error("facts.json lists no session")
	}
	for name := range facts {
		if !names[name] {
			t.Errorf("facts.json lists %s, which is not a session of the corpus", name)
		}
	}
}

func TestIsCompanion(t *testing.T) {
	for name, want := range map[string]bool{
		"SOURCES.md": true, "FACTS.md": true, "LICENSES.md": true, "facts.json": true,
		"x.metadata.json": true, "aider-chat-history.md": false, "a.jsonl": false, "b.traj": false,
	} {
		if got := IsCompanion(name); got != want {
			t.Errorf("IsCompanion(%q) = %v, want %v", name, got, want)
		}
	}
}

// tree lays out files (path → content) under a new temporary folder.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// A shared folder beside the repository that holds the committed sessions
// adds nothing; one with other or more sessions is the extra corpus, and
// the tests cover both, each session once.
func TestExtraBesideTheRepository(t *testing.T) {
	t.Setenv(EnvDir, "")
	root := tree(t, map[string]string{
		"repo/go.mod":                          "module " + module + "\n\ngo 1.26\n",
		"repo/corpus/testdata/facts.json":      "{}",
		"repo/corpus/testdata/SOURCES.md":      "sources",
		"repo/corpus/testdata/a.jsonl":         "A",
		"repo/pkg/sub/x.go":                    "package sub",
		"shared/transcripts/facts.json":        "{}",
		"shared/transcripts/a.jsonl":           "A",
		"shared/transcripts/SOURCES.md":        "other notes",
		"elsewhere/go.mod":                     "module example.com/other\n",
		"elsewhere/corpus/testdata/facts.json": "{}",
	})
	repo := filepath.Join(root, "repo")
	builtin := filepath.Join(repo, "corpus", "testdata")
	shared := filepath.Join(root, "shared", "transcripts")
	t.Chdir(filepath.Join(repo, "pkg", "sub"))

	if got, err := Builtin(); err != nil || got != builtin {
		t.Fatalf("Builtin() = %q, %v; want %q", got, err, builtin)
	}
	if got, err := Extra(); err != nil || got != "" {
		t.Fatalf("Extra() = %q, %v with the same sessions beside; want none", got, err)
	}
	if got, err := Dir(); err != nil || got != builtin {
		t.Fatalf("Dir() = %q, %v; want the committed corpus", got, err)
	}
	// A session committed since the folder beside was copied: the folder
	// still adds nothing.
	if err := os.WriteFile(filepath.Join(builtin, "c.jsonl"), []byte("C"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Extra(); err != nil || got != "" {
		t.Fatalf("Extra() = %q, %v with a subset of the committed sessions beside; want none", got, err)
	}

	if err := os.WriteFile(filepath.Join(shared, "b.jsonl"), []byte("B"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Extra(); err != nil || got != shared {
		t.Fatalf("Extra() = %q, %v; want %q", got, err, shared)
	}
	if got, err := Dir(); err != nil || got != shared {
		t.Fatalf("Dir() = %q, %v; want the extra corpus", got, err)
	}
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(builtin, "a.jsonl"), filepath.Join(builtin, "c.jsonl"), filepath.Join(shared, "b.jsonl")}
	if !reflect.DeepEqual(all, want) {
		t.Fatalf("All() = %v, want %v (a.jsonl once, from the committed corpus)", all, want)
	}

	// Same names, other bytes: another corpus.
	if err := os.Remove(filepath.Join(shared, "b.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shared, "a.jsonl"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Extra(); err != nil || got != shared {
		t.Fatalf("Extra() = %q, %v with changed bytes; want %q", got, err, shared)
	}

	// Another module's tree is not this repository.
	t.Chdir(filepath.Join(root, "elsewhere"))
	if _, err := Builtin(); err == nil || !strings.Contains(err.Error(), module) {
		t.Fatalf("Builtin() in another module: err = %v, want one naming %s", err, module)
	}
}

// $VTCODE_TRANSCRIPTS names the extra corpus; a missing folder is an error,
// not a silent fallback.
func TestExtraFromEnvironment(t *testing.T) {
	d := t.TempDir()
	t.Setenv(EnvDir, d)
	dirs, err := Dirs()
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) != 2 || dirs[1] != d {
		t.Fatalf("Dirs() = %v, want the committed corpus and %s", dirs, d)
	}
	if got, err := Dir(); err != nil || got != d {
		t.Fatalf("Dir() = %q, %v; want %q", got, err, d)
	}
	t.Setenv(EnvDir, filepath.Join(d, "missing"))
	if _, err := Extra(); err == nil || !strings.Contains(err.Error(), EnvDir) {
		t.Fatalf("Extra() with a missing folder: err = %v, want one naming $%s", err, EnvDir)
	}
}
