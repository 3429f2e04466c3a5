package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/vtcode/vtcode-ls/clearing"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/history/historytest"
)

// size is one history size of the benchmark.
type size struct {
	Name   string
	Tokens int
	// Capacity is the context window of the projection's budget, chosen so
	// that clearing engages at this size.
	Capacity int
	// ColdReps, WindowBatches and ScratchReps are the repetitions of the
	// three projection scenarios.
	ColdReps, WindowBatches, ScratchReps int
}

var (
	size10k  = size{Name: "10k", Tokens: 10_000, Capacity: 16_000, ColdReps: 25, WindowBatches: 100, ScratchReps: 301}
	size100k = size{Name: "100k", Tokens: 100_000, Capacity: 128_000, ColdReps: 9, WindowBatches: 100, ScratchReps: 101}
	size1M   = size{Name: "1M", Tokens: 1_000_000, Capacity: 128_000, ColdReps: 5, WindowBatches: 100, ScratchReps: 41}
)

// Reserved output and prefix of every projection budget.
const (
	benchReservedOutput = 4096
	benchPrefix         = 3000
)

func (s size) budget() clearing.Budget {
	return clearing.Budget{Capacity: s.Capacity, ReservedOutput: benchReservedOutput, Prefix: benchPrefix}
}

// historyConfig is the synthetic history of about tokens o200k tokens with
// the density of historytest.Preset1MConfig (500 tokens per message, one
// tool batch per 5 messages); for 1M tokens and seed 1 it is the preset.
func historyConfig(tokens int, seed uint64) historytest.Config {
	cfg := historytest.Preset1MConfig()
	cfg.Seed = seed
	cfg.Tokens = tokens
	cfg.Messages = max(tokens/500, 10)
	cfg.Batches = cfg.Messages / 5
	return cfg
}

// ProjectionRow holds the projection measurements at one history size.
type ProjectionRow struct {
	Size            string `json:"size"`
	Messages        int    `json:"messages"`
	Batches         int    `json:"batches"`
	HistoryTokens   int    `json:"historyTokens"`
	JSONBytes       int    `json:"jsonBytes"`
	Capacity        int    `json:"capacity"`
	LocalTrigger    int    `json:"localTrigger"`
	ProjectedTokens int    `json:"projectedTokens"`
	ClearedResults  int    `json:"clearedResults"`
	// Cold: the first projection of a freshly decoded history, estimation
	// included (what a request pays when no estimate is known).
	Cold Scenario `json:"cold"`
	// AfterAppend: the projection after one new tool batch arrived and was
	// estimated on arrival (as the session does); every other estimate is
	// cached. ArriveNs is the median cost of estimating the new batch.
	AfterAppend Scenario `json:"afterAppend"`
	ArriveNs    int64    `json:"arriveNs"`
	// AfterAppendWarm is the same with Memo.Warm called on arrival too
	// (which memoizes the counts a later clearing of the batch needs);
	// ArriveWarmNs is the arrival cost then.
	AfterAppendWarm Scenario `json:"afterAppendWarm"`
	ArriveWarmNs    int64    `json:"arriveWarmNs"`
	// Scratch: a full projection with every estimate known, alternating
	// between two clearing policies (as after a policy change).
	Scratch Scenario `json:"scratch"`
}

// Scenario is one projection scenario: the median cost of the projection and
// of json.Marshal of the same projection, and their ratio.
type Scenario struct {
	Reps      int     `json:"reps"`
	ProjectNs int64   `json:"projectNs"`
	MarshalNs int64   `json:"marshalNs"`
	Ratio     float64 `json:"ratio"` // project / marshal
}

func newScenario(project, marshal samples) Scenario {
	p, m := project.median(), marshal.median()
	return Scenario{Reps: len(project), ProjectNs: int64(p), MarshalNs: int64(m), Ratio: ratio(p, m)}
}

// project is the request projection of the session pipeline: normalize, then
// clear everything above the floor, with memo holding derived counts as a
// session's does (nil: none).
func project(est *history.Estimator, memo *clearing.Memo, msgs []history.Message, p clearing.Policy, b clearing.Budget) ([]history.Message, clearing.Stats) {
	norm, _ := history.Normalize(msgs)
	p.ClearAtLeastTokens, p.CacheAware = 0, false
	r := clearing.Project(est, norm, clearing.Request{Policy: p, Budget: b, Memo: memo})
	return r.Messages, r.Stats
}

// timeMarshal returns the time json.Marshal takes on msgs.
func timeMarshal(msgs []history.Message) (time.Duration, error) {
	var err error
	d := timeIt(func() { _, err = json.Marshal(msgs) })
	if err != nil {
		return 0, fmt.Errorf("marshalling projection: %w", err)
	}
	return d, nil
}

