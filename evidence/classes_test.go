package evidence

import (
	"slices"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
)

// TestCodexInstructionsAreInjected: Codex opens the user role with
// "# AGENTS.md instructions for DIR" and an <INSTRUCTIONS> block, then the
// environment; the user's request is the first typed message.
func TestCodexInstructionsAreInjected(t *testing.T) {
	r := extract(t, []history.Message{
		user("# AGENTS.md instructions for /home/u/app\n\n<INSTRUCTIONS>\n# Repository Guidelines\n- Never store tokens in localStorage.\n- Use pnpm.\n</INSTRUCTIONS>"),
		user("<environment_context>\n  <cwd>/home/u/app</cwd>\n  <approval_policy>on-request</approval_policy>\n</environment_context>"),
		user("Add dark mode to the settings page."),
	})
	if want := []Origin{OriginInjected, OriginInjected, OriginTyped}; !slices.Equal(r.Origins, want) {
		t.Errorf("origins = %v, want %v", r.Origins, want)
	}
	// A typed message that merely starts with a heading stays typed.
	r = extract(t, []history.Message{user("# Bug\nThe parser drops the last line.")})
	if r.Origins[0] != OriginTyped {
		t.Errorf("a typed heading is %v", r.Origins[0])
	}
}

// TestRmIsAChange: rm of a glob deletes the files the record names that it
// matches; the line is no inspection.
func TestRmIsAChange(t *testing.T) {
	r := extract(t,
		call("w1", "Bash", map[string]string{"command": "cat > test_repro.py <<'EOF'\nimport x\nEOF"}, ""),
		call("w2", "Bash", map[string]string{"command": "cat > test_more.py <<'EOF'\nimport y\nEOF"}, ""),
		call("w3", "Edit", map[string]string{"file_path": "src/skipping.py", "old_string": "a", "new_string": "b"}, "The file src/skipping.py has been updated."),
		call("rm", "Bash", map[string]string{"command": "rm -f test_*.py"}, ""),
	)
	var deleted []string
	for _, c := range r.Changes {
		if c.Op == Deleted {
			deleted = append(deleted, c.Path)
		}
	}
	if strings.Join(deleted, " ") != "test_repro.py test_more.py" {
		t.Errorf("deleted = %q, want test_repro.py test_more.py", deleted)
	}
	if IsInspection("rm -f test_*.py") {
		t.Error("rm is an inspection")
	}
	if got := strings.Join(r.Uncommitted(), " "); got != "src/skipping.py" {
		t.Errorf("uncommitted = %q, want only src/skipping.py (the scratch files were made and removed)", got)
	}
}

// TestCommitSeenThroughGitLog: `git commit … | tail -1` hides the commit
// line; the git log after it shows the commit, newest first, and the edits
// before it are committed.
func TestCommitSeenThroughGitLog(t *testing.T) {
	r := extract(t,
		call("c0", "Bash", map[string]string{"command": "git commit -m 'docs' && git log --oneline -1"}, "[main 1111111] docs\n 1 file changed\n1111111 docs"),
		call("e1", "Edit", map[string]string{"file_path": "/repo/a.go", "old_string": "a", "new_string": "b"}, "The file /repo/a.go has been updated."),
		call("c1", "Bash", map[string]string{"command": "git add -A && git commit -m 'feat: dark mode' | tail -1"}, " 1 file changed, 3 insertions(+)"),
		call("l1", "Bash", map[string]string{"command": "git log --oneline -3"}, "9f8e7d6 (HEAD -> main) feat: dark mode\n1111111 docs\n0000000 init"),
	)
	n := len(r.Final.Commits)
	if n != 2 || r.Final.Commits[n-1].Ref != "9f8e7d6" {
		t.Fatalf("commits = %+v, want the last one 9f8e7d6", r.Final.Commits)
	}
	if u := r.Uncommitted(); len(u) != 0 {
		t.Errorf("uncommitted = %q, want none", u)
	}
	// A git log with no commit before it records nothing.
	r = extract(t, call("l1", "Bash", map[string]string{"command": "git log -1"}, "commit 9f8e7d6aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\nAuthor: A <a@b>\nDate:   Mon\n\n    feat: x"))
	if len(r.Final.Commits) != 0 {
		t.Errorf("a git log alone made commits %+v", r.Final.Commits)
	}
}

