package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/vtcode/vtcode-ls/clearing"
	"github.com/vtcode/vtcode-ls/compaction"
	"github.com/vtcode/vtcode-ls/config"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
)

// This file is the session API of a proxy transport: an agent that keeps
// its own conversation sends the whole of it with every request, and the
// proxy asks [Manager.ProxyPrepare] what to send instead, then reports the
// answer with [Manager.ProxyRecord] (or [Manager.ProxyAbort] when the
// request failed). The session keeps, besides its live history, a mirror of
// the agent's conversation (mirror.go) that says what each request is to
// it: a turn that extends it, the agent's fresh window, a branch. A request
// goes to one thread of its agent key (proxythread.go), is classified
// there, projected and planned (proxyPrepare), and its answer recorded
// (proxyRecord).

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
	Disposition Disposition
	// Unchanged reports that Messages are the request's messages as they
	// came: the transport may forward the request as it is.
	Unchanged bool
}

// ProxyResponse is the answer to a proxied request, as the transport read
// it from the bytes it forwarded.
type ProxyResponse = history.Response

// ProgressSource is implemented by a [Notifier] that can report the
// progress of work no client request started (a proxied request's
// compaction); the rpc transport creates a token for it.
type ProgressSource interface {
	NewProgress(ctx context.Context) Progress
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
		keys[i] = history.MessageKey(&r.Messages[i])
	}
	if prog == nil {
		if ps, ok := m.o.Notifier.(ProgressSource); ok {
			prog = ps.NewProgress(ctx)
		}
	}
	chosen, err := m.proxyThread(ctx, w, r, key, keys)
	if err != nil {
		return nil, err
	}
	var plan *ProxyPlan
	err = chosen.do(ctx, func(ctx context.Context, s *Session) error {
		var err error
		plan, err = s.proxyPrepare(ctx, r, key, keys, prog)
		return err
	})
	return plan, err
}

// proxyPrep is a proxied request on its way through proxyPrepare.
type proxyPrep struct {
	r    ProxyRequest
	key  string
	keys []string // digests of r.Messages
	disp Disposition
	c    int // messages shared with the mirror from the start
	// pre is the messages to project: the summary standing for the agent's
	// compacted prefix and the agent's messages after it when mapped, else
	// the agent's messages; hz is the cleared horizon that applies to them.
	pre    []history.Message
	mapped bool
	hz     clearing.Horizon
	// own are the agent's tool results projected with its own text where
	// the recorded one differs, by call id (cacheState.prevOwn once sent).
	own      map[string]string
	prefix   int // estimate of the system prompt and tools
	e        *env
	envelope *compaction.Envelope
}

// proxyPrepare is ProxyPrepare on the chosen session: the mirror
// classifies the request, proxyMessages builds what to project,
// proxyCompact decides the automatic compaction, proxyPlan makes the plan.
func (s *Session) proxyPrepare(ctx context.Context, r ProxyRequest, key string, keys []string, prog Progress) (*ProxyPlan, error) {
	s.agent = agentOf(key)
	s.syncEstimator()
	s.proxyInit()
	s.proxyRealign()
	if err := s.proxyRoute(r); err != nil {
		return nil, err
	}
	q := &proxyPrep{r: r, key: key, keys: keys}
	q.disp, q.c = s.px.classify(r, keys)
	s.proxyMessages(q)
	q.prefix = s.est.Prefix(r.System, r.Tools)
	q.e = s.env(s.route, nil, q.prefix)
	if r.System != "" || len(r.Tools) > 0 {
		q.envelope = &compaction.Envelope{Provider: q.e.route.Provider, Model: q.e.route.Model, System: r.System, Tools: slices.Clone(r.Tools)}
	}
	proj := s.projectFrom(q.pre, q.hz, q.e, false, false)
	plan := &ProxyPlan{SessionID: s.id, Disposition: q.disp}
	if err := s.proxyCompact(ctx, q, &proj, plan, prog); err != nil {
		return nil, err
	}
	s.proxyPlan(q, proj, plan)
	return plan, nil
}

