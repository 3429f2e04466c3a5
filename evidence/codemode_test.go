package evidence

import (
	"testing"

	"github.com/vtcode/vtcode-ls/history"
)

// script is a Codex code-mode call: the freeform `exec` tool with a
// JavaScript input, answered by the script's result.
func script(id, input, result string) []history.Message {
	return []history.Message{
		{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: id, Name: "exec", Input: input}}},
		history.NewToolResult(id, "exec", result),
	}
}

// TestCodeModeExec: rule "code-mode exec" (Codex CLI rollouts, the `exec`
// custom tool running JavaScript): the command, folder and output are those
// of the inner tools.exec_command call; a script that calls no shell runs
// no command; a failed script is a failed run; a running one is polled by
// its cell id; a completed script prints no exit code, so only a runner's
// own result line gives its outcome.
func TestCodeModeExec(t *testing.T) {
	r := extract(t,
		script("c1", `const r = await tools.exec_command({"cmd":"git commit -m 'fix(sdk): stabilize newlines' && gh stack rebase","workdir":"/home/u/repo","yield_time_ms":30000}); text(r.output)`,
			"Script completed\nWall time 2.3 seconds\nOutput:\n[phase03/x 79874ca] fix(sdk): stabilize newlines\n 1 file changed, 1 insertion(+)\n"),
		script("c2", "const results = await Promise.all([15,16].map(n => tools.mcp__github_get_pr_info({pr_number: n})));\nfor (const r of results) text(r);\n", "Script completed\nWall time 1.0 seconds\nOutput:\n{}"),
		script("c3", `const r = await tools.exec_command({cmd: "uv run pytest -q", workdir: "/home/u/repo"});
text(r.output);`, "Script running with cell ID 41\nWall time 11.0 seconds\nOutput:\n"),
		call("w1", "wait", map[string]any{"cell_id": "41", "yield_time_ms": 10000}, "Script completed\nWall time 0.0 seconds\nOutput:\n===== 1 failed, 9 passed in 0.52s =====\n"),
		script("c4", `const r = await tools.exec_command({"cmd":"rm -rf build && git diff --check"}); text(r.output)`, "Script failed\nWall time 0.0 seconds\nOutput:\nScript error:\nexec_command failed: rejected: rm -f style commands are not permitted"),
		script("c5", `const r = await tools.exec_command({"cmd":"make check"}); text(r.output)`, "Script completed\nWall time 3.0 seconds\nOutput:\nbuilding\n"),
	)
	if len(r.Checks) != 4 {
		t.Fatalf("checks = %+v, want 4 (the script calling no shell runs none)", r.Checks)
	}
	c := r.Checks[0]
	if c.Command != "git commit -m 'fix(sdk): stabilize newlines' && gh stack rebase" || r.Actions[c.Action].Dir != "/home/u/repo" || c.Outcome != Unknown {
		t.Errorf("first check = %q in %q, %v; want the inner command in its workdir, outcome unknown (what ran after the commit printed no result)", c.Command, r.Actions[c.Action].Dir, c.Outcome)
	}
	if n := len(r.Final.Commits); n != 1 || r.Final.Commits[0].Ref != "79874ca" || r.Final.Commits[0].Message != "fix(sdk): stabilize newlines" {
		t.Errorf("commits = %+v, want 79874ca with its subject", r.Final.Commits)
	}
	if c := r.Checks[1]; c.Command != "uv run pytest -q" || c.Outcome != Failed {
		t.Errorf("polled check = %q %v, want uv run pytest -q failed (the wait's pytest line)", c.Command, c.Outcome)
	}
	if c := r.Checks[2]; c.Outcome != Failed {
		t.Errorf("failed script = %v, want failed", c.Outcome)
	}
	if c := r.Checks[3]; c.Outcome != Unknown {
		t.Errorf("completed script without a result line = %v, want unknown (no exit code printed)", c.Outcome)
	}
	for _, ch := range r.Changes {
		if ch.Path == "tools.exec_command" || ch.Path == "r.output" {
			t.Errorf("the script's JavaScript was read as a shell line: change %+v", ch)
		}
	}
}

// TestStatusLineNeedsAState: git status --short never prints a blank XY;
// a numbered listing before it on the same line is no dirty path.
func TestStatusLineNeedsAState(t *testing.T) {
	r := extract(t, call("s", "Bash", map[string]string{"command": "sed -n '1,3p' notes.md && git status --short"}, "   383\t- a note\n   384\t\n M src/a.go\n"))
	if d := r.Worktree.Dirty; len(d) != 1 || d[0].Path != "src/a.go" {
		t.Errorf("dirty = %+v, want only src/a.go", d)
	}
}

// TestCodeModeApplyPatch: rule "code-mode apply_patch" (Codex CLI rollouts
// whose `exec` scripts edit through tools.apply_patch): the files the patch
// literal names are changed (a "…" literal with \n escapes and a template
// literal alike), beside the inner shell call of the same script; a script
// that only prints a patch-like string without calling apply_patch changes
// nothing.
func TestCodeModeApplyPatch(t *testing.T) {
	r := extract(t,
		script("p1", `const patch = "*** Begin Patch\n*** Update File: /w/app/src/db/schema.ts\n@@\n-import { a } from \"./a\";\n+import { a, b } from \"./a\";\n*** Add File: /w/app/migrations/0005_x.sql\n+CREATE TABLE t (id text);\n*** End Patch";
text(await tools.apply_patch(patch));`, "Script completed\nWall time 0.1 seconds\nOutput:\nSuccess. Updated the following files:\nM /w/app/src/db/schema.ts\nA /w/app/migrations/0005_x.sql\n"),
		script("p2", "const r = await tools.exec_command({cmd: \"pnpm test\", workdir: \"/w/app\"});\nawait tools.apply_patch(`*** Begin Patch\n*** Delete File: /w/app/src/old.ts\n*** End Patch`);\ntext(r.output);", "Script completed\nWall time 3.0 seconds\nOutput:\n Tests  3 passed (3)\n"),
		script("p3", `text("*** Begin Patch\n*** Update File: /w/app/README.md\n*** End Patch");`, "Script completed\nWall time 0.0 seconds\nOutput:\n"),
	)
	got := map[string]Op{}
	for _, c := range r.Changes {
		got[c.Path] = c.Op
	}
	want := map[string]Op{"/w/app/src/db/schema.ts": Modified, "/w/app/migrations/0005_x.sql": Created, "/w/app/src/old.ts": Deleted}
	for p, op := range want {
		if got[p] != op {
			t.Errorf("%s: %q, want %q (changes %+v)", p, got[p], op, r.Changes)
		}
	}
	if len(got) != len(want) {
		t.Errorf("changes = %+v, want only %v", r.Changes, want)
	}
	if len(r.Checks) != 1 || r.Checks[0].Command != "pnpm test" {
		t.Errorf("checks = %+v, want the inner pnpm test", r.Checks)
	}
}
