package summary

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// prompt stands in for the summary prompt the compaction engine appends.
const prompt = "Summarize the conversation so far in the usual sections."

func load(t *testing.T, name string) []history.Message {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var msgs []history.Message
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var m history.Message
		if err := m.UnmarshalJSON(sc.Bytes()); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

func summarize(t *testing.T, msgs []history.Message, maxOut int) *providers.Response {
	t.Helper()
	req := &providers.Request{Model: "offline", Messages: append(append([]history.Message(nil), msgs...), history.NewText(history.User, prompt)), MaxOutputTokens: maxOut}
	resp, err := New().Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestGolden(t *testing.T) {
	for _, name := range []string{"debugging", "refactor", "restrictions"} {
		t.Run(name, func(t *testing.T) {
			resp := summarize(t, load(t, name+".jsonl"), 0)
			got := resp.Message.Text() + "\n"
			golden := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("summary mismatch (-want +got):\n%s", diff)
			}
			if resp.Message.Role != history.Assistant {
				t.Errorf("role = %q, want assistant", resp.Message.Role)
			}
		})
	}
}

// TestFacts checks the facts each transcript must surface, independently of
// the golden layout.
func TestFacts(t *testing.T) {
	tests := []struct {
		file string
		want []string
		not  []string
	}{
		{"debugging.jsonl", []string{
			"## Goal\nThe CI run for the parser package is red.",
			"- Don't change the public API of package timefmt.",
			"- passed: `go test ./timefmt -run TestParseDuration` (exit 0; output: ok github.com/acme/timefmt 0.010s), run 2 times; failed 1 of them first",
			"- failed: `go test ./...` (exit 1; --- FAIL: TestFormatRoundTrip (0.00s) / format_test.go:77",
			"- Final state: last check `go test ./...` failed (exit 1)",
			"`timefmt/parse.go`: read, modified",
			"parse_test.go:41: ParseDuration(\"1h30m\") = 1h0m0s, want 1h30m0s",
			"I decided to accumulate units in a loop rather than rewriting the parser with regexp",
			"1. Fix the failure of `go test ./...` (exit 1) and re-run it.",
			"Next I will update the expectation in format_test.go after checking the spec.",
		}, []string{"You are a coding agent", prompt}},
		{"refactor.jsonl", []string{
			"`internal/repo/repository.go`: created",
			"`internal/api/handler.go`: read, modified, 2 edits",
			"`internal/api/handler_test.go`: modified",
			"`internal/db/store.go`: read, deleted",
			"- passed: `go build ./...` (exit 0), run 2 times; failed 1 of them first (exit 1: internal/api/handler.go:3:2: undefined: repo)",
			"internal/api/handler.go:3:2: undefined: repo",
			"Result: exit 0; empty output",
			"The remaining step is to run go vet and the api tests.",
		}, nil},
		{"restrictions.jsonl", []string{
			"- You must not add new dependencies.",
			"- Never touch the migrations folder.",
			"- Always run `make lint` before you say you are done; only use the standard library.",
			"- Don't use a global map for the buckets, keep it per Server.",
			"- failed: `make lint` (exit 2; make: *** [lint] Error 1)",
			"- running: `go run ./cmd/server` (session term-7f3a)",
			"Running session term-7f3a from `go run ./cmd/server`: poll or stop it with run_terminal_cmd",
			"Interrupted call toolu_06: run_terminal_cmd `for i in 1 2 3 4 5 6;",
			"- not run: `for i in 1 2 3 4 5 6;",
			"Awaiting the user's answer: Should I remove the unused newBucket helper, or do you want to keep it for the tests?",
			"`server/ratelimit.go`: created, modified, 2 edits",
			"`server/login.go`: read",
			"1. Re-run or verify the interrupted call toolu_06 (run_terminal_cmd).",
			"Also the limit should be 5 attempts per minute.",
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got := summarize(t, load(t, tt.file), 0).Message.Text()
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("summary lacks %q\n--- summary:\n%s", w, got)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("summary contains %q", n)
				}
			}
		})
	}
}

func TestSectionsMirrorPrompt(t *testing.T) {
	got := summarize(t, load(t, "debugging.jsonl"), 0).Message.Text()
	var heads []string
	for _, l := range strings.Split(got, "\n") {
		if strings.HasPrefix(l, "## ") {
			heads = append(heads, strings.TrimPrefix(l, "## "))
		}
	}
	// The sections of commits and of the commands inside chains appear
	// only when the record has some.
	want := slices.DeleteFunc(slices.Clone(sectionOrder), func(s string) bool {
		return (s == secCommits || s == secCommands) && !slices.Contains(heads, s)
	})
	if diff := cmp.Diff(want, heads); diff != "" {
		t.Errorf("sections (-want +got):\n%s", diff)
	}
}

