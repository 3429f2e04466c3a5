package evidence

import (
	"testing"

	"github.com/vtcode/vtcode-ls/history"
)

// TestOutcomeFromStructure: a check's outcome comes from the harness's exit
// code, else from a runner's own result line; words such as "error" or
// "fail" elsewhere in the output decide nothing, and the harness's code for
// the command wins over an "exit status" its programs printed.
func TestOutcomeFromStructure(t *testing.T) {
	for _, tc := range []struct {
		name, cmd, out string
		isError        bool // the harness flagged the result (Claude Code's is_error)
		want           Outcome
		exit           int
		hasExit        bool
	}{
		// Claude Code Bash results: no exit code when the command succeeded.
		// git's report of the commit is the command's own result line.
		{"commit whose hook logged errors", "git commit -m 'fix: x'", "[lint] error: 0 issues\ntime=… level=error msg=\"retrying\"\n[main 1a2b3c4] fix: x\n 2 files changed", false, Passed, 0, false},
		{"bun test 0 fail", "bun test", " 12 pass\n 0 fail\n 31 expect() calls\nRan 12 tests across 3 files. [120.00ms]", false, Passed, 0, false},
		{"summary with zero errors", "dotnet format --verify-no-changes", "Summary: 0 error(s), 0 warning(s)", false, Unknown, 0, false},
		{"unrecognized subcommand", "cargo frobnicate", "Exit code 2\nerror: unrecognized subcommand 'frobnicate'", true, Failed, 2, true},
		{"a list of ready issues", "bd ready", "📋 Ready work (9 issues with no blockers):\n1. [P1] vt-12: error reporting\n2. [P2] vt-15: failing tests on windows", false, Unknown, 0, false},
		{"pytest summary", "pytest -x", "tests/test_unit.py ..F\n=========================== 1 failed, 37 passed in 0.52s ===========================", false, Failed, 0, false},
		{"pytest passing with error words", "pytest", "test_errors.py::test_error_message PASSED\n============================== 68 passed in 4.22s ==============================", false, Passed, 0, false},
		{"cargo", "cargo test", "running 5 tests\ntest result: ok. 5 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s", false, Passed, 0, false},
		{"jest", "npx jest", "Tests:       1 failed, 3 passed, 4 total\nSnapshots:   0 total", false, Failed, 0, false},
		{"vitest", "npx vitest run", " Test Files  2 passed (2)\n      Tests  9 passed (9)", false, Passed, 0, false},
		{"node --test", "node --test", "ℹ tests 4\nℹ pass 4\nℹ fail 0", false, Passed, 0, false},
		{"go test ok", "go test ./...", "ok  \texample.com/m/parser\t0.011s\nok  \texample.com/m/lexer\t(cached)", false, Passed, 0, false},
		{"go test FAIL", "go test ./... 2>&1 | tail -3", "--- FAIL: TestParse (0.00s)\nFAIL\nFAIL\texample.com/m/parser\t0.011s", false, Failed, 0, false},
		// Codex exec_command: the harness's code wins over the test binary's.
		{"codex exit code over exit status", "go test ./parser", "Exit code: 1\nWall time: 0.4 seconds\nOutput:\n--- FAIL: TestParse (0.00s)\nFAIL\nexit status 2\nFAIL\texample.com/m/parser\t0.011s", false, Failed, 1, true},
		{"codex process exited", "go vet ./...", "Chunk ID: 9c1\nWall time: 0.2 seconds\nProcess exited with code 1\nOriginal token count: 12\nOutput:\nvet: exit status 2", false, Failed, 1, true},
		{"harness tail after inner status", "make test", "FAIL\nexit status 2\nmake: *** [test] Error 1\n[exit code: 1]", false, Failed, 1, true},
		{"only an inner status", "go run ./cmd/x", "panic: boom\nexit status 2", false, Failed, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs := call("c1", "Bash", map[string]string{"command": tc.cmd}, tc.out)
			if tc.isError {
				msgs[1] = flagged(msgs[1])
			}
			r := extract(t, []history.Message{user("Do it.")}, msgs)
			c := r.Checks[0]
			if c.Outcome != tc.want || c.HasExit != tc.hasExit || c.Exit != tc.exit {
				t.Errorf("outcome %q exit %d (%v), want %q exit %d (%v)", c.Outcome, c.Exit, c.HasExit, tc.want, tc.exit, tc.hasExit)
			}
		})
	}
}

// TestFlaggingIsPerShell: a harness that flagged only an editor tool's
// error says nothing of a command it did not flag; one that flagged a
// failed command passes the commands it did not flag.
func TestFlaggingIsPerShell(t *testing.T) {
	badEdit := call("e1", "Edit", map[string]string{"file_path": "a.go", "old_string": "x", "new_string": "y"}, "String to replace not found in file.")
	badEdit[1] = flagged(badEdit[1])
	r := extract(t, badEdit, call("c1", "Bash", map[string]string{"command": "bd frobnicate"}, "error: unrecognized subcommand 'frobnicate'"))
	if got := r.Checks[0].Outcome; got != Unknown {
		t.Errorf("after a flagged edit only: %q, want unknown", got)
	}
	badCmd := call("c0", "Bash", map[string]string{"command": "make lint"}, "Exit code 2\nlint failed")
	badCmd[1] = flagged(badCmd[1])
	r = extract(t, badCmd, call("c1", "Bash", map[string]string{"command": "bd ready"}, "📋 Ready work (2 issues)"))
	if got := r.Checks[1].Outcome; got != Passed {
		t.Errorf("after a flagged command: %q, want passed", got)
	}
}
