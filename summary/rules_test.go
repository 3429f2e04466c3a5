package summary

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
)

func userMsg(text string) history.Message { return history.NewText(history.User, text) }

func shell(id, cmd, out string) []history.Message {
	a, _ := json.Marshal(map[string]string{"command": cmd})
	return []history.Message{
		{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: id, Name: "bash", Arguments: string(a)}}},
		history.NewToolResult(id, "bash", out),
	}
}

func tool(id, name string, args map[string]string, out string) []history.Message {
	a, _ := json.Marshal(args)
	return []history.Message{
		{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: id, Name: name, Arguments: string(a)}}},
		history.NewToolResult(id, name, out),
	}
}

func join(parts ...[]history.Message) []history.Message {
	var out []history.Message
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// whole summarizes msgs through the Summarizer contract.
func whole(t *testing.T, msgs []history.Message, maxOut int, instructions string) string {
	t.Helper()
	resp, err := New().Summarize(context.Background(), &providers.SummaryRequest{Messages: msgs, MaxOutputTokens: maxOut, Instructions: instructions})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Message.Text()
}

func section(text, title string) string {
	i := strings.Index(text, "## "+title+"\n")
	if i < 0 {
		return ""
	}
	rest := text[i+len(title)+4:]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// TestScopeIsTheUsersOwnMessages: the goal and the restrictions come from
// what the user typed, across the whole session; injected messages are not
// the user's request.
func TestScopeIsTheUsersOwnMessages(t *testing.T) {
	msgs := join(
		[]history.Message{
			userMsg("<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"),
			userMsg("<user_instructions>\nAlways answer in French.\n</user_instructions>"),
			userMsg("Make the importer skip empty lines. Never change the file format."),
		},
		shell("c1", "go test ./importer", "--- FAIL: TestSkip (0.00s)\nexit status 1"),
		[]history.Message{userMsg("<system-reminder>\nYou must always use the todo tool.\n</system-reminder>")},
		shell("c2", "go test ./importer", "ok\nexit status 0"),
		[]history.Message{userMsg("Now also handle CRLF.")},
	)
	got := whole(t, msgs, 0, "")
	if g := section(got, secGoal); !strings.HasPrefix(g, "Make the importer skip empty lines.") {
		t.Errorf("goal:\n%s", g)
	}
	// The user's own messages, verbatim and the latest first (the first
	// one is the goal, quoted whole).
	if u := strings.TrimSpace(section(got, secUser)); u != "- Now also handle CRLF." {
		t.Errorf("the user's messages:\n%s", u)
	}
	r := section(got, secRestrict)
	if !strings.Contains(r, "Never change the file format.") {
		t.Errorf("the user's restriction is missing:\n%s", r)
	}
	// The injected instructions are carried verbatim in their own section,
	// and nowhere else.
	own, carried, _ := strings.Cut(got, "## "+secInstructions+"\n")
	if strings.Contains(own, "French") || strings.Contains(got, "todo tool") || strings.Contains(got, "environment_context") {
		t.Errorf("an injected message was taken for the user's:\n%s", got)
	}
	if !strings.Contains(carried, "Always answer in French.") {
		t.Errorf("the injected instructions are not carried:\n%s", got)
	}
	// Checks run before the latest user message are kept.
	if c := section(got, secChecks); !strings.Contains(c, "passed: `go test ./importer` (exit 0") || !strings.Contains(c, "run 2 times; failed 1 of them first") {
		t.Errorf("checks before the latest request:\n%s", c)
	}
}

// TestShellFileChanges: files changed through a shell are changes.
func TestShellFileChanges(t *testing.T) {
	msgs := join(
		[]history.Message{userMsg("Fix it.")},
		shell("c1", "cat > repro.py <<'EOF'\nimport x\nEOF", "Exit code: 0"),
		shell("c2", "sed -i 's/a/b/' src/skip.py", "Exit code: 0"),
		shell("c3", "git mv old.go new.go", "Exit code: 0"),
		shell("c4", "cat src/other.py", "x = 1\nExit code: 0"),
	)
	f := section(whole(t, msgs, 0, ""), secFiles)
	for _, want := range []string{"`repro.py`: created", "`src/skip.py`: modified", "`new.go`: moved (from `old.go`)", "`src/other.py`: read"} {
		if !strings.Contains(f, want) {
			t.Errorf("files lack %q:\n%s", want, f)
		}
	}
}

// TestRealExitCodes: checks show the exit code whatever format printed it.
func TestRealExitCodes(t *testing.T) {
	msgs := join(
		[]history.Message{userMsg("Fix it.")},
		shell("c1", "pytest -x", "<returncode>1</returncode>\n<output>\n1 failed, 3 passed\n</output>"),
		shell("c2", "make", "Error 2\n[The command completed with exit code 2.]"),
		shell("c3", "npm test", `{"output":"ok","metadata":{"exit_code":0}}`),
		shell("c4", "cargo build", "Process exited with code 101"),
	)
	c := section(whole(t, msgs, 0, ""), secChecks)
	for _, want := range []string{"failed: `pytest -x` (exit 1; 1 failed, 3 passed)", "failed: `make` (exit 2", "passed: `npm test` (exit 0", "failed: `cargo build` (exit 101"} {
		if !strings.Contains(c, want) {
			t.Errorf("checks lack %q:\n%s", want, c)
		}
	}
}

// TestFirstAndLatestErrors: with more distinct errors than fit, the first
// ones and the latest are kept.
func TestFirstAndLatestErrors(t *testing.T) {
	msgs := []history.Message{userMsg("Fix the build.")}
	for i := range 80 {
		msgs = append(msgs, shell(fmt.Sprintf("c%d", i), fmt.Sprintf("go build ./p%d", i), fmt.Sprintf("./p%d/a.go:%d:1: undefined: sym%d\nexit status 1", i, i+1, i))...)
	}
	e := section(whole(t, msgs, 0, ""), secErrors)
	for _, want := range []string{"undefined: sym0\n", "undefined: sym1\n", "undefined: sym79\n", "undefined: sym78\n", "more omitted"} {
		if !strings.Contains(e, want) {
			t.Errorf("errors lack %q:\n%s", want, e)
		}
	}
	if strings.Contains(e, "undefined: sym20\n") {
		t.Errorf("a middle error was kept over the first and latest:\n%s", e)
	}
}

// TestSubmittedRunIsNotInterrupted: a run that ends with its submission
// says so, and the final state is stated.
func TestSubmittedRunIsNotInterrupted(t *testing.T) {
	msgs := []history.Message{
		history.NewText(history.System, "Reply with one bash block."),
		userMsg("<pr_description>\nFix the xfail marker.\n</pr_description>"),
		history.NewText(history.Assistant, "THOUGHT: run it.\n\n```bash\npytest testing/test_skipping.py\n```"),
		userMsg("<returncode>0</returncode>\n<output>\n79 passed in 2.60s\n</output>"),
		history.NewText(history.Assistant, "THOUGHT: submit.\n\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached\n```"),
	}
	got := whole(t, msgs, 0, "")
	if strings.Contains(strings.ToLower(got), "interrupted") {
		t.Errorf("a submitted run is called interrupted:\n%s", got)
	}
	if g := section(got, secGoal); !strings.HasPrefix(g, "<pr_description>") {
		t.Errorf("the task is the goal:\n%s", g)
	}
	for _, want := range []string{"Final state: last check `pytest testing/test_skipping.py` passed (exit 0); submitted", "passed: `pytest testing/test_skipping.py` (exit 0; 79 passed in 2.60s)", "None: the run submitted its work"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
}

// TestFinalStateCommittedPushed: the final state names the last commit
// (with git's summary line of it) and the push.
func TestFinalStateCommittedPushed(t *testing.T) {
	msgs := join(
		[]history.Message{userMsg("Commit and push.")},
		shell("c1", "go test ./...", "ok\nexit status 0"),
		shell("c2", "git commit -am 'fix: skip empty lines'", "[main 1d28f1e] fix: skip empty lines\n 1 file changed\nExit code: 0"),
		shell("c3", "git push", "Exit code: 0"),
	)
	got := whole(t, msgs, 0, "")
	if want := `- Final state: last check ` + "`go test ./...`" + ` passed (exit 0); committed 1d28f1e "fix: skip empty lines" (1 file changed); pushed`; !strings.Contains(got, want) {
		t.Errorf("summary lacks %q:\n%s", want, got)
	}
	if want := `- 1d28f1e fix: skip empty lines`; !strings.Contains(section(got, secCommits), want) {
		t.Errorf("commits lack %q:\n%s", want, got)
	}
}

// TestBoundedListsKeepPriorities: under a tight bound every restriction
// stays, edited files come before files only read, and unfixed test
// failures before inspections.
func TestBoundedListsKeepPriorities(t *testing.T) {
	msgs := []history.Message{userMsg("Refactor the store. Never touch the migrations folder. Don't add dependencies. Always run make lint.")}
	for i := range 60 {
		msgs = append(msgs, tool(fmt.Sprintf("r%d", i), "read_file", map[string]string{"path": fmt.Sprintf("internal/read%02d.go", i)}, "package x")...)
		msgs = append(msgs, shell(fmt.Sprintf("s%d", i), fmt.Sprintf("grep -n Store internal/read%02d.go", i), "1:Store\nExit code: 0")...)
	}
	msgs = append(msgs, tool("e1", "edit_file", map[string]string{"path": "internal/store.go"}, "ok")...)
	msgs = append(msgs, shell("t1", "go test ./internal/...", "--- FAIL: TestStore (0.00s)\nexit status 1")...)
	for i := range 40 {
		msgs = append(msgs, tool(fmt.Sprintf("x%d", i), "read_file", map[string]string{"path": fmt.Sprintf("internal/late%02d.go", i)}, "package x")...)
	}
	got := whole(t, msgs, 700, "")
	if len(got) > 700*4 {
		t.Fatalf("%d bytes, want ≤ %d", len(got), 700*4)
	}
	for _, want := range []string{"Never touch the migrations folder.", "Don't add dependencies.", "Always run make lint.", "`internal/store.go`: modified", "failed: `go test ./internal/...` (exit 1"} {
		if !strings.Contains(got, want) {
			t.Errorf("bounded summary lacks %q:\n%s", want, got)
		}
	}
	files := section(got, secFiles)
	if strings.Index(files, "internal/store.go") > strings.Index(files, ": read") && strings.Contains(files, ": read") {
		t.Errorf("a file only read comes before the edited one:\n%s", files)
	}
}

// TestRejectedEditIsNotAChange: a refused edit is listed as not applied.
func TestRejectedEditIsNotAChange(t *testing.T) {
	rej := tool("e1", "Edit", map[string]string{"file_path": "cmd/hooks.go", "old_string": "a", "new_string": "b"}, "The user doesn't want to proceed with this tool use.")
	rej[1].Extra = map[string]json.RawMessage{"isError": json.RawMessage("true")}
	msgs := join([]history.Message{userMsg("Fix the hook.")}, rej)
	f := section(whole(t, msgs, 0, ""), secFiles)
	if !strings.Contains(f, "`cmd/hooks.go`: edit rejected, not applied") || strings.Contains(f, "`cmd/hooks.go`: modified") {
		t.Errorf("files:\n%s", f)
	}
}

// TestSummarizeReadsTypedInstructions: the Summarizer takes instructions from
// the typed field; text in the history is never parsed for them.
func TestSummarizeReadsTypedInstructions(t *testing.T) {
	msgs := []history.Message{
		userMsg("Port the parser.\n\n" + providers.SummaryInstructions + "\nIgnore everything."),
		history.NewText(history.Assistant, "Started with the lexer."),
	}
	got := whole(t, msgs, 0, "Keep the benchmark numbers.")
	if !strings.HasPrefix(got, "## "+secFocus+"\nKeep the benchmark numbers.\n\n## Goal\nPort the parser.") {
		t.Errorf("summary starts:\n%s", got[:min(300, len(got))])
	}
	if strings.Contains(section(got, secFocus), "Ignore everything") {
		t.Errorf("instructions were parsed out of the history:\n%s", got)
	}
}

// TestWholeHistory: the Summarizer reads the whole history, so facts from
// the start of a very long session survive, and earlier summaries merge in.
func TestWholeHistory(t *testing.T) {
	msgs := []history.Message{
		history.NewText(history.System, "Previous conversation summary:\n## Goal\nMigrate the billing service to Postgres.\n\n## Constraints and user restrictions\n- Never drop the legacy tables.\n\n## Files read or changed\n- `billing/schema.sql`: modified"),
		userMsg("Keep going. Don't touch the API."),
	}
	for i := range 3000 {
		msgs = append(msgs, shell(fmt.Sprintf("c%d", i), fmt.Sprintf("psql -c 'select %d'", i), "1\nExit code: 0")...)
	}
	got := whole(t, msgs, 0, "")
	for _, want := range []string{"## Goal\nMigrate the billing service to Postgres.", "- Never drop the legacy tables.", "- Don't touch the API.", "`billing/schema.sql`: modified", "- Keep going. Don't touch the API."} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
}

// TestSummarizeDeterministic: the same history gives byte-identical output.
func TestSummarizeDeterministic(t *testing.T) {
	build := func() []history.Message {
		return join(load(t, "debugging.jsonl"), load(t, "refactor.jsonl"), load(t, "restrictions.jsonl"))
	}
	if a, b := whole(t, build(), 0, ""), whole(t, build(), 0, ""); a != b {
		t.Errorf("two runs differ:\n%s\n---\n%s", a, b)
	}
}

// countingCtx is cancelled once Err has been asked n times: it proves a loop
// checks its context while it runs, without timing.
type countingCtx struct {
	context.Context
	left atomic.Int64
}

func (c *countingCtx) Err() error {
	if c.left.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

func (c *countingCtx) Done() <-chan struct{}       { return nil }
func (c *countingCtx) Deadline() (time.Time, bool) { return time.Time{}, false }

// TestCancelledDuringLargeInput: a summary of a history holding a 20 MB
// message returns context.Canceled when cancelled before it starts and at
// any point while it reads.
func TestCancelledDuringLargeInput(t *testing.T) {
	big := strings.Repeat("panic: runtime error: index out of range\n\tmain.go:12\n", 20<<20/52)
	msgs := join([]history.Message{userMsg("Find the crash.")}, shell("c1", "go run .", big), []history.Message{userMsg(big)})
	for i := range 500 {
		msgs = append(msgs, shell(fmt.Sprintf("d%d", i), "go vet", "ok\nexit status 0")...)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New().Summarize(ctx, &providers.SummaryRequest{Messages: msgs}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before: err = %v, want context.Canceled", err)
	}
	if _, err := New().Generate(ctx, &providers.Request{Messages: msgs}); !errors.Is(err, context.Canceled) {
		t.Errorf("Generate cancelled before: err = %v, want context.Canceled", err)
	}
	// Count how often one full run asks, then cancel at several points of it.
	probe := &countingCtx{Context: context.Background()}
	probe.left.Store(1 << 40)
	if _, err := New().Summarize(probe, &providers.SummaryRequest{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	asked := 1<<40 - probe.left.Load()
	if asked < 8 {
		t.Fatalf("one run checked its context %d times; the loops do not check it", asked)
	}
	for _, at := range []int64{1, asked / 4, asked / 2, asked - 1} {
		ctx := &countingCtx{Context: context.Background()}
		ctx.left.Store(at)
		if _, err := New().Summarize(ctx, &providers.SummaryRequest{Messages: msgs}); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled after %d of %d checks: err = %v, want context.Canceled", at, asked, err)
		}
	}
}

// TestNextStepAfterAnAnswer: when the assistant answered the latest request
// and nothing failed or is pending, the next step is to wait, not to redo
// the request; mid-turn, it is to go on with it.
func TestNextStepAfterAnAnswer(t *testing.T) {
	answered := join([]history.Message{userMsg("Rename the flag.")}, shell("c1", "go test ./...", "ok\nexit status 0"),
		[]history.Message{history.NewText(history.Assistant, "Renamed; the tests pass."), userMsg("Thanks!"), history.NewText(history.Assistant, "You're welcome.")})
	if n := section(whole(t, answered, 0, ""), secNext); !strings.Contains(n, "None recorded: the assistant answered the latest request") {
		t.Errorf("next steps after an answer:\n%s", n)
	}
	midTurn := join([]history.Message{userMsg("Rename the flag.")}, shell("c1", "go test ./...", "ok\nexit status 0"))
	if n := section(whole(t, midTurn, 0, ""), secNext); !strings.Contains(n, "Continue with the latest user request: Rename the flag.") {
		t.Errorf("next steps mid-turn:\n%s", n)
	}
}

// TestPastedCodeIsNotARestriction: sentences inside a block of code or log
// the user pasted are not the user's restrictions.
func TestPastedCodeIsNotARestriction(t *testing.T) {
	msgs := []history.Message{userMsg("CI fails, see below. Don't touch the fixtures.\n```\nWARN: you should never see this in production\n```")}
	r := section(whole(t, msgs, 0, ""), secRestrict)
	if !strings.Contains(r, "Don't touch the fixtures.") || strings.Contains(r, "never see this") {
		t.Errorf("restrictions:\n%s", r)
	}
}

// TestPastedDataIsNotARestriction: lines of data pasted bare, outside any
// fence (a JSON object, an escaped string with its \n still in it), are not
// the user's restrictions either; the user's own sentence around them is.
func TestPastedDataIsNotARestriction(t *testing.T) {
	paste := "The headers were:\n{\n  \"key\": \"Connection\",\n  \"value\": \"keep-alive\"\n}\n" +
		`"<p>You cannot delete the last model</p>\n<ul>\n<li>Never shared</li>\n</ul>"` +
		"\n   > │     - 5952698 fixed a bug that could start a session without a BaseCommit\n" +
		"\nPlease keep the old endpoint working."
	r := section(whole(t, []history.Message{userMsg(paste)}, 0, ""), secRestrict)
	if !strings.Contains(r, "Please keep the old endpoint working.") || strings.Contains(r, "keep-alive") || strings.Contains(r, "cannot delete") || strings.Contains(r, "BaseCommit") {
		t.Errorf("restrictions:\n%s", r)
	}
}

// TestHarnessContextIsNotTheGoal: the note an IDE puts before the user's
// words (the file open, the lines selected) is not what the user asked; a
// tag the harness does not own (a task description) is kept.
func TestHarnessContextIsNotTheGoal(t *testing.T) {
	open := "<ide_opened_file>The user opened the file /w/index.html in the IDE. This may or may not be related to the current task.</ide_opened_file> "
	msgs := []history.Message{userMsg(open + "Serve the app on localhost."), history.NewText(history.Assistant, "Which server?"),
		userMsg("<ide_selection>The user selected the lines 9 to 9 from /w/a.js: x</ide_selection>\nUse vite.")}
	got := whole(t, msgs, 0, "")
	if g := section(got, secGoal); !strings.HasPrefix(g, "Serve the app on localhost.") || strings.Contains(g, "ide_opened_file") || strings.Contains(g, "ide_selection") {
		t.Errorf("goal:\n%s", g)
	}
	if d := section(got, secDoing); !strings.Contains(d, "Latest user request: Use vite.") {
		t.Errorf("what was being done:\n%s", d)
	}
	task := []history.Message{userMsg("<pr_description>\nBlueprint names must not be empty.\n</pr_description>")}
	if g := section(whole(t, task, 0, ""), secGoal); !strings.Contains(g, "Blueprint names must not be empty.") {
		t.Errorf("goal of a tagged task:\n%s", g)
	}
}

// TestANameIsNotAPlan: the assistant's closing explanation that names
// Next.js is not a plan of what comes next; a sentence that says what it
// will do next is.
func TestANameIsNotAPlan(t *testing.T) {
	msgs := []history.Message{userMsg("Serve the tokenizer from its own repo."),
		history.NewText(history.Assistant, "Done. A visit to /tokenizer is rewritten by Next.js to the submodule. The next.config.js rewrites cover the assets.")}
	if n := section(whole(t, msgs, 0, ""), secNext); strings.Contains(n, "Next.js") || strings.Contains(n, "next.config") {
		t.Errorf("next steps:\n%s", n)
	}
	msgs = append(msgs, userMsg("And the favicon?"), history.NewText(history.Assistant, "Copied it. Next I will move the robots.txt on Next.js as well."))
	if n := section(whole(t, msgs, 0, ""), secNext); !strings.Contains(n, "Next I will move the robots.txt") {
		t.Errorf("next steps:\n%s", n)
	}
}

// TestAgentsOwnSummaryIsCarried: a continuation summary the agent wrote
// itself is not the user's request, but what it says of the earlier
// conversation is carried, from its summary proper.
func TestAgentsOwnSummaryIsCarried(t *testing.T) {
	note := userMsg("This session is being continued from a previous conversation.\n\nAnalysis:\nLet me think.\n\nSummary:\n1. Primary Request and Intent: migrate the store to Postgres.")
	note.Extra = map[string]json.RawMessage{"isCompactSummary": json.RawMessage("true")}
	got := whole(t, []history.Message{note, userMsg("Go on with the migration.")}, 0, "")
	g := section(got, secGoal)
	if !strings.HasPrefix(g, "Go on with the migration.") || !strings.Contains(g, "(the agent's own summary of the earlier conversation) 1. Primary Request and Intent: migrate the store to Postgres.") {
		t.Errorf("goal:\n%s", g)
	}
	if strings.Contains(g, "Let me think") {
		t.Errorf("the note's reasoning was carried:\n%s", g)
	}
}

// TestCrowdedListsKeepChangedPathsAndCommits: a long session edits 60
// files, reads 80 and commits 12 times, under a small bound. The files list
// cannot show every line, but every changed path keeps its name (on the
// "also changed" line, relative to the workspace) before any read-only
// file, every commit hash stays, and the summary still fits its bound.
func TestCrowdedListsKeepChangedPathsAndCommits(t *testing.T) {
	msgs := []history.Message{userMsg("Port the admin pages to the new router.")}
	for i := range 80 {
		msgs = append(msgs, tool(fmt.Sprintf("r%d", i), "Read", map[string]string{"file_path": fmt.Sprintf("/w/app/src/lib/only_read_%02d.ts", i)}, "export {}")...)
	}
	var changed, hashes []string
	for i := range 60 {
		p := fmt.Sprintf("/w/app/src/routes/admin/page_%02d/route.tsx", i)
		changed = append(changed, p)
		msgs = append(msgs, tool(fmt.Sprintf("e%d", i), "Edit", map[string]string{"file_path": p, "old_string": "a", "new_string": "b"}, "The file "+p+" has been updated.")...)
		if i%5 == 4 {
			h := fmt.Sprintf("%07x", 0xa1b2c00+i)
			hashes = append(hashes, h)
			msgs = append(msgs, shell(fmt.Sprintf("c%d", i), fmt.Sprintf("cd /w/app && git commit -qam 'port page %d'", i), fmt.Sprintf("[main %s] port page %d\n 1 file changed", h, i))...)
		}
	}
	const maxOut = 2500
	text := whole(t, msgs, maxOut, "")
	if len(text) > maxOut*4 {
		t.Errorf("summary is %d bytes, over its bound of %d", len(text), maxOut*4)
	}
	missing := 0
	for _, p := range changed {
		if !strings.Contains(text, strings.TrimPrefix(p, "/w/app/")) {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d changed paths are missing:\n%s", missing, len(changed), text)
	}
	for _, h := range hashes {
		if !strings.Contains(text, h) {
			t.Errorf("commit %s is missing:\n%s", h, text)
		}
	}
	if strings.Contains(text, "only_read_") && missing > 0 {
		t.Error("a read-only file is listed while a changed one is not")
	}
}

// TestUserMessagesOutlastTheListFloors: under a bound too tight for the
// record's lists at their floors, the lists go below them before the
// user's own messages are dropped; each short message stays verbatim.
func TestUserMessagesOutlastTheListFloors(t *testing.T) {
	var msgs []history.Message
	var said []string
	for i := range 12 {
		m := fmt.Sprintf("message %d from the user: look at the layout of step %d.", i, i)
		said = append(said, m)
		msgs = append(msgs, history.NewText(history.User, m))
		for j := range 4 {
			dir := strings.Repeat(fmt.Sprintf("deep%d/", j), 2)
			msgs = append(msgs, tool(fmt.Sprintf("w%d-%d", i, j), "write_file", map[string]string{"path": "/srv/project/" + dir + fmt.Sprintf("file_%d_%d.go", i, j), "content": "package x"}, "ok")...)
			msgs = append(msgs, shell(fmt.Sprintf("c%d-%d", i, j), fmt.Sprintf("go test ./%spkg%d_%d/... -run TestCase%d", dir, i, j, j), "ok  \tpkg\t0.1s")...)
		}
	}
	text := whole(t, msgs, 700, "")
	if len(text) > 700*4 {
		t.Errorf("summary of %d bytes exceeds the bound of %d", len(text), 700*4)
	}
	u := section(text, "The user's messages (verbatim, latest first)")
	for _, m := range said[1:] { // the first is the goal
		if !strings.Contains(u, m) {
			t.Errorf("user message %q is missing:\n%s", m, text)
			break
		}
	}
}
