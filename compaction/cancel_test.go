package compaction

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
)

// countingCtx is a context whose Err reports Canceled from its n-th call on:
// a cancellation that arrives while a loop runs, without timing.
type countingCtx struct {
	context.Context
	calls, after int
}

func (c *countingCtx) Err() error {
	c.calls++
	if c.calls >= c.after {
		return context.Canceled
	}
	return nil
}

// TestPruneHonoursCancel: cancelled while the oversized results of a large
// history are being pruned, pruning stops at the next message with
// context.Canceled instead of previewing the rest.
func TestPruneHonoursCancel(t *testing.T) {
	big := strings.Repeat("output line\n", 4*OversizedToolResult)
	var msgs []history.Message
	for range 50 {
		msgs = append(msgs, history.Message{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: "c", Name: "bash"}}}, history.NewToolResult("c", "bash", big))
	}
	ctx := &countingCtx{Context: context.Background(), after: 3}
	_, err := pruneToolResults(ctx, approx, msgs)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if ctx.calls > 3 {
		t.Errorf("%d checks after the cancellation at the 3rd", ctx.calls-3)
	}
	out, err := pruneToolResults(context.Background(), approx, msgs)
	if err != nil || len(out) != len(msgs) || est(out[1]) > ToolResultPreview {
		t.Errorf("uncancelled prune: err %v, %d messages", err, len(out))
	}
}

func est(m history.Message) int { return approx.Message(&m) }

// hugeText is a varied text of about n bytes: code, indentation, blank
// lines, unicode, long words.
func hugeText(n int) string {
	lines := []string{
		"func f(x int) int { return x*2 + 1 } // ünïcödé ✓",
		"    indented line with trailing spaces   ",
		"",
		"\tTabbed: key=value, other_key=12345678901234567890",
		"ERROR something failed: exit status 1",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"  ",
	}
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(lines[i%len(lines)])
		b.WriteByte('\n')
	}
	return b.String()
}

// TestChunkedCountIsExact: counting a huge text in chunks gives the count
// of the whole text, so the cached estimate is what Estimator.Message would
// compute.
func TestChunkedCountIsExact(t *testing.T) {
	est := history.NewEstimator(history.O200k)
	s := hugeText(3 * estimateChunk)
	n, err := textTokens(context.Background(), est, s)
	if err != nil {
		t.Fatal(err)
	}
	if want := est.Text(s); n != want {
		t.Errorf("chunked count %d, whole count %d", n, want)
	}
	m := history.NewToolResult("c1", "bash", s)
	msgs := []history.Message{m}
	if err := warmEstimates(context.Background(), est, msgs); err != nil {
		t.Fatal(err)
	}
	cached, _ := est.Cached(&msgs[0])
	fresh := history.NewToolResult("c1", "bash", s)
	if want := est.Message(&fresh); cached != want {
		t.Errorf("cached estimate %d, Message computes %d", cached, want)
	}
}

// TestWarmStopsInsideAHugeMessage: cancelled while one huge message is being
// counted, the count stops at the next chunk with context.Canceled and
// caches nothing partial on the message.
func TestWarmStopsInsideAHugeMessage(t *testing.T) {
	est := history.NewEstimator(history.O200k)
	msgs := []history.Message{history.NewToolResult("c1", "bash", hugeText(40*estimateChunk))}
	ctx := &countingCtx{Context: context.Background(), after: 3} // the message, then two chunks
	if err := warmEstimates(ctx, est, msgs); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if ctx.calls != ctx.after {
		t.Errorf("%d checks, want %d", ctx.calls, ctx.after)
	}
	if _, ok := est.Cached(&msgs[0]); ok {
		t.Error("a partial count was cached")
	}
}

// TestCompactHonoursCancelInsideAHugeMessage: a compaction of a history
// whose one message is huge, cancelled while that message is being counted,
// returns context.Canceled, with no check after the cancellation, and leaves
// the caller's messages alone.
func TestCompactHonoursCancelInsideAHugeMessage(t *testing.T) {
	est := history.NewEstimator(history.O200k)
	s := hugeText(40 * estimateChunk)
	msgs := []history.Message{
		history.NewText(history.User, "run it"),
		{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"make"}`}}},
		history.NewToolResult("c1", "bash", s),
		history.NewText(history.Assistant, "done"),
	}
	// Compact's own first check, the two small messages, then two chunks.
	ctx := &countingCtx{Context: context.Background(), after: 6}
	_, err := Compact(ctx, msgs, Options{Trigger: TriggerManual, Strategy: "local", Capacity: 32000, ReservedOutput: 4096, Estimator: est})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if ctx.calls > ctx.after {
		t.Errorf("%d checks after the cancellation", ctx.calls-ctx.after)
	}
	if _, ok := est.Cached(&msgs[2]); ok {
		t.Error("the caller's message got a cached estimate")
	}
}
