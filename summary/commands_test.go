package summary

import (
	"fmt"
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

// TestEveryUserMessageSurvives: in a long session every message the user
// typed keeps some form in the summary: short ones whole, long ones cut
// with a marker, the latest whole; none is dropped while the bound allows.
func TestEveryUserMessageSurvives(t *testing.T) {
	var msgs []history.Message
	for i := range 30 {
		text := fmt.Sprintf("Request %02d: make the piece cooldown %d seconds.", i, i)
		if i%3 == 0 {
			text += " " + strings.Repeat("Some long explanation of the rule. ", 20)
		}
		msgs = append(msgs, userMsg(text), history.NewText(history.Assistant, "Done."))
	}
	msgs = append(msgs, userMsg("Now commit it."))
	got := whole(t, msgs, 3200, "")
	said := section(got, secUser)
	for i := 1; i < 30; i++ {
		if want := fmt.Sprintf("Request %02d: make the piece cooldown %d seconds.", i, i); !strings.Contains(said, want) {
			t.Errorf("message %d is lost:\n%s", i, said)
		}
	}
	if !strings.Contains(said, "- Now commit it.\n") || !strings.Contains(said, " bytes cut]") {
		t.Errorf("want the latest whole and the long ones cut with a marker:\n%s", said)
	}
	if strings.Contains(said, "omitted") {
		t.Errorf("messages omitted although the bound allows all:\n%s", said)
	}
}

// TestPastedLogKeepsTheRequestAtItsEnd: a user message that pastes a log
// and types the request after it keeps both ends when it is cut.
func TestPastedLogKeepsTheRequestAtItsEnd(t *testing.T) {
	paste := strings.Repeat(`{"step": "deployment_succeeded", "status": "passed"}`+"\n", 60)
	got := whole(t, []history.Message{
		userMsg("Show the deployment evidence in the UI."),
		history.NewText(history.Assistant, "Done."),
		userMsg("Evidence\n" + paste + "Just hide it from the UI for now, maybe we can use this later"),
		history.NewText(history.Assistant, "Hidden."),
		userMsg("Thanks. Now run the tests."),
	}, 0, "")
	said := section(got, secUser)
	if !strings.Contains(said, "Just hide it from the UI for now, maybe we can use this later") || !strings.Contains(said, "- Evidence {") || !strings.Contains(said, " bytes cut] … ") {
		t.Errorf("the pasted message lost an end:\n%s", said)
	}
}
