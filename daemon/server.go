package daemon

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/vtcode/vtcode-ls/config"
	"github.com/vtcode/vtcode-ls/proxy"
	"github.com/vtcode/vtcode-ls/rpc"
	"github.com/vtcode/vtcode-ls/session"
)

// DefaultIdle is how long a daemon with no client and no proxied request in
// flight waits before it exits.
const DefaultIdle = 3 * time.Minute

// ErrRunning is returned by [Listen] when another daemon owns the socket.
var ErrRunning = errors.New("a shared daemon is already running")

// Options configure a [Daemon].
type Options struct {
	// Socket is the control socket path ([SocketPath]); required.
	Socket string
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Version is the program version, reported by status and attach.
	Version string
	// Session configures the shared session manager; its Notifier is the
	// daemon's own.
	Session session.Options
	// RPC is the template of each connection's server; Session, Shared and
	// Attach are the daemon's.
	RPC rpc.Options
	// Idle is how long the daemon lives after its last client left and its
	// last proxied request ended; 0 means DefaultIdle, negative never.
	Idle time.Duration
	// Wait bounds how long Listen waits for a daemon that is ending to
	// release the socket; 0 does not wait.
	Wait time.Duration
	// ProxyListen is the proxy's address (checked with proxy.CheckListen);
	// empty runs no proxy.
	ProxyListen string
	// ProxyAllowRemote allows a ProxyListen that is not loopback.
	ProxyAllowRemote bool
	// ProxySecret, when not empty, is required of every proxied request.
	ProxySecret string
	// ProxyClient sends the proxy's upstream requests; nil: the proxy's
	// default.
	ProxyClient *http.Client
}

// A Daemon serves the control socket and the proxy over one session
// manager.
type Daemon struct {
	o       Options
	logger  *slog.Logger
	started time.Time
	ln      net.Listener
	lock    *os.File
	mgr     *session.Manager
	hub     *hub
	key     []byte // of the proxy's workspace prefixes (proxy.WorkspaceBase)

	proxyLn  net.Listener // nil without a proxy
	proxySrv *http.Server
	proxyErr string // why the proxy is not listening

	stopOnce sync.Once
	stopped  chan struct{} // closed by Stop
	why      string        // why it stopped (guarded by stopOnce)

	mu        sync.Mutex // guards the fields below
	clients   int        // connected protocol clients
	holds     int        // hold connections (vtcode-ls run's agents)
	inflight  int        // proxied requests not answered yet
	idleTimer *time.Timer
	conns     sync.WaitGroup
}

// Listen makes this process the user's daemon: it takes the socket name
// (its lock file), replaces a stale socket, listens, creates the session
// manager and, when configured, the proxy listener (a proxy that cannot
// listen is reported by status and the log; the daemon serves without).
func Listen(o Options) (*Daemon, error) {
	if !Supported {
		return nil, errors.New("the shared daemon is not supported on this platform")
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := privateDir(filepath.Dir(o.Socket)); err != nil {
		return nil, err
	}
	lock, err := takeLock(o.Socket, o.Wait)
	if err != nil {
		return nil, err
	}
	key, err := prefixKey(filepath.Join(filepath.Dir(o.Socket), "proxy.key"))
	if err != nil {
		lock.Close()
		return nil, err
	}
	_ = os.Remove(o.Socket) // a stale socket: we own the name now
	ln, err := net.Listen("unix", o.Socket)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("listen: %w", err)
	}
	if err := os.Chmod(o.Socket, 0o600); err != nil {
		ln.Close()
		lock.Close()
		return nil, fmt.Errorf("listen: %w", err)
	}
	d := &Daemon{o: o, logger: logger, started: time.Now(), ln: ln, lock: lock, key: key, stopped: make(chan struct{})}
	d.hub = &hub{logger: logger, members: map[*member]struct{}{}, changed: d.clientsChanged}
	so := o.Session
	so.Notifier = d.hub
	if so.Logger == nil {
		so.Logger = logger
	}
	d.mgr = session.NewManager(so)
	d.hub.mgr = d.mgr
	if o.ProxyListen != "" {
		d.listenProxy()
	}
	d.mu.Lock()
	d.armIdle()
	d.mu.Unlock()
	return d, nil
}

