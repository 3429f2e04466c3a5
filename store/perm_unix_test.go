//go:build unix

package store

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
)

// File modes are a Unix notion: on Windows the store's files inherit the
// ACL of the user's profile folder.
func TestPermissions(t *testing.T) {
	for _, mask := range []int{0o277, 0} {
		t.Run(fmt.Sprintf("umask%03o", mask), func(t *testing.T) {
			old := syscall.Umask(mask)
			defer syscall.Umask(old)
			st := openStore(t)
			l := openLog(t, st, "s1")
			appendN(t, l, 1, 2)
			if _, err := l.WriteArtifact("a1", []history.Message{history.NewText(history.User, "hi")}); err != nil {
				t.Fatal(err)
			}
			if err := st.WritePrompt("p"); err != nil {
				t.Fatal(err)
			}
			want := map[string]fs.FileMode{
				filepath.Dir(st.Root()):                        0o700, // created parent
				st.Root():                                      0o700,
				l.Dir():                                        0o700,
				filepath.Join(l.Dir(), "artifacts"):            0o700,
				filepath.Join(l.Dir(), "events.jsonl"):         0o600,
				filepath.Join(l.Dir(), "lock"):                 0o600,
				filepath.Join(l.Dir(), "artifacts/a1.jsonl"):   0o600,
				filepath.Join(st.Root(), "@compact-prompt.md"): 0o600,
			}
			for p, m := range want {
				fi, err := os.Lstat(p)
				if err != nil {
					t.Fatal(err)
				}
				if got := fi.Mode().Perm(); got != m {
					t.Errorf("%s: mode %04o, want %04o", p, got, m)
				}
			}
		})
	}
}
