package compaction

import (
	"context"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/evidence"
	"github.com/vtcode/vtcode-ls/history"
)

// TestPinnedTextInEverySummary: what the user pinned (compaction.pin) is
// in the summary verbatim, once, after a model summary that left it out and
// after a second compaction whose summary already carries it.
func TestPinnedTextInEverySummary(t *testing.T) {
	pin := "## Deploy rules\nNever push to main on Fridays.\nRun `make check` first."
	block := evidence.FormatInstructions([]evidence.Instruction{{Source: evidence.PinSource, Text: pin}})
	block = strings.TrimRight(block, "\n")

	opts := localOpts(answer("## Goal\nShip the release."))
	opts.Pin = []string{pin}
	res, err := Compact(context.Background(), conv(60, 29, 471), opts)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(res.Summary, block) != 1 {
		t.Fatalf("first summary carries the pin %d times:\n%s", strings.Count(res.Summary, block), res.Summary)
	}
	// A summarizer that carried the earlier summary's block itself.
	opts.Client = answer(res.Summary)
	second, err := Compact(context.Background(), append([]history.Message{SummaryMessage(res.Summary)}, conv(60, 29, 471)...), opts)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(second.Summary, block) != 1 {
		t.Errorf("second summary carries the pin %d times:\n%s", strings.Count(second.Summary, block), second.Summary)
	}
	// Nothing pinned, nothing added.
	opts.Pin = nil
	opts.Client = answer("## Goal\nShip the release.")
	res, err = Compact(context.Background(), conv(60, 29, 471), opts)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Summary, "Pinned") {
		t.Errorf("a summary without pins:\n%s", res.Summary)
	}
}
