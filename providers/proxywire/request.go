package proxywire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers/sse"
)

// WireRequest is an agent's request body decoded by one of the vendor
// packages for a proxy (anthropic.DecodeMessages, openai.DecodeResponses,
// chatcompat.DecodeChat): the conversation in history form plus what the
// proxy needs to route and identify it. [WireRequest.Encode] writes the body
// again with the conversation replaced by a projection, keeping every byte of
// the original before the first message that changed.
type WireRequest struct {
	Model  string
	Stream bool
	// System is the text of the system prompt (instructions), for the
	// prefix estimate and the fingerprint.
	System string
	Tools  []json.RawMessage
	// Messages is the conversation in history form.
	Messages []history.Message
	// Stateful reports a request that relies on state kept by the provider
	// (previous_response_id, conversation): its conversation is not whole.
	Stateful bool
	// SessionHint is a session identifier found in the body
	// (metadata.user_id, prompt_cache_key); "" for none.
	SessionHint string

	body  []byte
	array Span   // the conversation array in body
	elems []Span // its elements
	// build returns the elements of the encoded conversation.
	build func(proj []history.Message, slots []Slot) ([]json.RawMessage, error)
}

// Span is a byte range [Start, End) of a body.
type Span struct{ Start, End int }

// NewWireRequest returns a WireRequest for body whose conversation is the
// array at array with elements elems; build encodes a projection (see
// [WireRequest.Encode]). It is for the vendor packages' decoders.
func NewWireRequest(body []byte, array Span, elems []Span, build func(proj []history.Message, slots []Slot) ([]json.RawMessage, error)) *WireRequest {
	return &WireRequest{body: body, array: array, elems: elems, build: build}
}

// Body returns the request body as received.
func (r *WireRequest) Body() []byte { return r.body }

// Encode returns the body with the conversation replaced by proj, a
// projection of r.Messages (messages of r.Messages, some with changed
// content, and new ones such as a summary). Elements of the conversation that
// stand for unchanged messages are copied byte for byte, so the output
// equals the input up to the first changed message. changed is false when
// the body is returned as is.
func (r *WireRequest) Encode(proj []history.Message) (body []byte, changed bool, err error) {
	slots := MatchProjection(r.Messages, proj)
	items, err := r.build(proj, slots)
	if err != nil {
		return nil, false, err
	}
	k := 0
	for k < len(items) && k < len(r.elems) && bytes.Equal(items[k], r.body[r.elems[k].Start:r.elems[k].End]) {
		k++
	}
	if k == len(items) && k == len(r.elems) {
		return r.body, false, nil
	}
	var out bytes.Buffer
	out.Grow(len(r.body))
	closeAt := r.array.End - 1 // the ']'
	switch {
	case k < len(r.elems):
		out.Write(r.body[:r.elems[k].Start])
		if k == len(items) { // the tail was dropped: no separator before ']'
			out.Reset()
			if k == 0 {
				out.Write(r.body[:r.array.Start+1])
			} else {
				out.Write(r.body[:r.elems[k-1].End])
			}
		}
	case k > 0:
		out.Write(r.body[:r.elems[k-1].End])
		out.WriteByte(',')
	default:
		out.Write(r.body[:r.array.Start+1])
	}
	for i := k; i < len(items); i++ {
		if i > k {
			out.WriteByte(',')
		}
		out.Write(items[i])
	}
	out.Write(r.body[closeAt:])
	return out.Bytes(), true, nil
}

// ArraySpans finds the value of the top-level member key of the JSON object
// body, which must be an array, and the exact spans of its elements. ok is
// false when the member is absent or not an array.
func ArraySpans(body []byte, key string) (array Span, elems []Span, ok bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return Span{}, nil, false, errors.New("request body: must be a JSON object")
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return Span{}, nil, false, fmt.Errorf("request body: %w", err)
		}
		k, _ := kt.(string)
		if k != key {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return Span{}, nil, false, fmt.Errorf("request body: %s: %w", k, err)
			}
			continue
		}
		t, err := dec.Token()
		if err != nil {
			return Span{}, nil, false, fmt.Errorf("request body: %s: %w", k, err)
		}
		if t != json.Delim('[') {
			return Span{}, nil, false, nil
		}
		start := int(dec.InputOffset()) - 1
		for dec.More() {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return Span{}, nil, false, fmt.Errorf("request body: %s: %w", k, err)
			}
			end := int(dec.InputOffset())
			elems = append(elems, Span{end - len(raw), end})
		}
		if _, err := dec.Token(); err != nil {
			return Span{}, nil, false, fmt.Errorf("request body: %s: %w", k, err)
		}
		return Span{start, int(dec.InputOffset())}, elems, true, nil
	}
	return Span{}, nil, false, nil
}

// Slot says which message of a request a projected message stands for: Src
// is its index in the request's messages (-1 for a new message, such as a
// summary), Same reports that it is unchanged.
type Slot struct {
	Src  int
	Same bool
}

