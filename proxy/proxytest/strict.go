package proxytest

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// This file is the strict side of the fake (Options.Strict): every model
// request is validated as the real API validates it, and refused with the
// API's 400 when it would be; and the providers' prompt caches are
// modelled, byte for byte, so that a test can count the requests that
// start with the previous request of their conversation and what the
// cache would have served.
//
// The checks, per wire:
//   - Messages: every tool_use is answered by a tool_result in the next
//     (user) message and every tool_result answers a tool_use of the
//     message before; thinking blocks carry the signature the fake issued
//     for their exact text; with thinking on, the assistant message of the
//     tool turn being answered starts with a thinking block (when the fake
//     gives thinking, Options.Thinking); at most 4
//     cache_control breakpoints.
//   - Responses: every function_call (custom_tool_call) has its output
//     later in the input and every output a call before it; a reasoning
//     item is followed by the item it produced, and its encrypted content
//     is the fake's, byte for byte.
//   - chat completions: an assistant message's tool_calls are answered by
//     the tool messages right after it, and every tool message answers one.
//   - Gemini (gemini.go): function calls and responses paired turn by turn,
//     the thoughtSignature of the current turn's calls the fake's, with
//     their arguments unchanged.
//   - every wire, through a [Upstream.Tap]: the request's members other
//     than its conversation (system, tools, model, every other top-level
//     field) are byte for byte those the agent sent.
//
// The prompt of a request is its cacheable part in order (tools, system
// or instructions, then every message, input item or content), each as the
// model reads it: its JSON value with cache_control markers dropped. A
// request is prefix-stable when the prompt of the previous request of its
// conversation (the same endpoint, kind and system) is a prefix of its
// own; what the cache serves is the longest prefix it shares with one of
// the endpoint's recent prompts (for Gemini, the model's, at least the
// family's minimum cacheable size: gemini.go).

// CacheEntry is the cache model's account of one model request.
type CacheEntry struct {
	Path string
	Kind string
	// PromptBytes is the size of the request's prompt, CachedBytes the
	// part of it a prompt cache holding the endpoint's recent prompts
	// serves.
	PromptBytes, CachedBytes int
	// First says the request is the first of its conversation; Stable that
	// it is not, and that it starts with the prompt of the previous one.
	First, Stable bool
	// Divergence shows, for a request that is neither, where its prompt
	// leaves the previous one: the bytes from there on in both.
	Divergence string
}

// Strictness is what the strict checks and the cache model saw.
type Strictness struct {
	// Rejected are the requests refused with a 400, with the reason.
	Rejected []string
	// Entries are the accepted model requests, in arrival order.
	Entries []CacheEntry
}

// Stable returns the prefix-stable requests of a kind ("" any) and the
// requests of that kind that follow another one of their conversation.
func (s Strictness) Stable(kind string) (stable, total int) {
	for _, e := range s.Entries {
		if (kind == "" || e.Kind == kind) && !e.First {
			total++
			if e.Stable {
				stable++
			}
		}
	}
	return stable, total
}

// strict is the state of the strict checks and the cache model.
type strict struct {
	mu       sync.Mutex
	last     map[string][]byte   // conversation → its last prompt
	recent   map[string][][]byte // endpoint → its recent prompts
	rejected []string
	entries  []CacheEntry
	// tapped are the bodies the agent sent through the tap, by sequence.
	tapped map[int][]byte
	seq    int
}

// recentPrompts is how many prompts of an endpoint the cache model keeps.
const recentPrompts = 16

// Strictness returns what the strict checks and the cache model saw.
func (u *Upstream) Strictness() Strictness {
	u.st.mu.Lock()
	defer u.st.mu.Unlock()
	return Strictness{Rejected: append([]string(nil), u.st.rejected...), Entries: append([]CacheEntry(nil), u.st.entries...)}
}

// tapHeader carries the sequence number a tap gave an agent's request.
const tapHeader = "X-Proxytest-Tap"

// Tap returns the URL of a reverse proxy to target (a proxy in front of
// this upstream) that remembers every request the agent sends, so that
// the strict checks can compare what reaches the upstream with what the
// agent sent. It stops with the upstream.
func (u *Upstream) Tap(target string) (string, error) {
	t, err := url.Parse(target)
	if err != nil {
		return "", err
	}
	rp := httputil.NewSingleHostReverseProxy(t)
	rp.FlushInterval = -1
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body bytes.Buffer
		if _, err := body.ReadFrom(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		u.st.mu.Lock()
		u.st.seq++
		n := u.st.seq
		if u.st.tapped == nil {
			u.st.tapped = map[int][]byte{}
		}
		u.st.tapped[n] = body.Bytes()
		u.st.mu.Unlock()
		r.Header.Set(tapHeader, strconv.Itoa(n))
		r.Body = readCloser{bytes.NewReader(body.Bytes())}
		r.ContentLength = int64(body.Len())
		rp.ServeHTTP(w, r)
	})
	return u.serveExtra(h)
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// check validates a model request of kind for endpoint path and models the
// cache; a non-empty result is the reason it is refused.
func (u *Upstream) check(path, kind string, header http.Header, body []byte) string {
	wire := wireOf(path)
	var prompt [][]byte
	var system []byte
	var reason string
	switch wire {
	case "messages":
		prompt, system, reason = checkMessages(body, u.o.Thinking)
	case "responses":
		prompt, system, reason = checkResponses(body)
	case "chat":
		prompt, system, reason = checkChat(body)
	default:
		return ""
	}
	if reason == "" {
		reason = u.checkTapped(wire, header, body)
	}
	if reason != "" {
		u.reject(path, kind, reason)
		return reason
	}
	u.remember(path, path, kind, system, prompt, 0)
	return ""
}

// reject records a refused request.
func (u *Upstream) reject(path, kind, reason string) {
	u.st.mu.Lock()
	defer u.st.mu.Unlock()
	u.st.rejected = append(u.st.rejected, fmt.Sprintf("%s %s: %s", path, kind, reason))
}

// remember models the prompt cache for an accepted request of kind to
// path whose prompt is prompt: the conversation is path, kind and system;
// the cache is the recent prompts under cacheKey (the endpoint, or for
// Gemini the model); a shared prefix shorter than minCached bytes is not
// served from the cache. It returns the request's entry.
func (u *Upstream) remember(path, cacheKey, kind string, system []byte, prompt [][]byte, minCached int) CacheEntry {
	u.st.mu.Lock()
	defer u.st.mu.Unlock()
	flat := bytes.Join(prompt, []byte{'\n'})
	e := CacheEntry{Path: path, Kind: kind, PromptBytes: len(flat)}
	conv := path + "\x00" + kind + "\x00" + string(system)
	if u.st.last == nil {
		u.st.last, u.st.recent = map[string][]byte{}, map[string][][]byte{}
	}
	prev, ok := u.st.last[conv]
	e.First = !ok
	e.Stable = ok && bytes.HasPrefix(flat, prev)
	if ok && !e.Stable {
		n := commonBytes(prev, flat)
		from := max(0, n-40)
		e.Divergence = fmt.Sprintf("at byte %d of %d: previous %q, this %q", n, len(prev), prev[from:min(len(prev), n+160)], flat[from:min(len(flat), n+160)])
	}
	for _, p := range u.st.recent[cacheKey] {
		e.CachedBytes = max(e.CachedBytes, commonBytes(p, flat))
	}
	if e.CachedBytes < minCached {
		e.CachedBytes = 0
	}
	u.st.last[conv] = flat
	r := append(u.st.recent[cacheKey], flat)
	if len(r) > recentPrompts {
		r = r[1:]
	}
	u.st.recent[cacheKey] = r
	u.st.entries = append(u.st.entries, e)
	return e
}

