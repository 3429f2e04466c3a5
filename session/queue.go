package session

import (
	"context"
	"slices"
	"sync"
)

// queue serializes the calls of one session in the order they enter it: a
// FIFO of tickets. It also tracks whether the current holder is compacting, so
// that stats readers can decline to wait behind a compaction.
type queue struct {
	mu         sync.Mutex      // guards the fields below
	busy       bool            // a holder runs
	waiters    []chan struct{} // in arrival order; closed to hand over
	compacting bool            // the holder is compacting
	began      chan struct{}   // closed (and replaced) when a compaction begins
	onWait     func()          // test hook: a call starts waiting
}

// yieldError reports that a reader gave up waiting because a compaction began.
type yieldError struct{}

func (yieldError) Error() string { return "session is compacting" }

// acquire waits for the caller's turn. With yield set it returns yieldError
// instead of waiting behind a compaction, whether one is running when the
// caller enters or one begins while it waits. On error the caller does not
// hold the queue.
func (q *queue) acquire(ctx context.Context, yield bool) error {
	q.mu.Lock()
	if yield && q.compacting {
		q.mu.Unlock()
		return yieldError{}
	}
	if !q.busy {
		q.busy = true
		q.mu.Unlock()
		return nil
	}
	ready := make(chan struct{})
	q.waiters = append(q.waiters, ready)
	if q.began == nil {
		q.began = make(chan struct{})
	}
	var began <-chan struct{}
	if yield {
		began = q.began
	}
	hook := q.onWait
	q.mu.Unlock()
	if hook != nil {
		hook()
	}

	var err error
	select {
	case <-ready:
		return nil
	case <-began:
		err = yieldError{}
	case <-ctx.Done():
		err = ctx.Err()
	}
	q.mu.Lock()
	if i := slices.Index(q.waiters, ready); i >= 0 {
		q.waiters = slices.Delete(q.waiters, i, i+1)
		q.mu.Unlock()
		return err
	}
	q.mu.Unlock()
	// The turn was handed over concurrently: we hold the queue.
	if _, ok := err.(yieldError); ok {
		return nil // nothing to wait for any more
	}
	q.release()
	return err
}

// release hands the queue to the next waiter, if any.
func (q *queue) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.compacting = false
	if len(q.waiters) == 0 {
		q.busy = false
		return
	}
	next := q.waiters[0]
	q.waiters = q.waiters[1:]
	close(next)
}

// setCompacting marks the holder as compacting (or done compacting) and
// wakes the readers that prefer not to wait behind it.
func (q *queue) setCompacting(on bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.compacting = on
	if on && q.began != nil {
		close(q.began)
		q.began = nil
	}
}
