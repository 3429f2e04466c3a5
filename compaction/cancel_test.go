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
