package ledger

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/corpus"
	"github.com/vtcode/vtcode-ls/evidence"
	"github.com/vtcode/vtcode-ls/history"
)

// TestLedgerTargets runs the fact ledger on the committed sessions (and on
// the larger corpus when present with its facts.json) and the
// long-turn scenario, and fails when the totals miss the targets of issue
// 10: ≥ 95 % of facts in the compacted history, ≥ 85 % in the summary, no
// claim the record contradicts.
func TestLedgerTargets(t *testing.T) {
	dirs, err := corpus.Dirs()
	if err != nil {
		t.Fatal(err)
	}
	for i, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, corpus.Facts)); i > 0 && errors.Is(err, fs.ErrNotExist) {
			t.Logf("%s: no %s, so no facts to hold to the targets", dir, corpus.Facts)
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) { ledgerTargets(t, dir) })
	}
}

func ledgerTargets(t *testing.T, dir string) {
	rep, err := Run(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Write(&out, rep); err != nil {
		t.Fatal(err)
	}
	facts, summary, hist, contra := rep.Totals()
	if len(rep.Sessions) < 2 || facts == 0 {
		t.Fatalf("ledger measured %d sessions, %d facts:\n%s", len(rep.Sessions), facts, out.String())
	}
	for _, s := range rep.Sessions {
		if s.Error != "" {
			t.Errorf("%s: %s", s.Name, s.Error)
		}
	}
	if float64(hist) < TargetHistory*float64(facts) {
		t.Errorf("facts in the compacted history: %d/%d, want ≥ %.0f %%", hist, facts, TargetHistory*100)
	}
	if float64(summary) < TargetSummary*float64(facts) {
		t.Errorf("facts in the summary: %d/%d, want ≥ %.0f %%", summary, facts, TargetSummary*100)
	}
	if contra != 0 {
		t.Errorf("%d claims the record contradicts", contra)
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("\n%s", out.String())
	}
}

// TestLongTurnShape: the scenario is the shape [LongTurn] documents.
func TestLongTurnShape(t *testing.T) {
	msgs := LongTurn()
	users, batches, reads := 0, 0, 0
	est := history.NewEstimator(history.O200k)
	for i := range msgs {
		m := &msgs[i]
		switch {
		case m.Role == history.User:
			users++
		case m.HasToolCalls():
			batches++
			if m.ToolCalls[0].Name == "read_file" {
				reads++
			}
		case m.Role == history.Tool && m.ToolName == "read_file":
			if n := est.Message(m); n < 1200 || n > 1800 {
				t.Errorf("read_file result %d: %d tokens, want about 1,500", i, n)
			}
		}
	}
	if users != 2 || reads != 40 || batches != 41 {
		t.Errorf("users %d, read batches %d, batches %d; want 2, 40, 41", users, reads, batches)
	}
	rec, err := evidence.Extract(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rec.Checks); n != 1 || rec.Checks[0].Outcome != evidence.Failed {
		t.Errorf("checks = %+v, want one failed go test", rec.Checks)
	}
}

// TestContradictions: each kind of claim the record contradicts is found,
// and true claims are not.
func TestContradictions(t *testing.T) {
	bash := func(id, cmd, out string) []history.Message {
		return []history.Message{
			{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: id, Name: "bash", Arguments: `{"command":"` + cmd + `"}`}}},
			history.NewToolResult(id, "bash", out),
		}
	}
	msgs := []history.Message{history.NewText(history.User, "Fix the parser.")}
	msgs = append(msgs, bash("c1", "go test ./parser", "--- FAIL: TestParse\nexit status 1")...)
	msgs = append(msgs, history.Message{Role: history.Assistant, ToolCalls: []history.ToolCall{
		{ID: "c2", Name: "str_replace_editor", Arguments: `{"command":"str_replace","path":"parser/lex.go","old_str":"a","new_str":"b"}`},
		{ID: "c3", Name: "read_file", Arguments: `{"path":"parser/doc.go"}`},
		{ID: "c4", Name: "edit_file", Arguments: `{"path":"parser/parse.go"}`},
	}},
		history.NewToolResult("c2", "str_replace_editor", "ERROR:\nNo replacement was performed, old_str `a` did not appear verbatim in parser/lex.go."),
		history.NewToolResult("c3", "read_file", "package parser"),
		history.NewToolResult("c4", "edit_file", "ok"),
	)
	rec, err := evidence.Extract(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Join([]string{
		"- passed: `go test ./parser` (exit 0)",
		"- `parser/lex.go`: modified",
		"- `parser/doc.go`: read, modified",
		"- Interrupted call c4: edit_file (no result)",
		"- Final state: the work was committed and pushed",
	}, "\n")
	got := Contradictions(bad, rec)
	if len(got) != 6 {
		t.Errorf("found %d contradictions, want 6 (check, rejected edit, read file, interruption, commit, push):\n%s", len(got), strings.Join(got, "\n"))
	}
	good := strings.Join([]string{
		"## Goal",
		"`go test ./parser` passed before the refactor; make it pass again.",
		"## Checks",
		"- failed: `go test ./parser` (exit 1)",
		"- Latest user request: `go test ./parser` passed yesterday",
		"- `parser/lex.go`: edit rejected, not applied",
		"- `parser/parse.go`: modified",
		"- `parser/doc.go`: read",
		"- Final state: last check `go test ./parser` failed (exit 1); not committed",
	}, "\n")
	if got := Contradictions(good, rec); len(got) != 0 {
		t.Errorf("true claims reported as contradictions:\n%s", strings.Join(got, "\n"))
	}
}

// TestRunCancelled: the ledger stops with ctx's error.
func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := Session{Name: "x", Facts: []string{"a"}}
	if err := Measure(ctx, &s, LongTurn()); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
