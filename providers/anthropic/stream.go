package anthropic

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/vtcode/vtcode-ls/providers"
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

func (b block) appendString(field, s string) {
	var cur string
	_ = json.Unmarshal(b[field], &cur)
	b[field] = marshal(cur + s)
}

// readStream accumulates a Messages event stream into the response it
// stands for: message_start gives the message, content_block_start and the
// deltas (text, thinking, signature, input_json, compaction, citations, and
// unknown ones field by field) build each block, message_delta gives the
// stop reason and final usage. An "error" event is classified like an HTTP
// error; a stream that ends before message_stop is a KindNetwork error.
func (c *Client) readStream(ctx context.Context, model string, resp *http.Response) (*messageResponse, error) {
	var res messageResponse
	usage := map[string]json.RawMessage{}
	blocks := map[int]block{}
	partial := map[int]*strings.Builder{}
	done := false
	var streamErr error
	merge := func(raw json.RawMessage) {
		var u map[string]json.RawMessage
		if json.Unmarshal(raw, &u) == nil {
			for k, v := range u {
				if string(v) != "null" {
					usage[k] = v
				}
			}
		}
	}
	err := providers.ReadSSE(resp.Body, func(event, data string) error {
		var ev streamEvent
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return c.caller.Malformed(model, err)
		}
		if ev.Type == "" {
			ev.Type = event
		}
		switch ev.Type {
		case "message_start":
			if err := json.Unmarshal(ev.Message, &res); err != nil {
				return c.caller.Malformed(model, err)
			}
			merge(res.Usage)
		case "content_block_start":
			var b block
			if err := json.Unmarshal(ev.ContentBlock, &b); err != nil || b == nil {
				return c.caller.Malformed(model, errString("content_block_start without a block"))
			}
			blocks[ev.Index] = b
		case "content_block_delta":
			b := blocks[ev.Index]
			if b == nil {
				b = block{}
				blocks[ev.Index] = b
			}
			var d map[string]json.RawMessage
			if err := json.Unmarshal(ev.Delta, &d); err != nil {
				return c.caller.Malformed(model, err)
			}
			applyDelta(b, d, ev.Index, partial)
		case "content_block_stop":
			if p := partial[ev.Index]; p != nil && blocks[ev.Index] != nil {
				in := strings.TrimSpace(p.String())
				if in == "" {
					in = "{}"
				}
				if !json.Valid([]byte(in)) {
					return c.caller.Malformed(model, errString("tool input is not valid JSON"))
				}
				blocks[ev.Index]["input"] = json.RawMessage(in)
			}
		case "message_delta":
			var d struct {
				StopReason string `json:"stop_reason"`
			}
			_ = json.Unmarshal(ev.Delta, &d)
			if d.StopReason != "" {
				res.StopReason = d.StopReason
			}
			merge(ev.Usage)
		case "message_stop":
			done = true
			return io.EOF
		case "error":
			streamErr = c.caller.Classify(model, 0, []byte(data), nil)
			return io.EOF
		}
		return nil
	})
	if err != nil {
		return nil, c.caller.StreamError(ctx, model, err)
	}
	if streamErr != nil {
		return nil, streamErr
	}
	if !done {
		return nil, c.caller.Fail(model, providers.KindNetwork, "stream ended before message_stop")
	}
	idx := make([]int, 0, len(blocks))
	for i := range blocks {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	res.Content = nil
	for _, i := range idx {
		res.Content = append(res.Content, marshal(map[string]json.RawMessage(blocks[i])))
	}
	res.Usage = marshal(usage)
	return &res, nil
}

func applyDelta(b block, d map[string]json.RawMessage, index int, partial map[int]*strings.Builder) {
	var typ string
	_ = json.Unmarshal(d["type"], &typ)
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(d[k], &s)
		return s
	}
	switch typ {
	case "text_delta":
		b.appendString("text", str("text"))
	case "thinking_delta":
		b.appendString("thinking", str("thinking"))
	case "signature_delta":
		b.appendString("signature", str("signature"))
	case "input_json_delta":
		if partial[index] == nil {
			partial[index] = &strings.Builder{}
		}
		partial[index].WriteString(str("partial_json"))
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
			if typ != "compaction_delta" && json.Unmarshal(v, &add) == nil && json.Unmarshal(b[k], &cur) == nil {
				b[k] = marshal(cur + add)
				continue
			}
			b[k] = v
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }
