// Command vtcode-bench measures the vtcode-ls engine and daemon and prints,
// from one run, a table of ratios measured in the same process: request
// projection against encoding/json marshalling of the same projection (cold
// and warm, at 10k, 100k and 1M history tokens), a vtcode/prepareRequest round
// trip against a bare JSON-RPC echo of the same bytes, token estimation
// against the raw o200k tokenizer, offline compaction time and size, memory
// per 1M history tokens, how appending and preparing grow with the size of
// one call (a large text message, many messages of 1,024 unanswered tool
// calls), resume of a checkpointed log, the fact ledger (facts
// kept by compaction of the recorded sessions), the prompt-cache cost of the
// recorded sessions (package corpus) and projection deltas. It checks the
// performance targets (see targets, costTargets, deltaTargets and
// proxyTargets) and prints PASS or FAIL beside each.
//
// Usage:
//
//	vtcode-bench [--quick] [--cost] [--proxy] [--json] [--cpuprofile file]
//
// --quick measures 10k and 100k histories only (a smoke test, a few seconds);
// --cost and --proxy run only the prompt-cache cost or the proxy section;
// --json prints the results as one JSON object instead of the table. Progress
// goes to stderr; --cpuprofile writes a CPU profile of the run. `make bench`
// runs it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"time"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/history/historytest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	_, err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
	case err != nil:
		fmt.Fprintln(os.Stderr, "vtcode-bench:", err)
		os.Exit(1)
	}
}

// Report is everything one run measured.
type Report struct {
	Machine    Machine           `json:"machine"`
	Quick      bool              `json:"quick"`
	Projection []ProjectionRow   `json:"projection"`
	Daemon     *DaemonResult     `json:"daemon"`
	Estimation *EstimationResult `json:"estimation"`
	Compaction []CompactionRow   `json:"compaction"`
	Memory     *MemoryResult     `json:"memory"`
	Resume     *ResumeResult     `json:"resume"`
	Ledger     *LedgerResult     `json:"ledger"`
	Cost       []CostRow         `json:"cost"`  // cost.go
	Tier       []TierRow         `json:"tier"`  // tier.go
	Delta      *DeltaResult      `json:"delta"` // delta.go
	LongTurns  *TurnsResult      `json:"longTurns"`
	Scaling    []ScalingRow      `json:"scaling"`
	Proxy      *ProxyResult      `json:"proxy"`
	ProxyCost  []ProxyCostRow    `json:"proxyCost"` // proxycost.go
	Shared     *SharedResult     `json:"shared"`    // daemon_shared.go
	Targets    []Target          `json:"targets"`
	// PeakRSS is the process's peak resident set over the whole run, in bytes
	// (0 where unknown).
	PeakRSS        int64   `json:"peakRSS"`
	ElapsedSeconds float64 `json:"elapsedSeconds"`
}

// Target is one performance target and the measured value.
type Target struct {
	Name     string  `json:"name"`
	Want     string  `json:"want"`
	Got      float64 `json:"got"`
	Unit     string  `json:"unit"` // "x" (a ratio), "ms" or "+ms" (a time added, either sign)
	Pass     bool    `json:"pass"`
	Measured string  `json:"measured"` // the history it was measured on
}

// plan is what one run measures.
type plan struct {
	sizes []size
	// big is the history of the estimation, compaction and memory sections,
	// and of the targets.
	big                         size
	bigName                     string
	estPasses, compactReps      int
	daemonTokens, warmup, turns int
	daemonWindow                int
	compactCapacities           []int
	// resumeChunks appended chunks of resumeChunkTokens each make the
	// resumed logs (about 1 MB of log per 250k tokens).
	resumeChunks, resumeChunkTokens, resumeReps int
	noCost                                      bool // skip the cost section (cost.go)
	longTurns                                   int  // turns of the long-session section (delta.go)
	costOnly                                    bool // run the cost section only
	proxyOnly                                   bool // run the proxy section only
	proxyTokens, proxyReps                      int
}

