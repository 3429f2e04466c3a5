// Package daemon is the per-user shared daemon of vtcode-ls: one process
// that owns every workspace's sessions, their locks and the proxy listener,
// and that every editor window and `vtcode-ls run` agent of the user
// attaches to, the way gopls -remote=auto works.
//
// # The control socket
//
// The daemon listens on a Unix domain socket ([SocketPath]):
// $VTCODE_DAEMON_DIR, else $XDG_RUNTIME_DIR/vtcode, else the user cache
// folder's vtcode/run, in a folder of mode 0700 owned by the user (checked
// before use), so another user cannot connect. The name carries the
// protocol version (vtcode-ls-v1.sock): a client of another version starts
// and talks to its own daemon. A lock file next to it makes one process
// the owner of the name; a socket nobody answers on is stale and replaced.
// Never TCP. Windows has no such socket here: there the command serves in
// process ([Supported]).
//
// # A connection
//
// A connection starts with one JSON line from the client, the request
// ({"op":"attach"}, {"op":"status"}, {"op":"stop"}, {"op":"ping"} or
// {"op":"hold"}, which keeps the daemon alive while it is open), and one JSON line
// from the daemon, the answer ({"ok":true,…} or {"error":"…"}). After an
// attach answer the connection is one protocol client: the client sends
// the vtcode-ls protocol (LSP framing) as it is, and the daemon answers in
// chunks (a kind byte, a big-endian uint32 length, the bytes): kind 'd'
// carries protocol bytes, kind 'x' ends the connection with the exit code
// the in-process server would have had (rpc.ExitCode). The forwarder
// ([Attach]) copies both ways, so the protocol on the editor's stdio does
// not change. When the editor's stdio are pipes or sockets, the client
// instead hands them over ({"op":"attach","files":true}, then their two
// descriptors in one SCM_RIGHTS message, [AttachFiles]): the daemon reads
// and writes them itself, and the socket carries only the exit chunk (and
// its end tells the daemon that the client went away).
//
// The proxy (proxy.Workspaces) routes /w/<id>.<mac>/… to the workspace
// id names; the MAC is made with a key kept beside the socket
// (proxy.key, 0600), so only the user makes such a prefix (the hold
// answer of vtcode-ls run carries it) and it stays valid in the next
// daemon.
//
// Every connection is an rpc server over one shared session.Manager
// (rpc.Shared): a client sees the sessions and the notifications of its
// own workspaces, and two clients of one workspace work on the same
// sessions in the same queues.
//
// # Lifetime
//
// The daemon exits Options.Idle after its last client left (hold
// connections count) and its last proxied request ended, on a stop request, or on SIGTERM; it closes every
// session (releasing the locks) first. A daemon that dies loses nothing
// acknowledged: sessions are on disk, and the clients' next connection
// starts a new daemon ([Ensure]) that resumes them.
package daemon
