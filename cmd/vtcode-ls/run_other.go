//go:build !unix

package main

import (
	"io"
	"os"
)

var forwardedSignals = []os.Signal{os.Interrupt}

// terminalSignals: a console sends Ctrl-C to every process attached to it.
func terminalSignals(io.Reader) map[os.Signal]bool { return map[os.Signal]bool{os.Interrupt: true} }

func exitCode(ps *os.ProcessState, err error) int {
	if ps == nil {
		return 126
	}
	return ps.ExitCode()
}
