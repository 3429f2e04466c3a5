package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vtcode/vtcode-ls/history"
)

// Machine describes where the numbers were measured.
type Machine struct {
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	CPU        string `json:"cpu"`
	NumCPU     int    `json:"numCPU"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	GoVersion  string `json:"goVersion"`
	// LoadStart and LoadEnd are the 1-minute load averages when the run
	// started and ended (-1 where unknown): other processes' CPU use skews
	// absolute times more than ratios.
	LoadStart float64 `json:"loadStart"`
	LoadEnd   float64 `json:"loadEnd"`
}

// describeMachine reads the machine description; the CPU model comes from
// /proc/cpuinfo where there is one.
func describeMachine() Machine {
	return Machine{
		GOOS:       runtime.GOOS,
		GOARCH:     runtime.GOARCH,
		CPU:        cpuModel(),
		NumCPU:     runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		GoVersion:  runtime.Version(),
		LoadStart:  loadAverage(),
		LoadEnd:    -1,
	}
}

// loadAverage returns the 1-minute load average, or -1 where unknown.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}

// String describes the machine in one line.
func (m Machine) String() string {
	s := fmt.Sprintf("%s/%s, %s, %d CPUs (GOMAXPROCS %d), %s", m.GOOS, m.GOARCH, m.CPU, m.NumCPU, m.GOMAXPROCS, m.GoVersion)
	if m.LoadStart >= 0 {
		s += fmt.Sprintf("; load average %.2f at start", m.LoadStart)
		if m.LoadEnd >= 0 {
			s += fmt.Sprintf(", %.2f at end", m.LoadEnd)
		}
	}
	return s
}

// cpuModel returns the CPU model named by /proc/cpuinfo.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(name) {
		case "model name", "Model", "cpu model", "Hardware":
			if v := strings.TrimSpace(value); v != "" {
				return v
			}
		}
	}
	return "unknown CPU"
}

// samples is a set of timings of one operation.
type samples []time.Duration

// median returns the median of s (the mean of the two middle values for an
// even count), or 0 for no samples.
func (s samples) median() time.Duration { return s.quantile(0.5) }

// p95 returns the 95th percentile of s (nearest rank).
func (s samples) p95() time.Duration {
	if len(s) == 0 {
		return 0
	}
	sorted := slices.Clone(s)
	slices.Sort(sorted)
	rank := int(math.Ceil(0.95*float64(len(sorted)))) - 1
	return sorted[max(rank, 0)]
}

// quantile returns the q-quantile of s, interpolated between neighbours.
func (s samples) quantile(q float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	sorted := slices.Clone(s)
	slices.Sort(sorted)
	pos := q * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	return sorted[lo] + time.Duration(float64(sorted[hi]-sorted[lo])*(pos-float64(lo)))
}

// timeIt returns how long f took.
func timeIt(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
}

// ratio returns a/b, or NaN when b is 0 (never shown as a pass).
func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// formatInt writes n with thousands separators: 1,048,576.
func formatInt(n int64) string { return history.FormatCount(int(n)) }
