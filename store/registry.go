package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// The workspace registry is a per-user JSONL file listing the workspace
// roots the engine has served, so that `vtcode-ls report --all` can find
// them. Every process appends one line per added workspace with a single
// O_APPEND write shorter than [maxRegistryLine] (atomic between processes
// on a local file system), and readers dedupe: the last line of a root
// wins. A damaged line (a torn write, foreign bytes) is skipped and the
// others are kept. When the file grows past [registryCompactLines] lines,
// the writer that notices rewrites it (one root per line, the
// [registryKeep] most recently seen) under an exclusive lock on
// <file>.lock, so two processes never compact at once; a root appended by
// another process during a compaction may be dropped, and is recorded
// again the next time that workspace is added.

const (
	maxRegistryLine      = 4 << 10
	registryCompactLines = 1024
	registryKeep         = 512
)

// RegistryEntry is one workspace of the registry.
type RegistryEntry struct {
	Root string    `json:"root"`
	Seen time.Time `json:"seen"`
}

// RecordWorkspace appends root, seen at now, to the registry file path
// (created 0600 in a 0700 folder when missing), and compacts the file when
// it has grown past its bound.
func RecordWorkspace(path, root string, now time.Time) error {
	if !filepath.IsAbs(root) {
		return fmt.Errorf("record workspace: %q is not an absolute path", root)
	}
	line, err := json.Marshal(RegistryEntry{Root: root, Seen: now.UTC()})
	if err != nil {
		return fmt.Errorf("record workspace: %w", err)
	}
	line = append(line, '\n')
	if len(line) > maxRegistryLine {
		return fmt.Errorf("record workspace: path too long (%d bytes)", len(root))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("record workspace: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("record workspace: %w", err)
	}
	// A line torn by a crash has no newline: start on a fresh line so this
	// one is not glued to it.
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 && !endsWithNewline(path, fi.Size()) {
		line = append([]byte{'\n'}, line...)
	}
	_, werr := f.Write(line)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		return fmt.Errorf("record workspace: %w", err)
	}
	_, lines, err := readRegistry(path)
	if err != nil || lines <= registryCompactLines {
		return err
	}
	return compactRegistry(path)
}

func endsWithNewline(path string, size int64) bool {
	f, err := os.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, size-1); err != nil {
		return true
	}
	return b[0] == '\n'
}

// ReadWorkspaces returns the workspaces of the registry file path, each
// once with the last time it was seen, most recently seen first. A missing
// file is an empty registry; damaged lines are skipped.
func ReadWorkspaces(path string) ([]RegistryEntry, error) {
	entries, _, err := readRegistry(path)
	return entries, err
}

func readRegistry(path string) ([]RegistryEntry, int, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("read workspaces: %w", err)
	}
	return parseRegistry(b)
}

// parseRegistry reads the lines of b; a damaged or over-long one is skipped.
func parseRegistry(b []byte) ([]RegistryEntry, int, error) {
	last := map[string]time.Time{}
	lines := 0
	for _, l := range bytes.Split(b, []byte{'\n'}) {
		if len(l) == 0 {
			continue
		}
		lines++
		var e RegistryEntry
		if len(l) > maxRegistryLine || json.Unmarshal(l, &e) != nil || !filepath.IsAbs(e.Root) {
			continue
		}
		if t, ok := last[e.Root]; !ok || e.Seen.After(t) {
			last[e.Root] = e.Seen
		}
	}
	return sortEntries(last), lines, nil
}

func sortEntries(last map[string]time.Time) []RegistryEntry {
	out := make([]RegistryEntry, 0, len(last))
	for r, t := range last {
		out = append(out, RegistryEntry{Root: r, Seen: t})
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Seen.Equal(out[j].Seen) {
			return out[i].Seen.After(out[j].Seen)
		}
		return out[i].Root < out[j].Root
	})
	return out
}

// compactRegistry rewrites the registry with one line per root, unless
// another process is compacting it.
func compactRegistry(path string) error {
	lf, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("compact workspaces: %w", err)
	}
	defer lf.Close()
	if err := tryLock(lf); errors.Is(err, errLocked) {
		return nil
	} else if err != nil {
		return fmt.Errorf("compact workspaces: %w", err)
	}
	defer unlock(lf)
	entries, lines, err := readRegistry(path)
	if err != nil || lines <= registryCompactLines {
		return err
	}
	if len(entries) > registryKeep {
		entries = entries[:registryKeep]
	}
	var buf bytes.Buffer
	for i := len(entries) - 1; i >= 0; i-- {
		line, err := json.Marshal(entries[i])
		if err != nil {
			return fmt.Errorf("compact workspaces: %w", err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".workspaces-*")
	if err != nil {
		return fmt.Errorf("compact workspaces: %w", err)
	}
	_, werr := tmp.Write(buf.Bytes())
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("compact workspaces: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("compact workspaces: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("compact workspaces: %w", err)
	}
	return nil
}
