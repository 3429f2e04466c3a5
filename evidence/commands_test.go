package evidence

import (
	"slices"
	"testing"
)

// TestCommandsInChainsAndScripts: rule "commands in chains and scripts"
// (Claude Code's multi-line Bash scripts that start with `cd DIR`, chains
// such as `git commit --amend && git push --force-with-lease`): each
// simple command that changes or runs something is listed once, latest
// last, with the line it last ran in; inspections (silenced or not),
// builtins, heredoc bodies and commands that ran as lines of their own are
// not; a short single line is left to its check.
func TestCommandsInChainsAndScripts(t *testing.T) {
	r := extract(t,
		call("s1", "Bash", map[string]string{"command": "cd /repo\ngit rm -r --cached __pycache__ >/dev/null && echo \"untracked\"\ngit status --short 2>&1 | head -5\ncat > notes.txt <<'EOF'\nrm -rf /\nEOF"}, " D __pycache__/x.pyc"),
		call("s2", "Bash", map[string]string{"command": "git add -A && git commit --amend -m init && git log --oneline -3 && git push --force-with-lease origin main"}, "[main 9a558b6] init\n"),
		call("s3", "Bash", map[string]string{"command": "make test"}, "ok\nExit code: 0"),
		call("s4", "Bash", map[string]string{"command": "cd /repo\nmake test && python3 -m pip install --quiet entsoe-py 2>&1 | tail -3"}, "Exit code: 0"),
		call("s5", "Bash", map[string]string{"command": "cd /repo\ngit rm -r --cached __pycache__ && make test"}, "Exit code: 0"),
	)
	var got []string
	for _, c := range r.Commands(0) {
		got = append(got, c.Text)
	}
	want := []string{"cat > notes.txt <<'EOF'", "git add -A", "git commit --amend -m init", "git push --force-with-lease origin main", "python3 -m pip install --quiet entsoe-py 2>&1", "git rm -r --cached __pycache__"}
	if !slices.Equal(got, want) {
		t.Errorf("commands = %q,\nwant %q", got, want)
	}
	cmds := r.Commands(0)
	if last := cmds[len(cmds)-1]; last.Runs != 2 || last.Check != 4 {
		t.Errorf("git rm = %+v, want 2 runs, last in check 4", last)
	}
	// A line short enough to be shown whole by its check is not split.
	for _, c := range r.Commands(200) {
		if c.Text == "git push --force-with-lease origin main" {
			t.Errorf("the short chain was split: %q", c.Text)
		}
	}
}

// TestCaughtExceptionIsAnError: rule "caught exception" (a script that
// catches an exception and prints it in a log line, Claude Code running
// Python with requests): the exception in parentheses is an error, and the
// same error for different URLs is one, counted.
func TestCaughtExceptionIsAnError(t *testing.T) {
	r := extract(t, call("p", "Bash", map[string]string{"command": "python3 fetch.py --date 2026-07 2>&1 | tail -20"},
		"  ! NO_2: no price (HTTPError: 429 Client Error: Too Many Requests for url: https://api.example/price?bzn=NO2)\n  ! PL: no price (HTTPError: 429 Client Error: Too Many Requests for url: https://api.example/price?bzn=PL)\n  (see the notes above)\ndone"))
	if len(r.Errors) != 1 || r.Errors[0].Count != 2 || r.Errors[0].Kind != ErrException ||
		r.Errors[0].Text != "HTTPError: 429 Client Error: Too Many Requests for url: https://api.example/price?bzn=NO2" {
		t.Errorf("errors = %+v, want the one HTTPError, seen twice", r.Errors)
	}
}

// TestClaimOfALineAsSpelled: a summary may name a command as the record
// spells it, "cd DIR &&" and all; a claim about it is checked against that
// line's last run.
func TestClaimOfALineAsSpelled(t *testing.T) {
	r := extract(t,
		call("a", "Bash", map[string]string{"command": "cd client && npm run lint"}, "Exit code: 0"),
		call("b", "Bash", map[string]string{"command": "cd client ;  npm run lint"}, "✖ 8 problems (1 error, 7 warnings)\nExit code: 1"),
	)
	if got := Contradictions("- passed: `cd client ; npm run lint`", r); len(got) != 1 {
		t.Errorf("contradictions = %q, want the failed last run", got)
	}
	if got := Contradictions("- failed: `cd client ; npm run lint` (exit 1)", r); len(got) != 0 {
		t.Errorf("a true claim is contradicted: %q", got)
	}
}

// TestCommitSubject: the subject of the commit a line writes, in each way
// agents pass the message.
func TestCommitSubject(t *testing.T) {
	for cmd, want := range map[string]string{
		"git add -A && git commit -m 'fix(sdk): stabilize newlines' && git push":                    "fix(sdk): stabilize newlines",
		"git commit -m \"$(cat <<'EOF'\nfeat: tar support\n\nBody.\nEOF\n)\"":                       "feat: tar support",
		"cd /r && git commit -q -F - <<'MSGEOF'\nfix(experiments): bind the commit\n\nMore\nMSGEOF": "fix(experiments): bind the commit",
		"git -C /r commit --amend --no-edit":                                                        "",
		"make test":                                                                                 "",
	} {
		if got := CommitSubject(cmd); got != want {
			t.Errorf("CommitSubject(%q) = %q, want %q", cmd, got, want)
		}
	}
}

// TestPushByItsReport: a push is known by git's report of it or a stack
// tool's, whatever command ran it; a fetch's report or a document that
// describes the output is none.
func TestPushByItsReport(t *testing.T) {
	r := extract(t, call("s", "Bash", map[string]string{"command": "gh stack push"}, "Pushing 4 branches to origin...\n✓ Pushed 4 branches\n"))
	if !r.Final.Pushed {
		t.Error("gh stack's report is no push")
	}
	r = extract(t, call("g", "Bash", map[string]string{"command": "./scripts/ship.sh"}, "To github.com:o/r.git\n   5996b102..eb1f71d0  feat/x -> feat/x\n"))
	if !r.Final.Pushed {
		t.Error("git's push report is no push")
	}
	r = extract(t,
		call("f", "Bash", map[string]string{"command": "git pull --ff-only origin main"}, "From github.com:o/r\n   50f7129..e5471d5  main       -> origin/main\n"),
		call("d", "Bash", map[string]string{"command": "sed -n '1,40p' SKILL.md"}, "- `Pushed N branches` summary\n✓ Pushed 4 branches\n"),
	)
	if r.Final.Pushed {
		t.Error("a fetch or a document read is a push")
	}
}