// TestTaskNotificationEndsTheTask: Claude Code's <task-notification> for a
// background command reports how it ended.
func TestTaskNotificationEndsTheTask(t *testing.T) {
	r := extract(t,
		call("b1", "Bash", map[string]string{"command": "pytest -x tests/", "run_in_background": "true"}, "Command running in background with ID: bash_3"),
		[]history.Message{user("<task-notification>\n<task-id>bash_3</task-id>\n<status>failed</status>\n<summary>Background command \"pytest -x tests/\" failed with exit code 143</summary>\n</task-notification>")},
	)
	c := r.Checks[0]
	if c.Outcome != Failed || !c.HasExit || c.Exit != 143 {
		t.Errorf("check = %s exit %d (%v), want failed 143", c.Outcome, c.Exit, c.HasExit)
	}
	r = extract(t,
		call("b1", "Bash", map[string]string{"command": "make build", "run_in_background": "true"}, "Command running in background with ID: bash_4"),
		[]history.Message{user("<task-notification>\n<task-id>bash_4</task-id>\n<status>completed</status>\n<summary>Background command \"make build\" completed (exit code 0)</summary>\n</task-notification>")},
	)
	if c := r.Checks[0]; c.Outcome != Passed {
		t.Errorf("completed task: %s", c.Outcome)
	}
}

// TestContradictionsOfEachClass: a summary that guesses an outcome, keeps a
// fixed failure or a finished process as a next step, calls a changed file
// only read, names an older commit as the last, or says no checks ran
// beside a check it names, is caught; the true lines are not.
func TestContradictionsOfEachClass(t *testing.T) {
	r := extract(t,
		[]history.Message{user("Fix the parser.")},
		call("c1", "Bash", map[string]string{"command": "git commit -m 'wip'"}, "[main 1111111] wip"),
		call("c2", "Bash", map[string]string{"command": "git commit -m 'fix'"}, "[main 2222222] fix"),
		call("s1", "Bash", map[string]string{"command": "./scripts/smoke.sh"}, "smoke: 3 error lines in the log\ndone"),
		call("g1", "Bash", map[string]string{"command": "grep -rn TODO src"}, "Exit code 1"),
		call("t1", "Bash", map[string]string{"command": "go test ./parser/"}, "Exit code 1\n--- FAIL: TestParse\nFAIL\texample.com/m/parser\t0.01s"),
		call("e1", "Edit", map[string]string{"file_path": "parser/parse.go", "old_string": "a", "new_string": "b"}, "The file parser/parse.go has been updated."),
		call("t2", "Bash", map[string]string{"command": "go test -count=1 ./parser/"}, "ok  \texample.com/m/parser\t0.01s"),
		call("b1", "Bash", map[string]string{"command": "go build ./...", "run_in_background": "true"}, "Command running in background with ID: bash_9"),
		[]history.Message{user("<task-notification>\n<task-id>bash_9</task-id>\n<status>completed</status>\n<summary>exit code 0</summary>\n</task-notification>")},
	)
	bad := []string{
		"- failed: `./scripts/smoke.sh` (its output reports errors)",
		"- failed: `grep -rn TODO src` (exit 1)",
		"1. Fix the failure of `go test ./parser/` (exit 1) and re-run it.",
		"2. Poll `go build ./...` until it finishes and record its exit code.",
		"- `parser/parse.go`: read",
		"- Final state: the last 1111111 \"wip\"",
	}
	got := Contradictions(strings.Join(bad, "\n"), r)
	if len(got) != len(bad) {
		t.Errorf("found %d contradictions, want %d:\n%s", len(got), len(bad), strings.Join(got, "\n"))
	}
	none := "## Checks\nnone\n\n## Last action and result\n- Final state: last check `go test -count=1 ./parser/` passed"
	if got := Contradictions(none, r); len(got) != 1 || !strings.Contains(got[0], "no checks ran") {
		t.Errorf("'Checks: none' beside a named check: %q", got)
	}
	good := []string{
		"- ran: `./scripts/smoke.sh` (outcome not reported; last line: `done`)",
		"- found no match: `grep -rn TODO src` (exit 1)",
		"- failed: `go test ./parser/` (exit 1); fixed by a later run of `go test -count=1 ./parser/` that passed",
		"- `parser/parse.go`: read, modified",
		"- Final state: 2 commits, the last 2222222 \"fix\"",
	}
	if got := Contradictions(strings.Join(good, "\n"), r); len(got) != 0 {
		t.Errorf("true lines reported:\n%s", strings.Join(got, "\n"))
	}
}

