package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/vtcode/vtcode-ls/config"
	"github.com/vtcode/vtcode-ls/daemon"
	"github.com/vtcode/vtcode-ls/proxy"
	"github.com/vtcode/vtcode-ls/rpc"
	"github.com/vtcode/vtcode-ls/session"
)

// idleEnv names the environment variable with the idle time of a daemon a
// client starts (a Go duration, e.g. "10m"; "0" or negative: never idle).
const idleEnv = "VTCODE_DAEMON_IDLE"

// daemonUsage is the help of vtcode-ls daemon, before its flags.
const daemonUsage = `usage: vtcode-ls daemon [--idle D] [--log-file F] [--proxy-listen ADDR]

Run the user's shared daemon in the foreground: it owns every workspace's
sessions and the proxy, and serves the editors and agents that attach to
its control socket (vtcode-ls with no arguments, vtcode-ls run). Clients
start it on demand; this command is for running it by hand.

Flags:
`

// daemonMain runs the user's shared daemon in the foreground: vtcode-ls
// daemon [--idle D] [--log-file F] [--proxy-listen ADDR]. Clients start it
// themselves, detached, when none runs.
func daemonMain(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlags("daemon", daemonUsage, stderr)
	idle := fs.Duration("idle", daemon.DefaultIdle, "exit `d` after the last client and the last proxied request (0: never; default [daemon] idle of the user configuration, else 3m)")
	logFile := fs.String("log-file", "", "write the log to `file` (appending) instead of stderr")
	listen := fs.String("proxy-listen", "", "the proxy's `addr` (default [proxy] listen of the user configuration, else "+proxy.DefaultListen+"; \"off\": no proxy)")
	if code, done := parseNoArgs(fs, args, stdout, stderr); done {
		return code
	}
	if !daemon.Supported {
		fmt.Fprintln(stderr, "vtcode-ls daemon: the shared daemon is not supported on this platform; editors run vtcode-ls serve")
		return 2
	}
	logger, closeLog, err := openLogger(*logFile, stderr)
	if err != nil {
		return fail(stderr, "daemon", err)
	}
	defer closeLog()
	socket, err := daemon.SocketPath(getenv)
	if err != nil {
		return fail(stderr, "daemon", err)
	}
	user := userConfigFile()
	ucfg, err := config.Load(user, "")
	if err != nil {
		logger.Warn("user configuration", "err", err) // the defaults apply
	}
	px := ucfg.Proxy
	switch {
	case *listen == "off":
		px.Listen = ""
	case *listen != "":
		px.Listen = *listen
	case px.Listen == "":
		px.Listen = proxy.DefaultListen
	}
	secret := ""
	if px.SecretEnv != "" {
		if secret = getenv(px.SecretEnv); secret == "" {
			fmt.Fprintf(stderr, "vtcode-ls daemon: the shared secret variable %s is not set\n", px.SecretEnv)
			return 2
		}
	}
	idleSet := false
	fs.Visit(func(f *flag.Flag) { idleSet = idleSet || f.Name == "idle" })
	if !idleSet && ucfg.Daemon.Idle != 0 {
		*idle = ucfg.Daemon.Idle // negative: never
	}
	if *idle == 0 {
		*idle = -1 // never
	}
	d, err := daemon.Listen(daemon.Options{
		Socket:  socket,
		Logger:  logger,
		Version: versionString(),
		Session: session.Options{Logger: logger, UserConfig: user, Clients: clientFactoryEnv(logger, getenv), Registry: registryFile(getenv)},
		RPC:     rpc.Options{Logger: logger, Version: versionString()},
		Idle:    *idle,
		Wait:    5 * time.Second,

		ProxyListen:      px.Listen,
		ProxyAllowRemote: px.AllowRemote,
		ProxySecret:      secret,
	})
	if errors.Is(err, daemon.ErrRunning) {
		fmt.Fprintf(stderr, "vtcode-ls daemon: already running on %s\n", socket)
		return 0
	}
	if err != nil {
		return fail(stderr, "daemon", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger.Info("shared daemon", "pid", os.Getpid(), "version", versionString(), "socket", socket, "proxy", d.ProxyAddr(), "idle", idle.String())
	if err := d.Serve(ctx); err != nil {
		logger.Error("daemon ended", "err", err)
		return 1
	}
	return 0
}

// startDaemon is the Starter of the clients: this executable's "daemon"
// command, detached, logging to the cache folder.
func startDaemon(getenv func(string) string) (daemon.Starter, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	logPath, err := daemon.LogPath(getenv)
	if err != nil {
		return nil, err
	}
	args := []string{"daemon", "--log-file", logPath}
	if v := getenv(idleEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", idleEnv, err)
		}
		args = append(args, "--idle", d.String())
	}
	return daemon.StartProcess(exe, args, logPath), nil
}

// connectTimeout bounds how long a client waits for a daemon to answer.
const connectTimeout = 10 * time.Second

// attach serves stdin and stdout through the user's shared daemon,
// starting it when none runs. ok is false when no daemon could be reached
// (nothing of stdin was read then, and the caller serves in process).
func attach(stdin io.Reader, stdout, stderr io.Writer, maxBytes int64, getenv func(string) string) (code int, ok bool) {
	socket, err := daemon.SocketPath(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "vtcode-ls: shared daemon: %v; serving in process\n", err)
		return 0, false
	}
	start, err := startDaemon(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "vtcode-ls: shared daemon: %v; serving in process\n", err)
		return 0, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	// The editor's pipes go to the daemon itself when they can: no byte
	// passes through this process then.
	in, inOK := stdin.(*os.File)
	out, outOK := stdout.(*os.File)
	if inOK && outOK {
		if err := daemon.EnsureRunning(ctx, socket, start); err != nil {
			fmt.Fprintf(stderr, "vtcode-ls: shared daemon: %v; serving in process\n", err)
			return 0, false
		}
		code, handed, err := daemon.AttachFiles(ctx, socket, maxBytes, in, out)
		switch {
		case handed && err == nil:
			return code, true
		case handed && !errors.Is(err, daemon.ErrNotRunning):
			fmt.Fprintf(stderr, "vtcode-ls: %v; the next start of vtcode-ls starts a new one and resumes the sessions\n", err)
			return code, true
		}
		// Not pipes, or the daemon went away before the handover: the
		// bytes are forwarded.
	}
	c, err := daemon.Ensure(ctx, socket, maxBytes, start)
	if err != nil {
		fmt.Fprintf(stderr, "vtcode-ls: shared daemon: %v; serving in process\n", err)
		return 0, false
	}
	code, err = c.Forward(stdin, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "vtcode-ls: %v (pid %d); the next start of vtcode-ls starts a new one and resumes the sessions\n", err, c.PID)
	}
	return code, true
}

