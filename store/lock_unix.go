//go:build unix

package store

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// errLocked is returned by tryLock when another open file holds the lock.
var errLocked = errors.New("locked")

// tryLock takes an exclusive flock(2) on f without waiting. The kernel
// drops it when f is closed or the process dies.
func tryLock(f *os.File) error {
	err := flock(f, unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return errLocked
	}
	return err
}

func unlock(f *os.File) error { return flock(f, unix.LOCK_UN) }

func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = unix.Flock(int(fd), how)
			if ferr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return ferr
}

// alive reports whether process pid exists.
func alive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}
