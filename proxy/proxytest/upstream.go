// Package proxytest is a scripted fake model provider for testing the
// proxy and real coding agents through it, offline. One server speaks the
// four wire formats a proxy forwards, with their real SSE event sequences:
// Anthropic Messages (POST …/messages, also count_tokens), OpenAI Responses
// (POST …/responses), chat completions (POST …/chat/completions) and the
// Gemini API (POST …/models/{model}:generateContent and friends, gemini.go).
//
// The script is a list of turns, each a text and tool calls. The turn a
// request is at is derived from the request alone, as a real API would
// have to: every tool call the fake emits has an id naming its turn
// (toolu_fake_t<N>_<i>, call_fake_t<N>_<i>), and the turn of a request is 1
// + the largest N in it, so it keeps going after an engine or the agent
// dropped old history; a summary the fake writes for an agent's compaction
// request carries "[fake-state next_turn=N]" for the same reason. Past the
// end the last turn repeats.
//
// Every request is kept (headers with credentials redacted) for the test's
// assertions, with the usage the fake reported for it. Reported input
// tokens are the body size / 4 × TokenScale, of which CacheRatio are
// reported as cache reads (and on Messages, a quarter of the rest as cache
// writes, half of those with a 1-hour lifetime).
// With Options.Strict the fake refuses what the real APIs refuse and
// models their prompt caches (strict.go).
package proxytest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Call is one scripted tool call. Input is the call's JSON input.
type Call struct {
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// Turn is one scripted model step.
type Turn struct {
	Text  string `json:"text"`
	Calls []Call `json:"calls,omitempty"`
}

// Request is one request the fake received.
type Request struct {
	Method string
	Path   string
	Header http.Header // authorization, x-api-key and cookies redacted
	Body   []byte
	Kind   string // main, compact, count, side, other
	Turn   int
	Usage  Usage // what the answer reported (zero for a failure, a count or other)
}

// Usage is the usage the fake reported for a request, in billed kinds:
// Input is the uncached input.
type Usage struct {
	Input, CacheRead, CacheWrite5m, CacheWrite1h, Output int
}

// Failure is an answer the fake gives instead of the scripted one.
type Failure struct {
	Status int
	Header http.Header
	Body   string
}

// Options configure an [Upstream].
type Options struct {
	// TokenScale multiplies the reported input tokens; 0 means 1.
	TokenScale float64
	// Chunk is the size of the text and argument pieces of a stream; 0
	// means 40 bytes.
	Chunk int
	// Strict validates every model request as the real API does and
	// refuses it with the API's 400 when it would (strict.go), and models
	// the prompt cache; see [Upstream.Strictness].
	Strict bool
	// Thinking makes every answer to a request that asks for thinking
	// (Messages: "thinking" on; Responses: a "reasoning" member) start with
	// a signed thinking block or an encrypted reasoning item, which a
	// strict upstream then requires back byte for byte.
	Thinking bool
	// CacheRatio is the part of the input reported as read from the
	// cache, in [0, 1].
	CacheRatio float64
}

// Upstream is a running fake provider.
type Upstream struct {
	URL string // http://127.0.0.1:PORT

	turns []Turn
	o     Options
	srv   *http.Server
	ln    net.Listener

	mu       sync.Mutex
	requests []Request
	fail     []Failure
	st       strict
	extra    []*http.Server
}

// Start starts a fake provider on a loopback port.
func Start(turns []Turn, o Options) (*Upstream, error) {
	if len(turns) == 0 {
		return nil, fmt.Errorf("proxytest: empty script")
	}
	if o.TokenScale == 0 {
		o.TokenScale = 1
	}
	if o.Chunk <= 0 {
		o.Chunk = 40
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	u := &Upstream{URL: "http://" + ln.Addr().String(), turns: turns, o: o, ln: ln}
	u.srv = &http.Server{Handler: u}
	go u.srv.Serve(ln)
	return u, nil
}

// Close stops the server.
func (u *Upstream) Close() error {
	u.mu.Lock()
	extra := u.extra
	u.mu.Unlock()
	for _, srv := range extra {
		srv.Close()
	}
	return u.srv.Close()
}

// serveExtra serves h on another loopback port until the upstream closes.
func (u *Upstream) serveExtra(h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: h}
	u.mu.Lock()
	u.extra = append(u.extra, srv)
	u.mu.Unlock()
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), nil
}

