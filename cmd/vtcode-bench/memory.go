package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/vtcode/vtcode-ls/clearing"
	"github.com/vtcode/vtcode-ls/history"
)

// MemoryResult is the heap a decoded, estimated history keeps alive, and the
// heap of one projection of it held beside it.
type MemoryResult struct {
	History   string `json:"history"`
	Tokens    int    `json:"tokens"`
	JSONBytes int    `json:"jsonBytes"`
	// HeapInuse deltas (after GC): the decoded history; the history once
	// estimated (as the session holds it); and a projection held beside it.
	DecodedHeapInuse    int64 `json:"decodedHeapInuse"`
	HistoryHeapInuse    int64 `json:"historyHeapInuse"`
	ProjectionHeapInuse int64 `json:"projectionHeapInuse"`
	// HeapAlloc delta of the history alone (live objects, without span slack).
	HistoryHeapAlloc int64 `json:"historyHeapAlloc"`
	// TotalAlloc deltas: everything allocated to decode the history, to
	// estimate it (the tokenizer's garbage) and to project it.
	DecodeTotalAlloc     int64 `json:"decodeTotalAlloc"`
	EstimateTotalAlloc   int64 `json:"estimateTotalAlloc"`
	ProjectionTotalAlloc int64 `json:"projectionTotalAlloc"`
	// Per 1M history tokens, in MiB.
	HeldMiBPer1M       float64 `json:"heldMiBPer1M"` // history + projection HeapInuse
	TotalAllocMiBPer1M float64 `json:"totalAllocMiBPer1M"`
	// HistoryVsJSON is HistoryHeapInuse / JSONBytes (target: ≤ 3);
	// HeldVsJSON counts the projection too.
	HistoryVsJSON float64 `json:"historyVsJSON"`
	HeldVsJSON    float64 `json:"heldVsJSON"`
}

func heapStats() runtime.MemStats {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}

// benchMemory decodes data (a history's JSON), estimates it as on arrival and
// projects it, reading the heap after each step.
func benchMemory(name string, data []byte, b clearing.Budget) (*MemoryResult, error) {
	est := history.NewEstimator(history.O200k)
	res := &MemoryResult{History: name, JSONBytes: len(data)}
	est.Text("load the vocabulary before the first reading")
	m0 := heapStats()
	var msgs []history.Message
	if err := json.Unmarshal(data, &msgs); err != nil {
		return nil, fmt.Errorf("decoding history: %w", err)
	}
	md := heapStats()
	res.Tokens = est.Messages(msgs)
	m1 := heapStats()
	proj, _ := project(est, nil, msgs, clearing.DefaultPolicy(), b)
	m2 := heapStats()
	runtime.KeepAlive(msgs)
	runtime.KeepAlive(proj)

	res.DecodedHeapInuse = int64(md.HeapInuse) - int64(m0.HeapInuse)
	res.HistoryHeapInuse = int64(m1.HeapInuse) - int64(m0.HeapInuse)
	res.ProjectionHeapInuse = int64(m2.HeapInuse) - int64(m1.HeapInuse)
	res.HistoryHeapAlloc = int64(m1.HeapAlloc) - int64(m0.HeapAlloc)
	res.DecodeTotalAlloc = int64(md.TotalAlloc - m0.TotalAlloc)
	res.EstimateTotalAlloc = int64(m1.TotalAlloc - md.TotalAlloc)
	res.ProjectionTotalAlloc = int64(m2.TotalAlloc - m1.TotalAlloc)
	perM := 1e6 / float64(res.Tokens) / (1 << 20)
	res.HeldMiBPer1M = float64(res.HistoryHeapInuse+res.ProjectionHeapInuse) * perM
	res.TotalAllocMiBPer1M = float64(res.DecodeTotalAlloc+res.EstimateTotalAlloc+res.ProjectionTotalAlloc) * perM
	res.HistoryVsJSON = float64(res.HistoryHeapInuse) / float64(len(data))
	res.HeldVsJSON = float64(res.HistoryHeapInuse+res.ProjectionHeapInuse) / float64(len(data))
	return res, nil
}

// peakRSS returns the process's peak resident set size (VmHWM) in bytes, or 0
// where /proc is not available.
func peakRSS() int64 { return peakRSSOf("self") }

// peakRSSOf is the peak resident set of process pid ("self": this one), in
// bytes (0 where unknown).
func peakRSSOf(pid string) int64 {
	f, err := os.Open("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
