package store

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"runtime"
	"time"
)

// Op names a file operation of the store, for [Options.Faults].
type Op string

// The operations a fault can be injected into.
const (
	OpCreate Op = "create" // creating a file or folder
	OpWrite  Op = "write"  // writing bytes to a file
	OpSync   Op = "sync"   // fsync of a file or folder
	OpRename Op = "rename" // the rename that commits an atomic write
)

// ErrSymlink is wrapped by the error of an operation that met a symbolic link
// where the store keeps a file or folder of its own.
var ErrSymlink = errors.New("is a symbolic link")

// fsys is the store's access to its files: every path is relative to an
// [os.Root], so nothing (not even a symlink swapped in later) resolves
// outside the store, and every write, sync, create and rename first asks the
// fault hook.
type fsys struct {
	faults func(op Op, name string) error
}

func (x fsys) fault(op Op, name string) error {
	if x.faults == nil {
		return nil
	}
	if err := x.faults(op, name); err != nil {
		return &fs.PathError{Op: string(op), Path: name, Err: err}
	}
	return nil
}

// write writes b to f in one call.
func (x fsys) write(f *os.File, b []byte) (int, error) {
	if err := x.fault(OpWrite, f.Name()); err != nil {
		return 0, err
	}
	return f.Write(b)
}

func (x fsys) sync(f *os.File) error {
	if err := x.fault(OpSync, f.Name()); err != nil {
		return err
	}
	return f.Sync()
}

// syncDir fsyncs folder name of r, making renames and new entries in it
// durable. Windows cannot fsync a folder (its renames are durable once
// MoveFileEx returns with the file flushed), so it is a no-op there.
func (x fsys) syncDir(r *os.Root, name string) error {
	if err := x.fault(OpSync, path.Join(r.Name(), name)); err != nil {
		return err
	}
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := r.Open(name)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// lstatNoLink returns the entry name of r, failing with [ErrSymlink] when it
// is a symbolic link.
func lstatNoLink(r *os.Root, name string) (fs.FileInfo, error) {
	fi, err := r.Lstat(name)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, &fs.PathError{Op: "open", Path: path.Join(r.Name(), name), Err: ErrSymlink}
	}
	return fi, nil
}

// openFile opens the regular file name of r without following a symlink in
// its last element: a link there is [ErrSymlink]. With os.O_CREATE a missing
// file is created with mode 0600 (set explicitly, whatever the umask).
func (x fsys) openFile(r *os.Root, name string, flag int) (*os.File, error) {
	before, err := lstatNoLink(r, name)
	switch {
	case errors.Is(err, fs.ErrNotExist) && flag&os.O_CREATE != 0:
		if err := x.fault(OpCreate, path.Join(r.Name(), name)); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	}
	f, err := r.OpenFile(name, flag, fileMode)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &fs.PathError{Op: "open", Path: f.Name(), Err: errors.New("not a regular file")}
	}
	if err == nil && before != nil && !os.SameFile(before, fi) {
		err = &fs.PathError{Op: "open", Path: f.Name(), Err: errors.New("replaced while opening")}
	}
	if err == nil && before == nil {
		// Created now: the entry must still be what we opened, not a link.
		if after, lerr := lstatNoLink(r, name); lerr != nil {
			err = lerr
		} else if !os.SameFile(after, fi) {
			err = &fs.PathError{Op: "open", Path: f.Name(), Err: errors.New("replaced while opening")}
		} else {
			err = f.Chmod(fileMode)
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// mkdir creates folder name of r with mode 0700 (an existing real folder is
// fine, a link is [ErrSymlink]) and fsyncs its parent when it made a new
// entry.
func (x fsys) mkdir(r *os.Root, name string) error {
	if fi, err := lstatNoLink(r, name); err == nil {
		if !fi.IsDir() {
			return &fs.PathError{Op: "mkdir", Path: path.Join(r.Name(), name), Err: errors.New("exists and is not a folder")}
		}
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := x.fault(OpCreate, path.Join(r.Name(), name)); err != nil {
		return err
	}
	if err := r.Mkdir(name, dirMode); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, err := lstatNoLink(r, name)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &fs.PathError{Op: "mkdir", Path: path.Join(r.Name(), name), Err: errors.New("exists and is not a folder")}
	}
	if d, err := r.Open(name); err == nil {
		err = d.Chmod(dirMode)
		d.Close()
		if err != nil && runtime.GOOS != "windows" {
			return err
		}
	}
	return x.syncDir(r, path.Dir(name))
}

// openDir opens folder name of r (created if missing) as a Root of its own,
// refusing a link in its place.
func (x fsys) openDir(r *os.Root, name string) (*os.Root, error) {
	if err := x.mkdir(r, name); err != nil {
		return nil, err
	}
	before, err := lstatNoLink(r, name)
	if err != nil {
		return nil, err
	}
	sub, err := r.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	if fi, err := sub.Stat("."); err != nil || !os.SameFile(before, fi) {
		sub.Close()
		if err == nil {
			err = &fs.PathError{Op: "open", Path: path.Join(r.Name(), name), Err: errors.New("replaced while opening")}
		}
		return nil, err
	}
	return sub, nil
}

// tempName returns a fresh name for a temporary file ('@' is outside the id
// alphabet, so it never collides with an id).
func tempName() string {
	var b [8]byte
	rand.Read(b[:])
	return "@tmp-" + hex.EncodeToString(b[:])
}

// writeAtomic writes name in r through a temporary file in the same folder:
// create 0600, write, fsync, close, rename. A failure removes the temporary
// file, and leaves name as it was. The caller fsyncs the folder afterwards.
func (x fsys) writeAtomic(r *os.Root, name string, write func(w io.Writer) error) (err error) {
	dir := path.Dir(name)
	tmp := path.Join(dir, tempName())
	if err := x.fault(OpCreate, path.Join(r.Name(), tmp)); err != nil {
		return err
	}
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			r.Remove(tmp)
		}
	}()
	if err = f.Chmod(fileMode); err != nil && runtime.GOOS != "windows" {
		return err
	}
	if err = write(faultWriter{x, f}); err != nil {
		return err
	}
	if err = x.sync(f); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = x.rename(r, tmp, name); err != nil {
		return fmt.Errorf("rename: %w", err)
	}
	return nil
}

// renameAttempts bounds the attempts of [fsys.rename] (about 1.3 s in all).
const renameAttempts = 20

// rename renames from to to in r, replacing to. On Windows a file another
// handle has open (another daemon reading the prompt) cannot be replaced
// until that handle is closed, since Go opens files without
// FILE_SHARE_DELETE: the rename is retried for a short bounded time while the
// replacement is refused that way (see replaceBlocked). Each attempt passes
// the fault hook.
func (x fsys) rename(r *os.Root, from, to string) error {
	delay := time.Millisecond
	for attempt := 1; ; attempt++ {
		if err := x.fault(OpRename, path.Join(r.Name(), to)); err != nil {
			return err
		}
		err := r.Rename(from, to)
		if err == nil || attempt == renameAttempts || !replaceBlocked(err) {
			return err
		}
		time.Sleep(delay)
		delay = min(2*delay, 100*time.Millisecond)
	}
}

// faultWriter is a file whose writes pass the fault hook.
type faultWriter struct {
	x fsys
	f *os.File
}

func (w faultWriter) Write(b []byte) (int, error) { return w.x.write(w.f, b) }
