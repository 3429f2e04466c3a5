package compaction

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
)

// prompt396 is a 396-byte prompt: its request message is 4 + 99 = 103 tokens.
var prompt396 = strings.Repeat("p", 396)

func localOpts(client providers.Generator) Options {
	return Options{
		Trigger:     TriggerManual,
		Prompt:      prompt396,
		Route:       providers.Route{Provider: "test", Model: "m"},
		Client:      client,
		Estimator:   approx,
		RoutePolicy: DefaultRoutePolicy(),
		Capacity:    32768, // tail min(20,000, 5,242) = 5,242
	}
}

func snapshot(msgs []history.Message) string {
	b, _ := json.Marshal(msgs)
	return string(b)
}

// TestLocalBudget32k walks the docs/design.md §8.5 budget with a 32,768-token window by hand.
func TestLocalBudget32k(t *testing.T) {
	// 60 groups of 500 tokens (user 29 + assistant 471) = 30,000 tokens.
	msgs := conv(60, 29, 471)
	before := snapshot(msgs)
	client := answer("the summary")
	opts := localOpts(client)
	opts.Capacity = 32768
	opts.ReservedOutput = 4096
	opts.SummaryOutputLimit = 1000
	// Envelope: a 4,000-byte system prompt (1,000 tokens) and one 800-byte
	// tool schema (200 tokens): prefix 1,200.
	opts.Envelope = &Envelope{Provider: "test", Model: "m", System: strings.Repeat("s", 4000), Tools: []json.RawMessage{json.RawMessage(`"` + strings.Repeat("t", 798) + `"`)}}

	res, err := Compact(context.Background(), msgs, opts)
	if err != nil {
		t.Fatal(err)
	}
	reqs := client.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d provider calls, want 1", len(reqs))
	}
	req := reqs[0]
	// Budget: 32,768 − (4,096 + 512) − 1,200 − 1,000 = 25,960.
	// Allowance for history: 25,960 − 103 (prompt) = 25,857.
	// The goal message (29) is pinned: 25,828 left for 119 units (59 users,
	// 60 assistants). Each older unit is previewed to at most
	// 25,828 / (2 × 119) = 108 tokens (users of 29 stay whole): previews
	// cost 59 × 29 + 60 × 108 = 8,191. Upgrading the newest assistants to
	// whole costs 471 − 108 = 363 each: (25,828 − 8,191) / 363 → 48 groups.
	// Fork: every one of the 120 messages, groups 12–59 whole; + the prompt.
	if len(req.Messages) != 121 {
		t.Errorf("request has %d messages, want 121 (every message, older ones previewed)", len(req.Messages))
	}
	checkForkShape(t, req.Messages[:120], msgs, 48, 108)
	if got := reqTokens(req); got > 25960 || got < 25960-363 {
		t.Errorf("request tokens = %d, want within one upgrade of 25,960", got)
	}
	if req.Messages[0].Text() != msgs[0].Text() {
		t.Errorf("first message is not the pinned goal: %.10q", req.Messages[0].Text())
	}
	if last := req.Messages[len(req.Messages)-1]; last.Role != history.User || last.Text() != prompt396 {
		t.Errorf("last message is not the prompt: %.20q", last.Text())
	}
	if req.System != opts.Envelope.System || len(req.Tools) != 1 || req.MaxOutputTokens != 1000 || req.Model != "m" || req.Inline != nil {
		t.Errorf("request envelope: system %d bytes, %d tools, max %d, model %q", len(req.System), len(req.Tools), req.MaxOutputTokens, req.Model)
	}

	// Rebuilt: summary, 4 retained users (groups 46–49), tail of 10 groups
	// (5,000 ≤ min(20,000, 32,768 × 0.16 = 5,242)).
	if res.CompactedMessageCount != 1+4+20 || len(res.Messages) != 25 {
		t.Fatalf("compacted to %d messages, want 25", len(res.Messages))
	}
	if got := res.Messages[0]; got.Role != history.System || got.Text() != "Previous conversation summary:\nthe summary" {
		t.Errorf("summary message = %q", got.Text())
	}
	for i, g := range []int{46, 47, 48, 49} {
		if got, want := res.Messages[1+i].Text(), msgs[2*g].Text(); got != want {
			t.Errorf("retained %d = %.8q, want %.8q", i, got, want)
		}
	}
	if got, want := res.Messages[5].Text(), msgs[100].Text(); got != want {
		t.Errorf("tail starts with %.8q, want %.8q", got, want)
	}
	sum := res.Messages[0]
	if want := approx.Message(&sum) + 4*29 + 5000; res.CompactedTokens != want {
		t.Errorf("CompactedTokens = %d, want %d", res.CompactedTokens, want)
	}
	if res.OriginalTokens != 30000 || res.OriginalMessageCount != 120 {
		t.Errorf("original = %d tokens, %d messages", res.OriginalTokens, res.OriginalMessageCount)
	}
	if res.Mode != ModeLocal || res.Strategy != Local || res.Fallback != "" || res.Summary != "the summary" || res.Calls != 1 {
		t.Errorf("result = %+v", res)
	}
	if res.Usage.InputTokens != 10 || res.Usage.OutputTokens != 2 {
		t.Errorf("usage = %+v", res.Usage)
	}
	if snapshot(msgs) != before {
		t.Error("input history modified")
	}
}

