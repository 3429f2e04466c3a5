package proxytest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// The Gemini API side of the fake: POST …/models/{model}:generateContent,
// :streamGenerateContent (SSE with alt=sse, else a JSON array of chunks)
// and :countTokens. It is strict the way the API is, answering 400
// INVALID_ARGUMENT otherwise:
//
//   - every model content with function calls is followed by a user content
//     with as many function responses, of the same names;
//   - every function call the fake issued in the current turn (the
//     contents after the last user text, which is all the API validates)
//     comes back with its thoughtSignature and arguments unchanged.
//
// Calls carry no id, as the API's don't: the turn is in the signature,
// "vtcode-fake-signature t<N> i<i> <digest of name and args>" in base64.
//
// With Options.Strict the fake also holds the API to its implicit prompt
// cache (strict.go): a request whose prompt (tools, systemInstruction,
// then every content, as the model reads them) starts with one of the
// model's recent prompts is served that prefix from the cache, when it is
// at least the model family's minimum (geminiMinCached), and the answer's
// usageMetadata reports it as cachedContentTokenCount, as the API does
// (promptTokenCount includes it). A refused request is recorded with the
// other wires' in Strictness.Rejected.

// geminiMethod is the Gemini API method a path names ("" for none).
func geminiMethod(path string) string {
	i := strings.LastIndexByte(path, '/')
	if i < 0 || !strings.HasSuffix(path[:i], "/models") {
		return ""
	}
	_, m, _ := strings.Cut(path[i+1:], ":")
	switch m {
	case "generateContent", "streamGenerateContent", "countTokens":
		return m
	}
	return ""
}

// gContent is one element of a request's contents.
type gContent struct {
	Role  string  `json:"role"`
	Parts []gPart `json:"parts"`
}

