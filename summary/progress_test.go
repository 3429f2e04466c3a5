package summary

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/evidence"
	"github.com/vtcode/vtcode-ls/history"
)

func jsonCall(id, name string, args any, out string) []history.Message {
	a, _ := json.Marshal(args)
	return []history.Message{
		{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: id, Name: name, Arguments: string(a)}}},
		history.NewToolResult(id, name, out),
	}
}

// TestWorkInProgressFirst: a Codex rollout cut in the middle of its plan's
// second step: the summary opens with the plan verbatim, the active item
// and the uncommitted file, and its next steps finish the active item and
// then name the next open one, never the first request.
func TestWorkInProgressFirst(t *testing.T) {
	plan := func(s1, s2 string) map[string]any {
		return map[string]any{"plan": []map[string]string{
			{"step": "Inspect the chat handler and the stream parser.", "status": s1},
			{"step": "Implement the LM Studio request in handleLocalChat.", "status": s2},
			{"step": "Run lint and the tests, then summarize.", "status": "pending"},
		}}
	}
	msgs := join(
		[]history.Message{userMsg("Switch the chat from Ollama to LM Studio.")},
		jsonCall("c1", "shell", map[string]any{"command": []string{"bash", "-lc", "rg -n OLLAMA"}, "workdir": "/home/u/chat"}, `{"output":"","metadata":{"exit_code":1,"duration_seconds":0.1}}`),
		jsonCall("p1", "update_plan", plan("in_progress", "pending"), "Plan updated"),
		jsonCall("p2", "update_plan", plan("completed", "in_progress"), "Plan updated"),
		jsonCall("c2", "shell", map[string]any{"command": []string{"bash", "-lc", "apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: lib/chat.ts\n@@\n-a\n+b\n*** End Patch\nPATCH"}, "workdir": "/home/u/chat"},
			`{"output":"Success. Updated the following files:\nM lib/chat.ts\n","metadata":{"exit_code":0,"duration_seconds":0.0}}`),
	)
	got := whole(t, msgs, 0, "")
	if !strings.HasPrefix(got, "## Work in progress\n") {
		t.Fatalf("summary does not open with the work in progress:\n%s", got)
	}
	wip := section(got, "Work in progress")
	for _, want := range []string{
		"Uncommitted edits (no commit in the record): `/home/u/chat/lib/chat.ts`", // the path resolved against the call's workdir, whole
		"Plan (update_plan, as last written, 3 items):",
		"  - [completed] Inspect the chat handler and the stream parser.",
		"  - [in_progress] Implement the LM Studio request in handleLocalChat.",
		"  - [pending] Run lint and the tests, then summarize.",
		"Active plan item: Implement the LM Studio request in handleLocalChat.",
	} {
		if !strings.Contains(wip, want) {
			t.Errorf("work in progress lacks %q:\n%s", want, wip)
		}
	}
	if d := section(got, "What was just being done"); !strings.HasPrefix(d, "- Active item of the agent's plan (update_plan): Implement the LM Studio request") {
		t.Errorf("what was being done is not the active item:\n%s", d)
	}
	next := section(got, "Next steps")
	if !strings.HasPrefix(next, "1. Finish the active plan item: Implement the LM Studio request in handleLocalChat.") {
		t.Errorf("next steps do not start with the active item:\n%s", next)
	}
	if !strings.Contains(next, "Then the next open plan item: Run lint and the tests, then summarize.") {
		t.Errorf("next steps lack the next open item:\n%s", next)
	}
	for _, bad := range []string{"Continue with the latest user request", "Fix the failure of `rg"} {
		if strings.Contains(got, bad) {
			t.Errorf("summary says %q:\n%s", bad, got)
		}
	}
	if !strings.Contains(section(got, "Checks"), "found no match: `rg -n OLLAMA`") {
		t.Errorf("rg exit 1 without output is not 'no match':\n%s", section(got, "Checks"))
	}
}