func fullPlan() plan {
	return plan{
		sizes:   []size{size10k, size100k, size1M},
		big:     size1M,
		bigName: "1M preset",
		// Three passes over ~1M tokens each way.
		estPasses: 3, compactReps: 5,
		daemonTokens: 100_000, warmup: 20, turns: 200, daemonWindow: 128_000,
		compactCapacities: []int{128_000, 0},
		resumeChunks:      50, resumeChunkTokens: 250_000, resumeReps: 3,
		longTurns:   1000,
		proxyTokens: 200_000, proxyReps: 60,
	}
}

func quickPlan() plan {
	quick := func(s size) size {
		s.ColdReps, s.WindowBatches, s.ScratchReps = 3, 15, 11
		return s
	}
	return plan{
		sizes:     []size{quick(size10k), quick(size100k)},
		big:       quick(size100k),
		bigName:   "100k",
		estPasses: 1, compactReps: 1,
		daemonTokens: 100_000, warmup: 3, turns: 20, daemonWindow: 128_000,
		compactCapacities: []int{128_000, 0},
		resumeChunks:      5, resumeChunkTokens: 100_000, resumeReps: 3,
		noCost:      true,
		longTurns:   100,
		proxyTokens: 200_000, proxyReps: 3,
	}
}

// bigHistory returns the history of p.big without estimates: the preset
// itself at 1M.
func (p plan) bigHistory() []history.Message {
	if p.big.Tokens == size1M.Tokens {
		return historytest.Preset1M()
	}
	return historytest.Synthetic(historyConfig(p.big.Tokens, 1))
}

