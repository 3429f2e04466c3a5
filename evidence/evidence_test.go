package evidence

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/vtcode/vtcode-ls/history"
)

func user(text string) history.Message      { return history.NewText(history.User, text) }
func assistant(text string) history.Message { return history.NewText(history.Assistant, text) }

// call returns an assistant message with one tool call and its result.
func call(id, name string, args any, result string) []history.Message {
	a, _ := json.Marshal(args)
	return []history.Message{
		{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: id, Name: name, Arguments: string(a)}}},
		history.NewToolResult(id, name, result),
	}
}

func flagged(m history.Message) history.Message {
	m.Extra = map[string]json.RawMessage{"isError": json.RawMessage("true")}
	return m
}

func extract(t *testing.T, msgs ...[]history.Message) *Record {
	t.Helper()
	var all []history.Message
	for _, m := range msgs {
		all = append(all, m...)
	}
	r, err := Extract(context.Background(), all)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func one(m history.Message) []history.Message { return []history.Message{m} }

// TestExitCodes: the exit code of a command is read in every format agents
// print it in.
func TestExitCodes(t *testing.T) {
	tests := []struct {
		name, result string
		command      string
		want         int
		ok           bool
	}{
		{"returncode tag", "<returncode>1</returncode>\n<output>\nFAILED\n</output>", "pytest", 1, true},
		{"leading Exit code", "Exit code 127\n/bin/bash: line 1: pytest: command not found", "pytest", 127, true},
		{"Exit code colon", "Exit code: 2\nWall time: 0.1 seconds\nOutput:\nls: cannot access 'x'", "ls x", 2, true},
		{"Process exited", "Output:\nok\nProcess exited with code 0", "go test", 0, true},
		{"exec header", "Chunk ID: 1\nWall time: 0.2 seconds\nProcess exited with code 1\nOutput:\nFAIL\nthe fixture says exit code 0 is expected", "go test", 1, true},
		{"exit status", "--- FAIL: TestX (0.00s)\nFAIL\nexit status 1\nFAIL\tpkg\t0.01s", "go test", 1, true},
		{"bracketed", "boom\n[exit code: 3]", "make", 3, true},
		{"bracketed sentence", "E: Unable to locate package x\n[The command completed with exit code 100.]", "apt-get install x", 100, true},
		{"JSON exit_code", `{"output":"x","exit_code":5}`, "x", 5, true},
		{"JSON exitCode", `{"stdout":"","exitCode":7}`, "x", 7, true},
		{"JSON nested metadata", `{"output":"9:A=1\n","metadata":{"exit_code":0,"duration_seconds":0.0}}`, "rg A", 0, true},
		{"echoed $?", "build failed\n2", "make build; echo $?", 2, true},
		{"echoed $? with label", "exit=0", `go vet ./...; echo "exit=$?"`, 0, true},
		{"none", "all good", "true", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := extract(t, one(user("Go.")), call("c1", "bash", map[string]string{"command": tt.command}, tt.result))
			if len(r.Checks) != 1 {
				t.Fatalf("checks = %+v", r.Checks)
			}
			c := r.Checks[0]
			if c.HasExit != tt.ok || c.Exit != tt.want {
				t.Errorf("exit = %d, %v; want %d, %v", c.Exit, c.HasExit, tt.want, tt.ok)
			}
			if tt.ok {
				want := Passed
				if tt.want != 0 {
					want = Failed
				}
				if c.Outcome != want {
					t.Errorf("outcome = %s, want %s", c.Outcome, want)
				}
			}
		})
	}
}

// TestCommandFromArguments: shell tools take their command under several
// argument names and shapes; editor tools with a "command" argument are not
// shells.
func TestCommandFromArguments(t *testing.T) {
	r := extract(t, one(user("Go.")),
		call("c1", "shell", map[string]any{"command": []string{"bash", "-lc", "ls lib/ai"}}, `{"output":"ls: cannot access","metadata":{"exit_code":2}}`),
		call("c2", "execute_bash", map[string]any{"cmd": "make"}, "ok\n[exit code: 0]"),
		call("c3", "str_replace_editor", map[string]any{"command": "view", "path": "a.go"}, "package a"),
	)
	var got []string
	for _, c := range r.Checks {
		got = append(got, c.Command)
	}
	if diff := cmp.Diff([]string{"ls lib/ai", "make"}, got); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
}