func TestEnvelopeOnlyForSameRoute(t *testing.T) {
	msgs := conv(20, 29, 471)
	for _, env := range []*Envelope{
		nil,
		{Provider: "test", Model: "other", System: "sys"},
		{Provider: "other", Model: "m", System: "sys"},
	} {
		client := answer("s")
		opts := localOpts(client)
		opts.Envelope = env
		if _, err := Compact(context.Background(), msgs, opts); err != nil {
			t.Fatal(err)
		}
		if req := client.requests()[0]; req.System != "" || req.Tools != nil {
			t.Errorf("envelope %+v reused: system %q", env, req.System)
		}
	}
}

func TestCapacityRetry(t *testing.T) {
	msgs := conv(60, 29, 471)
	client := &scripted{reply: func(_ context.Context, n int, req *providers.Request) (*providers.Response, error) {
		if n == 0 {
			return nil, capacityErr(0)
		}
		return reply("small summary"), nil
	}}
	opts := localOpts(client)
	opts.Capacity = 32768
	res, err := Compact(context.Background(), msgs, opts)
	if err != nil {
		t.Fatal(err)
	}
	reqs := client.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d calls, want 2", len(reqs))
	}
	// Budget 28,160: allowance 28,057, goal pinned (29): 28,028 for 119
	// units, previews ≤ 117 tokens (8,731 in all), (28,028 − 8,731) / 354
	// → 54 newest groups whole.
	// Halved budget 14,080: allowance 13,977: 13,948, previews ≤ 58
	// (5,191), (13,948 − 5,191) / 413 → 21 groups whole.
	checkForkShape(t, reqs[0].Messages[:120], msgs, 54, 117)
	checkForkShape(t, reqs[1].Messages[:120], msgs, 21, 58)
	first, second := reqTokens(reqs[0])-103, reqTokens(reqs[1])-103
	if first > 28057 || first < 28057-354 || second > 13977 || second < 13977-413 {
		t.Errorf("fork tokens = %d then %d, want within one upgrade of 28,057 then 13,977", first, second)
	}
	if res.Summary != "small summary" || res.Calls != 2 {
		t.Errorf("result: %+v", res)
	}
}

func TestCapacityRetryUnknownWindow(t *testing.T) {
	msgs := conv(60, 29, 471)
	for _, tt := range []struct {
		name     string
		reported int
		want     int // the retry's allowance for the fork
	}{
		// Our estimate of the first attempt: 30,000 + 103 = 30,103 → budget
		// 15,051 → allowance 14,948.
		{"estimated", 0, 14948},
		// Provider-reported 40,000 → budget 20,000 → allowance 19,897.
		{"reported", 40000, 19897},
	} {
		t.Run(tt.name, func(t *testing.T) {
			client := &scripted{reply: func(_ context.Context, n int, req *providers.Request) (*providers.Response, error) {
				if n == 0 {
					return nil, capacityErr(tt.reported)
				}
				return reply("s"), nil
			}}
			opts := localOpts(client)
			opts.Capacity = 0
			if _, err := Compact(context.Background(), msgs, opts); err != nil {
				t.Fatal(err)
			}
			reqs := client.requests()
			if len(reqs) != 2 {
				t.Fatalf("%d calls", len(reqs))
			}
			if got := reqTokens(reqs[0]) - 103; got != 30000 { // verbatim first fork
				t.Errorf("first fork = %d tokens, want 30,000", got)
			}
			// Every message is in the retry, the older ones previewed; the
			// fork fills the allowance to within one upgrade (≤ 471 tokens).
			if got := reqTokens(reqs[1]) - 103; got > tt.want || got < tt.want-471 || len(reqs[1].Messages) != 121 {
				t.Errorf("retry fork = %d tokens in %d messages, want ≤ %d and > %d, 121 messages", got, len(reqs[1].Messages), tt.want, tt.want-471)
			}
		})
	}
}

