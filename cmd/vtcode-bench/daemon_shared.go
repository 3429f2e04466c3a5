package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/vtcode/vtcode-ls/daemon"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/history/historytest"
	"github.com/vtcode/vtcode-ls/rpc"
	"github.com/vtcode/vtcode-ls/session"
)

// SharedResult measures the shared daemon (issue 22) with the real binary,
// as an editor runs it: the start of a connection (process start to the
// initialize result) attached to a running daemon and to a cold one, ÷ the
// in-process server of before; and a prepareRequest round trip through the
// forwarder ÷ the same through an in-process server.
type SharedResult struct {
	StartReps      int     `json:"startReps"`
	InProcessStart int64   `json:"inProcessStartNs"` // vtcode-ls --no-shared
	WarmAttach     int64   `json:"warmAttachNs"`     // vtcode-ls, daemon running
	ColdAttach     int64   `json:"coldAttachNs"`     // vtcode-ls, daemon started by it
	WarmRatio      float64 `json:"warmRatio"`
	ColdRatio      float64 `json:"coldRatio"`

	SessionTokens int     `json:"sessionTokens"`
	Turns         int     `json:"turns"`
	ResponseBytes int     `json:"responseBytes"`
	InProcess     Latency `json:"prepareInProcess"`
	Forwarded     Latency `json:"prepareForwarded"`
	ForwardRatio  float64 `json:"forwardRatio"` // forwarded / in process, medians

	// Fleet: Clients editors on Workspaces workspaces, each with a session
	// of FleetTokens, sending FleetPrepares prepareRequests at once: one
	// daemon process per editor (in process) against every editor on the
	// shared daemon. Throughput in prepares per second of wall time; peak
	// RSS the sum of the processes' VmHWM (the forwarders' included).
	// The CPU time of every process over the prepares is measured too: on
	// a loaded machine eight processes get more of the cores than one, so
	// prepares per CPU second is the fair measure of the work.
	Clients, Workspaces, FleetPrepares, FleetTokens int
	SeparateThroughput, SharedThroughput            float64
	SeparatePerCPU, SharedPerCPU                    float64 // prepares per CPU second
	SeparateRSS, SharedRSS                          int64
	ThroughputRatio, PerCPURatio, RSSRatio          float64 // shared / separate
}

// benchShared builds vtcode-ls, then measures with a daemon of its own (a
// private socket folder, a proxy on a free port) that it stops at the end:
// the starts, prepareRequest in process and forwarded, and the fleets.
func benchShared(ctx context.Context, tokens, window, warmup, turns, startReps, fleetPrepares int) (_ *SharedResult, err error) {
	tmp, err := os.MkdirTemp("", "vtcode-bench-shared-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	b, err := newSharedBench(ctx, tmp)
	if err != nil {
		return nil, err
	}
	defer func() {
		if serr := b.stop(); serr != nil && err == nil {
			err = fmt.Errorf("stopping the daemon: %w", serr)
		}
	}()
	res := &SharedResult{StartReps: startReps, SessionTokens: tokens, Turns: turns}
	if err := b.starts(res, startReps); err != nil {
		return nil, err
	}
	if err := b.prepares(res, tokens, window, warmup, turns); err != nil {
		return nil, err
	}
	if err := b.fleets(res, fleetPrepares, window); err != nil {
		return nil, err
	}
	return res, nil
}

// sharedBench is the built binary and the private daemon of benchShared.
type sharedBench struct {
	ctx    context.Context
	tmp    string   // the folder of everything, removed at the end
	bin    string   // the vtcode-ls built
	env    []string // the clients' environment: the daemon's folder and configuration
	socket string
}

// newSharedBench builds vtcode-ls into tmp and writes the configuration of
// its daemon there.
func newSharedBench(ctx context.Context, tmp string) (*sharedBench, error) {
	tmp, err := filepath.EvalSymlinks(tmp)
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(tmp, "vtcode-ls")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/vtcode/vtcode-ls/cmd/vtcode-ls").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building vtcode-ls: %v\n%s", err, out)
	}
	cfg := filepath.Join(tmp, "config")
	if err := os.MkdirAll(filepath.Join(cfg, "vtcode"), 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(cfg, "vtcode", "vtcode.toml"), []byte("[proxy]\nlisten = \"127.0.0.1:0\"\n"), 0o600); err != nil {
		return nil, err
	}
	sockDir := filepath.Join(tmp, "d")
	return &sharedBench{ctx: ctx, tmp: tmp, bin: bin,
		env:    append(os.Environ(), daemon.DirEnv+"="+sockDir, "XDG_CONFIG_HOME="+cfg, "VTCODE_DAEMON_IDLE=5m"),
		socket: filepath.Join(sockDir, daemon.SocketName)}, nil
}

