package proxy_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/proxy"
	"github.com/vtcode/vtcode-ls/proxy/proxytest"
	"github.com/vtcode/vtcode-ls/session"
)

const (
	sseStart = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n"
	sseText  = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hello\"}}\n\n"
	sseEnd = "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
)

// upstreamFunc runs h as the "slow" provider's upstream.
func upstreamFunc(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	up := httptest.NewServer(h)
	t.Cleanup(up.Close)
	return "[providers.slow]\nbase_url = \"" + up.URL + "\"\n"
}

// cut ends the upstream's connection in the middle of its answer: no last
// chunk, as a dropped connection does.
func cut(w http.ResponseWriter) {
	w.(http.Flusher).Flush()
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		conn.Close()
	}
}

func streamRequest(t *testing.T, e *env, session string, more ...string) *http.Request {
	msgs := append([]string{`{"role":"user","content":"hi"}`}, more...)
	req, _ := http.NewRequest(http.MethodPost, e.url+"/p/slow/v1/messages", strings.NewReader(`{"model":"m","max_tokens":5,"stream":true,"messages":[`+strings.Join(msgs, ",")+`]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", testKey)
	req.Header.Set("x-claude-code-session-id", session)
	return req
}

// TestCutStreamReachesTheAgentAsACut: an upstream that drops the
// connection in the middle of a stream, or right after its headers, is seen
// by the agent as a broken answer (as a direct call shows), never as a
// well-formed 200 that simply ends.
func TestCutStreamReachesTheAgentAsACut(t *testing.T) {
	for _, c := range []struct {
		name string
		h    http.HandlerFunc
	}{
		{"mid-stream", func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, sseStart+sseText)
			cut(w)
		}},
		{"after the headers", func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			cut(w)
		}},
		{"short of its Content-Length", func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "400")
			io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","te`)
			cut(w)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := setup(t, upstreamFunc(t, c.h), readTurns(1), "")
			resp, err := http.DefaultClient.Do(streamRequest(t, e, "cut-"+c.name))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			settled(t, e.done)
			if err == nil {
				t.Errorf("the agent read a complete %d answer (%d bytes, Content-Length %q): a cut upstream must show as a cut", resp.StatusCode, len(got), resp.Header.Get("Content-Length"))
			}
			if list, _ := e.mgr.ListSessions(context.Background(), session.ListParams{}); len(list) != 0 {
				t.Errorf("a cut answer was recorded: %v", list)
			}
		})
	}
}

// TestHeadersArriveBeforeTheBody: the upstream's status and headers reach
// the agent when the upstream sends them, not with the first body byte.
func TestHeadersArriveBeforeTheBody(t *testing.T) {
	release := make(chan struct{})
	e := setup(t, upstreamFunc(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Request-Id", "req_early")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, sseStart+sseText+sseEnd)
	}), readTurns(1), "")
	got := make(chan *http.Response, 1)
	go func() {
		resp, err := http.DefaultClient.Do(streamRequest(t, e, "early-headers"))
		if err == nil {
			got <- resp
		}
	}()
	select {
	case resp := <-got:
		if resp.Header.Get("Request-Id") != "req_early" {
			t.Errorf("headers %v", resp.Header)
		}
		close(release)
		io.ReadAll(resp.Body)
		resp.Body.Close()
	case <-time.After(10 * time.Second):
		close(release)
		t.Error("the headers did not reach the agent while the upstream held the body")
	}
	settled(t, e.done)
}

// TestAnswerDoesNotWaitForItsRecording: the end of an answer reaches the
// agent while its recording waits for the session (held here by the
// notifier the recording reports to, as an editor compaction would hold
// the session's queue).
func TestAnswerDoesNotWaitForItsRecording(t *testing.T) {
	arrived, respond := make(chan struct{}, 2), make(chan struct{}, 2)
	e := setup(t, upstreamFunc(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		arrived <- struct{}{}
		<-respond
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush() // a stream: chunked, no Content-Length
		io.WriteString(w, sseStart+sseText+sseEnd)
	}), readTurns(1), "")
	ask := func(more ...string) chan error {
		ended := make(chan error, 1)
		go func() {
			resp, err := http.DefaultClient.Do(streamRequest(t, e, "no-wait", more...))
			if err != nil {
				ended <- err
				return
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err == nil && !strings.Contains(string(b), "message_stop") {
				err = errors.New("no message_stop")
			}
			ended <- err
		}()
		return ended
	}
	// First answer: the key is accepted, the session taken up.
	first := ask()
	<-arrived
	respond <- struct{}{}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	settled(t, e.done)
	// Second, extending the conversation: prepared (the upstream has it),
	// then the session is held.
	ended := ask(`{"role":"assistant","content":"hello"}`, `{"role":"user","content":"and then?"}`)
	<-arrived
	block := make(chan struct{})
	e.notes.mu.Lock()
	e.notes.block = block
	e.notes.mu.Unlock()
	respond <- struct{}{}
	select {
	case err := <-ended:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Error("the answer's end waited for its recording")
	}
	e.notes.mu.Lock()
	e.notes.block = nil
	e.notes.mu.Unlock()
	close(block)
	settled(t, e.done)
}

