package offline

import (
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
)

// TestCommandsInsideScriptsSurvive: a multi-line script names its commands
// only past its first line, which the checks list clips; the commands
// section lists them with the outcome of the line they ran in, in the
// line's words (a line's exit code is not one command's).
func TestCommandsInsideScriptsSurvive(t *testing.T) {
	got := whole(t, join(
		[]history.Message{userMsg("Untrack the cache and push the amended commit.")},
		shell("s1", "cd /repo\ngit rm -r --cached __pycache__ >/dev/null && echo untracked\ngit commit --amend -m init && git push --force-with-lease origin main", "untracked\n[main 9a558b6] init\nExit code: 0"),
		shell("s2", "cd /repo\npython3 -m pip install --quiet entsoe-py 2>&1 | tail -3\npython3 run.py", "ERROR: no matching distribution\nExit code: 1"),
	), 0, "")
	cmds := section(got, secCommands)
	for _, want := range []string{
		"- `git rm -r --cached __pycache__ >/dev/null` (line exited 0)",
		"- `git push --force-with-lease origin main` (line exited 0)",
		"- `python3 -m pip install --quiet entsoe-py 2>&1` (line exited 1)",
	} {
		if !strings.Contains(cmds, want) {
			t.Errorf("commands lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(cmds, "echo") || strings.Contains(cmds, "tail") {
		t.Errorf("commands list builtins or inspections:\n%s", cmds)
	}
}
