package rpc

import (
	"slices"
	"sync"
	"testing"
)

func TestLanesKeepArrivalOrder(t *testing.T) {
	var l lanes
	var (
		mu  sync.Mutex
		ran []int
		wg  sync.WaitGroup
	)
	// Tickets are taken in order (as on the read loop); the goroutines
	// start in any order but run in ticket order.
	tickets := make([]*ticket, 50)
	for i := range tickets {
		tickets[i] = l.enter("session:s1")
	}
	for i := len(tickets) - 1; i >= 0; i-- {
		wg.Add(1)
		go func(i int, tk *ticket) {
			defer wg.Done()
			<-tk.prev
			mu.Lock()
			ran = append(ran, i)
			mu.Unlock()
			tk.leave()
		}(i, tickets[i])
	}
	wg.Wait()
	if !slices.IsSorted(ran) || len(ran) != 50 {
		t.Errorf("ran in order %v", ran)
	}
	if len(l.m) != 0 {
		t.Errorf("%d lanes left behind", len(l.m))
	}
}

func TestLanesAreIndependent(t *testing.T) {
	var l lanes
	a := l.enter("session:a")
	b := l.enter("session:b")
	a2 := l.enter("session:a")
	for name, tk := range map[string]*ticket{"a": a, "b": b} {
		select {
		case <-tk.prev:
		default:
			t.Errorf("first request of lane %s waits", name)
		}
	}
	select {
	case <-a2.prev:
		t.Fatal("second request of lane a does not wait for the first")
	default:
	}
	a.setCompacting(true)
	if !l.compacting("session:a") || l.compacting("session:b") {
		t.Error("compacting flag not per lane")
	}
	a.setCompacting(false)
	a.leave()
	<-a2.prev
	a2.leave()
	b.leave()
	free := l.enter("")
	<-free.prev
	free.leave()
}

// TestCompactionStartedReleasesSnapshotReaders: a stats reader queued behind
// a request is released when that request starts compacting, not when it
// ends; a reader that arrives between compactions waits for the next one.
func TestCompactionStartedReleasesSnapshotReaders(t *testing.T) {
	var l lanes
	head := l.enter("session:s1")
	reader := l.enter("session:s1")
	started := reader.compactionStarted()
	select {
	case <-started:
		t.Fatal("released before any compaction")
	default:
	}
	head.setCompacting(true)
	select {
	case <-started:
	default:
		t.Fatal("not released when the request ahead began compacting")
	}
	if again := l.enter("session:s1").compactionStarted(); again != started {
		t.Error("a reader arriving during the compaction does not see it")
	}
	head.setCompacting(false)
	late := l.enter("session:s1")
	select {
	case <-late.compactionStarted():
		t.Error("a reader arriving after the compaction was released")
	default:
	}
}
