// Package providertest provides fake provider servers for tests: httptest
// servers that answer from a script of replies in the real wire formats
// (OpenAI Responses and /responses/compact, Anthropic Messages, OpenAI-style
// chat completions, as JSON or as server-sent event streams), can cut the
// connection before or in the middle of an answer, and record every request
// for assertions. Nothing here touches the network beyond the loopback
// listener of net/http/httptest.
//
// For tests above the HTTP layer, [ScriptedClient] is a provider without a
// server: it answers Generate and Compact calls from a script of [Step]s.
//
// A typical test:
//
//	srv := providertest.NewServer(t,
//		providertest.OpenAIError(400, "invalid_request_error", "context_length_exceeded",
//			"Your input exceeds the context window of this model."),
//		providertest.ResponsesText("summary", 1200, 80))
//	client := ... base URL srv.URL ...
//	... exercise the code under test ...
//	req := srv.Requests()[0] // method, path, headers, body
package providertest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Event is one server-sent event.
type Event struct {
	Name string // the event: field; "" for none
	Data string // the data: payload
}

// Reply is one scripted answer.
type Reply struct {
	// Status is the HTTP status; 0 means 200.
	Status int
	// Header holds extra response headers (Retry-After, ...).
	Header map[string]string
	// Body is the response body, sent as application/json unless Header sets
	// a Content-Type.
	Body string
	// Events, when non-nil, makes the reply a text/event-stream of these
	// events (Body is then ignored).
	Events []Event
	// CutAfter, with Events, aborts the connection after this many events
	// have been written and flushed, before the stream is complete: a
	// connection reset mid-stream. 0 sends every event.
	CutAfter int
	// CutBody, without Events, writes this prefix of Body, flushes, and then
	// aborts the connection: a reset in the middle of a JSON body.
	CutBody int
	// Hangup aborts the connection without answering at all.
	Hangup bool
	// Func, when set, handles the request itself (every other field is
	// ignored).
	Func http.HandlerFunc
}

// Request is a recorded request.
type Request struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte
}

// JSON decodes the body as a JSON object; it returns nil when the body is
// not one.
func (r Request) JSON() map[string]any {
	var v map[string]any
	if json.Unmarshal(r.Body, &v) != nil {
		return nil
	}
	return v
}

// Server is a scripted fake provider. Replies are used in order, one per
// request, whatever the path; a request with no reply left gets HTTP 500
// with an OpenAI-style error naming the request, and is counted by
// Unexpected.
type Server struct {
	// URL is the server's base URL (http://127.0.0.1:port), usable directly
	// as a base URL: request paths are recorded as sent.
	URL string

	srv        *httptest.Server
	mu         sync.Mutex
	replies    []Reply
	requests   []Request
	unexpected int
}

// NewServer starts a server answering with replies; it is closed when the
// test ends.
func NewServer(tb testing.TB, replies ...Reply) *Server {
	tb.Helper()
	s := &Server{replies: replies}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	tb.Cleanup(s.srv.Close)
	return s
}

// Close shuts the server down; later requests fail to connect.
func (s *Server) Close() { s.srv.Close() }

// Push appends replies to the script.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, replies...)
}

// Requests returns the requests received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Last returns the latest request, or the zero Request when none arrived.
func (s *Server) Last() Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		return Request{}
	}
	return s.requests[len(s.requests)-1]
}

// Unexpected returns the number of requests that found no reply left.
func (s *Server) Unexpected() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unexpected
}

// Remaining returns the number of replies not used yet.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.replies)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
		Header: r.Header.Clone(), Body: body})
	var rep Reply
	ok := len(s.replies) > 0
	if ok {
		rep, s.replies = s.replies[0], s.replies[1:]
	} else {
		s.unexpected++
	}
	s.mu.Unlock()
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, `{"error":{"message":%q,"type":"providertest","code":"no_reply"}}`,
			"providertest: no reply queued for "+r.Method+" "+r.URL.Path)
		return
	}
	write(w, r, rep)
}

func write(w http.ResponseWriter, r *http.Request, rep Reply) {
	if rep.Func != nil {
		rep.Func(w, r)
		return
	}
	if rep.Hangup {
		panic(http.ErrAbortHandler)
	}
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	flusher, _ := w.(http.Flusher)
	if rep.Events != nil {
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "text/event-stream")
		}
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(status)
		for i, ev := range rep.Events {
			if rep.CutAfter > 0 && i == rep.CutAfter {
				if flusher != nil {
					flusher.Flush()
				}
				panic(http.ErrAbortHandler)
			}
			if ev.Name != "" {
				fmt.Fprintf(w, "event: %s\n", ev.Name)
			}
			fmt.Fprintf(w, "data: %s\n\n", ev.Data)
			if flusher != nil {
				flusher.Flush()
			}
		}
		return
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	if rep.CutBody > 0 && rep.CutBody < len(rep.Body) {
		_, _ = w.Write([]byte(rep.Body[:rep.CutBody]))
		if flusher != nil {
			flusher.Flush()
		}
		panic(http.ErrAbortHandler)
	}
	_, _ = w.Write([]byte(rep.Body))
}