// proxyRoute adopts the route a turn names when it differs from the
// session's; a request whose credentials the upstream has not accepted
// changes no route.
func (s *Session) proxyRoute(r ProxyRequest) error {
	if r.Kind != ProxyTurn || r.Unverified || r.Provider == "" && r.Model == "" ||
		r.Provider == s.route.Provider && r.Model == s.route.Model {
		return nil
	}
	return s.adoptRoute(r.Provider, r.Model, 0)
}

// proxyMessages sets the messages to project of q: the summary standing
// for the agent's compacted prefix, then the agent's own messages, each
// estimated. The cleared horizon is the live history's: it applies to the
// agent's messages where they are the live ones, not to a fresh window.
func (s *Session) proxyMessages(q *proxyPrep) {
	px, n := &s.px, len(q.keys)
	q.mapped = q.disp != ProxyWindow && !px.unmapped && q.c >= px.covered
	if q.mapped {
		q.hz = s.cache.horizon
		q.pre = make([]history.Message, 0, px.head+n-px.covered)
		q.pre = append(q.pre, s.live[:px.head]...)
		for j := px.covered; j < n; j++ {
			msg := q.r.Messages[j]
			if j < q.c {
				var own bool
				if msg, own = s.proxyKnown(msg, px.liveIndex(s.live, j, q.keys[j]), q.hz); own {
					if q.own == nil {
						q.own = map[string]string{}
					}
					q.own[msg.ToolCallID] = msg.Text()
				}
			}
			q.pre = append(q.pre, msg)
		}
	} else {
		q.pre = slices.Clone(q.r.Messages)
	}
	for i := range q.pre {
		s.est.Message(&q.pre[i])
	}
}

// proxyKnown returns msg, an agent's message with the digest of the live
// message li (-1: none), as it is projected: with the stored estimate when
// it is the same message, or the live one where the agent cleared a result
// the engine has cleared already. A tool result's digest is its call id:
// its text may have changed (the agent cleared it); an assistant message's
// leaves out its thinking and call arguments: it takes the stored estimate
// when it is the same message. own says the result is projected with the
// agent's text where the recorded one differs: the next request projects
// it so again (sentResult), sent as it is or cleared, so that its stub
// counts the same text.
func (s *Session) proxyKnown(msg history.Message, li int, hz clearing.Horizon) (_ history.Message, own bool) {
	if li < 0 {
		return msg, false
	}
	live := &s.live[li]
	_, known := s.est.Cached(&msg) // decoded with its estimate (the proxy's decode cache)
	switch {
	case msg.Role == history.Assistant:
		if t, ok := s.est.Cached(live); ok && !known && history.Same(&msg, live) {
			s.est.SetCached(&msg, t)
		}
	case msg.Role == history.Tool && msg.Text() != live.Text():
		if li < hz.Messages && !s.cache.sentResult(&msg) {
			// The recorded result projects to the stub the previous
			// requests carried, where the agent's own text would break the
			// provider's cache there. (One the agent cleared while the
			// engine held it went out as the agent's text, or was cleared
			// from it: it stays so.)
			return *live, false
		}
		return msg, true
	default:
		if t, ok := s.est.Cached(live); ok {
			s.est.SetCached(&msg, t)
		}
	}
	return msg, false
}

