package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"
)

// fmtNs formats a duration in ns with three significant digits.
func fmtNs(ns int64) string {
	d := float64(ns)
	switch {
	case d < 1e3:
		return fmt.Sprintf("%.0f ns", d)
	case d < 1e6:
		return fmt.Sprintf("%.3g µs", d/1e3)
	case d < 1e9:
		return fmt.Sprintf("%.3g ms", d/1e6)
	}
	return fmt.Sprintf("%.3g s", d/1e9)
}

// fmtRatio formats a ratio as a multiple: 0.034×, 1.27×, 31.4×.
func fmtRatio(r float64) string {
	switch {
	case math.IsNaN(r) || math.IsInf(r, 0):
		return "n/a"
	case r < 0.1:
		return fmt.Sprintf("%.3f×", r)
	case r < 10:
		return fmt.Sprintf("%.2f×", r)
	}
	return fmt.Sprintf("%.1f×", r)
}

// fmtBytes formats a byte count in KiB or MiB.
func fmtBytes(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func capacityName(c int) string {
	if c == 0 {
		return "unknown"
	}
	return formatInt(int64(c))
}

// table writes tab-separated rows aligned in columns.
type table struct {
	tw *tabwriter.Writer
}

func newTable(w io.Writer) *table {
	return &table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
}

func (t *table) row(cells ...string) { fmt.Fprintln(t.tw, "  "+strings.Join(cells, "\t")) }

func (t *table) flush() error { return t.tw.Flush() }

// writeTable prints the report as the human-readable table: a header,
// then one section a measurement the report holds, in the order of
// docs/performance.md, then the total time. A section that cannot be
// written does not stop the others; the first error is returned.
func writeTable(w io.Writer, rep *Report) error {
	mode := "full run"
	if rep.Quick {
		mode = "quick run (10k and 100k only)"
	}
	fmt.Fprintf(w, "vtcode-bench: %s\n", mode)
	fmt.Fprintf(w, "machine: %s\n", rep.Machine)
	fmt.Fprintf(w, "Every figure comes from this one process; times are medians; a ratio is cost ÷ the reference beside it.\n\n")
	sections := []func(io.Writer, *Report) error{
		writeProjectionTable, writeDaemonTable, writeEstimationTable, writeCompactionTable, writeScalingTable,
		writeMemoryTable, writeResumeTable,
		func(w io.Writer, rep *Report) error { return writeCostTable(w, rep.Cost) },
		func(w io.Writer, rep *Report) error { return writeProxyCostTable(w, rep.ProxyCost) },
		func(w io.Writer, rep *Report) error { return writeTierTable(w, rep.Tier) },
		writeDeltaTable, writeProxyTable,
		func(w io.Writer, rep *Report) error {
			if rep.Shared == nil {
				return nil
			}
			return writeShared(w, rep.Shared)
		},
		writeTargetsTable,
	}
	var first error
	for _, section := range sections {
		if err := section(w, rep); err != nil && first == nil {
			first = err
		}
	}
	fmt.Fprintf(w, "\ntotal %s\n", (time.Duration(rep.ElapsedSeconds * float64(time.Second))).Round(100*time.Millisecond))
	if first != nil {
		return fmt.Errorf("writing table: %w", first)
	}
	return nil
}

// printer is fmt.Fprintf on w.
func printer(w io.Writer) func(format string, args ...any) {
	return func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
}

// firstError returns the first of errs that is not nil.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// writeProjectionTable is section 1: the request projection.
func writeProjectionTable(w io.Writer, rep *Report) error {
	if len(rep.Projection) == 0 {
		return nil
	}
	p := printer(w)
	p("1. Request projection (history.Normalize + clearing.Clear, default policy, reserve %s, prefix %s)\n", formatInt(benchReservedOutput), formatInt(benchPrefix))
	p("   vs encoding/json.Marshal of the same projection\n")
	t := newTable(w)
	t.row("history", "messages", "batches", "tokens", "JSON", "capacity", "trigger", "projected", "cleared")
	for _, r := range rep.Projection {
		t.row(r.Size, formatInt(int64(r.Messages)), formatInt(int64(r.Batches)), formatInt(int64(r.HistoryTokens)),
			fmtBytes(int64(r.JSONBytes)), formatInt(int64(r.Capacity)), formatInt(int64(r.LocalTrigger)),
			formatInt(int64(r.ProjectedTokens)), formatInt(int64(r.ClearedResults)))
	}
	sizes := t.flush()
	p("\n")
	t = newTable(w)
	t.row("scenario", "history", "project", "marshal", "ratio", "reps")
	scen := []struct {
		name string
		get  func(ProjectionRow) Scenario
	}{
		{"cold: fresh decode, estimate + project", func(r ProjectionRow) Scenario { return r.Cold }},
		{"warm: after appending one batch", func(r ProjectionRow) Scenario { return r.AfterAppend }},
		{"  same, clearing.Warm on arrival", func(r ProjectionRow) Scenario { return r.AfterAppendWarm }},
		{"warm: from scratch, estimates known", func(r ProjectionRow) Scenario { return r.Scratch }},
	}
	for _, s := range scen {
		for _, r := range rep.Projection {
			sc := s.get(r)
			t.row(s.name, r.Size, fmtNs(sc.ProjectNs), fmtNs(sc.MarshalNs), fmtRatio(sc.Ratio), fmt.Sprint(sc.Reps))
		}
	}
	scenarios := t.flush()
	growth := writeProjectionGrowth(w, rep.Projection)
	p("\n")
	return firstError(sizes, scenarios, growth)
}

// writeProjectionGrowth shows how the projection's cost grows between
// consecutive sizes (and from the first to the last), when there are two.
func writeProjectionGrowth(w io.Writer, rows []ProjectionRow) error {
	n := len(rows)
	if n < 2 {
		return nil
	}
	p := printer(w)
	p("\n   how cost grows with the history (factor between consecutive sizes):\n")
	t := newTable(w)
	t.row("step", "tokens", "cold", "after append", "from scratch", "marshal (from scratch)")
	grow := func(a, b int64) string { return fmtRatio(float64(b) / float64(a)) }
	steps := [][2]ProjectionRow{}
	for i := 1; i < n; i++ {
		steps = append(steps, [2]ProjectionRow{rows[i-1], rows[i]})
	}
	if n > 2 {
		steps = append(steps, [2]ProjectionRow{rows[0], rows[n-1]})
	}
	for _, st := range steps {
		a, b := st[0], st[1]
		t.row(a.Size+" → "+b.Size, fmtRatio(float64(b.HistoryTokens)/float64(a.HistoryTokens)),
			grow(a.Cold.ProjectNs, b.Cold.ProjectNs), grow(a.AfterAppend.ProjectNs, b.AfterAppend.ProjectNs),
			grow(a.Scratch.ProjectNs, b.Scratch.ProjectNs), grow(a.Scratch.MarshalNs, b.Scratch.MarshalNs))
	}
	err := t.flush()
	var arr []string
	for _, r := range rows {
		arr = append(arr, fmt.Sprintf("%s %s (with Warm %s)", r.Size, fmtNs(r.ArriveNs), fmtNs(r.ArriveWarmNs)))
	}
	p("   arrival, paid once per new batch (estimate; not part of the projection): %s\n", strings.Join(arr, ", "))
	return err
}

// writeDaemonTable is section 2: the daemon round trip.
func writeDaemonTable(w io.Writer, rep *Report) error {
	d := rep.Daemon
	if d == nil {
		return nil
	}
	p := printer(w)
	p("2. Daemon round trip: vtcode/prepareRequest vs a bare JSON-RPC echo of the same bytes\n")
	p("   %s\n", d.Transport)
	p("   session %s tokens in %s messages, window %s; %d turns with one new user message each;\n",
		formatInt(int64(d.SessionTokens)), formatInt(int64(d.Messages)), formatInt(int64(d.ContextWindow)), d.Turns)
	p("   request %s, response %s (projection of %s tokens), %d compactions\n",
		fmtBytes(int64(d.RequestBytes)), fmtBytes(int64(d.ResponseBytes)), formatInt(int64(d.ProjectedTokens)), d.Compactions)
	t := newTable(w)
	t.row("call", "median", "p95")
	t.row("vtcode/prepareRequest", fmtNs(d.Prepare.MedianNs), fmtNs(d.Prepare.P95Ns))
	t.row("jsonrpc2 echo (same request, same response bytes)", fmtNs(d.Echo.MedianNs), fmtNs(d.Echo.P95Ns))
	t.row("frame echo (no JSON-RPC library server-side, same bytes)", fmtNs(d.RawEcho.MedianNs), fmtNs(d.RawEcho.P95Ns))
	t.row("ratio prepareRequest / jsonrpc2 echo", fmtRatio(d.RatioMedian), fmtRatio(d.RatioP95))
	t.row("ratio prepareRequest / frame echo", fmtRatio(d.RawRatioMedian), fmtRatio(d.RawRatioP95))
	err := t.flush()
	p("\n")
	return err
}

// writeEstimationTable is section 3: token estimation.
func writeEstimationTable(w io.Writer, rep *Report) error {
	e := rep.Estimation
	if e == nil {
		return nil
	}
	p := printer(w)
	p("3. Token estimation: history.Estimator (o200k) on fresh messages vs raw codec.NewO200kBase().Count, same text\n")
	t := newTable(w)
	t.row("history", "text", "tokens", "estimator", "raw tokenizer", "throughput ratio")
	t.row(e.History, fmtBytes(int64(e.TextBytes)), formatInt(int64(e.Tokens)),
		fmt.Sprintf("%s (%.2f MB/s)", fmtNs(e.EstimatorNs), e.EstimatorMBps),
		fmt.Sprintf("%s (%.2f MB/s)", fmtNs(e.RawNs), e.RawMBps), fmtRatio(e.Ratio))
	err := t.flush()
	p("\n")
	return err
}

// writeCompactionTable is section 4: offline compaction.
func writeCompactionTable(w io.Writer, rep *Report) error {
	if len(rep.Compaction) == 0 {
		return nil
	}
	p := printer(w)
	p("4. Offline compaction (compaction.Compact, package summary, strategy local, trigger manual)\n")
	t := newTable(w)
	t.row("history", "capacity", "wall", "vs marshal(history)", "messages", "tokens", "size ratio")
	for _, c := range rep.Compaction {
		t.row(c.History, capacityName(c.Capacity), fmtNs(c.WallNs), fmtRatio(c.VsMarshal),
			formatInt(int64(c.OriginalMessages))+" → "+formatInt(int64(c.CompactedMessages)),
			formatInt(int64(c.OriginalTokens))+" → "+formatInt(int64(c.CompactedTokens)), fmtRatio(c.SizeRatio))
	}
	err := t.flush()
	p("\n")
	return err
}

// writeScalingTable shows how large calls scale.
func writeScalingTable(w io.Writer, rep *Report) error {
	if len(rep.Scaling) == 0 {
		return nil
	}
	p := printer(w)
	p("Large calls: vtcode/appendMessages, then vtcode/prepareRequest (synthesizing unanswered results), each shape at two sizes\n")
	p("   growth = time factor ÷ size factor (1× is linear)\n")
	t := newTable(w)
	t.row("shape", "sizes", "append", "prepare", "append growth", "prepare growth")
	for _, s := range rep.Scaling {
		t.row(s.Shape, s.Small+" → "+s.Large, fmtNs(s.AppendSmallNs)+" → "+fmtNs(s.AppendLargeNs),
			fmtNs(s.PrepareSmallNs)+" → "+fmtNs(s.PrepareLargeNs), fmtRatio(s.AppendGrowth), fmtRatio(s.PrepareGrowth))
	}
	err := t.flush()
	p("\n")
	return err
}

// writeMemoryTable is section 5: memory.
func writeMemoryTable(w io.Writer, rep *Report) error {
	m := rep.Memory
	if m == nil {
		return nil
	}
	p := printer(w)
	p("5. Memory: decoded %s (%s tokens, JSON %s), estimated, plus one projection; runtime.MemStats after GC\n",
		m.History, formatInt(int64(m.Tokens)), fmtBytes(int64(m.JSONBytes)))
	t := newTable(w)
	t.row("measure", "history", "projection", "per 1M tokens", "vs JSON size")
	t.row("held (HeapInuse Δ)", mib(m.HistoryHeapInuse), mib(m.ProjectionHeapInuse), fmt.Sprintf("%.1f MiB", m.HeldMiBPer1M),
		fmtRatio(m.HistoryVsJSON)+" (with projection "+fmtRatio(m.HeldVsJSON)+")")
	t.row("live objects (HeapAlloc Δ)", mib(m.HistoryHeapAlloc), "", "", fmtRatio(float64(m.HistoryHeapAlloc)/float64(m.JSONBytes)))
	t.row("  of which decoded, before estimation (HeapInuse Δ)", mib(m.DecodedHeapInuse), "", "", fmtRatio(float64(m.DecodedHeapInuse)/float64(m.JSONBytes)))
	t.row("allocated (TotalAlloc Δ): decode", mib(m.DecodeTotalAlloc), "", "", fmtRatio(float64(m.DecodeTotalAlloc)/float64(m.JSONBytes)))
	t.row("allocated (TotalAlloc Δ): estimate (o200k)", mib(m.EstimateTotalAlloc), "", "", fmtRatio(float64(m.EstimateTotalAlloc)/float64(m.JSONBytes)))
	t.row("allocated (TotalAlloc Δ): all", mib(m.DecodeTotalAlloc+m.EstimateTotalAlloc), mib(m.ProjectionTotalAlloc), fmt.Sprintf("%.1f MiB", m.TotalAllocMiBPer1M),
		fmtRatio(float64(m.DecodeTotalAlloc+m.EstimateTotalAlloc+m.ProjectionTotalAlloc)/float64(m.JSONBytes)))
	err := t.flush()
	if rep.PeakRSS > 0 {
		p("   process peak RSS over the whole run: %s\n", mib(rep.PeakRSS))
	}
	p("\n")
	return err
}

// writeResumeTable shows the session resume.
func writeResumeTable(w io.Writer, rep *Report) error {
	if rep.Resume == nil {
		return nil
	}
	t := newTable(w)
	writeResume(printer(w), t, rep.Resume)
	err := t.flush()
	fmt.Fprintf(w, "\n")
	return err
}

// writeProxyTable is section 6: the proxy against httputil.ReverseProxy.
func writeProxyTable(w io.Writer, rep *Report) error {
	x := rep.Proxy
	if x == nil {
		return nil
	}
	p := printer(w)
	p("6. Proxy: a streamed Messages request of %s tokens of messages (%s with a Claude Code-sized system prompt and\n",
		formatInt(int64(x.RequestTokens)), fmtBytes(int64(x.RequestBytes)))
	p("   tool schemas, %d SSE events back) through vtcode-ls proxy\n", x.StreamEvents)
	p("   vs httputil.ReverseProxy (FlushInterval -1), same upstream (drains the body, streams a canned answer);\n")
	p("   the session knows the conversation\n")
	p("   (a repeated request). \"same bytes\": clearing off, the upstream gets the agent's bytes; \"clearing\":\n")
	p("   the default policy, the upstream gets %s\n", fmtBytes(int64(x.ForwardedBytes)))
	t := newTable(w)
	t.row("measure", "ReverseProxy", "proxy, same bytes", "added", "ratio", "proxy, clearing", "ratio")
	t.row("time to first byte", fmtNs(x.PlainTTFBNs), fmtNs(x.Same.TTFBNs), fmtAdded(x.Same.TTFBNs-x.PlainTTFBNs), fmtRatio(x.Same.TTFBRatio),
		fmtNs(x.Cleared.TTFBNs), fmtRatio(x.Cleared.TTFBRatio))
	t.row("total", fmtNs(x.PlainTotalNs), fmtNs(x.Same.TotalNs), fmtAdded(x.Same.TotalNs-x.PlainTotalNs), fmtRatio(x.Same.TotalRatio),
		fmtNs(x.Cleared.TotalNs), fmtRatio(x.Cleared.TotalRatio))
	if x.PlainCPUNs > 0 {
		t.row("CPU per request", fmtNs(x.PlainCPUNs), fmtNs(x.Same.CPUNs), fmtAdded(x.Same.CPUNs-x.PlainCPUNs),
			fmtRatio(float64(x.Same.CPUNs)/float64(x.PlainCPUNs)), "", "")
	}
	err := t.flush()
	p("   first request of a new session (every message estimated): time to first byte %s (same bytes), %s (clearing);\n",
		fmtNs(x.Same.ColdTTFBNs), fmtNs(x.Cleared.ColdTTFBNs))
	p("   medians of %d interleaved reps, each request sent once the proxy recorded the answer before (as an agent\n", x.Reps)
	p("   sends it after running its tools); CPU: the whole process (client, upstream, proxy), the answer's recording\n")
	p("   included, over %d requests in a row through each\n\n", x.Reps)
	return err
}

// writeTargetsTable shows the performance targets and their verdicts.
func writeTargetsTable(w io.Writer, rep *Report) error {
	if len(rep.Targets) == 0 {
		return nil
	}
	p := printer(w)
	p("Performance targets\n")
	t := newTable(w)
	t.row("target", "measured on", "want", "got", "")
	for _, tg := range rep.Targets {
		verdict := "FAIL"
		if tg.Pass {
			verdict = "PASS"
		}
		t.row(tg.Name, tg.Measured, tg.Want, tg.gotText(), verdict)
	}
	err := t.flush()
	if rep.Quick {
		p("   (the targets are stated for the 1M preset; a quick run checks them on 100k)\n")
	}
	return err
}

// gotText is the measured figure of the target in its unit.
func (tg Target) gotText() string {
	switch tg.Unit {
	case "ms":
		return fmt.Sprintf("%.3f ms", tg.Got)
	case "+ms":
		return fmtAdded(int64(tg.Got * 1e6))
	case "":
		return fmt.Sprintf("%.3g", tg.Got)
	}
	return fmtRatio(tg.Got)
}
