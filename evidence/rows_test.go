package evidence

import (
	"context"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
)

// The tests below are the rows of RULES.md whose rule no other test of the
// package pins: each fails when its rule stops recognizing its shape.

// TestRunnerVerdictLines: rule "runner verdict lines" for the runners the
// outcome tests do not print (go test's lone PASS, Gradle and Maven, ruff and
// mypy, PHPUnit, node --test, unittest, RSpec).
func TestRunnerVerdictLines(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		want      Outcome
	}{
		{"go test -v", "=== RUN   TestX\n--- PASS: TestX (0.00s)\nPASS", Passed},
		{"gradle", "> Task :test\n\nBUILD SUCCESSFUL in 3s\n4 actionable tasks: 4 executed", Passed},
		{"maven", "[INFO] BUILD FAILURE\n[INFO] Total time:  2.1 s", Failed},
		{"ruff", "All checks passed!", Passed},
		{"mypy", "Success: no issues found in 12 source files", Passed},
		{"phpunit ok", "OK (5 tests, 9 assertions)", Passed},
		{"phpunit failures", "Tests: 5, Assertions: 9, Failures: 1.", Failed},
		{"node --test", "# tests 3\n# pass 1\n# fail 2", Failed},
		{"unittest ok", "...\n----------------------------------------------------------------------\nRan 3 tests in 0.001s\n\nOK", Passed},
		{"unittest failed", "F..\nRan 3 tests in 0.001s\n\nFAILED (failures=1)", Failed},
		{"rspec failed", "Finished in 0.1 seconds\n12 examples, 1 failure", Failed},
		{"rspec passed", "Finished in 0.1 seconds\n12 examples, 0 failures", Passed},
	} {
		if got := testVerdict(tc.out); got != tc.want {
			t.Errorf("%s: verdict %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestGeminiTrailerWithExitCode: rule "Gemini CLI trailer": a trailer that
// carries "Exit Code: N" is no exit 0; one without it is.
func TestGeminiTrailerWithExitCode(t *testing.T) {
	failed := "boom\nError: (none)\nExit Code: 1\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 4242"
	if _, ok := trailerExit(failed); ok {
		t.Errorf("a trailer with an exit code read as exit 0")
	}
	passed := "ok\nBackground PIDs: (none)\nProcess Group PGID: 4242"
	if code, ok := trailerExit(passed); !ok || code != 0 {
		t.Errorf("a trailer without an exit code: %d %v, want exit 0", code, ok)
	}
}

// TestUserInterruptIsTheStop: rule "user interrupt" (Claude Code's
// "[Request interrupted by user for tool use]" in the user's turn): the
// record ends stopped by the user, until the user types again.
func TestUserInterruptIsTheStop(t *testing.T) {
	msgs := []history.Message{user("Fix the parser.")}
	msgs = append(msgs, call("c1", "Bash", map[string]string{"command": "go test ./..."}, "Exit code 1\nFAIL")...)
	msgs = append(msgs, user("[Request interrupted by user for tool use]"))
	if r := extract(t, msgs); r.Stopped != len(msgs)-1 {
		t.Errorf("Stopped = %d, want %d", r.Stopped, len(msgs)-1)
	}
	msgs = append(msgs, user("Go on, but skip the slow tests."))
	if r := extract(t, msgs); r.Stopped != -1 {
		t.Errorf("Stopped = %d after the user typed again, want -1", r.Stopped)
	}
}

// TestInstructionFilesOfEveryHarness: rule "project instruction files", in
// the shape each harness injects them.
func TestInstructionFilesOfEveryHarness(t *testing.T) {
	msgs := []history.Message{
		user("<system-reminder>\nAs you answer the user's questions, you can use the following context:\nContents of /r/CLAUDE.md (project instructions, checked into the codebase):\n\nUse tabs.\n\n      IMPORTANT: this context may or may not be relevant to your tasks.\n</system-reminder>"),
		user("# AGENTS.md instructions for /r\n\n<INSTRUCTIONS>\nRun make check before committing.\n</INSTRUCTIONS>"),
		user("<user_instructions>\nNever push to main.\n</user_instructions>"),
		user("--- Context from: GEMINI.md ---\nPrefer small commits.\n--- End of Context from: GEMINI.md ---"),
		user("Instructions from: /r/AGENTS.md\nKeep the changelog.\n"),
		user("Fix the parser."),
	}
	origins, err := Classify(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, in := range ProjectInstructions(msgs, origins) {
		got[in.Source] = in.Text
	}
	for src, text := range map[string]string{
		"/r/CLAUDE.md":      "Use tabs.",
		"AGENTS.md (/r)":    "Run make check before committing.",
		"user_instructions": "Never push to main.",
		"GEMINI.md":         "Prefer small commits.",
		"/r/AGENTS.md":      "Keep the changelog.",
	} {
		if strings.TrimSpace(got[src]) != text {
			t.Errorf("instructions of %s: %q, want %q (all: %q)", src, got[src], text, got)
		}
	}
	for i := 3; i <= 4; i++ {
		if origins[i] == OriginTyped {
			t.Errorf("the instruction file of message %d is read as typed by the user", i)
		}
	}
}

// TestInstructionBlocksRoundTrip: rule "carried instruction blocks": what
// FormatInstructions writes, ParseInstructions reads back whole, headings and
// a closing tag in the text included.
func TestInstructionBlocksRoundTrip(t *testing.T) {
	in := []Instruction{
		{Source: "/r/CLAUDE.md", Text: "## Style\nUse tabs."},
		{Source: `odd "name"`, Text: "x </project-instructions> y"},
	}
	text := "before\n" + FormatInstructions(in) + "after"
	got, rest := ParseInstructions(text)
	if len(got) != len(in) || got[0] != in[0] || got[1] != in[1] {
		t.Errorf("parsed %q, want %q", got, in)
	}
	if rest != "before\nafter" {
		t.Errorf("rest %q, want the text without the blocks", rest)
	}
}

// TestCaveatIsInjected: rule "harness caveat": Claude Code's "Caveat: The
// messages below were generated by the user while running local commands",
// before the command blocks it introduces, is not the user's words.
func TestCaveatIsInjected(t *testing.T) {
	msgs := []history.Message{
		user("Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to."),
		user("<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args></command-args>"),
		user("<local-command-stdout>Set model to opus</local-command-stdout>"),
		user("Fix the parser."),
	}
	origins, err := Classify(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	if origins[0] == OriginTyped || origins[3] != OriginTyped {
		t.Errorf("origins %v, want the caveat injected and the request typed", origins)
	}
}

// claimsRecord is a record for the claim rows: a check that failed and was
// fixed by a later run of itself, a rejected edit, no commit, every call
// answered.
func claimsRecord(t *testing.T) *Record {
	return extract(t,
		[]history.Message{user("Fix the parser.")},
		call("call_a1", "Bash", map[string]string{"command": "go test ./p"}, "Exit code 1\n--- FAIL: TestP\nFAIL\tm/p\t0.01s"),
		call("call_a2", "Bash", map[string]string{"command": "go test ./p"}, "ok  \tm/p\t0.01s"),
		call("call_a3", "Edit", map[string]string{"file_path": "p/a.go", "old_string": "a", "new_string": "b"}, "Error: String to replace not found in file."),
	)
}

// TestClaimsQuotingTheUser: rule "the user's words are no claims": a line in
// a section about the user's messages, or one giving the user's request,
// states nothing about the record.
func TestClaimsQuotingTheUser(t *testing.T) {
	r := claimsRecord(t)
	claim := "- `go test ./p` failed (exit 1)"
	if got := Contradictions("## Checks\n"+claim, r); len(got) != 1 {
		t.Fatalf("the claim itself: %q, want one contradiction", got)
	}
	if got := Contradictions("## The user's messages (verbatim, latest first)\n"+claim, r); len(got) != 0 {
		t.Errorf("the user's words read as claims: %q", got)
	}
	if got := Contradictions("## Checks\n- Latest user request: `go test ./p` failed (exit 1), look", r); len(got) != 0 {
		t.Errorf("the user's request read as a claim: %q", got)
	}
}

// TestClaimFixedByALaterRun: rule "check claims": a line that says a check
// failed while its last run passed is a contradiction unless it says a later
// run fixed it.
func TestClaimFixedByALaterRun(t *testing.T) {
	r := claimsRecord(t)
	if got := Contradictions("- `go test ./p` failed (exit 1)", r); len(got) != 1 {
		t.Errorf("a failure its last run contradicts: %q, want one contradiction", got)
	}
	if got := Contradictions("- `go test ./p` failed (exit 1), since fixed", r); len(got) != 0 {
		t.Errorf("a fixed failure reported: %q", got)
	}
}

// TestFileChangeClaims: rule "file change claims": a rejected edit claimed as
// a change is a contradiction; a line that says it was not applied is none.
func TestFileChangeClaims(t *testing.T) {
	r := claimsRecord(t)
	if got := Contradictions("- `p/a.go`: modified", r); len(got) != 1 {
		t.Errorf("a rejected edit claimed as a change: %q, want one contradiction", got)
	}
	if got := Contradictions("- `p/a.go`: modified? no, the edit was rejected, not applied", r); len(got) != 0 {
		t.Errorf("a negated change reported: %q", got)
	}
}

// TestInterruptClaims: rule "interruption claims": every call has a result,
// so a line saying a call was interrupted is a contradiction, one that names
// the call by its id too; one that says nothing was interrupted is none.
func TestInterruptClaims(t *testing.T) {
	r := claimsRecord(t)
	for _, line := range []string{"- The last call was interrupted.", "- call_a2 was interrupted before it finished"} {
		if got := Contradictions(line, r); len(got) != 1 {
			t.Errorf("%q: %q, want one contradiction", line, got)
		}
	}
	if got := Contradictions("- Nothing was interrupted.", r); len(got) != 0 {
		t.Errorf("a negated interruption reported: %q", got)
	}
}

// TestFinalStateClaims: rule "final-state claims": the record shows no
// commit, so "committed" on the final-state line is a contradiction and "not
// committed" is none.
func TestFinalStateClaims(t *testing.T) {
	r := claimsRecord(t)
	if got := Contradictions("- Final state: the work was committed", r); len(got) != 1 {
		t.Errorf("a commit the record does not show: %q, want one contradiction", got)
	}
	if got := Contradictions("- Final state: the work is not committed", r); len(got) != 0 {
		t.Errorf("a negated commit reported: %q", got)
	}
}

// TestMakeRecipeError: rule "error words": make's report of a failed recipe
// is an error line.
func TestMakeRecipeError(t *testing.T) {
	got := errorLines("gcc -c a.c\nmake: *** [Makefile:12: lint] Error 1")
	if len(got) != 1 || !strings.HasPrefix(got[0], "make: ***") {
		t.Errorf("errors %q, want make's recipe failure", got)
	}
}

// TestErrorIdentityIgnoresTiming: rule "error identity": the same failure
// reported with two timings is one error.
func TestErrorIdentityIgnoresTiming(t *testing.T) {
	if a, b := errorKey("FAILED tests/test_a.py::test_x in 0.23s"), errorKey("FAILED tests/test_a.py::test_x in 1.5s"); a != b {
		t.Errorf("keys differ: %q and %q", a, b)
	}
}

// TestAssignmentsAreNotCommands: rule "commands in chains and scripts": a
// segment that only assigns variables runs nothing.
func TestAssignmentsAreNotCommands(t *testing.T) {
	got := significantSegments("GOFLAGS=-count=1 CGO_ENABLED=0; go build ./... && go vet ./...")
	if strings.Join(got, " | ") != "go build ./... | go vet ./..." {
		t.Errorf("segments %q, want the two commands only", got)
	}
}

// TestCommitSubjectOfSeveralMessages: rule "commit subject": of -m given
// twice, the first is the subject.
func TestCommitSubjectOfSeveralMessages(t *testing.T) {
	if got := CommitSubject(`git commit -m "fix: parse empty input" -m "The parser read past the end."`); got != "fix: parse empty input" {
		t.Errorf("subject %q", got)
	}
}

// TestCommitOfAFullGitLog: rule "commit seen through git log" in git log's
// full format ("commit <sha>" then the indented message).
func TestCommitOfAFullGitLog(t *testing.T) {
	sha := "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432"
	c, ok := newestLogged("commit " + sha + "\nAuthor: A <a@example.com>\nDate:   Mon Jan 1 00:00:00 2026\n\n    feat: parse empty input\n\ncommit 1111111111111111111111111111111111111111\n")
	if !ok || !strings.HasPrefix(sha, c.Ref) || c.Message != "feat: parse empty input" {
		t.Errorf("newest commit %+v (%v)", c, ok)
	}
}

// TestBranchOfStatusAndSwitch: rule "branch": git status's "On branch" line
// and git switch's report name the branch the work is on.
func TestBranchOfStatusAndSwitch(t *testing.T) {
	r := extract(t,
		[]history.Message{user("Fix the parser.")},
		call("c1", "Bash", map[string]string{"command": "git status"}, "On branch main\nnothing to commit, working tree clean"),
	)
	if r.Final.Branch != "main" {
		t.Errorf("branch %q after git status, want main", r.Final.Branch)
	}
	r = extract(t,
		[]history.Message{user("Fix the parser.")},
		call("c1", "Bash", map[string]string{"command": "git switch -c fix-parser"}, "Switched to a new branch 'fix-parser'"),
	)
	if r.Final.Branch != "fix-parser" {
		t.Errorf("branch %q after git switch -c, want fix-parser", r.Final.Branch)
	}
}

// TestPollStillRunning and TestNotificationStatus: rule "background
// commands": a poll that reports the process still running leaves its check
// running; a notification whose status is failed fails it.
func TestPollStillRunning(t *testing.T) {
	r := extract(t,
		[]history.Message{user("Build it.")},
		call("b1", "Bash", map[string]any{"command": "make build", "run_in_background": true}, "Command running in background with ID: bash_7"),
		call("p1", "BashOutput", map[string]string{"bash_id": "bash_7"}, "<status>running</status>\n<stdout>compiling</stdout>"),
	)
	if len(r.Checks) == 0 || r.Checks[0].Outcome != Running {
		t.Errorf("checks %+v, want make build still running", r.Checks)
	}
}

func TestNotificationStatus(t *testing.T) {
	r := extract(t,
		[]history.Message{user("Build it.")},
		call("b1", "Bash", map[string]any{"command": "make build", "run_in_background": true}, "Command running in background with ID: bash_7"),
		[]history.Message{user("<task-notification>\n<task-id>bash_7</task-id>\n<status>failed</status>\n<summary>Background command failed</summary>\n</task-notification>")},
	)
	if len(r.Checks) == 0 || r.Checks[0].Outcome != Failed {
		t.Errorf("checks %+v, want make build failed", r.Checks)
	}
}

// TestInterruptClaimNamesItsCall: rule "interruption claims": while a call is
// still unanswered, only a line that names an answered call by its id is a
// contradiction.
func TestInterruptClaimNamesItsCall(t *testing.T) {
	msgs := []history.Message{user("Fix the parser.")}
	msgs = append(msgs, call("call_a1", "Bash", map[string]string{"command": "go test ./p"}, "ok  \tm/p\t0.01s")...)
	msgs = append(msgs, history.Message{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: "call_a2", Name: "Bash", Arguments: `{"command":"go vet ./p"}`}}})
	r := extract(t, msgs)
	if got := Contradictions("- call_a1 was interrupted", r); len(got) != 1 {
		t.Errorf("an answered call claimed interrupted: %q, want one contradiction", got)
	}
	if got := Contradictions("- The last call was interrupted.", r); len(got) != 0 {
		t.Errorf("a true interruption reported: %q", got)
	}
}

// TestFailureDetail: rule "failure detail": a failed run's detail is its
// test summary, with the line that says why when the summary counts no
// failure; a bare exit-code line or harness tags are no detail.
func TestFailureDetail(t *testing.T) {
	for _, tc := range []struct{ out, want string }{
		{"12 passed in 0.20s\nFAIL Required test coverage of 90% not reached. Total coverage: 80.00%", "12 passed in 0.20s; FAIL Required test coverage of 90% not reached. Total coverage: 80.00%"},
		{"FAIL Required test coverage of 90% not reached\n1 failed, 11 passed in 0.20s", "1 failed, 11 passed in 0.20s"},
		{"Exit code 3", ""},
		{"<output>nothing to see</output>", "nothing to see"},
	} {
		if got := detailOf(tc.out, Failed); got != tc.want {
			t.Errorf("detail of %q: %q, want %q", tc.out, got, tc.want)
		}
	}
}

// TestShellReads: rule "shell reads": the files cat, head and sed print are
// read, not changed.
func TestShellReads(t *testing.T) {
	r := extract(t,
		[]history.Message{user("Look at the parser.")},
		call("c1", "Bash", map[string]string{"command": "cat src/parse.go && head -n 20 src/lex.go"}, "package parse"),
	)
	if strings.Join(r.Reads, " ") != "src/parse.go src/lex.go" || len(r.Changes) != 0 {
		t.Errorf("reads %q, changes %+v", r.Reads, r.Changes)
	}
}