// run parses args, measures, and writes the table (or JSON) to stdout and
// progress to stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) (*Report, error) {
	fs := flag.NewFlagSet("vtcode-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the results as JSON instead of a table")
	quick := fs.Bool("quick", false, "reduced run: 10k and 100k histories only")
	costOnly := fs.Bool("cost", false, "run only the prompt-cache cost section (the recorded sessions of package corpus)")
	proxyOnly := fs.Bool("proxy", false, "run only the proxy section (a streamed request through vtcode-ls proxy vs httputil.ReverseProxy)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to `file`")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: vtcode-bench [--quick] [--cost] [--proxy] [--json] [--cpuprofile file]")
		fmt.Fprintln(stderr, "Measures projection, daemon round trip, estimation, compaction and memory; prints ratios.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	p := fullPlan()
	if *quick {
		p = quickPlan()
	}
	if *costOnly {
		p.costOnly, p.noCost = true, false
		if *quick {
			p.longTurns = 100
		}
	}
	p.proxyOnly = *proxyOnly
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return nil, fmt.Errorf("creating CPU profile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, fmt.Errorf("starting CPU profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	rep, err := measure(ctx, p, stderr)
	if err != nil {
		return nil, err
	}
	rep.Quick = *quick
	if *asJSON {
		return rep, writeJSON(stdout, rep)
	}
	if err := writeTable(stdout, rep); err != nil {
		return rep, err
	}
	return rep, writeLedger(stdout, rep.Ledger)
}

func writeJSON(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	return nil
}

// measure runs every section of p.
func measure(ctx context.Context, p plan, progress io.Writer) (*Report, error) {
	began := time.Now()
	m := &measurement{ctx: ctx, p: p, began: began, rep: &Report{Machine: describeMachine()},
		logf: func(format string, args ...any) {
			fmt.Fprintf(progress, "vtcode-bench [%5.1fs] %s\n", time.Since(began).Seconds(), fmt.Sprintf(format, args...))
		}}
	m.logf("%s", m.rep.Machine)
	var err error
	switch {
	case p.costOnly:
		err = m.costOnly()
	case p.proxyOnly:
		err = m.proxyOnly()
	default:
		err = m.all()
	}
	if err != nil {
		return nil, err
	}
	return m.rep, nil
}

// measurement is one run of measure: what it measures, the report it
// fills and its progress log.
type measurement struct {
	ctx   context.Context
	p     plan
	rep   *Report
	began time.Time
	logf  func(format string, args ...any)
}

// costOnly is --cost: the cost, tier and delta sections.
func (m *measurement) costOnly() error {
	rep := m.rep
	var err error
	if rep.Cost, err = benchCost(m.ctx, m.logf); err != nil {
		return fmt.Errorf("cost: %w", err)
	}
	if rep.Tier, err = benchTier(m.ctx, m.logf); err != nil {
		return err
	}
	if err := measureDelta(m.ctx, rep, m.p, m.logf); err != nil {
		return err
	}
	rep.Targets = append(costTargets(rep.Cost), deltaTargets(rep)...)
	rep.ElapsedSeconds = time.Since(m.began).Seconds()
	return nil
}

// proxyOnly is --proxy: the proxy section.
func (m *measurement) proxyOnly() error {
	rep, p := m.rep, m.p
	m.logf("proxy: a %d-token streamed request, %d reps", p.proxyTokens, p.proxyReps)
	var err error
	if rep.Proxy, err = benchProxy(m.ctx, p.proxyTokens, p.proxyReps); err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	rep.Targets = proxyTargets(rep.Proxy)
	rep.Machine.LoadEnd = loadAverage()
	rep.ElapsedSeconds = time.Since(m.began).Seconds()
	return nil
}

// all measures every section: the pipeline, the transports, the costs, and
// checks the targets.
func (m *measurement) all() error {
	if err := m.pipeline(); err != nil {
		return err
	}
	if err := m.transports(); err != nil {
		return err
	}
	rep, p := m.rep, m.p
	var err error
	if !p.noCost {
		if rep.Cost, err = benchCost(m.ctx, m.logf); err != nil {
			return fmt.Errorf("cost: %w", err)
		}
		if rep.Tier, err = benchTier(m.ctx, m.logf); err != nil {
			return err
		}
	}
	if err := measureDelta(m.ctx, rep, p, m.logf); err != nil {
		return err
	}
	rep.Targets = append(append(append(targets(rep, p), costTargets(rep.Cost)...), deltaTargets(rep)...), sharedTargets(rep.Shared)...)
	rep.Targets = append(rep.Targets, proxyTargets(rep.Proxy)...)
	rep.PeakRSS = peakRSS()
	rep.Machine.LoadEnd = loadAverage()
	rep.ElapsedSeconds = time.Since(m.began).Seconds()
	m.logf("done")
	return nil
}

// pipeline measures the engine in process: memory, projection, estimation,
// compaction, the daemon round trip and the scaling of large calls.
func (m *measurement) pipeline() error {
	ctx, rep, p := m.ctx, m.rep, m.p
	// Memory first, while the heap holds nothing else.
	m.logf("memory: %s", p.bigName)
	data, err := json.Marshal(p.bigHistory())
	if err != nil {
		return fmt.Errorf("marshalling history: %w", err)
	}
	if rep.Memory, err = benchMemory(p.bigName, data, p.big.budget()); err != nil {
		return fmt.Errorf("memory: %w", err)
	}

	for _, sz := range p.sizes {
		m.logf("projection: %s", sz.Name)
		row, err := benchProjection(ctx, sz)
		if err != nil {
			return fmt.Errorf("projection at %s: %w", sz.Name, err)
		}
		rep.Projection = append(rep.Projection, *row)
	}

	m.logf("estimation: %s", p.bigName)
	if rep.Estimation, err = benchEstimation(ctx, p.bigName, p.bigHistory(), p.estPasses); err != nil {
		return fmt.Errorf("estimation: %w", err)
	}

	big := p.bigHistory()
	for _, capacity := range p.compactCapacities {
		m.logf("compaction: %s, capacity %d", p.bigName, capacity)
		row, err := benchCompaction(ctx, p.bigName, big, capacity, p.compactReps)
		if err != nil {
			return fmt.Errorf("compaction: %w", err)
		}
		rep.Compaction = append(rep.Compaction, *row)
	}

	m.logf("daemon: %d turns on a %d-token session", p.turns, p.daemonTokens)
	hist := historytest.Synthetic(historyConfig(p.daemonTokens, 3))
	if rep.Daemon, err = benchDaemon(ctx, hist, p.daemonWindow, p.warmup, p.turns); err != nil {
		return fmt.Errorf("daemon: %w", err)
	}

	m.logf("scaling: append and prepare of large calls")
	if rep.Scaling, err = benchScaling(ctx, p.big.Tokens != size1M.Tokens, 3); err != nil {
		return fmt.Errorf("scaling: %w", err)
	}
	return nil
}

// transports measures the proxy, its cost, the shared daemon, resume and
// the fact ledger.
func (m *measurement) transports() error {
	ctx, rep, p := m.ctx, m.rep, m.p
	var err error
	m.logf("proxy: a %d-token streamed request, %d reps", p.proxyTokens, p.proxyReps)
	if rep.Proxy, err = benchProxy(ctx, p.proxyTokens, p.proxyReps); err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	m.logf("proxy cost: a scripted agent loop of %d turns, alone and through the proxy", proxyCostTurns)
	if rep.ProxyCost, err = benchProxyCost(ctx); err != nil {
		return fmt.Errorf("proxy cost: %w", err)
	}

	m.logf("shared daemon: attach and forwarder, %d-token session", p.daemonTokens)
	if rep.Shared, err = benchShared(ctx, p.daemonTokens, p.daemonWindow, p.warmup, p.turns, 5, min(p.turns, 200)); err != nil {
		return fmt.Errorf("shared daemon: %w", err)
	}

	m.logf("resume: %d chunks of %d tokens, checkpointed vs full replay", p.resumeChunks, p.resumeChunkTokens)
	if rep.Resume, err = benchResume(ctx, p.resumeChunks, p.resumeChunkTokens, p.resumeReps); err != nil {
		return fmt.Errorf("resume: %w", err)
	}

	m.logf("fact ledger")
	if rep.Ledger, err = benchLedger(ctx, p.big.Tokens != size1M.Tokens); err != nil {
		return err
	}
	return nil
}

// targets checks the performance targets of the pipeline on the big history.
func targets(rep *Report, p plan) []Target {
	var big *ProjectionRow
	for i := range rep.Projection {
		if rep.Projection[i].Size == p.big.Name {
			big = &rep.Projection[i]
		}
	}
	on := p.bigName
	var ts []Target
	add := func(name, want string, got float64, unit string, pass bool) {
		ts = append(ts, Target{Name: name, Want: want, Got: got, Unit: unit, Pass: pass, Measured: on})
	}
	if e := rep.Estimation; e != nil {
		add("estimation throughput / raw tokenizer", "≥ 0.90×", e.Ratio, "x", e.Ratio >= 0.9)
	}
	if big != nil {
		a := big.AfterAppend
		add("project after append / marshal", "≤ 0.10×", a.Ratio, "x", a.Ratio <= 0.1)
		ms := float64(a.ProjectNs) / 1e6
		add("project after append", "< 1 ms", ms, "ms", ms < 1)
		add("from scratch, estimates known / marshal", "≤ 3×", big.Scratch.Ratio, "x", big.Scratch.Ratio <= 3)
	}
	if m := rep.Memory; m != nil {
		add("history heap (HeapInuse) / JSON size", "≤ 3×", m.HistoryVsJSON, "x", m.HistoryVsJSON <= 3)
	}
	for _, s := range rep.Scaling {
		on = s.Small + " → " + s.Large
		add("append growth / size growth, "+s.Shape, "≤ 2×", s.AppendGrowth, "x", s.AppendGrowth <= 2)
		add("prepare growth / size growth, "+s.Shape, "≤ 2×", s.PrepareGrowth, "x", s.PrepareGrowth <= 2)
	}
	return ts
}
