package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/sourcegraph/jsonrpc2"
)

// goroutineID is the id of the calling goroutine, from the first line of
// its stack ("goroutine 7 [running]:").
func goroutineID(t *testing.T) uint64 {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	f := bytes.Fields(buf)
	if len(f) < 2 || string(f[0]) != "goroutine" {
		t.Fatalf("unexpected stack header %q", buf)
	}
	id, err := strconv.ParseUint(string(f[1]), 10, 64)
	if err != nil {
		t.Fatalf("stack header %q: %v", buf, err)
	}
	return id
}

// orderStream is an ObjectStream that hands out n requests and records, for
// each, the goroutine that read it and how many had been read.
type orderStream struct {
	t       *testing.T
	n       int
	mu      sync.Mutex
	read    int
	readers []uint64
	done    chan struct{}
}

func (s *orderStream) ReadObject(v any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.read == s.n {
		close(s.done)
		return io.EOF
	}
	s.readers = append(s.readers, goroutineID(s.t))
	msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"m"}`, s.read)
	s.read++
	return json.Unmarshal([]byte(msg), v)
}

func (s *orderStream) WriteObject(any) error { return nil }
func (s *orderStream) Close() error          { return nil }

// TestHandlerRunsOnTheReadLoop pins what the stream's params slot relies on
// (see connect): the connection the server makes calls each request's
// handler on the goroutine that read it, before reading the next request.
// A library that handed requests to other goroutines, or read ahead, would
// give a handler the params of another request; this test then fails
// instead, and the stream must carry params with the request it returns.
func TestHandlerRunsOnTheReadLoop(t *testing.T) {
	const n = 50
	st := &orderStream{t: t, n: n, done: make(chan struct{})}
	type seen struct {
		id             uint64
		goroutine      uint64
		readBeforeDone int
	}
	handled := make(chan seen, n)
	h := jsonrpc2.HandlerWithError(func(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
		st.mu.Lock()
		read := st.read
		st.mu.Unlock()
		handled <- seen{req.ID.Num, goroutineID(t), read}
		return nil, nil
	})
	conn := connect(context.Background(), st, h)
	<-conn.DisconnectNotify()
	<-st.done
	for i := range uint64(n) {
		s := <-handled
		if s.id != i {
			t.Fatalf("request %d handled in place %d: handlers ran out of order", s.id, i)
		}
		if s.goroutine != st.readers[i] {
			t.Fatalf("request %d: handled on goroutine %d, read on %d: the handler no longer runs on the read loop", i, s.goroutine, st.readers[i])
		}
		if s.readBeforeDone != int(i)+1 {
			t.Fatalf("request %d: %d requests read before its handler ran, want %d: the library reads ahead of its handler", i, s.readBeforeDone, i+1)
		}
	}
}
