package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/sse"
)

// streamEvent is the union of the Messages stream event fields read here.
type streamEvent struct {
	Type         string          `json:"type"`
	Message      json.RawMessage `json:"message"`
	Index        int             `json:"index"`
	ContentBlock json.RawMessage `json:"content_block"`
	Delta        json.RawMessage `json:"delta"`
	Usage        json.RawMessage `json:"usage"`
}

// block is a content block under construction: its fields, raw.
type block map[string]json.RawMessage

// messageStream accumulates a Messages event stream into the response it
// stands for: message_start gives the message, content_block_start and the
// deltas (text, thinking, signature, input_json, compaction, citations, and
// unknown ones field by field) build each block, message_delta gives the
// stop reason and final usage. The client's readStream and the proxy's
// MessagesRecorder both read a stream with it.
type messageStream struct {
	res     messageResponse
	usage   map[string]json.RawMessage
	blocks  map[int]block
	partial map[int]*strings.Builder
	// grown holds, per block index, the string fields that deltas extend:
	// the text so far, decoded once and encoded into the block once (see
	// flush), where re-encoding it at every delta would make a long answer
	// quadratic.
	grown map[int]map[string]*strings.Builder
	done  bool // message_stop was seen
}

// errErrorEvent is what add returns at an "error" event.
const errErrorEvent = errString("error event in the stream")

// badEvent is an event the response cannot be built from; in names the
// step that failed, when there is one worth naming.
type badEvent struct {
	in  string
	err error
}

func (e *badEvent) Error() string {
	if e.in == "" {
		return e.err.Error()
	}
	return e.in + ": " + e.err.Error()
}

func (e *badEvent) Unwrap() error { return e.err }

func newMessageStream() *messageStream {
	return &messageStream{
		usage:   map[string]json.RawMessage{},
		blocks:  map[int]block{},
		partial: map[int]*strings.Builder{},
		grown:   map[int]map[string]*strings.Builder{},
	}
}

// appendString extends the string field of block index (b) with add; a
// field that is not a string yet starts empty.
func (s *messageStream) appendString(index int, b block, field, add string) {
	f := s.grown[index]
	if f == nil {
		f = map[string]*strings.Builder{}
		s.grown[index] = f
	}
	sb := f[field]
	if sb == nil {
		var cur string
		_ = json.Unmarshal(b[field], &cur)
		sb = &strings.Builder{}
		sb.WriteString(cur)
		f[field] = sb
	}
	sb.WriteString(add)
}

// growing reports whether deltas are extending the field of block index.
func (s *messageStream) growing(index int, field string) bool {
	return s.grown[index][field] != nil
}

// flush writes the extended string fields of block index into the block.
func (s *messageStream) flush(index int) {
	if b := s.blocks[index]; b != nil {
		for k, sb := range s.grown[index] {
			b[k] = marshal(sb.String())
		}
	}
	delete(s.grown, index)
}

func (s *messageStream) mergeUsage(raw json.RawMessage) {
	var u map[string]json.RawMessage
	if json.Unmarshal(raw, &u) == nil {
		for k, v := range u {
			if string(v) != "null" {
				s.usage[k] = v
			}
		}
	}
}

