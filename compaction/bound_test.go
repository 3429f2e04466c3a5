package compaction

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
	"pgregory.net/rapid"
)

func TestTruncateMiddle(t *testing.T) {
	o200k := history.NewEstimator(history.O200k)
	for _, est := range []*history.Estimator{approx, o200k} {
		s := "BEGIN " + strings.Repeat("héllo wörld ", 3000) + " END"
		for _, n := range []int{5, 40, 100, 1000} {
			got := truncateMiddle(est, s, n, "text")
			if est.Text(got) > n {
				t.Errorf("%s n=%d: %d tokens", est.Tokenizer(), n, est.Text(got))
			}
			if n >= 100 && (!strings.HasPrefix(got, "BEGIN ") || !strings.HasSuffix(got, " END") || !strings.Contains(got, "tokens of text omitted")) {
				t.Errorf("%s n=%d: head/tail lost: %.40q", est.Tokenizer(), n, got)
			}
			if !utf8Valid(got) {
				t.Errorf("invalid UTF-8")
			}
		}
		if got := truncateMiddle(est, "short", 10, "x"); got != "short" {
			t.Errorf("short text changed: %q", got)
		}
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

func TestPreviewNonGrowingIdempotent(t *testing.T) {
	m := history.Message{
		ID: "m1", Role: history.Assistant, Content: history.Text(strings.Repeat("content ", 3000)),
		Reasoning: strings.Repeat("think ", 3000), ReasoningDetails: []json.RawMessage{json.RawMessage(`{"type":"thinking","signature":"` + strings.Repeat("s", 4000) + `"}`)},
		ToolCalls: []history.ToolCall{{ID: "call-large", Name: "write_file", Arguments: `{"content":"` + strings.Repeat("z", 300000) + `"}`, ThoughtSignature: "sig"}},
	}
	orig := snapshot([]history.Message{m})
	for _, budget := range []int{0, 30, 200, 2000, 100000} {
		p := preview(approx, m, budget)
		q := preview(approx, p, budget)
		if snapshot([]history.Message{p}) != snapshot([]history.Message{q}) {
			t.Errorf("budget %d: not idempotent", budget)
		}
		pt, mt := approx.Message(&p), approx.Message(&m)
		if pt > mt {
			t.Errorf("budget %d: grew %d → %d", budget, mt, pt)
		}
		if pt > max(budget, floorTokens(approx, &m)) {
			t.Errorf("budget %d: %d tokens", budget, pt)
		}
		if p.ID != "m1" || p.ToolCalls[0].ID != "call-large" || p.ToolCalls[0].Name != "write_file" {
			t.Errorf("budget %d: ids lost", budget)
		}
		if budget < 100000 && (p.ToolCalls[0].Arguments != "{}" || p.ToolCalls[0].ThoughtSignature != "" || p.ReasoningDetails != nil) {
			t.Errorf("budget %d: large arguments/signature kept", budget)
		}
	}
	if snapshot([]history.Message{m}) != orig {
		t.Error("preview modified its input")
	}
}

func TestContinuityTail(t *testing.T) {
	t.Run("newest groups within budget", func(t *testing.T) {
		// 12 groups of ~8,000 tokens.
		msgs := conv(12, 1000, 7000)
		tail, start := continuityTail(approx, msgs, 20000)
		if n := spanTokens(approx, tail); n > 20000 || n != 16000 {
			t.Errorf("tail = %d tokens, want 16,000", n)
		}
		if start != 20 || len(tail)%2 != 0 || tail[len(tail)-1].Text() != msgs[23].Text() {
			t.Errorf("start %d, %d messages", start, len(tail))
		}
	})
	t.Run("oversized newest group", func(t *testing.T) {
		msgs := []history.Message{history.NewText(history.User, strings.Repeat("u", 100000)), history.NewText(history.Assistant, strings.Repeat("a", 100000))}
		tail, start := continuityTail(approx, msgs, 20000)
		if len(tail) != 2 || start != 0 || spanTokens(approx, tail) > 20000 {
			t.Errorf("%d messages, %d tokens", len(tail), spanTokens(approx, tail))
		}
	})
	t.Run("one long agent turn", func(t *testing.T) {
		// A single user message followed by 40 batches of ~2,500 tokens: the
		// tail keeps the request and the newest batches whole, not a
		// preview of every batch.
		msgs := []history.Message{history.NewText(history.User, "fix the flaky test")}
		for i := range 40 {
			id := fmt.Sprintf("call_%d", i)
			msgs = append(msgs,
				history.Message{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: id, Name: "read_file", Arguments: `{"path":"a.go"}`}}},
				history.NewToolResult(id, "read_file", strings.Repeat("x", 10000)))
		}
		tail, start := continuityTail(approx, msgs, 20000)
		if start != 0 || tail[0].Text() != "fix the flaky test" {
			t.Fatalf("start %d, first %q", start, tail[0].Text())
		}
		if n := spanTokens(approx, tail); n > 20000 || len(tail) < 3 || len(tail) > 20 {
			t.Errorf("tail = %d messages, %d tokens", len(tail), n)
		}
		if last := tail[len(tail)-1]; last.ToolCallID != "call_39" || last.Text() != msgs[80].Text() {
			t.Errorf("newest batch not kept verbatim: %q", last.ToolCallID)
		}
		if err := history.CheckPairing(tail); err != nil {
			t.Error(err)
		}
	})
	t.Run("large arguments keep correlation", func(t *testing.T) {
		msgs := []history.Message{
			history.NewText(history.User, "write it"),
			{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: "call-large", Name: "write", Arguments: `{"c":"` + strings.Repeat("q", 300000) + `"}`}}},
			history.NewToolResult("call-large", "write", "ok"),
		}
		tail, _ := continuityTail(approx, msgs, 20000)
		if len(tail) != 3 || tail[1].ToolCalls[0].Arguments != "{}" || tail[1].ToolCalls[0].ID != "call-large" || tail[2].ToolCallID != "call-large" {
			t.Errorf("tail = %s", snapshot(tail)[:200])
		}
	})
	t.Run("no groups", func(t *testing.T) {
		msgs := []history.Message{history.NewText(history.Assistant, "a")}
		if tail, start := continuityTail(approx, msgs, 20000); len(tail) != 0 || start != 1 {
			t.Errorf("tail %d, start %d", len(tail), start)
		}
	})
}

