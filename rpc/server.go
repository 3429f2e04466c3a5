package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/vtcode/vtcode-ls/session"
)

// Options configure [Serve]. The zero value works.
type Options struct {
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Version is reported as serverInfo.version.
	Version string
	// MaxMessageBytes bounds the body of one incoming frame; 0 means
	// DefaultMaxMessageBytes. A larger frame is answered with a parse error
	// and skipped.
	MaxMessageBytes int64
	// PressureInterval is the minimum spacing of vtcode/tokenPressure
	// notifications per session; 0 means DefaultPressureInterval, and a
	// negative value sends every one (tests use it for exact transcripts).
	PressureInterval time.Duration
	// Session configures the session manager Serve runs. Serve sets its
	// Notifier, and its Logger when nil.
	Session session.Options

	// Backpressure bounds (0: the Default* value). While the outbox holds
	// more than OutboxBytes or OutboxFrames, or MaxInFlight requests are
	// read and not answered, the server reads no more requests.
	OutboxBytes  int
	OutboxFrames int
	MaxInFlight  int
	// ReadAheadBytes bounds the frames read and not yet handled.
	ReadAheadBytes int
	// FlushTimeout bounds how long the end of the connection waits for the
	// client to read what is queued; then the rest is dropped.
	FlushTimeout time.Duration
	// Attach, when set, is called after each successful initialize (see
	// [AttachFunc]).
	Attach AttachFunc
	// InitNotice, when set, is called after each successful initialize
	// with the client's initializationOptions; a non-empty result is shown
	// to the user once, as a window/showMessage warning (the shared daemon
	// says so when it does not serve the client's proxy setting).
	InitNotice func(initOptions json.RawMessage) string
	// Shared, when set, is the session manager the connection serves
	// instead of one of its own (the per-user daemon, see [Shared]);
	// Session is then unused.
	Shared Shared
}

// orDefault returns v, or def when v is not positive.
func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// ErrNoShutdown is returned by [Serve] when the connection ended, by exit or
// by the end of input, without a shutdown request before.
var ErrNoShutdown = errors.New("connection ended without shutdown")

// ExitCode is the process exit code for the error [Serve] returned: 0 after
// an orderly shutdown, 1 otherwise.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	return 1
}

// Serve speaks the vtcode-ls protocol, reading frames from r and writing
// them to w, until the client sends exit, the input ends, or ctx is
// cancelled. It creates the session manager and closes it before
// returning (with [Options.Shared], it joins that manager and leaves it),
// and closes r and w when they are io.Closers.
//
// Serve returns nil when shutdown came before exit (or before the end of
// input), ErrNoShutdown when it did not, a *FramingError when a malformed
// header ended the connection, and ctx's error when ctx was cancelled.
func Serve(ctx context.Context, r io.Reader, w io.Writer, opts Options) error {
	s := newServer(ctx, r, w, opts)
	defer s.cancelAll()
	s.conn = connect(s.base, s.stream, s, jsonrpc2.SetLogger(libLogger{s.logger}))
	s.out.start()

	var ctxErr, readErr error
	select {
	case <-s.exitCh:
	case <-s.conn.DisconnectNotify():
		// The read loop ended: the stream recorded why before the
		// connection closed.
		<-s.stream.done
		readErr = s.stream.readErr
	case <-ctx.Done():
		ctxErr = ctx.Err()
	}
	s.teardown()

	s.mu.Lock()
	shutdown := s.shutdownSeen
	s.mu.Unlock()
	var fe *FramingError
	switch {
	case ctxErr != nil:
		return ctxErr
	case errors.As(readErr, &fe):
		return fe
	case readErr != nil && readErr != io.EOF && readErr != io.ErrUnexpectedEOF && !isClosedPipe(readErr):
		return fmt.Errorf("reading: %w", readErr)
	case !shutdown:
		return ErrNoShutdown
	}
	return nil
}

// isClosedPipe reports whether err says the input was closed under the
// reader, which is how a connection ends from the other side.
func isClosedPipe(err error) bool {
	return errors.Is(err, io.ErrClosedPipe) || errors.Is(err, jsonrpc2.ErrClosed) || errors.Is(err, os.ErrClosed)
}

