package session

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/vtcode/vtcode-ls/clearing"
	"github.com/vtcode/vtcode-ls/compaction"
	"github.com/vtcode/vtcode-ls/config"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/store"
)

// This file is the session API of a proxy transport: an agent that keeps
// its own conversation sends the whole of it with every request, and the
// proxy asks [Manager.ProxyPrepare] what to send instead, then reports the
// answer with [Manager.ProxyRecord] (or [Manager.ProxyAbort] when the
// request failed). The session keeps, besides its live history, a mirror of
// the agent's conversation (a digest per message, see
// providers.MessageKey) and how the two line up: the agent's messages
// [0, covered) are represented by live[:head] (a summary after a
// compaction), and live[head:] are the agent's messages [covered:] one for
// one. So after a compaction the agent goes on sending its full history and
// the session keeps mapping that prefix onto the summary.

// ProxyKind says what a proxied request is for.
type ProxyKind int

// The kinds of proxied requests.
const (
	// ProxyTurn is a turn of the conversation: its new messages and the
	// answer are recorded when the answer arrives.
	ProxyTurn ProxyKind = iota
	// ProxyAgentCompaction is the agent's own summarization request: it is
	// projected (so the summarizer sees the engine's view) but not recorded,
	// and the agent's next divergent request is taken as its fresh window.
	ProxyAgentCompaction
	// ProxyCount is a token count request: projected without compacting,
	// nothing recorded.
	ProxyCount
)

// ProxyRequest is one request an agent sent through a proxy, decoded.
type ProxyRequest struct {
	// Workspace is the workspace the session belongs to; empty means the
	// first workspace folder.
	Workspace string
	// Key is the agent's session identity (a header or body id); empty
	// means a fingerprint of the system prompt and first user message.
	Key string
	// WindowID names the agent's context window when the agent says (a
	// change means the agent started a fresh window); empty for none.
	WindowID        string
	Provider, Model string
	System          string
	Tools           []json.RawMessage
	// Messages is the agent's whole conversation.
	Messages []history.Message
	Kind     ProxyKind
	// Unverified marks a request whose credentials the upstream has not
	// accepted yet: it is projected onto a session that already exists,
	// with no new session, no compaction, no model call and no route
	// change; [ErrProxyUnverified] when it would need a new session.
	Unverified bool
	// Summarizer, when not nil, is the model of this request, reached with
	// this request's credentials: under [proxy] summarizer = "agent" it
	// writes a summary this request makes the engine write (held for this
	// request's compaction, or its pass 1, only; never stored).
	Summarizer providers.Generator
}

// ErrProxyUnverified is ProxyPrepare's answer to an unverified request
// (ProxyRequest.Unverified) that no existing session takes: the transport
// forwards it as it came.
var ErrProxyUnverified = errors.New("proxy: a request with unverified credentials opens no session")

// Dispositions of a proxied request ([ProxyPlan.Disposition]).
const (
	ProxyAppend = "append" // extends the conversation
	ProxyBranch = "branch" // diverges from it (a rewind or an edit): a new session
	ProxyWindow = "window" // the agent's fresh window after its own compaction
	ProxyReplay = "replay" // a prefix of what is recorded (a retry): nothing to record
	ProxySide   = "side"   // the agent's compaction request
	ProxyCounts = "count"  // a token count
)

// ProxyPlan is what a proxy sends for a request.
type ProxyPlan struct {
	SessionID string
	// Turn identifies the request in [Manager.ProxyRecord] and
	// [Manager.ProxyAbort].
	Turn uint64
	// Messages is the projection to send instead of the agent's messages.
	Messages []history.Message
	Stats    Stats
	// Compaction reports an automatic compaction this request ran.
	Compaction  *CompactResult
	Disposition string
	// Unchanged reports that Messages are the request's messages as they
	// came: the transport may forward the request as it is.
	Unchanged bool
}

// ProxyResponse is the answer to a proxied request.
type ProxyResponse struct {
	Message    history.Message
	Usage      *history.Usage
	StopReason string
}

// ProgressSource is implemented by a [Notifier] that can report the
// progress of work no client request started (a proxied request's
// compaction); the rpc transport creates a token for it.
type ProgressSource interface {
	NewProgress(ctx context.Context) Progress
}