// Requests returns the requests received so far.
func (u *Upstream) Requests() []Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]Request(nil), u.requests...)
}

// FailNext makes the next engine request (any kind but other) fail with f.
func (u *Upstream) FailNext(f Failure) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.fail = append(u.fail, f)
}

var (
	callIDRe = regexp.MustCompile(`(?:toolu|call)_fake_t(\d+)_`)
	stateRe  = regexp.MustCompile(`\[fake-state next_turn=(\d+)\]`)
)

// turnOf derives the turn of a request from its body.
func turnOf(body []byte) int {
	turn := 0
	for _, m := range callIDRe.FindAllSubmatch(body, -1) {
		if n, _ := strconv.Atoi(string(m[1])); n+1 > turn {
			turn = n + 1
		}
	}
	for _, m := range stateRe.FindAllSubmatch(body, -1) {
		if n, _ := strconv.Atoi(string(m[1])); n > turn {
			turn = n
		}
	}
	return turn
}

// ServeHTTP implements http.Handler.
func (u *Upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h := r.Header.Clone()
	for _, k := range []string{"Authorization", "X-Api-Key", "Cookie"} {
		if h.Get(k) != "" {
			h.Set(k, "[redacted]")
		}
	}
	req := Request{Method: r.Method, Path: r.URL.Path, Header: h, Body: body, Turn: turnOf(body)}
	path := strings.TrimSuffix(r.URL.Path, "/")
	if m := geminiMethod(path); m != "" && r.Method == http.MethodPost {
		u.serveGemini(w, r, path, m, req) // the Gemini API: gemini.go
		return
	}
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/messages/count_tokens"):
		req.Kind = "count"
	case r.Method == http.MethodPost && (strings.HasSuffix(path, "/messages") || strings.HasSuffix(path, "/responses") || strings.HasSuffix(path, "/chat/completions")):
		req.Kind = u.kind(body)
	default:
		req.Kind = "other"
	}
	tokens := int(float64(len(body)) / 4 * u.o.TokenScale)
	us := u.usage(path, body, tokens)
	u.mu.Lock()
	var fail *Failure
	if req.Kind != "other" && len(u.fail) > 0 {
		fail = &u.fail[0]
		u.fail = u.fail[1:]
	}
	if fail == nil && req.Kind != "other" && req.Kind != "count" {
		req.Usage = us
	}
	u.requests = append(u.requests, req)
	u.mu.Unlock()
	if fail != nil {
		for k, vs := range fail.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(fail.Status)
		io.WriteString(w, fail.Body)
		return
	}
	if u.o.Strict && req.Kind != "other" && req.Kind != "count" {
		if reason := u.check(path, req.Kind, r.Header, body); reason != "" {
			b, _ := json.Marshal(rejection(wireOf(path), reason))
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write(b)
			return
		}
	}
	switch {
	case req.Kind == "count":
		writeJSON(w, map[string]int{"input_tokens": tokens})
	case req.Kind == "other":
		if strings.HasSuffix(path, "/models") {
			writeJSON(w, map[string]any{"data": []any{}, "object": "list"})
			return
		}
		writeJSON(w, map[string]any{})
	case strings.HasSuffix(path, "/messages"):
		u.anthropic(w, body, req, us)
	case strings.HasSuffix(path, "/responses"):
		u.responses(w, body, req, us)
	default:
		u.chat(w, body, req, us)
	}
}

// usage is what the answer to a request of tokens input tokens reports.
func (u *Upstream) usage(path string, body []byte, tokens int) Usage {
	read := int(float64(tokens) * min(max(u.o.CacheRatio, 0), 1))
	us := Usage{Input: tokens - read, CacheRead: read, Output: 10}
	if strings.HasSuffix(path, "/messages") {
		write := us.Input / 4
		us.CacheWrite1h = write / 2
		us.CacheWrite5m = write - us.CacheWrite1h
		us.Input -= write
		if !isStream(body) {
			us.Output = 1
		}
	}
	return us
}

