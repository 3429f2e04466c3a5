package compaction

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/evidence"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/anthropic"
	"github.com/vtcode/vtcode-ls/providers/httpapi"
	"github.com/vtcode/vtcode-ls/providers/providertest"
	"github.com/vtcode/vtcode-ls/summary"
)

// toolStep is one tool call and its result.
func toolStep(id, name string, args map[string]string, out string, isErr bool) []history.Message {
	a, _ := json.Marshal(args)
	res := history.NewToolResult(id, name, out)
	if isErr {
		res.Extra = map[string]json.RawMessage{"isError": json.RawMessage("true")}
	}
	return []history.Message{{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: id, Name: name, Arguments: string(a)}}}, res}
}

// recordHistory is a session whose record is easy to misreport: a file only
// read, a file edited, a test run that failed (exit 1); then enough talk that
// all of it is summarized rather than kept in the tail.
func recordHistory() []history.Message {
	msgs := []history.Message{history.NewText(history.User, "Fix the tokenizer bug in the parser and keep the tests green.")}
	msgs = append(msgs, toolStep("c1", "Read", map[string]string{"file_path": "/w/parser/lex.go"}, "package parser\n// lexer", false)...)
	msgs = append(msgs, toolStep("c2", "Edit", map[string]string{"file_path": "/w/parser/parse.go", "old_string": "a", "new_string": "b"}, "The file /w/parser/parse.go has been updated.", false)...)
	msgs = append(msgs, toolStep("c3", "Bash", map[string]string{"command": "go test ./parser"}, "Exit code 1\n--- FAIL: TestParse (0.00s)\nFAIL", true)...)
	return append(msgs, conv(30, 29, 471)...)
}

