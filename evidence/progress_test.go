package evidence

import (
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
)

// TestPlanOfEveryAgent: the plan is the last plan-tool call's list, verbatim
// with statuses, whatever the agent names its tool and fields.
func TestPlanOfEveryAgent(t *testing.T) {
	for _, tc := range []struct {
		name, tool string
		args       any
		result     string
	}{
		{"claude code", "TodoWrite", map[string]any{"todos": []map[string]string{
			{"content": "Add the parser", "status": "completed", "activeForm": "Adding the parser"},
			{"content": "Wire the flag", "status": "in_progress", "activeForm": "Wiring the flag"},
			{"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"},
		}}, "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress."},
		{"codex", "update_plan", map[string]any{"explanation": "x", "plan": []map[string]string{
			{"step": "Add the parser", "status": "completed"},
			{"step": "Wire the flag", "status": "in_progress"},
			{"step": "Run the tests", "status": "pending"},
		}}, "Plan updated"},
		{"opencode", "todowrite", map[string]any{"todos": []map[string]any{
			{"content": "Add the parser", "status": "completed", "priority": "high", "id": "1"},
			{"content": "Wire the flag", "status": "in_progress", "priority": "high", "id": "2"},
			{"content": "Run the tests", "status": "pending", "priority": "low", "id": "3"},
		}}, `[{"content":"Add the parser","status":"completed"}]`},
		{"gemini cli", "write_todos", map[string]any{"todos": []map[string]string{
			{"description": "Add the parser", "status": "completed"},
			{"description": "Wire the flag", "status": "in_progress"},
			{"description": "Run the tests", "status": "pending"},
		}}, "Successfully updated the todo list."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := map[string]any{"todos": []map[string]string{{"content": "Explore", "status": "in_progress"}}}
			r := extract(t, []history.Message{user("Add a --strict flag.")}, call("p0", tc.tool, old, "ok"),
				call("r1", "Read", map[string]string{"file_path": "main.go"}, "package main"),
				call("p1", tc.tool, tc.args, tc.result))
			if r.Plan == nil {
				t.Fatal("no plan")
			}
			if r.Plan.Tool != tc.tool || len(r.Plan.Items) != 3 {
				t.Fatalf("plan = %+v, want the last %s call's 3 items", r.Plan, tc.tool)
			}
			if got := r.Plan.Items[1]; got.Text != "Wire the flag" || got.Status != "in_progress" {
				t.Errorf("item 2 = %+v", got)
			}
			if a := r.Plan.Active(); a != 1 {
				t.Errorf("active = %d, want 1", a)
			}
			if n := r.Plan.NextOpen(); n != 2 {
				t.Errorf("next open = %d, want 2", n)
			}
		})
	}
	// A list without statuses is no plan.
	r := extract(t, call("c1", "multi_read", map[string]any{"files": []map[string]string{{"path": "a.go"}, {"path": "b.go"}}}, "ok"))
	if r.Plan != nil {
		t.Errorf("plan of a list without statuses: %+v", r.Plan)
	}
}

// TestUncommittedAfterTheLastCommit: the edits after the last commit (as git
// printed it) are uncommitted, by path; a scratch file made and removed
// after it is not.
func TestUncommittedAfterTheLastCommit(t *testing.T) {
	r := extract(t,
		call("e1", "Edit", map[string]string{"file_path": "/repo/a.go", "old_string": "x", "new_string": "y"}, "The file /repo/a.go has been updated."),
		call("c1", "Bash", map[string]string{"command": "git commit -am 'a'"}, "[main 1a2b3c4] a\n 1 file changed, 1 insertion(+)"),
		call("e2", "Edit", map[string]string{"file_path": "/repo/b.go", "old_string": "x", "new_string": "y"}, "The file /repo/b.go has been updated."),
		call("w1", "Write", map[string]string{"file_path": "/repo/scratch.py", "content": "print(1)"}, "File created successfully at: /repo/scratch.py"),
		call("e3", "Edit", map[string]string{"file_path": "/repo/a.go", "old_string": "y", "new_string": "z"}, "The file /repo/a.go has been updated."),
		call("rm", "Bash", map[string]string{"command": "rm -f /repo/scratch.py"}, ""),
	)
	if got := strings.Join(r.Uncommitted(), " "); got != "/repo/b.go /repo/a.go" {
		t.Errorf("uncommitted = %q, want /repo/b.go /repo/a.go", got)
	}
	if r.LastCommit() < 0 {
		t.Error("the commit is not seen")
	}
}

func isGoTest(cmd string) bool {
	return strings.Contains(cmd, "go test") || strings.Contains(cmd, "go vet")
}

