package rpc

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"
)

// Reading ahead, and backpressure on the input.
//
// A pump goroutine reads frames from the input as they arrive and queues
// them, up to a bound (Options.ReadAheadBytes of frames, at least one).
// ReadObject, on the jsonrpc2 read loop, hands them to the library in order,
// but only while the server takes more work: while its gate is closed (the
// outbox is over its bound, or too many requests are in flight; see
// server.busy) requests and notifications wait where they are, so a client
// that does not read its responses stops being served instead of growing the
// daemon without bound.
//
// Some frames do not wait: the client's responses to the server's own
// requests (the work in flight may wait for them), and cancellations (a
// cancel of a request still queued here marks it, and it is answered
// RequestCancelled when its turn comes). An exit notification read while
// the gate is closed ends the connection at once, and so does the end of
// the input once the gate has stayed closed for the flush timeout: a client
// that stopped reading never keeps the daemon alive.

// An item is one frame read ahead.
type item struct {
	msg       json.RawMessage // the message the library decodes
	params    json.RawMessage
	hasParams bool
	rj        *rejection // an unusable frame, answered when its turn comes
	err       error      // the input ended: io.EOF, io.ErrUnexpectedEOF, a *FramingError
	size      int

	response  bool            // a response to a server request
	exit      bool            // the exit notification
	cancelOf  json.RawMessage // $/cancelRequest: the id it cancels
	id        json.RawMessage // a request's id
	cancelled bool            // a bypassing $/cancelRequest named this request
}

// minItemSize is the least an item counts for against the read-ahead bound,
// so that a flood of tiny frames is bounded too.
const minItemSize = 256

// readAhead is the queue between the pump and ReadObject.
type readAhead struct {
	mu       sync.Mutex
	items    []item
	bytes    int
	waiting  bool          // ReadObject or the pump waits for a change
	changed  chan struct{} // closed and replaced at a change while someone waits
	closed   chan struct{} // closed by close
	shut     bool
	grace    *time.Timer // started when the input ended behind a closed gate
	abandon  bool        // the grace passed: the end of input goes through
	exitSent bool        // onExit was called
	started  sync.Once
}

func (a *readAhead) init() {
	a.changed = make(chan struct{})
	a.closed = make(chan struct{})
}

// kick wakes whoever waits for a change of the queue or of the gate.
func (a *readAhead) kick() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.kickLocked()
}

func (a *readAhead) kickLocked() {
	if a.waiting {
		close(a.changed)
		a.changed = make(chan struct{})
		a.waiting = false
	}
}

// close wakes everybody for good.
func (a *readAhead) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.shut {
		a.shut = true
		close(a.closed)
		if a.grace != nil {
			a.grace.Stop()
		}
	}
}

// enqueue queues an item read by the pump.
func (s *stream) enqueue(it item) {
	a := &s.ahead
	it.size = max(minItemSize, len(it.msg)+len(it.params))
	a.mu.Lock()
	defer a.mu.Unlock()
	if it.cancelOf != nil && s.busy != nil && s.busy() {
		// A cancel of a request still queued here marks it instead.
		for i := range a.items {
			if a.items[i].id != nil && bytes.Equal(a.items[i].id, it.cancelOf) {
				a.items[i].cancelled = true
				return
			}
		}
	}
	a.items = append(a.items, it)
	a.bytes += it.size
	a.kickLocked()
}

// pump reads frames until the input ends or the stream is closed.
func (s *stream) pump() {
	a := &s.ahead
	for {
		a.mu.Lock()
		for !a.shut && len(a.items) > 0 && a.bytes >= s.aheadMax {
			a.waiting = true
			ch := a.changed
			a.mu.Unlock()
			select {
			case <-ch:
			case <-a.closed:
			}
			a.mu.Lock()
		}
		shut := a.shut
		a.mu.Unlock()
		if shut {
			return
		}
		body, err := s.readFrame()
		if err != nil {
			s.enqueue(item{err: err})
			return
		}
		if body == nil {
			continue // oversized: its rejection is queued
		}
		msg, params, hasParams, rj := parseMessage(body)
		if rj != nil {
			s.enqueue(item{rj: rj})
			continue
		}
		it := item{msg: msg, params: params, hasParams: hasParams}
		classify(&it)
		s.enqueue(it)
	}
}

