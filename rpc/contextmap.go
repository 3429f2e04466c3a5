package rpc

import (
	"context"

	"github.com/vtcode/vtcode-ls/session"
)

// CodeContentModified (LSP's ContentModified) answers a vtcode/compact
// that commits a preview after the session's history changed: nothing was
// changed, and the client may preview again.
const CodeContentModified = -32801

// compactRequest are the params of vtcode/compact: a compaction, a preview
// (preview: true) or the commit of a preview (previewId, summary?).
type compactRequest struct {
	CompactParams
	Preview   bool    `json:"preview,omitempty"`
	PreviewID string  `json:"previewId,omitempty"`
	Summary   *string `json:"summary,omitempty"`
}

// compact answers vtcode/compact.
func (s *server) compact(ctx context.Context, p *compactRequest, t *session.Ticket, pr session.Progress) (any, error) {
	p.Ticket = t
	switch {
	case p.Preview && p.PreviewID != "":
		return nil, &session.ParamError{Path: "previewId", Msg: "must not be combined with preview: true"}
	case p.Preview:
		return s.mgr.PreviewCompact(ctx, p.CompactParams.CompactParams, pr)
	case p.PreviewID != "":
		return s.mgr.CommitPreview(ctx, session.CommitParams{SessionID: p.SessionID, PreviewID: p.PreviewID, Summary: p.Summary, Place: p.Place})
	case p.Summary != nil:
		return nil, &session.ParamError{Path: "summary", Msg: "is only accepted with previewId"}
	}
	return s.mgr.Compact(ctx, p.CompactParams.CompactParams, pr)
}

// contextMap answers vtcode/contextMap.
func (s *server) contextMap(ctx context.Context, p *sessionParams, t *session.Ticket, _ session.Progress) (*session.ContextMap, error) {
	return s.mgr.ContextMap(ctx, p.SessionID, t)
}
