package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/vtcode/vtcode-ls/compaction"
	"github.com/vtcode/vtcode-ls/corpus"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/ledger"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/summary"
)

// LedgerResult is the fact ledger (see package ledger) and how
// promptly a cancelled offline compaction of one 20 MB message returns.
type LedgerResult struct {
	Report *ledger.Report `json:"report,omitempty"`
	// Skipped says why the ledger did not run (no transcripts folder).
	Skipped string `json:"skipped,omitempty"`
	// SummarizerCancelNs is the time from cancelling the offline
	// summarizer, 20 ms into its read of a history holding a 20 MB message,
	// to its return; CompactCancelNs is the same for the whole compaction
	// (estimation and pruning included), cancelled 50 ms after it started;
	// -1 when not measured (a quick run).
	SummarizerCancelNs int64  `json:"summarizerCancelNs"`
	CompactCancelNs    int64  `json:"compactCancelNs"`
	CancelErr          string `json:"cancelErr,omitempty"`
}

// benchLedger runs the fact ledger on the corpus (package corpus), and measures
// how promptly a cancelled offline compaction of a huge message returns.
// A quick run skips the whole compaction, which takes seconds on 20 MB.
func benchLedger(ctx context.Context, quick bool) (*LedgerResult, error) {
	res := &LedgerResult{}
	var err error
	if dir, err := corpus.Dir(); err != nil {
		res.Skipped = err.Error()
	} else if res.Report, err = ledger.Run(ctx, dir); err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	msgs := hugeMessageHistory()
	var errs []string
	res.SummarizerCancelNs, err = cancelAfter(ctx, 20*time.Millisecond, func(ctx context.Context) error {
		_, err := summary.New().Summarize(ctx, &providers.SummaryRequest{Messages: msgs})
		return err
	})
	if err != nil {
		errs = append(errs, "summarizer: "+err.Error())
	}
	if quick {
		res.CompactCancelNs = -1
	} else if res.CompactCancelNs, err = cancelAfter(ctx, 50*time.Millisecond, func(ctx context.Context) error {
		_, err := compaction.Compact(ctx, msgs, compaction.Options{
			Trigger: compaction.TriggerManual, Strategy: "local", Capacity: ledger.Window,
			Route: providers.Route{Provider: summary.Name}, Client: summary.New(),
		})
		return err
	}); err != nil {
		errs = append(errs, "compaction: "+err.Error())
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	res.CancelErr = strings.Join(errs, "; ")
	return res, nil
}

// hugeMessageHistory is a short session whose one tool result is 20 MB.
func hugeMessageHistory() []history.Message {
	big := strings.Repeat("panic: runtime error: index out of range [3] with length 3\n\tmain.go:12 +0x1d\n", 20<<20/75)
	return []history.Message{
		history.NewText(history.User, "Find the crash."),
		{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"go run ."}`}}},
		history.NewToolResult("c1", "bash", big),
		history.NewText(history.Assistant, "The output is long."),
		history.NewText(history.User, "Go on."),
	}
}

// cancelAfter runs fn, cancels its context after d, and returns how long fn
// took to return after the cancel. fn must return context.Canceled.
func cancelAfter(parent context.Context, d time.Duration, fn func(context.Context) error) (int64, error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	var cancelled atomic.Int64
	timer := time.AfterFunc(d, func() {
		cancelled.Store(time.Now().UnixNano())
		cancel()
	})
	defer timer.Stop()
	err := fn(ctx)
	end := time.Now().UnixNano()
	at := cancelled.Load()
	switch {
	case at == 0:
		return 0, fmt.Errorf("finished (err %v) before it was cancelled %v in", err, d)
	case !errors.Is(err, context.Canceled):
		return end - at, fmt.Errorf("returned %v, want context.Canceled", err)
	}
	return end - at, nil
}

// writeLedger prints the ledger section.
func writeLedger(w io.Writer, r *LedgerResult) error {
	if r == nil {
		return nil
	}
	fmt.Fprintf(w, "\n")
	if r.Report != nil {
		if err := ledger.Write(w, r.Report); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(w, "Fact ledger: skipped (%s)\n", r.Skipped)
	}
	status := "both returned context.Canceled"
	if r.CancelErr != "" {
		status = r.CancelErr
	}
	whole := fmt.Sprintf("returned %.1f ms after the cancel", float64(r.CompactCancelNs)/1e6)
	if r.CompactCancelNs < 0 {
		whole = "not measured in a quick run"
	}
	_, err := fmt.Fprintf(w, "\nCancelling on a history holding a 20 MB message (%s):\n  offline summarizer, cancelled 20 ms in: returned %.1f ms after the cancel\n  whole offline compaction, cancelled 50 ms in: %s\n",
		status, float64(r.SummarizerCancelNs)/1e6, whole)
	return err
}
