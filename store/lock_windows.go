//go:build windows

package store

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// errLocked is returned by tryLock when another open file holds the lock.
var errLocked = errors.New("locked")

// The locked range: one byte far past the pid the file holds, so that other
// processes can still read the pid (Windows locks are mandatory for reads of
// the locked range).
const lockOffsetHigh = 0x40000000

// tryLock takes an exclusive LockFileEx lock on f without waiting. Windows
// drops it when f is closed or the process dies.
func tryLock(f *os.File) error {
	ol := &windows.Overlapped{OffsetHigh: lockOffsetHigh}
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return errLocked
	}
	return err
}

func unlock(f *os.File) error {
	ol := &windows.Overlapped{OffsetHigh: lockOffsetHigh}
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, ol)
}

// alive reports whether process pid is running.
func alive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return errors.Is(err, windows.ERROR_ACCESS_DENIED)
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return true
	}
	return code == 259 // STILL_ACTIVE
}
