package proxy

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/vtcode/vtcode-ls/session"
)

// workspacePrefix starts the path prefix that names a workspace:
// /w/<id>/…, where id is the workspace root in unpadded base64url. The id
// carries the folder itself, so a URL handed to an agent keeps naming the
// same workspace across daemon restarts.
const workspacePrefix = "/w/"

// WorkspaceBase returns the path prefix that routes an agent's requests to
// the sessions of workspace root (a resolved folder, see
// [session.WorkspaceRoot]): "/w/<id>", without a trailing slash.
func WorkspaceBase(root string) string {
	return workspacePrefix + base64.RawURLEncoding.EncodeToString([]byte(root))
}

// splitWorkspace cuts a workspace prefix off a request path: the workspace
// root it names and the rest of the path. ok is false when the path has no
// prefix; err reports a prefix that names no folder.
func splitWorkspace(path string) (root, rest string, ok bool, err error) {
	tail, found := strings.CutPrefix(path, workspacePrefix)
	if !found {
		return "", path, false, nil
	}
	id, rest, _ := strings.Cut(tail, "/")
	dir, err := base64.RawURLEncoding.DecodeString(id)
	if err != nil || len(dir) == 0 {
		return "", "", true, errBadPrefix
	}
	root, err = session.WorkspaceRoot(string(dir))
	if err != nil {
		return "", "", true, err
	}
	return root, "/" + rest, true, nil
}

var errBadPrefix = errors.New("the /w/ prefix does not name a workspace folder")

// Workspaces is the proxy of a daemon that serves many workspaces: a
// request under a workspace prefix ([WorkspaceBase]) goes, prefix removed,
// to a [Server] of that workspace; any other request to the Server of
// Options.Workspace (empty: the Manager's first workspace), as a proxy of
// one workspace would take it.
type Workspaces struct {
	o Options

	mu      sync.Mutex
	servers map[string]*Server // by workspace root; "" for the default
}

// NewWorkspaces returns the proxy of every workspace of o.Manager.
func NewWorkspaces(o Options) *Workspaces {
	return &Workspaces{o: o, servers: map[string]*Server{}}
}

type workspaceKey struct{}

// RequestWorkspace returns the workspace root a request of [Workspaces]
// was routed to by its prefix, "" for a request without one.
func RequestWorkspace(ctx context.Context) string {
	root, _ := ctx.Value(workspaceKey{}).(string)
	return root
}

// ServeHTTP implements http.Handler.
func (h *Workspaces) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	root, rest, ok, err := splitWorkspace(r.URL.Path)
	if err != nil {
		writeError(w, http.StatusNotFound, "vtcode-ls proxy: "+err.Error())
		return
	}
	if ok {
		r2 := r.Clone(context.WithValue(r.Context(), workspaceKey{}, root))
		r2.URL.Path, r2.URL.RawPath = rest, ""
		r = r2
	}
	h.server(root).ServeHTTP(w, r)
}

// server returns the Server of a workspace root, "" for the default one.
func (h *Workspaces) server(root string) *Server {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.servers[root]
	if s == nil {
		o := h.o
		if root != "" {
			o.Workspace = root
		}
		s = New(o)
		h.servers[root] = s
	}
	return s
}
