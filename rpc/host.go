package rpc

import (
	"context"
	"encoding/json"

	"github.com/vtcode/vtcode-ls/session"
)

// AttachFunc starts a second transport over the connection's session
// manager once initialize has added the workspaces (the in-process proxy).
// It receives the client's initializationOptions and must not block; ctx
// ends when the connection does.
type AttachFunc func(ctx context.Context, mgr *session.Manager, initOptions json.RawMessage)

// NewProgress implements session.ProgressSource: the work-done progress of
// work no request of this connection started (a proxied request's
// compaction), on a token the server creates when the client supports it.
func (n *notifier) NewProgress(ctx context.Context) session.Progress {
	if n.progress == nil {
		return nil
	}
	return n.progress.start(ctx, nil, func() {})
}

var _ session.ProgressSource = (*notifier)(nil)