// statusUsage is the help of vtcode-ls status, before its flags.
const statusUsage = `usage: vtcode-ls status [--json]

Print the shared daemon's pid, version, uptime, clients, workspaces,
sessions and proxy address. Exit code 3 when no daemon runs.

Flags:
`

// statusMain prints the shared daemon's status: vtcode-ls status [--json].
func statusMain(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlags("status", statusUsage, stderr)
	asJSON := fs.Bool("json", false, "print the status as JSON")
	if code, done := parseNoArgs(fs, args, stdout, stderr); done {
		return code
	}
	socket, err := daemon.SocketPath(getenv)
	if err != nil {
		return fail(stderr, "status", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	st, err := daemon.GetStatus(ctx, socket)
	if errors.Is(err, daemon.ErrNotRunning) {
		fmt.Fprintf(stdout, "no shared daemon is running (socket %s)\n", socket)
		return 3
	}
	if err != nil {
		return fail(stderr, "status", err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(st)
		return 0
	}
	proxyLine := "http://" + st.Proxy
	if st.Proxy == "" {
		proxyLine = "not listening: " + st.ProxyError
	}
	idleLine := "never"
	if st.IdleSec >= 0 {
		idleLine = (time.Duration(st.IdleSec) * time.Second).String() + " after the last client"
	}
	fmt.Fprintf(stdout, "pid        %d\nversion    %s\nuptime     %s\nidle       %s\nsocket     %s\nclients    %d\nruns       %d\nproxy      %s\nsessions   %d\n",
		st.PID, st.Version, (time.Duration(st.UptimeSec) * time.Second).String(), idleLine, st.Socket, st.Clients, st.Runs, proxyLine, st.Sessions)
	if len(st.Workspaces) == 0 {
		fmt.Fprintln(stdout, "workspaces none")
	}
	for i, w := range st.Workspaces {
		label := "workspaces"
		if i > 0 {
			label = strings.Repeat(" ", len(label))
		}
		fmt.Fprintf(stdout, "%s %s (%d sessions)\n", label, w.Root, w.Sessions)
	}
	return 0
}

// stopUsage is the help of vtcode-ls stop, before its flags.
const stopUsage = `usage: vtcode-ls stop

End the shared daemon cleanly: its clients are disconnected, its sessions
closed (they resume in the next daemon). Exit code 3 when none runs.
`

// stopMain ends the shared daemon: vtcode-ls stop.
func stopMain(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlags("stop", stopUsage, stderr)
	if code, done := parseNoArgs(fs, args, stdout, stderr); done {
		return code
	}
	socket, err := daemon.SocketPath(getenv)
	if err != nil {
		return fail(stderr, "stop", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pid, err := daemon.StopDaemon(ctx, socket)
	if errors.Is(err, daemon.ErrNotRunning) {
		fmt.Fprintln(stdout, "no shared daemon is running")
		return 3
	}
	if err != nil {
		return fail(stderr, "stop", err)
	}
	fmt.Fprintf(stdout, "stopped the shared daemon (pid %d)\n", pid)
	return 0
}
