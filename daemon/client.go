package daemon

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// ErrNotRunning is returned when no daemon answers on the socket.
var ErrNotRunning = errors.New("no shared daemon is running")

// dial connects to the socket and sends the request line; it returns the
// connection, a reader positioned after the answer line, and the answer.
func dial(ctx context.Context, socket string, req request) (net.Conn, *bufio.Reader, *answer, error) {
	var dl net.Dialer
	c, err := dl.DialContext(ctx, "unix", socket)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w (%v)", ErrNotRunning, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	if err := writeLine(c, req); err != nil {
		c.Close()
		return nil, nil, nil, fmt.Errorf("%w (%v)", ErrNotRunning, err)
	}
	br := bufio.NewReaderSize(c, 64<<10)
	var a answer
	if err := readLine(br, &a); err != nil {
		c.Close()
		return nil, nil, nil, fmt.Errorf("%w (no answer: %v)", ErrNotRunning, err)
	}
	_ = c.SetDeadline(time.Time{})
	if a.Error != "" {
		c.Close()
		return nil, nil, nil, fmt.Errorf("daemon: %s", a.Error)
	}
	return c, br, &a, nil
}

// GetStatus asks the daemon on socket for its status.
func GetStatus(ctx context.Context, socket string) (*Status, error) {
	c, _, a, err := dial(ctx, socket, request{Op: "status"})
	if err != nil {
		return nil, err
	}
	c.Close()
	if a.Status == nil {
		return nil, errors.New("daemon: status without a body")
	}
	return a.Status, nil
}

// StopDaemon asks the daemon on socket to end and waits until it gave up
// the socket (its connection closed and the name is free), or ctx ends.
// It returns the daemon's pid.
func StopDaemon(ctx context.Context, socket string) (int, error) {
	c, br, a, err := dial(ctx, socket, request{Op: "stop"})
	if err != nil {
		return 0, err
	}
	defer c.Close()
	// The daemon closes this connection as it ends; then the lock is
	// released once the sessions are closed.
	_, _ = io.Copy(io.Discard, br)
	for {
		f, ok, err := lockFile(socket + ".lock")
		if err != nil {
			return a.PID, err
		}
		if ok {
			f.Close()
			return a.PID, nil
		}
		t := time.NewTimer(10 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return a.PID, ctx.Err()
		case <-t.C:
		}
	}
}

// Conn is an attached protocol connection ([Ensure]).
type Conn struct {
	c       net.Conn
	br      *bufio.Reader
	PID     int    // the daemon's pid
	Version string // the daemon's version
}

// Forward copies in to the daemon and the daemon's protocol bytes to out
// until the daemon ends the connection. It returns the exit code of the
// connection (0 after shutdown and exit, as the in-process server), and
// an error when the daemon went away instead. The end of in ends the
// client's side; the daemon then answers what is pending and ends.
func (c *Conn) Forward(in io.Reader, out io.Writer) (int, error) {
	defer c.c.Close()
	go func() {
		_, _ = io.Copy(c.c, in)
		if uc, ok := c.c.(*net.UnixConn); ok {
			_ = uc.CloseWrite()
		}
	}()
	return copyChunks(out, c.br)
}

// Close drops the connection.
func (c *Conn) Close() error { return c.c.Close() }

// AttachFiles attaches like [Attach] and hands in and out (the editor's
// pipes) over to the daemon, which then reads and writes them itself: no
// byte goes through this process. It waits for the end of the connection
// and returns its exit code, as [Conn.Forward] does. ok is false when in
// and out cannot be handed over (not pipes or sockets, or a platform
// without descriptor passing); nothing was sent then.
func AttachFiles(ctx context.Context, socket string, maxBytes int64, in, out *os.File) (code int, ok bool, err error) {
	if !passable(in) || !passable(out) {
		return 0, false, nil
	}
	c, br, _, err := dial(ctx, socket, request{Op: "attach", Files: true, MaxMessageBytes: maxBytes})
	if err != nil {
		return 1, true, err
	}
	defer c.Close()
	if err := sendFiles(c, in, out); err != nil {
		return 1, true, fmt.Errorf("handing the connection over: %w", err)
	}
	code, err = copyChunks(io.Discard, br)
	return code, true, err
}

