package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// ratios lists every ratio of a report by name.
func ratios(rep *Report) map[string]float64 {
	r := map[string]float64{}
	for _, p := range rep.Projection {
		r["projection "+p.Size+" cold"] = p.Cold.Ratio
		r["projection "+p.Size+" after append"] = p.AfterAppend.Ratio
		r["projection "+p.Size+" after append with Warm"] = p.AfterAppendWarm.Ratio
		r["projection "+p.Size+" from scratch"] = p.Scratch.Ratio
	}
	if d := rep.Daemon; d != nil {
		r["daemon median"] = d.RatioMedian
		r["daemon p95"] = d.RatioP95
		r["daemon raw median"] = d.RawRatioMedian
		r["daemon raw p95"] = d.RawRatioP95
	}
	if e := rep.Estimation; e != nil {
		r["estimation"] = e.Ratio
	}
	for _, c := range rep.Compaction {
		r[fmt.Sprintf("compaction %d size", c.Capacity)] = c.SizeRatio
		r[fmt.Sprintf("compaction %d vs marshal", c.Capacity)] = c.VsMarshal
	}
	if m := rep.Memory; m != nil {
		r["memory history vs JSON"] = m.HistoryVsJSON
		r["memory held vs JSON"] = m.HeldVsJSON
		r["memory held per 1M"] = m.HeldMiBPer1M
		r["memory allocated per 1M"] = m.TotalAllocMiBPer1M
	}
	for _, s := range rep.Scaling {
		r["scaling "+s.Shape+" append"] = s.AppendGrowth
		r["scaling "+s.Shape+" prepare"] = s.PrepareGrowth
	}
	for _, tg := range rep.Targets {
		if tg.Unit == "+ms" { // a difference: either sign
			if math.IsNaN(tg.Got) || math.IsInf(tg.Got, 0) {
				r["target "+tg.Name] = tg.Got
			}
			continue
		}
		r["target "+tg.Name] = tg.Got
	}
	return r
}

// checkReport checks that a quick report has every section and that every
// ratio is finite and positive. It does not judge speed.
func checkReport(t *testing.T, rep *Report) {
	t.Helper()
	if !rep.Quick {
		t.Error("report does not say it is quick")
	}
	var sizes []string
	for _, p := range rep.Projection {
		sizes = append(sizes, p.Size)
		if p.HistoryTokens <= 0 || p.Messages <= 0 || p.JSONBytes <= 0 {
			t.Errorf("projection %s: empty history %+v", p.Size, p)
		}
		if p.ClearedResults == 0 {
			t.Errorf("projection %s: clearing did not engage (capacity %d)", p.Size, p.Capacity)
		}
	}
	if got := strings.Join(sizes, ","); got != "10k,100k" {
		t.Errorf("projection sizes = %s, want 10k,100k", got)
	}
	// The proxied cost table: every wire, both result sizes, both
	// pricings (and Gemini's on its wire); nothing an API would refuse;
	// with large results the proxy sends less and costs less than the
	// agent alone.
	if len(rep.ProxyCost) != 14 {
		t.Errorf("%d proxied cost rows, want 14", len(rep.ProxyCost))
	}
	for _, r := range rep.ProxyCost {
		if r.Rejected != 0 || r.DirectRequests == 0 || r.ProxiedRequests != r.DirectRequests {
			t.Errorf("proxied cost row %+v: want no rejected request and the same requests both ways", r)
		}
		if r.ResultBytes >= 20_000 && (r.SentRatio >= 1 || r.CostRatio >= 1) {
			t.Errorf("proxied cost row %+v: through the proxy, large results must cost less than the agent alone", r)
		}
	}
	if rep.Daemon == nil || rep.Estimation == nil || rep.Memory == nil || len(rep.Compaction) != 2 {
		t.Fatalf("missing section: daemon %v, estimation %v, memory %v, %d compactions",
			rep.Daemon != nil, rep.Estimation != nil, rep.Memory != nil, len(rep.Compaction))
	}
	if rep.Daemon.Turns <= 0 || rep.Daemon.SessionTokens < 50_000 {
		t.Errorf("daemon: %d turns on %d tokens", rep.Daemon.Turns, rep.Daemon.SessionTokens)
	}
	for _, c := range rep.Compaction {
		if c.CompactedTokens >= c.OriginalTokens {
			t.Errorf("compaction at %d: %d -> %d tokens", c.Capacity, c.OriginalTokens, c.CompactedTokens)
		}
	}
	if len(rep.Scaling) != 2 {
		t.Errorf("%d scaling rows, want 2 (text, tool calls)", len(rep.Scaling))
	}
	// The five performance targets, two per scaling row, the delta round
	// trip and per-turn growth (the quick run has no cost section), and
	// the shared daemon's forwarder overhead, the proxy's first byte and
	// total.
	if want := 5 + 2*len(rep.Scaling) + 2 + 1 + 2; len(rep.Targets) != want {
		t.Errorf("%d targets, want %d", len(rep.Targets), want)
	}
	if x := rep.Shared; x == nil || x.InProcessStart <= 0 || x.WarmAttach <= 0 || x.ColdAttach <= 0 || x.Forwarded.MedianNs <= 0 || x.ResponseBytes <= 0 {
		t.Errorf("shared daemon: %+v", x)
	}
	if d := rep.Delta; d == nil || d.DeltaBytes <= 0 || d.DeltaBytes*10 > d.FullBytes {
		t.Errorf("delta: %+v, want a delta result under a tenth of the whole one", d)
	}
	if l := rep.LongTurns; l == nil || l.Turns != 100 || l.Messages < 2*l.Turns {
		t.Errorf("long session: %+v", l)
	}
	rs := ratios(rep)
	if len(rs) < 20 {
		t.Errorf("only %d ratios", len(rs))
	}
	for name, r := range rs {
		if math.IsNaN(r) || math.IsInf(r, 0) || r <= 0 {
			t.Errorf("%s = %v, want a finite positive ratio", name, r)
		}
	}
}

