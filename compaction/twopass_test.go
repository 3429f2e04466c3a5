package compaction

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSplitIndex(t *testing.T) {
	// 40 equal weights at 0.95 → 38 (docs/design.md §8.6).
	var equal []history.Message
	for i := range 40 {
		equal = append(equal, msg(history.User, "m"+strings.Repeat("0", i%3), 10))
	}
	if got := splitIndex(approx, equal, 0.95); got != 38 {
		t.Errorf("split = %d, want 38", got)
	}
	// A split that lands inside a batch moves past its results.
	batch := []history.Message{
		msg(history.User, "u", 10),
		{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: "a", Name: "x"}, {ID: "b", Name: "x"}}},
		msg(history.Tool, "r1", 10),
		msg(history.Tool, "r2", 10),
		msg(history.User, "v", 10),
		msg(history.Assistant, "w", 10),
	}
	batch[2].ToolCallID, batch[3].ToolCallID = "a", "b"
	for _, f := range []float64{0.5, 0.6, 0.7} {
		s := splitIndex(approx, batch, f)
		if s <= 0 || s >= len(batch) || batch[s].Role == history.Tool {
			t.Errorf("f=%v: split %d cuts a batch", f, s)
		}
	}
	// Snapping forward would reach the end: it moves back before the batch.
	tail := []history.Message{
		msg(history.User, "u", 10),
		{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: "a", Name: "x"}}},
		msg(history.Tool, "r1", 200),
	}
	tail[2].ToolCallID = "a"
	if got := splitIndex(approx, tail, 0.95); got != 1 {
		t.Errorf("split = %d, want 1", got)
	}
	if got := splitIndex(approx, tail[:1], 0.95); got != 0 {
		t.Errorf("single message split = %d", got)
	}
}

// twoPassClient answers pass 1 with "NOTE1" and anything else with "FINAL";
// it counts calls.
func twoPassClient() *scripted {
	return &scripted{reply: func(_ context.Context, _ int, req *providers.Request) (*providers.Response, error) {
		if strings.Contains(req.Messages[0].Text(), "<summary_content>") {
			return reply("FINAL"), nil
		}
		return reply("NOTE1"), nil
	}}
}

func isPass2(req *providers.Request) bool {
	return strings.Contains(req.Messages[0].Text(), "<summary_content>\nNOTE1\n</summary_content>")
}

func prefired(t *testing.T, msgs []history.Message, opts Options) *TwoPass {
	t.Helper()
	tp := NewTwoPass(nil)
	t.Cleanup(tp.Close)
	tp.Prefire(context.Background(), msgs, opts)
	tp.Wait()
	if n := len(opts.Client.(*scripted).requests()); n != 1 {
		t.Fatalf("pass 1 made %d calls, want 1", n)
	}
	return tp
}

func TestTwoPassCacheHit(t *testing.T) {
	msgs := conv(40, 29, 471) // 20,000 tokens
	client := twoPassClient()
	opts := localOpts(client)
	tp := prefired(t, msgs, opts)
	// Pass 1 covered the first 95 %: 19,000 tokens = 38 groups (76 messages).
	if req := client.requests()[0]; len(req.Messages) != 76+1 {
		t.Errorf("pass 1 sent %d messages, want 77", len(req.Messages))
	}
	// Two more turns arrive; the prefix is unchanged.
	msgs = append(msgs, conv(2, 29, 471)...)
	opts.TwoPass = tp
	res, err := Compact(context.Background(), msgs, opts)
	if err != nil {
		t.Fatal(err)
	}
	reqs := client.requests()
	if len(reqs) != 2 || res.Calls != 1 {
		t.Fatalf("%d calls in all, %d at compaction time; want 2 and 1", len(reqs), res.Calls)
	}
	pass2 := reqs[1]
	if !isPass2(pass2) {
		t.Fatalf("pass 2 does not carry the note: %.80q", pass2.Messages[0].Text())
	}
	// Carrier + the remaining messages (2 old groups and 2 new ones) + prompt.
	if got := len(pass2.Messages); got != 1+(len(msgs)-76)+1 {
		t.Errorf("pass 2 has %d messages, want %d", got, 1+(len(msgs)-76)+1)
	}
	if !res.CachedNote || res.Summary != "FINAL" || res.Strategy != Local {
		t.Errorf("result = %+v", res)
	}
	// The note is single-use.
	if _, _, _, ok := tp.lookup(msgs, opts.Route); ok {
		t.Error("note still cached after use")
	}
}

