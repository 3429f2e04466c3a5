package session

import (
	"context"
	"slices"
	"sync"
)

// The Manager is the one owner of the order of calls. Every call that names
// a session runs alone in that session's queue, in the order the calls
// entered it; the calls that name no session (ListSessions, CompactPrompt,
// OpenSession without an id, workspace-level GetPolicy and SetPolicy) share
// one workspace queue the same way. Queues of different keys run
// concurrently.
//
// A call enters its queue when it is made, unless it is given a [Ticket]
// for that queue (see [Manager.Reserve]; the Ticket field of its params,
// [Place], or its ticket argument): then it runs in the ticket's place. A
// transport that reads requests from one stream reserves a ticket per
// request as it reads them, so that their order is the arrival order even
// though it runs them on goroutines.

// order holds the queues of a Manager, by key: a session id, or "" for the
// workspace queue. A queue exists while tickets for it are outstanding.
type order struct {
	mu    sync.Mutex        // guards everything below and the queues' fields
	m     map[string]*queue // by key
	hooks map[string]func() // test hooks: a ticket starts waiting in key
}

// queue is the FIFO of one key. It also tracks whether the holder is
// compacting, so that stats readers can decline to wait behind a compaction.
type queue struct {
	key        string
	refs       int       // tickets reserved and not released
	holder     *Ticket   // nil: free
	waiters    []*Ticket // in arrival order
	compacting bool      // the holder is compacting
	// began is closed (and reset) when a compaction begins; nil while no
	// ticket waits.
	began chan struct{}
}

// A Ticket is a place in the order of one session's calls (or of the
// workspace-level calls), taken by [Manager.Reserve]. Pass it to the call
// (in its params' [Place], or as its ticket argument); release it with [Ticket.Release] once the call's result
// is delivered, so that the next call of the queue runs only after it. A
// ticket serves the calls made with it one after the other, as one turn.
type Ticket struct {
	o     *order
	q     *queue
	ready chan struct{} // closed when the ticket holds the queue
	began <-chan struct{}

	// Guarded by o.mu.
	holding  bool
	released bool
}

// yieldError reports that a reader gave up waiting because a compaction began.
type yieldError struct{}

func (yieldError) Error() string { return "session is compacting" }

// reserve takes a place at the end of key's queue.
func (o *order) reserve(key string) *Ticket {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[string]*queue{}
	}
	q := o.m[key]
	if q == nil {
		q = &queue{key: key}
		o.m[key] = q
	}
	q.refs++
	t := &Ticket{o: o, q: q, ready: make(chan struct{})}
	if q.holder == nil {
		q.holder, t.holding = t, true
		close(t.ready)
		return t
	}
	q.waiters = append(q.waiters, t)
	if q.began == nil {
		q.began = make(chan struct{})
	}
	t.began = q.began
	return t
}

// wait waits until t holds its queue. With yield set it returns yieldError
// instead of waiting behind a compaction, whether one runs when wait is
// called or one begins while it waits; t is then released. On a
// cancellation t is released too.
func (t *Ticket) wait(ctx context.Context, yield bool) error {
	o := t.o
	o.mu.Lock()
	switch {
	case t.released:
		o.mu.Unlock()
		return context.Canceled
	case t.holding:
		o.mu.Unlock()
		return nil
	case yield && t.q.compacting:
		o.mu.Unlock()
		t.Release()
		return yieldError{}
	}
	hook := o.hooks[t.q.key]
	o.mu.Unlock()
	if hook != nil {
		hook()
	}
	var began <-chan struct{}
	if yield {
		began = t.began
	}
	var err error
	select {
	case <-t.ready:
		return nil
	case <-began:
		err = yieldError{}
	case <-ctx.Done():
		err = ctx.Err()
	}
	o.mu.Lock()
	holding := t.holding
	o.mu.Unlock()
	if holding {
		// The turn was handed over concurrently: a reader that yields has
		// nothing to wait for any more.
		if _, ok := err.(yieldError); ok {
			return nil
		}
	}
	t.Release()
	return err
}

// Release gives up the ticket's place: the next ticket of its queue runs.
// Releasing twice, or a ticket that never ran, is allowed.
func (t *Ticket) Release() {
	if t == nil {
		return
	}
	o := t.o
	o.mu.Lock()
	defer o.mu.Unlock()
	if t.released {
		return
	}
	t.released = true
	q := t.q
	if t.holding {
		t.holding = false
		q.compacting = false
		q.holder = nil
		if len(q.waiters) > 0 {
			next := q.waiters[0]
			q.waiters = q.waiters[1:]
			q.holder, next.holding = next, true
			close(next.ready)
		}
	} else if i := slices.Index(q.waiters, t); i >= 0 {
		q.waiters = slices.Delete(q.waiters, i, i+1)
	}
	if len(q.waiters) == 0 {
		q.began = nil
	}
	q.refs--
	if q.refs == 0 {
		delete(o.m, q.key)
	}
}

// setCompacting marks the holder of key's queue as compacting (or done
// compacting) and wakes the readers that prefer not to wait behind it.
func (o *order) setCompacting(key string, on bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	q := o.m[key]
	if q == nil {
		return
	}
	q.compacting = on
	if on && q.began != nil {
		close(q.began)
		q.began = nil
	}
}

// Reserve takes a place for a call at the end of the queue of session id,
// or of the workspace queue when id is empty: the call made with the ticket
// (see [Place]) runs after every call that entered the queue before, and
// before every later one. The caller must Release the ticket.
func (m *Manager) Reserve(id string) *Ticket {
	return m.order.reserve(id)
}

// Place is where a call runs in the order of its queue. The params of the
// Manager's ordered calls embed it; the zero Place enters the queue when the
// call is made.
type Place struct {
	// Ticket, when set, is the place reserved for the call with
	// [Manager.Reserve]. A ticket of another queue than the call's is
	// ignored.
	Ticket *Ticket `json:"-"`
}

// turn waits for the caller's turn in key's queue: in t's place when t is a
// ticket of key's queue, else at the end of the queue. It returns the
// ticket held, for the calls the caller makes in the same turn, and done,
// which ends the turn (a no-op for t, which its owner releases). With yield
// set, a caller that would wait behind a compaction gets yieldError.
func (m *Manager) turn(ctx context.Context, t *Ticket, key string, yield bool) (held *Ticket, done func(), err error) {
	if t != nil && t.o == &m.order && t.q.key == key {
		if err := t.wait(ctx, yield); err != nil {
			return nil, nil, err
		}
		return t, func() {}, nil
	}
	t = m.order.reserve(key)
	if err := t.wait(ctx, yield); err != nil {
		return nil, nil, err
	}
	return t, t.Release, nil
}

// inTurn runs fn in the caller's turn of key's queue (in t's place, see
// [Manager.turn]); fn gets the ticket held.
func inTurn[R any](ctx context.Context, m *Manager, t *Ticket, key string, fn func(ctx context.Context, held *Ticket) (R, error)) (R, error) {
	held, done, err := m.turn(ctx, t, key, false)
	if err != nil {
		var zero R
		return zero, err
	}
	defer done()
	return fn(ctx, held)
}