// TestSubAgentWritesAreWrites: a Claude Code Agent (or Task) call whose
// report says it created and modified files changed them; an Explore
// sub-agent that only read changes nothing.
func TestSubAgentWritesAreWrites(t *testing.T) {
	r := extract(t,
		call("a1", "Agent", map[string]string{"description": "Add the importer", "prompt": "Add an opencode importer.", "subagent_type": "general-purpose"},
			"Done. Summary of the work:\n\n**Files created:**\n- `transcript/opencode.go` - the importer\n- `transcript/opencode_test.go`\n\n- Modified `transcript/transcript.go` to register it.\n\nagentId: a1b2c3"),
		call("a2", "Task", map[string]string{"description": "Explore ZIP processing", "prompt": "Explore how ZIP files are processed.", "subagent_type": "Explore"},
			"ZIP files are detected in `deep_manifest/deep_manifest.py` (is_zip_archive) and processed recursively."),
	)
	got := map[string]Op{}
	for _, c := range r.Changes {
		got[c.Path] = c.Op
	}
	want := map[string]Op{"transcript/opencode.go": Created, "transcript/opencode_test.go": Created, "transcript/transcript.go": Modified}
	if len(got) != len(want) {
		t.Errorf("changes = %v, want %v", got, want)
	}
	for p, op := range want {
		if got[p] != op {
			t.Errorf("%s: %q, want %q", p, got[p], op)
		}
	}
}

