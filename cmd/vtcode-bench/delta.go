package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sourcegraph/jsonrpc2"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/history/historytest"
	"github.com/vtcode/vtcode-ls/rpc"
	"github.com/vtcode/vtcode-ls/session"
)

// DeltaResult compares, on a session whose projection prefix does not change
// between turns, the vtcode/prepareRequest round trip of a client that
// applies projection deltas with one that receives the whole projection.
type DeltaResult struct {
	SessionTokens int     `json:"sessionTokens"`
	Turns         int     `json:"turns"`
	FullBytes     int     `json:"fullBytes"`  // result of the last full turn
	DeltaBytes    int     `json:"deltaBytes"` // result of the last delta turn
	Full          Latency `json:"full"`
	Delta         Latency `json:"delta"`
	Ratio         float64 `json:"ratio"` // delta / full, medians
}

// TurnsResult is the per-turn time over a long session with one tool batch
// per turn: the median turn of its last tenth, and that of the first tenth
// of a new session played turn by turn alongside it (see benchTurns).
type TurnsResult struct {
	Turns       int     `json:"turns"`
	FirstNs     int64   `json:"firstNs"`
	LastNs      int64   `json:"lastNs"`
	Growth      float64 `json:"growth"` // last / first
	Compactions int     `json:"compactions"`
	Messages    int     `json:"messages"` // live history at the end
	// Pressure and ProjectedTokens are the last request's.
	Pressure        float64 `json:"pressure"`
	ProjectedTokens int     `json:"projectedTokens"`
}

// daemonConn is an initialized in-process daemon on a net.Pipe, with a
// workspace; delta says whether the client asked for projection deltas.
type daemonConn struct {
	conn   *jsonrpc2.Conn
	dir    string
	served chan error
	cancel context.CancelFunc
}

