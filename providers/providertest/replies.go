package providertest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// JSON returns a reply with the given status and raw JSON body.
func JSON(status int, body string) Reply { return Reply{Status: status, Body: body} }

// SSE returns a text/event-stream reply of events.
func SSE(events ...Event) Reply { return Reply{Events: events} }

// Hangup returns a reply that closes the connection without answering.
func Hangup() Reply { return Reply{Hangup: true} }

// WithHeader returns r with an extra response header.
func (r Reply) WithHeader(key, value string) Reply {
	h := make(map[string]string, len(r.Header)+1)
	for k, v := range r.Header {
		h[k] = v
	}
	h[key] = value
	r.Header = h
	return r
}

// OpenAIError returns an OpenAI-style error reply:
// {"error":{"message","type","param":null,"code"}}. An empty code is sent as
// null.
func OpenAIError(status int, typ, code, message string) Reply {
	c := "null"
	if code != "" {
		c = quote(code)
	}
	return JSON(status, fmt.Sprintf(`{"error":{"message":%s,"type":%s,"param":null,"code":%s}}`, quote(message), quote(typ), c))
}

// AnthropicError returns an Anthropic-style error reply:
// {"type":"error","error":{"type","message"},"request_id"}.
func AnthropicError(status int, typ, message string) Reply {
	return JSON(status, fmt.Sprintf(`{"type":"error","error":{"type":%s,"message":%s},"request_id":"req_011CfakeRequest"}`, quote(typ), quote(message)))
}

// RateLimited returns a 429 reply with a Retry-After header (seconds or an
// HTTP date) and an OpenAI-style rate limit error.
func RateLimited(retryAfter string) Reply {
	return OpenAIError(429, "requests", "rate_limit_exceeded",
		"Rate limit reached for requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in "+retryAfter+"s.").
		WithHeader("Retry-After", retryAfter)
}

// ResponsesText returns a completed Responses API answer: a reasoning item
// and an assistant message with text, with the given usage.
func ResponsesText(text string, inputTokens, outputTokens int) Reply {
	return JSON(200, `{"id":"resp_68fake01","object":"response","created_at":1764460800,"status":"completed",`+
		`"error":null,"incomplete_details":null,"model":"gpt-5.1-codex","output":[`+
		`{"id":"rs_68fake01","type":"reasoning","summary":[{"type":"summary_text","text":"Summarizing the session."}],"encrypted_content":"gAAAAfakeEncrypted=="},`+
		`{"id":"msg_68fake01","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":`+quote(text)+`}]}],`+
		`"parallel_tool_calls":true,"store":false,"usage":{"input_tokens":`+strconv.Itoa(inputTokens)+
		`,"input_tokens_details":{"cached_tokens":0},"output_tokens":`+strconv.Itoa(outputTokens)+
		`,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":`+strconv.Itoa(inputTokens+outputTokens)+`}}`)
}

// CompactionItem returns a raw Responses compaction output item.
func CompactionItem(id, encrypted string) string {
	return `{"id":` + quote(id) + `,"type":"compaction","encrypted_content":` + quote(encrypted) + `}`
}

// UserItem returns a raw Responses user message output item.
func UserItem(text string) string {
	return `{"type":"message","role":"user","content":[{"type":"input_text","text":` + quote(text) + `}]}`
}

// ResponsesCompacted returns a /responses/compact answer whose output is the
// given raw items.
func ResponsesCompacted(items ...string) Reply {
	return JSON(200, `{"id":"cmp_68fake01","object":"response.compaction","created_at":1764460800,"output":[`+
		strings.Join(items, ",")+`],"usage":{"input_tokens":139000,"input_tokens_details":{"cached_tokens":0},`+
		`"output_tokens":4200,"output_tokens_details":{"reasoning_tokens":3100},"total_tokens":143200}}`)
}

// ResponsesStream returns a Responses API event stream that delivers text
// in a few deltas, ending with response.completed.
func ResponsesStream(text string) Reply {
	msg := `{"id":"msg_s1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"text":` + quote(text) + `}]}`
	resp := func(status, output string) string {
		return `{"id":"resp_s1","object":"response","created_at":1764460800,"status":"` + status + `","model":"gpt-5.1-codex","output":[` + output + `]` +
			`,"usage":{"input_tokens":900,"input_tokens_details":{"cached_tokens":512},"output_tokens":40,"total_tokens":940}}`
	}
	evs := []Event{
		{"response.created", `{"type":"response.created","sequence_number":0,"response":` + resp("in_progress", "") + `}`},
		{"response.in_progress", `{"type":"response.in_progress","sequence_number":1,"response":` + resp("in_progress", "") + `}`},
		{"response.output_item.added", `{"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"id":"msg_s1","type":"message","status":"in_progress","role":"assistant","content":[]}}`},
		{"response.content_part.added", `{"type":"response.content_part.added","sequence_number":3,"item_id":"msg_s1","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"text":""}}`},
	}
	seq := 4
	for _, d := range chunks(text, 3) {
		evs = append(evs, Event{"response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":` + strconv.Itoa(seq) +
			`,"item_id":"msg_s1","output_index":0,"content_index":0,"delta":` + quote(d) + `}`})
		seq++
	}
	evs = append(evs,
		Event{"response.output_text.done", `{"type":"response.output_text.done","item_id":"msg_s1","output_index":0,"content_index":0,"text":` + quote(text) + `}`},
		Event{"response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":` + msg + `}`},
		Event{"response.completed", `{"type":"response.completed","response":` + resp("completed", msg) + `}`},
	)
	return SSE(evs...)
}

