package rpc

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/session"
)

// Projection deltas: a client that sets
// capabilities.experimental.vtcode.projectionDelta in initialize gets each
// vtcode/prepareRequest result with a revision, and, when it echoes the
// revision of the last projection it received for that session as
// baseRevision, the projection as a change against it: keep the first
// delta.keep messages of that projection, then append delta.messages. A
// stale or missing baseRevision (another client prepared in between, the
// daemon restarted, the client lost track) gets the whole projection, with
// its revision. See doc.go.

// ExperimentalClientCapabilities are the client's experimental
// capabilities this server reads.
type ExperimentalClientCapabilities struct {
	VTCode *VTCodeClientCapabilities `json:"vtcode,omitempty"`
}

// VTCodeClientCapabilities are the vtcode capabilities of a client.
type VTCodeClientCapabilities struct {
	// ProjectionDelta: the client applies projection deltas.
	ProjectionDelta bool `json:"projectionDelta,omitempty"`
}

// prepareDeltaParams are vtcode/prepareRequest's params with the revision
// of the client's previous projection.
type prepareDeltaParams struct {
	PrepareRequestParams
	BaseRevision string `json:"baseRevision,omitempty"`
}

// ProjectionDelta is the change from the projection named BaseRevision: the
// first Keep messages stay, Messages follow them.
type ProjectionDelta struct {
	BaseRevision string            `json:"baseRevision"`
	Keep         int               `json:"keep"`
	Messages     []history.Message `json:"messages"`
}

// prepareDeltaResult is vtcode/prepareRequest's result for a client that
// applies deltas: exactly one of Messages and Delta is set.
type prepareDeltaResult struct {
	Revision          string                 `json:"revision"`
	Messages          *[]history.Message     `json:"messages,omitempty"`
	Delta             *ProjectionDelta       `json:"delta,omitempty"`
	Stats             session.Stats          `json:"stats"`
	ContextManagement json.RawMessage        `json:"contextManagement,omitempty"`
	Compaction        *session.CompactResult `json:"compaction,omitempty"`
	Trimmed           bool                   `json:"trimmed"`
}

// deltas is a connection's delta state: whether the client applies deltas,
// and per session the revision of the last projection sent to it.
type deltas struct {
	mu      sync.Mutex
	enabled bool
	sent    map[string]string // session id → revision
}

// enable records the client's capability from initialize.
func (d *deltas) enable(c *ExperimentalClientCapabilities) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.enabled = c != nil && c.VTCode != nil && c.VTCode.ProjectionDelta
}

func (d *deltas) on() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.enabled
}

// result encodes res for a delta client whose previous projection is base.
func (d *deltas) result(id, base string, res *session.PrepareResult) *prepareDeltaResult {
	out := &prepareDeltaResult{Revision: res.Base.Revision, Stats: res.Stats,
		ContextManagement: res.ContextManagement, Compaction: res.Compaction, Trimmed: res.Trimmed}
	d.mu.Lock()
	last, known := d.sent[id]
	if d.sent == nil {
		d.sent = map[string]string{}
	}
	d.sent[id] = res.Base.Revision
	d.mu.Unlock()
	// A delta only against the projection this client received last, when
	// it is also the session's previous one.
	if base != "" && known && base == last && base == res.Base.Previous {
		keep := min(res.Base.Keep, len(res.Messages))
		out.Delta = &ProjectionDelta{BaseRevision: base, Keep: keep, Messages: res.Messages[keep:]}
		return out
	}
	out.Messages = &res.Messages
	return out
}

// forget drops a closed session.
func (d *deltas) forget(id string) {
	d.mu.Lock()
	delete(d.sent, id)
	d.mu.Unlock()
}

// prepareRequestDelta is vtcode/prepareRequest: the whole projection for a
// client without the capability, a revisioned (and, given a current
// baseRevision, delta) result for one with it.
func (s *server) prepareRequestDelta(ctx context.Context, p *prepareDeltaParams, t *session.Ticket, pr session.Progress) (any, error) {
	p.Ticket = t
	res, err := s.mgr.PrepareRequest(ctx, p.PrepareParams, pr)
	if err != nil || !s.delta.on() {
		return res, err
	}
	return s.delta.result(p.SessionID, p.BaseRevision, res), nil
}

// recordParams are vtcode/recordResponse's params with a usage that may use
// the provider's own names for the cache counts (session.ReportedUsage).
type recordParams struct {
	session.RecordParams
	Usage *session.ReportedUsage `json:"usage,omitempty"`
}

func (s *server) recordResponseUsage(ctx context.Context, p *recordParams, t *session.Ticket, _ session.Progress) (*session.RecordResult, error) {
	rp := p.RecordParams
	rp.Ticket = t
	if p.Usage != nil {
		u := p.Usage.Usage()
		rp.Usage = &u
	}
	return s.mgr.RecordResponse(ctx, rp)
}
