package proxy

import (
	"sort"
	"sync"
	"time"

	"github.com/vtcode/vtcode-ls/session"
)

// record describes one proxied request in [Stats].
type record struct {
	Time            time.Time `json:"time"`
	Path            string    `json:"path"`
	Endpoint        string    `json:"endpoint"`
	SessionID       string    `json:"sessionId,omitempty"`
	Disposition     string    `json:"disposition"`
	Status          int       `json:"status"`
	BytesIn         int       `json:"bytesIn"`  // the agent's body
	BytesOut        int       `json:"bytesOut"` // the body forwarded
	Rewritten       bool      `json:"rewritten"`
	Stateful        bool      `json:"stateful,omitempty"`
	FailOpen        bool      `json:"failOpen,omitempty"`
	AgentCompaction bool      `json:"agentCompaction,omitempty"`
	ClearedResults  int       `json:"clearedResults"`
	Compacted       bool      `json:"compacted,omitempty"`
}

// Stats are the proxy's counters and its most recent requests.
type Stats struct {
	Requests         int      `json:"requests"`
	Rewritten        int      `json:"rewritten"`
	Stateful         int      `json:"stateful"`
	FailOpen         int      `json:"failOpen"`
	PassThrough      int      `json:"passThrough"`
	AgentCompactions int      `json:"agentCompactions"`
	Compactions      int      `json:"compactions"`
	BytesIn          int64    `json:"bytesIn"`
	BytesOut         int64    `json:"bytesOut"`
	Recent           []record `json:"recent"`
	// Receipt adds the receipts of the sessions this proxy served: what
	// their answers cost, and the estimate without vtcode-ls.
	Receipt *session.Receipt `json:"receipt,omitempty"`
}

// maxRecent bounds Stats.Recent.
const maxRecent = 512

type statsBook struct {
	mu       sync.Mutex
	st       Stats
	receipts map[string]session.Receipt // by session
}

// receipt keeps the latest receipt of a session.
func (b *statsBook) receipt(id string, rc *session.Receipt) {
	if rc == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.receipts == nil {
		b.receipts = map[string]session.Receipt{}
	}
	b.receipts[id] = *rc
}

func (b *statsBook) add(r record, now time.Time) {
	r.Time = now.UTC()
	b.mu.Lock()
	defer b.mu.Unlock()
	st := &b.st
	st.Requests++
	st.BytesIn += int64(r.BytesIn)
	st.BytesOut += int64(r.BytesOut)
	switch {
	case r.FailOpen:
		st.FailOpen++
	case r.Stateful:
		st.Stateful++
	case r.Disposition == "pass-through":
		st.PassThrough++
	}
	if r.Rewritten {
		st.Rewritten++
	}
	if r.AgentCompaction {
		st.AgentCompactions++
	}
	if r.Compacted {
		st.Compactions++
	}
	st.Recent = append(st.Recent, r)
	if len(st.Recent) > maxRecent {
		st.Recent = append(st.Recent[:0:0], st.Recent[len(st.Recent)-maxRecent:]...)
	}
}

// Stats returns a copy of the proxy's statistics.
func (s *Server) Stats() Stats {
	s.stats.mu.Lock()
	defer s.stats.mu.Unlock()
	st := s.stats.st
	st.Recent = append([]record(nil), st.Recent...)
	ids := make([]string, 0, len(s.stats.receipts))
	for id := range s.stats.receipts {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for i, id := range ids {
		rc := s.stats.receipts[id]
		if i > 0 {
			rc = st.Receipt.Add(rc)
		}
		st.Receipt = &rc
	}
	return st
}
