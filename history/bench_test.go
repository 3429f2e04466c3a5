package history_test

import (
	"encoding/json"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/tiktoken-go/tokenizer/codec"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/history/historytest"
)

// The benchmarks run on historytest's preset: 2,000 messages, ~1M o200k
// tokens, 400 tool batches.
var (
	preset     = sync.OnceValue(historytest.Preset1M) // without cached estimates
	presetJSON = sync.OnceValue(func() []byte {
		b, err := json.Marshal(preset())
		if err != nil {
			panic(err)
		}
		return b
	})
)

var rawCodec = sync.OnceValue(func() *codec.Codec { return codec.NewO200kBase() })

func countRaw(c *codec.Codec, ts []string) {
	for _, s := range ts {
		if _, err := c.Count(s); err != nil {
			panic(err)
		}
	}
}

// BenchmarkRawTokenizer counts the preset's texts with the bare o200k codec.
func BenchmarkRawTokenizer(b *testing.B) {
	ts, n := historytest.Texts(preset())
	c := rawCodec()
	b.SetBytes(int64(n))
	for b.Loop() {
		countRaw(c, ts)
	}
}

// BenchmarkEstimateO200k estimates every message of the preset from scratch,
// as on arrival; compare its MB/s with BenchmarkRawTokenizer's.
func BenchmarkEstimateO200k(b *testing.B) {
	base := preset()
	_, n := historytest.Texts(base)
	est := history.NewEstimator(history.O200k)
	buf := make([]history.Message, len(base))
	b.SetBytes(int64(n))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		copy(buf, base) // no cached estimates
		b.StartTimer()
		est.Messages(buf)
	}
}

// BenchmarkEstimateVsRaw reports x-raw, the estimator's throughput relative to
// the bare codec's on the same text (target ≥ 0.9). The two are timed in
// alternation message by message, so that machine load affects them alike;
// ns/op is their sum.
func BenchmarkEstimateVsRaw(b *testing.B) {
	base := preset()
	c := rawCodec()
	est := history.NewEstimator(history.O200k)
	buf := make([]history.Message, len(base))
	per := make([][]string, len(base))
	for i := range base {
		per[i], _ = historytest.Texts(base[i : i+1])
	}
	var estTime, rawTime time.Duration
	for i := 0; i < b.N; i++ {
		copy(buf, base) // no cached estimates
		for j := range buf {
			t0 := time.Now()
			if j%2 == 0 {
				countRaw(c, per[j])
			} else {
				est.Message(&buf[j])
			}
			t1 := time.Now()
			if j%2 == 0 {
				est.Message(&buf[j])
			} else {
				countRaw(c, per[j])
			}
			t2 := time.Now()
			if j%2 == 0 {
				rawTime += t1.Sub(t0)
				estTime += t2.Sub(t1)
			} else {
				estTime += t1.Sub(t0)
				rawTime += t2.Sub(t1)
			}
		}
	}
	b.ReportMetric(float64(rawTime)/float64(estTime), "x-raw")
}

// BenchmarkEstimateCached is the request path: every estimate is cached.
func BenchmarkEstimateCached(b *testing.B) {
	msgs := preset()
	est := history.NewEstimator(history.O200k)
	buf := append([]history.Message(nil), msgs...)
	est.Messages(buf)
	for b.Loop() {
		est.Messages(buf)
	}
}

// BenchmarkNormalizeFastPath checks a valid preset-sized history.
func BenchmarkNormalizeFastPath(b *testing.B) {
	msgs := preset()
	for b.Loop() {
		if _, changed := history.Normalize(msgs); changed {
			b.Fatal("changed")
		}
	}
}

// BenchmarkDecode decodes the preset's JSON.
func BenchmarkDecode(b *testing.B) {
	data := presetJSON()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		var msgs []history.Message
		if err := json.Unmarshal(data, &msgs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMemory measures the heap a history decoded from JSON and estimated
// keeps alive: x-json is heap bytes per JSON byte (target ≤ 3).
func BenchmarkMemory(b *testing.B) {
	data := presetJSON()
	est := history.NewEstimator(history.Approx)
	var heap uint64
	for i := 0; i < b.N; i++ {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		var msgs []history.Message
		if err := json.Unmarshal(data, &msgs); err != nil {
			b.Fatal(err)
		}
		est.Messages(msgs)
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap += after.HeapAlloc - before.HeapAlloc
		runtime.KeepAlive(msgs)
	}
	perOp := float64(heap) / float64(b.N)
	b.ReportMetric(perOp, "heap-bytes")
	b.ReportMetric(float64(len(data)), "json-bytes")
	b.ReportMetric(perOp/float64(len(data)), "x-json")
}
