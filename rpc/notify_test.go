package rpc

import (
	"sync"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/session"
)

// recorder collects notifications with their times.
type recorder struct {
	mu    sync.Mutex
	got   []session.PressureEvent
	at    []time.Time
	other []string
	seen  chan struct{} // receives after each notification
}

func (r *recorder) notify(method string, params any) {
	r.mu.Lock()
	if ev, ok := params.(session.PressureEvent); ok && method == "vtcode/tokenPressure" {
		r.got = append(r.got, ev)
		r.at = append(r.at, time.Now())
	} else {
		r.other = append(r.other, method)
	}
	r.mu.Unlock()
	select {
	case r.seen <- struct{}{}:
	default:
	}
}

func TestPressureCoalescing(t *testing.T) {
	const interval = 30 * time.Millisecond
	r := &recorder{seen: make(chan struct{}, 1)}
	n := &notifier{notify: r.notify, interval: interval}
	start := time.Now()
	for i := 1; i <= 200; i++ {
		n.TokenPressure(session.PressureEvent{SessionID: "s1", ProjectedTokens: i})
		n.TokenPressure(session.PressureEvent{SessionID: "s2", ProjectedTokens: -i})
	}
	sent := time.Since(start)
	// Wait for the trailing edge of both sessions.
	deadline := time.After(10 * time.Second)
	for {
		r.mu.Lock()
		var last1, last2 int
		for _, ev := range r.got {
			switch ev.SessionID {
			case "s1":
				last1 = ev.ProjectedTokens
			case "s2":
				last2 = ev.ProjectedTokens
			}
		}
		r.mu.Unlock()
		if last1 == 200 && last2 == -200 {
			break
		}
		select {
		case <-r.seen:
		case <-deadline:
			t.Fatalf("the last values were not delivered: s1 %d, s2 %d", last1, last2)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// At most one per interval per session: the first at once, then one
	// per elapsed interval.
	perSession := map[string][]time.Time{}
	for i, ev := range r.got {
		perSession[ev.SessionID] = append(perSession[ev.SessionID], r.at[i])
	}
	for id, times := range perSession {
		if max := 2 + int(sent/interval); len(times) > max {
			t.Errorf("%s: %d notifications for a burst of %v, want at most %d", id, len(times), sent, max)
		}
		for i := 1; i < len(times); i++ {
			if gap := times[i].Sub(times[i-1]); gap < interval-5*time.Millisecond {
				t.Errorf("%s: notifications %d and %d only %v apart", id, i-1, i, gap)
			}
		}
	}
}

func TestPressureFlushDeliversPending(t *testing.T) {
	r := &recorder{seen: make(chan struct{}, 1)}
	n := &notifier{notify: r.notify, interval: time.Hour}
	n.TokenPressure(session.PressureEvent{SessionID: "s1", ProjectedTokens: 1})
	n.TokenPressure(session.PressureEvent{SessionID: "s1", ProjectedTokens: 2})
	n.TokenPressure(session.PressureEvent{SessionID: "s1", ProjectedTokens: 3})
	n.flush()
	n.TokenPressure(session.PressureEvent{SessionID: "s1", ProjectedTokens: 4}) // after the end: dropped
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.got) != 2 || r.got[0].ProjectedTokens != 1 || r.got[1].ProjectedTokens != 3 {
		t.Errorf("got %+v, want the first and the last before flush", r.got)
	}
}

func TestNoCoalescing(t *testing.T) {
	r := &recorder{seen: make(chan struct{}, 1)}
	n := &notifier{notify: r.notify, interval: -1}
	for i := range 5 {
		n.TokenPressure(session.PressureEvent{SessionID: "s1", ProjectedTokens: i})
	}
	n.ShowMessage(session.LevelError, "boom")
	n.LogMessage(99, "odd level")
	if len(r.got) != 5 || len(r.other) != 2 {
		t.Errorf("got %d pressure and %v other notifications", len(r.got), r.other)
	}
}

func TestOutboxOrder(t *testing.T) {
	o := newOutbox()
	o.start()
	var got []int
	for i := range 1000 {
		o.push(func() { got = append(got, i) })
	}
	o.close()
	if o.push(func() {}) {
		t.Error("push accepted after close")
	}
	for i, v := range got {
		if v != i {
			t.Fatalf("item %d ran as %d", v, i)
		}
	}
	if len(got) != 1000 {
		t.Errorf("%d items ran, want 1000", len(got))
	}
}