func startDaemon(ctx context.Context, delta bool) (*daemonConn, error) {
	dir, err := os.MkdirTemp("", "vtcode-bench-delta-")
	if err != nil {
		return nil, err
	}
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	srvEnd, cliEnd := net.Pipe()
	d := &daemonConn{dir: dir, served: make(chan error, 1), cancel: cancel}
	go func() {
		d.served <- rpc.Serve(ctx, srvEnd, srvEnd, rpc.Options{Version: "bench", Session: session.Options{NoWatch: true}})
	}()
	d.conn = client(ctx, cliEnd)
	root := "file://" + dir
	params := map[string]any{"rootUri": root, "capabilities": map[string]any{}}
	if delta {
		params["capabilities"] = map[string]any{"experimental": map[string]any{"vtcode": map[string]any{"projectionDelta": true}}}
	}
	if err := d.conn.Call(ctx, "initialize", params, nil); err != nil {
		d.close(ctx)
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if err := d.conn.Notify(ctx, "initialized", struct{}{}); err != nil {
		d.close(ctx)
		return nil, err
	}
	return d, nil
}

func (d *daemonConn) close(ctx context.Context) error {
	err := d.conn.Call(ctx, "shutdown", nil, nil)
	if err == nil {
		err = d.conn.Notify(ctx, "exit", nil)
	}
	if err == nil {
		select {
		case err = <-d.served:
		case <-time.After(30 * time.Second):
			err = errors.New("daemon did not exit")
		}
	}
	d.conn.Close()
	d.cancel()
	os.RemoveAll(d.dir)
	return err
}

// deltaPrepare are prepareRequest's params with the delta client's base.
type deltaPrepare struct {
	session.PrepareParams
	BaseRevision string `json:"baseRevision,omitempty"`
}

// deltaReply is the part of a delta client's result the bench reads.
type deltaReply struct {
	Revision string `json:"revision"`
	Delta    *struct {
		Keep     int               `json:"keep"`
		Messages []history.Message `json:"messages"`
	} `json:"delta"`
	Messages []history.Message `json:"messages"`
}

// benchDelta measures both clients on a session of hist at window.
func benchDelta(ctx context.Context, hist []history.Message, window, warmup, turns int) (*DeltaResult, error) {
	res := &DeltaResult{Turns: turns}
	var lat [2]samples
	for k, delta := range []bool{false, true} {
		d, err := startDaemon(ctx, delta)
		if err != nil {
			return nil, err
		}
		var open session.OpenResult
		if err := d.conn.Call(ctx, "vtcode/openSession", session.OpenParams{SessionID: "bench", ContextWindow: window}, &open); err != nil {
			d.close(ctx)
			return nil, err
		}
		var app session.AppendResult
		if err := d.conn.Call(ctx, "vtcode/appendMessages", session.AppendParams{SessionID: open.SessionID, Messages: hist}, &app); err != nil {
			d.close(ctx)
			return nil, err
		}
		res.SessionTokens = app.HistoryTokens
		base := ""
		var proj []history.Message // the delta client's projection
		for i := range warmup + turns {
			msg := history.NewText(history.User, fmt.Sprintf("Turn %d: run the failing test again.", i))
			p := deltaPrepare{PrepareParams: session.PrepareParams{SessionID: open.SessionID, Messages: []history.Message{msg},
				SystemPrompt: "You are a coding agent working in a Go repository."}, BaseRevision: base}
			var got json.RawMessage
			var cerr error
			dur := timeIt(func() {
				cerr = d.conn.Call(ctx, "vtcode/prepareRequest", p, &got)
				if cerr != nil || !delta {
					return
				}
				// The client applies the delta: part of its round trip.
				var r deltaReply
				if cerr = json.Unmarshal(got, &r); cerr != nil {
					return
				}
				if r.Delta != nil {
					if r.Delta.Keep > len(proj) {
						cerr = fmt.Errorf("delta keeps %d of %d messages", r.Delta.Keep, len(proj))
						return
					}
					proj = append(proj[:r.Delta.Keep:r.Delta.Keep], r.Delta.Messages...)
				} else {
					proj = r.Messages
				}
				base = r.Revision
			})
			if cerr != nil {
				d.close(ctx)
				return nil, fmt.Errorf("prepareRequest: %w", cerr)
			}
			if i >= warmup {
				lat[k] = append(lat[k], dur)
			}
			if delta {
				res.DeltaBytes = len(got)
			} else {
				res.FullBytes = len(got)
				if i >= warmup && !strings.Contains(string(got), `"messages":[`) {
					d.close(ctx)
					return nil, errors.New("full client got no projection")
				}
			}
		}
		if err := d.close(ctx); err != nil {
			return nil, err
		}
	}
	res.Full, res.Delta = newLatency(lat[0]), newLatency(lat[1])
	res.Ratio = ratio(lat[1].median(), lat[0].median())
	return res, nil
}

// turnPlayer plays one session of the long-session section: turn i
// prepares a request with the results of the previous turn's tool batch and
// records an assistant message with one new batch (two calls).
type turnPlayer struct {
	d       *daemonConn
	id      string
	bodies  []string
	turn    int
	base    string
	pending []history.Message
}

func newTurnPlayer(ctx context.Context, d *daemonConn, id string, window int, bodies []string) (*turnPlayer, error) {
	var open session.OpenResult
	if err := d.conn.Call(ctx, "vtcode/openSession", session.OpenParams{SessionID: id, ContextWindow: window}, &open); err != nil {
		return nil, err
	}
	return &turnPlayer{d: d, id: open.SessionID, bodies: bodies,
		pending: []history.Message{history.NewText(history.User, "Fix the failing tests in internal/parse.")}}, nil
}

// step plays one turn and returns its round-trip time.
func (tp *turnPlayer) step(ctx context.Context) (time.Duration, error) {
	i := tp.turn
	tp.turn++
	a := history.Message{Role: history.Assistant, Content: history.Text(fmt.Sprintf("Step %d.", i)), ToolCalls: []history.ToolCall{
		{ID: fmt.Sprintf("r%d", i), Name: "read_file", Arguments: fmt.Sprintf(`{"path":"internal/parse/f%d.go"}`, i)},
		{ID: fmt.Sprintf("g%d", i), Name: "grep", Arguments: fmt.Sprintf(`{"pattern":"func F%d"}`, i)},
	}}
	var cerr error
	dur := timeIt(func() {
		p := deltaPrepare{PrepareParams: session.PrepareParams{SessionID: tp.id, Messages: tp.pending}, BaseRevision: tp.base}
		var raw json.RawMessage
		if cerr = tp.d.conn.Call(ctx, "vtcode/prepareRequest", p, &raw); cerr != nil {
			return
		}
		var r deltaReply
		if cerr = json.Unmarshal(raw, &r); cerr != nil {
			return
		}
		tp.base = r.Revision
		cerr = tp.d.conn.Call(ctx, "vtcode/recordResponse", session.RecordParams{SessionID: tp.id, Message: a}, nil)
	})
	if cerr != nil {
		return 0, fmt.Errorf("session %s turn %d: %w", tp.id, i, cerr)
	}
	tp.pending = []history.Message{
		history.NewToolResult(a.ToolCalls[0].ID, "read_file", tp.bodies[(2*i)%len(tp.bodies)]),
		history.NewToolResult(a.ToolCalls[1].ID, "grep", tp.bodies[(2*i+1)%len(tp.bodies)]),
	}
	return dur, nil
}

// benchTurns plays a long session of turns turns, one tool batch each. Its
// last tenth is interleaved turn by turn with the first tenth of a new
// session in the same daemon, so that both are timed under the same load
// (on a shared machine the load changes over a run): the growth is the
// median turn of the old session over the median turn of the young one.
func benchTurns(ctx context.Context, turns, window int) (*TurnsResult, error) {
	d, err := startDaemon(ctx, true)
	if err != nil {
		return nil, err
	}
	defer d.close(ctx)
	texts := historytest.Synthetic(historyConfig(20_000, 9))
	var bodies []string
	for _, m := range texts {
		if m.Role == history.Tool && m.Content.IsString() {
			bodies = append(bodies, m.Content.Text())
		}
	}
	if len(bodies) == 0 {
		return nil, errors.New("no tool results in the synthetic history")
	}
	old, err := newTurnPlayer(ctx, d, "turns-old", window, bodies)
	if err != nil {
		return nil, err
	}
	tenth := max(turns/10, 1)
	for range turns - tenth {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if _, err := old.step(ctx); err != nil {
			return nil, err
		}
	}
	young, err := newTurnPlayer(ctx, d, "turns-young", window, bodies)
	if err != nil {
		return nil, err
	}
	var first, last samples
	for range tenth {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		dy, err := young.step(ctx)
		if err != nil {
			return nil, err
		}
		do, err := old.step(ctx)
		if err != nil {
			return nil, err
		}
		first, last = append(first, dy), append(last, do)
	}
	var st session.Stats
	if err := d.conn.Call(ctx, "vtcode/projectionStats", map[string]string{"sessionId": old.id}, &st); err != nil {
		return nil, err
	}
	res := &TurnsResult{Turns: turns, Compactions: st.Compactions, Messages: st.Messages,
		Pressure: st.Pressure, ProjectedTokens: st.ProjectedTokens}
	res.FirstNs, res.LastNs = int64(first.median()), int64(last.median())
	res.Growth = ratio(last.median(), first.median())
	return res, nil
}

// measureDelta runs the delta and long-session sections.
func measureDelta(ctx context.Context, rep *Report, p plan, logf func(string, ...any)) error {
	big := p.bigHistory()
	logf("delta: %s session, unchanged prefix", p.bigName)
	var err error
	if rep.Delta, err = benchDelta(ctx, big, 2_000_000, p.warmup, p.turns/4); err != nil {
		return fmt.Errorf("delta: %w", err)
	}
	logf("long session: %d turns, one batch each", p.longTurns)
	if rep.LongTurns, err = benchTurns(ctx, p.longTurns, costWindow); err != nil {
		return fmt.Errorf("long session: %w", err)
	}
	return nil
}

// deltaTargets are the round-trip and per-turn targets of projection deltas.
func deltaTargets(rep *Report) []Target {
	var ts []Target
	if d := rep.Delta; d != nil {
		ts = append(ts, Target{Name: "prepareRequest round trip, delta / whole projection", Want: "≤ 0.05×", Got: d.Ratio, Unit: "x",
			Pass: d.Ratio <= 0.05, Measured: fmt.Sprintf("%s-token session, unchanged prefix", formatInt(int64(d.SessionTokens)))})
	}
	if l := rep.LongTurns; l != nil {
		ts = append(ts, Target{Name: "per-turn time, last tenth / first tenth", Want: "≤ 1.25× (flat)", Got: l.Growth, Unit: "x",
			Pass: l.Growth <= 1.25, Measured: fmt.Sprintf("%d turns, one batch each", l.Turns)})
	}
	return ts
}

// writeDeltaTable prints the delta and long-session sections.
func writeDeltaTable(w io.Writer, rep *Report) error {
	if d := rep.Delta; d != nil {
		fmt.Fprintf(w, "7. Projection deltas: prepareRequest round trip on a %s-token session whose prefix does not change\n", formatInt(int64(d.SessionTokens)))
		t := newTable(w)
		t.row("client", "median", "p95", "result")
		t.row("whole projection", fmtNs(d.Full.MedianNs), fmtNs(d.Full.P95Ns), fmtBytes(int64(d.FullBytes)))
		t.row("delta (applied by the client)", fmtNs(d.Delta.MedianNs), fmtNs(d.Delta.P95Ns), fmtBytes(int64(d.DeltaBytes)))
		t.row("ratio delta / whole", fmtRatio(d.Ratio), "", "")
		if err := t.flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	if l := rep.LongTurns; l != nil {
		fmt.Fprintf(w, "8. Long session: %d turns of prepareRequest + recordResponse, one tool batch each, %s window (%d compactions, %d messages at the end)\n",
			l.Turns, formatInt(costWindow), l.Compactions, l.Messages)
		t := newTable(w)
		t.row("turns", "median per turn")
		t.row("first tenth (a new session, interleaved)", fmtNs(l.FirstNs))
		t.row("last tenth", fmtNs(l.LastNs))
		t.row("growth", fmtRatio(l.Growth))
		if err := t.flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	return nil
}
