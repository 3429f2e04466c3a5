package proxy

import (
	"sync"
)

// maxPendingRecords bounds the answers waiting to be recorded; a request
// whose answer finds the queue full waits for a place (after its answer
// was passed on whole).
const maxPendingRecords = 256

// recordQueue records answers after the agent has them: the end of an
// answer never waits for the session (whose queue a compaction may hold)
// or the disk. Jobs of one session run in order, one at a time; sessions
// run independently.
type recordQueue struct {
	slots chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	q     map[string][]func() // by session; present while a runner works on it
}

func newRecordQueue() *recordQueue {
	return &recordQueue{slots: make(chan struct{}, maxPendingRecords), q: map[string][]func(){}}
}

// add queues job behind the session's earlier ones.
func (r *recordQueue) add(session string, job func()) {
	r.slots <- struct{}{}
	r.wg.Add(1)
	r.mu.Lock()
	list, running := r.q[session]
	r.q[session] = append(list, job)
	r.mu.Unlock()
	if !running {
		go r.run(session)
	}
}

func (r *recordQueue) run(session string) {
	for {
		r.mu.Lock()
		list := r.q[session]
		if len(list) == 0 {
			delete(r.q, session)
			r.mu.Unlock()
			return
		}
		job := list[0]
		list[0] = nil
		r.q[session] = list[1:]
		r.mu.Unlock()
		job()
		<-r.slots
		r.wg.Done()
	}
}

// wait returns when every queued job has run.
func (r *recordQueue) wait() { r.wg.Wait() }