// TestRecordFailureIsShownOnce: when an answer cannot be recorded (here the
// session was closed under it), the user is told once, and the answers are
// still forwarded.
func TestRecordFailureIsShownOnce(t *testing.T) {
	hold := make(chan struct{})
	arrived := make(chan struct{}, 4)
	e := setup(t, upstreamFunc(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		arrived <- struct{}{}
		<-hold
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, sseStart+sseText+sseEnd)
	}), readTurns(1), "")
	ask := func(closeFirst bool) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			resp, err := http.DefaultClient.Do(streamRequest(t, e, "unsaved"))
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if !strings.Contains(string(b), "message_stop") {
					t.Errorf("answer %q", b)
				}
			}
		}()
		<-arrived
		if closeFirst {
			list, _ := e.mgr.ListSessions(context.Background(), session.ListParams{})
			for _, l := range list {
				e.mgr.CloseSession(context.Background(), l.SessionID, nil)
			}
		}
		hold <- struct{}{}
		<-done
		settled(t, e.done)
	}
	ask(false) // takes the conversation up
	ask(true)
	ask(true)
	e.notes.mu.Lock()
	shows := append([]string(nil), e.notes.shows...)
	e.notes.mu.Unlock()
	if len(shows) != 1 || !strings.Contains(shows[0], "not being saved") {
		t.Errorf("messages shown %q, want one saying the session is not being saved", shows)
	}
}

// TestSlowBodyIsCut: a client that sends part of a body and stalls is
// answered 408 within the body read timeout, and nothing is forwarded.
func TestSlowBodyIsCut(t *testing.T) {
	e := setupWith(t, proxytest.Options{}, "", readTurns(1), "", offlineClients, func(o *proxy.Options) { o.BodyReadTimeout = 200 * time.Millisecond })
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nx-api-key: k\r\nContent-Length: 1000\r\n\r\n{\"model\":")
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	resp.Body.Close()
	settled(t, e.done)
	if resp.StatusCode != http.StatusRequestTimeout || len(e.up.Requests()) != 0 {
		t.Errorf("stalled body: %d, upstream %d requests; want 408 and none", resp.StatusCode, len(e.up.Requests()))
	}
}

// TestEngineConcurrencyIsCapped: past the cap, a request waits at most
// QueueWait and gets 503 with Retry-After.
func TestEngineConcurrencyIsCapped(t *testing.T) {
	e := setupWith(t, proxytest.Options{}, "", readTurns(1), "", offlineClients, func(o *proxy.Options) {
		o.MaxConcurrent, o.QueueWait = 1, 50*time.Millisecond
	})
	// A client holding the only slot: its body never ends.
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nx-api-key: k\r\nContent-Length: 1000\r\n\r\n{")
	var resp *http.Response
	for i := 0; i < 200; i++ { // until the held request took the slot
		resp, _ = post(t, e, "/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, nil)
		if resp.StatusCode == http.StatusServiceUnavailable {
			break
		}
	}
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("past the cap: %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

// TestHugeAnswerIsPassedOnUnrecorded: an answer larger than the recorder
// holds (one huge SSE event) reaches the agent whole; the turn is not
// recorded from it.
func TestHugeAnswerIsPassedOnUnrecorded(t *testing.T) {
	huge := strings.Repeat("x", 20<<20)
	e := setup(t, upstreamFunc(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, sseStart+"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"+
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\""+huge+"\"}}\n\n"+sseEnd)
	}), readTurns(1), "")
	for i := 0; i < 2; i++ {
		resp, err := http.DefaultClient.Do(streamRequest(t, e, "huge"))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		settled(t, e.done)
		if err != nil || !strings.Contains(string(b), huge) || !strings.HasSuffix(string(b), sseEnd) {
			t.Fatalf("the agent got %d bytes, %v", len(b), err)
		}
	}
	list, _ := e.mgr.ListSessions(context.Background(), session.ListParams{})
	for _, l := range list {
		h, _ := e.mgr.History(context.Background(), session.HistoryParams{SessionID: l.SessionID})
		for _, m := range h.Messages {
			if len(m.Text()) > 1<<20 {
				t.Errorf("a %d-byte answer was recorded", len(m.Text()))
			}
		}
	}
}

// TestGzipAnswerIsBoundedToo: a small gzip answer that inflates past the
// recorder's bound reaches the agent as sent (compressed) and is not
// inflated whole to be recorded.
func TestGzipAnswerIsBoundedToo(t *testing.T) {
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	io.WriteString(zw, `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"`+strings.Repeat("z", 40<<20)+`"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":1}}`)
	zw.Close()
	e := setup(t, upstreamFunc(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(zb.Bytes())
	}), readTurns(1), "")
	for i := 0; i < 2; i++ {
		req := streamRequest(t, e, "gzip")
		req.Header.Set("Accept-Encoding", "gzip") // asked for: not decompressed by the client
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		settled(t, e.done)
		if !bytes.Equal(b, zb.Bytes()) {
			t.Fatalf("the agent got %d bytes, want the upstream's %d", len(b), zb.Len())
		}
	}
	list, _ := e.mgr.ListSessions(context.Background(), session.ListParams{})
	for _, l := range list {
		h, _ := e.mgr.History(context.Background(), session.HistoryParams{SessionID: l.SessionID})
		for _, m := range h.Messages {
			if len(m.Text()) > 1<<20 {
				t.Errorf("a %d-byte inflated answer was recorded", len(m.Text()))
			}
		}
	}
}
