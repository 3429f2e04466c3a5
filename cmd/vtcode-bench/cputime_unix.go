//go:build unix

package main

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time the process has used (user and system), which
// other processes on a loaded machine affect far less than wall time.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
