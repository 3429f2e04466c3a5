package summary_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/summary"
)

func summaryOf(t *testing.T, msgs []history.Message, maxOut int) string {
	t.Helper()
	resp, err := summary.New().Summarize(context.Background(), &providers.SummaryRequest{Messages: msgs, MaxOutputTokens: maxOut})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Message.Text()
}

// TestTightBoundKeepsTheWork: under a small output bound, long prose (the
// latest request and reply) is shortened before the files changed and the
// latest commit are dropped.
func TestTightBoundKeepsTheWork(t *testing.T) {
	long := strings.Repeat("This explains at length what the change does and why it is needed. ", 30)
	var msgs []history.Message
	for i := range 6 {
		msgs = append(msgs, history.NewText(history.User, fmt.Sprintf("Request %d: %s", i, long)))
		msgs = append(msgs, step(fmt.Sprintf("e%d", i), "Edit", map[string]string{"file_path": fmt.Sprintf("pkg/file%d.go", i), "old_string": "a", "new_string": "b"}, "ok", false)...)
		msgs = append(msgs, history.NewText(history.Assistant, long))
	}
	text := summaryOf(t, msgs, 256)
	if len(text) > 256*4 {
		t.Fatalf("summary of %d bytes over the bound", len(text))
	}
	for _, want := range []string{"## Files read or changed", "pkg/file5.go", "## Next steps"} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q under a tight bound:\n%s", want, text)
		}
	}
}

// TestMostEditedFileFirst: when the files list is cut, the file edited most
// is kept before files edited once, and the latest commit before earlier ones.
func TestMostEditedFileFirst(t *testing.T) {
	msgs := []history.Message{history.NewText(history.User, "Build the app.")}
	for i := range 60 {
		msgs = append(msgs, step(fmt.Sprintf("o%d", i), "Write", map[string]string{"file_path": fmt.Sprintf("src/once%02d.ts", i), "content": "x"}, "ok", false)...)
	}
	for i := range 5 {
		msgs = append(msgs, step(fmt.Sprintf("m%d", i), "Edit", map[string]string{"file_path": "src/main.ts", "old_string": fmt.Sprint(i), "new_string": "y"}, "ok", false)...)
	}
	text := summaryOf(t, msgs, 300)
	if !strings.Contains(text, "`src/main.ts`: modified, 5 edits") {
		t.Errorf("the most edited file is not kept:\n%s", text)
	}
}

// TestRestrictionSentences: a line that introduces a list ("It should
// have:") is not a restriction, and "e.g." does not end a sentence.
func TestRestrictionSentences(t *testing.T) {
	msgs := []history.Message{
		history.NewText(history.User, "Set up the project. It should have a:\n- src/ folder\nNever touch the config files (e.g. setup.cfg, tox.ini) in this task."),
		history.NewText(history.Assistant, "Done."),
	}
	text := summaryOf(t, msgs, 0)
	if strings.Contains(text, "- It should have a:") {
		t.Errorf("a list introduction is listed as a restriction:\n%s", text)
	}
	if !strings.Contains(text, "- Never touch the config files (e.g. setup.cfg, tox.ini) in this task.") {
		t.Errorf("the restriction is split at an abbreviation:\n%s", text)
	}
}

// TestRestrictionsWrittenAsRules: an item of the user's list is one
// restriction, whole (its two sentences stay together); the items under a
// heading that names rules outrank the many "should"s of the task's prose
// when the list is cut; and "no need for X" waives something, a restriction.
func TestRestrictionsWrittenAsRules(t *testing.T) {
	var task strings.Builder
	task.WriteString("# Task: design the sync workflow\n\n## What to produce\n")
	for i := range 40 {
		fmt.Fprintf(&task, "- The design should cover edge case %d of the sync.\n", i)
	}
	task.WriteString("\n## Constraints / conventions\n- Use bun for scripts.\n- NO force push anywhere in the design. Never rewrite shared history.\n")
	msgs := []history.Message{
		history.NewText(history.User, task.String()),
		history.NewText(history.Assistant, "Writing the design."),
		history.NewText(history.User, "the two modules are new, so no need for backward compatibility"),
		history.NewText(history.Assistant, "Understood."),
	}
	text := summaryOf(t, msgs, 600)
	r := text[strings.Index(text, "## Constraints"):]
	r = r[:strings.Index(r[3:], "\n## ")+3]
	for _, want := range []string{"- NO force push anywhere in the design. Never rewrite shared history.", "no need for backward compatibility"} {
		if !strings.Contains(r, want) {
			t.Errorf("restriction %q is missing:\n%s", want, r)
		}
	}
}

