package rpc

import (
	"sync"
	"time"

	"github.com/vtcode/vtcode-ls/session"
)

// DefaultPressureInterval is the minimum spacing of vtcode/tokenPressure
// notifications for one session.
const DefaultPressureInterval = 100 * time.Millisecond

// A notifier is the session.Notifier of a connection. It queues
// notifications on the outbox, coalescing vtcode/tokenPressure per session:
// at most one per interval, the first one at once and the last one of a
// burst when the interval has passed (a trailing edge), so the client always
// ends with the latest value.
type notifier struct {
	notify   func(method string, params any)
	interval time.Duration    // <= 0: no coalescing
	progress *progressTracker // for NewProgress (host.go)
	// accept, when set, says whether the client sees the events of a
	// workspace (a shared manager reports every client's sessions).
	accept func(workspace string) bool

	mu     sync.Mutex // guards the fields below
	lanes  map[string]*pressureLane
	closed bool
}

type pressureLane struct {
	last    time.Time              // when the last notification was queued
	pending *session.PressureEvent // the latest coalesced event, nil if none
	timer   *time.Timer            // fires the trailing edge; nil when idle
}

var _ session.Notifier = (*notifier)(nil)

// TokenPressure implements session.Notifier.
func (n *notifier) TokenPressure(ev session.PressureEvent) {
	if n.accept != nil && !n.accept(ev.Workspace) {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return
	}
	if n.interval <= 0 {
		n.notify("vtcode/tokenPressure", ev)
		return
	}
	if n.lanes == nil {
		n.lanes = map[string]*pressureLane{}
	}
	l := n.lanes[ev.SessionID]
	if l == nil {
		l = &pressureLane{}
		n.lanes[ev.SessionID] = l
	}
	now := time.Now()
	if l.timer == nil && now.Sub(l.last) >= n.interval {
		l.last = now
		n.notify("vtcode/tokenPressure", ev)
		return
	}
	l.pending = &ev
	if l.timer == nil {
		l.timer = time.AfterFunc(l.last.Add(n.interval).Sub(now), func() { n.trail(l) })
	}
}

// trail delivers a lane's coalesced event.
func (n *notifier) trail(l *pressureLane) {
	n.mu.Lock()
	defer n.mu.Unlock()
	l.timer = nil
	if n.closed || l.pending == nil {
		return
	}
	l.last = time.Now()
	n.notify("vtcode/tokenPressure", *l.pending)
	l.pending = nil
}

// settle delivers the coalesced event of session id now, if one waits, so
// that the pressure a request caused precedes its response (a trailing edge
// after the response would leave the client showing an older value until
// it fires). The interval then counts from now.
func (n *notifier) settle(id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	l := n.lanes[id]
	if n.closed || l == nil || l.pending == nil {
		return
	}
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	l.last = time.Now()
	n.notify("vtcode/tokenPressure", *l.pending)
	l.pending = nil
}

// flush delivers every coalesced event now and drops later ones.
func (n *notifier) flush() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closed = true
	for _, l := range n.lanes {
		if l.timer != nil {
			l.timer.Stop()
			l.timer = nil
		}
		if l.pending != nil {
			n.notify("vtcode/tokenPressure", *l.pending)
			l.pending = nil
		}
	}
}

// CompactBoundary implements session.Notifier.
func (n *notifier) CompactBoundary(ev session.BoundaryEvent) {
	if n.accept != nil && !n.accept(ev.Workspace) {
		return
	}
	n.notify("vtcode/compactBoundary", ev)
}

// CompactionProposed implements session.ProposalNotifier.
func (n *notifier) CompactionProposed(ev session.ProposalEvent) {
	if n.accept != nil && !n.accept(ev.Workspace) {
		return
	}
	n.notify("vtcode/compactionProposed", ev)
}

// ShowMessage implements session.Notifier.
func (n *notifier) ShowMessage(level int, text string) {
	n.notify("window/showMessage", ShowMessageParams{Type: messageType(level), Message: bound(text)})
}

// LogMessage implements session.Notifier.
func (n *notifier) LogMessage(level int, text string) {
	n.notify("window/logMessage", LogMessageParams{Type: messageType(level), Message: bound(text)})
}

func messageType(level int) MessageType {
	if level < int(MessageError) || level > int(MessageLog) {
		return MessageLog
	}
	return MessageType(level)
}