func TestCapacityRetryLimits(t *testing.T) {
	rejectAll := func() *scripted {
		return &scripted{reply: func(context.Context, int, *providers.Request) (*providers.Response, error) {
			return nil, capacityErr(0)
		}}
	}
	t.Run("no retries", func(t *testing.T) {
		client := rejectAll()
		opts := localOpts(client)
		opts.Capacity = 32768
		opts.RoutePolicy.MaxOverflowRetries = 0
		_, err := Compact(context.Background(), conv(60, 29, 471), opts)
		var ce *Error
		if !errors.As(err, &ce) || ce.Kind != KindProvider || !providers.IsCapacity(err) {
			t.Fatalf("err = %v", err)
		}
		if len(client.requests()) != 1 {
			t.Errorf("%d calls, want 1", len(client.requests()))
		}
		// Input = the fork + 103; budget 28,160.
		if ce.InputTokens != reqTokens(client.requests()[0]) || ce.InputTokens > 28160 || ce.Budget != 28160 || ce.Provider != "test" || ce.Model != "m" {
			t.Errorf("error = %+v", ce)
		}
	})
	t.Run("three retries", func(t *testing.T) {
		client := rejectAll()
		opts := localOpts(client)
		opts.Capacity = 32768
		opts.RoutePolicy.MaxOverflowRetries = 3
		_, err := Compact(context.Background(), conv(60, 29, 471), opts)
		if !providers.IsCapacity(err) {
			t.Fatalf("err = %v", err)
		}
		reqs := client.requests()
		if len(reqs) != 4 {
			t.Fatalf("%d calls, want 4", len(reqs))
		}
		for i := 1; i < len(reqs); i++ {
			if reqTokens(reqs[i]) >= reqTokens(reqs[i-1]) {
				t.Errorf("retry %d did not shrink: %d ≥ %d", i, reqTokens(reqs[i]), reqTokens(reqs[i-1]))
			}
		}
	})
	t.Run("retry that cannot shrink is skipped", func(t *testing.T) {
		// 2 groups of 60 tokens: the halved budget (14,080) selects the same fork.
		client := rejectAll()
		opts := localOpts(client)
		opts.Capacity = 32768
		opts.RetainedMessages = -1
		opts.RoutePolicy.RetainRatio = 0.001 // a 32-token tail
		msgs := append(conv(1, 29, 3000), conv(2, 29, 31)...)
		_, err := Compact(context.Background(), msgs, opts)
		if !providers.IsCapacity(err) {
			t.Fatalf("err = %v", err)
		}
		if n := len(client.requests()); n != 1 {
			t.Errorf("%d calls, want 1 (the identical retry is skipped)", n)
		}
	})
}

func TestBudgetErrorBeforeAnyCall(t *testing.T) {
	client := answer("never")
	tests := []struct {
		name   string
		msgs   []history.Message
		mutate func(*Options)
		budget int
	}{
		{
			// 2,000 − (250 + 512) = 1,238; a 6,000-byte prompt needs 1,504.
			name: "instructions exceed the budget", msgs: conv(10, 29, 471), budget: 1238,
			mutate: func(o *Options) { o.Capacity = 2000; o.Prompt = strings.Repeat("p", 6000) },
		},
		{
			// One group whose 300 tool calls need ≥ 300 × 26 tokens.
			// 4,000 − (500 + 512) = 2,988.
			name: "protocol minimum exceeds the budget", budget: 2988,
			msgs: func() []history.Message {
				calls := make([]history.ToolCall, 300)
				out := []history.Message{history.NewText(history.User, "go")}
				for i := range calls {
					calls[i] = history.ToolCall{ID: fmt.Sprintf("c%03d", i), Name: "bash", Arguments: `{"command":"` + strings.Repeat("y", 400) + `"}`}
				}
				out = append(out, history.Message{Role: history.Assistant, ToolCalls: calls})
				for i := range calls {
					out = append(out, history.NewToolResult(calls[i].ID, "bash", "ok"))
				}
				return out
			}(),
			mutate: func(o *Options) { o.Capacity = 4000 },
		},
		{
			// Envelope prefix and output limit eat the whole window.
			name: "prefix and output exceed the budget", msgs: conv(10, 29, 471), budget: 0,
			mutate: func(o *Options) {
				o.Capacity = 8000
				o.SummaryOutputLimit = 4000
				o.Envelope = &Envelope{Provider: "test", Model: "m", System: strings.Repeat("s", 12000)}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := localOpts(client)
			tt.mutate(&opts)
			_, err := Compact(context.Background(), tt.msgs, opts)
			var ce *Error
			if !errors.As(err, &ce) || ce.Kind != KindBudget {
				t.Fatalf("err = %v, want a budget error", err)
			}
			if ce.Budget != tt.budget || ce.InputTokens <= ce.Budget {
				t.Errorf("budget %d (want %d), input %d", ce.Budget, tt.budget, ce.InputTokens)
			}
			if !strings.Contains(err.Error(), "does not fit") {
				t.Errorf("text: %s", err)
			}
		})
	}
	if n := len(client.requests()); n != 0 {
		t.Errorf("%d provider calls, want 0", n)
	}
}

