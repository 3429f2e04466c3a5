package store

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The registry stays bounded: past its line bound it is compacted to one
// line per workspace, the most recently seen kept.
func TestRegistryCompacts(t *testing.T) {
	base := t.TempDir() // the folder of the workspaces: an absolute path on every platform
	reg := filepath.Join(base, "workspaces.jsonl")
	ws := func(i int) string { return filepath.Join(base, "ws", fmt.Sprint(i)) }
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i <= registryCompactLines+10; i++ {
		if err := RecordWorkspace(reg, ws(i%(registryKeep+20)), t0.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(reg)
	if err != nil {
		t.Fatal(err)
	}
	_, lines, _ := parseRegistry(b)
	if lines > registryCompactLines {
		t.Errorf("registry has %d lines, want at most %d", lines, registryCompactLines)
	}
	got, err := ReadWorkspaces(reg)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) > registryKeep+20 || got[0].Root != ws((registryCompactLines+10)%(registryKeep+20)) {
		t.Errorf("after compaction: %d workspaces, first %v", len(got), got[0])
	}
	if err := RecordWorkspace(reg, "relative", t0); err == nil {
		t.Error("a relative root was recorded")
	}
}
