//go:build windows

package store

import (
	"errors"

	"golang.org/x/sys/windows"
)

// replaceBlocked reports whether a rename failed because the file it
// replaces is open elsewhere, which Windows refuses until the handle closes.
func replaceBlocked(err error) bool {
	return errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)
}
