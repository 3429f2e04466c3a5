package evidence

import (
	"context"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
)

func errorTexts(t *testing.T, msgs []history.Message) string {
	t.Helper()
	rec, err := Extract(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range rec.Errors {
		b.WriteString(e.Text + "\n")
	}
	return b.String()
}

// TestReadOutputIsNotAnError: error-like lines in what a read or search
// printed (source code that raises, a test that calls t.Fatalf with
// "error") are file content, not errors; the same lines printed by a run
// are, and so is a failed read.
func TestReadOutputIsNotAnError(t *testing.T) {
	src := "pkg/a_test.go:53: t.Fatalf(\"Detect() error = %v\", err)\nValueError: could not parse"
	var msgs []history.Message
	msgs = append(msgs, user("Fix the parser."))
	msgs = append(msgs, call("g1", "Grep", map[string]any{"pattern": "Fatalf"}, src)...)
	msgs = append(msgs, call("r1", "Read", map[string]any{"file_path": "pkg/a.py"}, src)...)
	msgs = append(msgs, call("b1", "Bash", map[string]any{"command": "grep -rn Fatalf pkg | head"}, src)...)
	if got := errorTexts(t, msgs); got != "" {
		t.Errorf("errors from read output:\n%s", got)
	}
	msgs = append(msgs, call("b2", "Bash", map[string]any{"command": "python -m pkg"}, "ValueError: could not parse\nExit code 1")...)
	msgs = append(msgs, call("b3", "Bash", map[string]any{"command": "cat missing.txt"}, "cat: missing.txt: No such file or directory\nExit code 1")...)
	got := errorTexts(t, msgs)
	for _, want := range []string{"ValueError: could not parse", "No such file or directory"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
}

// TestIsInspection: pipelines of read-only commands are inspections; a
// redirection, sed -i, a heredoc or any other program is not.
func TestIsInspection(t *testing.T) {
	for cmd, want := range map[string]bool{
		"ls -la":                                   true,
		"nl -ba src/x.py | sed -n '1,40p'":         true,
		"grep -rn foo src && git diff src/x.py":    true,
		"cd /repo && git status":                   true,
		"sed -i 's/a/b/' x.py":                     false,
		"cat > x.py <<'EOF'\nx\nEOF":               false,
		"grep foo x.py > out.txt":                  false,
		"pytest tests/":                            false,
		"ls && make":                               false,
		"git commit -m x":                          false,
		"ls -la /w | grep -E '^\\.|^d' | head -20": true,
		`grep -n "a > b; c" x.py`:                  true,
		"echo $(rm -rf x)":                         false,
		"ls 'unterminated":                         false,
	} {
		if got := IsInspection(cmd); got != want {
			t.Errorf("IsInspection(%q) = %v, want %v", cmd, got, want)
		}
	}
}

// TestRefusalWithoutWords: a harness reply whose first line is a bare
// number (an exit code printed in a tag) adds no error.
func TestRefusalWithoutWords(t *testing.T) {
	msgs := []history.Message{
		user("Fix the bug in x.py."),
		assistant("THOUGHT: look.\n\n```bash\nls\n```"),
		user("<returncode>0</returncode>\n<output>\nx.py\n</output>"),
		assistant("THOUGHT: two at once.\n\n```bash\ncat x.py\n```\n\n```bash\ncat y.py\n```"),
		user("<returncode>0</returncode>\n<output>\nx = 1\n</output>"),
	}
	if got := errorTexts(t, msgs); strings.Contains("\n"+got, "\n0\n") {
		t.Errorf("a bare exit code is listed as an error: %q", got)
	}
}

// TestPipedFailureIsAFailure: a run whose exit status a pipe hid (| tail)
// failed when its output says so: a linter's issue count, make's
// "*** Error", a task runner's "ERROR … failed"; "0 issues" is no failure.
func TestPipedFailureIsAFailure(t *testing.T) {
	for out, want := range map[string]Outcome{
		"x.go:3:1: unused var (unused)\n1 issues:\n* unused: 1\n[lint] ERROR task failed": Failed,
		"cc -c x.c\nmake: *** [all] Error 2":                                              Failed,
		"✖ 3 problems (3 errors, 0 warnings)":                                             Failed,
		"golangci-lint run ./...\n0 issues.\nok  \tex/pkg\t0.1s":                          Passed,
	} {
		r := extract(t, []history.Message{user("Lint it.")}, call("c1", "Bash", map[string]any{"command": "make lint 2>&1 | tail -20"}, out))
		if len(r.Checks) != 1 || r.Checks[0].Outcome != want {
			t.Errorf("output %q: checks %+v, want outcome %v", out, r.Checks, want)
		}
	}
}

// TestShellWriteThatExitedZeroIsApplied: a heredoc write followed by a run
// whose output is an error message, exit 0: the file was created, not
// rejected.
func TestShellWriteThatExitedZeroIsApplied(t *testing.T) {
	cmd := "cat <<'EOF' > probe.py\nprint('x')\nEOF\npython3 probe.py"
	r := extract(t, []history.Message{user("Check it.")}, call("c1", "bash", map[string]any{"command": cmd}, "<returncode>0</returncode>\n<output>\n'ascii' codec can't decode byte 0xc3\n</output>"))
	if len(r.Rejected) != 0 {
		t.Errorf("rejected: %+v", r.Rejected)
	}
	if len(r.Changes) != 1 || r.Changes[0].Path != "probe.py" {
		t.Errorf("changes: %+v", r.Changes)
	}
}
