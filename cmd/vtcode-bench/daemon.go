package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/jsonrpc2"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/rpc"
	"github.com/vtcode/vtcode-ls/session"
)

// DaemonResult compares a vtcode/prepareRequest round trip with a bare
// JSON-RPC echo carrying the same bytes over the same kind of transport.
type DaemonResult struct {
	Transport     string `json:"transport"`
	SessionTokens int    `json:"sessionTokens"` // history estimate when the turns start
	Messages      int    `json:"messages"`
	ContextWindow int    `json:"contextWindow"`
	Turns         int    `json:"turns"`
	RequestBytes  int    `json:"requestBytes"`  // params of one turn
	ResponseBytes int    `json:"responseBytes"` // result of the last turn
	// ProjectedTokens is the projection the last turn returned.
	ProjectedTokens int `json:"projectedTokens"`
	// Compactions is how many automatic compactions the session ran (0 keeps
	// the turns comparable).
	Compactions int     `json:"compactions"`
	Prepare     Latency `json:"prepare"`
	// Echo is the jsonrpc2 echo server; RawEcho the frame-level floor (no
	// JSON-RPC library on the server side).
	Echo           Latency `json:"echo"`
	RawEcho        Latency `json:"rawEcho"`
	RatioMedian    float64 `json:"ratioMedian"` // prepare / echo
	RatioP95       float64 `json:"ratioP95"`
	RawRatioMedian float64 `json:"rawRatioMedian"` // prepare / raw echo
	RawRatioP95    float64 `json:"rawRatioP95"`
}

// Latency is the distribution of one call's round trip.
type Latency struct {
	MedianNs int64 `json:"medianNs"`
	P95Ns    int64 `json:"p95Ns"`
}

func newLatency(s samples) Latency {
	return Latency{MedianNs: int64(s.median()), P95Ns: int64(s.p95())}
}

// discard answers the server's requests (none are expected: the client does
// not advertise work-done progress) and drops its notifications.
var discard = jsonrpc2.HandlerWithError(func(context.Context, *jsonrpc2.Conn, *jsonrpc2.Request) (any, error) {
	return nil, nil
})

// echoServer is a jsonrpc2 server that answers every request with the
// bytes in resp, on the library's cheapest path (a prepared Response).
type echoServer struct {
	resp atomic.Pointer[json.RawMessage]
}

// Handle implements jsonrpc2.Handler.
func (e *echoServer) Handle(ctx context.Context, c *jsonrpc2.Conn, req *jsonrpc2.Request) {
	if req.Notif {
		return
	}
	body := e.resp.Load()
	if body == nil {
		body = req.Params
	}
	_ = c.SendResponse(ctx, &jsonrpc2.Response{ID: req.ID, Result: body})
}

// rawEcho is the floor of the transport: a server that reads one LSP frame,
// takes its id, and writes a prepared response frame, without a JSON-RPC
// library or any JSON encoding. It serves until conn is closed.
func rawEcho(conn net.Conn, resp *atomic.Pointer[json.RawMessage]) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	for {
		n := -1
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\r\n")
			if line == "" {
				break
			}
			if name, value, ok := strings.Cut(line, ":"); ok && strings.EqualFold(name, "Content-Length") {
				if n, err = strconv.Atoi(strings.TrimSpace(value)); err != nil {
					return
				}
			}
		}
		if n < 0 {
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(body, &req) != nil || req.ID == nil {
			continue // a notification (or garbage): no answer
		}
		result := json.RawMessage("null")
		if p := resp.Load(); p != nil {
			result = *p
		}
		var out bytes.Buffer
		fmt.Fprintf(&out, "Content-Length: %d\r\n\r\n", len(`{"jsonrpc":"2.0","id":,"result":}`)+len(req.ID)+len(result))
		out.WriteString(`{"jsonrpc":"2.0","id":`)
		out.Write(req.ID)
		out.WriteString(`,"result":`)
		out.Write(result)
		out.WriteString("}")
		if _, err := conn.Write(out.Bytes()); err != nil {
			return
		}
	}
}