// add applies one stream event. It returns io.EOF at message_stop,
// errErrorEvent at an "error" event and a *badEvent for an event that
// does not decode.
func (s *messageStream) add(event, data string) error {
	var ev streamEvent
	if err := json.Unmarshal([]byte(data), &ev); err != nil {
		return &badEvent{"stream event", err}
	}
	if ev.Type == "" {
		ev.Type = event
	}
	switch ev.Type {
	case "message_start":
		if err := json.Unmarshal(ev.Message, &s.res); err != nil {
			return &badEvent{"message_start", err}
		}
		s.mergeUsage(s.res.Usage)
	case "content_block_start":
		var b block
		if json.Unmarshal(ev.ContentBlock, &b) != nil || b == nil {
			return &badEvent{"", errString("content_block_start without a block")}
		}
		s.blocks[ev.Index] = b
		delete(s.grown, ev.Index) // a new block at that index starts afresh
	case "content_block_delta":
		b := s.blocks[ev.Index]
		if b == nil {
			b = block{}
			s.blocks[ev.Index] = b
		}
		var d map[string]json.RawMessage
		if err := json.Unmarshal(ev.Delta, &d); err != nil {
			return &badEvent{"content_block_delta", err}
		}
		s.applyDelta(b, d, ev.Index)
	case "content_block_stop":
		s.flush(ev.Index)
		if p := s.partial[ev.Index]; p != nil && s.blocks[ev.Index] != nil {
			in := strings.TrimSpace(p.String())
			if in == "" {
				in = "{}"
			}
			if !json.Valid([]byte(in)) {
				return &badEvent{"", errString("tool input is not valid JSON")}
			}
			s.blocks[ev.Index]["input"] = json.RawMessage(in)
		}
	case "message_delta":
		var d struct {
			StopReason string `json:"stop_reason"`
		}
		_ = json.Unmarshal(ev.Delta, &d)
		if d.StopReason != "" {
			s.res.StopReason = d.StopReason
		}
		s.mergeUsage(ev.Usage)
	case "message_stop":
		s.done = true
		return io.EOF
	case "error":
		return errErrorEvent
	}
	return nil
}

// response returns the accumulated response: its blocks in index order
// and the merged usage.
func (s *messageStream) response() *messageResponse {
	idx := make([]int, 0, len(s.blocks))
	for i := range s.blocks {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	s.res.Content = nil
	for _, i := range idx {
		s.flush(i)
		s.res.Content = append(s.res.Content, marshal(map[string]json.RawMessage(s.blocks[i])))
	}
	s.res.Usage = marshal(s.usage)
	return &s.res
}

// readStream reads a Messages event stream with a messageStream. An
// "error" event is classified like an HTTP error, an event that does not
// decode is malformed, and a stream that ends before message_stop is a
// KindNetwork error.
func (c *Client) readStream(ctx context.Context, model string, resp *http.Response) (*messageResponse, error) {
	s := newMessageStream()
	var streamErr error
	err := sse.Read(resp.Body, func(event, data string) error {
		err := s.add(event, data)
		var bad *badEvent
		switch {
		case errors.Is(err, errErrorEvent):
			streamErr = c.caller.Classify(model, 0, []byte(data), nil)
			return io.EOF
		case errors.As(err, &bad):
			return c.caller.Malformed(model, bad.err)
		}
		return err
	})
	if err != nil {
		return nil, c.caller.StreamError(ctx, model, err)
	}
	if streamErr != nil {
		return nil, streamErr
	}
	if !s.done {
		return nil, c.caller.Fail(model, providers.KindNetwork, "stream ended before message_stop")
	}
	return s.response(), nil
}

func (s *messageStream) applyDelta(b block, d map[string]json.RawMessage, index int) {
	var typ string
	_ = json.Unmarshal(d["type"], &typ)
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(d[k], &s)
		return s
	}
	switch typ {
	case "text_delta":
		s.appendString(index, b, "text", str("text"))
	case "thinking_delta":
		s.appendString(index, b, "thinking", str("thinking"))
	case "signature_delta":
		s.appendString(index, b, "signature", str("signature"))
	case "input_json_delta":
		if s.partial[index] == nil {
			s.partial[index] = &strings.Builder{}
		}
		s.partial[index].WriteString(str("partial_json"))
	case "citations_delta":
		var list []json.RawMessage
		_ = json.Unmarshal(b["citations"], &list)
		b["citations"] = marshal(append(list, d["citation"]))
	default: // compaction_delta and unknown deltas: set fields, extend strings
		for k, v := range d {
			if k == "type" {
				continue
			}
			var add, cur string
			if typ != "compaction_delta" && json.Unmarshal(v, &add) == nil && (s.growing(index, k) || json.Unmarshal(b[k], &cur) == nil) {
				s.appendString(index, b, k, add)
				continue
			}
			delete(s.grown[index], k)
			b[k] = v
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }
