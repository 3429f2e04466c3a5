package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vtcode/vtcode-ls/config"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/store"
)

// Options configure a [Manager]. The zero value works: no user config file,
// no provider clients (nothing can compact), no notifications, the wall
// clock.
type Options struct {
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// UserConfig is the user configuration file
	// (~/.config/vtcode/vtcode.toml); empty for none.
	UserConfig string
	// Clients builds the generator of every route, "offline" included (a
	// route with no provider is "offline"): session picks no client itself.
	// Nil: no compaction can run (it fails with a provider error).
	Clients ClientFactory
	// Notifier receives notifications; nil drops them.
	Notifier Notifier
	// Clock returns the current time; nil means time.Now.
	Clock func() time.Time
	// NoWatch disables watching workspace config files (one-shot commands).
	NoWatch bool
	// Limits bound what one call may carry; the zero value is the defaults.
	Limits Limits
	// PassOneWait bounds how long a compaction waits for a background pass
	// 1 still in flight; 0 means DefaultPassOneWait.
	PassOneWait time.Duration
	// Registry is the per-user file where each added workspace's root is
	// recorded ([store.RecordWorkspace]) for `vtcode-ls report --all`;
	// empty records nothing. A failure to record is logged, never returned.
	Registry string
}

func (m *Manager) passOneWait() time.Duration {
	if m.o.PassOneWait > 0 {
		return m.o.PassOneWait
	}
	return DefaultPassOneWait
}

// ClientFactory returns the generator for a route under a workspace's
// configuration. It is called at each compaction that needs a provider.
type ClientFactory func(route providers.Route, cfg config.Config) (providers.Generator, error)

// Notifier receives what the Manager reports asynchronously. Methods must not
// block for long; they are called while the session's queue is held, so the
// notifications of one session arrive in order.
type Notifier interface {
	// TokenPressure is called after each append, prepare, response,
	// compaction, restore, model switch and policy change.
	TokenPressure(PressureEvent)
	// CompactBoundary is called after each successful compaction.
	CompactBoundary(BoundaryEvent)
	// ShowMessage reports something the user should see (level: 1 error,
	// 2 warning, 3 info, 4 log, as in LSP).
	ShowMessage(level int, text string)
	// LogMessage reports something for the log.
	LogMessage(level int, text string)
}

// Message levels of [Notifier.ShowMessage] and [Notifier.LogMessage] (LSP
// MessageType).
const (
	LevelError   = 1
	LevelWarning = 2
	LevelInfo    = 3
	LevelLog     = 4
)

// Progress receives the work-done progress of one long operation (a
// compaction). A nil Progress reports nothing.
type Progress interface {
	Begin(title string)
	Report(message string, percent int) // percent -1: unknown
	End(message string)
}

// CompactingTitle is the progress title of every compaction.
const CompactingTitle = "Compacting context..."

// Manager owns the workspaces and sessions of one process. It is safe for
// concurrent use.
type Manager struct {
	o      Options
	logger *slog.Logger
	now    func() time.Time
	order  order // the queues of the calls

	mu         sync.Mutex // guards the fields below
	workspaces []*workspace
	sessions   map[string]*Session      // open sessions by id
	opening    map[string]chan struct{} // ids being opened; closed when done
	initOpts   json.RawMessage          // initializationOptions, for workspaces added later
	closed     bool

	bg sync.WaitGroup // background refreshes

	storeFaults func(store.Op, string) error // fault injection into the stores (tests)
	px          proxyIndex                   // agent session keys of proxied requests (proxythread.go)
	userCfg     userConfigMemo               // the user configuration file, as last loaded (userconfig.go)
}

// NewManager returns a Manager with no workspaces.
func NewManager(o Options) *Manager {
	m := &Manager{o: o, logger: o.Logger, now: o.Clock, sessions: map[string]*Session{}, opening: map[string]chan struct{}{}}
	if m.logger == nil {
		m.logger = slog.New(slog.DiscardHandler)
	}
	if m.now == nil {
		m.now = time.Now
	}
	return m
}

// AddWorkspace adds a workspace folder (a path or a file:// URI) with the
// initializationOptions of the client (a partial policy, nil for none). The
// options are kept for workspaces added later. Adding a folder twice is not an
// error: the second call changes nothing. A configuration file that does not
// parse is reported through the Notifier and the defaults are used; invalid
// initOptions are returned as a *config.FieldError and nothing is added.
func (m *Manager) AddWorkspace(root string, initOptions json.RawMessage) error {
	_, err := m.addWorkspace(root, initOptions, true)
	return err
}