// TestStaleCheckAndCommitNext: Claude Code edits after its last commit and
// after the test run that passed: the summary says the test is stale and
// what is uncommitted, and the next steps re-run the test, then commit.
func TestStaleCheckAndCommitNext(t *testing.T) {
	edit := func(id, p string) []history.Message {
		return jsonCall(id, "Edit", map[string]string{"file_path": p, "old_string": "a", "new_string": "b"}, "The file "+p+" has been updated. Here's the result of running `cat -n` on a snippet of the edited file:")
	}
	msgs := join(
		[]history.Message{userMsg("Report corrupted archives in the manifest.")},
		edit("e1", "/src/m/manifest/core.py"),
		jsonCall("t1", "Bash", map[string]string{"command": "pytest tests/"}, "============ 40 passed in 1.20s ============"),
		jsonCall("g1", "Bash", map[string]string{"command": "git add -A && git commit -m 'feat: tar'"}, "[master 70f2781] feat: tar\n 3 files changed"),
		edit("e2", "/src/m/manifest/core.py"),
		edit("e3", "/src/m/tests/test_core.py"),
		[]history.Message{history.NewText(history.Assistant, "Both edits are in.")},
	)
	got := whole(t, msgs, 0, "")
	wip := section(got, "Work in progress")
	for _, want := range []string{
		"Uncommitted edits (after the last commit 70f2781): `/src/m/manifest/core.py`, `/src/m/tests/test_core.py`",
		"Stale check: `pytest tests/` passed, not re-run since the edit of `/src/m/tests/test_core.py`",
	} {
		if !strings.Contains(wip, want) {
			t.Errorf("work in progress lacks %q:\n%s", want, got)
		}
	}
	next := section(got, "Next steps")
	re, commit := strings.Index(next, "Re-run `pytest tests/`"), strings.Index(next, "Commit the uncommitted edits")
	if re < 0 || commit < 0 || re > commit {
		t.Errorf("next steps should re-run the stale test, then commit:\n%s", next)
	}
}

// TestStaleChecksBeyondTheListAreNamed: more passed checks are stale than
// the section lists; the line that counts the rest names the short ones,
// which a resuming agent must re-run.
func TestStaleChecksBeyondTheListAreNamed(t *testing.T) {
	edit := func(id, p string) []history.Message {
		return jsonCall(id, "Edit", map[string]string{"file_path": p, "old_string": "a", "new_string": "b"}, "The file "+p+" has been updated. Here's the result of running `cat -n` on a snippet of the edited file:")
	}
	var parts [][]history.Message
	parts = append(parts, []history.Message{userMsg("Rename the trace schema.")}, edit("e0", "/src/app/trace.ts"))
	for i, c := range []string{"bun run test", "bun run lint", "bun run typecheck", "bun run build", "bun run format:check"} {
		parts = append(parts, jsonCall(fmt.Sprintf("c%d", i), "Bash", map[string]string{"command": c}, "Chunk ID: 1\nProcess exited with code 0\nOutput:\ndone"))
	}
	parts = append(parts, edit("e1", "/src/app/trace.ts"), edit("e2", "/src/app/tests/trace.test.ts"))
	got := whole(t, join(parts...), 0, "")
	wip := section(got, "Work in progress")
	for _, c := range []string{"bun run test", "bun run lint", "bun run typecheck", "bun run build", "bun run format:check"} {
		if !strings.Contains(wip, "`"+c+"`") {
			t.Errorf("stale check %q is not named:\n%s", c, got)
		}
	}
}