// proxyState is a session's mirror of the agent's conversation; owned by
// the holder of the session's queue.
type proxyState struct {
	init     bool
	keys     []string // digests of the agent's messages as recorded
	covered  int      // agent messages represented by live[:head]
	head     int
	unmapped bool // resumed after a compaction: the next request starts a window
	// compactions is the session's compaction count the mirror is aligned
	// with; extra counts the placeholder results in live[head:] that
	// stand for no agent message (see proxyRealign).
	compactions, extra int
	awaiting           bool // the agent's compaction request was answered
	// summaries are the telling lines of the agent's latest compaction
	// answers (see carriesSummary): a window that follows its compaction
	// out of order (Gemini CLI's own and a /compress racing) still carries
	// one.
	summaries []string
	window    string // the agent's window id, if it names one
	turn      uint64
	pending   map[uint64]*proxyTurn
}

// proxyTurn is a prepared request waiting for its answer.
type proxyTurn struct {
	key    string
	disp   string
	keys   []string
	msgs   []history.Message // the agent's messages
	c      int               // common prefix with the mirror at prepare time
	window string
	// request is the record of the request for the session's timeline
	// (contextmap.go), written with the answer; horizon is the cleared
	// horizon of an agent's fresh window, kept once the window replaced
	// the history.
	request requestData
	horizon clearing.Horizon
}

// maxSummaries bounds proxyState.summaries: an agent's compaction is a
// request or two (Gemini CLI verifies its snapshot), two may race.
const maxSummaries = 4

// tellingLine returns the longest line of an agent's compaction answer, the
// one its next window carries as it is whatever the agent wraps the summary
// in; "" when the answer has no line long enough to tell it apart.
func tellingLine(answer string) string {
	best := ""
	for line := range strings.Lines(answer) {
		if line = strings.TrimSpace(line); len(line) > len(best) {
			best = line
		}
	}
	if len(best) < 40 {
		return ""
	}
	return best
}

// carriesSummary reports whether a request that shares no message with the
// mirror opens with one of the agent's recent compaction answers: its
// window, though another request of the conversation came in between.
func (px *proxyState) carriesSummary(msgs []history.Message) bool {
	for i := range min(len(msgs), 3) {
		text := msgs[i].Text()
		for _, line := range px.summaries {
			if strings.Contains(text, line) {
				return true
			}
		}
	}
	return false
}

// proxyIndex maps agent session keys to the sessions of their threads
// (main conversation first).
type proxyIndex struct {
	mu      sync.Mutex
	threads map[string][]string
}

func (x *proxyIndex) get(key string) []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return slices.Clone(x.threads[key])
}

func (x *proxyIndex) add(key, id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.threads == nil {
		x.threads = map[string][]string{}
	}
	if !slices.Contains(x.threads[key], id) {
		x.threads[key] = append(x.threads[key], id)
	}
}

func (x *proxyIndex) replace(key, old, id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	list := x.threads[key]
	if i := slices.Index(list, old); i >= 0 {
		list[i] = id
		return
	}
	x.threads[key] = append(list, id)
}

// proxyID is the session id of an agent key (and thread discriminator).
func proxyID(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return "proxy-" + hex.EncodeToString(h.Sum(nil)[:10])
}

// fingerprint identifies a conversation by its system prompt and first user
// message.
func fingerprint(system string, msgs []history.Message) string {
	first := ""
	for i := range msgs {
		if msgs[i].Role == history.User {
			first = msgs[i].Text()
			break
		}
	}
	sum := sha256.Sum256([]byte(system + "\x00" + first))
	return hex.EncodeToString(sum[:10])
}

// LogMessage sends a log message to the client (window/logMessage).
func (m *Manager) LogMessage(level int, text string) { m.notifyLog(level, text) }

// ShowMessage shows a message to the user (window/showMessage).
func (m *Manager) ShowMessage(level int, text string) { m.notifyShow(level, text) }