func commonBytes(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func wireOf(path string) string {
	switch {
	case strings.HasSuffix(path, "/messages"):
		return "messages"
	case strings.HasSuffix(path, "/responses"):
		return "responses"
	case strings.HasSuffix(path, "/chat/completions"):
		return "chat"
	}
	return ""
}

// conversationMembers are the members of a request that hold its
// conversation, which a proxy may change; every other member must reach
// the upstream as the agent sent it.
var conversationMembers = map[string]map[string]bool{
	"messages":  {"messages": true},
	"responses": {"input": true},
	"chat":      {"messages": true},
	"gemini":    {"contents": true},
}

// checkTapped compares the members of a request that came through the tap
// with the agent's.
func (u *Upstream) checkTapped(wire string, header http.Header, body []byte) string {
	n, err := strconv.Atoi(header.Get(tapHeader))
	if err != nil {
		return "" // not the agent's request (the engine's own call)
	}
	u.st.mu.Lock()
	sent := u.st.tapped[n]
	u.st.mu.Unlock()
	var a, b map[string]json.RawMessage
	if json.Unmarshal(sent, &a) != nil {
		return "" // the agent's body is not JSON: forwarded as it is
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return "the proxy forwarded a body that is not JSON: " + err.Error()
	}
	for k, v := range a {
		if conversationMembers[wire][k] {
			continue
		}
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			return fmt.Sprintf("%q differs from the agent's request", k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok && !conversationMembers[wire][k] {
			return fmt.Sprintf("%q was not in the agent's request", k)
		}
	}
	return ""
}

// canonical is a JSON value as the model reads it: its value without
// cache_control markers, in a canonical encoding.
func canonical(raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return raw
	}
	b, _ := json.Marshal(dropCacheControl(v))
	return b
}

func dropCacheControl(v any) any {
	switch x := v.(type) {
	case map[string]any:
		delete(x, "cache_control")
		for k, e := range x {
			x[k] = dropCacheControl(e)
		}
	case []any:
		for i, e := range x {
			x[i] = dropCacheControl(e)
		}
	}
	return v
}

// countCacheControl counts the cache_control markers in v.
func countCacheControl(raw json.RawMessage) int {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return 0
	}
	var count func(v any) int
	count = func(v any) int {
		n := 0
		switch x := v.(type) {
		case map[string]any:
			if c, ok := x["cache_control"]; ok && c != nil {
				n++
			}
			for _, e := range x {
				n += count(e)
			}
		case []any:
			for _, e := range x {
				n += count(e)
			}
		}
		return n
	}
	return count(v)
}

