package rpc

import (
	"context"
	"sync"
	"time"
)

// Default bounds of the outbox: past either, the server stops reading
// requests, and a finished request waits before queuing its response (so
// its session waits too), until the client has read enough.
const (
	DefaultOutboxBytes  = 32 << 20
	DefaultOutboxFrames = 1024
	// DefaultMaxInFlight bounds the requests read and not yet answered;
	// past it the server stops reading requests until one is answered.
	DefaultMaxInFlight = 1024
	// DefaultReadAheadBytes bounds the frames read from the input and not
	// yet handled (at least one frame is always read).
	DefaultReadAheadBytes = 16 << 20
	// DefaultFlushTimeout bounds how long the end of the connection waits
	// for the client to read what is queued for it.
	DefaultFlushTimeout = 5 * time.Second
)

// An outbox sends everything the server writes (responses, notifications,
// requests to the client) in the order it was queued, from one goroutine.
// Queuing never blocks, so neither the read loop nor a session ever waits
// for the client to read; because a request's response is queued after the
// notifications its work produced, the client sees them in that order. The
// outbox counts what it holds (frames and bytes): over its bounds it is
// "over", which closes the server's read gate (see pump.go), and a request
// goroutine waits for room before queuing its response.
type outbox struct {
	maxBytes, maxFrames int
	onWrite             func() // after each write (the read gate may open)

	mu     sync.Mutex // guards the fields below
	items  []outItem
	bytes  int
	closed bool
	room   chan struct{} // closed and replaced when the outbox shrinks
	wake   chan struct{} // capacity 1: "items is not empty"
	done   chan struct{} // closed when the writer goroutine has exited
}

type outItem struct {
	size  int
	write func()
}

func newOutbox(maxBytes, maxFrames int) *outbox {
	return &outbox{maxBytes: maxBytes, maxFrames: maxFrames,
		room: make(chan struct{}), wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// start runs the writer goroutine.
func (o *outbox) start() { go o.run() }

// push queues write, which sends about size bytes; it reports false,
// dropping it, once the outbox is closed.
func (o *outbox) push(size int, write func()) bool {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return false
	}
	o.items = append(o.items, outItem{size: size, write: write})
	o.bytes += size
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
	return true
}

// over reports whether the outbox holds more than its bounds.
func (o *outbox) over() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.overLocked()
}

func (o *outbox) overLocked() bool {
	return o.bytes > o.maxBytes || len(o.items) > o.maxFrames
}

// waitRoom waits until the outbox is within its bounds, it is closed, or
// ctx ends.
func (o *outbox) waitRoom(ctx context.Context) {
	for {
		o.mu.Lock()
		if o.closed || !o.overLocked() {
			o.mu.Unlock()
			return
		}
		ch := o.room
		o.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

// close stops accepting items and waits until the queued ones are written,
// or for timeout; it reports whether everything was written.
func (o *outbox) close(timeout time.Duration) bool {
	o.mu.Lock()
	o.closed = true
	close(o.room)
	o.room = make(chan struct{})
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-o.done:
		return true
	case <-t.C:
		return false
	}
}

// pending returns the number of frames not written yet.
func (o *outbox) pending() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.items)
}

func (o *outbox) run() {
	defer close(o.done)
	for {
		o.mu.Lock()
		if len(o.items) == 0 {
			closed := o.closed
			o.mu.Unlock()
			if closed {
				return
			}
			<-o.wake
			continue
		}
		it := o.items[0]
		o.mu.Unlock()
		it.write()
		o.mu.Lock()
		o.items[0] = outItem{}
		o.items = o.items[1:]
		if len(o.items) == 0 {
			o.items = nil // let the backing array go
		}
		o.bytes -= it.size
		close(o.room)
		o.room = make(chan struct{})
		o.mu.Unlock()
		if o.onWrite != nil {
			o.onWrite()
		}
	}
}
