package compaction

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
)

// TestSummarizerReadsWholeHistory: a client that is a providers.Summarizer
// gets every message of the live history, earlier summaries included, with
// the typed prompt, instructions and output bound, in one call, however
// small the window; the result is rebuilt like any local summary.
func TestSummarizerReadsWholeHistory(t *testing.T) {
	earlier := SummaryMessage("## Goal\nPort the config loader to TOML.")
	msgs := append([]history.Message{earlier}, longTurn()...)
	for _, w := range ltWindows {
		for _, mode := range []string{"single", "hierarchical", "two-pass"} {
			t.Run(fmt.Sprintf("%d %s", w, mode), func(t *testing.T) {
				s := &wholeSummarizer{reply: func(*providers.SummaryRequest) (*providers.Response, error) {
					return reply("whole summary"), nil
				}}
				opts := ltOpts(s, w)
				opts.Route = providers.Route{Provider: "offline"}
				opts.Prompt = "workspace prompt"
				opts.Instructions = "  focus on the port default  "
				opts.SummaryOutputLimit = 1500
				switch mode {
				case "hierarchical":
					opts.Hierarchical = true
				case "two-pass":
					tp := NewTwoPass(nil)
					defer tp.Close()
					tp.Prefire(context.Background(), msgs, opts) // nothing to do for a whole-history summarizer
					tp.Wait()
					opts.TwoPass = tp
				}
				res, err := Compact(context.Background(), msgs, opts)
				if err != nil {
					t.Fatal(err)
				}
				if len(s.reqs) != 1 || s.generated != 0 || res.Calls != 1 {
					t.Fatalf("%d summarize calls, %d generate calls, res.Calls %d; want 1, 0, 1", len(s.reqs), s.generated, res.Calls)
				}
				req := s.reqs[0]
				if len(req.Messages) != len(msgs) {
					t.Fatalf("summarizer got %d messages, want all %d", len(req.Messages), len(msgs))
				}
				for i := range msgs {
					if !history.Equal(req.Messages[i], msgs[i]) {
						t.Fatalf("message %d differs from the history", i)
					}
				}
				if req.Prompt != "workspace prompt" || req.Instructions != "focus on the port default" || req.MaxOutputTokens != 1500 {
					t.Errorf("request = prompt %q, instructions %q, max %d", req.Prompt, req.Instructions, req.MaxOutputTokens)
				}
				if s := res.Messages[res.SummaryIndex]; res.Summary != "whole summary" || res.SummaryIndex != 0 || !IsSummaryMessage(&s) || SummaryText(&s) != "whole summary" {
					t.Errorf("summary message = %.60q", res.Messages[0].Text())
				}
				checkRebuilt(t, res.Messages)
				if slices.ContainsFunc(res.Messages[1:], func(m history.Message) bool { return m.Role == history.System }) {
					t.Error("the earlier summary was kept beside the new one")
				}
			})
		}
	}
}

func TestSummarizerFailures(t *testing.T) {
	for _, tt := range []struct {
		name  string
		reply func(*providers.SummaryRequest) (*providers.Response, error)
		kind  string
	}{
		{"error", func(*providers.SummaryRequest) (*providers.Response, error) { return nil, errors.New("boom") }, KindProvider},
		{"empty", func(*providers.SummaryRequest) (*providers.Response, error) { return reply("  \n"), nil }, KindEmpty},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &wholeSummarizer{reply: tt.reply}
			msgs := longTurn()
			before := snapshot(msgs)
			_, err := Compact(context.Background(), msgs, ltOpts(s, 32000))
			var ce *Error
			if !errors.As(err, &ce) || ce.Kind != tt.kind {
				t.Fatalf("err = %v, want kind %s", err, tt.kind)
			}
			if ce.InputTokens != approx.Messages(msgs) || !strings.Contains(err.Error(), "unknown)") {
				t.Errorf("error = %+v: %s", ce, err)
			}
			if snapshot(msgs) != before || s.generated != 0 {
				t.Error("input modified or generate called")
			}
		})
	}
}

// TestRecompactingACompactedHistoryIsANoOp: a compacted history holds an
// earlier summary, the retained requests and a verbatim tail; compacting it
// again (nothing new since) changes nothing and calls no summarizer.
func TestRecompactingACompactedHistoryIsANoOp(t *testing.T) {
	s := &wholeSummarizer{reply: func(req *providers.SummaryRequest) (*providers.Response, error) {
		return reply("summary of " + fmt.Sprint(len(req.Messages)) + " messages"), nil
	}}
	opts := ltOpts(s, 32000)
	res, err := Compact(context.Background(), longTurn(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Compact(context.Background(), res.Messages, opts); !errors.Is(err, ErrAlreadyCompact) {
		t.Fatalf("second compaction: err = %v, want ErrAlreadyCompact", err)
	}
	if len(s.reqs) != 1 {
		t.Errorf("%d summarize calls, want 1", len(s.reqs))
	}
	// New work after the compaction is summarized again.
	more := append(slices.Clone(res.Messages), history.NewText(history.User, "next: "+strings.Repeat("more context ", 3000)), history.NewText(history.Assistant, "done"))
	if _, err := Compact(context.Background(), more, opts); err != nil {
		t.Fatalf("compaction after new work: %v", err)
	}
}

// TestWholeSummaryBoundedByWhatItReplaces: the output bound of a
// whole-history summary is half of what it stands in for, so a small
// history still compacts.
func TestWholeSummaryBoundedByWhatItReplaces(t *testing.T) {
	s := &wholeSummarizer{reply: func(req *providers.SummaryRequest) (*providers.Response, error) {
		return reply(strings.Repeat("w", 4*req.MaxOutputTokens-8)), nil // uses all of it
	}}
	opts := localOpts(nil)
	opts.Client = s
	// 14 groups of 500 = 7,000 tokens; the tail keeps 10 groups (5,000),
	// 4 retained requests (116): the summary replaces 1,884 tokens.
	res, err := Compact(context.Background(), conv(14, 29, 471), opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.reqs[0].MaxOutputTokens; got != 1884/2 {
		t.Errorf("MaxOutputTokens = %d, want %d", got, 1884/2)
	}
	if res.CompactedTokens >= res.OriginalTokens {
		t.Errorf("compacted %d ≥ %d", res.CompactedTokens, res.OriginalTokens)
	}
}
