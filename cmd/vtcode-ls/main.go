// Command vtcode-ls keeps long coding-agent sessions inside a model's context
// window. With no arguments it is what editors start: a JSON-RPC connection
// on stdio attached to the user's shared daemon (started on demand; with
// --no-shared, and "serve", it serves in process); "run" starts a coding
// agent pointed at the daemon's proxy; "replay" plays a recorded session through the request pipeline,
// "compact" shrinks a recorded session, and "version" prints the version.
//
// Usage:
//
//	vtcode-ls [--no-shared] [--log-file F] [--max-message-bytes N]
//	vtcode-ls serve [--log-file F] [--max-message-bytes N]
//	vtcode-ls run [--workspace DIR] [--env NAME] [--] AGENT [ARGS...]
//	vtcode-ls status [--json] | stop | daemon [--idle D]
//	vtcode-ls replay TRANSCRIPT [--provider P --model M --context-window N] [--json]
//	vtcode-ls compact TRANSCRIPT [--provider P --model M --context-window N] [--instructions S] [-o OUT]
//	vtcode-ls eval [DIR] [--json]
//	vtcode-ls proxy [--listen ADDR] [--workspace DIR] [--config FILE] [--allow-remote]
//	vtcode-ls report [--since 7d] [--json] [--workspace DIR] [--config FILE]
//	vtcode-ls version
//
// Every command accepts --help.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"time"
)

// version is the program version; release builds set it with
// -ldflags "-X main.version=v1.2.3". When empty, the module version from the
// build information is used, else "dev".
var version = ""

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches a command line and returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runWith(args, stdin, stdout, stderr, os.Getenv)
}

// runWith is run with the environment lookup that API keys are read with.
func runWith(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 0 {
		return sharedMain(nil, stdin, stdout, stderr, getenv)
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "serve":
		return serve(rest, stdin, stdout, stderr)
	case "replay":
		return replayMain(rest, stdout, stderr, getenv)
	case "compact":
		return compactMain(rest, stdout, stderr, getenv)
	case "version":
		return versionMain(rest, stdout, stderr)
	case "eval":
		return evalMain(rest, stdout, stderr)
	case "proxy":
		return proxyMain(rest, stdout, stderr, getenv)
	case "run":
		return runMain(rest, stdin, stdout, stderr, getenv)
	case "status":
		return statusMain(rest, stdout, stderr, getenv)
	case "stop":
		return stopMain(rest, stdout, stderr, getenv)
	case "daemon":
		return daemonMain(rest, stdout, stderr, getenv)
	case "report":
		return reportMain(rest, stdout, stderr, time.Now, getenv)
	case "help", "-h", "-help", "--help":
		if len(rest) > 0 && rest[0] != "help" && !strings.HasPrefix(rest[0], "-") {
			return runWith([]string{rest[0], "--help"}, stdin, stdout, stderr, getenv)
		}
		fmt.Fprint(stdout, usageText)
		return 0
	case "-version", "--version":
		return versionMain(nil, stdout, stderr)
	default:
		if strings.HasPrefix(cmd, "-") { // connection flags without a command
			return sharedMain(args, stdin, stdout, stderr, getenv)
		}
		fmt.Fprintf(stderr, "vtcode-ls: unknown command %q\n\n%s", cmd, usageText)
		return 2
	}
}

const usageText = `vtcode-ls keeps long coding-agent sessions inside the model's context window.

Usage:
  vtcode-ls [flags]              JSON-RPC (LSP framing) on stdin/stdout, through the shared daemon
  vtcode-ls serve [flags]        the same, served in this process
  vtcode-ls run AGENT [ARGS]     run a coding agent pointed at the shared daemon's proxy
  vtcode-ls status | stop        the shared daemon's status; end it
  vtcode-ls replay TRANSCRIPT    play a recorded session through the pipeline
  vtcode-ls compact TRANSCRIPT   compact a recorded session once
  vtcode-ls eval [DIR]           fact ledger: facts kept by compaction of recorded sessions
  vtcode-ls proxy [flags]        run the engine as a local HTTP proxy for coding agents
  vtcode-ls report [flags]       what the recorded sessions cost, and without vtcode-ls
  vtcode-ls version              print the version

Run "vtcode-ls COMMAND --help" for the flags of a command.
`

// versionUsage is the help of vtcode-ls version, before its flags.
const versionUsage = "Usage: vtcode-ls version\n\nPrints the version of vtcode-ls, the commit it was built from and the Go version.\n"

func versionMain(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("version", versionUsage, stderr)
	if code, done := parseNoArgs(fs, args, stdout, stderr); done {
		return code
	}
	fmt.Fprintln(stdout, buildLine())
	return 0
}

// versionString returns the version set at link time, else the module
// version of the build, else "dev".
func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// parseFlags parses args, allowing flags after positional arguments
// ("replay FILE --json"). done reports that the command must stop with code:
// 0 after --help (usage on stdout), 2 after a bad flag.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) (code int, done bool) {
	usage := fs.Usage
	fs.Usage = func() {} // the flag package calls it on errors too
	defer func() { fs.Usage = usage }()
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(stdout)
				usage()
				return 0, true
			}
			fmt.Fprintf(fs.Output(), "Run \"vtcode-ls %s --help\" for usage.\n", fs.Name())
			return 2, true
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			positional = append(positional, rest...)
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	// Re-parse an empty list so fs.Args() holds the positional arguments.
	_ = fs.Parse(append([]string{"--"}, positional...))
	return 0, false
}

// exitError is a command's failure with its exit code: 2 for a command
// line that is wrong, 1 for work that failed.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageError is the failure of a wrong command line (exit code 2).
func usageError(format string, a ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, a...)}
}

// fail prints err as command name's failure ("vtcode-ls NAME: err") and
// returns its exit code: an [*exitError]'s, else 1.
func fail(stderr io.Writer, name string, err error) int {
	fmt.Fprintf(stderr, "vtcode-ls %s: %v\n", name, err)
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

// openLogger returns the logger of a command: text records to the file
// path names (appended, created owner-only), else to stderr; done ends
// the file.
func openLogger(path string, stderr io.Writer) (logger *slog.Logger, done func(), err error) {
	out, done := stderr, func() {}
	if path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, nil, err
		}
		out, done = f, func() { f.Close() }
	}
	return slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelInfo})), done, nil
}

// parseNoArgs is parseFlags for a command that takes no arguments: one is
// an error ("vtcode-ls NAME: unexpected argument", exit code 2).
func parseNoArgs(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (code int, done bool) {
	if code, done := parseFlags(fs, args, stdout); done {
		return code, true
	}
	if fs.NArg() > 0 {
		return fail(stderr, fs.Name(), usageError("unexpected argument %q", fs.Arg(0))), true
	}
	return 0, false
}

// newFlags is the flag set of command name: its errors go to stderr, and
// its help is usage followed by the flags.
func newFlags(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	return fs
}
