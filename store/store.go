package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// File modes of everything the store creates.
const (
	dirMode  fs.FileMode = 0o700
	fileMode fs.FileMode = 0o600
)

// File names inside the store.
const (
	eventsFile   = "events.jsonl"
	lockFile     = "lock"
	artifactsDir = "artifacts"
	promptFile   = "@compact-prompt.md"
	tmpPattern   = "@tmp-*" // '@' is outside the id alphabet: never collides with an id
)

// ErrInvalidID is wrapped by the error [ValidID] returns.
var ErrInvalidID = errors.New("invalid id")

// ValidID reports whether id can name a session or an artifact: 1 to 64
// characters from A-Z, a-z, 0-9, '.', '_' and '-', and not "." or "..".
// The error wraps [ErrInvalidID] and quotes (a bounded prefix of) the id.
func ValidID(id string) error {
	bad := len(id) == 0 || len(id) > 64 || id == "." || id == ".."
	for i := 0; !bad && i < len(id); i++ {
		c := id[i]
		bad = !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-')
	}
	if bad {
		q := id
		if len(q) > 80 {
			q = q[:80] + "..."
		}
		return fmt.Errorf("%w %q: must be 1-64 characters from A-Z a-z 0-9 . _ - and not \".\" or \"..\"", ErrInvalidID, q)
	}
	return nil
}

// Store is a directory of sessions. It holds no open files itself; it is safe
// for concurrent use.
type Store struct {
	root   string // absolute, symlinks resolved
	logger *slog.Logger
}

// Open opens the store rooted at root, creating the folder (and missing
// parents) with mode 0700 if needed. A nil logger discards logs.
func Open(root string, logger *slog.Logger) (*Store, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if root == "" {
		return nil, errors.New("open store: empty root")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if err := mkdirAll(abs); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if fi, err := os.Stat(real); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("open store: %s is not a directory", abs)
	}
	s := &Store{root: real, logger: logger}
	// Another process may be writing the prompt right now: only remove old leftovers.
	s.removeTemps(real, 10*time.Minute)
	return s, nil
}

// Root returns the absolute path of the store's root folder.
func (s *Store) Root() string { return s.root }

// sessionDir returns the folder of session id, checking that it stays inside
// the root.
func (s *Store) sessionDir(id string) (string, error) {
	if err := ValidID(id); err != nil {
		return "", err
	}
	return within(s.root, id)
}

// within joins dir and name and checks that the result is a direct child of dir.
func within(dir, name string) (string, error) {
	p := filepath.Join(dir, name)
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel != name || strings.ContainsRune(rel, filepath.Separator) {
		return "", fmt.Errorf("%w %q: escapes %s", ErrInvalidID, name, dir)
	}
	return p, nil
}

// SessionInfo describes a stored session.
type SessionInfo struct {
	ID string `json:"sessionId"`
	// Messages is the live message count recorded in the last complete event
	// ([Event.Messages]); 0 when the log is empty.
	Messages int `json:"messages"`
	// UpdatedAt is the time of the last complete event, or the modification
	// time of the log when it has none.
	UpdatedAt time.Time `json:"updatedAt"`
}