// prefixKey reads the key of the proxy's workspace prefixes, creating it
// (32 random bytes, 0600) on first use. It lives beside the socket, in the
// user's private folder, and outlives the daemon, so that the base URL an
// agent was given stays valid in the next daemon.
func prefixKey(path string) ([]byte, error) {
	key, err := os.ReadFile(path)
	if err == nil && len(key) >= 32 {
		return key, nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("proxy key: %w", err)
	}
	key = make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("proxy key: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, key, 0o600); err != nil {
		return nil, fmt.Errorf("proxy key: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, fmt.Errorf("proxy key: %w", err)
	}
	return key, nil
}

// takeLock takes the lock of the socket name. While another process holds
// it and answers on the socket, ErrRunning; while it holds it without
// answering (a daemon ending), it waits up to wait.
func takeLock(socket string, wait time.Duration) (*os.File, error) {
	deadline := time.Now().Add(wait)
	delay := 5 * time.Millisecond
	for {
		f, ok, err := lockFile(socket + ".lock")
		if err != nil {
			return nil, fmt.Errorf("lock: %w", err)
		}
		if ok {
			return f, nil
		}
		if c, err := net.Dial("unix", socket); err == nil {
			c.Close()
			return nil, ErrRunning
		}
		if !time.Now().Before(deadline) {
			return nil, ErrRunning
		}
		t := time.NewTimer(delay)
		<-t.C
		delay = min(2*delay, 200*time.Millisecond)
	}
}

func (d *Daemon) listenProxy() {
	if err := proxy.CheckListen(d.o.ProxyListen, d.o.ProxyAllowRemote); err != nil {
		d.proxyErr = err.Error()
		d.logger.Error("proxy not started", "err", err)
		return
	}
	ln, err := net.Listen("tcp", d.o.ProxyListen)
	if err != nil {
		d.proxyErr = err.Error()
		d.logger.Error("proxy not started", "err", err)
		return
	}
	h := proxy.NewWorkspaces(proxy.Options{Manager: d.mgr, Logger: d.logger.With("component", "proxy"), Secret: d.o.ProxySecret, Client: d.o.ProxyClient}, d.key)
	d.proxyLn = ln
	d.proxySrv = &http.Server{
		Handler:           d.track(h),
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(d.logger.Handler(), slog.LevelDebug),
	}
	d.logger.Info("proxy listening", "addr", ln.Addr().String())
}

// track counts the proxied requests in flight, which keep the daemon
// alive.
func (d *Daemon) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.active(&d.inflight, 1)
		defer d.active(&d.inflight, -1)
		h.ServeHTTP(w, r)
	})
}

func (d *Daemon) clientsChanged(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.clients = n
	d.armIdle()
}

func (d *Daemon) active(counter *int, delta int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	*counter += delta
	d.armIdle()
}

// armIdle starts the idle timer when nothing is active and stops it
// otherwise; d.mu is held.
func (d *Daemon) armIdle() {
	if d.idleTimer != nil {
		d.idleTimer.Stop()
		d.idleTimer = nil
	}
	idle := d.o.Idle
	if idle == 0 {
		idle = DefaultIdle
	}
	if idle < 0 || d.clients > 0 || d.holds > 0 || d.inflight > 0 {
		return
	}
	var t *time.Timer
	t = time.AfterFunc(idle, func() {
		d.mu.Lock()
		current := d.idleTimer == t
		d.mu.Unlock()
		if current {
			d.stop(fmt.Sprintf("idle for %s", idle))
		}
	})
	d.idleTimer = t
}

// Socket is the control socket path.
func (d *Daemon) Socket() string { return d.o.Socket }

// ProxyAddr is the proxy's address, "" without a proxy.
func (d *Daemon) ProxyAddr() string {
	if d.proxyLn == nil {
		return ""
	}
	return d.proxyLn.Addr().String()
}

// proxyNotice is what a client whose initializationOptions ask for a
// proxy is told when the daemon does not serve that address ("" when it
// does): the daemon's proxy is the user configuration's, one per user.
func (d *Daemon) proxyNotice(init json.RawMessage) string {
	p, ok, err := config.ProxyFromJSON(init, config.Proxy{})
	want := strings.TrimSpace(p.Listen)
	if !ok || err != nil || want == "" {
		return ""
	}
	addr := d.ProxyAddr()
	if addr == "" {
		why := d.proxyErr
		if why == "" {
			why = "it is off in the user configuration"
		}
		return fmt.Sprintf("vtcode-ls: your proxy setting %s is not used: the shared daemon serves the proxy of the user configuration ([proxy] listen), and it has none (%s). Set [proxy] listen in the user configuration, or run vtcode-ls with --no-shared to use your setting.", want, why)
	}
	if sameAddr(want, d.o.ProxyListen) || sameAddr(want, addr) {
		return ""
	}
	return fmt.Sprintf("vtcode-ls: your proxy setting %s is not used: the shared daemon's proxy listens on http://%s ([proxy] listen of the user configuration); point your agents there (vtcode-ls run does), or run vtcode-ls with --no-shared to use your setting.", want, addr)
}