// TestPassedInspectionsOnOneLine: read-only commands that passed are counted
// on one line; a failed one, and one whose short output is a finding, stay
// listed; a test run stays listed.
func TestPassedInspectionsOnOneLine(t *testing.T) {
	msgs := []history.Message{history.NewText(history.User, "Fix the parser.")}
	long := strings.Repeat("line of a listing\n", 20)
	add := func(id, cmd, out string, isErr bool) {
		msgs = append(msgs, step(id, "Bash", map[string]string{"command": cmd}, out, isErr)...)
	}
	add("c1", "ls -la", long, false)
	add("c2", "grep -rn parse src | head -20", long, false)
	add("c3", "nl -ba src/parse.go | sed -n '1,40p'", long, false)
	add("c4", "ls docs", "ls: cannot access 'docs': No such file or directory\nExit code 2", true)
	add("c5", "grep -n MAX_DEPTH src/limits.go", "12:const MAX_DEPTH = 64", false)
	add("c6", "go test ./src/...", "ok  \tex/src\t0.1s", false)
	text := summaryOf(t, msgs, 0)
	for _, want := range []string{
		"also ran 3 read-only inspections that passed: ls, grep, nl",
		"failed: `ls docs`",
		"MAX_DEPTH = 64",
		"passed: `go test ./src/...`",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "passed: `ls -la`") || strings.Contains(text, "passed: `grep -rn parse src") {
		t.Errorf("a passed inspection is listed as a check:\n%s", text)
	}
}

// TestWritesAreNotInspections: a redirection, sed -i or a heredoc makes a
// read-only tool a change, which stays listed.
func TestWritesAreNotInspections(t *testing.T) {
	msgs := []history.Message{history.NewText(history.User, "Fix it.")}
	msgs = append(msgs, step("c1", "Bash", map[string]string{"command": "sed -i 's/a/b/' src/x.go && grep -n b src/x.go | wc -l"}, strings.Repeat("x\n", 10), false)...)
	text := summaryOf(t, msgs, 0)
	if strings.Contains(text, "read-only inspection") {
		t.Errorf("sed -i counted as an inspection:\n%s", text)
	}
}

// TestPerTestLinesAreOneEntry: a runner's per-test lines of one file are one
// entry with a count, so the exception that explains the failure stays.
func TestPerTestLinesAreOneEntry(t *testing.T) {
	var out strings.Builder
	out.WriteString("ValueError: bad header in conftest\n")
	for i := range 40 {
		fmt.Fprintf(&out, "ERROR tests/test_api.py::test_case_%02d\n", i)
	}
	out.WriteString("=== 3 passed, 40 errors in 0.5s ===\nExit code 1")
	msgs := []history.Message{history.NewText(history.User, "Run the tests.")}
	msgs = append(msgs, step("c1", "Bash", map[string]string{"command": "pytest tests"}, out.String(), true)...)
	text := summaryOf(t, msgs, 0)
	if !strings.Contains(text, "ERROR tests/test_api.py::test_case_00 (and 39 more ERROR lines of the same test file)") {
		t.Errorf("per-test lines are not grouped:\n%s", text)
	}
	if strings.Contains(text, "test_case_01") || strings.Contains(text, "more omitted") && strings.Contains(text[strings.Index(text, "## Errors"):], "more omitted") {
		t.Errorf("per-test lines crowd the errors:\n%s", text)
	}
	if !strings.Contains(text, "ValueError: bad header in conftest") {
		t.Errorf("the explaining error is lost:\n%s", text)
	}
}

