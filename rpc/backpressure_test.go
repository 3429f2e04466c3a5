package rpc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/vtcode/vtcode-ls/rpc"
	"github.com/vtcode/vtcode-ls/rpc/rpctest"
	"github.com/vtcode/vtcode-ls/session"
)

func rawFrame(body string) string {
	return "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

// pipedServer runs Serve on pipes; the test plays a client that may stop
// reading.
type pipedServer struct {
	in   *io.PipeWriter // the client's writes
	out  *io.PipeReader // the server's frames
	done chan error
}

func startPiped(ctx context.Context, opts rpc.Options) *pipedServer {
	toServer, in := io.Pipe()
	out, fromServer := io.Pipe()
	p := &pipedServer{in: in, out: out, done: make(chan error, 1)}
	go func() { p.done <- rpc.Serve(ctx, toServer, fromServer, opts) }()
	return p
}

// pipeline writes n requests (each answered -32002 before initialize) in
// the background and returns how many the server has taken so far.
func (p *pipedServer) pipeline(n int) *atomic.Int64 {
	var written atomic.Int64
	go func() {
		for i := range n {
			if _, err := io.WriteString(p.in, rawFrame(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"vtcode/listSessions"}`, i))); err != nil {
				return
			}
			written.Add(1)
		}
	}()
	return &written
}

// TestStopsReadingWhileTheClientDoesNotRead: a client that pipelines
// requests without reading the answers is served only up to the outbox
// bound; once it reads, every request is answered, in order.
func TestStopsReadingWhileTheClientDoesNotRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := startPiped(context.Background(), rpc.Options{OutboxFrames: 4, ReadAheadBytes: 1})
		const n = 100
		written := p.pipeline(n)
		synctest.Wait()
		// The outbox holds 5 frames (one being written), one request is
		// read ahead, one more is being read: the rest waits in the client.
		if got := written.Load(); got > 8 {
			t.Errorf("the server took %d of %d requests while its answers were not read; want it to stop at its bound", got, n)
		}
		br := bufio.NewReader(p.out)
		for i := range n {
			body, err := rpctest.ReadFrame(br)
			if err != nil {
				t.Fatal(err)
			}
			var m struct {
				ID    int `json:"id"`
				Error struct {
					Code int64 `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &m); err != nil || m.ID != i || m.Error.Code != rpc.CodeServerNotInitialized {
				t.Fatalf("answer %d: %s", i, body)
			}
		}
		io.WriteString(p.in, rawFrame(`{"jsonrpc":"2.0","method":"exit"}`))
		if err := <-p.done; !errors.Is(err, rpc.ErrNoShutdown) {
			t.Errorf("Serve = %v, want ErrNoShutdown", err)
		}
		p.in.Close()
		io.Copy(io.Discard, p.out)
	})
}

// TestEndsWhileTheClientDoesNotRead: exit, the end of input and the end of
// the context (SIGTERM in the binary) each end the connection although the
// client never reads what is queued for it: after at most the flush timeout
// (twice it for the end of input: it first waits for the gate), with
// nothing read.
func TestEndsWhileTheClientDoesNotRead(t *testing.T) {
	const flush = 5 * time.Second
	for _, tc := range []struct {
		name    string
		end     func(p *pipedServer, cancel context.CancelFunc)
		want    error
		longest time.Duration
	}{
		{"exit", func(p *pipedServer, _ context.CancelFunc) {
			go io.WriteString(p.in, rawFrame(`{"jsonrpc":"2.0","method":"exit"}`))
		}, rpc.ErrNoShutdown, flush},
		{"end of input", func(p *pipedServer, _ context.CancelFunc) { p.in.Close() }, rpc.ErrNoShutdown, 2 * flush},
		{"signal", func(_ *pipedServer, cancel context.CancelFunc) { cancel() }, context.Canceled, flush},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				p := startPiped(ctx, rpc.Options{OutboxFrames: 4, FlushTimeout: flush})
				written := p.pipeline(20)
				synctest.Wait()
				if written.Load() != 20 {
					t.Fatalf("%d requests written; the read-ahead should take all 20", written.Load())
				}
				start := time.Now()
				tc.end(p, cancel)
				err := <-p.done
				if !errors.Is(err, tc.want) {
					t.Errorf("Serve = %v, want %v", err, tc.want)
				}
				if took := time.Since(start); took > tc.longest {
					t.Errorf("the connection ended %v after %s, want at most %v", took, tc.name, tc.longest)
				}
				p.in.Close()
				p.out.Close()
			})
		})
	}
}

// TestCancelOfARequestHeldBack: a $/cancelRequest for a request the server
// has read but not started (its gate is closed) is not stuck behind it: the
// request is answered RequestCancelled when its turn comes.
func TestCancelOfARequestHeldBack(t *testing.T) {
	ws := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		// No config watcher: its goroutine waits on the kernel, outside
		// the bubble's clock.
		p := startPiped(context.Background(), rpc.Options{OutboxFrames: 2, Session: session.Options{NoWatch: true}})
		br := bufio.NewReader(p.out)
		io.WriteString(p.in, rawFrame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":"file://`+ws+`","capabilities":{}}}`))
		if _, err := rpctest.ReadFrame(br); err != nil {
			t.Fatal(err)
		}
		for i := 10; i < 20; i++ {
			io.WriteString(p.in, rawFrame(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"vtcode/listSessions"}`, i)))
		}
		synctest.Wait()
		io.WriteString(p.in, rawFrame(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":18}}`))
		synctest.Wait()
		// A cancelled request waiting for its turn is answered at once, so
		// the answers are checked by id.
		answers := map[int]string{}
		for range 10 {
			body, err := rpctest.ReadFrame(br)
			if err != nil {
				t.Fatal(err)
			}
			var m struct {
				ID    int `json:"id"`
				Error *struct {
					Code int64 `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatalf("answer %s: %v", body, err)
			}
			answers[m.ID] = "ok"
			if m.Error != nil {
				answers[m.ID] = strconv.FormatInt(m.Error.Code, 10)
			}
		}
		for i := 10; i < 20; i++ {
			want := "ok"
			if i == 18 {
				want = strconv.Itoa(rpc.CodeRequestCancelled)
			}
			if answers[i] != want {
				t.Errorf("request %d answered %q, want %q", i, answers[i], want)
			}
		}
		io.WriteString(p.in, rawFrame(`{"jsonrpc":"2.0","method":"exit"}`))
		<-p.done
		p.in.Close()
		io.Copy(io.Discard, p.out)
	})
}