// ProxyPrepare maps a proxied request onto its session (opening or
// creating it in the workspace) and returns the projection to send. Nothing
// of the request is recorded yet, except when it triggers an automatic
// compaction: then its messages are recorded with the compaction, as
// prepareRequest does. prog receives the compaction's progress; nil uses
// the Notifier's ProgressSource, if any.
func (m *Manager) ProxyPrepare(ctx context.Context, r ProxyRequest, prog Progress) (*ProxyPlan, error) {
	if err := m.checkMessages("messages", r.Messages); err != nil {
		return nil, err
	}
	if err := m.o.Limits.withDefaults().checkPrefix(r.System, r.Tools); err != nil {
		return nil, err
	}
	w, err := m.workspaceFor(r.Workspace, "workspace")
	if err != nil {
		return nil, err
	}
	key := r.Key
	if key == "" {
		key = "fingerprint\x00" + fingerprint(r.System, r.Messages)
	}
	keys := make([]string, len(r.Messages))
	for i := range r.Messages {
		keys[i] = providers.MessageKey(&r.Messages[i])
	}
	if prog == nil {
		if ps, ok := m.o.Notifier.(ProgressSource); ok {
			prog = ps.NewProgress(ctx)
		}
	}

	// The thread: the session of this key whose mirror shares the longest
	// prefix with the request, or the one expecting a fresh window; a
	// request that shares nothing with any is a new thread (a subagent, a
	// side request).
	ids := m.px.get(key)
	if len(ids) == 0 {
		ids = m.proxyStored(w, key)
		if r.Unverified {
			ids = m.proxyExisting(w, ids)
		}
		for _, id := range ids {
			m.px.add(key, id)
		}
	}
	if r.Unverified && len(ids) == 0 {
		return nil, ErrProxyUnverified
	}
	var chosen *Session
	best := -1
	for _, id := range ids {
		s, err := m.proxySession(ctx, w, id, r)
		if err != nil {
			if len(ids) > 1 && id != proxyID(key) {
				// A stored branch another process holds, or a broken one:
				// the conversation goes on in the others.
				m.logger.Warn("session: a stored thread of a proxied conversation did not open", "session", id, "err", err)
				continue
			}
			return nil, err
		}
		var c int
		err = s.do(ctx, func(ctx context.Context, s *Session) error {
			s.proxyInit()
			px := &s.px
			c = commonPrefix(px.keys, keys)
			switch {
			case len(px.keys) == 0 && !px.unmapped:
				c = max(c, 1) // an empty session takes any conversation
			case px.awaiting || px.unmapped || (r.WindowID != "" && px.window != "" && r.WindowID != px.window),
				c == 0 && px.carriesSummary(r.Messages):
				c = max(c, 1) // expecting a fresh window
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if c > best {
			chosen, best = s, c
		}
	}
	switch {
	case best <= 0 && r.Unverified:
		return nil, ErrProxyUnverified
	case best <= 0 && r.Kind == ProxyAgentCompaction:
		// The agent's summarizer with a prompt of its own (opencode): it
		// summarizes the main conversation, whose next request is a fresh
		// window.
		if chosen, err = m.proxySession(ctx, w, ids[0], r); err != nil {
			return nil, err
		}
	case best <= 0:
		id := proxyID(key, fingerprint(r.System, r.Messages))
		m.px.add(key, id)
		if chosen, err = m.proxySession(ctx, w, id, r); err != nil {
			return nil, err
		}
	}
	var plan *ProxyPlan
	err = chosen.do(ctx, func(ctx context.Context, s *Session) error {
		var err error
		plan, err = s.proxyPrepare(ctx, r, key, keys, prog)
		return err
	})
	return plan, err
}

// proxyStored returns the sessions of an agent key this process has not
// seen yet: its main session and the branches rewinds made of it
// (proxyBranch), most recently updated first and at most maxStoredThreads,
// so that after a restart the agent goes on in the branch it is in instead
// of branching once more from the main session.
func (m *Manager) proxyStored(w *workspace, key string) []string {
	main := proxyID(key)
	st, err := w.store()
	if err != nil {
		return []string{main}
	}
	list, err := st.List()
	if err != nil {
		m.logger.Warn("session: listing the stored sessions of a proxied conversation", "err", err)
		return []string{main}
	}
	var ids []string
	for _, info := range list {
		if (info.ID == main || strings.HasPrefix(info.ID, main+"-b")) && len(ids) < maxStoredThreads {
			ids = append(ids, info.ID)
		}
	}
	if !slices.Contains(ids, main) {
		ids = append(ids, main)
	}
	return ids
}

// proxyExisting returns the sessions of ids that are open or stored.
func (m *Manager) proxyExisting(w *workspace, ids []string) []string {
	st, err := w.store()
	if err != nil {
		return nil
	}
	list, err := st.List()
	if err != nil {
		return nil
	}
	var out []string
	for _, id := range ids {
		m.mu.Lock()
		open := m.sessions[id] != nil
		m.mu.Unlock()
		if open || slices.ContainsFunc(list, func(in store.SessionInfo) bool { return in.ID == id }) {
			out = append(out, id)
		}
	}
	return out
}

// maxStoredThreads bounds the stored sessions a restarted daemon considers
// for an agent key.
const maxStoredThreads = 8

// proxySession returns the open session id of workspace w, opening it
// (resuming a stored one) with the request's route.
func (m *Manager) proxySession(ctx context.Context, w *workspace, id string, r ProxyRequest) (*Session, error) {
	m.mu.Lock()
	s := m.sessions[id]
	m.mu.Unlock()
	if s != nil {
		if s.ws != w {
			return nil, paramErr("workspace", "session %q is open in workspace %s", id, s.ws.root)
		}
		return s, nil
	}
	p := OpenParams{Workspace: w.root, SessionID: id, Provider: r.Provider, Model: r.Model}
	if r.Unverified {
		p.Provider, p.Model = "", "" // the stored route stays
	}
	if _, err := m.OpenSession(ctx, p); err != nil {
		return nil, err
	}
	return m.session(id)
}

// evProxyMirror records how the live history lines up with the agent's
// conversation whenever that is not simply one for one (after a compaction,
// the agent's own new window, a branch of a compacted conversation), so
// that a restarted daemon goes on mapping the agent's requests onto the
// summary instead of taking the next one for a new window, which would
// record a needless boundary and compact the agent's whole history again.
// A boundary or a restore voids it.
const evProxyMirror = "proxy_mirror"

// mirrorData is the payload of evProxyMirror: the agent's messages
// [0, Covered) are live[:Head], whose digests Prefix holds (hex); the
// agent's messages from Covered on are live[Head:], one for one, but for
// placeholder results (history.InterruptedResult) the agent never sent.
type mirrorData struct {
	Covered int      `json:"covered"`
	Head    int      `json:"head"`
	Prefix  []string `json:"prefix,omitempty"`
	Window  string   `json:"window,omitempty"`
}

// applyMirror folds a mirror record in; one before the last checkpoint
// describes a history that no longer exists.
func (s *Session) applyMirror(ev store.Event, data any, past bool) error {
	if past {
		return nil
	}
	d, err := payload[mirrorData](ev, data)
	if err != nil {
		return err
	}
	s.pxSaved = &d
	return nil
}

// saveMirror records the mirror's alignment when it is not one for one
// (see evProxyMirror). The mirror in memory is right either way: a failed
// record only costs a restarted daemon the alignment, so it is logged.
func (s *Session) saveMirror() {
	px := &s.px
	if px.unmapped || px.covered == 0 && px.head == 0 && s.compactions == 0 {
		return
	}
	d := mirrorData{Covered: px.covered, Head: px.head, Window: px.window, Prefix: make([]string, 0, px.covered)}
	for _, k := range px.keys[:px.covered] {
		d.Prefix = append(d.Prefix, hex.EncodeToString([]byte(k)))
	}
	if err := s.record(evProxyMirror, d); err != nil {
		s.m.logger.Warn("session: the proxy's alignment with the agent's conversation was not saved; after a restart the agent's next request starts a new window",
			"session", s.id, "err", err)
	}
}

// proxyInit builds the mirror of a session the proxy has not seen in this
// process: the recorded alignment (evProxyMirror), else the live history
// one for one when no compaction replaced it; a compacted session without a
// record takes the agent's next request as its new window.
func (s *Session) proxyInit() {
	if s.px.init {
		return
	}
	s.px.init = true
	s.px.pending = map[uint64]*proxyTurn{}
	s.px.compactions = s.compactions
	if d := s.pxSaved; d != nil {
		if prefix, ok := d.prefix(len(s.live)); ok {
			s.px.keys, s.px.covered, s.px.head, s.px.window = prefix, d.Covered, d.Head, d.Window
			for i := d.Head; i < len(s.live); i++ {
				if d.Head > 0 && s.live[i].Role == history.Tool && s.live[i].Text() == history.InterruptedResult {
					s.px.extra++
					continue
				}
				s.px.keys = append(s.px.keys, providers.MessageKey(&s.live[i]))
			}
			return
		}
		s.m.logger.Warn("session: the proxy's recorded alignment does not fit the history; the agent's next request starts a new window", "session", s.id)
		s.px.unmapped = len(s.live) > 0
		return
	}
	if s.compactions > 0 {
		s.px.unmapped = len(s.live) > 0
		return
	}
	for i := range s.live {
		s.px.keys = append(s.px.keys, providers.MessageKey(&s.live[i]))
	}
}

// prefix decodes the digests of a mirror record for a live history of n
// messages; ok is false when the record does not fit it (the store is
// input like any other).
func (d *mirrorData) prefix(n int) ([]string, bool) {
	if d.Covered < 0 || d.Head < 0 || d.Head > n || len(d.Prefix) != d.Covered {
		return nil, false
	}
	keys := make([]string, len(d.Prefix))
	for i, h := range d.Prefix {
		b, err := hex.DecodeString(h)
		if err != nil || len(b) == 0 {
			return nil, false
		}
		keys[i] = string(b)
	}
	return keys, true
}

func commonPrefix(a, b []string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// proxyRealign lines the mirror up again with a live history that another
// call changed (a compaction through vtcode/compact, a restore, messages
// appended through the protocol): the live messages at the end that are
// still the agent's own map onto them, everything before stands for the
// rest of the agent's conversation, as after a compaction. A compaction
// made while the agent's last call had no result yet leaves a placeholder
// result (history.InterruptedResult) that the agent's real one follows; the
// alignment skips it, and projections use the agent's messages there.
func (s *Session) proxyRealign() {
	px := &s.px
	if px.unmapped || len(s.live) == px.head+len(px.keys)-px.covered+px.extra && px.compactions == s.compactions {
		return
	}
	s.align()
}

// align computes the mirror's alignment with the live history from their
// ends (see proxyRealign) and records it.
func (s *Session) align() {
	px := &s.px
	px.compactions = s.compactions
	i, j, extra := len(s.live)-1, len(px.keys)-1, 0
	for i >= 0 && j >= 0 {
		m := &s.live[i]
		if providers.MessageKey(m) == px.keys[j] {
			i, j = i-1, j-1
			continue
		}
		if m.Role == history.Tool && m.Text() == history.InterruptedResult {
			i, extra = i-1, extra+1
			continue
		}
		break
	}
	px.covered, px.head, px.extra = j+1, i+1, extra
	s.saveMirror()
}

// proxyReplaced aligns the mirror at once after another call replaced the
// live history (a compaction through vtcode/compact, a restore), so that the
// alignment is recorded before a restart could lose it.
func (s *Session) proxyReplaced() {
	if s.px.init && !s.px.unmapped && len(s.px.keys) > 0 {
		s.align()
	}
}

// proxyLiveIndex returns the index in the live history of the agent's
// message j (digest key), or -1.
func (s *Session) proxyLiveIndex(j int, key string) int {
	px := &s.px
	li := px.head + j - px.covered
	if px.extra == 0 {
		if li < len(s.live) {
			return li
		}
		return -1
	}
	for d := 0; d <= px.extra && li+d < len(s.live); d++ {
		if providers.MessageKey(&s.live[li+d]) == key {
			return li + d
		}
	}
	return -1
}

// proxyPrepare is ProxyPrepare on the chosen session.
func (s *Session) proxyPrepare(ctx context.Context, r ProxyRequest, key string, keys []string, prog Progress) (*ProxyPlan, error) {
	s.agent = agentOf(key)
	s.syncEstimator()
	s.proxyInit()
	s.proxyRealign()
	px := &s.px
	if (r.Provider != "" || r.Model != "") && (r.Provider != s.route.Provider || r.Model != s.route.Model) && r.Kind == ProxyTurn && !r.Unverified {
		if err := s.adoptRoute(r.Provider, r.Model, 0); err != nil {
			return nil, err
		}
	}
	n, N := len(keys), len(px.keys)
	c := commonPrefix(px.keys, keys)
	var disp string
	switch {
	case r.Kind == ProxyCount:
		disp = ProxyCounts
	case r.Kind == ProxyAgentCompaction:
		disp = ProxySide
	case px.unmapped:
		disp = ProxyWindow
	case c == N:
		disp = ProxyAppend
	case c == n:
		disp = ProxyReplay
	case px.awaiting || (r.WindowID != "" && px.window != "" && r.WindowID != px.window),
		c == 0 && px.carriesSummary(r.Messages):
		disp = ProxyWindow
	default:
		disp = ProxyBranch
	}

	// The messages to project: the summary standing for the agent's
	// compacted prefix, then the agent's own messages. The cleared horizon
	// is the live history's: it applies to the agent's messages where they
	// are the live ones, not to a fresh window.
	var pre []history.Message
	mapped := disp != ProxyWindow && !px.unmapped && c >= px.covered
	hz := s.cache.horizon
	if !mapped {
		hz = clearing.Horizon{}
	}
	if mapped {
		pre = make([]history.Message, 0, px.head+n-px.covered)
		pre = append(pre, s.live[:px.head]...)
		for j := px.covered; j < n; j++ {
			msg := r.Messages[j]
			if j < c {
				// Same digest as the stored message: the same estimate.
				// A tool result's digest is its call id: its text may have
				// changed (the agent cleared it); an assistant message's
				// leaves out its thinking and call arguments: it takes the
				// stored estimate when it is the same message.
				li := s.proxyLiveIndex(j, keys[j])
				_, known := s.est.Cached(&msg) // decoded with its estimate (providers.DecodeCache)
				switch {
				case li < 0:
				case msg.Role == history.Assistant:
					if t, ok := s.est.Cached(&s.live[li]); ok && !known && history.Same(&msg, &s.live[li]) {
						s.est.SetCached(&msg, t)
					}
				case msg.Role == history.Tool && msg.Text() != s.live[li].Text() && li < hz.Messages && !s.cache.sentResult(&msg):
					// The agent cleared a result the engine has cleared
					// already: the recorded one projects to the stub the
					// previous requests carried, where the agent's own
					// text would break the provider's cache there. (One
					// the agent cleared while the engine held it went
					// out as the agent's text: it stays so.)
					msg = s.live[li]
				case msg.Role != history.Tool || msg.Text() == s.live[li].Text():
					if t, ok := s.est.Cached(&s.live[li]); ok {
						s.est.SetCached(&msg, t)
					}
				}
			}
			pre = append(pre, msg)
		}
	} else {
		pre = slices.Clone(r.Messages)
	}
	for i := range pre {
		s.est.Message(&pre[i])
	}

	prefix := s.est.Prefix(r.System, r.Tools)
	e := s.env(s.route, nil, prefix)
	var envelope *compaction.Envelope
	if r.System != "" || len(r.Tools) > 0 {
		envelope = &compaction.Envelope{Provider: e.route.Provider, Model: e.route.Model, System: r.System, Tools: slices.Clone(r.Tools)}
	}
	proj := s.projectFrom(pre, hz, e, false, false)

	plan := &ProxyPlan{SessionID: s.id, Disposition: disp}
	turn := &proxyTurn{key: key, disp: disp, keys: keys, msgs: r.Messages, c: c, window: r.WindowID}
	auto := disp == ProxyAppend && e.pol.AutoCompaction.Enabled && e.th.Threshold > 0 && !r.Unverified
	used := proj.tokens + prefix
	switch {
	case auto && e.asks() && !e.overLimit(used): // ask.go: the agent is never blocked
		if used >= e.th.Soft {
			s.propose(pre, e, envelope, used)
		}
	case auto && proj.tokens+prefix >= e.th.Threshold:
		// The new messages are committed with the boundary: the artifact
		// holds pre, the boundary the history that replaces it.
		res, err := s.compactHistory(ctx, pre, compactJob{
			trigger: compaction.TriggerAuto, strategy: "auto", e: e, prog: prog,
			envelope: envelope, twoPass: s.twoPass, with: commitWith{proxy: true}, summarizer: r.Summarizer,
		})
		ok, err := s.settleAuto(ctx, err)
		if err != nil {
			return nil, err
		}
		if ok {
			s.proxyCompacted(pre, keys, px.covered, px.head)
			proj = s.project(s.live, e, false, false)
			if e.asks() {
				s.compactedUnasked(used, e)
			}
		}
		plan.Compaction = res
	case auto && proj.tokens+prefix >= e.th.Soft:
		s.prefire(pre, e, envelope, r.Summarizer)
	}
	if disp == ProxyAppend {
		s.envelope, s.prefix, s.reserved, s.skipClearing = envelope, prefix, nil, false
	}
	s.trim(&proj, e)
	// Normalize and Clear return their input itself when they change
	// nothing: then the projection is the request's messages.
	plan.Unchanged = !proj.trimmed && (!mapped || px.head == 0 && px.covered == 0) && len(pre) == n &&
		len(proj.msgs) == n && (n == 0 || &proj.msgs[0] == &pre[0])
	plan.Stats = s.stats(e, proj)
	msgs := proj.msgs
	switch disp {
	case ProxyAppend, ProxyWindow, ProxyReplay:
		// A request of the conversation, sent as a prepared one is: its
		// cleared horizon is kept (a fresh window's once it replaced the
		// history, in proxyRecord) and it is the base and the cache
		// prediction of the next one; a turn is recorded in the timeline
		// with its answer.
		if disp != ProxyReplay {
			turn.request = s.requestRecord(e, proj, pre, nil, plan.Stats)
		}
		turn.horizon = proj.horizon
		msgs, _ = s.sendProjection(proj, pre, prefix, plan.Stats, disp == ProxyAppend)
	}
	// The transport holds the plan's messages while it encodes them: they
	// share no array with the session's.
	plan.Messages = append([]history.Message{}, msgs...)
	if disp != ProxyCounts {
		s.setSnapshot(plan.Stats)
		s.notifyPressure(plan.Stats)
	}
	px.turn++
	plan.Turn = px.turn
	px.pending[plan.Turn] = turn
	return plan, nil
}

// proxyCompacted realigns the mirror after a compaction of pre (the
// summary part live[:head] and the agent's messages [covered:]) recorded the
// agent's messages keys: the live history's tail that is still the agent's
// messages maps onto them, the rest is the new summary part.
func (s *Session) proxyCompacted(pre []history.Message, keys []string, covered, head int) {
	limit := min(len(keys)-covered, len(s.live), len(pre)-head)
	k := 0
	for k < limit && providers.MessageKey(&s.live[len(s.live)-1-k]) == providers.MessageKey(&pre[len(pre)-1-k]) {
		k++
	}
	s.px.keys = slices.Clone(keys)
	s.px.covered = len(keys) - k
	s.px.head = len(s.live) - k
	s.px.compactions, s.px.extra = s.compactions, 0
	s.saveMirror()
}

// ProxyRecord records the answer to a prepared request: a turn's new
// messages and the assistant message (with usage), a branch as a new
// session, a fresh window as a compaction boundary of trigger "agent".
// Requests that record nothing (replays, counts, the agent's compaction
// requests) only release their turn.
func (m *Manager) ProxyRecord(ctx context.Context, id string, turn uint64, resp ProxyResponse) error {
	if resp.Message.Role != history.Assistant {
		return paramErr("message.role", "must be assistant")
	}
	return m.do(ctx, id, func(ctx context.Context, s *Session) error {
		t := s.px.pending[turn]
		if t == nil {
			return fmt.Errorf("proxy record: no pending request %d in session %s", turn, s.id)
		}
		delete(s.px.pending, turn)
		s.rc.billed = false
		if err := s.proxyRecord(ctx, t, resp); err != nil {
			return err
		}
		if !s.rc.billed && t.disp != ProxyBranch { // an answer recorded nowhere: its bill alone
			return s.recordReceipt(s.receiptOf(s.proxyUsage(resp.Usage), agentOf(t.key)))
		}
		return nil
	})
}

// ProxyAbort forgets a prepared request whose answer failed: the session
// stays as it was.
func (m *Manager) ProxyAbort(id string, turn uint64) {
	_ = m.do(context.Background(), id, func(ctx context.Context, s *Session) error {
		delete(s.px.pending, turn)
		return nil
	})
}

func (s *Session) proxyRecord(ctx context.Context, t *proxyTurn, resp ProxyResponse) error {
	s.syncEstimator()
	px := &s.px
	n := len(t.keys)
	respKey := providers.MessageKey(&resp.Message)
	switch t.disp {
	case ProxyAppend:
		N := len(px.keys)
		if N > n || commonPrefix(px.keys, t.keys) != N {
			// Another request of the conversation was recorded meanwhile
			// and this one no longer extends it.
			s.m.logger.Info("session: proxied answer no longer extends the conversation; not recorded", "session", s.id)
			return nil
		}
		if n > N {
			if err := s.record(evMessages, messagesData{Messages: slices.Clone(t.msgs[N:]), Request: &t.request}); err != nil {
				return err
			}
		} else {
			s.recordRequest(t.request)
		}
		px.keys = slices.Clone(t.keys)
		if err := s.recordAnswer(t, resp); err != nil {
			return err
		}
		px.keys = append(px.keys, respKey)
		px.awaiting = false
		if t.window != "" {
			px.window = t.window
		}
	case ProxyWindow:
		next := slices.Clone(t.msgs)
		b := Boundary{
			Trigger: "agent", Mode: "agent", Strategy: "agent",
			OriginalMessageCount: len(s.live), CompactedMessageCount: len(next),
			OriginalTokens: s.est.Messages(s.live), CompactedTokens: s.est.Messages(next),
		}
		if err := s.commit(context.WithoutCancel(ctx), s.live, next, &b, commitWith{proxy: true}); err != nil {
			return fmt.Errorf("record the agent's new window: %w", err)
		}
		s.recordRequest(t.request)
		s.keepCleared(t.horizon)
		if err := s.recordAnswer(t, resp); err != nil {
			return err
		}
		s.px = proxyState{init: true, keys: append(slices.Clone(t.keys), respKey), window: t.window, turn: px.turn, pending: px.pending,
			compactions: s.compactions, summaries: px.summaries}
		s.saveMirror()
	case ProxyBranch:
		return s.proxyBranch(ctx, t, resp, respKey)
	case ProxySide:
		px.awaiting = true
		if line := tellingLine(resp.Message.Text()); line != "" {
			px.summaries = append(px.summaries[max(0, len(px.summaries)-maxSummaries+1):], line)
		}
	}
	s.notifyPressure(s.refreshStats())
	return nil
}

// recordAnswer records the assistant message, usage and bill of an answer.
func (s *Session) recordAnswer(t *proxyTurn, resp ProxyResponse) error {
	s.snapMu.Lock()
	estimate := s.snap.ProjectedTokens + s.snap.PrefixTokens
	s.snapMu.Unlock()
	usage := s.proxyUsage(resp.Usage)
	s.rc.billed = true
	return s.record(evResponse, responseData{Message: resp.Message, Usage: usage, StopReason: resp.StopReason, RequestEstimate: estimate,
		Receipt: s.receiptOf(usage, agentOf(t.key))})
}

// proxyBranch records a request that diverged from the conversation as a
// new session: the shared part (with the summary standing for a compacted
// prefix), the request's own messages from the divergence on, and the
// answer. The stored session is left as it was; the agent's key follows the
// branch.
func (s *Session) proxyBranch(ctx context.Context, t *proxyTurn, resp ProxyResponse, respKey string) error {
	px := &s.px
	var base []history.Message
	covered, head := 0, 0
	if t.c >= px.covered {
		covered, head = px.covered, px.head
		base = append(slices.Clone(s.live[:px.head+t.c-px.covered]), t.msgs[t.c:]...)
	} else {
		base = slices.Clone(t.msgs)
	}
	var suffix [4]byte
	rand.Read(suffix[:])
	id := proxyID(t.key) + "-b" + hex.EncodeToString(suffix[:])
	b, err := s.m.proxySession(ctx, s.ws, id, ProxyRequest{Provider: s.route.Provider, Model: s.route.Model})
	if err != nil {
		return fmt.Errorf("branch session: %w", err)
	}
	err = b.do(ctx, func(ctx context.Context, b *Session) error {
		b.syncEstimator()
		b.proxyInit()
		if len(base) > 0 {
			if err := b.record(evMessages, messagesData{Messages: base}); err != nil {
				return err
			}
		}
		if err := b.recordAnswer(t, resp); err != nil {
			return err
		}
		b.px.keys = append(slices.Clone(t.keys), respKey)
		b.px.covered, b.px.head, b.px.window = covered, head, t.window
		b.saveMirror()
		b.notifyPressure(b.refreshStats())
		return nil
	})
	if err != nil {
		return err
	}
	s.m.px.replace(t.key, s.id, id)
	s.m.logger.Info("session: proxied conversation diverged; recorded as a branch", "session", s.id, "branch", id)
	return nil
}

// WorkspaceConfig returns the current configuration of a workspace (empty:
// the first one).
func (m *Manager) WorkspaceConfig(workspace string) (config.Config, error) {
	w, err := m.workspaceFor(workspace, "workspace")
	if err != nil {
		return config.Config{}, err
	}
	cfg, _, _, _ := w.snapshot()
	return cfg, nil
}

// UserConfig returns the configuration without any workspace file: the
// built-in defaults and the user configuration file, which the user wrote
// (a workspace file comes with the repository and is untrusted input).
func (m *Manager) UserConfig() (config.Config, error) {
	return config.Load(m.o.UserConfig, "")
}
