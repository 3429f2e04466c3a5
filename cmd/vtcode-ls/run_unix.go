//go:build unix

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
)

// forwardedSignals are passed on to a child agent. SIGINT is among them: a
// terminal sends it to the whole foreground group, and the agent decides.
var forwardedSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// execAgent replaces this process with the agent when it runs on this
// process's own stdio: the terminal, the signals and the exit code are then
// the agent's, with nothing in between. Otherwise it runs it as a child.
func execAgent(path string, args, env []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if stdin == io.Reader(os.Stdin) && stdout == io.Writer(os.Stdout) && stderr == io.Writer(os.Stderr) {
		err := syscall.Exec(path, append([]string{path}, args...), env)
		fmt.Fprintf(stderr, "vtcode-ls run: %v\n", err)
		return 126
	}
	return runChild(path, args, env, stdin, stdout, stderr)
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
