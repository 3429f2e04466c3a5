package compaction

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/summary"
)

// The long autonomous turn of the fact ledger (ledger.LongTurn): one user request, 40 read_file
// batches of ~1,500 tokens (one of them followed by an edit), a failing
// `go test` at the end, then a short user follow-up. It is one protocol
// group of ~61,000 tokens followed by a tiny one.
const (
	ltRequest   = "Find out why TestParseConfig fails and fix it."
	ltFollowUp  = "Keep going; the default port must stay 8080."
	ltEditPath  = "config/parse.go"
	ltTestCmd   = "go test ./config/..."
	ltTestCall  = "call_test"
	ltErrorLine = "config_test.go:42: got port 0, want 8080"
	ltExitLine  = "exit status 1"
)

func ltReadPath(i int) string { return fmt.Sprintf("internal/pkg%02d/file%02d.go", i, i) }

func ltTestOutput() string {
	return "=== RUN   TestParseConfig\n--- FAIL: TestParseConfig (0.00s)\n    " + ltErrorLine +
		"\nFAIL\nFAIL\tgithub.com/acme/app/config\t0.012s\nFAIL\n" + ltExitLine
}

func longTurn() []history.Message {
	out := []history.Message{history.NewText(history.User, ltRequest)}
	for i := range 40 {
		id := fmt.Sprintf("call_%02d", i)
		out = append(out, history.Message{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: id, Name: "read_file", Arguments: fmt.Sprintf(`{"path":%q}`, ltReadPath(i))}}})
		var b strings.Builder
		for l := 0; b.Len() < 5900; l++ {
			fmt.Fprintf(&b, "func helper%02d_%03d(x int) int { return x*%d + %d } // line %d\n", i, l, l, i, l)
		}
		out = append(out, history.NewToolResult(id, "read_file", b.String()))
		if i == 20 {
			out = append(out,
				history.Message{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: "call_edit", Name: "edit_file", Arguments: fmt.Sprintf(`{"path":%q,"old":"port := 0","new":"port := cfg.Port"}`, ltEditPath)}}},
				history.NewToolResult("call_edit", "edit_file", "Applied 1 edit to "+ltEditPath))
		}
	}
	out = append(out,
		history.Message{Role: history.Assistant, Content: history.Text("Running the tests."), ToolCalls: []history.ToolCall{{ID: ltTestCall, Name: "run_command", Arguments: fmt.Sprintf(`{"command":%q}`, ltTestCmd)}}},
		history.NewToolResult(ltTestCall, "run_command", ltTestOutput()),
		history.NewText(history.User, ltFollowUp))
	return out
}

var ltWindows = []int{20000, 32000, 64000}

func ltOpts(client providers.Generator, window int) Options {
	return Options{
		Trigger:     TriggerManual,
		Route:       providers.Route{Provider: "openrouter", Model: "m"},
		Client:      client,
		Estimator:   approx,
		RoutePolicy: DefaultRoutePolicy(),
		Capacity:    window,
	}
}

// forkText renders what a model reads of msgs: texts, tool names and
// arguments.
func forkText(msgs []history.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Text())
		b.WriteByte('\n')
		for _, tc := range m.ToolCalls {
			b.WriteString(tc.Name + " " + tc.Arguments + "\n")
		}
	}
	return b.String()
}

// checkEvidence asserts that msgs carry what a developer resuming the task
// needs: the failing command, its exit code and error output, the edited
// path and every read path.
func checkEvidence(t *testing.T, what string, msgs []history.Message) {
	t.Helper()
	text := forkText(msgs)
	for _, want := range []string{ltRequest, ltTestCmd, ltExitLine, ltErrorLine, "--- FAIL: TestParseConfig", ltEditPath} {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks %q", what, want)
		}
	}
	missing := 0
	for i := range 40 {
		if !strings.Contains(text, ltReadPath(i)) {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%s lacks %d of the 40 read paths", what, missing)
	}
	if err := history.CheckPairing(msgs); err != nil {
		t.Errorf("%s: %v", what, err)
	}
}