// stop stops the daemon, if it runs.
func (b *sharedBench) stop() error {
	sctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if _, err := daemon.StopDaemon(sctx, b.socket); err != nil && !errors.Is(err, daemon.ErrNotRunning) {
		return err
	}
	return nil
}

// workspace creates the workspace folder name.
func (b *sharedBench) workspace(name string) (string, error) {
	d := filepath.Join(b.tmp, name)
	return d, os.MkdirAll(d, 0o700)
}

// starts measures the starts, interleaved: cold (no daemon), warm (the one
// it started), in process.
func (b *sharedBench) starts(res *SharedResult, reps int) error {
	var inproc, warm, cold samples
	for i := range reps {
		ws, err := b.workspace(fmt.Sprintf("start%d", i))
		if err != nil {
			return err
		}
		if err := b.stop(); err != nil {
			return err
		}
		for _, m := range []struct {
			s    *samples
			args []string
		}{{&cold, nil}, {&warm, nil}, {&inproc, []string{"--no-shared"}}} {
			p, took, err := spawnClient(b.ctx, b.bin, m.args, b.env, ws)
			if err != nil {
				return err
			}
			if err := p.end(b.ctx); err != nil {
				return err
			}
			*m.s = append(*m.s, took)
		}
	}
	res.InProcessStart, res.WarmAttach, res.ColdAttach = int64(inproc.median()), int64(warm.median()), int64(cold.median())
	res.WarmRatio, res.ColdRatio = ratio(warm.median(), inproc.median()), ratio(cold.median(), inproc.median())
	return nil
}

// prepares measures prepareRequest on a session of tokens, interleaved: in
// process and through the forwarder, each on a workspace of its own.
func (b *sharedBench) prepares(res *SharedResult, tokens, window, warmup, turns int) error {
	hist := historytest.Synthetic(historyConfig(tokens, 5))
	var clients [2]*benchClient
	for i, args := range [][]string{{"--no-shared"}, nil} { // ended below, before the fleet
		p, err := b.openClient(fmt.Sprintf("prepare%d", i), args, hist, window)
		if err != nil {
			return err
		}
		clients[i] = p
	}
	var lat [2]samples
	for turn := range warmup + turns {
		msg := history.NewText(history.User, fmt.Sprintf("Turn %d: run the failing test again and fix the next failure.", turn))
		params := session.PrepareParams{SessionID: "bench", Messages: []history.Message{msg}, SystemPrompt: "You are a coding agent working in a Go repository."}
		for i, p := range clients {
			var got []byte
			var cerr error
			d := timeIt(func() {
				var raw jsonRaw
				cerr = p.conn.Call(b.ctx, "vtcode/prepareRequest", params, &raw)
				got = raw
			})
			if cerr != nil {
				return fmt.Errorf("vtcode/prepareRequest: %w", cerr)
			}
			if turn >= warmup {
				lat[i] = append(lat[i], d)
				res.ResponseBytes = len(got)
			}
		}
	}
	res.InProcess, res.Forwarded = newLatency(lat[0]), newLatency(lat[1])
	res.ForwardRatio = ratio(lat[1].median(), lat[0].median())
	for _, c := range clients {
		if err := c.end(b.ctx); err != nil {
			return err
		}
	}
	return nil
}

// openClient starts a client (with args) on workspace name and opens the
// session "bench" holding hist.
func (b *sharedBench) openClient(name string, args []string, hist []history.Message, window int) (*benchClient, error) {
	ws, err := b.workspace(name)
	if err != nil {
		return nil, err
	}
	p, _, err := spawnClient(b.ctx, b.bin, args, b.env, ws)
	if err != nil {
		return nil, err
	}
	if err := p.conn.Call(b.ctx, "vtcode/openSession", session.OpenParams{SessionID: "bench", ContextWindow: window}, nil); err != nil {
		return nil, fmt.Errorf("vtcode/openSession: %w", err)
	}
	if err := p.conn.Call(b.ctx, "vtcode/appendMessages", session.AppendParams{SessionID: "bench", Messages: hist}, nil); err != nil {
		return nil, fmt.Errorf("vtcode/appendMessages: %w", err)
	}
	return p, nil
}

