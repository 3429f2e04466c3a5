//go:build unix

package daemon

import (
	"io/fs"
	"os"
	"syscall"
)

// checkOwner fails for a file another user owns.
func checkOwner(fi fs.FileInfo) error {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return errNotOwner
	}
	return nil
}

// lockFile takes the exclusive lock of path without waiting; ok is false
// when another process holds it.
func lockFile(path string) (f *os.File, ok bool, err error) {
	f, err = os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, false, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if err == syscall.EWOULDBLOCK {
			return nil, false, nil
		}
		return nil, false, err
	}
	return f, true, nil
}

// detach makes a started daemon its own session, so that it outlives the
// editor (and its terminal) that started it.
func detach() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