// sameAddr reports whether two listen addresses reach the same proxy: equal,
// or the same port on loopback hosts ("localhost:8787", "127.0.0.1:8787").
func sameAddr(a, b string) bool {
	if a == b {
		return true
	}
	ha, pa, err1 := net.SplitHostPort(a)
	hb, pb, err2 := net.SplitHostPort(b)
	if err1 != nil || err2 != nil || pa != pb || pa == "0" {
		return false
	}
	loopback := func(h string) bool {
		ip := net.ParseIP(h)
		return h == "localhost" || ip != nil && ip.IsLoopback()
	}
	return ha == hb || loopback(ha) && loopback(hb)
}

// ProxyBase is the proxy's base path of workspace root
// (proxy.WorkspaceBase under the daemon's key).
func (d *Daemon) ProxyBase(root string) string { return proxy.WorkspaceBase(root, d.key) }

// Manager is the shared session manager.
func (d *Daemon) Manager() *session.Manager { return d.mgr }

// Stop ends the daemon: Serve returns once the clients are disconnected and
// the sessions closed.
func (d *Daemon) Stop() { d.stop("stop requested") }

func (d *Daemon) stop(why string) {
	d.stopOnce.Do(func() {
		d.why = why
		close(d.stopped)
	})
}

// Serve accepts connections until Stop, the idle time, or the end of ctx;
// then it disconnects the clients, stops the proxy, closes the sessions
// (releasing their locks) and gives up the socket name.
func (d *Daemon) Serve(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if d.proxySrv != nil {
		go func() {
			if err := d.proxySrv.Serve(d.proxyLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
				d.logger.Warn("proxy stopped", "err", err)
			}
		}()
	}
	acceptErr := make(chan error, 1)
	accepting := make(chan struct{}) // closed when the accept loop has ended
	go func() {
		defer close(accepting)
		for {
			c, err := d.ln.Accept()
			if err != nil {
				acceptErr <- err
				return
			}
			d.conns.Add(1)
			go func() {
				defer d.conns.Done()
				d.serveConn(ctx, c)
			}()
		}
	}()
	var err error
	select {
	case <-d.stopped:
		d.logger.Info("stopping", "why", d.why)
	case <-ctx.Done():
		d.logger.Info("stopping", "why", ctx.Err())
	case err = <-acceptErr:
		d.logger.Error("accept", "err", err)
		err = fmt.Errorf("accept: %w", err)
	}
	d.ln.Close()
	// No connection is added once the loop has ended: conns.Wait below
	// covers every connection accepted before the close.
	<-accepting
	cancel() // ends every connection's server
	if d.proxySrv != nil {
		shut, c := context.WithTimeout(context.Background(), 5*time.Second)
		_ = d.proxySrv.Shutdown(shut)
		c()
		_ = d.proxySrv.Close()
	}
	d.conns.Wait()
	d.mu.Lock()
	if d.idleTimer != nil {
		d.idleTimer.Stop()
	}
	d.mu.Unlock()
	if cerr := d.mgr.Close(); cerr != nil {
		d.logger.Warn("closing sessions", "err", cerr)
	}
	_ = os.Remove(d.o.Socket)
	d.lock.Close()
	return err
}

// handshakeTimeout bounds the wait for a connection's request line.
const handshakeTimeout = 10 * time.Second

func (d *Daemon) serveConn(ctx context.Context, c net.Conn) {
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(handshakeTimeout))
	br := bufio.NewReaderSize(c, 64<<10)
	var req request
	if err := readLine(br, &req); err != nil {
		d.logger.Debug("bad control request", "err", err)
		_ = writeLine(c, answer{Error: "bad request: " + err.Error()})
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	switch req.Op {
	case "status":
		_ = writeLine(c, answer{OK: true, Status: d.Status(ctx)})
	case "ping":
		_ = writeLine(c, answer{OK: true, PID: os.Getpid(), Version: d.o.Version})
	case "stop":
		_ = writeLine(c, answer{OK: true, PID: os.Getpid()})
		d.Stop()
	case "attach":
		d.attach(ctx, c, br, req)
	case "hold":
		// vtcode-ls run: the daemon stays while its agent runs (between
		// the agent's requests too); the holder sees the connection drop
		// if the daemon dies.
		a := answer{OK: true, PID: os.Getpid(), Version: d.o.Version}
		if req.Workspace != "" {
			root, err := session.WorkspaceRoot(req.Workspace)
			if err != nil {
				_ = writeLine(c, answer{Error: "workspace: " + err.Error()})
				return
			}
			a.ProxyBase = proxy.WorkspaceBase(root, d.key)
		}
		if err := writeLine(c, a); err != nil {
			return
		}
		d.active(&d.holds, 1)
		defer d.active(&d.holds, -1)
		context.AfterFunc(ctx, func() { c.Close() })
		_, _ = io.Copy(io.Discard, br)
	default:
		_ = writeLine(c, answer{Error: fmt.Sprintf("unknown op %q", req.Op)})
	}
}

