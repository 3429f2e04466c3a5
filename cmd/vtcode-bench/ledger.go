package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/vtcode/vtcode-ls/compaction"
	"github.com/vtcode/vtcode-ls/evidence/ledger"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/offline"
)

// LedgerResult is the fact ledger of issue 10 (see package ledger) and the
// cancellation latency of an offline compaction of one 20 MB message.
type LedgerResult struct {
	Report *ledger.Report `json:"report,omitempty"`
	// Skipped says why the ledger did not run (no transcripts folder).
	Skipped string `json:"skipped,omitempty"`
	// CancelNs is the time from cancelling an offline compaction of a
	// 20 MB message to its return; CancelErr is the error it returned.
	CancelNs  int64  `json:"cancelNs"`
	CancelErr string `json:"cancelErr"`
}

// benchLedger runs the fact ledger on the shared transcripts, and measures
// how promptly a cancelled offline compaction of a huge message returns.
func benchLedger(ctx context.Context) (*LedgerResult, error) {
	res := &LedgerResult{}
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	if dir, err := ledger.FindDir(wd); err != nil {
		res.Skipped = err.Error()
	} else if res.Report, err = ledger.Run(ctx, dir); err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	ns, cerr := cancelLatency(ctx)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	res.CancelNs = ns
	if cerr != nil {
		res.CancelErr = cerr.Error()
	}
	return res, nil
}

// cancelLatency starts an offline compaction of a history holding one 20 MB
// tool result, cancels it once the summarizer is running, and returns how
// long Compact took to return after the cancel.
func cancelLatency(parent context.Context) (int64, error) {
	big := strings.Repeat("panic: runtime error: index out of range [3] with length 3\n\tmain.go:12 +0x1d\n", 20<<20/75)
	msgs := []history.Message{
		history.NewText(history.User, "Find the crash."),
		{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"go run ."}`}}},
		history.NewToolResult("c1", "bash", big),
		history.NewText(history.Assistant, "The output is long."),
		history.NewText(history.User, "Go on."),
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	var cancelled time.Time
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := compaction.Compact(ctx, msgs, compaction.Options{
			Trigger: compaction.TriggerManual, Strategy: "local", Capacity: ledger.Window,
			Route: providers.Route{Provider: offline.Name}, Client: offline.New(),
			Progress: func(string, int) {
				select {
				case <-started:
				default:
					close(started)
				}
			},
		})
		done <- err
	}()
	select {
	case <-started:
	case err := <-done:
		return 0, fmt.Errorf("compaction ended before it could be cancelled: %v", err)
	}
	cancelled = time.Now()
	cancel()
	err := <-done
	elapsed := time.Since(cancelled).Nanoseconds()
	if !errors.Is(err, context.Canceled) {
		return elapsed, fmt.Errorf("cancelled compaction returned %v, want context.Canceled", err)
	}
	return elapsed, nil
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
	status := "context.Canceled"
	if r.CancelErr != "" {
		status = r.CancelErr
	}
	_, err := fmt.Fprintf(w, "\nCancelling an offline compaction of a 20 MB message: returned after %.1f ms (%s)\n", float64(r.CancelNs)/1e6, status)
	return err
}