// Attach connects to the daemon on socket as a protocol client; maxBytes
// is the frame limit (0: the daemon's default).
func Attach(ctx context.Context, socket string, maxBytes int64) (*Conn, error) {
	c, br, a, err := dial(ctx, socket, request{Op: "attach", MaxMessageBytes: maxBytes})
	if err != nil {
		return nil, err
	}
	return &Conn{c: c, br: br, PID: a.PID, Version: a.Version}, nil
}

// A Held keeps the daemon alive while it is open ([Hold]).
type Held struct {
	io.ReadCloser
	// ProxyBase is the proxy's base path of the hold's workspace
	// (proxy.WorkspaceBase), "" without one.
	ProxyBase string
}

// Hold connects to the daemon on socket and keeps it alive while the
// connection is open (an agent of vtcode-ls run between its requests); the
// answer names the proxy's base path of workspace. Reading the connection
// ends when the daemon goes away.
func Hold(ctx context.Context, socket, workspace string) (*Held, error) {
	c, br, a, err := dial(ctx, socket, request{Op: "hold", Workspace: workspace})
	if err != nil {
		return nil, err
	}
	return &Held{ReadCloser: struct {
		io.Reader
		io.Closer
	}{br, c}, ProxyBase: a.ProxyBase}, nil
}

// Starter starts a daemon process (for [Ensure]).
type Starter func() error

// Ensure attaches to the daemon on socket, starting one with start when
// none answers, and retrying the connection with a backoff bounded by
// ctx. A daemon that is ending (it holds the name and no longer answers)
// is waited for by the started one.
func Ensure(ctx context.Context, socket string, maxBytes int64, start Starter) (*Conn, error) {
	return ensure(ctx, socket, start, func() (*Conn, error) { return Attach(ctx, socket, maxBytes) })
}

// EnsureRunning makes sure a daemon answers on socket, starting one as
// [Ensure] does.
func EnsureRunning(ctx context.Context, socket string, start Starter) error {
	_, err := ensure(ctx, socket, start, func() (struct{}, error) {
		c, _, _, err := dial(ctx, socket, request{Op: "ping"})
		if err == nil {
			c.Close()
		}
		return struct{}{}, err
	})
	return err
}

// EnsureHold is [Hold], starting a daemon as [Ensure] does.
func EnsureHold(ctx context.Context, socket, workspace string, start Starter) (*Held, error) {
	return ensure(ctx, socket, start, func() (*Held, error) { return Hold(ctx, socket, workspace) })
}

func ensure[T any](ctx context.Context, socket string, start Starter, try func() (T, error)) (T, error) {
	c, err := try()
	if err == nil || !errors.Is(err, ErrNotRunning) {
		return c, err
	}
	var zero T
	if err := start(); err != nil {
		return zero, fmt.Errorf("starting the shared daemon: %w", err)
	}
	delay := 2 * time.Millisecond
	for {
		c, err := try()
		if err == nil || !errors.Is(err, ErrNotRunning) {
			return c, err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return zero, fmt.Errorf("the shared daemon did not answer on %s: %w", socket, err)
		case <-t.C:
		}
		delay = min(2*delay, 100*time.Millisecond)
	}
}

// StartProcess returns a Starter that runs exe with args as a detached
// daemon: its own session, no terminal, stdin and stdout on the null
// device, stderr appended to logFile (created 0600 in a 0700 folder).
// The environment is this process's, so the daemon sees the same
// configuration and provider keys as the client that started it.
func StartProcess(exe string, args []string, logFile string) Starter {
	return func() error {
		if err := os.MkdirAll(filepath.Dir(logFile), 0o700); err != nil {
			return err
		}
		lf, err := os.OpenFile(logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		defer lf.Close()
		null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		defer null.Close()
		cmd := exec.Command(exe, args...)
		cmd.Dir = filepath.VolumeName(exe) + string(filepath.Separator) // pins no folder of the client
		cmd.Stdin, cmd.Stdout, cmd.Stderr = null, null, lf
		cmd.SysProcAttr = detach()
		if err := cmd.Start(); err != nil {
			return err
		}
		go func() { _ = cmd.Wait() }() // reaped if it ends while we run
		return nil
	}
}
