package rpc

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
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

// TestPressureCoalescing runs on the synthetic clock of testing/synctest:
// a burst sends its first value at once and its last one interval later,
// per session; a value after a quiet interval goes out at once.
func TestPressureCoalescing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval = 30 * time.Millisecond
		r := &recorder{seen: make(chan struct{}, 1)}
		n := &notifier{notify: r.notify, interval: interval}
		start := time.Now()
		for i := 1; i <= 200; i++ {
			n.TokenPressure(session.PressureEvent{SessionID: "s1", ProjectedTokens: i})
			n.TokenPressure(session.PressureEvent{SessionID: "s2", ProjectedTokens: -i})
		}
		synctest.Wait()
		// want checks the values delivered so far, per session.
		want := func(what string, s1, s2 []int) {
			t.Helper()
			r.mu.Lock()
			defer r.mu.Unlock()
			got := map[string][]int{}
			for _, ev := range r.got {
				got[ev.SessionID] = append(got[ev.SessionID], ev.ProjectedTokens)
			}
			if fmt.Sprint(got["s1"]) != fmt.Sprint(s1) || fmt.Sprint(got["s2"]) != fmt.Sprint(s2) {
				t.Errorf("%s: delivered %v, want s1 %v and s2 %v", what, got, s1, s2)
			}
		}
		want("at once", []int{1}, []int{-1})
		time.Sleep(interval)
		synctest.Wait()
		want("after one interval", []int{1, 200}, []int{-1, -200})
		r.mu.Lock()
		for i, at := range r.at[2:] {
			if gap := at.Sub(start); gap != interval {
				t.Errorf("trailing value %d sent %v after the burst, want %v", i, gap, interval)
			}
		}
		r.mu.Unlock()

		time.Sleep(2 * interval) // quiet
		n.TokenPressure(session.PressureEvent{SessionID: "s1", ProjectedTokens: 201})
		want("after a quiet interval", []int{1, 200, 201}, []int{-1, -200})
		n.flush()
	})
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
	o := newOutbox(DefaultOutboxBytes, DefaultOutboxFrames)
	o.start()
	var got []int
	for i := range 1000 {
		o.push(1, func() { got = append(got, i) })
	}
	if !o.close(time.Minute) {
		t.Fatal("the writer did not finish")
	}
	if o.push(1, func() {}) {
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

// TestOutboxBounds: the outbox is over its bounds past its frame count or
// its byte count (what is being written still counts), waitRoom waits until
// the client reads, and close gives up after its timeout when the client
// never does.
func TestOutboxBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newOutbox(1000, 3)
		read := make(chan struct{}) // the client reads one frame
		stuck := func() { <-read }
		o.start()
		for range 3 {
			o.push(10, stuck)
		}
		synctest.Wait()
		if o.over() {
			t.Error("over its bounds at 3 frames of 3")
		}
		o.push(10, stuck)
		if !o.over() {
			t.Error("within its bounds at 4 frames of 3")
		}
		roomy := make(chan struct{})
		go func() {
			o.waitRoom(context.Background())
			close(roomy)
		}()
		synctest.Wait()
		select {
		case <-roomy:
			t.Fatal("waitRoom returned while the outbox was over its bounds")
		default:
		}
		read <- struct{}{}
		synctest.Wait()
		select {
		case <-roomy:
		default:
			t.Fatal("waitRoom still waits after the client read")
		}
		for range 3 {
			read <- struct{}{}
		}
		o.push(2000, stuck)
		if !o.over() {
			t.Error("within its bounds at 2000 bytes of 1000")
		}
		start := time.Now()
		if o.close(5 * time.Second) {
			t.Error("close reported a flush the client never read")
		}
		if waited := time.Since(start); waited != 5*time.Second {
			t.Errorf("close waited %v, want its timeout", waited)
		}
		close(read)
		<-o.done
	})
}