// TestProposedPlanIsTheWorkInProgress: a plan the agent wrote to a plan
// file and proposed for approval, which the user rejected, is the work in
// progress (its title, file and state), and the next step waits for the
// user instead of carrying the plan out.
func TestProposedPlanIsTheWorkInProgress(t *testing.T) {
	plan := "# Plan: Cache the report queries\n\n## Context\nThe report page runs 40 queries.\n\n## Steps\n1. Add a cache in report/store.go\n2. Invalidate it on write"
	got := whole(t, join(
		[]history.Message{userMsg("Plan how to make the report page faster.")},
		tool("w1", "Write", map[string]string{"file_path": "/home/u/.claude/plans/calm-river.md", "content": plan}, "File created successfully"),
		flaggedTool("x1", "ExitPlanMode", map[string]string{"plan": plan}, "The user doesn't want to proceed with this tool use. The tool use was rejected."),
	), 0, "")
	wip := section(got, "Work in progress")
	for _, want := range []string{
		"Proposed plan (rejected): \"Plan: Cache the report queries\", written to `/home/u/.claude/plans/calm-river.md`",
		"Plan text: # Plan: Cache the report queries / ## Context / The report page runs 40 queries.",
	} {
		if !strings.Contains(wip, want) {
			t.Errorf("work in progress lacks %q:\n%s", want, got)
		}
	}
	if next := section(got, "Next steps"); !strings.HasPrefix(next, "1. Wait for the user's decision on the proposed plan \"Plan: Cache the report queries\" (rejected)") {
		t.Errorf("the next step does not wait for the user:\n%s", got)
	}
	// A second compaction, with nothing new about the plan, carries it.
	second := whole(t, join([]history.Message{history.NewText(history.System, evidence.SummaryHeading+"\n"+got), userMsg("Wait, first tell me what the queries are.")}), 0, "")
	if !strings.Contains(section(second, "Work in progress"), "Proposed plan (rejected): \"Plan: Cache the report queries\"") {
		t.Errorf("the second summary lost the proposed plan:\n%s", second)
	}
}

// TestUserMessagesVerbatim: every message the user typed is carried whole
// (on one line, not clipped to a request line), the latest first, through a
// second compaction, and not listed again as a later request; a harness
// injection is not among them.
func TestUserMessagesVerbatim(t *testing.T) {
	long := "we need to fetch commit date time to be able to filter and sort, and the table should show the agent, the model and the number of tokens of each checkpoint, grouped by the day of the commit, newest first; the filters go above the table"
	first := whole(t, join(
		[]history.Message{userMsg("Build the metrics dashboard.")},
		shell("c1", "npm run build", "built in 2.1s"),
		[]history.Message{userMsg(long)},
		[]history.Message{userMsg("<system-reminder>\nThe todo list is empty.\n</system-reminder>")},
		[]history.Message{userMsg("c")},
	), 0, "")
	u := section(first, secUser)
	if !strings.HasPrefix(u, "- c\n- "+long+"\n") {
		t.Errorf("the user's messages, latest first:\n%s", first)
	}
	if strings.Contains(u, "todo list") {
		t.Errorf("a harness injection is among the user's messages:\n%s", u)
	}
	second := whole(t, join([]history.Message{history.NewText(history.System, evidence.SummaryHeading+"\n"+first), userMsg("yes, lets make it responsive\nand dark")}), 0, "")
	if u := section(second, secUser); !strings.HasPrefix(u, "- yes, lets make it responsive and dark\n- c\n- "+long+"\n") {
		t.Errorf("the second summary's user messages:\n%s", second)
	}
	if strings.Contains(section(second, secGoal), "responsive") {
		t.Errorf("a message shown verbatim is listed again as a request:\n%s", second)
	}
}