func TestTwoPassInvalidation(t *testing.T) {
	base := conv(40, 29, 471)
	tests := []struct {
		name   string
		change func(tp *TwoPass, msgs []history.Message, opts *Options) []history.Message
	}{
		{"prefix changed", func(_ *TwoPass, msgs []history.Message, _ *Options) []history.Message {
			out := append([]history.Message(nil), msgs...)
			out[3] = msg(history.Assistant, "edited", 471)
			return out
		}},
		{"tool call id changed", func(_ *TwoPass, msgs []history.Message, _ *Options) []history.Message {
			out := append([]history.Message(nil), msgs...)
			out[1].ID = "renamed"
			return out
		}},
		{"model switch", func(_ *TwoPass, msgs []history.Message, opts *Options) []history.Message {
			opts.Route.Model = "m2"
			return msgs
		}},
		{"Invalidate", func(tp *TwoPass, msgs []history.Message, _ *Options) []history.Message {
			tp.Invalidate()
			return msgs
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := twoPassClient()
			opts := localOpts(client)
			tp := prefired(t, base, opts)
			msgs := tt.change(tp, base, &opts)
			opts.TwoPass = tp
			res, err := Compact(context.Background(), msgs, opts)
			if err != nil {
				t.Fatal(err)
			}
			reqs := client.requests()
			if len(reqs) != 2 || isPass2(reqs[1]) || res.CachedNote {
				t.Errorf("the cached note was used (%d calls)", len(reqs))
			}
			if res.Summary != "NOTE1" { // a plain single pass
				t.Errorf("summary = %q", res.Summary)
			}
		})
	}
}

func TestTwoPassOneInFlight(t *testing.T) {
	var calls atomic.Int32
	started := make(chan struct{}, 4)
	release := make(chan struct{})
	client := &scripted{reply: func(ctx context.Context, _ int, _ *providers.Request) (*providers.Response, error) {
		calls.Add(1)
		started <- struct{}{}
		select {
		case <-release:
			return reply("NOTE1"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}}
	opts := localOpts(client)
	msgs := conv(40, 29, 471)
	tp := NewTwoPass(nil)
	defer tp.Close()
	tp.Prefire(context.Background(), msgs, opts)
	<-started
	for range 5 {
		tp.Prefire(context.Background(), msgs, opts) // ignored: one is running
	}
	close(release)
	tp.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("%d pass-1 calls, want 1", n)
	}
	// A valid note exists: a new Prefire does nothing.
	tp.Prefire(context.Background(), append(msgs, conv(1, 29, 71)...), opts)
	tp.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("%d pass-1 calls after a redundant Prefire, want 1", n)
	}
}

func TestTwoPassCancellation(t *testing.T) {
	hang := func(started chan<- struct{}) *scripted {
		return &scripted{reply: func(ctx context.Context, _ int, _ *providers.Request) (*providers.Response, error) {
			started <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		}}
	}
	msgs := conv(40, 29, 471)
	t.Run("Invalidate abandons pass 1", func(t *testing.T) {
		started := make(chan struct{}, 1)
		opts := localOpts(hang(started))
		tp := NewTwoPass(nil)
		defer tp.Close()
		tp.Prefire(context.Background(), msgs, opts)
		<-started
		tp.Invalidate()
		tp.Wait()
		if _, _, _, ok := tp.lookup(msgs, opts.Route); ok {
			t.Error("a note was cached")
		}
	})
	t.Run("Close", func(t *testing.T) {
		started := make(chan struct{}, 1)
		opts := localOpts(hang(started))
		tp := NewTwoPass(nil)
		tp.Prefire(context.Background(), msgs, opts)
		<-started
		tp.Close() // returns only once pass 1 has ended
		tp.Prefire(context.Background(), msgs, opts)
		tp.Wait()
		if n := len(opts.Client.(*scripted).requests()); n != 1 {
			t.Errorf("Prefire after Close ran (%d calls)", n)
		}
	})
	t.Run("ctx", func(t *testing.T) {
		started := make(chan struct{}, 1)
		opts := localOpts(hang(started))
		tp := NewTwoPass(nil)
		defer tp.Close()
		ctx, cancel := context.WithCancel(context.Background())
		tp.Prefire(ctx, msgs, opts)
		<-started
		cancel()
		tp.Wait()
	})
	t.Run("Prefire does not block and copies its input", func(t *testing.T) {
		started := make(chan struct{}, 1)
		opts := localOpts(hang(started))
		tp := NewTwoPass(nil)
		defer tp.Close()
		in := append([]history.Message(nil), msgs...)
		tp.Prefire(context.Background(), in, opts)
		in[0] = history.NewText(history.User, "overwritten by the caller") // must not race
		<-started
	})
}

func TestTwoPassSkipsNativeRoutes(t *testing.T) {
	client := twoPassClient()
	opts := localOpts(client)
	opts.Route = providers.Route{Provider: "openai", Model: "gpt-5"}
	tp := NewTwoPass(nil)
	defer tp.Close()
	tp.Prefire(context.Background(), conv(40, 29, 471), opts)
	tp.Wait()
	if n := len(client.requests()); n != 0 {
		t.Errorf("pass 1 ran on a native route (%d calls)", n)
	}
}

func TestTwoPassPass2FailureFallsBack(t *testing.T) {
	msgs := conv(40, 29, 471)
	client := &scripted{reply: func(_ context.Context, n int, req *providers.Request) (*providers.Response, error) {
		if isPass2(req) {
			return nil, errors.New("boom")
		}
		return reply("NOTE1"), nil
	}}
	opts := localOpts(client)
	tp := prefired(t, msgs, opts)
	opts.TwoPass = tp
	res, err := Compact(context.Background(), msgs, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.CachedNote || res.Calls != 2 || res.Summary != "NOTE1" {
		t.Errorf("result = %+v", res)
	}
}