// client connects a JSON-RPC client with LSP framing to one end of a pipe.
func client(ctx context.Context, conn net.Conn) *jsonrpc2.Conn {
	return jsonrpc2.NewConn(ctx, jsonrpc2.NewBufferedStream(conn, jsonrpc2.VSCodeObjectCodec{}), discard)
}

// benchDaemon runs rpc.Serve in-process on a net.Pipe, loads a session with
// hist, and sends turns prepareRequests, each with one new user message; each
// is followed by the same request to a jsonrpc2 echo server on another
// net.Pipe that answers with the daemon's response bytes.
func benchDaemon(ctx context.Context, hist []history.Message, window, warmup, turns int) (_ *DaemonResult, err error) {
	dir, err := os.MkdirTemp("", "vtcode-bench-")
	if err != nil {
		return nil, fmt.Errorf("creating workspace: %w", err)
	}
	defer os.RemoveAll(dir)
	dir, err = filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("creating workspace: %w", err)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	daemon, shutdown := serveInProcess(ctx)
	defer func() {
		if serr := shutdown(); serr != nil && err == nil {
			err = fmt.Errorf("shutting the daemon down: %w", serr)
		}
	}()
	echoes := startEchoes(ctx)
	defer echoes.close()

	id, app, err := loadSession(ctx, daemon, dir, hist, window)
	if err != nil {
		return nil, err
	}
	res := &DaemonResult{
		Transport:     "client: jsonrpc2.Conn with LSP framing; daemon: rpc.Serve in-process on a net.Pipe; echoes: on identical net.Pipes",
		SessionTokens: app.HistoryTokens,
		Messages:      app.Messages,
		ContextWindow: window,
		Turns:         turns,
	}

	var prep, ech, raw samples
	for i := range warmup + turns {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		msg := history.NewText(history.User, fmt.Sprintf("Turn %d: run the failing test again, fix the next failure in internal/parse/lexer.go and keep the public API unchanged.", i))
		params := session.PrepareParams{
			SessionID:    id,
			Messages:     []history.Message{msg},
			SystemPrompt: "You are a coding agent working in a Go repository.",
		}
		var got json.RawMessage
		var cerr error
		d := timeIt(func() { cerr = daemon.Call(ctx, "vtcode/prepareRequest", params, &got) })
		if cerr != nil {
			return nil, fmt.Errorf("vtcode/prepareRequest: %w", cerr)
		}
		e, f, err := echoes.echo(ctx, params, got)
		if err != nil {
			return nil, err
		}
		if i < warmup {
			continue
		}
		prep, ech, raw = append(prep, d), append(ech, e), append(raw, f)
		if i == warmup+turns-1 {
			if err := res.lastTurn(params, got); err != nil {
				return nil, err
			}
		}
	}
	res.Prepare, res.Echo, res.RawEcho = newLatency(prep), newLatency(ech), newLatency(raw)
	res.RatioMedian = ratio(prep.median(), ech.median())
	res.RatioP95 = ratio(prep.p95(), ech.p95())
	res.RawRatioMedian = ratio(prep.median(), raw.median())
	res.RawRatioP95 = ratio(prep.p95(), raw.p95())
	return res, nil
}

// serveInProcess runs rpc.Serve on a net.Pipe and returns a client of it
// and its orderly shutdown, which Serve must end with.
func serveInProcess(ctx context.Context) (*jsonrpc2.Conn, func() error) {
	srvEnd, cliEnd := net.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- rpc.Serve(ctx, srvEnd, srvEnd, rpc.Options{Version: "bench", Session: session.Options{NoWatch: true, Clients: offlineClients}})
	}()
	daemon := client(ctx, cliEnd)
	return daemon, func() error {
		serr := daemon.Call(ctx, "shutdown", nil, nil)
		if serr == nil {
			serr = daemon.Notify(ctx, "exit", nil)
		}
		if serr == nil {
			select {
			case serr = <-served:
			case <-time.After(30 * time.Second):
				serr = errors.New("daemon did not exit")
			}
		}
		daemon.Close()
		return serr
	}
}

