//go:build !unix

package main

import (
	"io"
	"os"
)

var forwardedSignals = []os.Signal{os.Interrupt}

func execAgent(path string, args, env []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runChild(path, args, env, stdin, stdout, stderr)
}

func exitCode(ps *os.ProcessState, err error) int {
	if ps == nil {
		return 126
	}
	return ps.ExitCode()
}
