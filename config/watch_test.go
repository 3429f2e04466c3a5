package config

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const waitFor = 5 * time.Second

type watchRecorder struct {
	changes chan Config
	errs    chan error
}

func startWatch(t *testing.T, ctx context.Context, ws, user string) (*watchRecorder, func()) {
	t.Helper()
	r := &watchRecorder{changes: make(chan Config, 16), errs: make(chan error, 16)}
	stop, err := Watch(ctx, ws, user, func(c Config) { r.changes <- c }, func(err error) { r.errs <- err })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return r, stop
}

// change waits for a configuration satisfying ok, failing on an error report.
func (r *watchRecorder) change(t *testing.T, what string, ok func(Config) bool) Config {
	t.Helper()
	timeout := time.After(waitFor)
	for {
		select {
		case c := <-r.changes:
			if ok(c) {
				return c
			}
		case err := <-r.errs:
			t.Fatalf("waiting for %s: unexpected error %v", what, err)
		case <-timeout:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (r *watchRecorder) err(t *testing.T, want string) error {
	t.Helper()
	select {
	case err := <-r.errs:
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q, want it to contain %q", err, want)
		}
		return err
	case c := <-r.changes:
		t.Fatalf("got a change (%+v) while waiting for error %q", c.Policy, want)
	case <-time.After(waitFor):
		t.Fatalf("timed out waiting for error %q", want)
	}
	return nil
}

// writeAtomic saves like an editor that writes a temporary file and renames it.
func writeAtomic(t *testing.T, path, text string) {
	t.Helper()
	tmp := path + ".swp"
	writeFile(t, tmp, text)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func trim(n int) func(Config) bool {
	return func(c Config) bool { return c.Policy.Context.TrimToPercent == n }
}

func TestWatch(t *testing.T) {
	ws := t.TempDir()
	user := filepath.Join(t.TempDir(), "vtcode.toml")
	r, stop := startWatch(t, context.Background(), ws, user)
	file := filepath.Join(ws, "vtcode.toml")

	writeAtomic(t, file, "[context]\ntrim_to_percent = 50\n")
	r.change(t, "first good file", trim(50))

	writeFile(t, file, "[context]\n# comment\ntrim_to_percent = 500\n") // in place
	err := r.err(t, file+":3: context.trim_to_percent: must be between 1 and 100")
	var fe *FileError
	if !errors.As(err, &fe) || fe.Line != 3 {
		t.Errorf("error %v is not a FileError at line 3", err)
	}

	writeFile(t, file, "[context]\ntrim_to_percent = 50\n")
	r.change(t, "fixed file (same content as before the error)", trim(50))

	// Unrelated files in the workspace are ignored; the user file is watched.
	writeFile(t, filepath.Join(ws, "main.go"), "package main\n")
	writeFile(t, user, "[context]\ntokenizer = \"approx\"\n")
	c := r.change(t, "user file", func(c Config) bool { return c.Policy.Context.Tokenizer == "approx" })
	if c.Policy.Context.TrimToPercent != 50 {
		t.Errorf("workspace layer lost: %+v", c.Policy.Context)
	}

	// Removing vtcode.toml falls back to .vtcode/config.toml, created after Watch started.
	os.Remove(file)
	r.change(t, "removal", trim(60))
	writeAtomic(t, filepath.Join(ws, ".vtcode", "config.toml"), "[context]\ntrim_to_percent = 70\n")
	r.change(t, ".vtcode/config.toml", trim(70))
	writeFile(t, filepath.Join(ws, ".vtcode", "config.toml"), "[context]\ntrim_to_percent = 71\n")
	r.change(t, ".vtcode/config.toml rewrite", trim(71))

	stop()
	stop() // idempotent
}

func TestWatchStartsFromBadFile(t *testing.T) {
	ws := t.TempDir()
	file := filepath.Join(ws, "vtcode.toml")
	writeFile(t, file, "[storage]\nbogus = 1\n")
	r, _ := startWatch(t, context.Background(), ws, "")
	writeFile(t, file, "[storage]\nbogus = 2\n")
	r.err(t, file+":2: storage.bogus: unknown key")
	// The first good file after an error is always reported, even with default values.
	writeFile(t, file, "")
	r.change(t, "empty file", trim(60))
}

func TestWatchStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	_, stop := startWatch(t, ctx, t.TempDir(), "")
	cancel()
	stop() // returns once the goroutine has exited; goleak checks the rest
}

func TestWatchMissingWorkspace(t *testing.T) {
	if _, err := Watch(context.Background(), filepath.Join(t.TempDir(), "nope"), "", nil, nil); err == nil {
		t.Error("Watch on a missing workspace succeeded")
	}
}
