package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
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
	cc := (*providers.Catalog)(nil).Cost("anthropic", "claude-sonnet-4-5")
	if got := bestStepped(msgs, cc, costWindow); got != 1 {
		t.Fatalf("best = %v, want 1 (nothing to clear)", got)
	}
}

// On a real session the best schedule in hindsight lies between the floor
// and the default schedule's cost, and clearly below sending everything.
func TestBestSteppedBrackets(t *testing.T) {
	dir := transcriptsDir()
	if dir == "" {
		t.Fatal("no ../shared/transcripts beside the repository (or VTCODE_TRANSCRIPTS)")
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