// kind classifies a model request: compact when its last user text asks
// for a summary of the conversation, main when it offers a scripted tool,
// side otherwise.
func (u *Upstream) kind(body []byte) string {
	var v struct {
		Tools []struct {
			Name     string `json:"name"`
			Function *struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(body, &v)
	low := strings.ToLower(lastUserText(body))
	if strings.Contains(low, "context checkpoint compaction") ||
		(strings.Contains(low, "summar") && strings.Contains(low, "conversation") && strings.Contains(low, "text only")) {
		return "compact"
	}
	scripted := map[string]bool{}
	for _, t := range u.turns {
		for _, c := range t.Calls {
			scripted[c.Name] = true
		}
	}
	for _, t := range v.Tools {
		name := t.Name
		if t.Function != nil {
			name = t.Function.Name
		}
		if scripted[name] {
			return "main"
		}
	}
	return "side"
}

// lastUserText is the text of the last user message or input item.
func lastUserText(body []byte) string {
	var v struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Input json.RawMessage `json:"input"`
	}
	_ = json.Unmarshal(body, &v)
	type msg struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	var list []msg
	for _, m := range v.Messages {
		list = append(list, msg{m.Role, m.Content})
	}
	var items []msg
	if json.Unmarshal(v.Input, &items) == nil {
		list = append(list, items...)
	}
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].Role != "user" {
			continue
		}
		var s string
		if json.Unmarshal(list[i].Content, &s) == nil {
			return s
		}
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		_ = json.Unmarshal(list[i].Content, &parts)
		var sb strings.Builder
		for _, p := range parts {
			sb.WriteString(p.Text)
			sb.WriteByte('\n')
		}
		return sb.String()
	}
	return ""
}

// step returns the scripted turn for a request, or a summary for a
// compaction request.
func (u *Upstream) step(req Request) Turn {
	switch req.Kind {
	case "compact":
		return Turn{Text: fmt.Sprintf("<analysis>The conversation so far.</analysis>\n<summary>The task is under way. [fake-state next_turn=%d]</summary>", req.Turn)}
	case "side":
		return Turn{Text: "Fake side answer."}
	}
	t := req.Turn
	if t >= len(u.turns) {
		t = len(u.turns) - 1
	}
	return u.turns[t]
}

func writeJSON(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
}

// sse writes server-sent events, flushing each.
type sse struct {
	w  http.ResponseWriter
	fl http.Flusher
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	return &sse{w, fl}
}

func (s *sse) event(name string, v any) {
	b, _ := json.Marshal(v)
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	if s.fl != nil {
		s.fl.Flush()
	}
}

func (s *sse) raw(line string) {
	io.WriteString(s.w, line)
	if s.fl != nil {
		s.fl.Flush()
	}
}

func pieces(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	if s != "" || len(out) == 0 {
		out = append(out, s)
	}
	return out
}

// asksThinking reports whether a request asks for the model's thinking:
// Messages' "thinking" on, or a Responses "reasoning" member.
func asksThinking(body []byte) bool {
	var v struct {
		Thinking *struct {
			Type string `json:"type"`
		} `json:"thinking"`
		Reasoning json.RawMessage `json:"reasoning"`
	}
	_ = json.Unmarshal(body, &v)
	return (v.Thinking != nil && v.Thinking.Type != "disabled") || (len(v.Reasoning) > 0 && string(v.Reasoning) != "null")
}

func isStream(body []byte) bool {
	var v struct {
		Stream bool `json:"stream"`
	}
	_ = json.Unmarshal(body, &v)
	return v.Stream
}

func callInput(c Call) json.RawMessage {
	if len(c.Input) == 0 {
		return json.RawMessage(`{}`)
	}
	return c.Input
}

