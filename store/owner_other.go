//go:build !linux

package store

import "os"

// lockOwner returns the pid recorded in the lock file when that process is
// alive, else 0 (unknown): a lock held by a process that does not record
// its pid (or one whose pid went stale) is reported without a pid rather
// than naming a dead process.
func lockOwner(_ *os.File, recorded int) int {
	if recorded > 0 && alive(recorded) {
		return recorded
	}
	return 0
}