// fleets measures the fleet of editors separately and shared: two rounds,
// alternating, so that a change of the machine's load weighs on both; the
// mean throughput and the larger RSS of each.
func (b *sharedBench) fleets(res *SharedResult, prepares, window int) error {
	res.Clients, res.Workspaces, res.FleetPrepares, res.FleetTokens = 8, 4, prepares, 20_000
	fleetHist := historytest.Synthetic(historyConfig(res.FleetTokens, 7))
	const rounds = 2
	for round := range 2 * rounds {
		shared := round%2 == 1
		if err := b.stop(); err != nil {
			return err
		}
		f, err := benchFleet(b.ctx, b.bin, b.env, b.tmp, round, shared, res.Clients, res.Workspaces, prepares, window, fleetHist, b.socket)
		if err != nil {
			return fmt.Errorf("fleet (shared %v): %w", shared, err)
		}
		if shared {
			res.SharedThroughput, res.SharedPerCPU, res.SharedRSS = res.SharedThroughput+f.tput/rounds, res.SharedPerCPU+f.perCPU/rounds, max(res.SharedRSS, f.rss)
		} else {
			res.SeparateThroughput, res.SeparatePerCPU, res.SeparateRSS = res.SeparateThroughput+f.tput/rounds, res.SeparatePerCPU+f.perCPU/rounds, max(res.SeparateRSS, f.rss)
		}
	}
	if res.SeparateThroughput > 0 && res.SeparateRSS > 0 {
		res.ThroughputRatio = res.SharedThroughput / res.SeparateThroughput
		res.RSSRatio = float64(res.SharedRSS) / float64(res.SeparateRSS)
	}
	if res.SeparatePerCPU > 0 {
		res.PerCPURatio = res.SharedPerCPU / res.SeparatePerCPU
	}
	return nil
}

// fleet is one run of benchFleet.
type fleet struct {
	tput, perCPU float64
	rss          int64
}

// benchFleet runs n editors on ws workspaces (editor i on workspace i%ws,
// its own session), each sending prepares prepareRequests, all at once.
func benchFleet(ctx context.Context, bin string, env []string, tmp string, round int, shared bool, n, ws, prepares, window int, hist []history.Message, socket string) (fleet, error) {
	var no fleet
	var args []string
	if !shared {
		args = []string{"--no-shared"}
	}
	clients := make([]*benchClient, n)
	for i := range clients {
		dir := filepath.Join(tmp, fmt.Sprintf("fleet%d-%d", round, i%ws))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return no, err
		}
		c, _, err := spawnClient(ctx, bin, args, env, dir)
		if err != nil {
			return no, err
		}
		defer c.end(ctx)
		id := fmt.Sprintf("fleet%d", i)
		if err := c.conn.Call(ctx, "vtcode/openSession", session.OpenParams{SessionID: id, ContextWindow: window}, nil); err != nil {
			return no, fmt.Errorf("vtcode/openSession: %w", err)
		}
		if err := c.conn.Call(ctx, "vtcode/appendMessages", session.AppendParams{SessionID: id, Messages: hist}, nil); err != nil {
			return no, fmt.Errorf("vtcode/appendMessages: %w", err)
		}
		clients[i] = c
	}
	pids := make([]int, 0, n+1)
	for _, c := range clients {
		pids = append(pids, c.cmd.Process.Pid)
	}
	if shared {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		st, err := daemon.GetStatus(sctx, socket)
		cancel()
		if err != nil {
			return no, err
		}
		pids = append(pids, st.PID)
	}
	cpuBefore := cpuOf(pids)
	errs := make(chan error, n)
	began := time.Now()
	for i, c := range clients {
		go func() {
			id := fmt.Sprintf("fleet%d", i)
			for turn := range prepares {
				msg := history.NewText(history.User, fmt.Sprintf("Editor %d, turn %d: next failure.", i, turn))
				var raw jsonRaw
				if err := c.conn.Call(ctx, "vtcode/prepareRequest", session.PrepareParams{SessionID: id, Messages: []history.Message{msg}}, &raw); err != nil {
					errs <- fmt.Errorf("vtcode/prepareRequest: %w", err)
					return
				}
			}
			errs <- nil
		}()
	}
	for range clients {
		if err := <-errs; err != nil {
			return no, err
		}
	}
	took := time.Since(began)
	cpu := cpuOf(pids) - cpuBefore
	var rss int64
	for _, pid := range pids {
		rss += peakRSSOf(strconv.Itoa(pid))
	}
	f := fleet{tput: float64(n*prepares) / took.Seconds(), rss: rss}
	if cpu > 0 {
		f.perCPU = float64(n*prepares) / cpu.Seconds()
	}
	return f, nil
}

// cpuOf is the CPU time (user and system) the processes have used, from
// /proc/<pid>/stat (0 where unknown).
func cpuOf(pids []int) time.Duration {
	var ticks int64
	for _, pid := range pids {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return 0
		}
		// The fields after the command name (which may hold spaces):
		// state is field 3, utime 14, stime 15.
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			return 0
		}
		f := strings.Fields(string(data[i+1:]))
		if len(f) < 13 {
			return 0
		}
		u, err1 := strconv.ParseInt(f[11], 10, 64)
		st, err2 := strconv.ParseInt(f[12], 10, 64)
		if err1 != nil || err2 != nil {
			return 0
		}
		ticks += u + st
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ
}

