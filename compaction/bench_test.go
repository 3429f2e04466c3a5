package compaction

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/history/historytest"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/summary"
)

// BenchmarkOfflineCompact1M compacts the ~1M-token preset history with the
// offline summarizer, estimates already cached on the messages (as the
// session caches them on arrival). It reports the wall time per compaction
// and the compacted size.
func BenchmarkOfflineCompact1M(b *testing.B) {
	msgs := historytest.Preset1M()
	est := history.NewEstimator(history.O200k)
	start := time.Now()
	original := est.Messages(msgs)
	b.Logf("estimating %d messages (%d tokens) took %v", len(msgs), original, time.Since(start))
	for _, capacity := range []int{0, 128000, 1_000_000} {
		b.Run(fmt.Sprintf("capacity=%d", capacity), func(b *testing.B) {
			opts := Options{
				Trigger:        TriggerManual,
				Route:          providers.Route{Provider: summary.Name},
				Client:         summary.New(),
				Estimator:      est,
				Capacity:       capacity,
				ReservedOutput: 4096,
				RoutePolicy:    DefaultRoutePolicy(),
			}
			var res *Result
			for b.Loop() {
				var err error
				res, err = Compact(context.Background(), msgs, opts)
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "wall-ms/op")
			b.ReportMetric(float64(res.OriginalTokens), "original-tokens")
			b.ReportMetric(float64(res.CompactedTokens), "compacted-tokens")
			b.ReportMetric(float64(res.CompactedMessageCount), "compacted-msgs")
		})
	}
}
