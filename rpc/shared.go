package rpc

import (
	"context"
	"slices"
	"sync"

	"github.com/vtcode/vtcode-ls/session"
)

// Shared is a session manager that several connections serve at once (the
// per-user daemon): every client of a workspace sees its sessions live and
// works on the same sessions, in the same queues.
//
// Join is called once per connection with the connection's notifier, which
// the shared manager must give every notification to (the connection sends
// only those of its own workspaces); leave is called when the connection
// ends, and the manager is not closed. A connection's workspaces are the
// folders of its initialize and workspace/didChangeWorkspaceFolders and
// the ones its requests name; an omitted workspace means its first folder,
// and vtcode/listSessions without one lists its folders only.
type Shared interface {
	Join(n session.Notifier) (mgr *session.Manager, leave func())
}

// A scope is the workspaces of a connection to a shared manager, in the
// order they were added. A nil scope (a manager of its own) holds every
// workspace and changes no parameter.
type scope struct {
	mu      sync.Mutex
	folders []string // resolved roots (session.WorkspaceRoot)
}

// add adds a folder (path or URI); one that does not resolve is skipped
// (the manager reports it).
func (c *scope) add(folder string) {
	if c == nil {
		return
	}
	root, err := session.WorkspaceRoot(folder)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !slices.Contains(c.folders, root) {
		c.folders = append(c.folders, root)
	}
}

// has reports whether root is one of the connection's workspaces.
func (c *scope) has(root string) bool {
	if c == nil {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Contains(c.folders, root)
}

func (c *scope) list() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.folders)
}

// errNoFolder is the manager's answer to an omitted workspace when no
// folder is open, which a shared manager (that has other clients' folders)
// would not give.
var errNoFolder = &session.ParamError{Path: "workspace", Msg: "no workspace folder is open; pass one"}

// scopeWorkspace fills an omitted workspace with the connection's first
// folder, and adds a named one to its workspaces.
func (s *server) scopeWorkspace(ws *string) error {
	if s.scope == nil {
		return nil
	}
	if *ws != "" {
		s.scope.add(*ws)
		return nil
	}
	folders := s.scope.list()
	if len(folders) == 0 {
		return errNoFolder
	}
	*ws = folders[0]
	return nil
}

// scopeOpen picks the workspace of an openSession that names none: as a
// manager of its own would, a session id stored in one of the connection's
// folders opens there, anything else in its first folder.
func (s *server) scopeOpen(ctx context.Context, p *session.OpenParams) error {
	if s.scope == nil || p.Workspace != "" || p.SessionID == "" {
		return s.scopeWorkspace(&p.Workspace)
	}
	folders := s.scope.list()
	if len(folders) > 1 {
		for _, f := range folders {
			infos, err := s.mgr.ListSessions(ctx, session.ListParams{Workspace: f})
			if err != nil {
				continue
			}
			for _, in := range infos {
				if in.SessionID == p.SessionID {
					p.Workspace = f
					return nil
				}
			}
		}
	}
	return s.scopeWorkspace(&p.Workspace)
}

// scopeList lists the sessions of the named workspace, or of every
// workspace of the connection.
func (s *server) scopeList(ctx context.Context, p session.ListParams) ([]session.SessionInfo, error) {
	if s.scope == nil || p.Workspace != "" {
		if s.scope != nil {
			s.scope.add(p.Workspace)
		}
		return s.mgr.ListSessions(ctx, p)
	}
	out := []session.SessionInfo{}
	for _, f := range s.scope.list() {
		list, err := s.mgr.ListSessions(ctx, session.ListParams{Workspace: f, Place: p.Place}) // one turn
		if err != nil {
			return nil, err
		}
		out = append(out, list...)
	}
	return out, nil
}

// WorkspaceProgress is implemented by the notifier a connection gives
// [Shared.Join]: the progress of work no request started (a proxied
// request's compaction) in workspace, shown by this client when the
// workspace is one of its own; nil otherwise.
type WorkspaceProgress interface {
	NewWorkspaceProgress(ctx context.Context, workspace string) session.Progress
}

// NewWorkspaceProgress implements [WorkspaceProgress].
func (n *notifier) NewWorkspaceProgress(ctx context.Context, workspace string) session.Progress {
	if n.accept != nil && !n.accept(workspace) {
		return nil
	}
	return n.NewProgress(ctx)
}