// state is the lifecycle state of a connection.
type state int

const (
	stateCreated     state = iota // before initialize
	stateInitialized              // initialize answered
	stateShutdown                 // shutdown received: only exit is accepted
	stateExited                   // exit received: nothing is accepted
)

// A server is one connection: gopls's "accept(2), not listen(2)". Its
// Handle method runs on the jsonrpc2 read loop; it decodes and checks each
// request there, in arrival order, and runs the vtcode/* work on goroutines
// (see dispatch for the ordering and cancellation).
type server struct {
	logger   *slog.Logger
	opts     Options
	stream   *stream
	conn     *jsonrpc2.Conn // set before the read loop runs a handler
	out      *outbox
	notes    *notifier
	progress *progressTracker
	mgr      *session.Manager
	scope    *scope // the client's workspaces when the manager is shared; nil otherwise
	leave    func() // ends the connection's membership of a shared manager
	methods  map[string]method
	delta    deltas // projection deltas (delta.go)

	base      context.Context // parent of every request context; ends at teardown
	cancelAll context.CancelFunc

	maxInFlight  int
	flushTimeout time.Duration
	inFlight     atomic.Int64 // dispatched requests not answered yet

	work   sync.WaitGroup // every request goroutine
	vtWork sync.WaitGroup // vtcode/* request goroutines, which shutdown waits for
	aux    sync.WaitGroup // goroutines waiting for the client's answers

	mu           sync.Mutex // guards the fields below
	state        state
	shutdownSeen bool
	inflight     map[jsonrpc2.ID]context.CancelFunc // running or queued vtcode/* requests
	queued       map[string]int                     // per session: its requests dispatched and not answered
	exitCh       chan struct{}                      // closed by exit
}

func newServer(ctx context.Context, r io.Reader, w io.Writer, opts Options) *server {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &server{
		logger:       logger,
		opts:         opts,
		stream:       newStream(r, w, opts.MaxMessageBytes),
		out:          newOutbox(orDefault(opts.OutboxBytes, DefaultOutboxBytes), orDefault(opts.OutboxFrames, DefaultOutboxFrames)),
		inflight:     map[jsonrpc2.ID]context.CancelFunc{},
		queued:       map[string]int{},
		exitCh:       make(chan struct{}),
		maxInFlight:  orDefault(opts.MaxInFlight, DefaultMaxInFlight),
		flushTimeout: orDefault(opts.FlushTimeout, DefaultFlushTimeout),
	}
	s.base, s.cancelAll = context.WithCancel(context.WithoutCancel(ctx))
	s.stream.reject = func(rj rejection) {
		s.logger.Debug("rejected frame", "code", rj.Code, "message", rj.Message)
		s.out.push(len(rj.Message)+64, func() {
			if err := s.stream.writeRejection(rj); err != nil {
				s.logger.Debug("writing error response", "err", err)
			}
		})
	}
	s.stream.busy = s.busy
	s.stream.onExit = s.exit
	s.stream.aheadMax = orDefault(opts.ReadAheadBytes, DefaultReadAheadBytes)
	s.stream.grace = s.flushTimeout
	s.out.onWrite = s.stream.ahead.kick
	interval := opts.PressureInterval
	if interval == 0 {
		interval = DefaultPressureInterval
	}
	s.notes = &notifier{notify: s.notify, interval: interval}
	s.progress = &progressTracker{create: s.createToken, send: func(p ProgressParams) { s.notify("$/progress", p) }}
	s.notes.progress = s.progress
	if opts.Shared != nil {
		s.scope = &scope{}
		s.notes.accept = s.scope.has
		s.mgr, s.leave = opts.Shared.Join(s.notes)
	} else {
		so := opts.Session
		so.Notifier = s.notes
		if so.Logger == nil {
			so.Logger = logger
		}
		s.mgr = session.NewManager(so)
	}
	s.methods = s.methodTable()
	return s
}