// TestLongInstructionsLeaveRoomForTheWork: a long AGENTS.md is carried
// whole, and the summary's own sections keep their room beside it.
func TestLongInstructionsLeaveRoomForTheWork(t *testing.T) {
	rules := strings.Repeat("- Run `mise run test` before committing; keep commands in cmd/.\n", 200) // ≈ 13 KB
	got := whole(t, join(
		[]history.Message{userMsg("# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\n" + strings.TrimSpace(rules) + "\n</INSTRUCTIONS>"), userMsg("Fix the login test.")},
		flaggedTool("c1", "Bash", map[string]string{"command": "go test ./login/"}, "Exit code 1\n--- FAIL: TestLogin (0.00s)\nFAIL"),
		tool("e1", "Edit", map[string]string{"file_path": "/repo/login/login.go", "old_string": "a", "new_string": "b"}, "ok"),
	), 2500, "")
	if !strings.Contains(got, strings.TrimSpace(rules)) {
		t.Fatalf("the instructions are not whole")
	}
	for _, want := range []string{"`go test ./login/`", "login/login.go"} {
		if !strings.Contains(section(got, "Checks")+section(got, "Files read or changed"), want) {
			t.Errorf("the sections lack %q beside long instructions:\n%s", want, got[:min(len(got), 3000)])
		}
	}
}

// TestAnswersAreTheUsersWords: the user's answers to the agent's questions
// are among the user's messages.
func TestAnswersAreTheUsersWords(t *testing.T) {
	got := whole(t, join(
		[]history.Message{userMsg("Plan the dashboard.")},
		jsonCall("q1", "AskUserQuestion", map[string]any{"questions": []map[string]any{{"question": "Push when done?", "options": []map[string]string{{"label": "yes"}}}}},
			`User has answered your questions: "Push when done?"="push, and make sure it is connected to a checkpoint; never force-push". You can now continue with these answers in mind.`),
	), 0, "")
	if !strings.Contains(section(got, secUser), `"Push when done?"="push, and make sure it is connected to a checkpoint; never force-push"`) {
		t.Errorf("the answer is not among the user's messages:\n%s", got)
	}
}

