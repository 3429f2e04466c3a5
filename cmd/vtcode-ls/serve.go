package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/vtcode/vtcode-ls/daemon"
	"github.com/vtcode/vtcode-ls/rpc"
	"github.com/vtcode/vtcode-ls/session"
)

// serveUsage is the help of vtcode-ls serve, before its flags.
const serveUsage = `usage: vtcode-ls serve [--log-file F] [--max-message-bytes N]

Serve the vtcode-ls protocol (JSON-RPC 2.0 with LSP framing) on stdin and
stdout, for an editor or an agent, in this process: the sessions of this
connection's workspaces are this process's. vtcode-ls without a command
speaks the same protocol through the user's shared daemon instead. The
protocol is documented in the rpc package
(go doc github.com/vtcode/vtcode-ls/rpc).

Flags:
`

// serve runs the daemon: JSON-RPC with LSP framing on stdin and stdout
// (stdout carries protocol frames only), logs to stderr or --log-file. It
// returns the process exit code: 0 after shutdown and exit (or after
// --help, whose usage goes to stdout), 1 when the connection ended
// otherwise (exit without shutdown, end of input, a malformed header, a
// signal), 2 for bad flags.
func serve(args []string, stdin io.Reader, stdout io.Writer, stderr io.Writer) int {
	fs := newFlags("serve", serveUsage, stderr)
	logFile := fs.String("log-file", "", "write the log to `file` (appending) instead of stderr")
	maxBytes := fs.Int64("max-message-bytes", rpc.DefaultMaxMessageBytes,
		"answer a message whose body exceeds `n` bytes with a parse error and skip it")
	fs.Bool("no-shared", false, "serve in this process, not through the shared daemon (what serve always does)")
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "vtcode-ls serve: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	if *maxBytes <= 0 {
		fmt.Fprintf(stderr, "vtcode-ls serve: --max-message-bytes must be positive, got %d\n", *maxBytes)
		return 2
	}

	logger, closeLog, err := openLogger(*logFile, stderr)
	if err != nil {
		return fail(stderr, "serve", err)
	}
	defer closeLog()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger.Debug("serving", "pid", os.Getpid(), "version", versionString())
	err = rpc.Serve(ctx, stdin, stdout, rpc.Options{
		Logger:          logger,
		Version:         versionString(),
		MaxMessageBytes: *maxBytes,
		Session: session.Options{
			Logger:     logger,
			UserConfig: userConfigFile(),
			Clients:    clientFactory(logger),
			Registry:   registryFile(os.Getenv),
		},
		Attach: attachProxy(logger, stderr),
	})
	var fe *rpc.FramingError
	switch {
	case err == nil:
		logger.Debug("exiting after shutdown")
	case errors.As(err, &fe):
		logger.Error("closing the connection", "err", err)
	case errors.Is(err, rpc.ErrNoShutdown):
		logger.Warn("the connection ended without shutdown")
	case ctx.Err() != nil:
		logger.Warn("stopped by a signal")
	default:
		logger.Error("connection failed", "err", err)
	}
	return rpc.ExitCode(err)
}

// sharedMain is vtcode-ls without a command: the protocol on stdin and
// stdout, forwarded to the user's shared daemon (started when none runs).
// With --no-shared, on a platform without the daemon, or when no daemon
// can be reached, it serves in process as serve does.
func sharedMain(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("vtcode-ls", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // serve reports bad flags with its usage
	noShared := fs.Bool("no-shared", false, "")
	logFile := fs.String("log-file", "", "")
	maxBytes := fs.Int64("max-message-bytes", 0, "")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 || *noShared || !daemon.Supported || *maxBytes < 0 {
		return serve(args, stdin, stdout, stderr)
	}
	msgs := stderr
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			fmt.Fprintf(stderr, "vtcode-ls: %v\n", err)
			return 1
		}
		defer f.Close()
		msgs = io.MultiWriter(stderr, f)
	}
	if code, ok := attach(stdin, stdout, msgs, *maxBytes, getenv); ok {
		return code
	}
	return serve(args, stdin, stdout, stderr)
}

// userConfigFile is the user configuration file,
// $XDG_CONFIG_HOME/vtcode/vtcode.toml or ~/.config/vtcode/vtcode.toml; ""
// when there is no home.
func userConfigFile() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "vtcode", "vtcode.toml")
}

// registryFile is the user's workspace registry ("" when no cache folder
// is known: nothing is recorded).
func registryFile(getenv func(string) string) string {
	p, err := daemon.RegistryPath(getenv)
	if err != nil {
		return ""
	}
	return p
}
