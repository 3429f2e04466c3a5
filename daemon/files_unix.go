//go:build unix

package daemon

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
)

// passable reports whether f can be handed to the daemon: a pipe or a
// socket, whose open file description nobody else reads or writes in
// non-blocking mode (a terminal shared with a shell is not).
func passable(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	m := fi.Mode()
	return m&os.ModeNamedPipe != 0 || m&os.ModeSocket != 0
}

// sendFiles sends the descriptors of in and out over c.
func sendFiles(c net.Conn, in, out *os.File) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return errors.New("not a unix socket")
	}
	rights := syscall.UnixRights(int(in.Fd()), int(out.Fd()))
	_, _, err := uc.WriteMsgUnix([]byte{'f'}, rights, nil)
	return err
}

// receiveFiles receives the client's stdin and stdout over c, as files
// served through the runtime's poller (so closing them ends a read in
// progress).
func receiveFiles(c net.Conn) (in, out *os.File, err error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil, nil, errors.New("not a unix socket")
	}
	buf := make([]byte, 1)
	oob := make([]byte, syscall.CmsgSpace(2*4))
	_, oobn, _, _, err := uc.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, nil, fmt.Errorf("receiving the files: %w", err)
	}
	msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return nil, nil, fmt.Errorf("receiving the files: %w", err)
	}
	var fds []int
	for _, m := range msgs {
		if got, err := syscall.ParseUnixRights(&m); err == nil {
			fds = append(fds, got...)
		}
	}
	if len(fds) != 2 {
		for _, fd := range fds {
			syscall.Close(fd)
		}
		return nil, nil, fmt.Errorf("receiving the files: got %d descriptors, want 2", len(fds))
	}
	files := make([]*os.File, 2)
	for i, fd := range fds {
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil || (st.Mode&syscall.S_IFMT != syscall.S_IFIFO && st.Mode&syscall.S_IFMT != syscall.S_IFSOCK) {
			for _, fd := range fds {
				syscall.Close(fd)
			}
			return nil, nil, errors.New("receiving the files: not a pipe or a socket")
		}
		syscall.CloseOnExec(fd)
		_ = syscall.SetNonblock(fd, true)
		files[i] = os.NewFile(uintptr(fd), []string{"client stdin", "client stdout"}[i])
	}
	return files[0], files[1], nil
}
