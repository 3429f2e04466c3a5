package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/daemon"
)

// inProcess are the arguments of a connection served in the process, as
// before the shared daemon.
var inProcess = []string{"--no-shared"}

// isolateDaemon gives the test its own daemon socket folder and stops a
// daemon started there when the test ends, so none outlives it.
func isolateDaemon(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "vtd")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(daemon.DirEnv, dir)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if _, err := daemon.StopDaemon(ctx, filepath.Join(dir, daemon.SocketName)); err != nil && !errors.Is(err, daemon.ErrNotRunning) {
			t.Errorf("stopping the test's daemon: %v", err)
		}
		os.RemoveAll(dir)
	})
	return dir
}