type gPart struct {
	Text             *string `json:"text"`
	Thought          bool    `json:"thought"`
	ThoughtSignature string  `json:"thoughtSignature"`
	FunctionCall     *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

type gRequest struct {
	Contents          []gContent `json:"contents"`
	SystemInstruction *struct {
		Parts []gPart `json:"parts"`
	} `json:"systemInstruction"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		ResponseMimeType string `json:"responseMimeType"`
	} `json:"generationConfig"`
	GenerateContentRequest *gRequest `json:"generateContentRequest"`
}

func (r *gRequest) system() string {
	if r.SystemInstruction == nil {
		return ""
	}
	var sb strings.Builder
	for _, p := range r.SystemInstruction.Parts {
		if p.Text != nil {
			sb.WriteString(*p.Text)
		}
	}
	return sb.String()
}

// geminiPrompt is the prompt of a request body (its generateContentRequest
// when it wraps one) for the cache model, and its system instruction.
func geminiPrompt(body []byte) (prompt [][]byte, system []byte) {
	var req struct {
		Contents          []json.RawMessage `json:"contents"`
		SystemInstruction json.RawMessage   `json:"systemInstruction"`
		Tools             json.RawMessage   `json:"tools"`
		Inner             json.RawMessage   `json:"generateContentRequest"`
	}
	_ = json.Unmarshal(body, &req)
	if len(req.Contents) == 0 && len(req.Inner) > 0 {
		return geminiPrompt(req.Inner)
	}
	system = canonical(req.SystemInstruction)
	prompt = append(prompt, canonical(req.Tools), system)
	for _, c := range req.Contents {
		prompt = append(prompt, canonical(c))
	}
	return prompt, system
}

// geminiModel is the model a Gemini API path names
// (…/models/gemini-2.5-pro:generateContent → gemini-2.5-pro).
func geminiModel(path string) string {
	m := path[strings.LastIndexByte(path, '/')+1:]
	m, _, _ = strings.Cut(m, ":")
	return m
}

// geminiMinCached is the least prompt, in tokens, the Gemini API's
// implicit cache serves for model: 2,048 for the Gemini 2.5 family and
// 4,096 for Gemini 3 and later (ai.google.dev/gemini-api/docs/caching, the
// table of minimum input tokens, read 2026-12-02). Models before 2.5 have
// no implicit cache (-1: never served).
func geminiMinCached(model string) int {
	m := strings.ToLower(strings.TrimPrefix(model, "models/"))
	switch {
	case strings.HasPrefix(m, "gemini-2.5"):
		return 2048
	case strings.HasPrefix(m, "gemini-1."), strings.HasPrefix(m, "gemini-2.0"):
		return -1
	}
	return 4096
}

// geminiSignature is the signature the fake gives call i of turn n.
func geminiSignature(turn, i int, name string, args json.RawMessage) string {
	return base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("vtcode-fake-signature t%d i%d %s", turn, i, argsDigest(name, args))))
}

func argsDigest(name string, args json.RawMessage) string {
	var v any
	_ = json.Unmarshal(args, &v)
	b, _ := json.Marshal(v)
	h := sha256.Sum256(append([]byte(name+"\x00"), b...))
	return hex.EncodeToString(h[:6])
}

var sigRe = regexp.MustCompile(`^vtcode-fake-signature t(\d+) i(\d+) ([0-9a-f]+)$`)

// parseSignature reads a signature the fake issued.
func parseSignature(s string) (turn, i int, digest string, ok bool) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return 0, 0, "", false
	}
	m := sigRe.FindStringSubmatch(string(b))
	if m == nil {
		return 0, 0, "", false
	}
	turn, _ = strconv.Atoi(m[1])
	i, _ = strconv.Atoi(m[2])
	return turn, i, m[3], true
}

// geminiCheck validates a request as the API would; "" when it is valid.
// turn is 1 + the largest turn of a call it carries.
func (u *Upstream) geminiCheck(r *gRequest) (turn int, problem string) {
	scripted := u.scripted()
	cur := 0 // contents from cur on are the current turn
	for i, c := range r.Contents {
		if c.Role == "user" {
			for _, p := range c.Parts {
				if p.Text != nil && p.FunctionResponse == nil {
					cur = i
				}
			}
		}
	}
	for i, c := range r.Contents {
		if c.Role != "user" && c.Role != "model" && c.Role != "" {
			return 0, fmt.Sprintf("contents[%d].role: %q is not user or model", i, c.Role)
		}
		if len(c.Parts) == 0 {
			return 0, fmt.Sprintf("contents[%d].parts: must not be empty", i)
		}
		var calls []string
		for j, p := range c.Parts {
			if p.FunctionResponse != nil && c.Role == "model" {
				return 0, fmt.Sprintf("contents[%d].parts[%d]: a function response in a model turn", i, j)
			}
			fc := p.FunctionCall
			if fc == nil {
				continue
			}
			if c.Role != "model" {
				return 0, fmt.Sprintf("contents[%d].parts[%d]: a function call in a user turn", i, j)
			}
			calls = append(calls, fc.Name)
			if !scripted[fc.Name] {
				continue
			}
			t, _, digest, ok := parseSignature(p.ThoughtSignature)
			if ok {
				turn = max(turn, t+1)
			}
			if i < cur {
				continue // the API checks the signatures of the current turn only
			}
			if !ok {
				return 0, fmt.Sprintf("Function call is missing a thought_signature in functionCall parts (contents[%d].parts[%d]): it must be sent back unchanged", i, j)
			}
			if digest != argsDigest(fc.Name, fc.Args) {
				return 0, fmt.Sprintf("contents[%d].parts[%d]: the thought_signature does not match the function call", i, j)
			}
		}
		if len(calls) == 0 {
			continue
		}
		if i+1 >= len(r.Contents) {
			continue // the model's turn ends the conversation: the client answers next
		}
		next := r.Contents[i+1]
		var names []string
		for _, p := range next.Parts {
			if p.FunctionResponse != nil {
				names = append(names, p.FunctionResponse.Name)
			}
		}
		if next.Role != "user" || len(names) != len(calls) {
			return 0, fmt.Sprintf("Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn (contents[%d] has %d calls, contents[%d] %d responses).", i, len(calls), i+1, len(names))
		}
		for k := range calls {
			if calls[k] != names[k] {
				return 0, fmt.Sprintf("contents[%d]: function response %d is for %q, the call was %q", i+1, k, names[k], calls[k])
			}
		}
	}
	for i, c := range r.Contents {
		for j, p := range c.Parts {
			if p.FunctionResponse == nil {
				continue
			}
			if i == 0 || r.Contents[i-1].Role != "model" || !hasCalls(r.Contents[i-1]) {
				return 0, fmt.Sprintf("contents[%d].parts[%d]: Please ensure that function response turn comes immediately after a function call turn.", i, j)
			}
		}
	}
	return turn, ""
}

func hasCalls(c gContent) bool {
	for _, p := range c.Parts {
		if p.FunctionCall != nil {
			return true
		}
	}
	return false
}

func (u *Upstream) scripted() map[string]bool {
	m := map[string]bool{}
	for _, t := range u.turns {
		for _, c := range t.Calls {
			m[c.Name] = true
		}
	}
	return m
}

// geminiKind classifies a Gemini request: count, compact (Gemini CLI's
// compression prompt), main (it declares a scripted function), side.
func (u *Upstream) geminiKind(method string, r *gRequest) string {
	if method == "countTokens" {
		return "count"
	}
	if strings.Contains(r.system(), "<state_snapshot>") {
		return "compact"
	}
	scripted := u.scripted()
	for _, t := range r.Tools {
		for _, d := range t.FunctionDeclarations {
			if scripted[d.Name] {
				return "main"
			}
		}
	}
	return "side"
}

// geminiError answers like the API does on a bad request.
func geminiError(w http.ResponseWriter, status int, msg string) {
	statusText := map[int]string{400: "INVALID_ARGUMENT", 404: "NOT_FOUND"}[status]
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": status, "message": msg, "status": statusText}})
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	w.Write(b)
}

// gemini answers a Gemini API request whose kind and turn req holds.
func (u *Upstream) gemini(w http.ResponseWriter, r *http.Request, method string, g *gRequest, req Request, tokens int) {
	if method == "countTokens" {
		writeJSON(w, map[string]int{"totalTokens": tokens})
		return
	}
	cached := req.Usage.CacheRead
	t := u.step(req)
	if req.Kind == "compact" {
		t = Turn{Text: fmt.Sprintf("<state_snapshot>\n<overall_goal>The task is under way. [fake-state next_turn=%d]</overall_goal>\n</state_snapshot>", req.Turn)}
	}
	if req.Kind == "side" && g.GenerationConfig.ResponseMimeType == "application/json" {
		t = Turn{Text: `{}`}
	}
	var parts []map[string]any
	if req.Kind == "main" {
		parts = append(parts, map[string]any{"text": fmt.Sprintf("Planning step %d.", req.Turn), "thought": true})
	}
	if t.Text != "" {
		parts = append(parts, map[string]any{"text": t.Text})
	}
	for i, c := range t.Calls {
		args := callInput(c)
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c.Name, "args": args},
			"thoughtSignature": geminiSignature(req.Turn, i, c.Name, args)})
	}
	usage := map[string]any{"promptTokenCount": tokens, "candidatesTokenCount": 10, "thoughtsTokenCount": 4, "totalTokenCount": tokens + 14,
		"promptTokensDetails": []any{map[string]any{"modality": "TEXT", "tokenCount": tokens}}}
	if cached > 0 {
		usage["cachedContentTokenCount"] = cached
		usage["cacheTokensDetails"] = []any{map[string]any{"modality": "TEXT", "tokenCount": cached}}
	}
	chunk := func(ps []map[string]any, final bool) map[string]any {
		cand := map[string]any{"content": map[string]any{"role": "model", "parts": ps}, "index": 0}
		m := map[string]any{"candidates": []any{cand}, "modelVersion": "fake", "responseId": fmt.Sprintf("fake-%d", req.Turn)}
		if final {
			cand["finishReason"] = "STOP"
			m["usageMetadata"] = usage
		}
		return m
	}
	if method == "generateContent" {
		writeJSON(w, chunk(parts, true))
		return
	}
	// The stream: the thought, the text in pieces, the calls with the
	// finish reason and the usage.
	var chunks []map[string]any
	var calls []map[string]any
	for _, p := range parts {
		switch {
		case p["functionCall"] != nil:
			calls = append(calls, p)
		case p["thought"] == true:
			chunks = append(chunks, chunk([]map[string]any{p}, false))
		default:
			for _, s := range pieces(p["text"].(string), u.o.Chunk) {
				chunks = append(chunks, chunk([]map[string]any{{"text": s}}, false))
			}
		}
	}
	if calls == nil {
		calls = []map[string]any{{"text": ""}}
	}
	chunks = append(chunks, chunk(calls, true))
	if r.URL.Query().Get("alt") != "sse" {
		writeJSON(w, chunks)
		return
	}
	s := newSSE(w)
	for _, c := range chunks {
		b, _ := json.Marshal(c)
		s.raw("data: " + string(b) + "\r\n\r\n")
	}
}

// serveGemini serves a Gemini API request: kept, validated, answered.
func (u *Upstream) serveGemini(w http.ResponseWriter, r *http.Request, path, method string, req Request) {
	if req.Header.Get("X-Goog-Api-Key") != "" {
		req.Header.Set("X-Goog-Api-Key", "[redacted]")
	}
	var g gRequest
	bad := ""
	if err := json.Unmarshal(req.Body, &g); err != nil {
		bad = "Invalid JSON payload received. " + err.Error()
	}
	if g.GenerateContentRequest != nil && len(g.Contents) == 0 {
		g = *g.GenerateContentRequest
	}
	if bad == "" && len(g.Contents) == 0 {
		bad = "contents is not specified"
	}
	req.Kind = u.geminiKind(method, &g)
	if bad == "" {
		var turn int
		turn, bad = u.geminiCheck(&g)
		req.Turn = max(req.Turn, turn)
	}
	u.mu.Lock()
	var fail *Failure
	if len(u.fail) > 0 {
		fail = &u.fail[0]
		u.fail = u.fail[1:]
	}
	u.mu.Unlock()
	tokens := int(float64(len(req.Body)) / 4 * u.o.TokenScale)
	if fail == nil && req.Kind != "count" {
		cached := int(float64(tokens) * min(max(u.o.CacheRatio, 0), 1))
		if u.o.Strict {
			cached = 0
			if bad == "" {
				bad = u.checkTapped("gemini", r.Header, req.Body)
			}
			if bad != "" {
				u.reject(req.Path, req.Kind, bad)
			} else {
				prompt, system := geminiPrompt(req.Body)
				model := geminiModel(path)
				e := u.remember(req.Path, model, req.Kind, system, prompt, geminiMinCached(model)*4)
				if e.PromptBytes > 0 {
					cached = int(float64(tokens) * float64(e.CachedBytes) / float64(e.PromptBytes))
				}
			}
		}
		if bad == "" {
			req.Usage = Usage{Input: tokens - cached, CacheRead: cached, Output: 14}
		}
	}
	u.mu.Lock()
	u.requests = append(u.requests, req)
	u.mu.Unlock()
	switch {
	case fail != nil:
		for k, vs := range fail.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(fail.Status)
		w.Write([]byte(fail.Body))
	case bad != "":
		geminiError(w, http.StatusBadRequest, bad)
	default:
		u.gemini(w, r, method, &g, req, tokens)
	}
}