func TestRetainUserMessages(t *testing.T) {
	prefix := []history.Message{
		history.NewText(history.User, "first: set up the project"),
		history.NewText(history.Assistant, "ok"),
		history.NewText(history.User, "the build failed with an error"),
		history.NewText(history.User, "actually, use make instead"),
		history.NewText(history.User, "plain request"),
		history.NewText(history.User, "another plain request"),
		history.NewText(history.User, "   "),
	}
	got := retainUserMessages(approx, prefix, 20000, 3)
	var texts []string
	for _, m := range got {
		texts = append(texts, m.Text())
	}
	// Error (3) and correction (2.5) first, then the newest plain one; in order.
	want := "the build failed with an error|actually, use make instead|another plain request"
	if strings.Join(texts, "|") != want {
		t.Errorf("retained %q", texts)
	}
	// The first message that does not fit is cut, then selection stops.
	long := []history.Message{history.NewText(history.User, "error "+strings.Repeat("x", 400))}
	cut := retainUserMessages(approx, long, 50, 4)
	if len(cut) != 1 || approx.Message(&cut[0]) > 50 || !strings.HasSuffix(cut[0].Text(), "[…]") {
		t.Errorf("cut = %q", snapshot(cut))
	}
	if got := retainUserMessages(approx, prefix, 0, 4); got != nil {
		t.Error("zero budget retained messages")
	}
}