// TestGitStatusIsWorkInProgress: what git status and git diff --stat said
// after the last commit is in the work in progress, and naming those paths
// as modified is no contradiction.
func TestGitStatusIsWorkInProgress(t *testing.T) {
	got := whole(t, join(
		[]history.Message{userMsg("Commit the stories.")},
		shell("s1", "git status", "On branch main\nChanges not staged for commit:\n\tmodified:   .claude/settings.json\n\tmodified:   docs/story.md\n"),
		shell("c1", "git add docs/story.md && git commit -m 'stories'", "[main 98c813f] stories\n 1 file changed, 30 insertions(+)"),
		shell("d1", "git diff --stat", " .claude/settings.json | 3 +\n 1 file changed, 3 insertions(+)"),
	), 0, "")
	wip := section(got, "Work in progress")
	for _, want := range []string{"Not committed per git status: modified `.claude/settings.json`", "Uncommitted diff per git diff --stat: 1 file changed, 3 insertions(+)"} {
		if !strings.Contains(wip, want) {
			t.Errorf("work in progress lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(wip, "docs/story.md") {
		t.Errorf("a committed path is listed as not committed:\n%s", wip)
	}
}

// TestLongGitStatusKeepsItsPaths: a git status of 40 paths (modified,
// deleted, untracked) after the last commit keeps every path in the work in
// progress, grouped by state; one of 400 keeps what fits its bound and says
// how many more the git status shows.
func TestLongGitStatusKeepsItsPaths(t *testing.T) {
	status := func(n int) (string, []string) {
		var b strings.Builder
		var paths []string
		for i := range n {
			st := [...]string{" M", " D", "??"}[i%3]
			p := fmt.Sprintf("tools/lint/plugin/rules/rule_%03d.ts", i)
			paths = append(paths, p)
			b.WriteString(st + " " + p + "\n")
		}
		return b.String(), paths
	}
	out, paths := status(40)
	got := whole(t, join([]history.Message{userMsg("Migrate the linter.")}, shell("s1", "git status --short", out)), 0, "")
	wip := section(got, "Work in progress")
	for _, p := range paths {
		if !strings.Contains(wip, "`"+p+"`") {
			t.Errorf("work in progress lacks %s:\n%s", p, wip)
		}
	}
	for _, st := range []string{"modified `", "deleted `", "untracked `"} {
		if !strings.Contains(wip, st) {
			t.Errorf("work in progress does not group the paths by state (%q):\n%s", st, wip)
		}
	}
	out, _ = status(400)
	got = whole(t, join([]history.Message{userMsg("Migrate the linter.")}, shell("s1", "git status --short", out)), 0, "")
	if wip := section(got, "Work in progress"); !strings.Contains(wip, "more (the git status at message") {
		t.Errorf("a status of 400 paths does not say how many more it shows:\n%s", wip)
	}
}

// TestReplyEndIsKept: a long last reply is quoted from its start, and its
// last line, which is what it leaves the user to answer, is kept too.
func TestReplyEndIsKept(t *testing.T) {
	long := strings.Repeat("The integration work is done and every file passes the analyzer. ", 12)
	got := whole(t, join(
		[]history.Message{userMsg("Integrate the profiles.")},
		shell("c1", "dart analyze lib/", "No issues found!\nExit code: 0"),
		[]history.Message{history.NewText(history.Assistant, long+"\n\nReady for commit/push: shall I commit to main?")},
	), 0, "")
	if !strings.Contains(section(got, "Last action and result"), "- The reply ends: Ready for commit/push: shall I commit to main?") {
		t.Errorf("the reply's end is lost:\n%s", got)
	}
}

// TestEveryCommitWithItsSubject: the commits section lists every commit,
// oldest first, each hash with its subject, the last with git's summary
// line.
func TestEveryCommitWithItsSubject(t *testing.T) {
	got := whole(t, join(
		[]history.Message{userMsg("Build the server.")},
		shell("c1", "git commit -am 'one'", "[main 6946b78] one\n 1 file changed"),
		shell("c2", "git commit -am 'two'", "[main f072acf] two\n 1 file changed"),
		shell("c3", "git commit -am 'three'", "[main f562e2a] three\n 2 files changed, 5 insertions(+)"),
	), 0, "")
	if commits, want := section(got, secCommits), "- 6946b78 one\n- f072acf two\n- f562e2a three (2 files changed, 5 insertions(+))"; strings.TrimSpace(commits) != want {
		t.Errorf("commits = %q, want %q:\n%s", commits, want, got)
	}
	if strings.Contains(section(got, secChecks), "outcome not reported") {
		t.Errorf("a commit git reported is an unknown outcome:\n%s", got)
	}
}

// TestSentMessageIsTheLastReport: when the agent's last call sends a
// message to another agent, its text is in the last action's lines.
func TestSentMessageIsTheLastReport(t *testing.T) {
	got := whole(t, join(
		[]history.Message{userMsg("Do INT-1 to INT-5.")},
		jsonCall("m1", "SendMessage", map[string]any{"type": "message", "recipient": "team-lead", "summary": "done", "content": "All 5 integration tasks are done with zero analyzer issues. Ready for commit/push."}, "Message sent to team-lead's inbox"),
	), 0, "")
	if !strings.Contains(section(got, "Last action and result"), "- Message sent to team-lead: All 5 integration tasks are done with zero analyzer issues. Ready for commit/push.") {
		t.Errorf("the message is lost:\n%s", got)
	}
}

// TestFinalStateNamesThePullRequest: the final state names the pull request
// a command opened.
func TestFinalStateNamesThePullRequest(t *testing.T) {
	got := whole(t, join(
		[]history.Message{userMsg("Open the PR.")},
		shell("c1", "git commit -am 'ui'", "[feat/ui e2c15e5] ui\n 2 files changed\nExit code: 0"),
		shell("c2", "git push -u origin feat/ui && gh pr create --fill", "https://github.com/o/r/pull/13\nExit code: 0"),
	), 0, "")
	if !strings.Contains(section(got, "Last action and result"), "; pushed; opened https://github.com/o/r/pull/13") {
		t.Errorf("the final state lacks the pull request:\n%s", got)
	}
}

// TestPlanNoteIsCarried: Codex's update_plan carries an explanation beside
// its items, the agent's own word on where the work stands; the work in
// progress quotes it under the plan, and a later compaction keeps it.
func TestPlanNoteIsCarried(t *testing.T) {
	note := "PR #75 was the only open PR. The old DeepSource thread remains formally unresolved; fresh hosted checks are still running."
	msgs := join(
		[]history.Message{userMsg("Address the review comments.")},
		jsonCall("p1", "update_plan", map[string]any{"explanation": note, "plan": []map[string]string{
			{"step": "Fix the findings", "status": "completed"},
			{"step": "Verify thread and check status", "status": "completed"},
		}}, "Plan updated"),
	)
	got := whole(t, msgs, 0, "")
	if want := "  - " + wipPlanNote + " " + note; !strings.Contains(section(got, secWIP), want) {
		t.Errorf("work in progress lacks %q:\n%s", want, got)
	}
	again := whole(t, []history.Message{history.NewText(history.System, evidence.SummaryHeading+"\n"+got), userMsg("Go on.")}, 0, "")
	if !strings.Contains(again, note) {
		t.Errorf("a later compaction lost the plan's note:\n%s", again)
	}
}

// TestUserStopIsWorkInProgress: rule "user interrupt" (Claude Code writes
// "[Request interrupted by user]" in the user's turn): the work in progress
// quotes it and names the step the agent's turn stopped after; a message
// the user typed later answers it.
func TestUserStopIsWorkInProgress(t *testing.T) {
	msgs := join(
		[]history.Message{userMsg("Find the latest Qwen architecture.")},
		jsonCall("b1", "Bash", map[string]string{"command": "pip show transformers"}, "Version: 4.57.0"),
		[]history.Message{userMsg("[Request interrupted by user]")},
	)
	got := whole(t, msgs, 0, "")
	if want := wipStopped + ` "[Request interrupted by user]" after the last message the user typed: the agent's turn did not finish (its last step: Bash ` + "`pip show transformers`)"; !strings.Contains(section(got, secWIP), want) {
		t.Errorf("work in progress lacks %q:\n%s", want, got)
	}
	got = whole(t, append(msgs, userMsg("Go on with the search.")), 0, "")
	if strings.Contains(got, wipStopped) {
		t.Errorf("a stop the user answered is still work in progress:\n%s", got)
	}
}

// TestUnconfirmedCommit: the record ends on a git commit with no result;
// the work in progress names its subject and says it is not confirmed.
func TestUnconfirmedCommit(t *testing.T) {
	msgs := join(
		[]history.Message{userMsg("Commit and push the review fixes.")},
		[]history.Message{{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: "g1", Name: "Bash", Arguments: `{"command":"git add -A && git commit -q -F - <<'MSG'\nfix(experiments): bind the commit\n\nBody.\nMSG\ngit push"}`}}}},
	)
	got := whole(t, msgs, 0, "")
	if want := wipUnconfirmed + ` the record ends on the git commit of "fix(experiments): bind the commit", with no result`; !strings.Contains(section(got, secWIP), want) {
		t.Errorf("work in progress lacks %q:\n%s", want, got)
	}
}

// TestInlineScriptsAreNoStaleChecks: a one-off script given inline (python
// -c, node -e, or a heredoc fed to the interpreter, as Claude Code runs its
// assertions) is not a check a later edit makes stale; a test run is.
func TestInlineScriptsAreNoStaleChecks(t *testing.T) {
	for cmd, want := range map[string]bool{
		".venv/bin/python - <<'PY'\nimport app\nassert app.check()\nPY": false,
		"python3 <<EOF\nimport unittest\nEOF":                           false,
		`python -c 'import app; app.test()'`:                            false,
		".venv/bin/python -m pytest tests/test_app.py -q":               true,
	} {
		if got := staleCandidate(cmd); got != want {
			t.Errorf("staleCandidate(%q) = %v, want %v", cmd, got, want)
		}
	}
}