// checkRebuilt asserts that a rebuilt history keeps the failing test batch
// verbatim, the request and the follow-up.
func checkRebuilt(t *testing.T, out []history.Message) {
	t.Helper()
	orig := longTurn()
	call := slices.IndexFunc(orig, func(m history.Message) bool { return m.HasToolCalls() && m.ToolCalls[0].ID == ltTestCall })
	i := slices.IndexFunc(out, func(m history.Message) bool { return m.HasToolCalls() && m.ToolCalls[0].ID == ltTestCall })
	if i < 0 || i+1 >= len(out) || !history.Equal(out[i], orig[call]) || !history.Equal(out[i+1], orig[call+1]) {
		t.Errorf("the failing test batch is not kept whole in the rebuilt history (%d messages)", len(out))
	}
	text := forkText(out)
	if !strings.Contains(text, ltRequest) || !strings.Contains(text, ltFollowUp) {
		t.Error("the request or the follow-up is missing from the rebuilt history")
	}
	if err := history.CheckPairing(out); err != nil {
		t.Error(err)
	}
}

// forkOf is a request's messages without the final summary prompt.
func forkOf(req *providers.Request) []history.Message { return req.Messages[:len(req.Messages)-1] }

func TestLongTurnModelRoute(t *testing.T) {
	for _, w := range ltWindows {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			client := answer("the summary")
			res, err := Compact(context.Background(), longTurn(), ltOpts(client, w))
			if err != nil {
				t.Fatal(err)
			}
			reqs := client.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d calls", len(reqs))
			}
			checkEvidence(t, "the fork", forkOf(reqs[0]))
			budget := SummaryBudget(w, 0, 0)
			if in := reqTokens(reqs[0]); in > budget || in < budget*9/10 {
				t.Errorf("summary input = %d tokens, want ≤ and ≥ 90%% of the %d-token budget", in, budget)
			}
			checkRebuilt(t, res.Messages)
			if b := WindowBound(w, 0, 0); res.CompactedTokens > b {
				t.Errorf("rebuilt %d tokens > bound %d", res.CompactedTokens, b)
			}
		})
	}
}

func TestLongTurnOfflineRoute(t *testing.T) {
	for _, w := range ltWindows {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			opts := ltOpts(summary.New(), w)
			opts.Route = providers.Route{Provider: summary.Name}
			res, err := Compact(context.Background(), longTurn(), opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{ltTestCmd, "TestParseConfig", ltEditPath, ltReadPath(0)} {
				if !strings.Contains(res.Summary, want) {
					t.Errorf("summary lacks %q:\n%s", want, res.Summary)
				}
			}
			checkRebuilt(t, res.Messages)
		})
	}
}

func TestLongTurnHierarchical(t *testing.T) {
	for _, w := range ltWindows {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			client := answer("band note")
			opts := ltOpts(client, w)
			opts.Hierarchical = true
			res, err := Compact(context.Background(), longTurn(), opts)
			if err != nil {
				t.Fatal(err)
			}
			reqs := client.requests()
			if len(reqs) != 2 {
				t.Fatalf("%d calls, want 2", len(reqs))
			}
			// The newer band opens with the older band's note.
			both := append(slices.Clone(forkOf(reqs[0])), forkOf(reqs[1])[1:]...)
			checkEvidence(t, "the two bands", both)
			if !strings.Contains(forkText(forkOf(reqs[1])), ltErrorLine) {
				t.Error("the newer band lacks the failing test output")
			}
			for i, req := range reqs {
				if in, budget := reqTokens(req), SummaryBudget(w, 0, 0); in > budget {
					t.Errorf("band %d: %d tokens > budget %d", i+1, in, budget)
				}
			}
			checkRebuilt(t, res.Messages)
		})
	}
}

