// Package corpus locates the recorded coding-agent sessions that the tests,
// `vtcode-ls eval` and `make bench` replay: the published sessions committed
// under corpus/testdata (with their sources, licences and facts.json), and,
// when one is present, a larger corpus as extra coverage.
//
// The committed corpus is always there, so a clean clone tests by itself.
// The extra corpus is $VTCODE_TRANSCRIPTS, else a shared/transcripts folder
// beside the module root or beside one of its parents; a folder whose
// sessions are all committed ones adds nothing and is not reported.
package corpus

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// module is the module path the root's go.mod must declare.
const module = "github.com/vtcode/vtcode-ls"

// EnvDir names the environment variable of the extra corpus.
const EnvDir = "VTCODE_TRANSCRIPTS"

// Facts is the name of a corpus's fact list: session file name to the exact
// strings a summary of it must keep.
const Facts = "facts.json"

// Builtin returns the folder of the sessions committed with the repository,
// found from the working directory up to the module root.
func Builtin() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	d := filepath.Join(root, "corpus", "testdata")
	if _, err := os.Stat(filepath.Join(d, Facts)); err != nil {
		return "", fmt.Errorf("corpus: committed sessions: %w", err)
	}
	return d, nil
}

// Extra returns the folder of the larger corpus, or "" when there is none:
// $VTCODE_TRANSCRIPTS when set (it must exist), else shared/transcripts
// beside the module root or one of its parents, unless every session that
// folder holds is one of [Builtin]'s.
func Extra() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		fi, err := os.Stat(d)
		if err != nil {
			return "", fmt.Errorf("corpus: $%s: %w", EnvDir, err)
		}
		if !fi.IsDir() {
			return "", fmt.Errorf("corpus: $%s: %s is not a folder", EnvDir, d)
		}
		return d, nil
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	for d := filepath.Dir(root); ; d = filepath.Dir(d) {
		cand := filepath.Join(d, "shared", "transcripts")
		if fi, err := os.Stat(cand); err == nil && fi.IsDir() {
			builtin, err := Builtin()
			if err != nil {
				return "", err
			}
			same, err := covers(builtin, cand)
			if err != nil {
				return "", err
			}
			if same {
				return "", nil
			}
			return cand, nil
		}
		if filepath.Dir(d) == d {
			return "", nil
		}
	}
}

// Dir returns the corpus a measurement runs on: the extra corpus when there
// is one, else the committed one.
func Dir() (string, error) {
	d, err := Extra()
	if err != nil || d != "" {
		return d, err
	}
	return Builtin()
}

// Dirs returns the committed corpus, then the extra one when there is one:
// the folders a test covers.
func Dirs() ([]string, error) {
	b, err := Builtin()
	if err != nil {
		return nil, err
	}
	e, err := Extra()
	if err != nil {
		return nil, err
	}
	if e == "" || sameFolder(b, e) {
		return []string{b}, nil
	}
	return []string{b, e}, nil
}

// Sessions returns the session files of dir, sorted by name: every regular
// file but the folder's documents (upper-case .md such as SOURCES.md), its
// fact list and companion metadata (*.metadata.json).
func Sessions(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() && !IsCompanion(e.Name()) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out, nil
}

// All returns the sessions of every folder of [Dirs]; a session of the extra
// corpus with the name of a committed one is the same session and is listed
// once.
func All() ([]string, error) {
	dirs, err := Dirs()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, d := range dirs {
		s, err := Sessions(d)
		if err != nil {
			return nil, err
		}
		for _, p := range s {
			if n := filepath.Base(p); !seen[n] {
				seen[n] = true
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// IsCompanion reports whether a file of a corpus folder describes the
// sessions instead of being one.
func IsCompanion(name string) bool {
	ext := filepath.Ext(name)
	base := strings.TrimSuffix(name, ext)
	switch {
	case ext == ".md" && base == strings.ToUpper(base): // SOURCES.md, FACTS.md, LICENSES.md
		return true
	case name == Facts, strings.HasSuffix(name, ".metadata.json"):
		return true
	}
	return false
}

// covers reports whether every session file of folder b is in folder a
// too, byte for byte: then b adds nothing to a.
func covers(a, b string) (bool, error) {
	sb, err := Sessions(b)
	if err != nil {
		return false, err
	}
	for _, pb := range sb {
		pa := filepath.Join(a, filepath.Base(pb))
		fa, errA := os.Stat(pa)
		if errors.Is(errA, os.ErrNotExist) {
			return false, nil
		}
		fb, errB := os.Stat(pb)
		if err := errors.Join(errA, errB); err != nil {
			return false, fmt.Errorf("corpus: %w", err)
		}
		if fa.Size() != fb.Size() {
			return false, nil
		}
		da, errA := os.ReadFile(pa)
		db, errB := os.ReadFile(pb)
		if err := errors.Join(errA, errB); err != nil {
			return false, fmt.Errorf("corpus: %w", err)
		}
		if !bytes.Equal(da, db) {
			return false, nil
		}
	}
	return true, nil
}

// sameFolder reports whether a and b name the same folder.
func sameFolder(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// moduleRoot is the folder of the go.mod of this module, at or above the
// working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("corpus: %w", err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && declares(data, module) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("corpus: no go.mod of %s at or above the working directory (run inside the repository, or pass the folder)", module)
		}
		dir = parent
	}
}

// declares reports whether go.mod data declares module path m.
func declares(data []byte, m string) bool {
	for line := range strings.SplitSeq(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "module" && strings.Trim(f[1], `"`) == m {
			return true
		}
	}
	return false
}