// TestStaleChecks: a check run before an edit it covers is stale until a
// later run of the same program and target (flags aside) after the edit;
// an edit of documentation, of another package, or a command the shell
// could not run do not make or keep one stale.
func TestStaleChecks(t *testing.T) {
	// Claude Code flags a failed command's result: one it does not flag
	// passed (go vet prints nothing then).
	notFound := call("t4", "Bash", map[string]string{"command": "go test ./cmd/"}, "Exit code 127\n/bin/bash: go: command not found")
	notFound[1] = flagged(notFound[1])
	r := extract(t,
		call("t1", "Bash", map[string]string{"command": "go test ./parser/"}, "ok  \texample.com/m/parser\t0.01s"),
		call("t2", "Bash", map[string]string{"command": "go vet ./..."}, ""),
		call("t3", "Bash", map[string]string{"command": "go test ./lexer/"}, "ok  \texample.com/m/lexer\t0.01s"),
		notFound,
		call("e1", "Edit", map[string]string{"file_path": "parser/parse.go", "old_string": "a", "new_string": "b"}, "The file parser/parse.go has been updated."),
		call("e2", "Edit", map[string]string{"file_path": "README.md", "old_string": "a", "new_string": "b"}, "The file README.md has been updated."),
	)
	var got []string
	for _, s := range r.StaleChecks(isGoTest, func(string) bool { return true }) {
		got = append(got, r.Checks[s.Check].Command+" @ "+s.Path)
	}
	want := "go vet ./... @ parser/parse.go|go test ./parser/ @ parser/parse.go"
	if strings.Join(got, "|") != want {
		t.Errorf("stale = %q, want %q", strings.Join(got, "|"), want)
	}
	r = extract(t,
		call("t1", "Bash", map[string]string{"command": "go test ./parser/"}, "ok  \texample.com/m/parser\t0.01s"),
		call("e1", "Edit", map[string]string{"file_path": "parser/parse.go", "old_string": "a", "new_string": "b"}, "The file parser/parse.go has been updated."),
		call("t2", "Bash", map[string]string{"command": "cd /repo && go test -count=1 -run TestParse ./parser/"}, "ok  \texample.com/m/parser\t0.01s"),
	)
	if s := r.StaleChecks(isGoTest, func(string) bool { return true }); len(s) != 0 {
		t.Errorf("a check re-run with other flags after the edit is stale: %+v", s)
	}
}

// TestSearchWithoutMatch: grep or rg exiting 1 with no output found no
// match; with output, or when another program ends the line, exit 1 is a
// failure.
func TestSearchWithoutMatch(t *testing.T) {
	for _, tc := range []struct {
		cmd, out string
		want     Outcome
	}{
		{`grep -rn "OLLAMA" src`, "Exit code 1", NoMatch},
		{`rg -n "OLLAMA"`, `{"output":"","metadata":{"exit_code":1,"duration_seconds":0.1}}`, NoMatch},
		{`cd /repo && git grep -n Store`, "Process exited with code 1\nWall time: 0.1 seconds\nOutput:\n", NoMatch},
		{`grep -rn "OLLAMA" src`, "Exit code 2\ngrep: src: No such file or directory", Failed},
		{`grep -c x a.txt | sort`, "Exit code 1", Failed},
		{`go test ./...`, "Exit code 1", Failed},
	} {
		r := extract(t, call("c", "Bash", map[string]string{"command": tc.cmd}, tc.out))
		if got := r.Checks[0].Outcome; got != tc.want {
			t.Errorf("%s → %q: outcome %q, want %q", tc.cmd, tc.out, got, tc.want)
		}
	}
}

// TestPlanMergedByID: Cursor's todo_write with merge updates the items it
// names by id (a status alone) and adds new ones.
func TestPlanMergedByID(t *testing.T) {
	r := extract(t,
		call("p1", "todo_write", map[string]any{"merge": false, "todos": []map[string]string{
			{"id": "1", "content": "Add the parser", "status": "in_progress"},
			{"id": "2", "content": "Wire the flag", "status": "pending"},
		}}, "ok"),
		call("p2", "todo_write", map[string]any{"merge": true, "todos": []map[string]string{
			{"id": "1", "status": "completed"},
			{"id": "2", "status": "in_progress"},
			{"id": "3", "content": "Document the flag", "status": "pending"},
		}}, "ok"),
	)
	if r.Plan == nil || len(r.Plan.Items) != 3 {
		t.Fatalf("plan = %+v, want 3 items", r.Plan)
	}
	want := []PlanItem{{"Add the parser", "completed", "1"}, {"Wire the flag", "in_progress", "2"}, {"Document the flag", "pending", "3"}}
	for i, it := range r.Plan.Items {
		if it != want[i] {
			t.Errorf("item %d = %+v, want %+v", i, it, want[i])
		}
	}
}

// TestFixedByABroaderRun: a failure of a narrow run (a test selector, a
// repeat count, a package) is fixed by a later passing run of the same
// program over a target that holds it; not by another program, nor by a
// run of another package.
func TestFixedByABroaderRun(t *testing.T) {
	for _, tc := range []struct {
		failed, later string
		fixed         bool
	}{
		{"go test ./internal/api -run TestCreate -count=300", "go test ./...", true},
		{"cd /repo && go test ./internal/api -run TestCreate", "cd /repo && go test ./internal/...", true},
		{"pytest tests/test_a.py::test_b -x", "pytest tests/", true},
		{"go test ./internal/api -run TestCreate", "go vet ./...", false},
		{"go test ./internal/api -run TestCreate", "go test ./internal/store/", false},
		{"pytest tests/test_a.py", "pytest tests/test_b.py", false},
	} {
		r := extract(t,
			call("c1", "Bash", map[string]string{"command": tc.failed}, "Exit code 1\nFAIL"),
			call("c2", "Bash", map[string]string{"command": tc.later}, "Exit code 0\nok"),
		)
		if got := r.Checks[0].FixedBy >= 0; got != tc.fixed {
			t.Errorf("%q then %q: fixed = %v, want %v", tc.failed, tc.later, got, tc.fixed)
		}
	}
}