// signature is the signature the fake gives a thinking text (or the
// encrypted content of a reasoning summary).
func signature(text string) string {
	sum := sha256.Sum256([]byte("proxytest-thinking\x00" + text))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// blocks decodes a content that is a string or a list of blocks.
func blocks(raw json.RawMessage) []map[string]json.RawMessage {
	var list []map[string]json.RawMessage
	_ = json.Unmarshal(raw, &list)
	return list
}

func str(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// checkMessages validates a Messages request; it returns its prompt and
// system.
func checkMessages(body []byte, thinking bool) (prompt [][]byte, system []byte, reason string) {
	var req struct {
		System   json.RawMessage `json:"system"`
		Tools    json.RawMessage `json:"tools"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Thinking *struct {
			Type string `json:"type"`
		} `json:"thinking"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, nil, "invalid request body: " + err.Error()
	}
	if len(req.Messages) == 0 {
		return nil, nil, "messages: at least one message is required"
	}
	marks := countCacheControl(req.System) + countCacheControl(req.Tools)
	prompt = append(prompt, canonical(req.Tools), canonical(req.System))
	// The API merges consecutive messages of one role into one turn (an
	// agent may send each tool result as a message of its own).
	type turn struct {
		role   string
		first  int // index of its first message
		blocks []map[string]json.RawMessage
	}
	var turns []turn
	for i, m := range req.Messages {
		marks += countCacheControl(m.Content)
		prompt = append(prompt, canonical(m.Content))
		bs := blocks(m.Content)
		if len(turns) == 0 || turns[len(turns)-1].role != m.Role {
			turns = append(turns, turn{role: m.Role, first: i})
		}
		if bs == nil {
			bs = []map[string]json.RawMessage{{"type": json.RawMessage(`"text"`)}}
		}
		turns[len(turns)-1].blocks = append(turns[len(turns)-1].blocks, bs...)
	}
	ids := func(t turn, typ, key string) map[string]bool {
		out := map[string]bool{}
		for _, b := range t.blocks {
			if str(b["type"]) == typ {
				out[str(b[key])] = true
			}
		}
		return out
	}
	for k, t := range turns {
		for j, b := range t.blocks {
			switch str(b["type"]) {
			case "tool_use":
				if t.role != "assistant" {
					return nil, nil, fmt.Sprintf("messages.%d: tool_use in a user message", t.first)
				}
			case "tool_result":
				if t.role != "user" {
					return nil, nil, fmt.Sprintf("messages.%d: tool_result in an assistant message", t.first)
				}
				if k == 0 || !ids(turns[k-1], "tool_use", "id")[str(b["tool_use_id"])] {
					return nil, nil, fmt.Sprintf("messages.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", t.first, str(b["tool_use_id"]))
				}
			case "thinking":
				if t.role != "assistant" || str(b["signature"]) != signature(str(b["thinking"])) {
					return nil, nil, fmt.Sprintf("messages.%d: Invalid `signature` in `thinking` block %d", t.first, j)
				}
			case "redacted_thinking":
				return nil, nil, fmt.Sprintf("messages.%d: Invalid `data` in `redacted_thinking` block", t.first)
			}
		}
		if t.role != "assistant" {
			continue
		}
		var answered map[string]bool
		if k+1 < len(turns) {
			answered = ids(turns[k+1], "tool_result", "tool_use_id")
		}
		for id := range ids(t, "tool_use", "id") {
			if !answered[id] {
				return nil, nil, fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s", t.first, id)
			}
		}
	}
	if marks > 4 {
		return nil, nil, fmt.Sprintf("A maximum of 4 blocks with cache_control may be provided. Found %d.", marks)
	}
	if n := len(turns); thinking && req.Thinking != nil && req.Thinking.Type != "disabled" && n >= 2 &&
		turns[n-1].role == "user" && hasType(turns[n-1].blocks, "tool_result") {
		// The tool turn being answered: its assistant message starts with
		// the thinking the fake gave it.
		a := turns[n-2].blocks
		if typ := str(a[0]["type"]); typ != "thinking" && typ != "redacted_thinking" {
			return nil, nil, fmt.Sprintf("messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found `%s`. When `thinking` is enabled, a final `assistant` message must start with a thinking block.", turns[n-2].first, typ)
		}
	}
	return prompt, canonical(req.System), ""
}

func hasType(bs []map[string]json.RawMessage, typ string) bool {
	for _, b := range bs {
		if str(b["type"]) == typ {
			return true
		}
	}
	return false
}

// checkResponses validates a Responses request.
func checkResponses(body []byte) (prompt [][]byte, system []byte, reason string) {
	var req struct {
		Instructions json.RawMessage `json:"instructions"`
		Tools        json.RawMessage `json:"tools"`
		Input        json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, nil, "invalid request body: " + err.Error()
	}
	prompt = append(prompt, canonical(req.Tools), canonical(req.Instructions))
	var items []map[string]json.RawMessage
	if json.Unmarshal(req.Input, &items) != nil {
		// A string input: one user message.
		return append(prompt, canonical(req.Input)), canonical(req.Instructions), ""
	}
	calls, outputs := map[string]int{}, map[string]int{}
	for i, it := range items {
		prompt = append(prompt, canonical(mustJSON(it)))
		switch typ := str(it["type"]); typ {
		case "function_call", "custom_tool_call":
			calls[str(it["call_id"])] = i
		case "function_call_output", "custom_tool_call_output":
			id := str(it["call_id"])
			if c, ok := calls[id]; !ok || c > i {
				return nil, nil, fmt.Sprintf("No tool call found for function call output with call_id %s.", id)
			}
			outputs[id] = i
		case "reasoning":
			if enc := str(it["encrypted_content"]); enc != "" && enc != signature(str(it["id"])) {
				return nil, nil, fmt.Sprintf("The encrypted content for item %s could not be verified.", str(it["id"]))
			}
			if i+1 >= len(items) {
				return nil, nil, fmt.Sprintf("Item '%s' of type 'reasoning' was provided without its required following item.", str(it["id"]))
			}
			next := items[i+1]
			switch str(next["type"]) {
			case "function_call", "custom_tool_call", "local_shell_call", "web_search_call":
			case "message":
				if str(next["role"]) != "assistant" {
					return nil, nil, fmt.Sprintf("Item '%s' of type 'reasoning' was provided without its required following item.", str(it["id"]))
				}
			default:
				return nil, nil, fmt.Sprintf("Item '%s' of type 'reasoning' was provided without its required following item.", str(it["id"]))
			}
		}
	}
	for id := range calls {
		if _, ok := outputs[id]; !ok {
			return nil, nil, fmt.Sprintf("No tool output found for function call %s.", id)
		}
	}
	return prompt, canonical(req.Instructions), ""
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// checkChat validates a chat completions request.
func checkChat(body []byte) (prompt [][]byte, system []byte, reason string) {
	var req struct {
		Tools    json.RawMessage `json:"tools"`
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID string `json:"id"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, nil, "invalid request body: " + err.Error()
	}
	if len(req.Messages) == 0 {
		return nil, nil, "'messages' must contain at least one message"
	}
	var raw struct {
		Messages []json.RawMessage `json:"messages"`
	}
	_ = json.Unmarshal(body, &raw)
	raws := raw.Messages
	prompt = append(prompt, canonical(req.Tools))
	for i, m := range req.Messages {
		if i < len(raws) {
			prompt = append(prompt, canonical(raws[i]))
		}
		if i == 0 && (m.Role == "system" || m.Role == "developer") {
			system = canonical(m.Content)
		}
		if m.Role == "tool" {
			// It answers a call of the assistant message before the run
			// of tool messages it is in.
			j := i - 1
			for j >= 0 && req.Messages[j].Role == "tool" {
				j--
			}
			ok := false
			if j >= 0 && req.Messages[j].Role == "assistant" {
				for _, c := range req.Messages[j].ToolCalls {
					ok = ok || c.ID == m.ToolCallID
				}
			}
			if !ok {
				return nil, nil, fmt.Sprintf("messages.[%d].role: messages with role 'tool' must be a response to a preceeding message with 'tool_calls' (tool_call_id %s)", i, m.ToolCallID)
			}
		}
		if m.Role == "assistant" && len(m.ToolCalls) > 0 {
			answered := map[string]bool{}
			for j := i + 1; j < len(req.Messages) && req.Messages[j].Role == "tool"; j++ {
				answered[req.Messages[j].ToolCallID] = true
			}
			var missing []string
			for _, c := range m.ToolCalls {
				if !answered[c.ID] {
					missing = append(missing, c.ID)
				}
			}
			if len(missing) > 0 {
				return nil, nil, fmt.Sprintf("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s", strings.Join(missing, ", "))
			}
		}
	}
	return prompt, system, ""
}

// rejection is the 400 body of the API of wire for reason.
func rejection(wire, reason string) map[string]any {
	if wire == "messages" {
		return map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": reason}}
	}
	return map[string]any{"error": map[string]any{"message": reason, "type": "invalid_request_error", "param": nil, "code": nil}}
}