func TestLongTurnTwoPass(t *testing.T) {
	for _, w := range ltWindows {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			client := answer("pass note")
			opts := ltOpts(client, w)
			tp := NewTwoPass(nil)
			defer tp.Close()
			msgs := longTurn()
			tp.Prefire(context.Background(), msgs, opts)
			tp.Wait()
			opts.TwoPass = tp
			res, err := Compact(context.Background(), msgs, opts)
			if err != nil {
				t.Fatal(err)
			}
			reqs := client.requests()
			if len(reqs) != 2 || !res.CachedNote {
				t.Fatalf("%d calls, cached note %v", len(reqs), res.CachedNote)
			}
			// Pass 1 covers the first 95 %: the request, the edit and the
			// reads; pass 2 the rest, with the failing test.
			pass1 := forkText(forkOf(reqs[0]))
			for _, want := range []string{ltRequest, ltEditPath, ltReadPath(0), ltReadPath(30)} {
				if !strings.Contains(pass1, want) {
					t.Errorf("pass 1 lacks %q", want)
				}
			}
			pass2 := forkText(forkOf(reqs[1]))
			for _, want := range []string{ltTestCmd, ltExitLine, ltErrorLine, ltFollowUp} {
				if !strings.Contains(pass2, want) {
					t.Errorf("pass 2 lacks %q", want)
				}
			}
			budget := SummaryBudget(w, 0, 0)
			if in := reqTokens(reqs[0]); in > budget || in < budget*9/10 {
				t.Errorf("pass 1 input = %d tokens for a %d-token budget", in, budget)
			}
			checkRebuilt(t, res.Messages)
		})
	}
}

func TestLongTurnNativeFallbacks(t *testing.T) {
	for _, w := range ltWindows {
		t.Run(fmt.Sprintf("inline %d", w), func(t *testing.T) {
			client := answer("local summary") // never returns a compaction block
			opts := ltOpts(client, w)
			opts.Route = providers.Route{Provider: "anthropic", Model: "claude-sonnet-4-6"}
			res, err := Compact(context.Background(), longTurn(), opts)
			if err != nil {
				t.Fatal(err)
			}
			reqs := client.requests()
			if res.Strategy != Local || res.Fallback == "" || len(reqs) != 2 {
				t.Fatalf("strategy %s, fallback %q, %d calls", res.Strategy, res.Fallback, len(reqs))
			}
			checkEvidence(t, "the inline request", reqs[0].Messages)
			checkEvidence(t, "the fallback fork", forkOf(reqs[1]))
			checkRebuilt(t, res.Messages)
		})
		t.Run(fmt.Sprintf("standalone %d", w), func(t *testing.T) {
			c := &compactor{scripted: answer("local summary"), compact: func(context.Context, *providers.CompactRequest) (*providers.CompactResponse, error) {
				return nil, &providers.Error{Kind: providers.KindRejected, Provider: "openai", Model: "gpt-5", Status: 400, Message: "unsupported"}
			}}
			opts := ltOpts(c, w)
			opts.Route = providers.Route{Provider: "openai", Model: "gpt-5"}
			res, err := Compact(context.Background(), longTurn(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Strategy != Local || len(c.creqs) != 1 || len(c.requests()) != 1 {
				t.Fatalf("strategy %s, %d compact calls, %d generate calls", res.Strategy, len(c.creqs), len(c.requests()))
			}
			checkEvidence(t, "the native input", c.creqs[0].Input)
			checkEvidence(t, "the fallback fork", forkOf(c.requests()[0]))
			checkRebuilt(t, res.Messages)
		})
	}
	t.Run("inline success keeps the last batches", func(t *testing.T) {
		block := []byte(`{"type":"compaction","content":"inline summary"}`)
		client := &scripted{reply: func(context.Context, int, *providers.Request) (*providers.Response, error) {
			return &providers.Response{Message: history.NewText(history.Assistant, ""), Compaction: block}, nil
		}}
		opts := ltOpts(client, 64000)
		opts.Route = providers.Route{Provider: "anthropic", Model: "claude-sonnet-4-6"}
		res, err := Compact(context.Background(), longTurn(), opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.Strategy != NativeInline {
			t.Fatalf("strategy %s (%s)", res.Strategy, res.Fallback)
		}
		checkRebuilt(t, res.Messages)
	})
}
