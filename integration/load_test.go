//go:build linux

package integration_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// loadScale returns VTCODE_LOAD_SCALE, the fraction of the 200 requests
// per session to run (the 50 sessions always run). The default is 1 (50 ×
// 200); under -short it is 0.2, and with the race detector 0.25 (-race makes
// both the daemon and this client's JSON decoding 5–7× slower, and the cost
// grows with the square of the requests per session), unless the variable
// is set.
func loadScale() float64 {
	if v, err := strconv.ParseFloat(os.Getenv("VTCODE_LOAD_SCALE"), 64); err == nil && v > 0 {
		return v
	}
	scale := 1.0
	if raceEnabled {
		scale = 0.25
	}
	if testing.Short() {
		scale *= 0.2
	}
	return scale
}

// loadPolicy makes clearing engage on small histories and keeps automatic
// compaction off, so a projection depends on the history alone and a
// sequential replay must reproduce every stat. Clearing is the seed's
// (clearAtLeastTokens 0, cacheAware off): the cache-aware schedule depends
// on when requests were made, by design, and the shortcut replay (one
// append, one request) makes them at other points.
var loadPolicy = map[string]any{
	"autoCompaction":     map[string]any{"enabled": false},
	"toolResultClearing": map[string]any{"triggerTokens": 3000, "clearAtLeastTokens": 0, "cacheAware": false},
}

// loadWindow is the number of requests each session keeps in flight.
const loadWindow = 4

// loadSession is the script of one session: its requests, in order.
type loadSession struct {
	id   string
	reqs [][]message
}

// loadScript returns n sessions of r requests each: every request appends
// new messages (a user message, an assistant reply, or a tool batch with
// its results).
func loadScript(prefix string, n, r int, seed uint64) []*loadSession {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([]*loadSession, n)
	for s := range out {
		ls := &loadSession{id: fmt.Sprintf("%s%d", prefix, s)}
		for j := 0; j < r; j++ {
			id := func(k int) string { return fmt.Sprintf("%s.%d.%d", ls.id, j, k) }
			var msgs []message
			switch x := rng.IntN(10); {
			case x < 4:
				msgs = []message{{ID: id(0), Role: "user", Content: text(words(rng.Uint64(), 3+rng.IntN(8)))}}
			case x < 6:
				msgs = []message{{ID: id(0), Role: "assistant", Content: text(words(rng.Uint64(), 3+rng.IntN(8)))}}
			default:
				a := message{ID: id(0), Role: "assistant"}
				calls := 1 + rng.IntN(2)
				for k := 0; k < calls; k++ {
					a.ToolCalls = append(a.ToolCalls, toolCall{ID: fmt.Sprintf("call_%d", k), Name: "read_file",
						Arguments: fmt.Sprintf(`{"path":"pkg/f%d.go"}`, rng.IntN(100))})
				}
				msgs = append(msgs, a)
				for k := 0; k < calls; k++ {
					msgs = append(msgs, message{ID: id(k + 1), Role: "tool", ToolCallID: fmt.Sprintf("call_%d", k), ToolName: "read_file",
						Content: text(words(rng.Uint64(), 30+rng.IntN(60)))})
				}
			}
			ls.reqs = append(ls.reqs, msgs)
		}
		out[s] = ls
	}
	return out
}

// loadStats are the stats the test compares with a sequential replay.
type loadStats struct {
	Messages, OriginalTokens, ProjectedTokens, ClearedResults, ProtectedResults int
}

func statsOf(s stats) loadStats {
	return loadStats{s.Messages, s.OriginalTokens, s.ProjectedTokens, s.ClearedResults, s.ProtectedResults}
}

// loadResult is what one connection's run measured.
type loadResult struct {
	requests  int
	elapsed   time.Duration
	latencies []time.Duration
	last      map[string]loadStats   // per session: the stats of its last reply
	each      map[string][]loadStats // per session: the stats of every reply
	hwm       int64
	cpu       time.Duration // the daemons' CPU time
	client    time.Duration // this process's CPU time
}

const loadSystem = "You are a coding agent. Answer briefly."

var loadTools = []json.RawMessage{json.RawMessage(`{"name":"read_file","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}`)}

