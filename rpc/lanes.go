package rpc

import "sync"

// lanes order the vtcode/* requests of a connection. Every request that
// names a session enters that session's lane on the read loop, in arrival
// order, and then runs on its own goroutine once the request ahead of it in
// the lane is done. Requests in different lanes run concurrently, so a slow
// compaction holds up only its own session and never the read loop.
//
// Requests without a session (listSessions, compactPrompt, workspace-level
// get/setPolicy, openSession without an id) share one workspace lane.
type lanes struct {
	mu sync.Mutex       // guards m and the lane fields
	m  map[string]*lane // by key; a lane is deleted when its last request leaves
}

type lane struct {
	tail       chan struct{} // done channel of the request that entered last
	compacting int           // compactions in progress by the running request
	// started is closed when compacting goes from 0 to 1, so snapshot
	// readers waiting in the lane can answer at once; nil while nobody
	// waits for it, and reset when compacting returns to 0.
	started chan struct{}
}

// A ticket is a request's place in a lane.
type ticket struct {
	l    *lanes
	key  string
	ln   *lane
	prev <-chan struct{} // closed when the request ahead is done; nil: none
	done chan struct{}
}

// closedChan is a closed channel: the "request ahead" of a request that has
// none.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// enter appends a request to the lane of key. An empty key gives a ticket
// that waits for nothing.
func (l *lanes) enter(key string) *ticket {
	t := &ticket{l: l, key: key, prev: closedChan, done: make(chan struct{})}
	if key == "" {
		return t
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[string]*lane{}
	}
	ln := l.m[key]
	if ln == nil {
		ln = &lane{}
		l.m[key] = ln
	} else {
		t.prev = ln.tail
	}
	ln.tail = t.done
	t.ln = ln
	return t
}

// leave marks the request done, letting the next one in its lane run. The
// caller must have waited for t.prev first, so that the lane stays in
// arrival order.
func (t *ticket) leave() {
	close(t.done)
	if t.ln == nil {
		return
	}
	t.l.mu.Lock()
	defer t.l.mu.Unlock()
	if t.ln.tail == t.done {
		delete(t.l.m, t.key)
	}
}

// setCompacting records that the request holding the lane began (on) or
// ended (off) a compaction.
func (t *ticket) setCompacting(on bool) {
	if t == nil || t.ln == nil {
		return
	}
	t.l.mu.Lock()
	defer t.l.mu.Unlock()
	if on {
		t.ln.compacting++
		if t.ln.compacting == 1 && t.ln.started != nil {
			close(t.ln.started)
		}
	} else if t.ln.compacting > 0 {
		t.ln.compacting--
		if t.ln.compacting == 0 {
			t.ln.started = nil
		}
	}
}

// compactionStarted returns a channel closed once a request ahead in t's
// lane is compacting (at once if one is). A snapshot reader (projectionStats)
// waiting in the lane uses it to answer during a compaction instead of
// after it. It is nil for a ticket outside any lane.
func (t *ticket) compactionStarted() <-chan struct{} {
	if t == nil || t.ln == nil {
		return nil
	}
	t.l.mu.Lock()
	defer t.l.mu.Unlock()
	if t.ln.started == nil {
		t.ln.started = make(chan struct{})
		if t.ln.compacting > 0 {
			close(t.ln.started)
		}
	}
	return t.ln.started
}

// compacting reports whether the request holding key's lane is compacting.
func (l *lanes) compacting(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := l.m[key]
	return ln != nil && ln.compacting > 0
}
