package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
)

// nthFault fails the n-th (1-based) operation op whose path contains match
// with ENOSPC, and counts the matching operations.
type nthFault struct {
	op    Op
	match string
	n     int
	seen  int
}

func (f *nthFault) hook(op Op, name string) error {
	if op != f.op || !strings.Contains(filepath.ToSlash(name), f.match) {
		return nil
	}
	f.seen++
	if f.seen == f.n {
		return syscall.ENOSPC
	}
	return nil
}

// TestAppendFaultChangesNothing: ENOSPC at the write or the fsync of an
// append leaves the log exactly as it was, and the next append works.
func TestAppendFaultChangesNothing(t *testing.T) {
	for _, op := range []Op{OpWrite, OpSync} {
		f := &nthFault{op: op, match: "events.jsonl", n: 3}
		st, err := openAt(t, filepath.Join(t.TempDir(), "s"), Options{Faults: f.hook})
		if err != nil {
			t.Fatal(err)
		}
		l := openLog(t, st, "s1")
		appendN(t, l, 1, 2)
		before, _ := os.ReadFile(filepath.Join(l.Dir(), "events.jsonl"))
		if err := l.Append(Event{Type: "messages", Messages: 3}); !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("%s fault: Append = %v, want ENOSPC", op, err)
		}
		if now, _ := os.ReadFile(filepath.Join(l.Dir(), "events.jsonl")); string(now) != string(before) || l.LastSeq() != 2 {
			t.Fatalf("%s fault: the failed append changed the log", op)
		}
		appendN(t, l, 3, 3)
		l.Close()
		evs, _ := openLog(t, st, "s1").Events()
		checkSeqs(t, evs, 3)
	}
}

// TestArtifactFaultLeavesNoFile: a fault at any create, write, fsync or
// rename of an artifact write fails it and leaves no file at all (no
// temporary, no partial artifact, no sidecar).
func TestArtifactFaultLeavesNoFile(t *testing.T) {
	msgs := make([]history.Message, 2000)
	for i := range msgs {
		msgs[i] = history.NewText(history.User, strings.Repeat("word ", 100))
	}
	for _, op := range []Op{OpCreate, OpWrite, OpSync, OpRename} {
		for n := 1; ; n++ {
			f := &nthFault{op: op, match: "artifacts"}
			st, err := openAt(t, filepath.Join(t.TempDir(), "s"), Options{Faults: f.hook})
			if err != nil {
				t.Fatal(err)
			}
			l := openLog(t, st, "s1")
			f.n, f.seen = n, 0 // count only the artifact write's operations
			_, err = l.WriteArtifact("a1", msgs)
			if f.seen < n {
				if err != nil {
					t.Fatalf("%s: no fault injected, yet %v", op, err)
				}
				break // every operation of this kind was tried
			}
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("%s #%d: WriteArtifact = %v, want ENOSPC", op, n, err)
			}
			if ents, _ := os.ReadDir(filepath.Join(l.Dir(), "artifacts")); len(ents) != 0 {
				t.Fatalf("%s #%d: files left: %v", op, n, ents)
			}
			l.Close()
		}
	}
}