// TestPipedFailureNotFlagged: a run whose exit status a pipe hid and whose
// output reports a failure is listed as failed, not as flagged by the
// harness, and not as passed.
func TestPipedFailureNotFlagged(t *testing.T) {
	msgs := []history.Message{history.NewText(history.User, "Lint it.")}
	msgs = append(msgs, step("c1", "Bash", map[string]string{"command": "make lint 2>&1 | tail -20"}, "x.go:3:1: unused var (unused)\n1 issues:\n* unused: 1\n[lint] ERROR task failed", false)...)
	text := summaryOf(t, msgs, 0)
	if !strings.Contains(text, "failed: `make lint 2>&1 | tail -20` (no exit code; its output reports a failure") {
		t.Errorf("the hidden failure is misreported:\n%s", text)
	}
}

// TestOutputChangeOfARepeatedRun: a reproduction run before and after a fix
// keeps what it printed each time, the evidence that the fix worked.
func TestOutputChangeOfARepeatedRun(t *testing.T) {
	msgs := []history.Message{history.NewText(history.User, "Fix parse() for negative input.")}
	msgs = append(msgs, step("c1", "bash", map[string]string{"command": "python3 repro.py"}, "'1' -> 1\n'-1' -> None\nExit code 0", false)...)
	msgs = append(msgs, step("c2", "Edit", map[string]string{"file_path": "parse.py", "old_string": "a", "new_string": "b"}, "ok", false)...)
	msgs = append(msgs, step("c3", "bash", map[string]string{"command": "python3 repro.py"}, "'1' -> 1\n'-1' -> -1\nExit code 0", false)...)
	text := summaryOf(t, msgs, 0)
	if !strings.Contains(text, "first run printed '-1' -> None; the latest '-1' -> -1") {
		t.Errorf("the change of output is lost:\n%s", text)
	}
}

// TestFoldersAreNotFilesRead: a folder a search looked in, under which other
// paths of the record lie, is not listed as a file read; bold markers and
// list introductions do not make decisions.
func TestFoldersAreNotFilesRead(t *testing.T) {
	msgs := []history.Message{history.NewText(history.User, "Find the bug.")}
	msgs = append(msgs, step("g1", "Grep", map[string]string{"pattern": "Detect", "path": "/w/cli/agent"}, "agent/registry.go:56: func Detect()", false)...)
	msgs = append(msgs, step("r1", "Read", map[string]string{"file_path": "/w/cli/agent/registry.go"}, "package agent", false)...)
	msgs = append(msgs, history.NewText(history.Assistant, "**Root cause**: the map order is random because Detect ranges over a map. Now update the callers instead of Detect:"))
	text := summaryOf(t, msgs, 0)
	if strings.Contains(text, "`/w/cli/agent`: read") || strings.Contains(text, "`agent`: read") {
		t.Errorf("a folder is listed as a file read:\n%s", text)
	}
	if !strings.Contains(text, "registry.go`: read") {
		t.Errorf("the file read is lost:\n%s", text)
	}
	dec := text[strings.Index(text, "## Key decisions"):strings.Index(text, "## Files read or changed")]
	if strings.Contains(dec, "**") || strings.Contains(dec, "instead of Detect:") || !strings.Contains(dec, "- Root cause: the map order is random") {
		t.Errorf("markdown or a list introduction in decisions:\n%s", dec)
	}
}

// TestLatestEditedFileFirst: among files edited as often, the latest touched
// is kept when the list is cut.
func TestLatestEditedFileFirst(t *testing.T) {
	msgs := []history.Message{history.NewText(history.User, "Build the app.")}
	for i := range 60 {
		msgs = append(msgs, step(fmt.Sprintf("o%d", i), "Write", map[string]string{"file_path": fmt.Sprintf("src/early%02d.ts", i), "content": "x"}, "ok", false)...)
	}
	msgs = append(msgs, step("z", "Write", map[string]string{"file_path": "src/zlatest.ts", "content": "x"}, "ok", false)...)
	text := summaryOf(t, msgs, 300)
	if !strings.Contains(text, "`src/zlatest.ts`") {
		t.Errorf("the latest edited file is not kept:\n%s", text)
	}
}
