//go:build !unix

package main

import "time"

// cpuTime is unknown here: the scaling section falls back to wall time.
func cpuTime() (time.Duration, bool) { return 0, false }