// classify fills in what the queue needs to know about a message.
func classify(it *item) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
	}
	if json.Unmarshal(it.msg, &m) != nil {
		return
	}
	switch {
	case m.Method == nil:
		it.response = true
	case len(m.ID) > 0:
		it.id = m.ID
	case *m.Method == "exit":
		it.exit = true
	case *m.Method == "$/cancelRequest" || *m.Method == "window/workDoneProgress/cancel":
		it.cancelOf = json.RawMessage("null")
		if *m.Method == "$/cancelRequest" {
			var p CancelParams
			if json.Unmarshal(it.params, &p) == nil && validID(p.ID) && !isNull(p.ID) {
				var b bytes.Buffer
				if json.Compact(&b, p.ID) == nil {
					it.cancelOf = b.Bytes()
				}
			}
		}
	}
}

// errStreamClosed is what ReadObject returns once the stream is closed.
var errStreamClosed = io.ErrClosedPipe

// ReadObject implements jsonrpc2.ObjectStream. It returns the next JSON-RPC
// message, answering the frames that cannot be used on the way.
func (s *stream) ReadObject(v any) error {
	s.ahead.started.Do(func() { go s.pump() })
	for {
		it, err := s.next()
		if err != nil {
			s.doneOnce.Do(func() {
				s.readErr = err
				close(s.done)
			})
			return err
		}
		if it.rj != nil {
			s.reject(*it.rj)
			continue
		}
		if err := json.Unmarshal(it.msg, v); err != nil {
			// Only a response can fail here (requests were rebuilt by
			// parseMessage); responses are never answered.
			continue
		}
		s.params, s.hasParams, s.cancelled = it.params, it.hasParams, it.cancelled
		return nil
	}
}

// next takes the next item ReadObject may hand on, waiting while there is
// none or the gate holds them back.
func (s *stream) next() (item, error) {
	a := &s.ahead
	for {
		a.mu.Lock()
		if s.readErr != nil {
			a.mu.Unlock()
			return item{}, s.readErr
		}
		if a.shut {
			a.mu.Unlock()
			return item{}, errStreamClosed
		}
		i, exit := s.pick()
		if i >= 0 {
			it := a.items[i]
			a.items = append(a.items[:i], a.items[i+1:]...)
			a.bytes -= it.size
			a.kickLocked() // the pump may wait for room
			a.mu.Unlock()
			if it.err != nil {
				return item{}, it.err
			}
			return it, nil
		}
		if exit && !a.exitSent && s.onExit != nil {
			a.exitSent = true
			a.mu.Unlock()
			s.onExit()
			continue
		}
		a.waiting = true
		ch := a.changed
		a.mu.Unlock()
		select {
		case <-ch:
		case <-a.closed:
		}
	}
}

// pick returns the index of the item to hand on, or -1; exit reports an
// exit notification held back by the closed gate. a.mu is held.
func (s *stream) pick() (i int, exit bool) {
	a := &s.ahead
	if len(a.items) == 0 {
		return -1, false
	}
	if s.busy == nil || !s.busy() {
		return 0, false
	}
	for j, it := range a.items {
		switch {
		case it.response, it.cancelOf != nil:
			return j, false
		case it.exit:
			exit = true
		}
	}
	if last := a.items[len(a.items)-1]; last.err != nil {
		if a.abandon {
			// The input ended and the gate stayed closed: the frames
			// still queued are dropped with the connection.
			a.items, a.bytes = a.items[len(a.items)-1:], last.size
			return 0, exit
		}
		if a.grace == nil {
			a.grace = time.AfterFunc(s.grace, func() {
				a.mu.Lock()
				defer a.mu.Unlock()
				a.abandon = true
				a.kickLocked()
			})
		}
	}
	return -1, exit
}
