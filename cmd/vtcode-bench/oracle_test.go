package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/corpus"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers/catalog"
	"github.com/vtcode/vtcode-ls/transcript"
)

// A session that never reaches the clearing trigger has nothing to step:
// the best schedule is sending everything.
func TestBestSteppedBelowTrigger(t *testing.T) {
	var msgs []history.Message
	for i := range 8 {
		id := fmt.Sprintf("c%d", i)
		msgs = append(msgs, history.NewText(history.User, "next"),
			history.Message{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: id, Name: "read_file", Arguments: `{"path":"a.go"}`}}},
			history.NewToolResult(id, "read_file", "package a // short"))
	}
	msgs = append(msgs, history.NewText(history.Assistant, "done"))
	cc := (*catalog.Catalog)(nil).Cost("anthropic", "claude-sonnet-4-5")
	if got := bestStepped(msgs, cc, costWindow); got != 1 {
		t.Fatalf("best = %v, want 1 (nothing to clear)", got)
	}
}

// On a real session the best schedule in hindsight lies between the floor
// and the default schedule's cost, and clearly below sending everything.
func TestBestSteppedBrackets(t *testing.T) {
	dir, err := corpus.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := transcript.Load(filepath.Join(dir, "openhands-multi-swe-bench-ponyc.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	row, err := costOf(context.Background(), "openhands", tr.Messages, "anthropic", "claude-sonnet-4-5")
	if err != nil {
		t.Fatal(err)
	}
	const eps = 0.005
	if row.BestRatio < row.FloorBound-eps || row.BestRatio > row.CostRatio+eps || row.BestRatio > 0.95 {
		t.Fatalf("floor %.3f, best %.3f, default schedule %.3f: want floor ≤ best ≤ default < 0.95", row.FloorBound, row.BestRatio, row.CostRatio)
	}
}

// A session that outgrows the window compacts in the cost plays (with the
// offline summarizer, as the daemon does without a provider), instead of
// failing to compact on every turn from the threshold on; the bounds, which
// know clearing only, are then left out.
func TestCostPlayCompacts(t *testing.T) {
	var msgs []history.Message
	para := strings.Repeat("The parser keeps every token of the input so that errors point at the right column. ", 220)
	for i := range 70 {
		msgs = append(msgs, history.NewText(history.User, fmt.Sprintf("Step %d. %s", i, para)), history.NewText(history.Assistant, fmt.Sprintf("Done with step %d.", i)))
	}
	row, err := costOf(context.Background(), "synthetic", msgs, "anthropic", "claude-sonnet-4-5")
	if err != nil {
		t.Fatal(err)
	}
	if row.Compactions == 0 || row.OverBudget != 0 {
		t.Fatalf("%d compactions, %d requests over budget: want a compaction and none over budget", row.Compactions, row.OverBudget)
	}
	if row.BestRatio != 0 || row.FloorBound != 0 {
		t.Errorf("best %v, floor %v: want both left out for a play that compacted", row.BestRatio, row.FloorBound)
	}
}