func TestEmptySummary(t *testing.T) {
	msgs := conv(20, 29, 471)
	before := snapshot(msgs)
	opts := localOpts(answer(" \n\t "))
	opts.Capacity = 32768
	_, err := Compact(context.Background(), msgs, opts)
	var ce *Error
	if !errors.As(err, &ce) || ce.Kind != KindEmpty {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "provider returned an empty summary") {
		t.Errorf("text = %q", err)
	}
	if ce.Provider != "test" || ce.Model != "m" || ce.InputTokens != 10000+103 {
		t.Errorf("error = %+v", ce)
	}
	if snapshot(msgs) != before {
		t.Error("history changed")
	}
}

func TestHangingProviderCancelled(t *testing.T) {
	msgs := conv(20, 29, 471)
	msgs = append(msgs, history.Message{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: "c1", Name: "bash"}}}) // unanswered
	before := snapshot(msgs)
	started := make(chan struct{})
	client := &scripted{reply: func(ctx context.Context, _ int, _ *providers.Request) (*providers.Response, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	opts := localOpts(client)
	opts.Capacity = 32768
	go func() {
		_, err := Compact(ctx, msgs, opts)
		done <- err
	}()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("Compact returned before calling the provider: %v", err)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Compact did not return after cancellation")
	}
	if snapshot(msgs) != before {
		t.Error("history changed")
	}
	for i := range msgs {
		if _, ok := approx.Cached(&msgs[i]); ok {
			t.Fatalf("message %d got an estimate cached: the input was written to", i)
		}
	}
}

