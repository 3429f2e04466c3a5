package offline

import (
	"encoding/json"
	"strings"
	"testing"

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
		"Uncommitted edits (no commit in the record): `lib/chat.ts`",
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
		"Uncommitted edits (after the last commit 70f2781): `manifest/core.py`, `tests/test_core.py`",
		"Stale check: `pytest tests/` passed, not re-run since the edit of `tests/test_core.py`",
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
