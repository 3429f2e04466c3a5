package daemon

import (
	"context"
	"log/slog"
	"sync"

	"github.com/vtcode/vtcode-ls/proxy"
	"github.com/vtcode/vtcode-ls/rpc"
	"github.com/vtcode/vtcode-ls/session"
)

// A hub is the Notifier of the shared session manager: it hands every
// notification to every connected client's notifier, which keeps those of
// its own workspaces (rpc.Shared). It implements rpc.Shared.
type hub struct {
	mgr    *session.Manager // set once, before the first Join
	logger *slog.Logger
	// changed is called when a client joins or leaves (the idle timer).
	changed func(clients int)

	mu      sync.Mutex
	members map[*member]struct{}
}

type member struct{ n session.Notifier }

var (
	_ session.Notifier         = (*hub)(nil)
	_ session.ProgressSource   = (*hub)(nil)
	_ session.ProposalNotifier = (*hub)(nil)
	_ rpc.Shared               = (*hub)(nil)
)

// Join implements rpc.Shared.
func (h *hub) Join(n session.Notifier) (*session.Manager, func()) {
	m := &member{n: n}
	h.mu.Lock()
	h.members[m] = struct{}{}
	count := len(h.members)
	h.mu.Unlock()
	h.changed(count)
	var once sync.Once
	return h.mgr, func() {
		once.Do(func() {
			h.mu.Lock()
			delete(h.members, m)
			count := len(h.members)
			h.mu.Unlock()
			h.changed(count)
		})
	}
}

// each calls fn for every member. The session's queue is held meanwhile
// (see session.Notifier), so the notifications of a session reach every
// client in order.
func (h *hub) each(fn func(session.Notifier)) int {
	h.mu.Lock()
	ns := make([]session.Notifier, 0, len(h.members))
	for m := range h.members {
		ns = append(ns, m.n)
	}
	h.mu.Unlock()
	for _, n := range ns {
		fn(n)
	}
	return len(ns)
}

func (h *hub) TokenPressure(ev session.PressureEvent) {
	h.each(func(n session.Notifier) { n.TokenPressure(ev) })
}

func (h *hub) CompactBoundary(ev session.BoundaryEvent) {
	h.each(func(n session.Notifier) { n.CompactBoundary(ev) })
	h.logger.Info("compacted", "session", ev.SessionID, "workspace", ev.Workspace, "trigger", ev.Trigger)
}

// CompactionProposed implements session.ProposalNotifier: every client
// hears of a proposal (its notifier keeps those of its workspaces; every
// rpc connection's takes proposals).
func (h *hub) CompactionProposed(ev session.ProposalEvent) {
	h.each(func(n session.Notifier) {
		if p, ok := n.(session.ProposalNotifier); ok {
			p.CompactionProposed(ev)
		}
	})
}

func (h *hub) ShowMessage(level int, text string) {
	if h.each(func(n session.Notifier) { n.ShowMessage(level, text) }) == 0 {
		h.logger.Warn(text)
	}
}

func (h *hub) LogMessage(level int, text string) {
	if h.each(func(n session.Notifier) { n.LogMessage(level, text) }) == 0 {
		h.logger.Info(text)
	}
}

// NewProgress implements session.ProgressSource for a proxied request's
// compaction: every client of the request's workspace shows it.
func (h *hub) NewProgress(ctx context.Context) session.Progress {
	ws := proxy.RequestWorkspace(ctx)
	if ws == "" {
		if all := h.mgr.Workspaces(); len(all) > 0 {
			ws = all[0] // the bare port's workspace
		}
	}
	var ps fanProgress
	h.each(func(n session.Notifier) {
		if src, ok := n.(rpc.WorkspaceProgress); ok {
			if p := src.NewWorkspaceProgress(ctx, ws); p != nil {
				ps = append(ps, p)
			}
		}
	})
	if len(ps) == 0 {
		return nil
	}
	return ps
}

// fanProgress reports one operation to several clients.
type fanProgress []session.Progress

func (f fanProgress) Begin(title string) {
	for _, p := range f {
		p.Begin(title)
	}
}

func (f fanProgress) Report(message string, percent int) {
	for _, p := range f {
		p.Report(message, percent)
	}
}

func (f fanProgress) End(message string) {
	for _, p := range f {
		p.End(message)
	}
}