// teardown ends the connection: it cancels the requests in flight and waits
// for them, delivers the last coalesced notifications, closes the session
// manager and then the connection.
func (s *server) teardown() {
	s.mu.Lock()
	s.state = stateExited
	s.mu.Unlock()
	s.cancelAll()
	s.work.Wait()
	s.notes.flush()
	if s.leave != nil {
		s.leave() // the shared manager keeps its sessions for the other clients
	} else if err := s.mgr.Close(); err != nil {
		s.logger.Warn("closing sessions", "err", err)
	}
	flushed := s.out.close(s.flushTimeout)
	if !flushed {
		s.logger.Warn("the client is not reading: dropping what it did not read", "frames", s.out.pending(), "waited", s.flushTimeout)
	}
	_ = s.conn.Close()
	s.aux.Wait()
	if err := s.stream.closeAll(); err != nil {
		s.logger.Debug("closing the connection", "err", err)
	}
	if !flushed {
		// Closing the output unblocks a writer stuck on a pipe or socket;
		// a blocking file may keep it until the process exits.
		t := time.NewTimer(writerGrace)
		defer t.Stop()
		select {
		case <-s.out.done:
		case <-t.C:
		}
	}
}

// writerGrace bounds the wait for the writer goroutine once the output is
// closed after an unfinished flush.
const writerGrace = 100 * time.Millisecond

// busy reports whether the server takes no more requests for now: the
// outbox is over its bounds, or too many requests are in flight.
func (s *server) busy() bool {
	return s.inFlight.Load() >= int64(s.maxInFlight) || s.out.over()
}

// Handle implements jsonrpc2.Handler. It runs on the read loop: every
// message is checked and routed here in arrival order, and nothing here
// waits for a session or for the client.
func (s *server) Handle(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) {
	params := s.stream.takeParams()
	cancelled := s.stream.takeCancelled()
	if req.Notif {
		s.handleNotification(req.Method, params)
		return
	}
	m, err := s.checkRequest(req.Method, params)
	if err != nil {
		s.reply(req.ID, nil, err)
		return
	}
	c, err := m.prepare(s, params)
	if err != nil {
		s.reply(req.ID, nil, err)
		return
	}
	if m.inline {
		res, err := s.run(s.base, req.Method, c, nil, nil)
		s.reply(req.ID, res, err)
		return
	}
	s.dispatch(req.ID, req.Method, m, c, cancelled)
}

// checkRequest applies the rules every request obeys, in one place: the
// lifecycle state, a known method, a request (not notification) method,
// and params where the method needs them.
func (s *server) checkRequest(name string, params json.RawMessage) (*method, error) {
	s.mu.Lock()
	st := s.state
	s.mu.Unlock()
	m, known := s.methods[name]
	switch {
	case st >= stateShutdown:
		return nil, errorf(jsonrpc2.CodeInvalidRequest, "invalid request: %s after shutdown", quoteMethod(name))
	case st == stateCreated && name != "initialize":
		return nil, errorf(CodeServerNotInitialized, "server not initialized: send initialize before %s", quoteMethod(name))
	case !known:
		return nil, errorf(jsonrpc2.CodeMethodNotFound, "method not found: %s", quoteMethod(name))
	case m.notification:
		return nil, errorf(jsonrpc2.CodeInvalidRequest, "invalid request: %s is a notification and takes no id", name)
	case name == "initialize" && st != stateCreated:
		return nil, errorf(jsonrpc2.CodeInvalidRequest, "invalid request: initialize was already called")
	case m.paramsRequired && isNull(params):
		return nil, &session.ParamError{Path: "params", Msg: "required"}
	}
	return &m, nil
}

func quoteMethod(name string) string {
	if len(name) > 100 {
		name = name[:100] + "..."
	}
	return strconv.Quote(name)
}

