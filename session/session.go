package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/vtcode/vtcode-ls/compaction"
	"github.com/vtcode/vtcode-ls/config"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/catalog"
	"github.com/vtcode/vtcode-ls/store"
)

// Session is one agent conversation of a workspace.
//
// Every field below life is owned by the call holding the session's turn
// (see [Manager.Reserve]); snapMu guards only the last computed stats, which
// readers may take without a turn while a compaction runs. The parts with a
// type of their own (usage, rc, pol, cm, preview, cache) apply the events of
// the log to themselves (event.go).
type Session struct {
	id  string
	ws  *workspace
	m   *Manager
	log *store.Log

	life context.Context    // cancelled when the session closes
	stop context.CancelFunc // cancels life

	// Owned by the holder of the session's turn.
	closed         bool
	live           []history.Message // the live history; every element estimated with est
	est            *history.Estimator
	route          route
	envelope       *compaction.Envelope // last request envelope, for prompt-cache reuse
	prefix         int                  // prefix tokens of the last request
	reserved       *int                 // reservedOutputTokens of the last request; nil: policy
	skipClearing   bool                 // the last request carried native context edits
	autoFailed     bool                 // the last automatic compaction failed or did nothing
	twoPass        *compaction.TwoPass
	compactions    int
	lastCompaction *Boundary
	summary        summaryMark  // where the live history holds the engine's summary (summary.go)
	artifacts      artifactSet  // artifacts referenced by events
	usage          usageState   // the provider usage the answers reported (usage.go)
	rc             receiptState // the bills of the session's calls (receipt.go)
	agent          string       // the proxied agent's family ("" for an editor's session)
	ask            askState     // the compaction proposal of ask mode (ask.go)
	pol            policyState  // the session's policy patches and its effective policy (policy.go)
	cm             contextState // the context map's timeline (contextmap.go)
	preview        previewState // the compaction preview awaiting its commit (preview.go)
	cache          cacheState   // cleared horizon, clearing memo, reuse prediction (cache.go)
	px             mirror       // the proxied agent's conversation (mirror.go)
	pxSaved        *mirrorData  // the mirror's last record since the last checkpoint (mirror.go)

	snapMu sync.Mutex // guards snap
	snap   Stats      // the last computed stats

	bills pendingBills // summarizer bills not recorded yet; safe for concurrent use (receipt.go)
}

// route is the provider route of a session, as the client named it.
type route struct {
	Provider      string `json:"provider"`
	Model         string `json:"model"`
	ContextWindow int    `json:"contextWindow,omitempty"`
}

// openSession opens the log of session id in w, replays it and applies the
// route of the parameters.
func openSession(ctx context.Context, m *Manager, w *workspace, id string, p OpenParams) (*Session, bool, error) {
	st, err := w.store()
	if err != nil {
		return nil, false, err
	}
	log, err := st.OpenSession(id)
	if err != nil {
		var busy *store.BusyError
		switch {
		case errors.Is(err, store.ErrInvalidID):
			return nil, false, paramErr("sessionId", "%s", idMsg(err))
		case errors.As(err, &busy):
			return nil, false, busy // names the session and the owner's pid
		}
		return nil, false, fmt.Errorf("open session %s: %w", id, err)
	}
	s := &Session{id: id, ws: w, m: m, log: log, artifacts: artifactSet{}}
	s.life, s.stop = context.WithCancel(context.Background())
	s.twoPass = compaction.NewTwoPass(m.logger.With("session", id))
	s.est = history.NewEstimator(tokenizerOf(s.policy()))

	resumed := log.Len() > 0
	err = s.replay(ctx)
	if err == nil {
		err = s.adoptRoute(p.Provider, p.Model, p.ContextWindow)
	}
	if err != nil {
		s.stop()
		log.Close()
		return nil, false, fmt.Errorf("open session %s: %w", id, err)
	}
	s.reportRepair()
	s.tidyArtifacts(log.Repaired() == nil)
	return s, resumed, nil
}

// do runs fn in the caller's turn of the session's queue, with ctx also
// cancelled when the session closes.
func (s *Session) do(ctx context.Context, fn func(ctx context.Context, s *Session) error) error {
	return s.doIn(ctx, nil, fn)
}

// doIn is do in t's place (see [Manager.turn]): in the turn t holds when it
// is a ticket of the session's queue.
func (s *Session) doIn(ctx context.Context, t *Ticket, fn func(ctx context.Context, s *Session) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.life, cancel)
	defer stop()
	_, done, err := s.m.turn(ctx, t, s.id, false)
	if err != nil {
		return err
	}
	defer done()
	if s.closed {
		return fmt.Errorf("%w %q", ErrUnknownSession, s.id)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return fn(ctx, s)
}

// appendLive appends messages to the live history, estimating each and
// warming clearing's token memo for them, so that no request re-tokenizes
// an old message.
func (s *Session) appendLive(msgs ...history.Message) {
	s.live = slices.Grow(s.live, len(msgs))
	start := len(s.live)
	for _, msg := range msgs {
		s.live = append(s.live, msg)
		s.est.Message(&s.live[len(s.live)-1])
	}
	s.cache.warm(s.est, s.live[start:])
}

// adoptRoute records a route change given by openSession: an empty provider
// and model keep the current route.
func (s *Session) adoptRoute(provider, model string, window int) error {
	if provider == "" && model == "" && window == 0 {
		return nil
	}
	r := s.route
	if provider != "" || model != "" {
		r = route{Provider: provider, Model: model}
	}
	if window > 0 {
		r.ContextWindow = window
	}
	if r == s.route {
		return nil
	}
	return s.record(evModelSwitch, r)
}

// providerRoute builds the providers.Route of r under cfg. Whether the route
// accepts the Anthropic clearing edits is the catalog's answer for its model
// (cat, the workspace's catalog; nil: the built-in one) unless
// [providers.<name>] supports_context_edits overrides it.
func providerRoute(r route, cfg config.Config, cat *catalog.Catalog) providers.Route {
	name := catalog.CanonicalProvider(r.Provider)
	if name == "" {
		name = "offline"
	}
	pr := providers.Route{Provider: name, Model: r.Model, NativeCompaction: compaction.NativeAuto}
	info, _ := cat.Lookup(name, r.Model)
	pr.SupportsContextEdits = info.ContextEdits
	if pc, ok := providerConfig(cfg, name); ok {
		pr.BaseURL = pc.BaseURL
		if pc.NativeCompaction != "" {
			pr.NativeCompaction = pc.NativeCompaction
		}
		if pc.SupportsContextEdits != nil {
			pr.SupportsContextEdits = *pc.SupportsContextEdits
		}
	}
	return pr
}

// newID returns a fresh session or artifact id: the UTC time and 32 random
// bits, e.g. 20261015T232419.123Z-9f86d081.
func newID(t time.Time) string {
	var b [4]byte
	rand.Read(b[:])
	return t.UTC().Format("20060102T150405.000Z") + "-" + hex.EncodeToString(b[:])
}

// bound cuts s to n bytes on a rune boundary.
func bound(s string, n int) string { return providers.Bound(s, n) }
