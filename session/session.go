package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
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
// readers may take without a turn while a compaction runs.
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
	patches        []json.RawMessage // session policy patches, oldest first
	route          route
	envelope       *compaction.Envelope // last request envelope, for prompt-cache reuse
	prefix         int                  // prefix tokens of the last request
	reserved       *int                 // reservedOutputTokens of the last request; nil: policy
	skipClearing   bool                 // the last request carried native context edits
	autoFailed     bool                 // the last automatic compaction failed or did nothing
	twoPass        *compaction.TwoPass
	compactions    int
	lastCompaction *Boundary
	artifacts      artifactSet // artifacts referenced by events
	usage          usageState
	rc             receiptState // the bills of the session's calls (receipt.go)
	agent          string       // the proxied agent's family ("" for an editor's session)
	ask            askState     // the compaction proposal of ask mode (ask.go)
	pol            polCache
	cm             contextState // context map timeline and compaction preview
	cache          cacheState   // cleared horizon, clearing memo, reuse prediction (cache.go)
	px             mirror       // the proxied agent's conversation (mirror.go)
	pxSaved        *mirrorData  // the mirror's last record since the last checkpoint (mirror.go)

	snapMu sync.Mutex // guards snap
	snap   Stats      // the last computed stats
}

// route is the provider route of a session, as the client named it.
type route struct {
	Provider      string `json:"provider"`
	Model         string `json:"model"`
	ContextWindow int    `json:"contextWindow,omitempty"`
}

// polCache caches the effective session policy for one workspace generation.
type polCache struct {
	gen    uint64
	npatch int
	valid  bool
	cfg    config.Config
	policy config.Policy
}

// Event types of the session log.
const (
	evMessages    = "messages"
	evResponse    = "response"
	evBoundary    = "compact_boundary"
	evRestore     = "restore"
	evPolicy      = "policy"
	evModelSwitch = "model_switch"
)

// Event payloads.
type (
	messagesData struct {
		Messages []history.Message `json:"messages"`
		Request  *requestData      `json:"request,omitempty"` // the prepared request's pressure (contextmap.go)
	}
	responseData struct {
		Message    history.Message `json:"message"`
		Usage      *history.Usage  `json:"usage,omitempty"`
		StopReason string          `json:"stopReason,omitempty"`
		// RequestEstimate is the estimate (projection + prefix) of the last
		// request prepared before the response, for the usage comparison.
		RequestEstimate int `json:"requestEstimate,omitempty"`
		// Receipt is the answer's bill (receipt.go).
		Receipt *receiptLine `json:"receipt,omitempty"`
	}
	// boundaryData carries the new live history, so replay needs no
	// recomputation and no artifact (it is a checkpoint), and the ref of the
	// artifact holding the history before it. What a compaction commits
	// together with it is in the same event, so that the commit is one
	// append: the route of a model switch, the response of a
	// recordResponse whose compaction block the provider made.
	boundaryData struct {
		Boundary
		Messages []history.Message  `json:"messages"`
		Artifact *store.ArtifactRef `json:"artifact,omitempty"`
		Route    *route             `json:"route,omitempty"`
		Response *responseData      `json:"response,omitempty"`
		Timeline *timelineData      `json:"timeline,omitempty"` // the context map's state (contextmap.go)
		Cost     *receiptLine       `json:"cost,omitempty"`     // the bill of the compaction's calls (receipt.go)
	}
	// restoreData names the artifact restored and carries its messages
	// (History, a checkpoint), so the log never depends on the artifact.
	// Logs of older versions have no History: replay then reads the
	// artifact, checking its message count.
	restoreData struct {
		ArtifactID       string             `json:"artifactId"`
		Messages         int                `json:"messages"`
		BackupArtifactID string             `json:"backupArtifactId,omitempty"`
		Backup           *store.ArtifactRef `json:"backup,omitempty"`
		History          []history.Message  `json:"history"`
		Timeline         *timelineData      `json:"timeline,omitempty"` // the context map's state (contextmap.go)
	}
	policyData struct {
		Policy json.RawMessage `json:"policy"`
	}
)

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
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.life, cancel)
	defer stop()
	ctx, done, err := s.m.turn(ctx, s.id, false)
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

// record appends an event durably and applies it. data is the typed
// payload (one of the *Data types or route); it is applied as is, without
// a round trip through JSON, so the estimates its messages carry are kept.
func (s *Session) record(typ string, data any) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encode %s event: %w", typ, err)
	}
	ev := store.Event{Type: typ, Time: s.m.now(), Data: raw, Messages: s.countAfter(data),
		Checkpoint: typ == evBoundary || typ == evRestore}
	if err := s.log.Append(ev); err != nil {
		return fmt.Errorf("record %s: %w", typ, err)
	}
	ev.Seq = s.log.LastSeq() // the session is the log's only writer
	return s.apply(ev, data, false)
}

// countAfter predicts the live length after an event, for [store.Event.Messages].
func (s *Session) countAfter(data any) int {
	switch d := data.(type) {
	case messagesData:
		return len(s.live) + len(d.Messages)
	case responseData:
		return len(s.live) + 1
	case boundaryData:
		return len(d.Messages)
	case restoreData:
		return d.Messages
	}
	return len(s.live)
}

