package clearing

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/history/historytest"
)

// The benchmarks run on historytest's preset: 2,000 messages, ~1M o200k
// tokens, 400 tool batches, estimated once as on arrival. Budget: a 200k
// window with the default policy (local trigger 40,000).
var benchBudget = Budget{Capacity: 200_000, ReservedOutput: 4096, Prefix: 3000}

var preset = sync.OnceValue(func() []history.Message {
	msgs := historytest.Preset1M()
	o200k.Messages(msgs)
	return msgs
})

// benchMemo is the memo of the benchmarks' projections, as a session keeps one.
var benchMemo = NewMemo()

// project is the request pipeline's projection: normalize, then clear
// everything above the floor (the seed's projection).
func project(msgs []history.Message, p Policy) ([]history.Message, Stats) {
	norm, _ := history.Normalize(msgs)
	p.ClearAtLeastTokens, p.CacheAware = 0, false
	r := Project(o200k, norm, Request{Policy: p, Budget: benchBudget, Memo: benchMemo})
	return r.Messages, r.Stats
}

// marshalNs is the time json.Marshal takes on the projection of the preset
// (the best of 7 runs): what a caller pays anyway to send the projection.
var marshalNs = sync.OnceValue(func() float64 {
	proj, _ := project(preset(), DefaultPolicy())
	best := time.Duration(1 << 62)
	for range 7 {
		start := time.Now()
		if _, err := json.Marshal(proj); err != nil {
			panic(err)
		}
		best = min(best, time.Since(start))
	}
	return float64(best.Nanoseconds())
})

func reportVsMarshal(b *testing.B, start time.Time) {
	perOp := float64(time.Since(start).Nanoseconds()) / float64(b.N)
	b.ReportMetric(perOp/marshalNs(), "x-marshal")
}

// BenchmarkMarshalProjection is the reference: json.Marshal of the projection.
func BenchmarkMarshalProjection(b *testing.B) {
	proj, st := project(preset(), DefaultPolicy())
	data, _ := json.Marshal(proj)
	b.SetBytes(int64(len(data)))
	b.ReportMetric(float64(st.ProjectedTokens), "projected-tokens")
	b.ReportMetric(float64(st.OriginalTokens), "history-tokens")
	for b.Loop() {
		if _, err := json.Marshal(proj); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMarshalHistory marshals the whole history, for scale.
func BenchmarkMarshalHistory(b *testing.B) {
	h := preset()
	data, _ := json.Marshal(h)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := json.Marshal(h); err != nil {
			b.Fatal(err)
		}
	}
}

// appendWindows is a longer synthetic session with the preset's density, cut
// into windows of about 2,000 messages that each end one batch later than the
// previous one: projecting window i+1 after window i is projecting after
// appending one batch, with every estimate cached on arrival.
var appendWindows = sync.OnceValues(func() (windows [][]history.Message, long []history.Message) {
	cfg := historytest.Preset1MConfig()
	cfg.Seed = 7
	cfg.Messages *= 3
	cfg.Batches *= 3
	cfg.Tokens *= 3
	long = historytest.Synthetic(cfg)
	o200k.Messages(long)
	for end := 2000; end < len(long); end++ {
		if !long[end-1].HasToolCalls() && long[end-1].Role == history.Tool && (end == len(long) || long[end].Role != history.Tool) {
			start := end - 2000
			for long[start].Role == history.Tool {
				start++
			}
			windows = append(windows, long[start:end:end])
		}
	}
	return windows, long
})

// BenchmarkProjectAfterAppend: normalize + clear after one new batch arrived,
// in the intended pipeline: every message was estimated and warmed (Warm) on
// arrival, so the projection tokenizes nothing.
func BenchmarkProjectAfterAppend(b *testing.B) { benchAfterAppend(b, true) }

// BenchmarkProjectAfterAppendNoWarm is the same without Warm on arrival: the
// batch that just left count retention pays for tokenizing its stubs and
// signature.
func BenchmarkProjectAfterAppendNoWarm(b *testing.B) { benchAfterAppend(b, false) }

func benchAfterAppend(b *testing.B, warmOnArrival bool) {
	windows, long := appendWindows()
	p := DefaultPolicy()
	// start resets the memo to what arrival left when window 0 was current
	// (with Warm, later arrivals are warmed too: that is arrival-time work).
	start := func() {
		benchMemo.Reset()
		if warmOnArrival {
			benchMemo.Warm(o200k, long)
		} else {
			project(windows[0], p)
		}
	}
	start()
	var st Stats
	b.ResetTimer()
	began := time.Now()
	for i := 0; i < b.N; i++ {
		w := 1 + i%(len(windows)-1)
		if w == 1 && i > 0 {
			b.StopTimer()
			start()
			b.StartTimer()
		}
		_, st = project(windows[w], p)
	}
	b.StopTimer()
	reportVsMarshal(b, began)
	b.ReportMetric(float64(st.ClearedResults), "cleared")
}

// BenchmarkProjectFromScratchCachedEstimates: a full projection with message
// estimates known, alternating between two policies (as after a policy
// change).
func BenchmarkProjectFromScratchCachedEstimates(b *testing.B) {
	h := preset()
	p1, p2 := DefaultPolicy(), DefaultPolicy()
	p2.KeepToolUses, p2.TriggerTokens, p2.ClearToolInputs = 5, 30000, true
	project(h, p1)
	project(h, p2)
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		p := p1
		if i%2 == 1 {
			p = p2
		}
		project(h, p)
	}
	b.StopTimer()
	reportVsMarshal(b, start)
}

// BenchmarkProjectColdMemo: a full projection with message estimates known but
// nothing memoized and no Warm on arrival, the worst case: every stub,
// signature and large input is tokenized.
func BenchmarkProjectColdMemo(b *testing.B) {
	h := preset()
	p := DefaultPolicy()
	var elapsed time.Duration
	for i := 0; i < b.N; i++ {
		benchMemo.Reset()
		start := time.Now()
		project(h, p)
		elapsed += time.Since(start)
	}
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N)/marshalNs(), "x-marshal")
}

// BenchmarkWarm is the arrival-time cost of Warm over the whole preset (to
// compare with estimating it, BenchmarkEstimateO200k in package history).
func BenchmarkWarm(b *testing.B) {
	h := preset()
	for b.Loop() {
		benchMemo.Reset()
		benchMemo.Warm(o200k, h)
	}
}

// BenchmarkProjectAfterRestart: a full projection of a history that was
// estimated and warmed on arrival (as after the daemon reloads a session),
// the first projection of the process.
func BenchmarkProjectAfterRestart(b *testing.B) {
	h := preset()
	p := DefaultPolicy()
	var elapsed time.Duration
	for i := 0; i < b.N; i++ {
		benchMemo.Reset()
		benchMemo.Warm(o200k, h)
		start := time.Now()
		project(h, p)
		elapsed += time.Since(start)
	}
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N)/marshalNs(), "x-marshal")
}

// BenchmarkNormalizeRepair: normalizing a preset-sized history with broken
// pairing (the slow path).
func BenchmarkNormalizeRepair(b *testing.B) {
	cfg := historytest.Preset1MConfig()
	cfg.Faults = true
	h := historytest.Synthetic(cfg)
	b.ReportMetric(float64(len(h)), "messages")
	for b.Loop() {
		out, changed := history.Normalize(h)
		if !changed || len(out) == 0 {
			b.Fatal("nothing repaired")
		}
	}
}