// AnthropicText returns an Anthropic Messages answer with one text block.
func AnthropicText(text string, inputTokens, outputTokens int) Reply {
	return JSON(200, `{"id":"msg_01FakeText","type":"message","role":"assistant","model":"claude-sonnet-4-6",`+
		`"content":[{"type":"text","text":`+quote(text)+`}],"stop_reason":"end_turn","stop_sequence":null,`+
		`"usage":{"input_tokens":`+strconv.Itoa(inputTokens)+`,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,`+
		`"output_tokens":`+strconv.Itoa(outputTokens)+`,"service_tier":"standard"}}`)
}

// AnthropicCompacted returns an Anthropic Messages answer paused after an
// inline compaction: stop_reason "compaction", one compaction block holding
// summary (with a cache_control and an unknown field, to check that blocks
// are kept whole), and usage with compaction and message iterations.
func AnthropicCompacted(summary string) Reply {
	return JSON(200, `{"id":"msg_01FakeCompact","type":"message","role":"assistant","model":"claude-opus-4-6",`+
		`"content":[{"type":"compaction","content":`+quote(summary)+`,"cache_control":{"type":"ephemeral"},"x_signature":"sig-fake-01"}],`+
		`"stop_reason":"compaction","stop_sequence":null,`+
		`"context_management":{"applied_edits":[{"type":"compact_20260112"}]},`+
		`"usage":{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,`+
		`"iterations":[{"type":"compaction","input_tokens":180000,"output_tokens":3500,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}]}}`)
}

// AnthropicStream returns an Anthropic Messages event stream that delivers
// text in a few deltas.
func AnthropicStream(text string) Reply {
	evs := []Event{
		{"message_start", `{"type":"message_start","message":{"id":"msg_01FakeStream","type":"message","role":"assistant","model":"claude-sonnet-4-6","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1500,"cache_creation_input_tokens":0,"cache_read_input_tokens":1000,"output_tokens":1}}}`},
		{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`},
		{"ping", `{"type": "ping"}`},
	}
	for _, d := range chunks(text, 3) {
		evs = append(evs, Event{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":` + quote(d) + `}}`})
	}
	evs = append(evs,
		Event{"content_block_stop", `{"type":"content_block_stop","index":0}`},
		Event{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":42}}`},
		Event{"message_stop", `{"type":"message_stop"}`},
	)
	return SSE(evs...)
}

// ChatText returns an OpenAI-style chat completion answer.
func ChatText(text string, inputTokens, outputTokens int) Reply {
	return JSON(200, `{"id":"chatcmpl-fake01","object":"chat.completion","created":1764460800,"model":"deepseek-chat",`+
		`"choices":[{"index":0,"message":{"role":"assistant","content":`+quote(text)+`},"logprobs":null,"finish_reason":"stop"}],`+
		`"usage":{"prompt_tokens":`+strconv.Itoa(inputTokens)+`,"completion_tokens":`+strconv.Itoa(outputTokens)+
		`,"total_tokens":`+strconv.Itoa(inputTokens+outputTokens)+`,"prompt_tokens_details":{"cached_tokens":0}}}`)
}

// ChatStream returns a chat completions event stream that delivers text in a
// few deltas, a usage chunk, and [DONE].
func ChatStream(text string) Reply {
	evs := []Event{{"", `{"id":"chatcmpl-s1","object":"chat.completion.chunk","created":1764460800,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`}}
	for _, d := range chunks(text, 3) {
		evs = append(evs, Event{"", `{"id":"chatcmpl-s1","object":"chat.completion.chunk","created":1764460800,"model":"m","choices":[{"index":0,"delta":{"content":` + quote(d) + `},"finish_reason":null}]}`})
	}
	evs = append(evs,
		Event{"", `{"id":"chatcmpl-s1","object":"chat.completion.chunk","created":1764460800,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`},
		Event{"", `{"id":"chatcmpl-s1","object":"chat.completion.chunk","created":1764460800,"model":"m","choices":[],"usage":{"prompt_tokens":700,"completion_tokens":30,"total_tokens":730}}`},
		Event{"", `[DONE]`},
	)
	return SSE(evs...)
}

// chunks splits s into about n pieces on rune boundaries.
func chunks(s string, n int) []string {
	r := []rune(s)
	if len(r) == 0 {
		return []string{""}
	}
	size := (len(r) + n - 1) / n
	var out []string
	for len(r) > 0 {
		k := min(size, len(r))
		out = append(out, string(r[:k]))
		r = r[k:]
	}
	return out
}

// Truncated returns r cut short by a connection abort: an event stream after
// n events, a JSON body after n bytes.
func (r Reply) Truncated(n int) Reply {
	if r.Events != nil {
		r.CutAfter = n
	} else {
		r.CutBody = n
	}
	return r
}