// anthropic answers a Messages request.
func (u *Upstream) anthropic(w http.ResponseWriter, body []byte, req Request, us Usage) {
	t := u.step(req)
	id := fmt.Sprintf("msg_fake_%d", req.Turn)
	stop := "end_turn"
	var content []map[string]any
	if u.o.Thinking && asksThinking(body) {
		thought := fmt.Sprintf("Thinking about step %d of the task.", req.Turn)
		content = append(content, map[string]any{"type": "thinking", "thinking": thought, "signature": signature(thought)})
	}
	if t.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": t.Text})
	}
	for i, c := range t.Calls {
		content = append(content, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_fake_t%d_%d", req.Turn, i), "name": c.Name, "input": callInput(c)})
		stop = "tool_use"
	}
	usage := map[string]any{"input_tokens": us.Input, "output_tokens": 1, "cache_creation_input_tokens": us.CacheWrite5m + us.CacheWrite1h,
		"cache_read_input_tokens": us.CacheRead,
		"cache_creation":          map[string]int{"ephemeral_5m_input_tokens": us.CacheWrite5m, "ephemeral_1h_input_tokens": us.CacheWrite1h}}
	if !isStream(body) {
		writeJSON(w, map[string]any{"id": id, "type": "message", "role": "assistant", "model": "fake", "content": content,
			"stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	s := newSSE(w)
	s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": id, "type": "message", "role": "assistant",
		"model": "fake", "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}})
	s.event("ping", map[string]any{"type": "ping"})
	for i, b := range content {
		if b["type"] == "thinking" {
			s.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
			for _, p := range pieces(b["thinking"].(string), u.o.Chunk) {
				s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "thinking_delta", "thinking": p}})
			}
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "signature_delta", "signature": b["signature"]}})
		} else if b["type"] == "text" {
			s.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			for _, p := range pieces(t.Text, u.o.Chunk) {
				s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": p}})
			}
		} else {
			s.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			for _, p := range pieces(string(b["input"].(json.RawMessage)), u.o.Chunk) {
				s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": p}})
			}
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	s.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 10}})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}

