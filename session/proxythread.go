package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"sync"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/store"
)

// This file chooses the thread a proxied request goes to. An agent key
// (a header or body id, else a fingerprint of the conversation's start)
// has a main session and the sessions of its other threads: branches a
// rewind made, a subagent's or a side request's conversation. The request
// goes to the one whose mirror fits it best ([mirror.affinity]).

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

// proxyThread returns the session a proxied request goes to: the session
// of its key whose mirror fits it best (the longest shared prefix, or the
// one expecting a fresh window; see mirror.affinity). A request that fits
// none is a new thread (a subagent, a side request), but for the agent's
// own compaction request, which summarizes the main conversation.
func (m *Manager) proxyThread(ctx context.Context, w *workspace, r ProxyRequest, key string, keys []string) (*Session, error) {
	ids := m.proxyThreads(w, key, r.Unverified)
	if r.Unverified && len(ids) == 0 {
		return nil, ErrProxyUnverified
	}
	chosen, best, err := m.proxyBest(ctx, w, r, key, keys, ids)
	switch {
	case err != nil:
		return nil, err
	case best > 0:
		return chosen, nil
	case r.Unverified:
		return nil, ErrProxyUnverified
	case r.Kind == ProxyAgentCompaction:
		// The agent's summarizer with a prompt of its own (opencode): it
		// summarizes the main conversation, whose next request is a fresh
		// window.
		return m.proxySession(ctx, w, ids[0], r)
	}
	id := proxyID(key, fingerprint(r.System, r.Messages))
	m.px.add(key, id)
	return m.proxySession(ctx, w, id, r)
}

// proxyThreads returns the sessions of an agent key, main conversation
// first: those this process knows, else the stored ones (proxyStored; for
// an unverified request only those that exist), which it then knows.
func (m *Manager) proxyThreads(w *workspace, key string, unverified bool) []string {
	if ids := m.px.get(key); len(ids) > 0 {
		return ids
	}
	ids := m.proxyStored(w, key)
	if unverified {
		ids = m.proxyExisting(w, ids)
	}
	for _, id := range ids {
		m.px.add(key, id)
	}
	return ids
}

// proxyBest opens the sessions ids of an agent key and returns the one
// whose mirror fits the request with digests keys best, and how well
// (mirror.affinity); best is -1 when none opened.
func (m *Manager) proxyBest(ctx context.Context, w *workspace, r ProxyRequest, key string, keys, ids []string) (chosen *Session, best int, err error) {
	best = -1
	for _, id := range ids {
		s, err := m.proxySession(ctx, w, id, r)
		if err != nil {
			if len(ids) > 1 && id != proxyID(key) {
				// A stored branch another process holds, or a broken one:
				// the conversation goes on in the others.
				m.logger.Warn("session: a stored thread of a proxied conversation did not open", "session", id, "err", err)
				continue
			}
			return nil, 0, err
		}
		var c int
		err = s.do(ctx, func(ctx context.Context, s *Session) error {
			s.proxyInit()
			c = s.px.affinity(r, keys)
			return nil
		})
		if err != nil {
			return nil, 0, err
		}
		if c > best {
			chosen, best = s, c
		}
	}
	return chosen, best, nil
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