// benchProjection measures the projection scenarios at one size.
func benchProjection(ctx context.Context, sz size) (*ProjectionRow, error) {
	est := history.NewEstimator(history.O200k)
	pol := clearing.DefaultPolicy()
	budget := sz.budget()
	row := &ProjectionRow{Size: sz.Name, Capacity: sz.Capacity}
	row.LocalTrigger, _ = clearing.Trigger(pol, budget)

	// The history of this size, described, then projected from scratch with
	// its estimates known.
	base := historytest.Synthetic(historyConfig(sz.Tokens, 1))
	data, err := json.Marshal(base)
	if err != nil {
		return nil, fmt.Errorf("marshalling history: %w", err)
	}
	row.Messages, row.JSONBytes = len(base), len(data)
	row.HistoryTokens = est.Messages(base)
	for i := range base {
		if base[i].HasToolCalls() {
			row.Batches++
		}
	}
	p2 := pol
	p2.KeepToolUses, p2.TriggerTokens, p2.ClearToolInputs = 5, 30_000, true
	policies := []clearing.Policy{pol, p2}
	var st clearing.Stats
	memo := clearing.NewMemo()
	_, st = project(est, memo, base, pol, budget)
	row.ProjectedTokens, row.ClearedResults = st.ProjectedTokens, st.ClearedResults
	project(est, memo, base, p2, budget)
	var proj, mar samples
	for i := range sz.ScratchReps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var out []history.Message
		proj = append(proj, timeIt(func() { out, _ = project(est, memo, base, policies[i%2], budget) }))
		d, err := timeMarshal(out)
		if err != nil {
			return nil, err
		}
		mar = append(mar, d)
	}
	row.Scratch = newScenario(proj, mar)

	// Cold: freshly decoded histories of other seeds, so that nothing about
	// them is cached anywhere.
	proj, mar = nil, nil
	for rep := range sz.ColdReps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		data, err := json.Marshal(historytest.Synthetic(historyConfig(sz.Tokens, 100+uint64(rep))))
		if err != nil {
			return nil, fmt.Errorf("marshalling history: %w", err)
		}
		var msgs []history.Message
		if err := json.Unmarshal(data, &msgs); err != nil {
			return nil, fmt.Errorf("decoding history: %w", err)
		}
		var out []history.Message
		proj = append(proj, timeIt(func() {
			est.Messages(msgs)
			out, _ = project(est, clearing.NewMemo(), msgs, pol, budget)
		}))
		d, err := timeMarshal(out)
		if err != nil {
			return nil, err
		}
		mar = append(mar, d)
	}
	row.Cold = newScenario(proj, mar)

	if row.AfterAppend, row.ArriveNs, err = benchAppend(ctx, sz, est, 2, false); err != nil {
		return nil, err
	}
	if row.AfterAppendWarm, row.ArriveWarmNs, err = benchAppend(ctx, sz, est, 4, true); err != nil {
		return nil, err
	}
	return row, nil
}

// benchAppend measures the projection after one new tool batch arrived, on
// windows of a longer session: each window has the length of the size's
// history and ends one batch later than the one before. On arrival the new
// messages are estimated (as the session does) and, with warm, passed to
// clearing.Warm too; the projection then tokenizes nothing else. It returns
// the scenario and the median arrival cost. The scenario has its own memo,
// as a session does.
func benchAppend(ctx context.Context, sz size, est *history.Estimator, seed uint64, warm bool) (Scenario, int64, error) {
	pol, budget := clearing.DefaultPolicy(), sz.budget()
	cfg := historyConfig(sz.Tokens, seed)
	n := cfg.Messages
	cfg.Messages += 5 * sz.WindowBatches
	cfg.Batches += sz.WindowBatches
	cfg.Tokens = sz.Tokens * cfg.Messages / n
	long := historytest.Synthetic(cfg)
	var ends []int
	for end := n; end <= len(long); end++ {
		if long[end-1].Role == history.Tool && (end == len(long) || long[end].Role != history.Tool) {
			ends = append(ends, end)
		}
	}
	if len(ends) < 2 {
		return Scenario{}, 0, fmt.Errorf("append scenario at %s: only %d batch ends", sz.Name, len(ends))
	}
	window := func(end int) []history.Message {
		start := end - n
		for long[start].Role == history.Tool {
			start++
		}
		return long[start:end:end]
	}
	memo := clearing.NewMemo()
	arrive := func(msgs []history.Message) {
		est.Messages(msgs)
		if warm {
			memo.Warm(est, msgs)
		}
	}
	arrive(long[:ends[0]])
	project(est, memo, window(ends[0]), pol, budget) // the previous request
	var proj, mar, arr samples
	for w := 1; w < len(ends); w++ {
		if err := ctx.Err(); err != nil {
			return Scenario{}, 0, err
		}
		arr = append(arr, timeIt(func() { arrive(long[ends[w-1]:ends[w]]) }))
		msgs := window(ends[w])
		var out []history.Message
		proj = append(proj, timeIt(func() { out, _ = project(est, memo, msgs, pol, budget) }))
		d, err := timeMarshal(out)
		if err != nil {
			return Scenario{}, 0, err
		}
		mar = append(mar, d)
	}
	return newScenario(proj, mar), int64(arr.median()), nil
}
