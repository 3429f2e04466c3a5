//go:build !unix

package daemon

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

func checkOwner(fs.FileInfo) error { return nil }

func lockFile(string) (*os.File, bool, error) {
	return nil, false, errors.New("the shared daemon is not supported on this platform")
}

func detach() *syscall.SysProcAttr { return nil }