// attach serves one protocol client on c.
func (d *Daemon) attach(ctx context.Context, c net.Conn, br *bufio.Reader, req request) {
	if err := writeLine(c, answer{OK: true, PID: os.Getpid(), Version: d.o.Version}); err != nil {
		return
	}
	opts := d.o.RPC
	opts.Shared, opts.Attach, opts.Session = d.hub, nil, session.Options{}
	opts.InitNotice = d.proxyNotice
	if opts.Logger == nil {
		opts.Logger = d.logger
	}
	if opts.Version == "" {
		opts.Version = d.o.Version
	}
	if req.MaxMessageBytes > 0 {
		opts.MaxMessageBytes = req.MaxMessageBytes
	}
	cw := &chunkWriter{w: c}
	var err error
	if req.Files {
		// The client handed over its stdin and stdout: the server reads
		// and writes them itself, and the socket carries only the exit.
		in, out, ferr := receiveFiles(c)
		if ferr != nil {
			d.logger.Warn("attach with files", "err", ferr)
			return
		}
		// A client that goes away (killed) ends the connection.
		cctx, cancel := context.WithCancel(ctx)
		go func() {
			_, _ = io.Copy(io.Discard, br)
			cancel()
		}()
		err = rpc.Serve(cctx, in, out, opts)
		cancel()
		if cctx.Err() != nil && ctx.Err() == nil && errors.Is(err, context.Canceled) {
			err = rpc.ErrNoShutdown
		}
	} else {
		err = rpc.Serve(ctx, connReader{br, c}, cw, opts)
	}
	code := rpc.ExitCode(err)
	d.logger.Debug("client done", "exit", code, "err", err)
	// A writer stuck on a client that does not read gives up here.
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_ = cw.exit(code)
}

// connReader is the client's side of an attached connection; closing it
// (the server's end of input) closes only the reading half, so the exit
// chunk can still be written.
type connReader struct {
	*bufio.Reader
	c net.Conn
}

func (r connReader) Close() error {
	if uc, ok := r.c.(*net.UnixConn); ok {
		return uc.CloseRead()
	}
	return nil
}

// Status describes a running daemon.
type Status struct {
	PID        int               `json:"pid"`
	Version    string            `json:"version"`
	Started    time.Time         `json:"started"`
	UptimeSec  float64           `json:"uptimeSeconds"`
	Socket     string            `json:"socket"`
	Clients    int               `json:"clients"`
	Runs       int               `json:"runs"` // agents started by vtcode-ls run
	Proxied    int               `json:"proxiedInFlight"`
	IdleSec    float64           `json:"idleSeconds"`          // exits this long after the last client; negative: never
	Proxy      string            `json:"proxy,omitempty"`      // the proxy's address
	ProxyError string            `json:"proxyError,omitempty"` // why there is no proxy
	Workspaces []WorkspaceStatus `json:"workspaces"`
	Sessions   int               `json:"sessions"`
}

// WorkspaceStatus is one workspace of a [Status].
type WorkspaceStatus struct {
	Root     string `json:"root"`
	Sessions int    `json:"sessions"` // stored sessions
	// ProxyBase is the base URL path that routes an agent's requests to
	// this workspace (proxy.WorkspaceBase).
	ProxyBase string `json:"proxyBase"`
}

// Status reports the daemon's state.
func (d *Daemon) Status(ctx context.Context) *Status {
	d.mu.Lock()
	st := &Status{PID: os.Getpid(), Version: d.o.Version, Started: d.started, Socket: d.o.Socket,
		Clients: d.clients, Runs: d.holds, Proxied: d.inflight, Proxy: d.ProxyAddr(), ProxyError: d.proxyErr}
	d.mu.Unlock()
	switch idle := d.o.Idle; {
	case idle == 0:
		st.IdleSec = DefaultIdle.Seconds()
	case idle < 0:
		st.IdleSec = -1
	default:
		st.IdleSec = idle.Seconds()
	}
	st.UptimeSec = time.Since(d.started).Seconds()
	st.Workspaces = []WorkspaceStatus{}
	for _, root := range d.mgr.Workspaces() {
		ws := WorkspaceStatus{Root: root, ProxyBase: proxy.WorkspaceBase(root, d.key)}
		if list, err := d.mgr.ListSessions(ctx, session.ListParams{Workspace: root}); err == nil {
			ws.Sessions = len(list)
		}
		st.Sessions += ws.Sessions
		st.Workspaces = append(st.Workspaces, ws)
	}
	return st
}