// List returns the stored sessions, most recently updated first (ties by id).
// It reads only the tail of each log, takes no locks, and so also lists
// sessions owned by other processes. Folders without an event log, or whose
// name is not a valid id, are skipped.
func (s *Store) List() ([]SessionInfo, error) {
	entries, err := os.ReadDir(s.root)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var out []SessionInfo
	for _, e := range entries {
		if !e.IsDir() || ValidID(e.Name()) != nil {
			continue
		}
		info, ok, err := s.sessionInfo(e.Name())
		if err != nil {
			return nil, fmt.Errorf("list sessions: %w", err)
		}
		if ok {
			out = append(out, info)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].UpdatedAt.Equal(out[j].UpdatedAt) {
			return out[i].UpdatedAt.After(out[j].UpdatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

func (s *Store) sessionInfo(id string) (SessionInfo, bool, error) {
	path := filepath.Join(s.root, id, eventsFile)
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return SessionInfo{}, false, nil
	}
	if err != nil {
		return SessionInfo{}, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return SessionInfo{}, false, err
	}
	if !fi.Mode().IsRegular() {
		return SessionInfo{}, false, nil
	}
	info := SessionInfo{ID: id, UpdatedAt: fi.ModTime()}
	h, ok, err := lastHeader(f, fi.Size())
	if err != nil {
		return SessionInfo{}, false, fmt.Errorf("%s: %w", path, err)
	}
	if ok {
		info.Messages = h.Messages
		if !h.Time.IsZero() {
			info.UpdatedAt = h.Time
		}
	}
	return info, true, nil
}

// ReadPrompt returns the workspace's custom compaction prompt; ok is false
// when none is set.
func (s *Store) ReadPrompt() (prompt string, ok bool, err error) {
	f, err := os.OpenFile(filepath.Join(s.root, promptFile), os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read prompt: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return "", false, fmt.Errorf("read prompt: %w", err)
	}
	return string(b), true, nil
}

// WritePrompt atomically replaces the workspace's custom compaction prompt.
func (s *Store) WritePrompt(prompt string) error {
	err := writeAtomic(s.root, promptFile, func(w io.Writer) error {
		_, err := io.WriteString(w, prompt)
		return err
	})
	if err == nil {
		err = syncDir(s.root)
	}
	if err != nil {
		return fmt.Errorf("write prompt: %w", err)
	}
	return nil
}

// ResetPrompt removes the custom compaction prompt, so the default applies.
// Resetting when none is set is not an error.
func (s *Store) ResetPrompt() error {
	err := os.Remove(filepath.Join(s.root, promptFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil {
		err = syncDir(s.root)
	}
	if err != nil {
		return fmt.Errorf("reset prompt: %w", err)
	}
	return nil
}

// removeTemps deletes temporary files older than minAge left in dir by an
// interrupted atomic write. Failures are logged, not returned: a stale
// temporary file is harmless.
func (s *Store) removeTemps(dir string, minAge time.Duration) {
	matches, _ := filepath.Glob(filepath.Join(dir, tmpPattern))
	for _, m := range matches {
		if fi, err := os.Lstat(m); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) >= minAge {
			if err := os.Remove(m); err != nil {
				s.logger.Warn("store: cannot remove stale temporary file", "file", m, "err", err)
			}
		}
	}
}

// mkdirAll creates dir and its missing parents with mode 0700, set explicitly
// so the umask cannot loosen or tighten it, and fsyncs each parent that got a
// new entry.
func mkdirAll(dir string) error {
	fi, err := os.Stat(dir)
	if err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%s is not a directory", dir)
		}
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := mkdirAll(parent); err != nil {
			return err
		}
	}
	return mkdir(dir)
}

// mkdir creates one folder 0700 (an existing folder is fine) and fsyncs its
// parent so the new entry is durable.
func mkdir(dir string) error {
	if err := os.Mkdir(dir, dirMode); err != nil {
		if errors.Is(err, fs.ErrExist) {
			fi, lerr := os.Lstat(dir)
			if lerr == nil && fi.IsDir() {
				return nil
			}
			return fmt.Errorf("%s exists and is not a directory", dir)
		}
		return err
	}
	if err := os.Chmod(dir, dirMode); err != nil {
		return err
	}
	return syncDir(filepath.Dir(dir))
}

// syncDir fsyncs a folder, making renames and new entries in it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeAtomic writes name in dir through a temporary file in the same folder:
// write, fsync, chmod 0600, close, rename. The caller fsyncs dir afterwards
// (once, when it renames several files).
func writeAtomic(dir, name string, write func(io.Writer) error) (err error) {
	f, err := os.CreateTemp(dir, tmpPattern)
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err = f.Chmod(fileMode); err != nil {
		return err
	}
	if err = write(f); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, name))
}
