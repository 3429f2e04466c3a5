package ledger

import (
	"context"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/compaction"
	"github.com/vtcode/vtcode-ls/evidence"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/summary"
)

// terseModel writes a summary that keeps almost nothing and claims a check
// passed that failed.
type terseModel struct{}

func (terseModel) Generate(context.Context, *providers.Request) (*providers.Response, error) {
	return &providers.Response{Message: history.NewText(history.Assistant, "## Goal\nFix the config loader.\n\n## Checks\n- passed: `go test ./internal/config/...` (exit 0)")}, nil
}

// TestModelSummaryNotWorseThanOffline: on the long-turn scenario, a model's
// summary checked by the record keeps every fact the offline summary keeps,
// and the record contradicts none of its claims.
func TestModelSummaryNotWorseThanOffline(t *testing.T) {
	msgs := LongTurn()
	off := Session{Name: "offline", Facts: LongTurnFacts()}
	if err := Measure(context.Background(), &off, msgs); err != nil {
		t.Fatal(err)
	}
	res, err := compaction.Compact(context.Background(), msgs, compaction.Options{
		Trigger: compaction.TriggerManual, Strategy: "local", Capacity: Window, ReservedOutput: reservedOutput, Prefix: prefixTokens,
		Route: providers.Route{Provider: "model", Model: "m"}, Client: terseModel{}, Record: summary.New(),
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range off.Facts {
		if off.InSummary[i] && !strings.Contains(res.Summary, f) {
			t.Errorf("the checked model summary lost %q, which the offline summary keeps:\n%s", f, res.Summary)
		}
	}
	rec, err := evidence.Extract(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	if c := Contradictions(res.Summary, rec); len(c) != 0 {
		t.Errorf("contradictions in the checked model summary: %q", c)
	}
}
