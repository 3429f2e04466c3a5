package main

import (
	"context"
	"fmt"
	"time"

	"github.com/tiktoken-go/tokenizer/codec"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/history/historytest"
)

// EstimationResult compares history.Estimator (o200k) on fresh messages with
// the bare o200k codec counting the same text.
type EstimationResult struct {
	History       string  `json:"history"`
	Messages      int     `json:"messages"`
	TextBytes     int     `json:"textBytes"`
	Tokens        int     `json:"tokens"`
	Passes        int     `json:"passes"`
	EstimatorNs   int64   `json:"estimatorNs"` // per pass
	RawNs         int64   `json:"rawNs"`       // per pass
	EstimatorMBps float64 `json:"estimatorMBps"`
	RawMBps       float64 `json:"rawMBps"`
	// Ratio is the estimator's throughput relative to the raw codec's
	// (raw time / estimator time); the target is ≥ 0.9.
	Ratio float64 `json:"ratio"`
}

// benchEstimation times the estimator and the raw codec in alternation,
// message by message (alternating which goes first), so that machine load
// and cache state affect both alike.
func benchEstimation(ctx context.Context, name string, base []history.Message, passes int) (*EstimationResult, error) {
	c := codec.NewO200kBase()
	est := history.NewEstimator(history.O200k)
	per := make([][]string, len(base))
	res := &EstimationResult{History: name, Messages: len(base), Passes: passes}
	for i := range base {
		var n int
		per[i], n = historytest.Texts(base[i : i+1])
		res.TextBytes += n
	}
	raw := func(ts []string) error {
		for _, s := range ts {
			if _, err := c.Count(s); err != nil {
				return fmt.Errorf("raw tokenizer: %w", err)
			}
		}
		return nil
	}
	// One untimed pass loads both vocabularies and warms the caches.
	warm := make([]history.Message, len(base))
	copy(warm, base)
	est.Messages(warm)
	for i := range per {
		if err := raw(per[i]); err != nil {
			return nil, err
		}
	}
	var estTime, rawTime time.Duration
	buf := make([]history.Message, len(base))
	for range passes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		copy(buf, base) // base carries no estimates
		tokens := 0
		for j := range buf {
			var err error
			rawStep := func() { err = raw(per[j]) }
			estStep := func() { tokens += est.Message(&buf[j]) }
			if j%2 == 0 {
				rawTime += timeIt(rawStep)
				estTime += timeIt(estStep)
			} else {
				estTime += timeIt(estStep)
				rawTime += timeIt(rawStep)
			}
			if err != nil {
				return nil, err
			}
		}
		res.Tokens = tokens
	}
	res.EstimatorNs = int64(estTime) / int64(passes)
	res.RawNs = int64(rawTime) / int64(passes)
	res.EstimatorMBps = float64(res.TextBytes) / 1e6 / (float64(res.EstimatorNs) / 1e9)
	res.RawMBps = float64(res.TextBytes) / 1e6 / (float64(res.RawNs) / 1e9)
	res.Ratio = ratio(rawTime, estTime)
	return res, nil
}