func TestDeterministic(t *testing.T) {
	for _, name := range []string{"debugging.jsonl", "refactor.jsonl", "restrictions.jsonl"} {
		msgs := load(t, name)
		a := summarize(t, msgs, 0)
		b := summarize(t, load(t, name), 0)
		if a.Message.Text() != b.Message.Text() {
			t.Errorf("%s: two runs differ", name)
		}
		if !cmp.Equal(a.Usage, b.Usage) {
			t.Errorf("%s: usage differs: %+v vs %+v", name, a.Usage, b.Usage)
		}
	}
}

func TestUsageAndInputUntouched(t *testing.T) {
	msgs := load(t, "refactor.jsonl")
	before := make([]history.Message, len(msgs))
	copy(before, msgs)
	est := history.NewEstimator(history.O200k)
	est.Messages(msgs) // cache o200k estimates; the offline provider must not replace them
	resp := summarize(t, msgs, 0)
	approx := history.NewEstimator(history.Approx)
	want := 0
	for _, m := range append(append([]history.Message(nil), msgs...), history.NewText(history.User, prompt)) {
		want += approx.Message(&m)
	}
	if resp.Usage.InputTokens != want {
		t.Errorf("InputTokens = %d, want %d", resp.Usage.InputTokens, want)
	}
	if resp.Usage.OutputTokens != approx.Text(resp.Message.Text()) {
		t.Errorf("OutputTokens = %d", resp.Usage.OutputTokens)
	}
	for i := range msgs {
		if _, ok := est.Cached(&msgs[i]); !ok {
			t.Fatalf("message %d lost its o200k estimate", i)
		}
		if !history.Equal(msgs[i], before[i]) {
			t.Fatalf("message %d modified", i)
		}
	}
}

func TestOutputBounded(t *testing.T) {
	// 400 failing commands, 400 files, 400 user restrictions.
	var msgs []history.Message
	msgs = append(msgs, history.NewText(history.User, "Fix everything."))
	for i := range 400 {
		id := "call_" + strings.Repeat("x", i%7) + string(rune('a'+i%26))
		msgs = append(msgs,
			history.NewText(history.User, "You must never edit generated file number "+strings.Repeat("9", i%13)+" "+itoa(i)+"."),
			history.Message{Role: history.Assistant, ToolCalls: []history.ToolCall{
				{ID: id, Name: "bash", Arguments: `{"command":"go test ./pkg` + itoa(i) + `","path":"pkg` + itoa(i) + `/x.go"}`},
			}},
			history.NewToolResult(id, "bash", "error: boom "+itoa(i)+"\nExit code: 1"),
		)
	}
	for _, limit := range []int{0, 500, 100} {
		text := summarize(t, msgs, limit).Message.Text()
		max := MaxOutputTokens * 4
		if limit > 0 {
			max = limit * 4
		}
		if len(text) > max {
			t.Errorf("limit %d: %d bytes, want ≤ %d", limit, len(text), max)
		}
		if !strings.HasPrefix(text, "## Goal\nFix everything.") {
			t.Errorf("limit %d: goal missing:\n%s", limit, text)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestMergesPriorSummary(t *testing.T) {
	first := summarize(t, load(t, "debugging.jsonl"), 0).Message.Text()
	msgs := []history.Message{
		history.NewText(history.System, "Previous conversation summary:\n"+first),
		history.NewText(history.User, "Please also update the changelog."),
		{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: "c9", Name: "edit_file", Arguments: `{"path":"CHANGELOG.md"}`}}},
		history.NewToolResult("c9", "edit_file", "ok"),
	}
	got := summarize(t, msgs, 0).Message.Text()
	for _, w := range []string{
		"## Goal\nThe CI run for the parser package is red.", // the original goal survives
		"Don't change the public API of package timefmt.",
		"failed: `go test ./...` (exit 1",
		"`timefmt/parse.go`: read, modified",
		"`CHANGELOG.md`: modified",
		"Latest user request: Please also update the changelog.",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("merged summary lacks %q\n%s", w, got)
		}
	}
}