func TestSelectForkKeepsOrderAndPins(t *testing.T) {
	msgs := append([]history.Message{SummaryMessage("older summary")}, conv(20, 29, 471)...)
	fork, n, err := selectFork(context.Background(), approx, msgs, 3000)
	if err != nil {
		t.Fatal(err)
	}
	if fork[0].Role != history.System || fork[1].Text() != msgs[1].Text() {
		t.Errorf("pins missing: %.20q, %.20q", fork[0].Text(), fork[1].Text())
	}
	if n > 3000 || n != spanTokens(approx, fork) {
		t.Errorf("fork = %d tokens", n)
	}
	if fork[len(fork)-1].Text() != msgs[len(msgs)-1].Text() {
		t.Error("newest message missing")
	}
	if err := history.CheckPairing(fork); err != nil {
		t.Error(err)
	}
	var be *budgetError
	if _, _, err := selectFork(context.Background(), approx, msgs, 0); !errors.As(err, &be) {
		t.Errorf("zero allowance: %v", err)
	}
}

// TestCompactProperties checks, for random histories, that Compact never
// modifies its input, returns a protocol-valid smaller history or a clean
// no-op/budget error, and is deterministic.
func TestCompactProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 60).Draw(rt, "messages")
		var msgs []history.Message
		callN := 0
		for i := range n {
			switch rapid.IntRange(0, 5).Draw(rt, fmt.Sprint("kind", i)) {
			case 0, 1:
				msgs = append(msgs, msg(history.User, fmt.Sprintf("u%d", i), rapid.IntRange(6, 3000).Draw(rt, fmt.Sprint("ut", i))))
			case 2:
				msgs = append(msgs, msg(history.Assistant, fmt.Sprintf("a%d", i), rapid.IntRange(6, 3000).Draw(rt, fmt.Sprint("at", i))))
			case 3:
				calls := rapid.IntRange(1, 3).Draw(rt, fmt.Sprint("calls", i))
				m := history.Message{Role: history.Assistant}
				for range calls {
					callN++
					m.ToolCalls = append(m.ToolCalls, history.ToolCall{ID: fmt.Sprintf("c%d", callN%5), Name: "bash", Arguments: `{"command":"ls"}`})
				}
				msgs = append(msgs, m)
			case 4:
				msgs = append(msgs, history.NewToolResult(fmt.Sprintf("c%d", rapid.IntRange(0, 5).Draw(rt, fmt.Sprint("rid", i))), "bash", strings.Repeat("o", rapid.IntRange(0, 40000).Draw(rt, fmt.Sprint("rt", i)))))
			case 5:
				msgs = append(msgs, history.NewText(history.System, "sys"))
			}
		}
		before := snapshot(msgs)
		capacity := rapid.SampledFrom([]int{0, 8000, 32768, 128000}).Draw(rt, "capacity")
		opts := localOpts(answer("a short summary"))
		opts.Capacity = capacity
		res, err := Compact(context.Background(), msgs, opts)
		if snapshot(msgs) != before {
			rt.Fatal("input modified")
		}
		var ce *Error
		switch {
		case errors.Is(err, ErrAlreadyCompact):
			return
		case errors.As(err, &ce) && ce.Kind == KindBudget:
			if len(opts.Client.(*scripted).requests()) != 0 {
				rt.Fatal("budget error after a provider call")
			}
			return
		case err != nil:
			rt.Fatalf("unexpected error: %v", err)
		}
		if res.CompactedTokens >= res.OriginalTokens {
			rt.Fatalf("no reduction: %d ≥ %d", res.CompactedTokens, res.OriginalTokens)
		}
		if err := history.CheckPairing(res.Messages); err != nil {
			rt.Fatalf("result pairing: %v", err)
		}
		for _, req := range opts.Client.(*scripted).requests() {
			if err := history.CheckPairing(req.Messages); err != nil {
				rt.Fatalf("request pairing: %v", err)
			}
			if capacity > 0 && reqTokens(req) > SummaryBudget(capacity, 0, 0) {
				rt.Fatalf("request %d tokens over budget %d", reqTokens(req), SummaryBudget(capacity, 0, 0))
			}
		}
		if b := WindowBound(capacity, 0, 0); b > 0 && res.CompactedTokens > b {
			rt.Fatalf("result %d tokens over the window bound %d", res.CompactedTokens, b)
		}
		again, err := Compact(context.Background(), msgs, opts)
		if err != nil || snapshot(again.Messages) != snapshot(res.Messages) {
			rt.Fatal("not deterministic")
		}
	})
}