// TestFixedBy: a failed check that a later run of the same command, or of
// one holding all its words, passed is marked fixed; an unrelated pass does
// not fix it.
func TestFixedBy(t *testing.T) {
	r := extract(t, one(user("Go.")),
		call("c1", "bash", map[string]string{"command": "pytest"}, "Exit code 127\npytest: command not found"),
		call("c2", "bash", map[string]string{"command": "go test ./cmd/"}, "FAIL\nexit status 1"),
		call("c3", "bash", map[string]string{"command": "ls"}, "a\nExit code: 0"),
		call("c4", "bash", map[string]string{"command": "(source .venv/bin/activate && pytest -x)"}, "40 passed\nExit code: 0"),
		call("c5", "bash", map[string]string{"command": "uv run pytest test/test_a.py"}, "Exit code 4\nERROR: file or directory not found: test/test_a.py"),
		call("c6", "bash", map[string]string{"command": "uv run pytest test_a.py"}, "6 passed\nExit code: 0"),
	)
	if got := r.Checks[0].FixedBy; got != 3 {
		t.Errorf("pytest fixed by %d, want 3 (the activated run)", got)
	}
	if got := r.Checks[1].FixedBy; got != -1 {
		t.Errorf("go test ./cmd/ fixed by %d, want -1", got)
	}
	if got := r.Checks[4].FixedBy; got != 5 {
		t.Errorf("a run from another folder naming the same file: fixed by %d, want 5", got)
	}

	// A commit that failed is made good by a later commit that passed,
	// whatever their messages; not by one that leaves out what it also did.
	heredoc := "cd /r && git add -A && git commit -m \"$(cat <<'EOF'\nAdd the \"base\" tag (v2)\n\nBody\nEOF\n)\""
	r = extract(t, one(user("Commit.")),
		call("c1", "bash", map[string]string{"command": `cd /r && git add -A && git commit -m "Add the base tag"`}, "Exit code 1\npre-commit: trailing whitespace"),
		call("c2", "bash", map[string]string{"command": `cd /r && git commit -m "Tag" && git push`}, "Exit code 1\nnothing to commit"),
		call("c3", "bash", map[string]string{"command": "cd /other && git add -A && git commit -m 'Fix'"}, "[main 1a2b3c4] Fix\nExit code: 0"),
		call("c4", "bash", map[string]string{"command": heredoc}, "[main 5d6e7f8] Add the base tag (v2)\nExit code: 0"),
	)
	if got := r.Checks[0].FixedBy; got != 3 {
		t.Errorf("failed commit fixed by %d, want 3 (the later commit in the same folder, not the one in /other)", got)
	}
	if got := r.Checks[1].FixedBy; got != -1 {
		t.Errorf("failed commit and push fixed by %d, want -1 (no later push)", got)
	}
}

// TestOutcomeWithoutExitCode: a harness that flags failed results implies
// success for the results it did not flag; a refused command did not run; a
// test summary decides when nothing else does; a background command runs.
func TestOutcomeWithoutExitCode(t *testing.T) {
	msgs := []history.Message{user("Go.")}
	msgs = append(msgs, call("c1", "Bash", map[string]string{"command": "ruff check ."}, "All checks passed!")...)
	fail := call("c2", "Bash", map[string]string{"command": "pytest"}, "Exit code 1\n1 failed, 3 passed")
	fail[1] = flagged(fail[1])
	msgs = append(msgs, fail...)
	refused := call("c3", "Bash", map[string]string{"command": "git read-tree HEAD"}, "The tool use was rejected by the user.")
	refused[1] = flagged(refused[1])
	msgs = append(msgs, refused...)
	msgs = append(msgs, call("c4", "Bash", map[string]string{"command": "ls"}, "a.go")...)
	msgs = append(msgs, call("c5", "run", map[string]string{"command": "go run ./server"}, "Command is running in the background. Session ID: term-7.")...)
	msgs = append(msgs, history.Message{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: "c6", Name: "Bash", Arguments: `{"command":"sleep 100"}`}}})
	r := extract(t, msgs)
	var got []Outcome
	for _, c := range r.Checks {
		got = append(got, c.Outcome)
	}
	want := []Outcome{Passed, Failed, NotRun, Passed, Running, Interrupted}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	if !r.Final.Interrupted {
		t.Error("the last call has no result, but Final.Interrupted is false")
	}

	// A refusal is a command that did not run even where the tool never
	// reports an exit code; a flagged failure there stays a failure.
	refusal := call("c1", "Bash", map[string]string{"command": "git commit -m wip"},
		"The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). The user provided the following reason for the rejection: add the favicon first")
	refusal[1] = flagged(refusal[1])
	broken := call("c2", "Bash", map[string]string{"command": "npm test"}, "npm ERR! Missing script: \"test\"")
	broken[1] = flagged(broken[1])
	stop := call("c3", "Bash", map[string]string{"command": "which node"},
		"The user doesn't want to take this action right now. STOP what you are doing and wait for the user to tell you how to proceed.")
	stop[1] = flagged(stop[1])
	r = extract(t, one(user("Commit.")), refusal, broken, stop)
	if r.Checks[0].Outcome != NotRun || r.Checks[1].Outcome != Failed || r.Checks[2].Outcome != NotRun {
		t.Errorf("refused %s, flagged failure %s, stopped %s: want %s, %s, %s", r.Checks[0].Outcome, r.Checks[1].Outcome, r.Checks[2].Outcome, NotRun, Failed, NotRun)
	}

	// Without a flagging harness, a test summary decides.
	r = extract(t, one(user("Go.")),
		call("c1", "shell", map[string]string{"command": "pytest"}, "== 2 failed, 5 passed in 0.3s =="),
		call("c2", "shell", map[string]string{"command": "pytest -k a"}, "== 5 passed in 0.3s =="),
		call("c3", "shell", map[string]string{"command": "ls"}, "a.go"),
		call("c4", "shell", map[string]string{"command": "python r.py"}, "Traceback (most recent call last):\n  File \"r.py\", line 1\nKeyError: 'model'\n(Current directory: /w)\nbash-$"),
	)
	got = got[:0]
	for _, c := range r.Checks {
		got = append(got, c.Outcome)
	}
	if diff := cmp.Diff([]Outcome{Failed, Passed, Unknown, Failed}, got); diff != "" {
		t.Errorf("outcomes without flags (-want +got):\n%s", diff)
	}
}

