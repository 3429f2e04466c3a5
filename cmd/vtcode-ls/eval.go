package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/vtcode/vtcode-ls/corpus"
	"github.com/vtcode/vtcode-ls/evidence/ledger"
)

func evalMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the ledger as JSON (summaries included)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: vtcode-ls eval [DIR] [--json]

Runs the fact ledger: compacts each session listed in DIR/facts.json at a
%d-token window through the real path (transcript import, then offline
compaction) and the built-in long-turn scenario, and prints, per session and
in total, the facts kept in the summary and in the whole compacted history,
and the claims of the summary that the record contradicts. DIR defaults to
$VTCODE_TRANSCRIPTS, else shared/transcripts beside the module root (or one
of its parents) when it holds other sessions, else the sessions committed in
corpus/testdata. Exits 1 when the totals miss the targets (history >= 95 %%,
summary >= 85 %%, no contradictions).

Flags:
`, ledger.Window)
		fs.PrintDefaults()
	}
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	if fs.NArg() > 1 {
		fmt.Fprintln(stderr, "vtcode-ls eval: want at most one DIR (see --help)")
		return 2
	}
	dir := fs.Arg(0)
	if dir == "" {
		var err error
		if dir, err = corpus.Dir(); err != nil {
			fmt.Fprintf(stderr, "vtcode-ls eval: %v\n", err)
			return 1
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := ledger.Run(ctx, dir)
	if err != nil {
		fmt.Fprintf(stderr, "vtcode-ls eval: %v\n", err)
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		err = enc.Encode(rep)
	} else {
		err = ledger.Write(stdout, rep)
	}
	if err != nil {
		fmt.Fprintf(stderr, "vtcode-ls eval: %v\n", err)
		return 1
	}
	if !rep.Pass() {
		return 1
	}
	return 0
}