// loadSession initializes the daemon on the workspace dir and opens a
// session holding hist.
func loadSession(ctx context.Context, daemon *jsonrpc2.Conn, dir string, hist []history.Message, window int) (string, session.AppendResult, error) {
	var app session.AppendResult
	root := "file://" + dir
	if err := daemon.Call(ctx, "initialize", rpc.InitializeParams{RootURI: &root}, nil); err != nil {
		return "", app, fmt.Errorf("initialize: %w", err)
	}
	if err := daemon.Notify(ctx, "initialized", struct{}{}); err != nil {
		return "", app, fmt.Errorf("initialized: %w", err)
	}
	var open session.OpenResult
	if err := daemon.Call(ctx, "vtcode/openSession", session.OpenParams{SessionID: "bench", ContextWindow: window}, &open); err != nil {
		return "", app, fmt.Errorf("vtcode/openSession: %w", err)
	}
	if err := daemon.Call(ctx, "vtcode/appendMessages", session.AppendParams{SessionID: open.SessionID, Messages: hist}, &app); err != nil {
		return "", app, fmt.Errorf("vtcode/appendMessages: %w", err)
	}
	return open.SessionID, app, nil
}

// benchEchoes are the references of the daemon round trip: a jsonrpc2 echo
// server and a bare frame echo, each on a net.Pipe of its own, answering
// with the bytes they are given.
type benchEchoes struct {
	srv             *echoServer
	srvConn         *jsonrpc2.Conn
	echoCli, rawCli *jsonrpc2.Conn
	rawResp         *atomic.Pointer[json.RawMessage]
}

func startEchoes(ctx context.Context) *benchEchoes {
	echoSrvEnd, echoCliEnd := net.Pipe()
	e := &benchEchoes{srv: &echoServer{}, rawResp: &atomic.Pointer[json.RawMessage]{}}
	e.srvConn = jsonrpc2.NewConn(ctx, jsonrpc2.NewBufferedStream(echoSrvEnd, jsonrpc2.VSCodeObjectCodec{}), e.srv)
	e.echoCli = client(ctx, echoCliEnd)
	rawSrvEnd, rawCliEnd := net.Pipe()
	go rawEcho(rawSrvEnd, e.rawResp)
	e.rawCli = client(ctx, rawCliEnd)
	return e
}

func (e *benchEchoes) close() {
	e.rawCli.Close()
	e.echoCli.Close()
	e.srvConn.Close()
}

// echo sends params to both echoes, answering with got, and returns their
// round trips.
func (e *benchEchoes) echo(ctx context.Context, params session.PrepareParams, got json.RawMessage) (echo, raw time.Duration, err error) {
	e.srv.resp.Store(&got)
	e.rawResp.Store(&got)
	var back, rawBack json.RawMessage
	var cerr error
	echo = timeIt(func() { cerr = e.echoCli.Call(ctx, "vtcode/prepareRequest", params, &back) })
	if cerr != nil {
		return 0, 0, fmt.Errorf("echo: %w", cerr)
	}
	raw = timeIt(func() { cerr = e.rawCli.Call(ctx, "vtcode/prepareRequest", params, &rawBack) })
	if cerr != nil {
		return 0, 0, fmt.Errorf("raw echo: %w", cerr)
	}
	if len(back) != len(got) || len(rawBack) != len(got) {
		return 0, 0, fmt.Errorf("echoes returned %d and %d bytes, want %d", len(back), len(rawBack), len(got))
	}
	return echo, raw, nil
}

// lastTurn records the sizes of the last turn's request and answer.
func (res *DaemonResult) lastTurn(params session.PrepareParams, got json.RawMessage) error {
	body, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("marshalling params: %w", err)
	}
	res.RequestBytes, res.ResponseBytes = len(body), len(got)
	var pr session.PrepareResult
	if err := json.Unmarshal(got, &pr); err != nil {
		return fmt.Errorf("decoding prepareRequest result: %w", err)
	}
	res.ProjectedTokens, res.Compactions = pr.Stats.ProjectedTokens, pr.Stats.Compactions
	return nil
}