// hasRow reports whether some line of text contains every part, in order.
func hasRow(text string, parts ...string) bool {
next:
	for _, line := range strings.Split(text, "\n") {
		rest := line
		for _, p := range parts {
			i := strings.Index(rest, p)
			if i < 0 {
				continue next
			}
			rest = rest[i+len(p):]
		}
		return true
	}
	return false
}

func TestQuickTable(t *testing.T) {
	defer goleak.VerifyNone(t)
	var out, progress bytes.Buffer
	rep, err := run(t.Context(), []string{"--quick"}, &out, &progress)
	if err != nil {
		t.Fatalf("run --quick: %v\nstderr:\n%s", err, progress.String())
	}
	checkReport(t, rep)
	text := out.String()
	rows := [][]string{
		{"machine: ", "CPUs", "go1."},
		{"history", "messages", "batches", "tokens", "JSON", "capacity", "trigger", "projected", "cleared"},
	}
	for _, sz := range []string{"10k", "100k"} {
		rows = append(rows,
			[]string{"cold: fresh decode, estimate + project", sz, "×"},
			[]string{"warm: after appending one batch", sz, "×"},
			[]string{"same, clearing.Warm on arrival", sz, "×"},
			[]string{"warm: from scratch, estimates known", sz, "×"})
	}
	rows = append(rows,
		[]string{"10k → 100k", "×", "×", "×", "×", "×"},
		[]string{"vtcode/prepareRequest", "s", "s"},
		[]string{"jsonrpc2 echo", "s", "s"},
		[]string{"frame echo", "s", "s"},
		[]string{"ratio prepareRequest / jsonrpc2 echo", "×", "×"},
		[]string{"ratio prepareRequest / frame echo", "×", "×"},
		[]string{"100k", "MB/s", "MB/s", "×"},
		[]string{"100k", "128,000", "×", "→", "→", "×"},
		[]string{"100k", "unknown", "×", "→", "→", "×"},
		[]string{"held (HeapInuse Δ)", "MiB", "MiB", "MiB", "×"},
		[]string{"allocated (TotalAlloc Δ): all", "MiB", "×"},
		[]string{"estimation throughput / raw tokenizer", "≥ 0.90×"},
		[]string{"project after append / marshal", "≤ 0.10×"},
		[]string{"project after append", "< 1 ms", " ms"},
		[]string{"from scratch, estimates known / marshal", "≤ 3×"},
		[]string{"history heap (HeapInuse) / JSON size", "≤ 3×"},
		[]string{"one text message", "bytes →", "×", "×"},
		[]string{"messages of 1,024 unanswered tool calls", "messages →", "×", "×"},
		[]string{"append growth / size growth, one text message", "≤ 2×"},
		[]string{"prepare growth / size growth, messages of 1,024 unanswered tool calls", "≤ 2×"},
		[]string{"whole projection", "s", "s", "B"},
		[]string{"delta (applied by the client)", "s", "s", "B"},
		[]string{"ratio delta / whole", "×"},
		[]string{"first tenth", "s"},
		[]string{"last tenth", "s"},
		[]string{"prepareRequest round trip, delta / whole projection", "≤ 0.05×", "×"},
		[]string{"per-turn time, last tenth / first tenth", "100 turns", "×"},
		[]string{"start to initialize result, daemon running", "ms", "ms", "×"},
		[]string{"prepareRequest, 100,000-token session", "s", "s", "×"},
		[]string{"peak RSS, every process", "MiB", "MiB", "×"},
		[]string{"prepareRequest through the forwarder / in process", "≤ 1.05×", "×"},
	)
	for _, r := range rows {
		if !hasRow(text, r...) {
			t.Errorf("no row with %q in the table:\n%s", r, text)
		}
	}
	if n := strings.Count(text, "PASS") + strings.Count(text, "FAIL"); n != 14 {
		t.Errorf("%d PASS/FAIL verdicts, want 14:\n%s", n, text)
	}
	if strings.Contains(text, "n/a") || strings.Contains(text, "NaN") || strings.Contains(text, "Inf") {
		t.Errorf("table has a missing value:\n%s", text)
	}
	if !strings.Contains(progress.String(), "done") {
		t.Errorf("no progress on stderr:\n%s", progress.String())
	}
}

func TestQuickJSON(t *testing.T) {
	var out bytes.Buffer
	if _, err := run(t.Context(), []string{"--quick", "--json"}, &out, io.Discard); err != nil {
		t.Fatalf("run --quick --json: %v", err)
	}
	dec := json.NewDecoder(&out)
	dec.DisallowUnknownFields()
	var rep Report
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("output is not a report: %v", err)
	}
	if dec.More() {
		t.Error("more than one JSON value on stdout")
	}
	checkReport(t, &rep)
	if rep.Machine.NumCPU <= 0 || rep.Machine.GoVersion == "" {
		t.Errorf("machine = %+v", rep.Machine)
	}
}

func TestArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--nope"}, "flag provided but not defined"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		_, err := run(t.Context(), tc.args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run %q: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
	var usage bytes.Buffer
	if _, err := run(t.Context(), []string{"-h"}, io.Discard, &usage); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("run -h: %v, want flag.ErrHelp", err)
	}
	if !strings.Contains(usage.String(), "--quick") || !strings.Contains(usage.String(), "-json") {
		t.Errorf("usage does not name the flags:\n%s", usage.String())
	}
}