// responses answers a Responses request.
func (u *Upstream) responses(w http.ResponseWriter, body []byte, req Request, us Usage) {
	tokens := us.Input + us.CacheRead
	t := u.step(req)
	id := fmt.Sprintf("resp_fake_%d", req.Turn)
	var output []map[string]any
	if u.o.Thinking && asksThinking(body) {
		rs := fmt.Sprintf("rs_fake_%d", req.Turn)
		output = append(output, map[string]any{"type": "reasoning", "id": rs, "encrypted_content": signature(rs),
			"summary": []map[string]any{{"type": "summary_text", "text": fmt.Sprintf("Thinking about step %d.", req.Turn)}}})
	}
	if t.Text != "" {
		output = append(output, map[string]any{"type": "message", "id": "msg_fake", "status": "completed", "role": "assistant",
			"content": []map[string]any{{"type": "output_text", "text": t.Text, "annotations": []any{}}}})
	}
	for i, c := range t.Calls {
		output = append(output, map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_fake_%d_%d", req.Turn, i), "status": "completed",
			"call_id": fmt.Sprintf("call_fake_t%d_%d", req.Turn, i), "name": c.Name, "arguments": string(callInput(c))})
	}
	usage := map[string]any{"input_tokens": tokens, "input_tokens_details": map[string]int{"cached_tokens": us.CacheRead},
		"output_tokens": 10, "output_tokens_details": map[string]int{"reasoning_tokens": 0}, "total_tokens": tokens + 10}
	resp := func(status string, out any, us any) map[string]any {
		m := map[string]any{"id": id, "object": "response", "created_at": 1, "model": "fake", "status": status, "output": out}
		if us != nil {
			m["usage"] = us
		}
		return m
	}
	if !isStream(body) {
		writeJSON(w, resp("completed", output, usage))
		return
	}
	s := newSSE(w)
	seq := 0
	ev := func(typ string, m map[string]any) {
		m["type"] = typ
		m["sequence_number"] = seq
		seq++
		s.event(typ, m)
	}
	ev("response.created", map[string]any{"response": resp("in_progress", []any{}, nil)})
	ev("response.in_progress", map[string]any{"response": resp("in_progress", []any{}, nil)})
	for i, it := range output {
		if it["type"] == "reasoning" {
			ev("response.output_item.added", map[string]any{"output_index": i, "item": map[string]any{"type": "reasoning", "id": it["id"], "summary": []any{}}})
		} else if it["type"] == "message" {
			added := map[string]any{"type": "message", "id": it["id"], "status": "in_progress", "role": "assistant", "content": []any{}}
			ev("response.output_item.added", map[string]any{"output_index": i, "item": added})
			ev("response.content_part.added", map[string]any{"output_index": i, "item_id": it["id"], "content_index": 0, "part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
			for _, p := range pieces(t.Text, u.o.Chunk) {
				ev("response.output_text.delta", map[string]any{"output_index": i, "item_id": it["id"], "content_index": 0, "delta": p})
			}
			ev("response.output_text.done", map[string]any{"output_index": i, "item_id": it["id"], "content_index": 0, "text": t.Text})
			ev("response.content_part.done", map[string]any{"output_index": i, "item_id": it["id"], "content_index": 0, "part": map[string]any{"type": "output_text", "text": t.Text, "annotations": []any{}}})
		} else {
			added := map[string]any{}
			for k, v := range it {
				added[k] = v
			}
			added["arguments"], added["status"] = "", "in_progress"
			ev("response.output_item.added", map[string]any{"output_index": i, "item": added})
			args := it["arguments"].(string)
			for _, p := range pieces(args, u.o.Chunk) {
				ev("response.function_call_arguments.delta", map[string]any{"output_index": i, "item_id": it["id"], "delta": p})
			}
			ev("response.function_call_arguments.done", map[string]any{"output_index": i, "item_id": it["id"], "arguments": args})
		}
		ev("response.output_item.done", map[string]any{"output_index": i, "item": it})
	}
	ev("response.completed", map[string]any{"response": resp("completed", output, usage)})
}

// chat answers a chat completions request.
func (u *Upstream) chat(w http.ResponseWriter, body []byte, req Request, us Usage) {
	tokens := us.Input + us.CacheRead
	t := u.step(req)
	id := fmt.Sprintf("chatcmpl-fake-%d", req.Turn)
	finish := "stop"
	var calls []map[string]any
	for i, c := range t.Calls {
		calls = append(calls, map[string]any{"index": i, "id": fmt.Sprintf("call_fake_t%d_%d", req.Turn, i), "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": string(callInput(c))}})
		finish = "tool_calls"
	}
	usage := map[string]any{"prompt_tokens": tokens, "completion_tokens": 10, "total_tokens": tokens + 10,
		"prompt_tokens_details": map[string]int{"cached_tokens": us.CacheRead}}
	if !isStream(body) {
		msg := map[string]any{"role": "assistant", "content": t.Text}
		if calls != nil {
			msg["tool_calls"] = calls
		}
		writeJSON(w, map[string]any{"id": id, "object": "chat.completion", "created": 1, "model": "fake",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	s := newSSE(w)
	chunk := func(delta map[string]any, fin any) {
		s.event("", map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1, "model": "fake",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": fin}}})
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	if t.Text != "" {
		for _, p := range pieces(t.Text, u.o.Chunk) {
			chunk(map[string]any{"content": p}, nil)
		}
	}
	for i, c := range calls {
		fn := c["function"].(map[string]any)
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c["id"], "type": "function", "function": map[string]any{"name": fn["name"], "arguments": ""}}}}, nil)
		for _, p := range pieces(fn["arguments"].(string), u.o.Chunk) {
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": p}}}}, nil)
		}
	}
	chunk(map[string]any{}, finish)
	s.event("", map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1, "model": "fake", "choices": []any{}, "usage": usage})
	s.raw("data: [DONE]\n\n")
}

// Bodies returns the bodies of the requests of a kind.
func Bodies(reqs []Request, kind string) [][]byte {
	var out [][]byte
	for _, r := range reqs {
		if r.Kind == kind {
			out = append(out, r.Body)
		}
	}
	return out
}

// Contains reports whether any body contains s.
func Contains(bodies [][]byte, s string) bool {
	for _, b := range bodies {
		if bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}