// MatchProjection matches each message of proj, a projection of req, to the
// request message it stands for, in order: a tool result by its call id, an
// assistant message with calls by its first call id, any other message by
// its content.
func MatchProjection(req, proj []history.Message) []Slot {
	idx := make(map[string][]int, len(req))
	for i := range req {
		k := slotKey(&req[i])
		idx[k] = append(idx[k], i)
	}
	out := make([]Slot, len(proj))
	cursor := 0
	for i := range proj {
		out[i] = Slot{Src: -1}
		list := idx[slotKey(&proj[i])]
		j := sort.SearchInts(list, cursor)
		if j == len(list) {
			continue
		}
		src := list[j]
		out[i] = Slot{Src: src, Same: history.Same(&proj[i], &req[src])}
		cursor = src + 1
	}
	return out
}

// slotKey is the identity of a message for [MatchProjection].
func slotKey(m *history.Message) string {
	switch {
	case m.Role == history.Tool && m.ToolCallID != "":
		return "t\x00" + m.ToolCallID
	case m.Role == history.Assistant && len(m.ToolCalls) > 0 && m.ToolCalls[0].ID != "":
		return "a\x00" + m.ToolCalls[0].ID
	}
	return "m\x00" + history.MessageKey(m)
}

// ErrIncomplete reports a response stream that ended before its final event.
var ErrIncomplete = errors.New("response stream ended before its final event")

// SSERecorder reads a copy of a server-sent event stream as it is passed on:
// Write feeds it the bytes, Close ends the stream and returns what on
// recorded. It is safe to Write from one goroutine; Close (or Abort) must
// follow the last Write. Write hands the bytes over without waiting for them
// to be read (up to maxPendingSSE bytes behind), so that reading the events
// never holds the stream it copies; the reader is woken only once
// wakeSSE bytes wait (or at the end), so that a stream of many small
// events does not pay a goroutine switch per chunk, and a short answer is
// read whole by Close, after it was passed on.
type SSERecorder struct {
	in   pendingBytes
	done chan struct{}
	res  history.Response
	err  error
}

// maxPendingSSE bounds the bytes an SSERecorder holds that its reader has
// not read yet: past it, Write waits. wakeSSE is how many bytes wake the
// reader before the end.
const (
	maxPendingSSE = 1 << 20
	wakeSSE       = 128 << 10
)

// NewSSERecorder starts reading events with on, which returns io.EOF after
// the final event; finish turns what on saw into the recorded response.
func NewSSERecorder(on func(event, data string) error, finish func() (history.Response, error)) *SSERecorder {
	r := &SSERecorder{done: make(chan struct{})}
	r.in.cond.L = &r.in.mu
	go func() {
		defer close(r.done)
		err := sse.Read(&r.in, on)
		r.in.stop() // a writer after an early stop drops its bytes
		if err == nil {
			r.res, err = finish()
		}
		r.err = err
	}()
	return r
}

// Write implements io.Writer; it never fails, so that a recording problem
// never reaches the stream it copies.
func (r *SSERecorder) Write(p []byte) (int, error) {
	r.in.write(p)
	return len(p), nil
}

// pendingBytes is the SSERecorder's input: bytes written and not read yet,
// at most maxPendingSSE of them.
type pendingBytes struct {
	mu      sync.Mutex
	cond    sync.Cond // on mu: bytes came, bytes went, or an end
	buf     bytes.Buffer
	closed  bool // no more writes
	stopped bool // no more reads
}

func (b *pendingBytes) write(p []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.buf.Len() >= maxPendingSSE && !b.stopped {
		b.cond.Wait()
	}
	if !b.stopped && !b.closed {
		b.buf.Write(p)
		if b.buf.Len() >= wakeSSE {
			b.cond.Broadcast()
		}
	}
}

// Read implements io.Reader for the recorder's reader: it waits for
// wakeSSE bytes or the end of the input, then reads what there is.
func (b *pendingBytes) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.buf.Len() < wakeSSE && !b.closed {
		b.cond.Wait()
	}
	if b.buf.Len() == 0 {
		return 0, io.EOF
	}
	n, _ := b.buf.Read(p)
	b.cond.Broadcast()
	return n, nil
}

func (b *pendingBytes) close() {
	b.mu.Lock()
	b.closed = true
	b.cond.Broadcast()
	b.mu.Unlock()
}

func (b *pendingBytes) stop() {
	b.mu.Lock()
	b.stopped = true
	b.buf = bytes.Buffer{}
	b.cond.Broadcast()
	b.mu.Unlock()
}

// Close ends the input and returns the recorded response.
func (r *SSERecorder) Close() (history.Response, error) {
	r.in.close()
	<-r.done
	return r.res, r.err
}

// Abort ends the input, dropping what was not read yet: nothing is
// recorded.
func (r *SSERecorder) Abort() {
	r.in.stop()
	r.in.close()
	<-r.done
}