// driveLoad opens the sessions on d and runs their requests pipelined
// (loadWindow in flight per session, every session at once) over d's one
// connection.
//
// It may run on a goroutine other than the test's, so it reports failures
// as its error.
func driveLoad(d *daemon, sessions []*loadSession) (*loadResult, error) {
	for _, ls := range sessions {
		var o openResult
		if err := d.call(context.Background(), "vtcode/openSession", map[string]any{"sessionId": ls.id, "contextWindow": 32000}, &o); err != nil {
			return nil, fmt.Errorf("openSession %s: %w", ls.id, err)
		}
	}
	res := &loadResult{last: map[string]loadStats{}, each: map[string][]loadStats{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, len(sessions))
	start := time.Now()
	for _, ls := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			queue := make(chan *pending, loadWindow)
			failed := make(chan error, 1)
			go func() { // the dispatcher: in order, at most loadWindow ahead
				defer close(queue)
				for _, msgs := range ls.reqs {
					p, err := d.dispatch("vtcode/prepareRequest", map[string]any{
						"sessionId": ls.id, "messages": msgs, "systemPrompt": loadSystem, "tools": loadTools,
					})
					if err != nil {
						failed <- err
						return
					}
					queue <- p
				}
			}()
			var lat []time.Duration
			var each []loadStats
			for p := range queue {
				ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
				var r struct {
					Stats stats `json:"stats"`
				}
				err := p.wait(ctx, &r)
				cancel()
				if err != nil {
					errs <- fmt.Errorf("session %s request #%d: %w", ls.id, p.id, err)
					// Drain so the dispatcher ends.
					for range queue {
					}
					return
				}
				lat = append(lat, time.Since(p.sent))
				each = append(each, statsOf(r.Stats))
			}
			select {
			case err := <-failed:
				errs <- err
				return
			default:
			}
			mu.Lock()
			res.latencies = append(res.latencies, lat...)
			res.each[ls.id] = each
			if len(each) > 0 {
				res.last[ls.id] = each[len(each)-1]
			}
			res.requests += len(each)
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	close(errs)
	for err := range errs {
		return nil, fmt.Errorf("%w\nstderr tail:\n%s", err, tail(d.stderrText(), 3000))
	}
	hwm, err := d.vmHWM()
	if err != nil {
		return nil, err
	}
	res.hwm = hwm
	if res.cpu, err = d.cpuTime(); err != nil {
		return nil, err
	}
	return res, checkOrder(d, sessions)
}

// checkOrder fails unless each session's live history holds exactly the
// messages of its requests, in order.
func checkOrder(d *daemon, sessions []*loadSession) error {
	for _, ls := range sessions {
		var h historyResult
		if err := d.call(context.Background(), "vtcode/history", map[string]any{"sessionId": ls.id}, &h); err != nil {
			return fmt.Errorf("history %s: %w", ls.id, err)
		}
		var want []string
		for _, msgs := range ls.reqs {
			for _, m := range msgs {
				want = append(want, m.ID)
			}
		}
		got := make([]string, len(h.Messages))
		for i, m := range h.Messages {
			got[i] = m.ID
		}
		if !slices.Equal(got, want) {
			i := 0
			for i < len(got) && i < len(want) && got[i] == want[i] {
				i++
			}
			return fmt.Errorf("session %s: history has %d messages, want %d (lost or reordered appends); first difference at %d: got %v want %v",
				ls.id, len(got), len(want), i, got[i:min(len(got), i+3)], want[i:min(len(want), i+3)])
		}
	}
	return nil
}

// replaySequential replays the sessions one request at a time on a fresh
// daemon: full is the number of sessions replayed request by request; the
// others are replayed as one append of all their messages and one prepare.
// It returns the final stats of each session, and the per-request stats of
// the first full sessions.
func replaySequential(t *testing.T, sessions []*loadSession, full int) (map[string]loadStats, map[string][]loadStats, []time.Duration) {
	t.Helper()
	d := startDaemon(t, daemonOptions{Workspace: newWorkspace(t, ""), InitOptions: loadPolicy})
	last := map[string]loadStats{}
	each := map[string][]loadStats{}
	var lat []time.Duration
	for i, ls := range sessions {
		var o openResult
		d.must("vtcode/openSession", map[string]any{"sessionId": ls.id, "contextWindow": 32000}, &o)
		if i < full {
			for _, msgs := range ls.reqs {
				var r struct {
					Stats stats `json:"stats"`
				}
				start := time.Now()
				d.must("vtcode/prepareRequest", map[string]any{"sessionId": ls.id, "messages": msgs, "systemPrompt": loadSystem, "tools": loadTools}, &r)
				lat = append(lat, time.Since(start))
				each[ls.id] = append(each[ls.id], statsOf(r.Stats))
			}
			last[ls.id] = each[ls.id][len(each[ls.id])-1]
			continue
		}
		var all []message
		for _, msgs := range ls.reqs {
			all = append(all, msgs...)
		}
		var ar appendResult
		d.must("vtcode/appendMessages", map[string]any{"sessionId": ls.id, "messages": all}, &ar)
		var r struct {
			Stats stats `json:"stats"`
		}
		d.must("vtcode/prepareRequest", map[string]any{"sessionId": ls.id, "systemPrompt": loadSystem, "tools": loadTools}, &r)
		last[ls.id] = statsOf(r.Stats)
	}
	d.shutdown()
	return last, each, lat
}

// TestLoad runs 50 sessions × 200 prepareRequest calls (each appending new
// messages, a third of them tool batches), pipelined over one connection,
// then the same number of sessions spread over 4 concurrent daemons with
// their own stores. It checks that no append is lost or reordered (the
// history of each session is exactly its messages in order), that the stats
// equal a sequential replay on a fresh daemon, and that peak memory stays
// bounded. VTCODE_LOAD_SCALE scales both dimensions (-short: 0.2).
func TestLoad(t *testing.T) {
	scale := loadScale()
	nSess, nReq := 50, max(10, int(math.Round(200*scale)))
	// The race detector costs 5–10× memory; the bound is generous either way.
	bound := int64(512 << 20)
	if raceEnabled {
		bound = 2 << 30
	}
	t.Logf("load: %d sessions × %d requests (scale %g, race %v)", nSess, nReq, scale, raceEnabled)

	// One connection.
	sessions := loadScript("s", nSess, nReq, 1)
	d := startDaemon(t, daemonOptions{Workspace: newWorkspace(t, ""), InitOptions: loadPolicy})
	cpu0 := selfCPU()
	one, err := driveLoad(d, sessions)
	if err != nil {
		t.Fatal(err)
	}
	one.client = selfCPU() - cpu0
	d.shutdown()
	report(t, "one connection", one)
	if one.hwm > bound {
		t.Errorf("one connection: VmHWM %d MiB over the bound %d MiB", one.hwm>>20, bound>>20)
	}

	// The sequential replay: every session's final stats, and every reply of
	// a few sessions.
	full := min(3, nSess)
	last, each, seqLat := replaySequential(t, sessions, full)
	report(t, "sequential (one request at a time)", &loadResult{requests: len(seqLat), latencies: seqLat, elapsed: sum(seqLat)})
	for _, ls := range sessions {
		if got, want := one.last[ls.id], last[ls.id]; got != want {
			t.Errorf("session %s: stats after the pipelined run %+v, sequential replay %+v", ls.id, got, want)
		}
	}
	for id, want := range each {
		if got := one.each[id]; !slices.Equal(got, want) {
			for i := range want {
				if i >= len(got) || got[i] != want[i] {
					t.Errorf("session %s request %d: pipelined stats %+v, sequential %+v", id, i, got[min(i, len(got)-1)], want[i])
					break
				}
			}
		}
	}
	var cleared int
	for _, s := range last {
		cleared += s.ClearedResults
	}
	if cleared == 0 {
		t.Errorf("no tool result was cleared: the load does not exercise clearing")
	}

	// Several daemons, each with its own store, at once.
	const procs = 4
	var wg sync.WaitGroup
	results := make([]*loadResult, procs)
	errs := make([]error, procs)
	scripts := make([][]*loadSession, procs)
	start, cpu0 := time.Now(), selfCPU()
	for p := 0; p < procs; p++ {
		per := (nSess + procs - 1) / procs
		scripts[p] = loadScript(fmt.Sprintf("p%d-", p), per, nReq, uint64(10+p))
		dp := startDaemon(t, daemonOptions{Workspace: newWorkspace(t, ""), InitOptions: loadPolicy})
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[p], errs[p] = driveLoad(dp, scripts[p])
		}()
		t.Cleanup(dp.kill)
		defer dp.shutdown()
	}
	wg.Wait()
	for p, err := range errs {
		if err != nil {
			t.Fatalf("daemon %d: %v", p, err)
		}
	}
	total := &loadResult{elapsed: time.Since(start), client: selfCPU() - cpu0}
	for p, r := range results {
		total.requests += r.requests
		total.latencies = append(total.latencies, r.latencies...)
		total.hwm = max(total.hwm, r.hwm)
		total.cpu += r.cpu
		if r.hwm > bound {
			t.Errorf("daemon %d: VmHWM %d MiB over the bound %d MiB", p, r.hwm>>20, bound>>20)
		}
	}
	report(t, fmt.Sprintf("%d daemons", procs), total)
	// Spot-check one session per daemon against a sequential replay.
	for p := range scripts {
		ls := scripts[p][0]
		last, _, _ := replaySequential(t, []*loadSession{ls}, 0)
		if got, want := results[p].last[ls.id], last[ls.id]; got != want {
			t.Errorf("daemon %d session %s: stats %+v, sequential replay %+v", p, ls.id, got, want)
		}
	}
}

// report logs throughput, latency percentiles, CPU and peak memory.
func report(t *testing.T, name string, r *loadResult) {
	t.Helper()
	lat := slices.Clone(r.latencies)
	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(float64(len(lat))*p))].Round(10 * time.Microsecond)
	}
	line := fmt.Sprintf("load %s: %d prepareRequest in %s = %.0f req/s; latency p50 %s p95 %s p99 %s max %s",
		name, r.requests, r.elapsed.Round(time.Millisecond), float64(r.requests)/r.elapsed.Seconds(),
		pct(0.50), pct(0.95), pct(0.99), pct(1))
	if r.hwm > 0 {
		line += fmt.Sprintf(" (pipelined, up to %d in flight per session); CPU daemon %s, client %s; peak VmHWM %.1f MiB",
			loadWindow, r.cpu.Round(10*time.Millisecond), r.client.Round(10*time.Millisecond), float64(r.hwm)/(1<<20))
	}
	t.Log(line)
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func sum(ds []time.Duration) time.Duration {
	var total time.Duration
	for _, d := range ds {
		total += d
	}
	return total
}