// proxyCompact decides the automatic compaction of a request that extends
// the conversation, as prepareRequest does: ask mode proposes one (the
// agent is never blocked, ask.go); past the threshold the new messages are
// committed with the boundary (the artifact holds q.pre, the boundary the
// history that replaces it) and proj becomes the new history's projection;
// past the soft threshold one is prepared ahead.
func (s *Session) proxyCompact(ctx context.Context, q *proxyPrep, proj *projection, plan *ProxyPlan, prog Progress) error {
	e := q.e
	if q.disp != ProxyAppend || !e.pol.AutoCompaction.Enabled || e.th.Threshold <= 0 || q.r.Unverified {
		return nil
	}
	used := proj.tokens + q.prefix
	switch {
	case e.asks() && !e.overLimit(used):
		if used >= e.th.Soft {
			s.propose(q.pre, e, q.envelope, used)
		}
	case used >= e.th.Threshold:
		res, err := s.compactHistory(ctx, q.pre, compactJob{
			trigger: compaction.TriggerAuto, strategy: "auto", e: e, prog: prog,
			envelope: q.envelope, twoPass: s.twoPass, with: commitWith{proxy: true}, summarizer: q.r.Summarizer,
		})
		ok, err := s.settleAuto(ctx, err)
		if err != nil {
			return err
		}
		if ok {
			s.px.compacted(s.live, q.pre, q.keys, s.compactions)
			s.saveMirror()
			*proj = s.project(s.live, e, false, false)
			if e.asks() {
				s.compactedUnasked(used, e)
			}
		}
		plan.Compaction = res
	case used >= e.th.Soft:
		s.prefire(q.pre, e, q.envelope, q.r.Summarizer)
	}
	return nil
}

// proxyPlan completes the plan of q from its projection and keeps the
// turn for the answer.
func (s *Session) proxyPlan(q *proxyPrep, proj projection, plan *ProxyPlan) {
	px, e, n := &s.px, q.e, len(q.keys)
	if q.disp == ProxyAppend {
		s.envelope, s.prefix, s.reserved, s.skipClearing = q.envelope, q.prefix, nil, false
	}
	s.trim(&proj, e)
	// Normalize and Clear return their input itself when they change
	// nothing: then the projection is the request's messages.
	plan.Unchanged = !proj.trimmed && (!q.mapped || px.head == 0 && px.covered == 0) && len(q.pre) == n &&
		len(proj.msgs) == n && (n == 0 || &proj.msgs[0] == &q.pre[0])
	plan.Stats = s.stats(e, proj)
	turn := &proxyTurn{key: q.key, disp: q.disp, keys: q.keys, msgs: q.r.Messages, c: q.c, window: q.r.WindowID}
	msgs := proj.msgs
	switch q.disp {
	case ProxyAppend, ProxyWindow, ProxyReplay:
		// A request of the conversation, sent as a prepared one is: its
		// cleared horizon is kept (a fresh window's once it replaced the
		// history, in proxyRecord) and it is the base and the cache
		// prediction of the next one; a turn is recorded in the timeline
		// with its answer.
		if q.disp != ProxyReplay {
			turn.request = s.requestRecord(e, proj, q.pre, nil, plan.Stats)
		}
		turn.horizon = proj.horizon
		msgs, _ = s.sendProjection(proj, q.pre, q.prefix, plan.Stats, q.disp == ProxyAppend)
		s.cache.prevOwn = q.own
	}
	// The transport holds the plan's messages while it encodes them: they
	// share no array with the session's.
	plan.Messages = append([]history.Message{}, msgs...)
	if q.disp != ProxyCounts {
		s.setSnapshot(plan.Stats)
		s.notifyPressure(plan.Stats)
	}
	px.turn++
	plan.Turn = px.turn
	px.pending[plan.Turn] = turn
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
	respKey := history.MessageKey(&resp.Message)
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
		// The agent's own window: it may carry back a summary of ours.
		if err := s.commit(context.WithoutCancel(ctx), s.live, next, findSummary(next), &b, commitWith{proxy: true}); err != nil {
			return fmt.Errorf("record the agent's new window: %w", err)
		}
		s.recordRequest(t.request)
		s.keepCleared(t.horizon)
		if err := s.recordAnswer(t, resp); err != nil {
			return err
		}
		px.newWindow(append(slices.Clone(t.keys), respKey), t.window, s.compactions)
		s.saveMirror()
	case ProxyBranch:
		return s.proxyBranch(ctx, t, resp, respKey)
	case ProxySide:
		px.answered(resp.Message.Text())
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
// (a workspace file comes with the repository and is untrusted input). It
// is loaded again when the file changed (userconfig.go); the value must
// not be modified.
func (m *Manager) UserConfig() (config.Config, error) {
	return m.userCfg.load(m.o.UserConfig)
}