// TestBackgroundCommandPolled: a command started in the background ends
// when a later poll of its id (in an id-like argument) reports an exit code
// or that it was stopped; a poll that reports it still running, a call
// naming another id, and a number under another argument leave it running.
func TestBackgroundCommandPolled(t *testing.T) {
	started := func(id, cmd, out string) []history.Message {
		return call(id, "Bash", map[string]any{"command": cmd, "run_in_background": true}, out)
	}
	r := extract(t, one(user("Build and serve.")),
		// Claude Code: BashOutput, then the end.
		started("c1", "make build", "Command running in background with ID: 7d95c5"),
		call("c2", "BashOutput", map[string]string{"bash_id": "7d95c5"}, "<status>running</status>\n\n<stderr>\ncompiling\n</stderr>"),
		call("c3", "BashOutput", map[string]string{"bash_id": "7d95c5"}, "<status>completed</status>\n\n<exit_code>0</exit_code>\n\n<stdout>\nbuilt 3 targets\n</stdout>"),
		// Codex: write_stdin to the session, which exits non-zero.
		call("c4", "exec_command", map[string]string{"cmd": "pytest -x"}, "Chunk ID: 1\nWall time: 10.0 seconds\nProcess running with session ID 31\nOutput:\ncollecting"),
		call("c5", "write_stdin", map[string]any{"session_id": 31, "chars": ""}, "Wall time: 2.0 seconds\nProcess exited with code 2\nOutput:\n1 failed"),
		// Stopped on purpose.
		started("c6", "npm run dev", "Command running in background with ID: b41f2"),
		call("c7", "KillShell", map[string]string{"shell_id": "b41f2"}, "Successfully killed shell: b41f2 (npm run dev)"),
		// Still running: another id polled, a count under another key.
		started("c8", "go run ./server", "Command running in background with ID: 9a9a1"),
		call("c9", "BashOutput", map[string]string{"bash_id": "7d95c5"}, "<status>completed</status>\n\n<exit_code>1</exit_code>"),
		call("c10", "Read", map[string]any{"file_path": "/w/main.go", "limit": 9}, "package main"),
	)
	type got struct {
		Command string
		Outcome Outcome
		Exit    int
	}
	var gots []got
	for _, c := range r.Checks {
		gots = append(gots, got{c.Command, c.Outcome, c.Exit})
	}
	want := []got{{"make build", Passed, 0}, {"pytest -x", Failed, 2}, {"npm run dev", Unknown, 0}, {"go run ./server", Running, 0}}
	if diff := cmp.Diff(want, gots); diff != "" {
		t.Fatalf("checks (-want +got):\n%s", diff)
	}
	// What tells how each ended: the poll's output, else the command's own.
	for i, in := range []string{"built 3 targets", "1 failed", "killed shell", "ID: 9a9a1"} {
		if out := r.Output(r.Checks[i]); !strings.Contains(out, in) {
			t.Errorf("%s: output %q, want the one with %q", r.Checks[i].Command, out, in)
		}
	}
}