func (m *Manager) addWorkspace(root string, initOptions json.RawMessage, setInit bool) (*workspace, error) {
	path, err := workspacePath(root)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, errors.New("add workspace: manager closed")
	}
	init := m.initOpts
	if setInit && len(initOptions) > 0 && !isJSONNull(initOptions) {
		init = initOptions
	}
	for _, w := range m.workspaces {
		if w.root == path {
			m.mu.Unlock()
			return w, nil
		}
	}
	m.mu.Unlock()

	w, err := newWorkspace(m, path, init)
	if err != nil {
		return nil, err
	}

	m.mu.Lock()
	for _, other := range m.workspaces {
		if other.root == path { // added concurrently
			m.mu.Unlock()
			w.close()
			return other, nil
		}
	}
	if m.closed {
		m.mu.Unlock()
		w.close()
		return nil, errors.New("add workspace: manager closed")
	}
	m.workspaces = append(m.workspaces, w)
	if setInit {
		m.initOpts = init // valid: the workspace took it
	}
	m.mu.Unlock()
	if m.o.Registry != "" {
		if err := store.RecordWorkspace(m.o.Registry, path, m.now()); err != nil {
			m.logger.Warn("recording the workspace for report --all", "err", err)
		}
	}
	return w, nil
}

// Workspaces returns the workspace folders, in the order they were added.
func (m *Manager) Workspaces() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, len(m.workspaces))
	for i, w := range m.workspaces {
		out[i] = w.root
	}
	return out
}

// workspaceFor resolves a workspace parameter: empty means the first folder,
// a folder that is not a workspace yet is added.
func (m *Manager) workspaceFor(param, path string) (*workspace, error) {
	if param == "" {
		m.mu.Lock()
		defer m.mu.Unlock()
		if len(m.workspaces) == 0 {
			return nil, paramErr(path, "no workspace folder is open; pass one")
		}
		return m.workspaces[0], nil
	}
	w, err := m.addWorkspace(param, nil, false)
	if err != nil {
		var pe *ParamError
		if errors.As(err, &pe) {
			return nil, &ParamError{Path: path, Msg: pe.Msg}
		}
		return nil, err
	}
	return w, nil
}

// Close closes every session (cancelling the calls in flight and releasing
// the session locks) and stops watching configuration files.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	sessions := make([]*Session, 0, len(m.sessions))
	for _, s := range m.sessions {
		sessions = append(sessions, s)
	}
	workspaces := m.workspaces
	m.mu.Unlock()

	var errs []error
	for _, s := range sessions {
		s.stop() // cancel what runs
	}
	for _, s := range sessions {
		if err := m.closeSession(context.Background(), nil, s); err != nil {
			errs = append(errs, err)
		}
	}
	for _, w := range workspaces {
		w.close()
	}
	m.bg.Wait()
	return errors.Join(errs...)
}

// checkSessionID validates the session id of a call.
func checkSessionID(id string) error {
	if id == "" {
		return paramErr("sessionId", "required")
	}
	if err := store.ValidID(id); err != nil {
		return paramErr("sessionId", "%s", idMsg(err))
	}
	return nil
}

// session returns the open session id.
func (m *Manager) session(id string) (*Session, error) {
	m.mu.Lock()
	s := m.sessions[id]
	m.mu.Unlock()
	if s == nil {
		if err := checkSessionID(id); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w %q", ErrUnknownSession, id)
	}
	return s, nil
}

// do runs fn in the caller's turn of session id's queue, with ctx also
// cancelled when the session closes; see doIn.
func (m *Manager) do(ctx context.Context, id string, fn func(ctx context.Context, s *Session) error) error {
	return m.doIn(ctx, nil, id, fn)
}

// doIn is do in t's place (see [Manager.turn]). The session is looked up
// once the turn has come, so that a call queued behind the openSession of
// its session finds it.
func (m *Manager) doIn(ctx context.Context, t *Ticket, id string, fn func(ctx context.Context, s *Session) error) error {
	if err := checkSessionID(id); err != nil {
		return err
	}
	held, done, err := m.turn(ctx, t, id, false)
	if err != nil {
		return err
	}
	defer done()
	s, err := m.session(id)
	if err != nil {
		return err
	}
	return s.doIn(ctx, held, fn)
}