// payload returns the typed payload of ev: data when it has type T, else ev's
// decoded Data (replay).
func payload[T any](ev store.Event, data any) (T, error) {
	if d, ok := data.(T); ok {
		return d, nil
	}
	var d T
	if err := json.Unmarshal(ev.Data, &d); err != nil {
		return d, fmt.Errorf("event %d (%s): %w", ev.Seq, ev.Type, err)
	}
	return d, nil
}

// apply applies one event to the in-memory state. It is the only code that
// changes the live history, both live (data is the typed payload) and on
// replay (data is nil), so a resumed session is exactly what it was. With
// past set (replay of an event before the last checkpoint, whose live
// history the checkpoint replaces) the messages are not decoded: only the
// small state (usage, compactions, artifacts, policy, route) is applied.
func (s *Session) apply(ev store.Event, data any, past bool) error {
	if past && ev.Type == evHorizon {
		return nil // the checkpoint after it starts a new history
	}
	if own, err := s.cache.applyEvent(ev, data); own || err != nil {
		return err
	}
	if ev.Type == evBoundary || ev.Type == evRestore {
		s.pxSaved = nil // a new history: the proxy's mirror of the old one is void
	}
	switch ev.Type {
	case evMessages:
		if past {
			return nil
		}
		d, err := payload[messagesData](ev, data)
		if err != nil {
			return err
		}
		s.appendLive(d.Messages...)
		s.applyRequest(d.Request)
	case evResponse:
		if past {
			d, err := payload[responseUsage](ev, nil)
			if err != nil {
				return err
			}
			s.applyResponse(nil, d.Usage, d.RequestEstimate)
			s.rc.answer(ev.Time, d.Receipt, s.catalog())
			return nil
		}
		d, err := payload[responseData](ev, data)
		if err != nil {
			return err
		}
		s.applyResponse(&d.Message, d.Usage, d.RequestEstimate)
		s.rc.answer(ev.Time, d.Receipt, s.catalog())
		s.cache.responded(d.Message, d.Usage, s.route.Provider)
	case evBoundary:
		if past {
			d, err := payload[boundaryMeta](ev, nil)
			if err != nil {
				return err
			}
			if d.Route != nil {
				s.applyRoute(*d.Route)
			}
			if r := d.Response; r != nil {
				s.applyResponse(nil, r.Usage, r.RequestEstimate)
				s.rc.answer(ev.Time, r.Receipt, s.catalog())
			}
			s.applyBoundary(ev, d.Boundary, d.Artifact)
			s.rc.compacted(d.Boundary, d.Cost, s.catalog())
			s.cm.applyBoundary(d.Boundary, d.Timeline)
			return nil
		}
		d, err := payload[boundaryData](ev, data)
		if err != nil {
			return err
		}
		if d.Route != nil {
			s.applyRoute(*d.Route)
		}
		if r := d.Response; r != nil {
			s.applyResponse(nil, r.Usage, r.RequestEstimate)
			s.rc.answer(ev.Time, r.Receipt, s.catalog())
		}
		s.live = nil
		s.cache.gen++ // a new history: no projection of the old one serves
		s.appendLive(d.Messages...)
		s.applyBoundary(ev, d.Boundary, d.Artifact)
		s.rc.compacted(d.Boundary, d.Cost, s.catalog())
		s.cm.applyBoundary(d.Boundary, d.Timeline)
	case evRestore:
		if past {
			d, err := payload[restoreMeta](ev, nil)
			if err != nil {
				return err
			}
			s.applyRestore(ev, d.BackupArtifactID, d.Backup)
			s.rc.restored()
			s.cm.checkpoint(d.Timeline)
			return nil
		}
		d, err := payload[restoreData](ev, data)
		if err != nil {
			return err
		}
		msgs := d.History
		if msgs == nil { // an older log: the artifact holds the history
			if msgs, err = s.log.ReadArtifact(store.ArtifactRef{ID: d.ArtifactID, Messages: d.Messages}); err != nil {
				return fmt.Errorf("event %d (%s): %w", ev.Seq, ev.Type, err)
			}
		}
		s.live = nil
		s.cache.gen++ // a new history: no projection of the old one serves
		s.appendLive(msgs...)
		s.applyRestore(ev, d.BackupArtifactID, d.Backup)
		s.rc.restored()
		s.cm.checkpoint(d.Timeline)
	case evPolicy:
		d, err := payload[policyData](ev, data)
		if err != nil {
			return err
		}
		s.patches = append(s.patches, d.Policy)
		s.pol.valid = false
		s.syncEstimator()
	case evModelSwitch:
		d, err := payload[route](ev, data)
		if err != nil {
			return err
		}
		s.applyRoute(d)
	case evRequest:
		return s.applyContextEvent(ev, data)
	case evReceipt:
		l, err := payload[receiptLine](ev, data)
		if err != nil {
			return err
		}
		s.rc.answer(ev.Time, &l, s.catalog())
	case evProxyMirror:
		return s.applyMirror(ev, data, past)
	default:
		s.m.logger.Warn("session: unknown event type ignored", "session", s.id, "seq", ev.Seq, "type", ev.Type)
	}
	return nil
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
