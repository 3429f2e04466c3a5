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
// the larger corpus when present with its facts.json) and the long-turn
// scenario, and fails when the totals miss the targets: ≥ 95 % of facts in
// the compacted history, ≥ 85 % in the summary, no claim the record
// contradicts, ≥ 85 % of work-in-progress facts in the summary.
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
		t.Run(filepath.Base(dir), func(t *testing.T) { ledgerTargets(t, dir, i == 0) })
	}
}

// ledgerTargets holds the sessions of dir to the targets; the committed
// corpus (needWIP) must also have work-in-progress facts, which a larger
// corpus beside the repository may lack.
func ledgerTargets(t *testing.T, dir string, needWIP bool) {
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
	if wip, kept := rep.WIPTotals(); (needWIP && wip == 0) || float64(kept) < TargetWIP*float64(wip) {
		t.Errorf("work-in-progress facts in the summary: %d/%d, want ≥ %.0f %%", kept, wip, TargetWIP*100)
	}
	for _, s := range rep.Sessions {
		for _, f := range s.NotInRecord {
			t.Errorf("%s: work-in-progress fact %q is not in the record", s.Name, f)
		}
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

// TestReadFacts: a facts file entry is a list of facts or an object with
// facts and work in progress; another shape is a clear error; a further
// file adds to the sessions of the first only.
func TestReadFacts(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	got, err := ReadFacts(write("a.json", `{"s1": ["x", "y"], "s2": {"facts": ["z"], "wip": ["w"]}, "s3": {"wip": ["v"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if f := got["s1"]; len(f.Facts) != 2 || len(f.WIP) != 0 {
		t.Errorf("s1 = %+v", f)
	}
	if f := got["s2"]; len(f.Facts) != 1 || f.Facts[0] != "z" || len(f.WIP) != 1 || f.WIP[0] != "w" {
		t.Errorf("s2 = %+v", f)
	}
	if f := got["s3"]; len(f.Facts) != 0 || len(f.WIP) != 1 {
		t.Errorf("s3 = %+v", f)
	}
	for _, bad := range []string{`{"s": "x"}`, `{"s": {"fact": ["x"]}}`, `{"s": [""]}`, `["x"]`} {
		if _, err := ReadFacts(write("bad.json", bad)); err == nil || !strings.Contains(err.Error(), "read facts") {
			t.Errorf("%s: err = %v, want a read facts error", bad, err)
		}
	}
	more, err := ReadFacts(write("b.json", `{"s1": {"wip": ["q"]}, "s1x": ["no such session"], "s2": {"facts": ["z", "n"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	mergeFacts(got, more)
	if _, ok := got["s1x"]; ok {
		t.Error("a further file added a session")
	}
	if f := got["s1"]; len(f.WIP) != 1 || f.WIP[0] != "q" || len(f.Facts) != 2 {
		t.Errorf("merged s1 = %+v", f)
	}
	if f := got["s2"]; len(f.Facts) != 2 {
		t.Errorf("merged s2 = %+v, want z once and n", f)
	}
}

// TestWIPColumn: work-in-progress facts are counted in the summary only,
// a missing one fails the targets, and one the record does not hold is
// reported as a mistake of the facts file.
func TestWIPColumn(t *testing.T) {
	msgs := LongTurn()
	s := Session{Name: "lt", Facts: LongTurnFacts(), WIP: []string{"go test ./internal/config/...", "internal/config/part07.go", "a string not in the record"}}
	if err := Measure(context.Background(), &s, msgs); err != nil {
		t.Fatal(err)
	}
	if !s.WIPInSummary[0] {
		t.Errorf("the failing check is not in the summary:\n%s", s.Summary)
	}
	if len(s.NotInRecord) != 1 || s.NotInRecord[0] != "a string not in the record" {
		t.Errorf("not in record = %q", s.NotInRecord)
	}
	rep := &Report{Window: Window, Sessions: []Session{s}}
	if rep.Pass() {
		t.Error("a report with a work-in-progress fact not in the record passes")
	}
	var out bytes.Buffer
	if err := Write(&out, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{" wip ", `facts file: "a string not in the record" is not in the record`, "work in progress ≥ 85 %"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	s.WIP, s.WIPInSummary, s.NotInRecord = s.WIP[:1], s.WIPInSummary[:1], nil
	rep.Sessions[0] = s
	if !rep.Pass() {
		t.Errorf("a report keeping every fact fails:\n%s", out.String())
	}
	if w, k := rep.WIPTotals(); w != 1 || k != 1 {
		t.Errorf("WIPTotals = %d, %d; want 1, 1", w, k)
	}
}
