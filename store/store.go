package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
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
	tmpPrefix    = "@tmp-" // '@' is outside the id alphabet: never collides with an id
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

// Options configure a [Store]. The zero value works.
type Options struct {
	// Logger receives warnings (repaired logs, stale files); nil discards.
	Logger *slog.Logger
	// Faults, when set, is called before each create, write, fsync and
	// rename the store makes, with the operation and the file's path; a
	// non-nil error fails that operation as if the system had returned it
	// (fault-injection tests: ENOSPC at the Nth write).
	Faults func(op Op, name string) error
}

// Store is a directory of sessions, opened as an [os.Root]: no path the
// store resolves, and no symlink swapped in later, reaches outside it. It is
// safe for concurrent use.
type Store struct {
	root   *os.Root
	path   string // absolute path of the root when opened
	logger *slog.Logger
	fs     fsys
}

// Open opens the store rooted at the folder root, creating it (and missing
// parents) with mode 0700 if needed. The path itself is trusted (it comes
// from the user's own configuration); everything under it is resolved inside
// it.
func Open(root string, o Options) (*Store, error) {
	if root == "" {
		return nil, errors.New("open store: empty root")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	x := fsys{faults: o.Faults}
	if err := mkdirAll(x, abs); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	return newStore(r, abs, o), nil
}

// OpenIn opens the store in folder rel of base, creating the missing folders
// of rel with mode 0700. base is trusted; rel is not: it must be a local
// path (no "..", not absolute), and each of its folders must be a real
// folder, not a symbolic link, so a link committed in a repository (a
// ".vtcode" pointing elsewhere) cannot move the store.
func OpenIn(base, rel string, o Options) (*Store, error) {
	rel = filepath.Clean(rel)
	if !filepath.IsLocal(rel) || rel == "." {
		return nil, fmt.Errorf("open store: %q is not a folder inside %s", rel, base)
	}
	b, err := os.OpenRoot(base)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	defer b.Close()
	x := fsys{faults: o.Faults}
	cur := b
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i, p := range parts {
		sub, err := x.openDir(cur, p)
		if cur != b {
			cur.Close()
		}
		if err != nil {
			return nil, fmt.Errorf("open store %s: %w", filepath.Join(base, filepath.Join(parts[:i+1]...)), err)
		}
		cur = sub
	}
	return newStore(cur, filepath.Join(base, rel), o), nil
}

func newStore(r *os.Root, abs string, o Options) *Store {
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Store{root: r, path: abs, logger: logger, fs: fsys{faults: o.Faults}}
	// Another process may be writing the prompt right now: only remove old leftovers.
	s.removeTemps(r, ".", 10*time.Minute)
	return s
}

// Close releases the store's handle on its folder. Open sessions keep their
// own.
func (s *Store) Close() error { return s.root.Close() }

// Root returns the absolute path of the store's root folder.
func (s *Store) Root() string { return s.path }

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
// name is not a valid id, and links are skipped.
func (s *Store) List() ([]SessionInfo, error) {
	d, err := s.root.Open(".")
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	entries, err := d.ReadDir(-1)
	d.Close()
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
	if _, err := lstatNoLink(s.root, id); err != nil {
		return SessionInfo{}, false, nil
	}
	f, err := s.fs.openFile(s.root, path.Join(id, eventsFile), os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrSymlink) {
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
	info := SessionInfo{ID: id, UpdatedAt: fi.ModTime()}
	h, ok, err := lastHeader(f, fi.Size())
	if err != nil {
		return SessionInfo{}, false, fmt.Errorf("%s: %w", f.Name(), err)
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
// when none is set. It reads the file at each call, so a prompt another
// process set is seen at once.
func (s *Store) ReadPrompt() (prompt string, ok bool, err error) {
	f, err := s.fs.openFile(s.root, promptFile, os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read prompt: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxPromptBytes+1))
	if err != nil {
		return "", false, fmt.Errorf("read prompt: %w", err)
	}
	if len(b) > MaxPromptBytes {
		return "", false, fmt.Errorf("read prompt: %s is over %d bytes", promptFile, MaxPromptBytes)
	}
	return string(b), true, nil
}

// MaxPromptBytes bounds the compaction prompt file the store reads (the
// store lives in the workspace, whose files are untrusted).
const MaxPromptBytes = 256 << 10

// WritePrompt atomically replaces the workspace's custom compaction prompt.
func (s *Store) WritePrompt(prompt string) error {
	err := s.fs.writeAtomic(s.root, promptFile, func(w io.Writer) error {
		_, err := io.WriteString(w, prompt)
		return err
	})
	if err == nil {
		err = s.fs.syncDir(s.root, ".")
	}
	if err != nil {
		return fmt.Errorf("write prompt: %w", err)
	}
	return nil
}

// ResetPrompt removes the custom compaction prompt, so the default applies.
// Resetting when none is set is not an error.
func (s *Store) ResetPrompt() error {
	err := s.root.Remove(promptFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil {
		err = s.fs.syncDir(s.root, ".")
	}
	if err != nil {
		return fmt.Errorf("reset prompt: %w", err)
	}
	return nil
}

// removeTemps deletes temporary files older than minAge left in folder dir
// of r by an interrupted atomic write. Failures are logged, not returned: a
// stale temporary file is harmless.
func (s *Store) removeTemps(r *os.Root, dir string, minAge time.Duration) {
	d, err := r.Open(dir)
	if err != nil {
		return
	}
	entries, _ := d.ReadDir(-1)
	d.Close()
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), tmpPrefix) || !e.Type().IsRegular() {
			continue
		}
		name := path.Join(dir, e.Name())
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) >= minAge {
			if err := r.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
				s.logger.Warn("store: cannot remove stale temporary file", "file", name, "err", err)
			}
		}
	}
}

// mkdirAll creates the trusted folder dir and its missing parents with mode
// 0700, set explicitly so the umask cannot loosen or tighten it, and fsyncs
// each parent that got a new entry.
func mkdirAll(x fsys, dir string) error {
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
		if err := mkdirAll(x, parent); err != nil {
			return err
		}
	}
	r, err := os.OpenRoot(parent)
	if err != nil {
		return err
	}
	defer r.Close()
	return x.mkdir(r, filepath.Base(dir))
}