// dispatch runs a vtcode/* request on its own goroutine. The request
// takes its place in its session queue and enters the in-flight table here,
// on the read loop, so that queue order is arrival order and a
// $/cancelRequest that arrives later always finds it. The session runs it
// in that place (or answers a projectionStats during a compaction at once);
// the goroutine queues the response and only then releases the place, so
// responses and notifications of one session stay in order.
//
// cancelled says the client cancelled the request before it was read off
// the read gate: it is answered RequestCancelled in its turn.
func (s *server) dispatch(id jsonrpc2.ID, name string, m *method, c *call, cancelled bool) {
	s.mu.Lock()
	if s.state == stateExited {
		s.mu.Unlock()
		return // the connection is ending; nobody reads a response
	}
	if _, dup := s.inflight[id]; dup {
		s.mu.Unlock()
		s.reply(id, nil, errorf(jsonrpc2.CodeInvalidRequest, "invalid request: id %s is already in use by a request in flight", id))
		return
	}
	ctx, cancel := context.WithCancel(s.base)
	if cancelled {
		cancel()
	}
	s.inflight[id] = cancel
	if c.queue != "" {
		s.queued[c.queue]++
	}
	s.inFlight.Add(1)
	// Inv: work.Add happens under mu before teardown marks the state
	// exited and waits.
	s.work.Add(1)
	if !m.drains {
		s.vtWork.Add(1)
	}
	s.mu.Unlock()

	var ticket *session.Ticket
	if c.queued {
		ticket = s.mgr.Reserve(c.queue)
	}
	wd := s.progress.start(ctx, c.token, cancel)
	go func() {
		defer s.work.Done()
		if !m.drains {
			defer s.vtWork.Done()
		}
		defer cancel()
		var (
			res any
			err error
		)
		if err = ctx.Err(); err == nil {
			res, err = s.run(ctx, name, c, ticket, wd)
		}
		if err != nil && ctx.Err() != nil {
			// A request cancelled by the client (or by the end of the
			// connection), running or waiting for its turn, fails with
			// RequestCancelled whatever the session said, so the client
			// sees one code for it; a request that completed despite a
			// late cancel answers normally, because its effects happened.
			err = context.Canceled
		}
		wd.finish(err)
		s.mu.Lock()
		delete(s.inflight, id)
		last := false
		if c.queue != "" {
			s.queued[c.queue]--
			if last = s.queued[c.queue] == 0; last {
				delete(s.queued, c.queue)
			}
		}
		s.mu.Unlock()
		// Backpressure: with the outbox full the response waits, holding
		// the session's turn, until the client reads.
		s.out.waitRoom(s.base)
		if last {
			// The session's last request in flight: the pressure it
			// caused goes before its response, even when coalescing
			// holds it back (a burst of pipelined requests stays
			// coalesced: the later ones carry it).
			s.notes.settle(c.queue)
		}
		s.reply(id, res, err)
		ticket.Release()
		s.inFlight.Add(-1)
		s.stream.ahead.kick()
	}()
}

// run runs a call. A panic (a bug) fails the request with an internal
// error and is logged with its stack, instead of ending the daemon the
// editor depends on.
func (s *server) run(ctx context.Context, name string, c *call, t *session.Ticket, p session.Progress) (res any, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.logger.Error("bug: request panicked", "method", name, "panic", r, "stack", string(debug.Stack()))
			res, err = nil, fmt.Errorf("internal error in %s: %v", name, r)
		}
	}()
	return c.run(ctx, t, p)
}

// handleNotification handles a notification on the read loop.
// Notifications never get a response; bad ones are logged and dropped.
func (s *server) handleNotification(name string, params json.RawMessage) {
	s.mu.Lock()
	st := s.state
	s.mu.Unlock()
	switch {
	case name == "exit":
		s.exit()
		return
	case st == stateExited:
		return
	case name == "$/cancelRequest":
		var p CancelParams
		if err := json.Unmarshal(params, &p); err != nil || !validID(p.ID) || isNull(p.ID) {
			s.logger.Debug("ignoring $/cancelRequest with a bad id")
			return
		}
		var id jsonrpc2.ID
		if err := json.Unmarshal(p.ID, &id); err != nil {
			return
		}
		s.mu.Lock()
		cancel := s.inflight[id]
		s.mu.Unlock()
		if cancel != nil {
			s.logger.Debug("cancelling request", "id", id.String())
			cancel()
		}
	case name == "window/workDoneProgress/cancel":
		var p WorkDoneProgressCancelParams
		if err := json.Unmarshal(params, &p); err != nil || !validToken(p.Token) {
			s.logger.Debug("ignoring window/workDoneProgress/cancel with a bad token")
			return
		}
		s.progress.cancel(p.Token)
	case st == stateCreated:
		s.logger.Debug("dropping notification before initialize", "method", name)
	case name == "initialized":
		s.logger.Debug("client initialized")
	case name == "workspace/didChangeWorkspaceFolders" && st == stateInitialized:
		var p DidChangeWorkspaceFoldersParams
		if err := json.Unmarshal(params, &p); err != nil {
			s.logger.Debug("ignoring bad workspace/didChangeWorkspaceFolders", "err", err)
			return
		}
		for _, f := range p.Event.Added {
			if err := s.mgr.AddWorkspace(f.URI, nil); err != nil {
				s.showMessage(MessageWarning, fmt.Sprintf("Workspace %s was not added: %v", f.URI, err))
			} else {
				s.scope.add(f.URI)
			}
		}
	default:
		s.logger.Debug("ignoring notification", "method", name)
	}
}