// anthropicModel is a Messages-API client of srv.
func anthropicModel(t *testing.T, srv *providertest.Server) providers.Generator {
	t.Helper()
	g, err := anthropic.New(anthropic.Config{Endpoint: httpapi.Endpoint{
		Provider: "anthropic", BaseURL: srv.URL, APIKey: "sk-ant-test-key-0001", Model: "claude-sonnet-4-6",
		Retry: httpapi.RetryPolicy{MaxAttempts: 1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func writerOpts(client providers.Generator) Options {
	opts := localOpts(client)
	opts.Route = providers.Route{Provider: "anthropic", Model: "claude-sonnet-4-6", NativeCompaction: NativeNever}
	opts.Record = summary.New()
	opts.RecordFallback = true
	return opts
}

// offlineSummary is the summary the offline writer makes of msgs.
func offlineSummary(t *testing.T, msgs []history.Message) string {
	t.Helper()
	opts := localOpts(summary.New())
	res, err := Compact(context.Background(), msgs, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res.Summary
}

func extract(t *testing.T, msgs []history.Message) *evidence.Record {
	t.Helper()
	rec, err := evidence.Extract(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// draft is a model's summary that says the failed test run passed, that a
// file only read was modified, and leaves out the goal, the files and the
// record's next steps.
const draft = "## What was done\n" +
	"- Edited the parser. The run of `go test ./parser` passed.\n" +
	"- Also modified `/w/parser/lex.go` to rename the token type.\n" +
	"## Next\n- Tidy up the docs."

// TestModelWriterChecksAgainstRecord: the model gets the bounded fork and
// the evidence record; its contradicted claims are corrected from the
// record and said to be; the record's items it left out are appended
// verbatim; the result contradicts nothing.
func TestModelWriterChecksAgainstRecord(t *testing.T) {
	msgs := recordHistory()
	ledger := offlineSummary(t, msgs)
	srv := providertest.NewServer(t, providertest.AnthropicText(draft, 9000, 120))
	res, err := Compact(context.Background(), msgs, writerOpts(anthropicModel(t, srv)))
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || res.Calls != 1 {
		t.Fatalf("%d upstream requests, %d calls; want 1", len(reqs), res.Calls)
	}
	// The record reaches the model, in the summary request's last message.
	body := string(reqs[0].Body)
	var payload struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(reqs[0].Body, &payload); err != nil || len(payload.Messages) < 2 {
		t.Fatalf("payload: %v (%d messages)", err, len(payload.Messages))
	}
	last := string(payload.Messages[len(payload.Messages)-1].Content)
	if !strings.Contains(last, "The record of this session") {
		t.Fatalf("the summary request carries no evidence record:\n%.600s", last)
	}
	for _, l := range strings.Split(ledger, "\n") {
		if strings.Contains(l, "`go test ./parser`") {
			want, _ := json.Marshal(l)
			if !strings.Contains(body, strings.Trim(string(want), `"`)) {
				t.Errorf("the record's check line %q is not in the payload", l)
			}
		}
	}

	rec := extract(t, msgs)
	if c := evidence.Contradictions(res.Summary, rec); len(c) > 0 {
		t.Errorf("checked summary still contradicts the record: %v\n%s", c, res.Summary)
	}
	if strings.Contains(res.Summary, "passed.") || strings.Contains(res.Summary, "rename the token type") {
		t.Errorf("a contradicted claim survived:\n%s", res.Summary)
	}
	// The corrected sentence's neighbours stay; the record's line about the
	// check stands in its place.
	if !strings.Contains(res.Summary, "- Edited the parser. "+strings.TrimPrefix(sectionLines(ledger, "Checks")[0], "- ")) {
		t.Errorf("the contradicted sentence was not replaced in its line:\n%s", res.Summary)
	}
	if !strings.Contains(res.Summary, "Tidy up the docs.") {
		t.Errorf("a line the record does not contradict was lost:\n%s", res.Summary)
	}
	if !strings.Contains(res.Summary, "## Corrected from the record\n") || strings.Count(res.Summary, "- A claim was removed") != 2 {
		t.Errorf("the two corrections are not said:\n%s", res.Summary)
	}
	// Never worse on the ledger: the record's lines the model left out are
	// appended verbatim, under their sections.
	for _, title := range []string{"Goal", "Checks", "Files read or changed", "Next steps"} {
		lines := sectionLines(ledger, title)
		if len(lines) == 0 {
			t.Fatalf("the record's summary has no %s section:\n%s", title, ledger)
		}
		if title != "Checks" && !strings.Contains(res.Summary, "## "+title+" (from the record)\n") {
			t.Errorf("the record's %s section was not appended:\n%s", title, res.Summary)
		}
		for _, l := range lines {
			// A line may stand in for a corrected claim, without its bullet.
			if !strings.Contains(res.Summary, strings.TrimPrefix(strings.TrimSpace(l), "- ")) {
				t.Errorf("the record's line %q is not in the model summary", l)
			}
		}
	}
	if res.Usage.InputTokens != 9000 || res.Usage.OutputTokens != 120 {
		t.Errorf("usage %+v; want the model call's 9000/120", res.Usage)
	}
}

func sectionLines(text, title string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "## "):
			in = t == "## "+title
		case in && t != "" && !strings.EqualFold(t, "none") && !strings.HasSuffix(t, "omitted)"):
			out = append(out, l)
		}
	}
	return out
}

// TestModelWriterFallsBackToRecord: a failed or empty model answer makes the
// record's summary the summary, and the result says why.
func TestModelWriterFallsBackToRecord(t *testing.T) {
	msgs := recordHistory()
	ledger := offlineSummary(t, msgs)
	for name, rep := range map[string]providertest.Reply{
		"error": providertest.AnthropicError(400, "invalid_request_error", "model overloaded by test"),
		"empty": providertest.AnthropicText("  ", 9000, 0),
	} {
		t.Run(name, func(t *testing.T) {
			srv := providertest.NewServer(t, rep)
			res, err := Compact(context.Background(), msgs, writerOpts(anthropicModel(t, srv)))
			if err != nil {
				t.Fatal(err)
			}
			if len(srv.Requests()) != 1 {
				t.Errorf("%d upstream requests, want 1", len(srv.Requests()))
			}
			if !strings.Contains(res.Summary, sectionLines(ledger, "Checks")[0]) || res.WriterFallback == "" {
				t.Errorf("fallback %q; the summary is not the record's:\n%s", res.WriterFallback, res.Summary)
			}
			if strings.Contains(res.WriterFallback, "sk-ant-test-key-0001") {
				t.Errorf("the fallback reason holds the key: %s", res.WriterFallback)
			}
			// Without RecordFallback the failure is a failed compaction.
			srv.Push(rep)
			opts := writerOpts(anthropicModel(t, srv))
			opts.RecordFallback = false
			if res, err := Compact(context.Background(), msgs, opts); err == nil {
				t.Errorf("without RecordFallback: summary %.80q, want an error", res.Summary)
			}
		})
	}
}

// TestModelWriterTwoPass: pass 1 is written by the model with the record of
// the prefix; at the threshold, pass 2 is the only call, it carries the note
// and the whole record, and its text is checked.
func TestModelWriterTwoPass(t *testing.T) {
	msgs := recordHistory()
	srv := providertest.NewServer(t,
		providertest.AnthropicText("NOTE1: the parser was edited; `go test ./parser` passed.", 8000, 50),
		providertest.AnthropicText(draft, 3000, 120))
	opts := writerOpts(anthropicModel(t, srv))
	tp := NewTwoPass(nil)
	t.Cleanup(tp.Close)
	tp.Prefire(context.Background(), msgs, opts)
	tp.Wait()
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("pass 1 made %d requests, want 1", n)
	}
	msgs = append(msgs, conv(2, 29, 471)...)
	opts.TwoPass = tp
	res, err := Compact(context.Background(), msgs, opts)
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || res.Calls != 1 || !res.CachedNote {
		t.Fatalf("%d requests in all, %d at the threshold, cached note %v; want 2, 1, true", len(reqs), res.Calls, res.CachedNote)
	}
	for i, r := range reqs {
		if !strings.Contains(string(r.Body), "The record of this session") {
			t.Errorf("request %d carries no evidence record", i+1)
		}
	}
	if !strings.Contains(string(reqs[1].Body), "NOTE1") {
		t.Error("pass 2 does not carry the pass-1 note")
	}
	if c := evidence.Contradictions(res.Summary, extract(t, msgs)); len(c) > 0 || !strings.Contains(res.Summary, "## Corrected from the record") {
		t.Errorf("pass 2 was not checked: contradictions %v\n%s", c, res.Summary)
	}
}

// TestModelWriterKeepsProjectInstructionsVerbatim: the project
// instructions a harness injected survive a model's summary verbatim, even
// when the model paraphrased them.
func TestModelWriterKeepsProjectInstructionsVerbatim(t *testing.T) {
	rules := "- Never commit generated files under gen/.\n- Run `make lint` before every commit."
	msgs := []history.Message{history.NewText(history.User, "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n# claudeMd\nCodebase and user instructions are shown below.\n\nContents of /repo/CLAUDE.md (project instructions, checked into the codebase):\n\n"+rules+"\n\n      IMPORTANT: this context may or may not be relevant to your tasks.\n</system-reminder>\nFix the flaky parser test.")}
	msgs = append(msgs, recordHistory()[1:]...)
	paraphrase := "## Project rules\n- Never commit generated files under gen/ and run make lint before every commit.\n## Next\n- Fix the test."
	srv := providertest.NewServer(t, providertest.AnthropicText(paraphrase, 9000, 40))
	res, err := Compact(context.Background(), msgs, writerOpts(anthropicModel(t, srv)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Summary, rules) {
		t.Errorf("the project instructions are not in the summary verbatim:\n%s", res.Summary)
	}
}
