package summary_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/evidence"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/ledger"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/summary"
)

func step(id, name string, args map[string]string, out string, isErr bool) []history.Message {
	a, _ := json.Marshal(args)
	res := history.NewToolResult(id, name, out)
	if isErr {
		res.Extra = map[string]json.RawMessage{"isError": json.RawMessage("true")}
	}
	return []history.Message{{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: id, Name: name, Arguments: string(a)}}}, res}
}

// TestNoContradictedClaims: on histories whose states are easy to misreport
// (a check that passed and then failed, a rejected edit of a file that was
// read, a call without a result, the same command in two folders, a failure
// a later broader run fixed), the summary claims nothing the record
// contradicts.
func TestNoContradictedClaims(t *testing.T) {
	var msgs []history.Message
	add := func(m ...[]history.Message) {
		for _, x := range m {
			msgs = append(msgs, x...)
		}
	}
	msgs = append(msgs, history.NewText(history.User, "Fix the hook and keep the tests green."))
	add(
		step("c1", "Bash", map[string]string{"command": "go test ./hooks"}, "ok", false),
		step("c2", "Read", map[string]string{"file_path": "/w/cli/hooks.go"}, "package hooks", false),
		step("c3", "Edit", map[string]string{"file_path": "/w/cli/hooks.go", "old_string": "a", "new_string": "b"}, "The user doesn't want to proceed with this tool use.", true),
		step("c4", "Edit", map[string]string{"file_path": "/w/cli/doc.go", "old_string": "a", "new_string": "b"}, "The file /w/cli/doc.go has been updated.", false),
		step("c5", "Bash", map[string]string{"command": "go test ./hooks"}, "Exit code 1\n--- FAIL: TestHook (0.00s)", true),
		step("c6", "Bash", map[string]string{"command": "cd /w/a && make"}, "Exit code 2\nmake: *** [all] Error 1", true),
		step("c7", "Bash", map[string]string{"command": "cd /w/b && make"}, "done", false),
		step("c8", "Bash", map[string]string{"command": "go vet ./lint/"}, "Exit code 1\nvet: x", true),
		step("c9", "Bash", map[string]string{"command": "gofmt -l . && go vet ./lint/"}, "", false),
	)
	msgs = append(msgs, history.Message{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: "c10", Name: "Bash", Arguments: `{"command":"go test ./..."}`}}})
	for _, maxOut := range []int{0, 300} {
		resp, err := summary.New().Summarize(context.Background(), &providers.SummaryRequest{Messages: msgs, MaxOutputTokens: maxOut})
		if err != nil {
			t.Fatal(err)
		}
		rec, err := evidence.Extract(context.Background(), msgs)
		if err != nil {
			t.Fatal(err)
		}
		text := resp.Message.Text()
		if c := ledger.Contradictions(text, rec); len(c) > 0 {
			t.Errorf("max %d: contradicted claims:\n%s\n--- summary:\n%s", maxOut, strings.Join(c, "\n"), text)
		}
		for _, want := range []string{"failed: `go test ./hooks`", "`/w/cli/hooks.go`: read; edit rejected, not applied", "failed: `cd /w/a && make` (exit 2", "passed: `cd /w/b && make`", "Interrupted call c10"} {
			if maxOut == 0 && !strings.Contains(text, want) {
				t.Errorf("summary lacks %q:\n%s", want, text)
			}
		}
	}
}

// TestRecompactionSupersedesEarlierSummary: compacting a history that starts
// with an earlier summary keeps its goal, restrictions and files, but a
// check or a call the new messages settle is told as they settle it.
func TestRecompactionSupersedesEarlierSummary(t *testing.T) {
	first := []history.Message{history.NewText(history.User, "Fix the parser. Never edit the generated lexer.")}
	first = append(first, step("c1", "bash", map[string]string{"command": "go test ./parser"}, "--- FAIL: TestParse (0.00s)\nexit status 1", false)...)
	first = append(first, step("c2", "edit_file", map[string]string{"path": "parser/parse.go"}, "ok", false)...)
	first = append(first, history.Message{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: "c3", Name: "bash", Arguments: `{"command":"go vet ./parser"}`}}})
	resp, err := summary.New().Summarize(context.Background(), &providers.SummaryRequest{Messages: first})
	if err != nil {
		t.Fatal(err)
	}
	s1 := resp.Message.Text()
	if !strings.Contains(s1, "failed: `go test ./parser`") || !strings.Contains(s1, "Interrupted call c3") {
		t.Fatalf("first summary:\n%s", s1)
	}
	second := []history.Message{history.NewText(history.System, "Previous conversation summary:\n"+s1), history.NewText(history.User, "Go on.")}
	second = append(second, step("c3", "bash", map[string]string{"command": "go vet ./parser"}, "exit status 0", false)...)
	second = append(second, step("c4", "bash", map[string]string{"command": "go test ./parser"}, "ok\nexit status 0", false)...)
	resp, err = summary.New().Summarize(context.Background(), &providers.SummaryRequest{Messages: second})
	if err != nil {
		t.Fatal(err)
	}
	s2 := resp.Message.Text()
	rec, err := evidence.Extract(context.Background(), second)
	if err != nil {
		t.Fatal(err)
	}
	if c := ledger.Contradictions(s2, rec); len(c) > 0 {
		t.Errorf("contradicted claims:\n%s\n--- summary:\n%s", strings.Join(c, "\n"), s2)
	}
	for _, want := range []string{"## Goal\nFix the parser.", "Never edit the generated lexer.", "`parser/parse.go`: modified", "passed: `go test ./parser` (exit 0"} {
		if !strings.Contains(s2, want) {
			t.Errorf("second summary lacks %q:\n%s", want, s2)
		}
	}
	for _, stale := range []string{"failed: `go test ./parser`", "Interrupted call c3"} {
		if strings.Contains(s2, stale) {
			t.Errorf("second summary keeps the stale %q:\n%s", stale, s2)
		}
	}
}

// TestAssistantClaimsAreNotRepeated: the summary does not repeat what the
// assistant said when the record contradicts it.
func TestAssistantClaimsAreNotRepeated(t *testing.T) {
	msgs := []history.Message{history.NewText(history.User, "Fix the tests.")}
	msgs = append(msgs, step("c1", "bash", map[string]string{"command": "go test ./..."}, "--- FAIL: TestX (0.00s)\nexit status 1", false)...)
	rej := step("c2", "Edit", map[string]string{"file_path": "x.go", "old_string": "a", "new_string": "b"}, "The user rejected the edit.", true)
	msgs = append(msgs, rej...)
	msgs = append(msgs, history.NewText(history.Assistant, "I modified `x.go` because the loop was wrong. Now `go test ./...` passes."))
	resp, err := summary.New().Summarize(context.Background(), &providers.SummaryRequest{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	text := resp.Message.Text()
	rec, err := evidence.Extract(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	if c := ledger.Contradictions(text, rec); len(c) > 0 {
		t.Errorf("contradicted claims:\n%s\n--- summary:\n%s", strings.Join(c, "\n"), text)
	}
	if !strings.Contains(text, "Assistant then replied: (a reply whose claims the record contradicts") {
		t.Errorf("the contradicted reply is not flagged:\n%s", text)
	}
}

// TestDifferentScriptsAreDifferentChecks: two runs of `python - <<'PY'`
// with different bodies, the first failing and the second (an unrelated
// script) passing: the summary names each by its script, keeps the failure
// listed as a failure, and contradicts nothing; with one body run twice
// (fail, then pass) the rerun fixed it and no step asks to fix it.
func TestDifferentScriptsAreDifferentChecks(t *testing.T) {
	prelude := "import asyncio, sys, re\nfrom pathlib import Path\nsys.path.insert(0, 'src'); sys.path.insert(0, 'tests')\nfrom app.server import build_server, ALL_TOOLSETS\n"
	failing := ".venv/bin/python - <<'PY'\n" + prelude + "import app\nassert app.tools() == ['a', 'b', 'c'], app.tools()\nprint('tools ok')\nPY"
	other := ".venv/bin/python - <<'PY'\nimport json, subprocess\nout = subprocess.run(['git', 'ls-files', 'neuvector-mcp-spec'], capture_output=True, text=True).stdout\nprint(len(out.splitlines()))\nimport json, app\nprint(json.dumps(app.routes(), indent=2))\nprint('routes listed')\nPY"
	msgs := []history.Message{history.NewText(history.User, "Check the tool registry.")}
	msgs = append(msgs, step("p1", "Bash", map[string]string{"command": failing}, "Exit code 1\nAssertionError: ['a', 'b']", true)...)
	msgs = append(msgs, step("p2", "Bash", map[string]string{"command": other}, "[]\nroutes listed", false)...)
	summarize := func(msgs []history.Message) (string, *evidence.Record) {
		t.Helper()
		resp, err := summary.New().Summarize(context.Background(), &providers.SummaryRequest{Messages: msgs})
		if err != nil {
			t.Fatal(err)
		}
		rec, err := evidence.Extract(context.Background(), msgs)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Message.Text(), rec
	}
	text, rec := summarize(msgs)
	if c := ledger.Contradictions(text, rec); len(c) > 0 {
		t.Errorf("contradictions %q in:\n%s", c, text)
	}
	if !strings.Contains(text, "failed: `.venv/bin/python - <<'PY' …"+evidence.ScriptMark(failing)+"`") {
		t.Errorf("the failing script is not listed as failed by its own name:\n%s", text)
	}
	if strings.Contains(text, "fixed by a later run") {
		t.Errorf("an unrelated script is said to have fixed the failure:\n%s", text)
	}
	if strings.Contains(text, "run 2 times") {
		t.Errorf("two different scripts are counted as one command:\n%s", text)
	}
	again := append(msgs[:3:3], step("p3", "Bash", map[string]string{"command": failing}, "tools ok", false)...)
	text, rec = summarize(again)
	if c := ledger.Contradictions(text, rec); len(c) > 0 {
		t.Errorf("contradictions %q in:\n%s", c, text)
	}
	if strings.Contains(text, "Fix the failure") {
		t.Errorf("a rerun of the same script passed, yet a step asks to fix it:\n%s", text)
	}
}