// jsonRaw keeps a result's bytes.
type jsonRaw []byte

func (r *jsonRaw) UnmarshalJSON(b []byte) error { *r = append((*r)[:0], b...); return nil }

// benchClient is an editor's connection to a vtcode-ls process.
type benchClient struct {
	cmd  *exec.Cmd
	conn *jsonrpc2.Conn
}

type stdio struct {
	io.Reader
	io.WriteCloser
}

// spawnClient starts vtcode-ls with args on workspace ws and initializes;
// took is from the process start to the initialize result.
func spawnClient(ctx context.Context, bin string, args, env []string, ws string) (*benchClient, time.Duration, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Dir = env, ws
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, 0, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, 0, err
	}
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	conn := jsonrpc2.NewConn(ctx, jsonrpc2.NewBufferedStream(stdio{out, in}, jsonrpc2.VSCodeObjectCodec{}), discard)
	root := "file://" + ws
	if err := conn.Call(ctx, "initialize", rpc.InitializeParams{RootURI: &root}, nil); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, 0, fmt.Errorf("initialize (%s %v): %w", bin, args, err)
	}
	took := time.Since(began)
	return &benchClient{cmd: cmd, conn: conn}, took, conn.Notify(ctx, "initialized", struct{}{})
}

// end shuts the connection down and waits for the process.
func (c *benchClient) end(ctx context.Context) error {
	err := c.conn.Call(ctx, "shutdown", nil, nil)
	if err == nil {
		err = c.conn.Notify(ctx, "exit", nil)
	}
	if err == nil {
		// The process ends its output as it exits: the connection sees
		// the end before Wait closes the pipe under it.
		select {
		case <-c.conn.DisconnectNotify():
		case <-time.After(30 * time.Second):
			err = errors.New("vtcode-ls did not exit")
			_ = c.cmd.Process.Kill()
		}
	}
	werr := c.cmd.Wait()
	c.conn.Close()
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if werr != nil {
		return fmt.Errorf("vtcode-ls after exit: %w", werr)
	}
	return nil
}

// writeShared prints the section of the shared daemon.
func writeShared(w io.Writer, x *SharedResult) error {
	fmt.Fprintf(w, "9. Shared daemon: the real binary, an editor's connection over stdio\n")
	t := newTable(w)
	t.row("measure", "in process (--no-shared)", "attached", "ratio")
	t.row("start to initialize result, daemon running", fmtNs(x.InProcessStart), fmtNs(x.WarmAttach), fmtRatio(x.WarmRatio))
	t.row("start to initialize result, cold daemon", fmtNs(x.InProcessStart), fmtNs(x.ColdAttach), fmtRatio(x.ColdRatio))
	t.row(fmt.Sprintf("prepareRequest, %s-token session (%s back)", formatInt(int64(x.SessionTokens)), fmtBytes(int64(x.ResponseBytes))),
		fmtNs(x.InProcess.MedianNs), fmtNs(x.Forwarded.MedianNs), fmtRatio(x.ForwardRatio))
	t.row(fmt.Sprintf("%d editors × %d workspaces × %d prepares (%s tokens each): prepares/s", x.Clients, x.Workspaces, x.FleetPrepares, formatInt(int64(x.FleetTokens))),
		fmt.Sprintf("%.0f", x.SeparateThroughput), fmt.Sprintf("%.0f", x.SharedThroughput), fmtRatio(x.ThroughputRatio))
	t.row("  prepares per CPU second, every process", fmt.Sprintf("%.0f", x.SeparatePerCPU), fmt.Sprintf("%.0f", x.SharedPerCPU), fmtRatio(x.PerCPURatio))
	t.row("  peak RSS, every process", mib(x.SeparateRSS), mib(x.SharedRSS), fmtRatio(x.RSSRatio))
	err := t.flush()
	fmt.Fprintf(w, "   medians: starts of %d interleaved reps, %d interleaved prepares; the fleet: %d daemons in process vs one shared daemon and %d forwarders\n\n",
		x.StartReps, x.Turns, x.Clients, x.Clients)
	return err
}

// sharedTargets checks the forwarder's overhead target of issue 22.
func sharedTargets(x *SharedResult) []Target {
	if x == nil {
		return nil
	}
	on := formatInt(int64(x.SessionTokens)) + " tokens"
	return []Target{{Name: "prepareRequest through the forwarder / in process", Want: "≤ 1.05×", Got: x.ForwardRatio, Unit: "x",
		Pass: x.ForwardRatio <= 1.05, Measured: on}}
}
