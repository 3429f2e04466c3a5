//go:build !windows

package store

// replaceBlocked reports whether a rename failed because the file it
// replaces is open elsewhere: never on Unix, where a rename replaces an open
// file.
func replaceBlocked(error) bool { return false }