func TestAlreadyCompact(t *testing.T) {
	t.Run("everything in the tail", func(t *testing.T) {
		client := answer("s")
		_, err := Compact(context.Background(), conv(5, 29, 71), localOpts(client))
		if !errors.Is(err, ErrAlreadyCompact) || err.Error() != "Conversation is already compact." {
			t.Fatalf("err = %v", err)
		}
		if len(client.requests()) != 0 {
			t.Error("a provider call was made")
		}
	})
	t.Run("summary does not shrink", func(t *testing.T) {
		// A 300-token preamble before the first user message is all there is to
		// summarize; a 1,400-byte (350-token) summary is larger.
		msgs := append([]history.Message{msg(history.Assistant, "setup", 300)}, conv(3, 29, 71)...)
		_, err := Compact(context.Background(), msgs, localOpts(answer(strings.Repeat("w", 1400))))
		if !errors.Is(err, ErrAlreadyCompact) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("too little before the tail: no call", func(t *testing.T) {
		// 30 tokens before the first user message: not worth a summary.
		client := answer("s")
		msgs := append([]history.Message{msg(history.Assistant, "setup", 30)}, conv(3, 29, 71)...)
		if _, err := Compact(context.Background(), msgs, localOpts(client)); !errors.Is(err, ErrAlreadyCompact) {
			t.Fatalf("err = %v", err)
		}
		if len(client.requests()) != 0 {
			t.Error("a provider call was made")
		}
	})
	t.Run("empty", func(t *testing.T) {
		if _, err := Compact(context.Background(), nil, localOpts(answer("s"))); !errors.Is(err, ErrAlreadyCompact) {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestRebuildShape mirrors VT Code's compact_history_manual test: a message
// before the first user message is summarized away, both groups stay.
func TestRebuildShape(t *testing.T) {
	msgs := []history.Message{
		msg(history.Assistant, "setup", 400),
		history.NewText(history.User, "first request"),
		history.NewText(history.Assistant, "working"),
		history.NewText(history.User, "second request"),
	}
	res, err := Compact(context.Background(), msgs, localOpts(answer("summary")))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range res.Messages {
		got = append(got, string(m.Role)+": "+m.Text())
	}
	want := []string{"system: Previous conversation summary:\nsummary", "user: first request", "assistant: working", "user: second request"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestRebuiltHistoryBoundedToWindow mirrors
// compacted_history_respects_model_context_budget: 24 requests of ~1,200
// words in a 32,768 window stay within the bound.
func TestRebuiltHistoryBoundedToWindow(t *testing.T) {
	var msgs []history.Message
	for i := range 24 {
		msgs = append(msgs, history.NewText(history.User, fmt.Sprintf("request %d ", i)+strings.Repeat("context ", 1200)))
	}
	opts := localOpts(answer(strings.Repeat("summary words ", 3000)))
	opts.Capacity = 32768
	opts.ReservedOutput = 4096
	res, err := Compact(context.Background(), msgs, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.CompactedTokens > 28160 {
		t.Errorf("compacted %d tokens, want ≤ 28,160", res.CompactedTokens)
	}
	if s := res.Messages[0]; res.SummaryIndex != 0 || !IsSummaryMessage(&s) {
		t.Errorf("summary index %d, first message = %.40q", res.SummaryIndex, s.Text())
	}
	if err := history.CheckPairing(res.Messages); err != nil {
		t.Error(err)
	}
}

func TestOversizedToolResultsPreviewed(t *testing.T) {
	big := strings.Repeat("line of output\n", 4000) // 15,000 tokens
	msgs := []history.Message{
		history.NewText(history.User, "read it"),
		{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: "call_7", Name: "read_file", Arguments: `{"path":"a.go"}`}}},
		history.NewToolResult("call_7", "read_file", "HEAD "+big+" TAIL"),
		history.NewText(history.Assistant, "done"),
	}
	msgs = append(msgs, conv(3, 29, 71)...)
	client := answer("s")
	if _, err := Compact(context.Background(), msgs, localOpts(client)); err != nil {
		t.Fatal(err)
	}
	req := client.requests()[0]
	var res *history.Message
	for i := range req.Messages {
		if req.Messages[i].Role == history.Tool {
			res = &req.Messages[i]
		}
	}
	if res == nil || res.ToolCallID != "call_7" || res.ToolName != "read_file" {
		t.Fatalf("tool result missing or lost its ids: %+v", res)
	}
	if n := approx.Message(res); n > ToolResultPreview {
		t.Errorf("preview is %d tokens, want ≤ %d", n, ToolResultPreview)
	}
	text := res.Text()
	if !strings.HasPrefix(text, "HEAD ") || !strings.HasSuffix(text, " TAIL") || !strings.Contains(text, "tokens of tool result call_7 (read_file) omitted") {
		t.Errorf("preview = %.60q … %.60q", text, text[max(0, len(text)-60):])
	}
	if err := history.CheckPairing(req.Messages[:len(req.Messages)-1]); err != nil {
		t.Error(err)
	}
}

func TestStrategyOption(t *testing.T) {
	msgs := conv(30, 29, 471)
	t.Run("native on a local route", func(t *testing.T) {
		opts := localOpts(answer("s"))
		opts.Strategy = "native"
		_, err := Compact(context.Background(), msgs, opts)
		var ce *Error
		if !errors.As(err, &ce) || ce.Kind != KindUnsupported {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("local on a native route", func(t *testing.T) {
		c := &compactor{scripted: answer("s"), compact: func(context.Context, *providers.CompactRequest) (*providers.CompactResponse, error) {
			t.Error("native endpoint called")
			return nil, errors.New("no")
		}}
		opts := localOpts(c)
		opts.Route = providers.Route{Provider: "openai", Model: "gpt-5"}
		opts.Strategy = "local"
		res, err := Compact(context.Background(), msgs, opts)
		if err != nil || res.Strategy != Local || res.Fallback != "" {
			t.Fatalf("res %+v, err %v", res, err)
		}
	})
	t.Run("unknown", func(t *testing.T) {
		opts := localOpts(answer("s"))
		opts.Strategy = "magic"
		if _, err := Compact(context.Background(), msgs, opts); err == nil {
			t.Fatal("no error")
		}
	})
	t.Run("no client", func(t *testing.T) {
		if _, err := Compact(context.Background(), msgs, localOpts(nil)); err == nil {
			t.Fatal("no error")
		}
	})
}

func compactionItem(id string) history.Message {
	return history.Message{Role: history.Assistant, Content: history.Text(""), ReasoningDetails: []json.RawMessage{json.RawMessage(`{"type":"compaction","id":"` + id + `","encrypted_content":"ENC` + id + `"}`)}}
}

func TestNativeStandalone(t *testing.T) {
	openai := providers.Route{Provider: "openai", Model: "gpt-5"}
	msgs := conv(30, 29, 471)
	output := []history.Message{compactionItem("cmp_1"), history.NewText(history.User, "latest request")}

	t.Run("output is the new history", func(t *testing.T) {
		c := &compactor{scripted: answer("unused"), compact: func(_ context.Context, req *providers.CompactRequest) (*providers.CompactResponse, error) {
			return &providers.CompactResponse{Output: output, Usage: history.Usage{InputTokens: 15000, OutputTokens: 300}}, nil
		}}
		opts := localOpts(c)
		opts.Route = openai
		opts.Instructions = "keep the decisions"
		res, err := Compact(context.Background(), msgs, opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.Strategy != NativeStandalone || res.Mode != ModeProvider || res.Fallback != "" || res.SummaryIndex != -1 {
			t.Errorf("result = %+v", res)
		}
		if diff := cmp.Diff(snapshot(output), snapshot(res.Messages)); diff != "" {
			t.Errorf("messages differ: %s", diff)
		}
		if len(c.requests()) != 0 || len(c.creqs) != 1 {
			t.Fatalf("calls: %d generate, %d compact", len(c.requests()), len(c.creqs))
		}
		creq := c.creqs[0]
		if creq.Model != "gpt-5" || len(creq.Input) != len(msgs) {
			t.Errorf("request: model %q, %d input messages", creq.Model, len(creq.Input))
		}
		// A custom prompt goes with the instructions.
		if creq.Instructions != prompt396+"\n\nkeep the decisions" {
			t.Errorf("instructions = %.30q", creq.Instructions)
		}
		if res.Usage.InputTokens != 15000 {
			t.Errorf("usage = %+v", res.Usage)
		}
	})

	fallbacks := []struct {
		name    string
		compact func(context.Context, *providers.CompactRequest) (*providers.CompactResponse, error)
		reason  string
	}{
		{"rejected", func(context.Context, *providers.CompactRequest) (*providers.CompactResponse, error) {
			return nil, &providers.Error{Kind: providers.KindRejected, Provider: "openai", Model: "gpt-5", Status: 400, Message: "unsupported"}
		}, "native standalone compaction failed: openai gpt-5: rejected (HTTP 400): unsupported"},
		{"empty output", func(context.Context, *providers.CompactRequest) (*providers.CompactResponse, error) {
			return &providers.CompactResponse{}, nil
		}, "native standalone compaction returned no output"},
	}
	for _, tt := range fallbacks {
		t.Run(tt.name, func(t *testing.T) {
			c := &compactor{scripted: answer("local summary"), compact: tt.compact}
			opts := localOpts(c)
			opts.Route = openai
			res, err := Compact(context.Background(), msgs, opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Strategy != Local || res.Mode != ModeLocal || res.Fallback != tt.reason {
				t.Errorf("strategy %s, mode %s, fallback %q", res.Strategy, res.Mode, res.Fallback)
			}
			if len(c.requests()) != 1 || res.Summary != "local summary" {
				t.Errorf("local summary not made")
			}
		})
	}

	t.Run("client without endpoint", func(t *testing.T) {
		opts := localOpts(answer("local"))
		opts.Route = openai
		res, err := Compact(context.Background(), msgs, opts)
		if err != nil || res.Strategy != Local || !strings.Contains(res.Fallback, "no native compaction endpoint") {
			t.Fatalf("res %+v, err %v", res, err)
		}
	})

	t.Run("cancelled: no fallback", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		c := &compactor{scripted: answer("local"), compact: func(ctx context.Context, _ *providers.CompactRequest) (*providers.CompactResponse, error) {
			cancel()
			return nil, ctx.Err()
		}}
		opts := localOpts(c)
		opts.Route = openai
		if _, err := Compact(ctx, msgs, opts); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
		if len(c.requests()) != 0 {
			t.Error("fell back after cancellation")
		}
	})

	t.Run("bounded input keeps compaction items", func(t *testing.T) {
		// An earlier pass left an opaque item first; 60 groups of 500 follow.
		long := append([]history.Message{compactionItem("old")}, conv(60, 29, 471)...)
		var got *providers.CompactRequest
		c := &compactor{scripted: answer("x"), compact: func(_ context.Context, req *providers.CompactRequest) (*providers.CompactResponse, error) {
			got = req
			return &providers.CompactResponse{Output: output}, nil
		}}
		opts := localOpts(c)
		opts.Route = openai
		opts.Capacity = 16000 // budget 16,000 − 2,512 = 13,488
		if _, err := Compact(context.Background(), long, opts); err != nil {
			t.Fatal(err)
		}
		if !history.Equal(got.Input[0], long[0]) {
			t.Errorf("compaction item not kept first: %s", snapshot(got.Input[:1]))
		}
		n := 0
		for _, m := range got.Input {
			n += approx.Message(&m)
		}
		// Budget 13,488 after the item: 120 units previewed to ≤ 56 tokens,
		// then the newest groups whole; nothing dropped.
		if n > 13488 || n < 13488-500 || len(got.Input) != len(long) {
			t.Errorf("input = %d tokens in %d messages, want ≤ 13,488 and > 12,988, %d messages", n, len(got.Input), len(long))
		}
		checkForkShape(t, got.Input[1:], long[1:], 20, 56)
	})
}

func TestNativeInline(t *testing.T) {
	route := providers.Route{Provider: "anthropic", Model: "claude-sonnet-4-6", SupportsContextEdits: true}
	msgs := conv(30, 29, 471)
	block := json.RawMessage(`{"type":"compaction","content":"inline summary","signature":"sig","cache_control":{"type":"ephemeral"}}`)

	t.Run("block fired", func(t *testing.T) {
		client := &scripted{reply: func(_ context.Context, _ int, req *providers.Request) (*providers.Response, error) {
			m := history.Message{Role: history.Assistant, ReasoningDetails: []json.RawMessage{json.RawMessage(`{"type":"thinking","thinking":"old"}`), block}}
			return &providers.Response{Message: m, Compaction: block, StopReason: "compaction", Usage: history.Usage{InputTokens: 15000}}, nil
		}}
		opts := localOpts(client)
		opts.Route = route
		opts.Instructions = "focus on tests"
		opts.Capacity = 50000
		res, err := Compact(context.Background(), msgs, opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.Strategy != NativeInline || res.Mode != ModeProvider || res.Summary != "inline summary" || res.SummaryIndex != -1 {
			t.Errorf("result = %+v", res)
		}
		first := res.Messages[0]
		if first.Role != history.Assistant || len(first.ReasoningDetails) != 1 || string(first.ReasoningDetails[0]) != string(block) {
			t.Errorf("first message = %s", snapshot(res.Messages[:1]))
		}
		// Tail: min(20,000, 50,000 × 0.16) = 8,000 → the 16 newest groups.
		if len(res.Messages) != 1+32 || res.Messages[1].Text() != msgs[28].Text() {
			t.Errorf("%d messages", len(res.Messages))
		}
		req := client.requests()[0]
		if req.Inline == nil || !req.Inline.ClearingEdits || req.Inline.TriggerTokens != 50000 || req.Inline.Instructions != "focus on tests" {
			t.Errorf("inline = %+v", req.Inline)
		}
		if last := req.Messages[len(req.Messages)-1]; last.Role != history.User {
			t.Errorf("request does not end with a user message")
		}
	})

	fallbacks := []struct {
		name   string
		resp   *providers.Response
		err    error
		reason string
	}{
		{"not fired", &providers.Response{Message: history.NewText(history.Assistant, "hello"), StopReason: "end_turn"}, nil, "native inline compaction did not fire (stop reason end_turn)"},
		{"content null", &providers.Response{Message: history.NewText(history.Assistant, ""), Compaction: json.RawMessage(`{"type":"compaction","content":null}`)}, nil, "native inline compaction returned a block without content"},
		{"rejected", nil, &providers.Error{Kind: providers.KindRejected, Provider: "anthropic", Model: "claude-sonnet-4-6", Status: 400, Message: "unknown edit"}, "native inline compaction was rejected: anthropic claude-sonnet-4-6: rejected (HTTP 400): unknown edit"},
	}
	for _, tt := range fallbacks {
		t.Run(tt.name, func(t *testing.T) {
			client := &scripted{reply: func(_ context.Context, n int, req *providers.Request) (*providers.Response, error) {
				if n == 0 {
					return tt.resp, tt.err
				}
				if req.Inline != nil {
					t.Error("fallback request carries the inline edit")
				}
				return reply("local summary"), nil
			}}
			opts := localOpts(client)
			opts.Route = providers.Route{Provider: "anthropic", Model: "claude-opus-4-1"}
			res, err := Compact(context.Background(), msgs, opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Strategy != Local || res.Mode != ModeLocal || res.Fallback != tt.reason || res.Calls != 2 {
				t.Errorf("strategy %s, mode %s, fallback %q, calls %d", res.Strategy, res.Mode, res.Fallback, res.Calls)
			}
			if req := client.requests()[0]; req.Inline == nil || req.Inline.ClearingEdits {
				t.Errorf("first request inline = %+v (route has no context edits)", req.Inline)
			}
		})
	}
}

func TestHierarchical(t *testing.T) {
	msgs := conv(40, 29, 471)
	client := &scripted{reply: func(_ context.Context, n int, req *providers.Request) (*providers.Response, error) {
		return reply(fmt.Sprintf("note %d", n+1)), nil
	}}
	opts := localOpts(client)
	opts.Capacity = 32768
	opts.Hierarchical = true
	res, err := Compact(context.Background(), msgs, opts)
	if err != nil {
		t.Fatal(err)
	}
	reqs := client.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d calls, want 2", len(reqs))
	}
	// Band 1 is the older half (groups 0–19), band 2 starts with the note.
	if n := len(reqs[0].Messages); n != 40+1 {
		t.Errorf("band 1 request has %d messages", n)
	}
	lead := reqs[1].Messages[0]
	if lead.Role != history.User || !strings.Contains(lead.Text(), "<summary_content>\nnote 1\n</summary_content>") {
		t.Errorf("band 2 lead = %q", lead.Text())
	}
	if reqs[1].Messages[1].Text() != msgs[40].Text() {
		t.Errorf("band 2 does not start at group 20")
	}
	if res.Summary != "note 2" {
		t.Errorf("summary = %q", res.Summary)
	}

	t.Run("band 2 impossible: no call at all", func(t *testing.T) {
		client := answer("x")
		opts := localOpts(client)
		// Budget 6,000 − 1,262 − 1,200 = 3,538. Band 1 (older groups) fits; band 2
		// holds a group of 120 calls whose protocol minimum (3,248 tokens) exceeds
		// what is left after the prompt and the 1,200-token note reserve.
		opts.Capacity = 6000
		opts.SummaryOutputLimit = 1200
		opts.Hierarchical = true
		calls := make([]history.ToolCall, 120)
		tail := []history.Message{history.NewText(history.User, "go")}
		for i := range calls {
			calls[i] = history.ToolCall{ID: fmt.Sprintf("c%03d", i), Name: "bash"}
		}
		tail = append(tail, history.Message{Role: history.Assistant, ToolCalls: calls})
		for i := range calls {
			tail = append(tail, history.NewToolResult(calls[i].ID, "bash", "ok"))
		}
		in := append(conv(10, 29, 471), tail...)
		_, err := Compact(context.Background(), in, opts)
		var ce *Error
		if !errors.As(err, &ce) || ce.Kind != KindBudget {
			t.Fatalf("err = %v", err)
		}
		if len(client.requests()) != 0 {
			t.Errorf("%d calls before the budget check failed", len(client.requests()))
		}
	})
}

func TestProgressReports(t *testing.T) {
	var got []string
	opts := localOpts(answer("s"))
	opts.Progress = func(m string, pct int) { got = append(got, fmt.Sprintf("%s %d", m, pct)) }
	if _, err := Compact(context.Background(), conv(30, 29, 471), opts); err != nil {
		t.Fatal(err)
	}
	want := []string{"Summarizing 60 messages (local) 20", "Rebuilt history 95"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestErrorText(t *testing.T) {
	e := &Error{Kind: KindProvider, Provider: "openai", Model: "gpt-5", InputTokens: 123456, Budget: 100000,
		Err: errors.New(`401: invalid key sk-proj-ABCDEFGHIJKLMNOP, header Authorization: Bearer abcdefghijkl, "api_key": "zzzzzzzz" ` + strings.Repeat("z", 2000))}
	s := e.Error()
	if len(s) > providers.MaxErrorText {
		t.Errorf("%d bytes", len(s))
	}
	for _, secret := range []string{"sk-proj-ABCDEFGHIJKLMNOP", "abcdefghijkl", "zzzzzzzz\""} {
		if strings.Contains(s, secret) {
			t.Errorf("secret %q in %q", secret, s[:200])
		}
	}
	if !strings.HasPrefix(s, "summary request failed (provider openai, model gpt-5, input 123,456 tokens, budget 100,000 tokens): 401: invalid key [redacted]") {
		t.Errorf("text = %.200q", s)
	}
	empty := &Error{Kind: KindEmpty, Err: errEmptySummary}
	if got := empty.Error(); got != "summary failed (provider unknown, model unknown, input 0 tokens, budget unknown): provider returned an empty summary" {
		t.Errorf("text = %q", got)
	}
}

func TestInputNeverModified(t *testing.T) {
	// Unnormalized input: a result before its call, an orphan, a missing result.
	msgs := []history.Message{
		history.NewText(history.User, "start "+strings.Repeat("x", 4000)),
		{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: "a", Name: "bash"}, {ID: "b", Name: "bash"}}},
		history.NewText(history.System, "note"),
		history.NewToolResult("b", "bash", "B"),
		history.NewToolResult("zz", "bash", "orphan"),
		history.NewToolResult("a", "bash", "A"),
		history.NewText(history.User, "next "+strings.Repeat("y", 4000)),
		{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: "c", Name: "bash"}}},
	}
	msgs = append(msgs, conv(3, 29, 71)...)
	before := snapshot(msgs)
	client := answer("s")
	opts := localOpts(client)
	opts.RoutePolicy = RoutePolicy{ThresholdRatio: 1, RetainRatio: 0.0001, MaxOverflowRetries: 1}
	opts.Capacity = 100000
	res, err := Compact(context.Background(), msgs, opts)
	if err != nil {
		t.Fatal(err)
	}
	if snapshot(msgs) != before {
		t.Error("input modified")
	}
	if err := history.CheckPairing(client.requests()[0].Messages); err != nil {
		t.Errorf("fork pairing: %v", err)
	}
	if err := history.CheckPairing(res.Messages); err != nil {
		t.Errorf("result pairing: %v", err)
	}
}

// checkForkShape checks a fork of msgs (conv groups, goal first) that
// represents every message: the newest wholeGroups groups verbatim, every
// older message either whole or a preview of at most capTok tokens that
// keeps its label.
func checkForkShape(t *testing.T, fork, msgs []history.Message, wholeGroups, capTok int) {
	t.Helper()
	if len(fork) != len(msgs) {
		t.Fatalf("fork has %d messages, want %d", len(fork), len(msgs))
	}
	firstWhole := len(msgs) - 2*wholeGroups
	for i := range msgs {
		got, want := fork[i], msgs[i]
		if got.Role != want.Role || !strings.HasPrefix(got.Text(), want.Text()[:5]) {
			t.Fatalf("fork[%d] = %s %.8q, want %s %.8q", i, got.Role, got.Text(), want.Role, want.Text())
		}
		whole := got.Text() == want.Text()
		if i >= firstWhole && !whole {
			t.Errorf("fork[%d] (%.4s) is a preview; the newest %d groups should be whole", i, want.Text(), wholeGroups)
		}
		if i < firstWhole && i > 0 && want.Role == history.Assistant && (whole || approx.Message(&got) > capTok) {
			t.Errorf("fork[%d] (%.4s): %d tokens, whole %v; want a preview of ≤ %d", i, want.Text(), approx.Message(&got), whole, capTok)
		}
	}
}
