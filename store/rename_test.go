package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A daemon replaces the compaction prompt while another one has the file
// open (reading it): the write succeeds. On Windows the open handle refuses
// the replacement until it is closed, which the reader does here after the
// first refused attempt; on Unix the first attempt succeeds.
func TestPromptReplacedWhileOpen(t *testing.T) {
	var (
		reader  *os.File
		renames int
	)
	hook := func(op Op, name string) error {
		if op == OpRename && strings.HasSuffix(name, promptFile) {
			renames++
			if renames == 2 && reader != nil {
				reader.Close()
			}
		}
		return nil
	}
	st, err := openAt(t, filepath.Join(t.TempDir(), "s"), Options{Faults: hook})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.WritePrompt("first prompt"); err != nil {
		t.Fatal(err)
	}
	reader, err = os.Open(filepath.Join(st.Root(), promptFile))
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	renames = 0
	if err := st.WritePrompt("second prompt"); err != nil {
		t.Fatalf("WritePrompt while another handle has the prompt open: %v", err)
	}
	if got, ok, err := st.ReadPrompt(); err != nil || !ok || got != "second prompt" {
		t.Errorf("ReadPrompt = %q, %v, %v; want the second prompt", got, ok, err)
	}
	t.Logf("%d rename attempt(s)", renames)
}
