package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/vtcode/vtcode-ls/daemon"
)

// TestMain gives the package's tests a daemon folder of their own (the
// control socket and the workspace registry live there), so that a test
// which does not isolate itself further never reaches the user's.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "vtcode-ls-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(daemon.DirEnv, dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