// TestToolChanges: editor tools under their real argument names, patches,
// and rejected edits.
func TestToolChanges(t *testing.T) {
	msgs := []history.Message{user("Go.")}
	msgs = append(msgs, call("c1", "Edit", map[string]string{"file_path": "/w/a.py", "old_string": "x", "new_string": "y"}, "The file /w/a.py has been updated.")...)
	msgs = append(msgs, call("c2", "MultiEdit", map[string]any{"file_path": "/w/b.py", "edits": []any{}}, "Applied 2 edits to /w/b.py")...)
	msgs = append(msgs, call("c3", "Write", map[string]string{"file_path": "/w/c.py", "content": "x"}, "File created successfully at: /w/c.py")...)
	msgs = append(msgs, call("c4", "str_replace_editor", map[string]string{"command": "create", "path": "/w/d.c", "file_text": "x"}, "File created successfully at: /w/d.c")...)
	msgs = append(msgs, call("c5", "str_replace_editor", map[string]string{"command": "str_replace", "path": "/w/e.c", "old_str": "a", "new_str": "b"}, "ERROR:\nNo replacement was performed, old_str `a` did not appear verbatim in /w/e.c.")...)
	rej := call("c6", "Edit", map[string]string{"file_path": "/w/f.go", "old_string": "a", "new_string": "b"}, "<tool_use_error>Found 2 matches of the string to replace, but replace_all is false.</tool_use_error>")
	rej[1] = flagged(rej[1])
	msgs = append(msgs, rej...)
	msgs = append(msgs, call("c7", "str_replace_editor", map[string]string{"command": "view", "path": "/w/g.c"}, "1 int x;")...)
	msgs = append(msgs, call("c8", "Read", map[string]string{"file_path": "/w/a.py"}, "x")...)
	msgs = append(msgs, history.Message{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: "c9", Name: "apply_patch", Input: "*** Begin Patch\n*** Update File: src/h.ts\n@@\n-a\n+b\n*** Add File: src/i.ts\n+x\n*** Delete File: src/j.ts\n*** Update File: src/k.ts\n*** Move to: src/l.ts\n*** End Patch"}}},
		history.NewToolResult("c9", "apply_patch", "Success. Updated the following files:\nM src/h.ts"))
	r := extract(t, msgs)
	got := changes(r.Changes)
	want := []string{"modified /w/a.py", "modified /w/b.py", "created /w/c.py", "created /w/d.c", "modified src/h.ts", "created src/i.ts", "deleted src/j.ts", "moved src/l.ts"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"modified /w/e.c", "modified /w/f.go"}, changes(r.Rejected)); diff != "" {
		t.Errorf("rejected (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"/w/g.c"}, r.Reads); diff != "" {
		t.Errorf("reads (-want +got):\n%s", diff)
	}
	if r.Changed("/w/f.go") {
		t.Error("a rejected edit counts as a change")
	}
}

func changes(cs []Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, string(c.Op)+" "+c.Path)
	}
	return out
}

// TestShellChanges: files changed through a shell.
func TestShellChanges(t *testing.T) {
	tests := []struct {
		command string
		want    []string
	}{
		{"cat > notes/a.txt <<EOF\nhello > world\nEOF", []string{"created notes/a.txt"}},
		{"cat <<'EOF' > reproduce.py\nimport x\nEOF\npython reproduce.py", []string{"created reproduce.py"}},
		{"cat >> log.md <<EOF\nmore\nEOF", []string{"modified log.md"}},
		{"python - <<'PY'\nfrom pathlib import Path\np = open('src/conf.py', 'w')\np.write('x')\nPY", []string{"modified src/conf.py"}},
		{"python3 -c \"import pathlib; pathlib.Path('out.json').write_text('{}')\"", []string{"modified out.json"}},
		{"sed -i 's/a/b/' src/x.py src/y.py", []string{"modified src/x.py", "modified src/y.py"}},
		{"sed -i.bak -e 's/a/b/' conf.ini", []string{"modified conf.ini"}},
		{`sed -i "s/getattr(r, \"a\")/b/" src/t.py`, []string{"modified src/t.py"}},
		{"sed -n '1,20p' src/x.py", nil},
		{"git mv old.go new.go", []string{"moved new.go"}},
		{"git rm -q stale.go", []string{"deleted stale.go"}},
		{"git checkout src/terminal.py", []string{"reverted src/terminal.py"}},
		{"rm -f a.txt b.txt", []string{"deleted a.txt", "deleted b.txt"}},
		{"echo hi > greet.txt 2>&1 && go test ./... > /dev/null", []string{"modified greet.txt"}},
		{"go test ./... 2>&1 | tee test.log", []string{"modified test.log"}},
		{`grep -n "a -> b" file.go`, nil},
		{"apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: components/x.ts\n@@\n-a\n+b\n*** End Patch\nPATCH", []string{"modified components/x.ts"}},
	}
	for _, tt := range tests {
		t.Run(strings.Fields(tt.command)[0], func(t *testing.T) {
			r := extract(t, one(user("Go.")), call("c1", "bash", map[string]string{"command": tt.command}, "Exit code: 0"))
			if diff := cmp.Diff(tt.want, changes(r.Changes)); diff != "" {
				t.Errorf("%q: changes (-want +got):\n%s", tt.command, diff)
			}
		})
	}
}

