package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/vtcode/vtcode-ls/corpus"
	"github.com/vtcode/vtcode-ls/ledger"
)

// evalUsage is the help of vtcode-ls eval, before its flags.
var evalUsage = fmt.Sprintf(`Usage: vtcode-ls eval [DIR] [--json] [--facts FILE]...

Runs the fact ledger: compacts each session listed in DIR/facts.json at a
%d-token window through the real path (transcript import, then offline
compaction) and the built-in long-turn scenario, and prints, per session and
in total, the facts kept in the summary and in the whole compacted history,
the work-in-progress facts kept in the summary, and the claims of the
summary that the record contradicts. A second table, "vs the agent's own
summary", lists every session whose record holds the agent's own compaction
(Claude Code's compact summary, a Codex compacted item, Copilot CLI's and
opencode's summaries): the messages before the first one are compacted
offline the same way, and both summaries are scored on the session's facts
that occur in that prefix, with their sizes in tokens; it does not count
toward the exit code. A facts.json entry is a list of facts
or {"facts": [...], "wip": [...]}, every string as the record holds it;
--facts adds another file's facts to DIR's sessions. DIR defaults to
$VTCODE_TRANSCRIPTS, else shared/transcripts beside the module root (or one
of its parents) when it holds other sessions, else the sessions committed in
corpus/testdata. Exits 1 when the totals miss the targets (history >= 95 %%,
summary >= 85 %%, no contradictions, work in progress >= 85 %%).

Flags:
`, ledger.Window)

func evalMain(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("eval", evalUsage, stderr)
	asJSON := fs.Bool("json", false, "print the ledger as JSON (summaries included; versusAgent is the second table)")
	var more factsFiles
	fs.Var(&more, "facts", "a further facts file whose facts are added to DIR's sessions (repeatable)")
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
			return fail(stderr, "eval", err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := ledger.Run(ctx, dir, more...)
	if err != nil {
		return fail(stderr, "eval", err)
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
		return fail(stderr, "eval", err)
	}
	if !rep.Pass() {
		return 1
	}
	return 0
}

// factsFiles is the repeatable --facts flag.
type factsFiles []string

func (f *factsFiles) String() string { return strings.Join(*f, ",") }

func (f *factsFiles) Set(v string) error {
	*f = append(*f, v)
	return nil
}