func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := New().Generate(ctx, &providers.Request{Messages: load(t, "debugging.jsonl")})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestFixedFailureIsNotANextStep: a failed check that a later, broader
// command ran again successfully is history, not work left; a diff line that
// mentions "error" is not an error seen.
func TestFixedFailureIsNotANextStep(t *testing.T) {
	bash := func(id, cmd, out string) []history.Message {
		return []history.Message{
			{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: id, Name: "bash", Arguments: `{"command":"` + cmd + `"}`}}},
			history.NewToolResult(id, "bash", out),
		}
	}
	msgs := []history.Message{history.NewText(history.User, "Make the money tests pass.")}
	msgs = append(msgs, bash("c1", "go vet ./internal/money/ && go test ./internal/money/", "--- FAIL: TestParse (0.00s)\nExit code: 1")...)
	msgs = append(msgs, bash("c2", "git diff", "-func Compute(inv *Invoice) (Totals, error) {\n+func Compute(inv *Invoice) (t Totals, err error) {\nExit code: 0")...)
	msgs = append(msgs, bash("c3", "go build ./... && go test ./cmd/", "FAIL\tcmd [build failed]\nExit code: 2")...)
	msgs = append(msgs, bash("c4", "gofmt -l ./internal/money && go vet ./internal/money/ && go test -v ./internal/money/", "ok\nExit code: 0")...)
	text := summarize(t, msgs, 0).Message.Text()
	next := text[strings.Index(text, "## Next steps"):]
	if strings.Contains(next, "internal/money") {
		t.Errorf("a failure fixed by a later run is still a next step:\n%s", next)
	}
	if !strings.Contains(next, "go build ./... && go test ./cmd/") {
		t.Errorf("an unfixed failure is missing from the next steps:\n%s", next)
	}
	if !strings.Contains(text, "--- FAIL: TestParse") {
		t.Errorf("the test failure is not among the errors:\n%s", text)
	}
	if strings.Contains(text, "-func Compute") {
		t.Errorf("a diff line was taken for an error:\n%s", text)
	}
}

// TestInstructionsCarried: the extractive summary cannot follow free-form
// instructions, so it carries them first for the model that continues; a
// summary without instructions has no such section.
func TestInstructionsCarried(t *testing.T) {
	msgs := []history.Message{history.NewText(history.User, "Port the parser to Go."), history.NewText(history.Assistant, "Started with the lexer.")}
	req := &providers.Request{Model: "offline", Messages: append(append([]history.Message(nil), msgs...),
		history.NewText(history.User, prompt+"\n\n"+providers.SummaryInstructions+"\nKeep every file path and the benchmark numbers."))}
	resp, err := New().Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := "## Focus requested for this summary\nKeep every file path and the benchmark numbers.\n\n## Goal\nPort the parser to Go."
	if text := resp.Message.Text(); !strings.HasPrefix(text, want) {
		t.Errorf("summary starts\n%s\nwant\n%s", text[:min(len(text), 200)], want)
	}
	if text := summarize(t, msgs, 0).Message.Text(); strings.Contains(text, "Focus requested") {
		t.Errorf("focus section without instructions:\n%s", text)
	}
	// A later compaction of the compacted history keeps the focus.
	again := []history.Message{history.NewText(history.System, "Previous conversation summary:\n"+resp.Message.Text()), history.NewText(history.User, "Go on.")}
	if text := summarize(t, again, 0).Message.Text(); !strings.HasPrefix(text, "## Focus requested for this summary\nKeep every file path and the benchmark numbers.\n") {
		t.Errorf("the focus was lost on re-compaction:\n%s", text)
	}
}

// One history has one summary: names of code mentioned equally often, first
// in the same message, are listed in the same order on every run (a map's
// order once decided it, so the same session's summary differed by run).
func TestSameHistorySameSummary(t *testing.T) {
	var text strings.Builder
	text.WriteString("We looked at ")
	for i := range 12 {
		fmt.Fprintf(&text, "`helperNumber%02d` ", i)
	}
	msgs := []history.Message{
		history.NewText(history.User, "Please refactor the helpers."),
		history.NewText(history.Assistant, text.String()+"and will change them."),
		history.NewText(history.User, "Go on."),
		history.NewText(history.Assistant, text.String()+"again, all of them."),
	}
	first := summarize(t, msgs, 0).Message.Text()
	if !strings.Contains(first, "Code discussed most") {
		t.Fatalf("the summary names no code discussed:\n%s", first)
	}
	for range 20 {
		if got := summarize(t, msgs, 0).Message.Text(); got != first {
			t.Fatalf("the same history gave two summaries:\n%s\n---\n%s", first, got)
		}
	}
}
