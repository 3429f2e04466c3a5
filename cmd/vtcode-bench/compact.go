package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/vtcode/vtcode-ls/compaction"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/summary"
)

// CompactionRow is one offline compaction of the benchmark history.
type CompactionRow struct {
	History           string  `json:"history"`
	Capacity          int     `json:"capacity"` // 0: unknown
	Reps              int     `json:"reps"`
	WallNs            int64   `json:"wallNs"` // median
	Mode              string  `json:"mode"`
	Strategy          string  `json:"strategy"`
	OriginalMessages  int     `json:"originalMessages"`
	CompactedMessages int     `json:"compactedMessages"`
	OriginalTokens    int     `json:"originalTokens"`
	CompactedTokens   int     `json:"compactedTokens"`
	SizeRatio         float64 `json:"sizeRatio"` // compacted / original tokens
	// MarshalNs is json.Marshal of the whole history, for scale; VsMarshal is
	// WallNs / MarshalNs.
	MarshalNs int64   `json:"marshalNs"`
	VsMarshal float64 `json:"vsMarshal"`
}

// benchCompaction compacts msgs (estimated on arrival) with the offline
// summarizer, manually and locally, at the given capacity.
func benchCompaction(ctx context.Context, name string, msgs []history.Message, capacity, reps int) (*CompactionRow, error) {
	est := history.NewEstimator(history.O200k)
	est.Messages(msgs)
	row := &CompactionRow{History: name, Capacity: capacity, Reps: reps}
	var wall, mar samples
	for range reps {
		var res *compaction.Result
		var err error
		wall = append(wall, timeIt(func() {
			res, err = compaction.Compact(ctx, msgs, compaction.Options{
				Trigger:        compaction.TriggerManual,
				Strategy:       "local",
				Capacity:       capacity,
				ReservedOutput: benchReservedOutput,
				Prefix:         benchPrefix,
				Route:          providers.Route{Provider: summary.Name},
				Client:         summary.New(),
				Estimator:      est,
			})
		}))
		if err != nil {
			return nil, fmt.Errorf("compacting %s at capacity %d: %w", name, capacity, err)
		}
		row.Mode, row.Strategy = res.Mode, string(res.Strategy)
		row.OriginalMessages, row.CompactedMessages = res.OriginalMessageCount, res.CompactedMessageCount
		row.OriginalTokens, row.CompactedTokens = res.OriginalTokens, res.CompactedTokens
		var merr error
		mar = append(mar, timeIt(func() { _, merr = json.Marshal(msgs) }))
		if merr != nil {
			return nil, fmt.Errorf("marshalling history: %w", merr)
		}
	}
	row.WallNs, row.MarshalNs = int64(wall.median()), int64(mar.median())
	row.SizeRatio = float64(row.CompactedTokens) / float64(row.OriginalTokens)
	row.VsMarshal = ratio(wall.median(), mar.median())
	return row, nil
}
