package openai

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/sse"
)

// streamEvent is the union of the Responses stream event fields read here.
type streamEvent struct {
	Type        string          `json:"type"`
	Response    *response       `json:"response"`
	OutputIndex int             `json:"output_index"`
	Item        json.RawMessage `json:"item"`
	Delta       string          `json:"delta"`
}

// readStream consumes a Responses event stream and returns the final
// response. The response object of response.completed (or .incomplete,
// .failed) is authoritative; when it carries no output, the items of
// response.output_item.done events are used, and failing those the text of
// response.output_text.delta events. An "error" event is classified like an
// HTTP error. A stream that ends without a terminal event is a KindNetwork
// error.
func (c *Client) readStream(ctx context.Context, model string, resp *http.Response) (*response, error) {
	var final *response
	items := map[int]json.RawMessage{}
	var text strings.Builder
	var streamErr error
	err := sse.Read(resp.Body, func(event, data string) error {
		if strings.TrimSpace(data) == "[DONE]" {
			return io.EOF
		}
		var ev streamEvent
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return c.caller.Malformed(model, err)
		}
		if ev.Type == "" {
			ev.Type = event
		}
		switch ev.Type {
		case "response.completed", "response.incomplete", "response.failed", "response.done":
			if ev.Response == nil {
				return c.caller.Malformed(model, errMissing("response"))
			}
			final = ev.Response
			return io.EOF
		case "response.output_item.done":
			if len(ev.Item) > 0 {
				items[ev.OutputIndex] = ev.Item
			}
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
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
	if final == nil {
		return nil, c.caller.Fail(model, providers.KindNetwork, "stream ended before response.completed")
	}
	if len(final.Output) == 0 && final.Status != "failed" {
		idx := make([]int, 0, len(items))
		for i := range items {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		for _, i := range idx {
			final.Output = append(final.Output, items[i])
		}
		if len(final.Output) == 0 && text.Len() > 0 {
			b, _ := json.Marshal(map[string]any{"type": "message", "role": "assistant",
				"content": []textPart{{"output_text", text.String()}}})
			final.Output = append(final.Output, b)
		}
	}
	return final, nil
}

type errMissing string

func (e errMissing) Error() string { return "stream event has no " + string(e) + " field" }
