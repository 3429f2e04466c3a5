package compaction

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/summary"
)

// recordSession is a Claude Code session long enough to compact: a failing
// go test, an edit, and a plan with an active item.
func recordSession() []history.Message {
	call := func(id, name string, args any, out string) []history.Message {
		a, _ := json.Marshal(args)
		return []history.Message{
			{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: id, Name: name, Arguments: string(a)}}},
			history.NewToolResult(id, name, out),
		}
	}
	msgs := []history.Message{history.NewText(history.User, "Fix the parser: TestParse fails.")}
	msgs = append(msgs, call("p1", "TodoWrite", map[string]any{"todos": []map[string]string{
		{"content": "Fix the lexer", "status": "in_progress", "activeForm": "Fixing"},
		{"content": "Run the suite", "status": "pending", "activeForm": "Running"},
	}}, "Todos have been modified successfully.")...)
	msgs = append(msgs, call("t1", "Bash", map[string]string{"command": "go test ./parser/"}, "Exit code 1\n--- FAIL: TestParse (0.00s)\nFAIL\texample.com/m/parser\t0.01s")...)
	msgs = append(msgs, call("e1", "Edit", map[string]string{"file_path": "parser/lex.go", "old_string": "a", "new_string": "b"}, "The file parser/lex.go has been updated.")...)
	for i := range 40 {
		msgs = append(msgs, call("r"+string(rune('a'+i%26))+string(rune('a'+i/26)), "Read", map[string]string{"file_path": "parser/doc.go"}, strings.Repeat("// doc line\n", 300))...)
	}
	return append(msgs, history.NewText(history.Assistant, "Looking further."))
}

// TestModelSummaryCheckedByTheRecord: a model's summary receives the
// record, loses the claim the record contradicts (listed as corrected), and
// gains what the record shows and the model left out; when the record's
// writer fails, nothing is appended (the claims are still checked).
func TestModelSummaryCheckedByTheRecord(t *testing.T) {
	lie := "## Goal\nFix the parser.\n\n## Checks\n- passed: `go test ./parser/` (exit 0)\n\n## Next steps\n1. Open a pull request."
	client := answer(lie)
	opts := localOpts(client)
	opts.Capacity = 16000
	opts.Record = summary.New()
	res, err := Compact(context.Background(), recordSession(), opts)
	if err != nil {
		t.Fatal(err)
	}
	reqs := client.requests()
	if len(reqs) == 0 || !strings.Contains(reqs[len(reqs)-1].Messages[len(reqs[len(reqs)-1].Messages)-1].Text(), recordHeader) {
		t.Error("the model did not receive the record")
	}
	s := res.Summary
	if strings.Contains(s, "- passed: `go test ./parser/` (exit 0)") {
		t.Errorf("the contradicted claim survived:\n%s", s)
	}
	for _, want := range []string{
		"## Corrected from the record\n- A claim was removed: it says `go test ./parser/` passed; its last run failed (exit 1).",
		"## Work in progress (from the record)",
		"[in_progress] Fix the lexer",
		"`parser/lex.go`",
		"Open a pull request.", // the model's own step stays
	} {
		if !strings.Contains(s, want) {
			t.Errorf("checked summary lacks %q:\n%s", want, s)
		}
	}
	// The record's writer failing appends nothing.
	opts.Client = answer(lie)
	opts.Record = failingRecord{}
	res, err = Compact(context.Background(), recordSession(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Summary, "## Next steps\n1. Open a pull request.") || strings.Contains(res.Summary, "(from the record)") {
		t.Errorf("with a failing record writer:\n%s", res.Summary)
	}
}

type failingRecord struct{}

func (failingRecord) Summarize(context.Context, *providers.SummaryRequest) (*providers.Response, error) {
	return nil, errors.New("record writer down")
}