// TestCommitAfterALongHook: git's report of a commit comes after a long
// pre-commit hook's output, and in a command line that failed after the
// commit; it is the commit, with git's summary line of it.
func TestCommitAfterALongHook(t *testing.T) {
	hook := strings.Repeat("[EvaluationRepository] Deleted evaluation eval-to-delete\n", 400) // ≈ 23 KB
	failedPush := call("c2", "Bash", map[string]string{"command": "git commit -am 'Second' && git push"},
		"[main 1b2c3d4] Second\n 1 file changed, 2 insertions(+)\nerror: failed to push some refs")
	failedPush[1] = flagged(failedPush[1])
	r := extract(t,
		[]history.Message{user("Commit it.")},
		call("c1", "Bash", map[string]string{"command": "git add -A && git commit -m 'Consolidate the files'"},
			hook+" 1290 pass\n 0 fail\n$ tsc --noEmit\n[main 0ac166e] Consolidate the files\n 12 files changed, 643 insertions(+), 22 deletions(-)\n create mode 100644 src/a.ts"),
		failedPush,
	)
	var got []string
	for _, c := range r.Final.Commits {
		got = append(got, c.Ref+" "+c.Message+" ("+c.Stat+")")
	}
	want := []string{"0ac166e Consolidate the files (12 files changed, 643 insertions(+), 22 deletions(-))", "1b2c3d4 Second (1 file changed, 2 insertions(+))"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("commits:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestAnswersAndProposal: the results of a call that asks the user are the
// user's answers; a plan proposed for approval is read with the file it was
// written to and whether the user took it.
func TestAnswersAndProposal(t *testing.T) {
	plan := "# Plan: Split the store\n\n## Steps\n1. Move the reads to store/read.go"
	r := extract(t,
		[]history.Message{user("Plan the split.")},
		call("q1", "AskUserQuestion", map[string]any{"questions": []map[string]any{{"question": "Keep the old API?", "options": []map[string]string{{"label": "yes"}, {"label": "no"}}}}},
			`User has answered your questions: "Keep the old API?"="no, never keep it". You can now continue with these answers in mind.`),
		call("w1", "Write", map[string]string{"file_path": "/home/u/.claude/plans/a.md", "content": plan}, "File created successfully"),
		call("x1", "ExitPlanMode", map[string]string{"plan": plan}, "User has approved your plan."),
	)
	if len(r.Answers) != 1 || !strings.Contains(r.Answers[0].Text, `"Keep the old API?"="no, never keep it"`) {
		t.Errorf("answers: %+v", r.Answers)
	}
	p := r.Proposal
	if p == nil || p.Title != "Plan: Split the store" || p.Path != "/home/u/.claude/plans/a.md" || p.State != "approved" {
		t.Errorf("proposal: %+v", p)
	}
}

// TestExecHeaderIsNotOutput: Codex's exec_command header (chunk id, wall
// time, exit line, token count) gives the exit code and is not the output;
// a line saying the process still runs stays.
func TestExecHeaderIsNotOutput(t *testing.T) {
	r := extract(t,
		call("c1", "exec_command", map[string]string{"cmd": "codex exec --ask-for-approval never"}, "Chunk ID: 870503\nWall time: 0.0120 seconds\nProcess exited with code 2\nOriginal token count: 20\nOutput:\nerror: unexpected argument '--ask-for-approval' found\n"),
		call("c2", "exec_command", map[string]string{"cmd": "npm run dev"}, "Chunk ID: 1\nWall time: 10.0 seconds\nProcess running with session ID 31\nOriginal token count: 2\nOutput:\nready\n"),
	)
	a := r.Actions[0]
	if !a.HasExit || a.Exit != 2 || a.Output != "error: unexpected argument '--ask-for-approval' found\n" {
		t.Errorf("first: exit %d (%v), output %q", a.Exit, a.HasExit, a.Output)
	}
	if got := r.Actions[1].Output; got != "Process running with session ID 31\nready\n" {
		t.Errorf("second: output %q", got)
	}
	for _, e := range r.Errors {
		if strings.Contains(e.Text, "Chunk ID") {
			t.Errorf("a header line is an error: %q", e.Text)
		}
	}
}

// TestWorktreeFromGit: the paths git status shows and the commit after it
// did not take (git add named others) are not committed; git diff --stat
// after the last commit gives the uncommitted totals; a commit -a takes the
// tracked paths, not the untracked ones.
func TestWorktreeFromGit(t *testing.T) {
	status := "On branch main\nChanges not staged for commit:\n  (use \"git add <file>...\" to update what will be committed)\n\tmodified:   .claude/settings.json\n\tmodified:   src/app.ts\n\tdeleted:    src/old.ts\n\nUntracked files:\n  (use \"git add <file>...\" to include in what will be committed)\n\t.cursor/\n\tsrc/new.ts\n\nno changes added to commit (use \"git add\" and/or \"git commit -a\")"
	r := extract(t,
		call("s1", "Bash", map[string]string{"command": "git status"}, status),
		call("c1", "Bash", map[string]string{"command": "git add src/app.ts src/ && git commit -m 'app'"}, "[main 1a2b3c4] app\n 3 files changed, 9 insertions(+)"),
		call("d1", "Bash", map[string]string{"command": "git diff --stat"}, " .claude/settings.json | 3 +\n 1 file changed, 3 insertions(+)"),
	)
	var got []string
	for _, d := range r.Worktree.Dirty {
		got = append(got, d.Path+" "+d.State)
	}
	if strings.Join(got, ", ") != ".claude/settings.json modified, .cursor/ untracked" {
		t.Errorf("not committed: %v", got)
	}
	if r.Worktree.DiffStat != "1 file changed, 3 insertions(+)" {
		t.Errorf("diff stat %q", r.Worktree.DiffStat)
	}
	r = extract(t,
		call("s1", "Bash", map[string]string{"command": "git status --short"}, " M src/app.ts\n?? notes.md\n"),
		call("c1", "Bash", map[string]string{"command": "git commit -am 'app'"}, "[main 1a2b3c4] app\n 1 file changed, 1 insertion(+)"),
	)
	if len(r.Worktree.Dirty) != 1 || r.Worktree.Dirty[0] != (Dirty{Path: "notes.md", State: "untracked"}) {
		t.Errorf("after commit -a: %+v", r.Worktree.Dirty)
	}
}

// TestOneTaskPerCallPlan: tasks created one per call (the id from the
// result) and updated by id are the agent's plan, with their statuses.
func TestOneTaskPerCallPlan(t *testing.T) {
	r := extract(t,
		call("t1", "TaskCreate", map[string]string{"subject": "Implement story 2.2", "description": "x"}, "Task #1 created successfully: Implement story 2.2"),
		call("t2", "TaskCreate", map[string]string{"subject": "Review story 2.2", "description": "y"}, "Task #2 created successfully: Review story 2.2"),
		call("u0", "TaskUpdate", map[string]any{"taskId": "2", "addBlockedBy": []string{"1"}}, "Updated task #2"),
		call("u1", "TaskUpdate", map[string]string{"taskId": "1", "status": "completed"}, "Updated task #1 status"),
		call("u2", "TaskUpdate", map[string]string{"taskId": "2", "status": "in_progress"}, "Updated task #2 status"),
		call("i1", "create_issue", map[string]string{"subject": "Bug", "body": "z"}, "Created issue #7"),
	)
	p := r.Plan
	if p == nil || len(p.Items) != 2 {
		t.Fatalf("plan: %+v", p)
	}
	if p.Items[0] != (PlanItem{Text: "Implement story 2.2", Status: "completed", ID: "1"}) || p.Items[1] != (PlanItem{Text: "Review story 2.2", Status: "in_progress", ID: "2"}) {
		t.Errorf("items: %+v", p.Items)
	}
	if a := p.Active(); a != 1 {
		t.Errorf("active item %d", a)
	}
}

// TestOpencodeApplyPatch: opencode's apply_patch gives its patch as
// patchText; the files it adds and updates are changes.
func TestOpencodeApplyPatch(t *testing.T) {
	r := extract(t, call("p1", "apply_patch", map[string]string{"patchText": "*** Begin Patch\n*** Add File: /repo/docs/plan.md\n+# Plan\n*** Update File: /repo/README.md\n@@\n-a\n+b\n*** End Patch"}, "Success. Updated the following files:\nA docs/plan.md\nM README.md"))
	if got := strings.Join(changes(r.Changes), ", "); !strings.Contains(got, "/repo/docs/plan.md") || !strings.Contains(got, "/repo/README.md") {
		t.Errorf("changes: %s", got)
	}
}

// TestBranchAndPush: the branch the work is on, and whether its last
// commit was pushed.
func TestBranchAndPush(t *testing.T) {
	r := extract(t,
		call("b1", "Bash", map[string]string{"command": "git checkout -b methodology-rework"}, "Switched to a new branch 'methodology-rework'"),
		call("c1", "Bash", map[string]string{"command": "git commit -am 'rework'"}, "[methodology-rework 6ddd049] rework\n 4 files changed, 705 insertions(+), 39 deletions(-)"),
	)
	if r.Final.Branch != "methodology-rework" || r.Final.PushedAt != -1 {
		t.Errorf("branch %q pushed at %d", r.Final.Branch, r.Final.PushedAt)
	}
	r = extract(t,
		call("c1", "Bash", map[string]string{"command": "git commit -am 'fix' && git push"}, "[fix/short 1a2b3c4] fix\n 1 file changed, 1 insertion(+)\nTo github.com:o/r.git"),
	)
	if r.Final.Branch != "fix/short" || r.Final.PushedAt != r.Final.Commits[0].Index {
		t.Errorf("branch %q pushed at %d", r.Final.Branch, r.Final.PushedAt)
	}
	// The range a push reported; a later push that printed nothing has none.
	push := call("p1", "Bash", map[string]string{"command": "git push 2>&1 | tail -3"}, "To https://github.com/o/r.git\n   c1a49bf0..7e1ba229  sync -> sync")
	if r = extract(t, push); r.Final.PushedRefs != "c1a49bf0..7e1ba229 sync -> sync" {
		t.Errorf("pushed refs %q", r.Final.PushedRefs)
	}
	if r = extract(t, append(push, call("p2", "Bash", map[string]string{"command": "git push -q"}, "")...)); r.Final.PushedRefs != "" {
		t.Errorf("pushed refs %q after a push that reported none", r.Final.PushedRefs)
	}
	// A branch made with the worktree that holds the work.
	r = extract(t,
		call("w1", "Bash", map[string]string{"command": "git worktree add ../wt/docs -b feat/trace-docs origin/main"}, "Preparing worktree (new branch 'feat/trace-docs')"),
	)
	if r.Final.Branch != "feat/trace-docs" {
		t.Errorf("branch %q after git worktree add -b", r.Final.Branch)
	}
}

// TestPassedCommandPrintsNoErrors: the error lines a command that exited 0
// printed (tests of error paths) are not errors; those of a piped command,
// whose exit hides what ran first, still are.
func TestPassedCommandPrintsNoErrors(t *testing.T) {
	r := extract(t,
		call("c1", "exec_command", map[string]string{"cmd": "bun run test"}, "Process exited with code 0\nOutput:\nerror: Database connection failed\n 1290 pass\n 0 fail\n"),
		call("c2", "exec_command", map[string]string{"cmd": "bun run build | tail -3"}, "Process exited with code 0\nOutput:\nerror: Cannot find module 'x'\n"),
	)
	var got []string
	for _, e := range r.Errors {
		got = append(got, e.Text)
	}
	if strings.Join(got, "\n") != "error: Cannot find module 'x'" {
		t.Errorf("errors: %q", got)
	}
}

// TestCommitReportIsTheOutcome: with no exit code in the record, git's
// report of the commit a command line ends with is its outcome.
func TestCommitReportIsTheOutcome(t *testing.T) {
	r := extract(t,
		call("c1", "shell", map[string]string{"command": "git add a.py && git commit -m 'a'"}, "[main 6946b78] a\n 1 file changed, 3 insertions(+)\n create mode 100644 a.py"),
		call("c2", "shell", map[string]string{"command": "git commit -m 'b' && git push"}, "[main 7a7a7a7] b\n 1 file changed"),
	)
	if got := r.Checks[0].Outcome; got != Passed {
		t.Errorf("commit: %v", got)
	}
	if got := r.Checks[1].Outcome; got == Passed {
		t.Errorf("commit then push, no push report: %v", got)
	}
}

// TestPullRequestFromShell: gh pr create's printed URL is a created pull
// request; a failed create is none.
func TestPullRequestFromShell(t *testing.T) {
	r := extract(t,
		call("p0", "exec_command", map[string]string{"cmd": "gh pr create --fill"}, "Process exited with code 1\nOutput:\na pull request for branch \"x\" already exists:\nhttps://github.com/o/r/pull/12"),
		call("p1", "exec_command", map[string]string{"cmd": "git push -u origin x && gh pr create --title t --body b"}, "Process exited with code 0\nOutput:\nhttps://github.com/o/r/pull/13\n"),
	)
	if len(r.Artifacts) != 1 || r.Artifacts[0].URL != "https://github.com/o/r/pull/13" || r.Artifacts[0].Op != "create" {
		t.Errorf("artifacts: %+v", r.Artifacts)
	}
}

// TestInlineScriptIdentity: rule "inline script identity" (Claude Code Bash
// heredocs, Codex bash -lc, python -c, node -e). Two runs that read the same
// up to their script are different commands when their scripts differ; a
// rerun of the same script shares the digest; a commit message or a file's
// text written through cat is no script.
func TestInlineScriptIdentity(t *testing.T) {
	a := ".venv/bin/python - <<'PY'\nimport app\nassert app.tools() == 3\nPY"
	b := ".venv/bin/python - <<'PY'\nimport app\nprint(len(app.routes()))\nPY"
	if Script(a) == "" || Script(a) == Script(b) {
		t.Errorf("heredoc scripts: %q and %q", Script(a), Script(b))
	}
	if Script(a) != Script("cd /w && .venv/bin/python - <<'PY'\nimport   app\nassert app.tools() == 3\nPY") {
		t.Error("the same script (another folder prefix, other spacing) has another digest")
	}
	for _, c := range []string{`python3 -c 'import a; a.run()'`, `bash -lc "go test ./..."`, `node -e 'console.log(1)'`} {
		if Script(c) == "" {
			t.Errorf("Script(%q) is empty", c)
		}
	}
	for _, c := range []string{"git commit -q -F - <<'MSG'\nFix it\nMSG", "cat > a.txt <<'EOF'\nhello\nEOF", `gh pr create --body "$(cat <<'EOF'` + "\nbody\nEOF\n)\"", "go test ./..."} {
		if Script(c) != "" {
			t.Errorf("Script(%q) = %q, want none", c, Script(c))
		}
	}
}

// TestScriptRevisionFixes: rule "script revision" (Claude Code: a heredoc
// assertion fails, the agent edits the heredoc and runs it again). A failed
// inline script is fixed by a later passing run of a revision of it (most of
// its lines kept); an unrelated script run through the same interpreter
// fixes nothing, and the claim checker tells the scripts apart.
func TestScriptRevisionFixes(t *testing.T) {
	body := "import app\nfrom pathlib import Path\nroot = Path('src')\nnames = app.names(root)\n"
	failed := ".venv/bin/python - <<'PY'\n" + body + "assert names == ['a']\nPY"
	revised := ".venv/bin/python - <<'PY'\n" + body + "assert names == ['a', 'b']\nPY"
	other := ".venv/bin/python - <<'PY'\nimport json\nprint(json.dumps({}))\nPY"
	fail := call("s1", "Bash", map[string]string{"command": failed}, "Exit code 1\nAssertionError")
	fail[1] = flagged(fail[1])
	r := extract(t,
		fail,
		call("s2", "Bash", map[string]string{"command": other}, "{}"),
	)
	if r.Checks[0].Outcome != Failed || r.Checks[1].Outcome != Passed {
		t.Fatalf("outcomes %v %v", r.Checks[0].Outcome, r.Checks[1].Outcome)
	}
	if r.Checks[0].FixedBy >= 0 {
		t.Errorf("an unrelated script fixed the failure: FixedBy = %d", r.Checks[0].FixedBy)
	}
	shown := ".venv/bin/python - <<'PY' …" + ScriptMark(failed)
	if c := Contradictions("- failed: `"+shown+"` (exit 1)", r); len(c) != 0 {
		t.Errorf("the failed script is said to have passed later: %q", c)
	}
	if c := Contradictions("- passed: `"+shown+"`", r); len(c) == 0 {
		t.Error("saying the failed script passed is no contradiction")
	}
	r = extract(t,
		fail,
		call("s3", "Bash", map[string]string{"command": revised}, "ok"),
	)
	if r.Checks[0].FixedBy != 1 {
		t.Errorf("the revised script's pass did not fix the failure: FixedBy = %d", r.Checks[0].FixedBy)
	}
}

// TestCommitSeenThroughGitShow: rule "commit seen through git show" (Claude
// Code amends quietly and shows HEAD): `git commit -q --amend && git show
// --stat --oneline HEAD` records the amended commit; a git show of another
// revision records nothing.
func TestCommitSeenThroughGitShow(t *testing.T) {
	r := extract(t,
		call("c1", "Bash", map[string]string{"command": "git commit -qm 'fix: waf fields' && git log --oneline -1"}, "c292888 fix: waf fields"),
		call("c2", "Bash", map[string]string{"command": `git rm -q "a 2.py" && git commit -q --amend --no-edit && git show --stat --oneline HEAD | head -6`}, "f59b0a2 fix: waf fields\n a.py | 4 ++--\n 1 file changed"),
	)
	n := len(r.Final.Commits)
	if n == 0 || r.Final.Commits[n-1].Ref != "f59b0a2" {
		t.Errorf("commits = %+v, want the last one f59b0a2 (the amend)", r.Final.Commits)
	}
	r = extract(t,
		call("c1", "Bash", map[string]string{"command": "git commit -q -m 'x'"}, ""),
		call("s1", "Bash", map[string]string{"command": "git show --oneline --stat 1111111"}, "1111111 older\n a.py | 1 +"),
	)
	if len(r.Final.Commits) != 0 {
		t.Errorf("a git show of another revision made commits %+v", r.Final.Commits)
	}
}

// TestStaleSaidOfACheckThatRanAfterTheEdit: "not re-run since the edit of
// `P`" is a contradiction when the check ran after P's last change, and a
// true one when it did not.
func TestStaleSaidOfACheckThatRanAfterTheEdit(t *testing.T) {
	r := extract(t,
		call("t1", "Bash", map[string]string{"command": "pnpm test"}, " Tests  24 passed (24)"),
		call("e1", "Edit", map[string]string{"file_path": "/w/app/src/page.tsx", "old_string": "a", "new_string": "b"}, "The file /w/app/src/page.tsx has been updated."),
		call("t2", "Bash", map[string]string{"command": "pnpm test"}, " Tests  24 passed (24)"),
		call("e2", "Edit", map[string]string{"file_path": "/w/app/src/list.tsx", "old_string": "a", "new_string": "b"}, "The file /w/app/src/list.tsx has been updated."),
	)
	if c := Contradictions("- Stale check: `pnpm test` passed, not re-run since the edit of `src/page.tsx`", r); len(c) == 0 {
		t.Error("a check that ran after the edit is said to be stale, and no contradiction is found")
	}
	if c := Contradictions("1. Re-run `pnpm test` (it passed): not re-run since the edit of `/w/app/src/list.tsx`.", r); len(c) != 0 {
		t.Errorf("a true stale claim is a contradiction: %q", c)
	}
}

// TestSpelledJoinsLines: rule "lines as the shell runs them" (Codex
// code-mode scripts that call the shell several times, multi-line Bash
// calls): a summary spells a multi-line command with its lines joined by
// "; " (a line that continues joins with a space, a quoted newline stays
// inside its quotes), and Contradictions reads that spelling as the command.
func TestSpelledJoinsLines(t *testing.T) {
	for cmd, want := range map[string]string{
		"vp test run\nvp check\ngit diff --name-only": "vp test run; vp check; git diff --name-only",
		"cd /w && make \\\n  test\nmake lint":         "make test; make lint",
		"pnpm build &&\npnpm test":                    "pnpm build && pnpm test",
		"for f in a b; do\n  echo $f\ndone":           "for f in a b; do echo $f; done",
		"git commit -m 'one\ntwo'\ngit push":          "git commit -m 'one two'; git push",
		"python - <<'PY'\nprint(1)\nPY":               "python - <<'PY' print(1) PY",
	} {
		if got := Spelled(cmd); got != want {
			t.Errorf("Spelled(%q) = %q, want %q", cmd, got, want)
		}
	}
	fail := call("c1", "Bash", map[string]string{"command": "vp test run\nvp check"}, "Exit code 1\n Tests  1 failed | 25 passed (26)")
	fail[1] = flagged(fail[1])
	r := extract(t, fail)
	if c := Contradictions("- passed: `vp test run; vp check`", r); len(c) == 0 {
		t.Error("saying the failed two-line command passed is no contradiction")
	}
}
