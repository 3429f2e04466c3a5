//go:build unix

package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// forwardedSignals are passed on to a child agent.
var forwardedSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// terminalSignals are the signals not to pass on: with the agent on a
// terminal, Ctrl-C and Ctrl-\ reach it from the terminal itself, and a
// second copy would read as a second keypress.
func terminalSignals(stdin io.Reader) map[os.Signal]bool {
	f, ok := stdin.(*os.File)
	if !ok {
		return nil
	}
	if _, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ); err != nil {
		return nil // not a terminal
	}
	return map[os.Signal]bool{syscall.SIGINT: true, syscall.SIGQUIT: true}
}

// exitCode is a finished child's exit code, 128+n when signal n ended it.
func exitCode(ps *os.ProcessState, err error) int {
	if ps == nil {
		return 126
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return 126
	}
	return ps.ExitCode()
}