// exit handles the exit notification: the connection ends.
func (s *server) exit() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == stateExited {
		return
	}
	s.state = stateExited
	close(s.exitCh)
}

// response is a JSON-RPC response as the server writes it.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      jsonrpc2.ID     `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *jsonrpc2.Error `json:"error,omitempty"`
}

// notification is a JSON-RPC notification as the server writes it.
type notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

// reply queues the response to request id. Responses and notifications
// are written to the stream directly rather than through the jsonrpc2
// connection, so that the ones queued before the connection ended (a
// malformed header, the end of input) are still delivered.
func (s *server) reply(id jsonrpc2.ID, res any, err error) {
	r := response{JSONRPC: "2.0", ID: id}
	if err == nil {
		b, merr := json.Marshal(res)
		if merr != nil {
			s.logger.Error("encoding result", "id", id.String(), "err", merr)
			err = fmt.Errorf("encoding result: %w", merr)
		}
		r.Result = b
	}
	if err != nil {
		r.Result, r.Error = nil, toWire(err)
	}
	data, merr := json.Marshal(r)
	if merr != nil { // a bug: every part was encoded already
		s.logger.Error("encoding response", "id", id.String(), "err", merr)
		return
	}
	s.out.push(len(data), func() {
		if werr := s.stream.writeFrame(data); werr != nil {
			s.logger.Debug("writing response", "id", id.String(), "err", werr)
		}
	})
}

// notify queues a notification, encoded now.
func (s *server) notify(method string, params any) {
	data, err := json.Marshal(notification{JSONRPC: "2.0", Method: method, Params: params})
	if err != nil {
		s.logger.Error("encoding notification", "method", method, "err", err)
		return
	}
	s.out.push(len(data), func() {
		if err := s.stream.writeFrame(data); err != nil {
			s.logger.Debug("writing notification", "method", method, "err", err)
		}
	})
}

// showMessage queues a window/showMessage and logs the same text.
func (s *server) showMessage(t MessageType, text string) {
	s.logger.Info("show message", "text", text)
	s.notify("window/showMessage", ShowMessageParams{Type: t, Message: bound(text)})
}

// errCreateTimeout reports a client that did not answer
// window/workDoneProgress/create in time.
var errCreateTimeout = errors.New("no answer to window/workDoneProgress/create")

// createToken asks the client to create a progress token and waits for its
// answer, the end of ctx or of the connection, or createTimeout.
func (s *server) createToken(ctx context.Context, token ProgressToken) error {
	answer := make(chan error, 1)
	if !s.out.push(128, func() {
		call, err := s.conn.DispatchCall(s.base, "window/workDoneProgress/create", WorkDoneProgressCreateParams{Token: token})
		if err != nil {
			answer <- err
			return
		}
		s.aux.Add(1)
		go func() {
			defer s.aux.Done()
			answer <- call.Wait(s.base, nil)
		}()
	}) {
		return jsonrpc2.ErrClosed
	}
	timer := time.NewTimer(createTimeout)
	defer timer.Stop()
	select {
	case err := <-answer:
		if err != nil {
			s.logger.Debug("progress token not created", "token", string(token), "err", err)
		}
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		s.logger.Warn("client did not answer window/workDoneProgress/create", "token", string(token))
		return errCreateTimeout
	}
}

// libLogger sends the jsonrpc2 library's own messages to the debug log.
type libLogger struct{ l *slog.Logger }

func (l libLogger) Printf(format string, args ...any) {
	l.l.Debug(fmt.Sprintf(format, args...))
}