// OpenSession opens (resuming a stored one) or creates a session. Without a
// workspace, a given session id is looked up in every workspace (open or
// stored) before the first workspace is assumed.
func (m *Manager) OpenSession(ctx context.Context, p OpenParams) (*OpenResult, error) {
	return inTurn(ctx, m, p.Ticket, p.SessionID, func(ctx context.Context, held *Ticket) (*OpenResult, error) {
		return m.openSession(ctx, held, p)
	})
}

// openSession is OpenSession in the turn of ticket held.
func (m *Manager) openSession(ctx context.Context, held *Ticket, p OpenParams) (*OpenResult, error) {
	var w *workspace
	if p.Workspace == "" && p.SessionID != "" {
		w = m.workspaceOf(p.SessionID)
	}
	if w == nil {
		var err error
		if w, err = m.workspaceFor(p.Workspace, "workspace"); err != nil {
			return nil, err
		}
	}
	if err := checkTokens("contextWindow", p.ContextWindow); err != nil {
		return nil, err
	}
	id := p.SessionID
	if id == "" {
		id = newID(m.now())
	} else if err := store.ValidID(id); err != nil {
		return nil, paramErr("sessionId", "%s", idMsg(err))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	for {
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return nil, errors.New("open session: manager closed")
		}
		if s := m.sessions[id]; s != nil {
			m.mu.Unlock()
			if s.ws != w {
				return nil, paramErr("sessionId", "session %q is open in workspace %s", id, s.ws.root)
			}
			return m.reopen(ctx, held, s, p)
		}
		if ch := m.opening[id]; ch != nil { // another call is opening it
			m.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		break
	}
	done := make(chan struct{})
	m.opening[id] = done
	m.mu.Unlock()

	s, resumed, err := openSession(ctx, m, w, id, p)
	m.mu.Lock()
	delete(m.opening, id)
	switch {
	case err != nil:
	case m.closed: // Close ran meanwhile and could not see this session
		s.stop()
		s.twoPass.Close()
		s.log.Close()
		err = errors.New("open session: manager closed")
	default:
		m.sessions[id] = s
	}
	m.mu.Unlock()
	close(done)
	if err != nil {
		return nil, err
	}
	return s.opened(ctx, held, resumed)
}

// workspaceOf returns the workspace in which session id is open or stored,
// or nil.
func (m *Manager) workspaceOf(id string) *workspace {
	m.mu.Lock()
	if s := m.sessions[id]; s != nil {
		m.mu.Unlock()
		return s.ws
	}
	ws := slices.Clone(m.workspaces)
	m.mu.Unlock()
	if len(ws) < 2 {
		return nil // the default is the only candidate
	}
	for _, w := range ws {
		st, err := w.store()
		if err != nil {
			continue
		}
		infos, err := st.List()
		if err != nil {
			continue
		}
		for _, in := range infos {
			if in.ID == id {
				return w
			}
		}
	}
	return nil
}

// opened reports an opened session's token pressure and describes it, in
// the turn of ticket held when it is the session's.
func (s *Session) opened(ctx context.Context, held *Ticket, resumed bool) (*OpenResult, error) {
	var res *OpenResult
	err := s.doIn(ctx, held, func(ctx context.Context, s *Session) error {
		s.notifyPressure(s.refreshStats())
		res = &OpenResult{SessionID: s.id, Resumed: resumed, Messages: len(s.live), Policy: s.policy()}
		return nil
	})
	return res, err
}

// reopen answers openSession for a session already open in this process: it
// applies a changed route and reports the session as resumed.
func (m *Manager) reopen(ctx context.Context, held *Ticket, s *Session, p OpenParams) (*OpenResult, error) {
	err := s.doIn(ctx, held, func(ctx context.Context, s *Session) error {
		return s.adoptRoute(p.Provider, p.Model, p.ContextWindow)
	})
	if err != nil {
		return nil, err
	}
	return s.opened(ctx, held, true)
}

// CloseSession closes an open session, waiting for the calls queued before
// it (in t's place when t is not nil, see [Place]), and releases its lock on
// the store.
func (m *Manager) CloseSession(ctx context.Context, id string, t *Ticket) error {
	if err := checkSessionID(id); err != nil {
		return err
	}
	held, done, err := m.turn(ctx, t, id, false)
	if err != nil {
		return err
	}
	defer done()
	s, err := m.session(id)
	if err != nil {
		return err
	}
	return m.closeSession(ctx, held, s)
}

// closeSession closes s in the turn of ticket held when it is the
// session's, else in a turn of its own.
func (m *Manager) closeSession(ctx context.Context, held *Ticket, s *Session) error {
	_, done, err := m.turn(ctx, held, s.id, false)
	if err != nil {
		return err
	}
	defer done()
	if s.closed {
		return nil
	}
	s.closed = true
	s.stop()
	s.twoPass.Close()
	s.logBills() // a pass 1's, now that none runs
	m.mu.Lock()
	if m.sessions[s.id] == s {
		delete(m.sessions, s.id)
	}
	m.mu.Unlock()
	if err := s.log.Close(); err != nil {
		return err // the store's error names the session
	}
	return nil
}

// ListSessions lists the stored sessions of one workspace, or of all of them,
// most recently updated first per workspace.
func (m *Manager) ListSessions(ctx context.Context, p ListParams) ([]SessionInfo, error) {
	return inTurn(ctx, m, p.Ticket, "", func(ctx context.Context, _ *Ticket) ([]SessionInfo, error) {
		return m.listSessions(ctx, p)
	})
}

func (m *Manager) listSessions(ctx context.Context, p ListParams) ([]SessionInfo, error) {
	var ws []*workspace
	if p.Workspace != "" {
		w, err := m.workspaceFor(p.Workspace, "workspace")
		if err != nil {
			return nil, err
		}
		ws = []*workspace{w}
	} else {
		m.mu.Lock()
		ws = slices.Clone(m.workspaces)
		m.mu.Unlock()
	}
	out := []SessionInfo{}
	for _, w := range ws {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		st, err := w.store()
		if err != nil {
			return nil, err
		}
		infos, err := st.List()
		if err != nil {
			return nil, err
		}
		for _, in := range infos {
			out = append(out, SessionInfo{SessionID: in.ID, Workspace: w.root, Messages: in.Messages, UpdatedAt: in.UpdatedAt})
		}
	}
	markActive(out)
	return out, nil
}

// markActive marks the session a client follows: the most recently updated
// of the listing (each workspace's list is sorted newest first; across
// workspaces the earlier workspace wins a tie).
func markActive(list []SessionInfo) {
	best := -1
	for i := range list {
		if best < 0 || list[i].UpdatedAt.After(list[best].UpdatedAt) {
			best = i
		}
	}
	if best >= 0 {
		list[best].Active = true
	}
}

// workspacePath turns a workspace parameter (a path or a file:// URI) into a
// clean absolute path of an existing folder.
func workspacePath(s string) (string, error) {
	if s == "" {
		return "", paramErr("workspace", "empty")
	}
	p := s
	if i := strings.Index(s, "://"); i > 0 || strings.HasPrefix(s, "file:") {
		u, err := url.Parse(s)
		if err != nil || u.Scheme != "file" {
			return "", paramErr("workspace", "want a path or a file:// URI, got %q", bound(s, 200))
		}
		if u.Host != "" && u.Host != "localhost" {
			return "", paramErr("workspace", "remote file URI %q is not supported", bound(s, 200))
		}
		p = fileURIPath(u.Path, filepath.Separator == '\\')
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", paramErr("workspace", "%v", err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", paramErr("workspace", "no such folder %s", abs)
	}
	if !fi.IsDir() {
		return "", paramErr("workspace", "%s is not a folder", abs)
	}
	return abs, nil
}

// fileURIPath is the local path of the (decoded) path of a file URI. On
// Windows the URI path of a drive is "/C:/Users/x" (VS Code sends
// file:///c%3A/Users/x): the slash before the drive goes and the slashes
// become separators.
func fileURIPath(p string, windows bool) string {
	if !windows {
		return p
	}
	if len(p) >= 3 && p[0] == '/' && p[2] == ':' && ('a' <= p[1] && p[1] <= 'z' || 'A' <= p[1] && p[1] <= 'Z') {
		p = p[1:]
	}
	return strings.ReplaceAll(p, "/", `\`)
}

// idMsg is the message of an invalid-id error without the sentinel's prefix.
func idMsg(err error) string {
	return strings.TrimPrefix(err.Error(), store.ErrInvalidID.Error()+" ")
}

func isJSONNull(b json.RawMessage) bool { return strings.TrimSpace(string(b)) == "null" }
