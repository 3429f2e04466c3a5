package proxy

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/vtcode/vtcode-ls/session"
)

// workspacePrefix starts the path prefix that names a workspace:
// /w/<id>.<mac>/…, where id is the workspace root in unpadded base64url
// and mac its HMAC-SHA256 under the daemon's key (truncated to 16 bytes,
// base64url). The id carries the folder itself and the key outlives the
// daemon, so a URL handed to an agent keeps naming the same workspace
// across daemon restarts; only the key's owner (the user) can make one.
const workspacePrefix = "/w/"

// WorkspaceBase returns the path prefix that routes an agent's requests to
// the sessions of workspace root (a resolved folder, see
// [session.WorkspaceRoot]) under key: "/w/<id>.<mac>", without a
// trailing slash.
func WorkspaceBase(root string, key []byte) string {
	enc := base64.RawURLEncoding
	return workspacePrefix + enc.EncodeToString([]byte(root)) + "." + enc.EncodeToString(prefixMAC(key, root))
}

func prefixMAC(key []byte, root string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(root))
	return m.Sum(nil)[:16]
}

// splitWorkspace cuts a workspace prefix off a request path: the workspace
// root it names and the rest of the path. ok is false when the path has no
// prefix; err reports a prefix that is not one of key's or names no
// folder.
func splitWorkspace(path string, key []byte) (root, rest string, ok bool, err error) {
	tail, found := strings.CutPrefix(path, workspacePrefix)
	if !found {
		return "", path, false, nil
	}
	id, rest, _ := strings.Cut(tail, "/")
	idPart, macPart, _ := strings.Cut(id, ".")
	dir, err := base64.RawURLEncoding.DecodeString(idPart)
	mac, merr := base64.RawURLEncoding.DecodeString(macPart)
	if err != nil || merr != nil || len(dir) == 0 || len(key) == 0 || !hmac.Equal(mac, prefixMAC(key, string(dir))) {
		return "", "", true, errBadPrefix
	}
	root, err = session.WorkspaceRoot(string(dir))
	if err != nil {
		return "", "", true, err
	}
	return root, "/" + rest, true, nil
}

var errBadPrefix = errors.New("the /w/ prefix is not one this daemon made (start the agent with vtcode-ls run)")

// Workspaces is the proxy of a daemon that serves many workspaces: a
// request under a workspace prefix ([WorkspaceBase]) goes, prefix removed,
// to a [Server] of that workspace; any other request to the Server of
// Options.Workspace (empty: the Manager's first workspace), as a proxy of
// one workspace would take it. A prefix must carry the MAC of key (403
// otherwise): the folders are chosen by the user, not by whoever reaches
// the port.
type Workspaces struct {
	o   Options
	key []byte

	mu      sync.Mutex
	servers map[string]*Server // by workspace root; "" for the default
}

// NewWorkspaces returns the proxy of every workspace of o.Manager, whose
// prefixes are made with key ([WorkspaceBase]).
func NewWorkspaces(o Options, key []byte) *Workspaces {
	return &Workspaces{o: o, key: key, servers: map[string]*Server{}}
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
	root, rest, ok, err := splitWorkspace(r.URL.Path, h.key)
	switch {
	case errors.Is(err, errBadPrefix):
		// Only the user picks the folders sessions are written in; a
		// caller of the port cannot name one.
		writeError(w, http.StatusForbidden, "vtcode-ls proxy: "+err.Error())
		return
	case err != nil:
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
