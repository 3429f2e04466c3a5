package session

import (
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/vtcode/vtcode-ls/store"
)

// Two managers sharing a registry add workspaces concurrently (some the
// same): the registry lists each workspace once; a damaged line in the
// file is skipped and loses none of the others.
func TestRegistryRecordsWorkspacesOnce(t *testing.T) {
	reg := filepath.Join(t.TempDir(), "cache", "workspaces.jsonl")
	var roots []string
	for i := 0; i < 6; i++ {
		roots = append(roots, t.TempDir())
	}
	var wg sync.WaitGroup
	for m := 0; m < 2; m++ {
		mgr := NewManager(Options{NoWatch: true, Registry: reg})
		t.Cleanup(func() { mgr.Close() })
		for _, r := range roots {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := mgr.AddWorkspace(r, nil); err != nil {
					t.Error(err)
				}
			}()
		}
	}
	wg.Wait()
	f, err := os.OpenFile(reg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("{\"root\": \"/torn")
	f.Close()
	late := t.TempDir()
	m3 := NewManager(Options{NoWatch: true, Registry: reg})
	defer m3.Close()
	if err := m3.AddWorkspace(late, nil); err != nil {
		t.Fatal(err)
	}
	got, err := store.ReadWorkspaces(reg)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{late: true}
	for _, r := range roots {
		want[r] = true
	}
	seen := map[string]int{}
	for _, e := range got {
		seen[e.Root]++
	}
	for r := range want {
		if seen[r] != 1 {
			t.Errorf("%s listed %d times, want once: %v", r, seen[r], got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("registry lists %d workspaces, want %d: %v", len(got), len(want), got)
	}
	// Windows has no permission bits: the file is the user's by its folder's ACL.
	if fi, err := os.Stat(reg); err != nil || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600) {
		t.Errorf("registry file: %v %v, want mode 0600", fi, err)
	}
}

// A registry that cannot be written never fails AddWorkspace.
func TestRegistryErrorDoesNotFailAdd(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	mgr := NewManager(Options{NoWatch: true, Registry: filepath.Join(blocker, "workspaces.jsonl")})
	defer mgr.Close()
	if err := mgr.AddWorkspace(t.TempDir(), nil); err != nil {
		t.Fatalf("AddWorkspace with a broken registry: %v", err)
	}
}