// TestTextReportedChanges: aider's "Applied edit to" and commit lines.
func TestTextReportedChanges(t *testing.T) {
	r := extract(t, one(user("Add the test.")), one(assistant("Here is the change.")),
		one(history.NewText(history.User, "Applied edit to tests/basic/test_main.py\nCommit db22d29 feat: add yaml loading test")))
	if diff := cmp.Diff([]string{"modified tests/basic/test_main.py"}, changes(r.Changes)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if len(r.Final.Commits) != 1 || r.Final.Commits[0].Ref != "db22d29" {
		t.Errorf("commits = %+v", r.Final.Commits)
	}
}

// TestErrors: panics, the last line of a traceback, missing commands,
// diagnostics, failing tests with their detail, an error the user pasted;
// neither a diff line nor a JSON document is an error.
func TestErrors(t *testing.T) {
	r := extract(t,
		one(user("CI is red:\n> git gc\nfatal: bad tree object 082c2c44\nplease fix")),
		call("c1", "bash", map[string]string{"command": "go run ."}, "goroutine 1 [running]:\npanic: runtime error: index out of range [3] with length 3\nexit status 2"),
		call("c2", "bash", map[string]string{"command": "python r.py"}, "Traceback (most recent call last):\n  File \"r.py\", line 3, in <module>\n    raise AttributeError(\"missing PixelRepresentation\")\nAttributeError: missing PixelRepresentation\n"),
		call("c3", "bash", map[string]string{"command": "pytest"}, "Exit code 127\n/bin/bash: line 1: pytest: command not found"),
		call("c4", "bash", map[string]string{"command": "go vet ./..."}, "./a.go:12:3: undefined: foo\nexit status 1"),
		call("c5", "bash", map[string]string{"command": "ruff check ."}, "a/b.py:191:14: SIM115 Use a context manager for opening files\nFound 1 error."),
		call("c6", "bash", map[string]string{"command": "go test ./..."}, "--- FAIL: TestParse (0.00s)\n    parse_test.go:41: got 1, want 2\nFAIL\nexit status 1"),
		call("c7", "bash", map[string]string{"command": "git diff"}, "-func f() error {\n+func f() (err error) {\nExit code: 0"),
		call("c8", "mcp__tracker__get", map[string]string{"id": "1"}, `{"id":"1","description":"go-git cannot find the index; error handling"}`),
		call("c9", "bash", map[string]string{"command": "go run ."}, "panic: runtime error: index out of range [3] with length 3\nexit status 2"),
		call("c11", "bash", map[string]string{"command": "pytest -k yaml"}, ">       self.assertEqual(kwargs[\"model\"], \"gpt-4\")\nE       KeyError: 'model'\n\ntests/test_main.py:409: KeyError\nExit code: 1"),
		call("c10", "run_shell_command", map[string]string{"command": "go test ./config"}, "Command: go test ./config\nOutput: --- FAIL: TestLoad (0.00s)\nError: (none)\nExit Code: 1"),
	)
	var got []string
	for _, e := range r.Errors {
		s := e.Kind + ": " + e.Text
		if e.FromUser {
			s += " (user)"
		}
		if e.Count > 1 {
			s += fmt.Sprintf(" x%d", e.Count)
		}
		got = append(got, s)
	}
	want := []string{
		"error: fatal: bad tree object 082c2c44 (user)",
		"panic: panic: runtime error: index out of range [3] with length 3 x2",
		`exception: AttributeError: missing PixelRepresentation (raised at File "r.py", line 3, in <module>)`,
		"not-found: /bin/bash: line 1: pytest: command not found",
		"diagnostic: ./a.go:12:3: undefined: foo",
		"diagnostic: a/b.py:191:14: SIM115 Use a context manager for opening files",
		"test: --- FAIL: TestParse (0.00s) / parse_test.go:41: got 1, want 2",
		"exception: KeyError: 'model'",
		"test: --- FAIL: TestLoad (0.00s)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if e := r.Errors[1]; e.First >= e.Last {
		t.Errorf("a repeated error keeps its first and latest occurrence: %+v", e)
	}
}

// TestOrigins: which user-role messages the user typed.
func TestOrigins(t *testing.T) {
	meta := user("Caveat: local commands follow.")
	meta.Extra = map[string]json.RawMessage{"isMeta": json.RawMessage("true")}
	compact := user("This session is being continued from a previous conversation.")
	compact.Extra = map[string]json.RawMessage{"isCompactSummary": json.RawMessage("true")}
	msgs := []history.Message{
		history.NewText(history.System, "You are an agent."),
		user("<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"),
		user("<user_instructions>\nUse tabs.\n</user_instructions>"),
		user("Fix the login bug; never touch migrations."),
		user("<system-reminder>\nThe todo list is empty.\n</system-reminder>"),
		user("<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args></command-args>"),
		user("<local-command-stdout>Set model</local-command-stdout>"),
		user("<task-notification>\n<task-id>t1</task-id>\n<status>completed</status>\n</task-notification>"),
		meta,
		compact,
		user("[Request interrupted by user for tool use]"),
		assistant("I think it is done."),
		user("No tool calls found in the response. Call a tool or finish."),
		assistant(strings.Repeat("Edit main.go so that the handler validates the token before it reads the body. ", 4)),
		user(strings.Repeat("Edit main.go so that the handler validates the token before it reads the body. ", 4)),
		user(SummaryHeading + "\n## Goal\nx"),
		user("Also add a test."),
		user("The earlier part was summarized; merge it.\n<summary_content>\n## Errors seen\n- fatal: x\n</summary_content>"),
	}
	r := extract(t, msgs)
	want := []Origin{OriginSystem, OriginInjected, OriginInjected, OriginTyped, OriginInjected, OriginInjected, OriginInjected, OriginInjected,
		OriginInjected, OriginSummary, OriginInjected, OriginAgent, OriginHarness, OriginAgent, OriginDelegated, OriginSummary, OriginTyped, OriginSummary}
	if diff := cmp.Diff(want, r.Origins); diff != "" {
		t.Errorf("origins (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{3, 16}, r.UserRequests()); diff != "" {
		t.Errorf("user requests (-want +got):\n%s", diff)
	}
}

// TestTextActionSession: an agent that acts through one fenced command per
// response gets its output as a user-role observation, and a format
// complaint when it sends none or several; its commands are checks, its
// line-range edits change the open file, and a submit ends the run.
func TestTextActionSession(t *testing.T) {
	msgs := []history.Message{
		history.NewText(history.System, "Reply with one bash block."),
		user("<pr_description>\nFix xfail.\n</pr_description>"),
		assistant("THOUGHT: reproduce.\n\n```bash\npytest -rsx repro.py\n```"),
		user("<returncode>1</returncode>\n<output>\n1 failed\n</output>"),
		assistant("THOUGHT: two things.\n\n```bash\nls\n```\n\n```bash\npwd\n```"),
		user("Please always provide EXACTLY ONE action in triple backticks, found 2 actions."),
		assistant("Open it.\n```\nopen src/skipping.py 260\n```"),
		user("[File: /repo/src/skipping.py (300 lines total)]\n260: x\n(Open file: /repo/src/skipping.py)\n(Current directory: /repo)\nbash-$"),
		assistant("Fix it.\n```\nedit 262:262\n    y\nend_of_edit\n```"),
		user("[File: /repo/src/skipping.py (300 lines total)]\n262: y\nFile updated.\n(Open file: /repo/src/skipping.py)\nbash-$"),
		assistant("```bash\npytest -rsx repro.py\n```"),
		user("<returncode>0</returncode>\n<output>\n1 xfailed\n</output>"),
		assistant("Done.\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff\n```"),
	}
	r := extract(t, msgs)
	wantOrigins := []Origin{OriginSystem, OriginTyped, OriginAgent, OriginObservation, OriginAgent, OriginHarness, OriginAgent, OriginObservation, OriginAgent, OriginObservation, OriginAgent, OriginObservation, OriginAgent}
	if diff := cmp.Diff(wantOrigins, r.Origins); diff != "" {
		t.Errorf("origins (-want +got):\n%s", diff)
	}
	if len(r.Checks) < 2 || r.Checks[0].Command != "pytest -rsx repro.py" || r.Checks[0].Outcome != Failed || r.Checks[0].FixedBy < 0 {
		t.Errorf("checks = %+v", r.Checks)
	}
	if diff := cmp.Diff([]string{"modified /repo/src/skipping.py"}, changes(r.Changes)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if !r.Final.Submitted || r.Final.Interrupted {
		t.Errorf("final = %+v, want submitted, not interrupted", r.Final)
	}
}

// TestFinalState: commits, pushes and releases the record shows.
func TestFinalState(t *testing.T) {
	r := extract(t, one(user("Ship it.")),
		call("c1", "bash", map[string]string{"command": "git commit -am 'fix: parse'"}, "[main 70f2781] fix: parse\n 1 file changed\nExit code: 0"),
		call("c2", "bash", map[string]string{"command": "git push origin main"}, "Exit code: 0"),
		call("c3", "bash", map[string]string{"command": "git tag v1.2.0 && git push origin v1.2.0"}, "Exit code: 0"),
	)
	f := r.Final
	if len(f.Commits) != 1 || f.Commits[0].Ref != "70f2781" || f.Commits[0].Message != "fix: parse" || !f.Pushed || !f.Released || f.Submitted {
		t.Errorf("final = %+v", f)
	}
	// A push that failed is not a push.
	r = extract(t, one(user("Push.")), call("c1", "bash", map[string]string{"command": "git push"}, "rejected\nExit code: 1"))
	if r.Final.Pushed {
		t.Error("a failed push counts as pushed")
	}
}

// TestArtifacts: what a tool created outside the files, as its result
// identifies it.
func TestArtifacts(t *testing.T) {
	r := extract(t, one(user("File a ticket.")),
		call("c1", "mcp__linear__create_issue", map[string]string{"title": "Fix gc"}, `{"id":"u1","identifier":"ENT-242","title":"Fix gc","state":{"name":"Backlog"},"url":"https://x/ENT-242"}`),
		call("c2", "mcp__linear__get_issue", map[string]string{"id": "ENT-1"}, `{"identifier":"ENT-1"}`),
	)
	want := []Artifact{{Tool: "mcp__linear__create_issue", Op: "create", ID: "ENT-242", Title: "Fix gc", State: "Backlog", URL: "https://x/ENT-242", Index: 1}}
	if diff := cmp.Diff(want, r.Artifacts); diff != "" {
		t.Errorf("artifacts (-want +got):\n%s", diff)
	}
}

func TestWorkDir(t *testing.T) {
	for in, want := range map[string]string{
		"git -C /Users/a/cli fsck --full": "/Users/a/cli",
		"cd /w/p && make":                 "/w/p",
		"cd /w && cd p; go test":          "/w/p",
		"cd '/w/my dir' && ls":            "/w/my dir",
		"make":                            "",
	} {
		if got := WorkDir(in); got != want {
			t.Errorf("WorkDir(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"git -C /Users/a/cli fsck --full --no-dangling 2>&1 | head": "git fsck --full --no-dangling 2>&1 | head",
		"cd /w/p && make":        "make",
		"cd /w && cd p; go test": "go test",
		"go   test\n ./...":      "go test ./...",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDeterministic: the same history gives the same record.
func TestDeterministic(t *testing.T) {
	build := func() []history.Message {
		var msgs []history.Message
		msgs = append(msgs, user("Go."))
		msgs = append(msgs, call("c1", "shell", map[string]any{"command": "go test", "b": 1, "a": 2}, `{"output":"x","metadata":{"z":{"exit_code":1},"a":{"exit_code":0}}}`)...)
		msgs = append(msgs, call("c2", "mcp__t__create_issue", map[string]string{}, `{"number":12,"title":"t"}`)...)
		return msgs
	}
	a, _ := Extract(context.Background(), build())
	b, _ := Extract(context.Background(), build())
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two runs differ:\n%s", diff)
	}
	if a.Checks[0].Exit != 0 {
		t.Errorf("nested exit codes are read in key order: got %d", a.Checks[0].Exit)
	}
}

// countingCtx is a context that is cancelled once Err has been asked n times:
// it proves that a loop checks its context while it runs, without timing.
type countingCtx struct {
	context.Context
	left atomic.Int64
	done chan struct{}
}

func newCountingCtx(n int64) *countingCtx {
	c := &countingCtx{Context: context.Background(), done: make(chan struct{})}
	c.left.Store(n)
	return c
}

func (c *countingCtx) Err() error {
	if c.left.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

func (c *countingCtx) Done() <-chan struct{}       { return c.done }
func (c *countingCtx) Deadline() (time.Time, bool) { return time.Time{}, false }

// TestCancelled: Extract returns ctx's error when cancelled before it
// starts and while it reads a large history.
func TestCancelled(t *testing.T) {
	big := strings.Repeat("panic: boom\n", 20<<20/12)
	msgs := []history.Message{user("Go.")}
	for i := range 600 {
		id := fmt.Sprintf("c%d", i)
		out := "ok"
		if i == 0 {
			out = big
		}
		msgs = append(msgs, call(id, "bash", map[string]string{"command": "go test"}, out)...)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Extract(ctx, msgs); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before: err = %v, want context.Canceled", err)
	}
	for _, n := range []int64{1, 3, 5} {
		if _, err := Extract(newCountingCtx(n), msgs); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled after %d checks: err = %v, want context.Canceled", n, err)
		}
	}
}

// TestUserRunCommand: a user-role message that reports a command the user
// ran themselves, with its exit code, is a check, not a request.
func TestUserRunCommand(t *testing.T) {
	r := extract(t, one(user("Why does `make check` fail?")),
		call("c1", "bash", map[string]string{"command": "make check"}, "make: *** [check] Error 1\nExit code: 2"),
		one(user("Ran `make check` myself (exit code 0):\nok")),
		one(user("Ran `make check` again, it is fine: thanks.")),
	)
	if diff := cmp.Diff([]Origin{OriginTyped, OriginAgent, OriginTool, OriginObservation, OriginTyped}, r.Origins); diff != "" {
		t.Errorf("origins (-want +got):\n%s", diff)
	}
	if len(r.Checks) != 2 || r.Checks[1].Command != "make check" || r.Checks[1].Outcome != Passed || r.Checks[0].FixedBy != 1 {
		t.Errorf("checks = %+v", r.Checks)
	}
}

// TestPatchHunksNameTheCode: a patch's hunk headers, or the first context
// line after a bare "@@", say which code changed.
func TestPatchHunksNameTheCode(t *testing.T) {
	patch := "*** Begin Patch\n*** Update File: lib/chat.ts\n@@\n export const handleLocalChat = async (\n-  a\n+  b\n@@ export const fetchChatResponse = async (\n-x\n+y\n*** End Patch"
	r := extract(t, one(user("Go.")), call("c1", "shell", map[string]any{"command": []string{"bash", "-lc", "apply_patch <<'PATCH'\n" + patch + "\nPATCH"}}, `{"output":"Success.","metadata":{"exit_code":0}}`),
		[]history.Message{
			{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: "c2", Name: "apply_patch", Input: "--- a/p.go\n+++ b/p.go\n@@ -1,3 +1,4 @@ func Parse(s string) error {\n-a\n+b"}}},
			history.NewToolResult("c2", "apply_patch", "ok"),
		})
	var got []string
	for _, c := range r.Changes {
		got = append(got, c.Path+": "+strings.Join(c.Where, ", "))
	}
	if diff := cmp.Diff([]string{"lib/chat.ts: handleLocalChat, fetchChatResponse", "p.go: Parse"}, got); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
}

// TestHarnessDetails: the workspace an environment block names, a harness
// complaint as an error, observations without their tag lines, a refusal of
// different edits as one error, a failure behind a passing test summary, and
// a linter code listed as a bullet.
func TestHarnessDetails(t *testing.T) {
	r := extract(t,
		one(user("<environment_context>\n  <cwd>/home/u/app</cwd>\n</environment_context>")),
		one(user("Fix it.")),
		one(assistant("Done, I think.")),
		one(user("No tool calls found in the response. Use a tool.")),
		call("c1", "str_replace_editor", map[string]string{"command": "str_replace", "path": "a.c", "old_str": "x"}, "ERROR:\nNo replacement was performed, old_str `x` did not appear verbatim in a.c."),
		call("c2", "str_replace_editor", map[string]string{"command": "str_replace", "path": "a.c", "old_str": "y"}, "ERROR:\nNo replacement was performed, old_str `y` did not appear verbatim in a.c."),
		call("c3", "bash", map[string]string{"command": "pytest --cov-fail-under=99"}, "Exit code 1\n66 passed in 3.8s\nFAIL Required test coverage of 99% not reached. Total coverage: 98.82%"),
		call("c4", "bash", map[string]string{"command": "pytest --version"}, "<returncode>0</returncode>\n<output>\npytest 6.0.0\n</output>"),
		call("c5", "bash", map[string]string{"command": "flake8 a.py"}, "ERRORS:\n- E999 SyntaxError: unmatched ']'\nExit code: 1"),
	)
	if r.WorkDir != "/home/u/app" {
		t.Errorf("WorkDir = %q", r.WorkDir)
	}
	var errs []string
	for _, e := range r.Errors {
		errs = append(errs, fmt.Sprintf("%s x%d", e.Text, e.Count))
	}
	want := []string{
		"No tool calls found in the response. Use a tool. x1",
		"ERROR: No replacement was performed, old_str `x` did not appear verbatim in a.c. x2",
		"- E999 SyntaxError: unmatched ']' x1",
	}
	if diff := cmp.Diff(want, errs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if d := r.Checks[0].Detail; d != "66 passed in 3.8s; FAIL Required test coverage of 99% not reached. Total coverage: 98.82%" {
		t.Errorf("coverage failure detail = %q", d)
	}
	if out := r.Actions[r.Checks[1].Action].Output; out != "pytest 6.0.0" {
		t.Errorf("observation output = %q, want it without its tag lines", out)
	}
}

// TestHarnessRejectsMalformedCall: a short user-role message right after a
// tool result that says a parameter was wrong is the harness, not the user;
// a submission that later actions follow is not how the record ends.
func TestHarnessRejectsMalformedCall(t *testing.T) {
	r := extract(t, one(user("Fix the parser.")),
		call("c1", "str_replace_editor", map[string]string{"command": "view", "path": "a.c"}, "1 int x;"),
		one(user("Parameter 'command' is expected to be one of ['view', 'create', 'str_replace'].")),
		call("c2", "finish", map[string]string{"message": "done"}, "ok"),
		one(user("Next task: fix the lexer.")),
		call("c3", "bash", map[string]string{"command": "make"}, "Exit code: 2"),
	)
	if r.Origins[3] != OriginHarness || r.Origins[6] != OriginTyped {
		t.Errorf("origins = %v", r.Origins)
	}
	if r.Final.Submitted {
		t.Error("a finish followed by more work counts as how the record ends")
	}
}

// TestHarnessUserCommand: a command the user ran through the harness's tag
// blocks is a check with the output the next block shows.
func TestHarnessUserCommand(t *testing.T) {
	r := extract(t, one(user("Why is CI red?")),
		one(user("<bash-input>make test</bash-input>")),
		one(user("<bash-stdout>--- FAIL: TestA (0.00s)\nFAIL</bash-stdout><bash-stderr>exit status 1</bash-stderr>")),
	)
	if len(r.Checks) != 1 || r.Checks[0].Command != "make test" || r.Checks[0].Outcome != Failed || r.Checks[0].Exit != 1 {
		t.Errorf("checks = %+v", r.Checks)
	}
	if r.Origins[1] != OriginInjected || r.Origins[2] != OriginInjected {
		t.Errorf("origins = %v", r.Origins)
	}
}
