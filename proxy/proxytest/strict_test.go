package proxytest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func strictUpstream(t *testing.T, thinking bool) *Upstream {
	t.Helper()
	u, err := Start([]Turn{{Text: "ok", Calls: []Call{{Name: "read"}}}}, Options{Strict: true, Thinking: thinking})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { u.Close() })
	return u
}

// The strict upstream refuses what the real APIs refuse, with their 400,
// and accepts what they accept.
func TestStrictRefusesWhatTheAPIsRefuse(t *testing.T) {
	u := strictUpstream(t, true)
	sig := signature("hm")
	tools := `"tools":[{"name":"read","input_schema":{"type":"object"}}]`
	for _, c := range []struct {
		name, path, body, want string
	}{
		{"answered call", "/v1/messages", `{` + tools + `,"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"read","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}]}`, ""},
		{"results in messages of their own", "/v1/messages", `{` + tools + `,"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"read","input":{}},{"type":"tool_use","id":"t2","name":"read","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"y"}]}]}`, ""},
		{"unanswered call", "/v1/messages", `{` + tools + `,"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"read","input":{}}]},{"role":"user","content":"next"}]}`, "without `tool_result`"},
		{"orphan result", "/v1/messages", `{"messages":[{"role":"user","content":"go"},{"role":"assistant","content":"hi"},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t9","content":"x"}]}]}`, "unexpected `tool_use_id`"},
		{"forged signature", "/v1/messages", `{"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"thinking","thinking":"hm!","signature":"` + sig + `"},{"type":"text","text":"a"}]},{"role":"user","content":"b"}]}`, "Invalid `signature`"},
		{"signed thinking", "/v1/messages", `{"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"` + sig + `"},{"type":"text","text":"a"}]},{"role":"user","content":"b"}]}`, ""},
		{"thinking not first", "/v1/messages", `{"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"read","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}]}`, "must start with a thinking block"},
		{"five breakpoints", "/v1/messages", `{"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},{"type":"text","text":"b","cache_control":{"type":"ephemeral"}},{"type":"text","text":"c","cache_control":{"type":"ephemeral"}},{"type":"text","text":"d","cache_control":{"type":"ephemeral"}}]}]}`, "A maximum of 4 blocks"},
		{"responses pair", "/v1/responses", `{"input":[{"type":"message","role":"user","content":"go"},{"type":"function_call","call_id":"c1","name":"read","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"x"}]}`, ""},
		{"responses no output", "/v1/responses", `{"input":[{"type":"message","role":"user","content":"go"},{"type":"function_call","call_id":"c1","name":"read","arguments":"{}"}]}`, "No tool output found"},
		{"responses orphan output", "/v1/responses", `{"input":[{"type":"message","role":"user","content":"go"},{"type":"function_call_output","call_id":"c1","output":"x"}]}`, "No tool call found"},
		{"reasoning alone", "/v1/responses", `{"input":[{"type":"message","role":"user","content":"go"},{"type":"reasoning","id":"rs_1","summary":[]},{"type":"message","role":"user","content":"more"}]}`, "without its required following item"},
		{"reasoning forged", "/v1/responses", `{"input":[{"type":"message","role":"user","content":"go"},{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"abc"},{"type":"message","role":"assistant","content":"a"}]}`, "could not be verified"},
		{"chat pair", "/v1/chat/completions", `{"messages":[{"role":"user","content":"go"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"x"}]}`, ""},
		{"chat unanswered", "/v1/chat/completions", `{"messages":[{"role":"user","content":"go"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{}"}}]},{"role":"user","content":"x"}]}`, "did not have response messages: c1"},
		{"chat orphan tool", "/v1/chat/completions", `{"messages":[{"role":"user","content":"go"},{"role":"tool","tool_call_id":"c1","content":"x"}]}`, "must be a response to a preceeding message"},
	} {
		status, body := post(t, u.URL+c.path, c.body)
		switch {
		case c.want == "" && status != 200:
			t.Errorf("%s: %d %s, want 200", c.name, status, body)
		case c.want != "" && (status != 400 || !strings.Contains(body, c.want) || !strings.Contains(body, "invalid_request_error")):
			t.Errorf("%s: %d %s, want 400 saying %q", c.name, status, body, c.want)
		}
	}
	if n := len(u.Strictness().Rejected); n != 11 {
		t.Errorf("%d requests counted as rejected, want 11", n)
	}
}

// The thinking the strict upstream signs comes back accepted, byte for
// byte; changed by one byte it is refused.
func TestStrictThinkingRoundTrip(t *testing.T) {
	u := strictUpstream(t, true)
	first := `{"thinking":{"type":"enabled","budget_tokens":1024},"tools":[{"name":"read","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"go"}]}`
	status, body := post(t, u.URL+"/v1/messages", first)
	if status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	var resp struct {
		Content []json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil || len(resp.Content) < 2 {
		t.Fatalf("answer %s: %v", body, err)
	}
	var use struct {
		ID string `json:"id"`
	}
	json.Unmarshal(resp.Content[len(resp.Content)-1], &use)
	content, _ := json.Marshal(resp.Content)
	next := func(content []byte) string {
		return `{"thinking":{"type":"enabled","budget_tokens":1024},"tools":[{"name":"read","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"go"},{"role":"assistant","content":` +
			string(content) + `},{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + use.ID + `","content":"x"}]}]}`
	}
	if status, body := post(t, u.URL+"/v1/messages", next(content)); status != 200 {
		t.Fatalf("the signed thinking sent back: %d %s", status, body)
	}
	changed := bytes.Replace(content, []byte("Thinking about"), []byte("Thinking ab0ut"), 1)
	if status, _ := post(t, u.URL+"/v1/messages", next(changed)); status != 400 {
		t.Fatalf("changed thinking accepted: %d", status)
	}
	s, total := u.Strictness().Stable("")
	if total != 1 || s != 1 {
		t.Fatalf("%d of %d requests prefix-stable, want the second one of the conversation", s, total)
	}
}

// The cache model: a request that starts with the previous one of its
// conversation is prefix-stable, and the cache serves the shared part; a
// request that changes an earlier message is not.
func TestStrictCacheModel(t *testing.T) {
	u := strictUpstream(t, false)
	msgs := []string{`{"role":"user","content":"one"}`}
	send := func() {
		t.Helper()
		body := `{"system":"s","messages":[` + strings.Join(msgs, ",") + `]}`
		if status, b := post(t, u.URL+"/v1/messages", body); status != 200 {
			t.Fatalf("%d %s", status, b)
		}
	}
	send()
	msgs = append(msgs, `{"role":"assistant","content":"two"}`, `{"role":"user","content":[{"type":"text","text":"three","cache_control":{"type":"ephemeral"}}]}`)
	send()
	msgs[0] = `{"role":"user","content":"ONE"}`
	send()
	st := u.Strictness()
	if len(st.Entries) != 3 || !st.Entries[0].First || !st.Entries[1].Stable || st.Entries[2].Stable {
		t.Fatalf("entries %+v: want first, stable, unstable", st.Entries)
	}
	if e := st.Entries[1]; e.CachedBytes == 0 || e.CachedBytes >= e.PromptBytes {
		t.Fatalf("the stable request had %d of %d bytes cached", e.CachedBytes, e.PromptBytes)
	}
	if e := st.Entries[2]; e.CachedBytes >= st.Entries[1].CachedBytes {
		t.Fatalf("a changed first message still had %d bytes cached", e.CachedBytes)
	}
}

// Through a tap, a request whose members other than its conversation
// changed on the way is refused.
func TestStrictTapComparesTheEnvelope(t *testing.T) {
	u := strictUpstream(t, false)
	changer, err := u.serveExtra(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		b = bytes.Replace(b, []byte(`"max_tokens":100`), []byte(`"max_tokens":200`), 1)
		req, _ := http.NewRequest(r.Method, u.URL+r.URL.Path, bytes.NewReader(b))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	if err != nil {
		t.Fatal(err)
	}
	tap, err := u.Tap(changer)
	if err != nil {
		t.Fatal(err)
	}
	if status, _ := post(t, tap+"/v1/messages", `{"max_tokens":300,"messages":[{"role":"user","content":"go"}]}`); status != 200 {
		t.Fatalf("an unchanged request: %d", status)
	}
	if status, body := post(t, tap+"/v1/messages", `{"max_tokens":100,"messages":[{"role":"user","content":"go"}]}`); status != 400 || !strings.Contains(body, "max_tokens") {
		t.Fatalf("a changed max_tokens: %d %s", status, body)
	}
}

// geminiUsage posts a Gemini request and returns its answer's usage.
func geminiUsage(t *testing.T, url, body string) (status int, prompt, cached int, raw string) {
	t.Helper()
	status, raw = post(t, url, body)
	var resp struct {
		UsageMetadata struct {
			PromptTokenCount        int `json:"promptTokenCount"`
			CachedContentTokenCount int `json:"cachedContentTokenCount"`
		} `json:"usageMetadata"`
	}
	_ = json.Unmarshal([]byte(raw), &resp)
	return status, resp.UsageMetadata.PromptTokenCount, resp.UsageMetadata.CachedContentTokenCount, raw
}

// The Gemini API's implicit cache: a request that starts with a recent
// prompt of the same model is served that prefix, reported as
// cachedContentTokenCount, once it is the family's minimum (2,048 tokens
// for 2.5, 4,096 for Gemini 3); another model's prompts serve nothing; a
// request the API refuses is counted with the other wires'.
func TestStrictGeminiImplicitCache(t *testing.T) {
	u := strictUpstream(t, false)
	big := strings.Repeat("a large file, read once and kept in the prompt. ", 240) // ~11.5 KB: ~2.9k tokens
	user := func(s string) string { return `{"role":"user","parts":[{"text":` + string(mustJSON(s)) + `}]}` }
	model := func(s string) string { return `{"role":"model","parts":[{"text":` + string(mustJSON(s)) + `}]}` }
	body := func(contents ...string) string {
		return `{"systemInstruction":{"parts":[{"text":"You are a coding agent."}]},"contents":[` + strings.Join(contents, ",") + `]}`
	}
	pro25 := u.URL + "/v1beta/models/gemini-2.5-pro:generateContent"
	pro3 := u.URL + "/v1beta/models/gemini-3.1-pro-preview:generateContent"

	if status, _, cached, raw := geminiUsage(t, pro25, body(user(big))); status != 200 || cached != 0 {
		t.Fatalf("first request: %d, %d cached tokens: %s", status, cached, raw)
	}
	status, prompt, cached, raw := geminiUsage(t, pro25, body(user(big), model("ok"), user("more")))
	if status != 200 || cached == 0 || cached >= prompt {
		t.Fatalf("a request extending a 2.9k-token prompt on gemini-2.5-pro: %d, %d of %d tokens cached: %s", status, cached, prompt, raw)
	}
	if !strings.Contains(raw, `"cacheTokensDetails"`) {
		t.Errorf("the usage does not detail the cached tokens: %s", raw)
	}
	if _, _, c, raw := geminiUsage(t, pro3, body(user(big), model("ok"), user("more"))); c != 0 {
		t.Errorf("gemini-3.1-pro-preview was served %d tokens from gemini-2.5-pro's prompts: %s", c, raw)
	}
	// Under Gemini 3's minimum (4,096 tokens) the same prefix is not served.
	if _, _, c, raw := geminiUsage(t, pro3, body(user(big), model("ok"), user("more"), model("fine"), user("again"))); c != 0 {
		t.Errorf("a 2.9k-token prefix on gemini-3.1-pro-preview was served %d tokens: its minimum is 4,096: %s", c, raw)
	}
	st := u.Strictness()
	if len(st.Entries) != 4 || !st.Entries[0].First || !st.Entries[1].Stable || !st.Entries[2].First || !st.Entries[3].Stable {
		t.Fatalf("entries %+v: want first, stable (2.5), first, stable (3.1)", st.Entries)
	}
	if e := st.Entries[1]; e.CachedBytes < 2048*4 || e.CachedBytes >= e.PromptBytes {
		t.Errorf("the cache model served %d of %d prompt bytes", e.CachedBytes, e.PromptBytes)
	}
	var usage Usage
	for _, r := range u.Requests() {
		usage.CacheRead += r.Usage.CacheRead
	}
	if usage.CacheRead != cached {
		t.Errorf("the requests kept %d cached tokens, the answers reported %d", usage.CacheRead, cached)
	}

	call := `{"role":"model","parts":[{"functionCall":{"name":"read","args":{}}}]}`
	if status, _, _, raw := geminiUsage(t, pro25, body(user("go"), call, user("no answer to the call"))); status != 400 || !strings.Contains(raw, "INVALID_ARGUMENT") {
		t.Fatalf("an unanswered function call: %d %s, want 400", status, raw)
	}
	if r := u.Strictness().Rejected; len(r) != 1 || !strings.Contains(r[0], "function response parts") {
		t.Errorf("rejected %q: want the unanswered call", r)
	}
}

// Through a tap, a Gemini request whose members other than its contents
// changed on the way is refused.
func TestStrictGeminiTapComparesTheEnvelope(t *testing.T) {
	u := strictUpstream(t, false)
	changer, err := u.serveExtra(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		b = bytes.Replace(b, []byte(`"temperature":1`), []byte(`"temperature":0`), 1)
		req, _ := http.NewRequest(r.Method, u.URL+r.URL.RequestURI(), bytes.NewReader(b))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	if err != nil {
		t.Fatal(err)
	}
	tap, err := u.Tap(changer)
	if err != nil {
		t.Fatal(err)
	}
	path := tap + "/v1beta/models/gemini-2.5-pro:generateContent"
	if status, body := post(t, path, `{"generationConfig":{"temperature":0.5},"contents":[{"role":"user","parts":[{"text":"go"}]}]}`); status != 200 {
		t.Fatalf("an unchanged request: %d %s", status, body)
	}
	if status, body := post(t, path, `{"generationConfig":{"temperature":1},"contents":[{"role":"user","parts":[{"text":"go"}]}]}`); status != 400 || !strings.Contains(body, "generationConfig") {
		t.Fatalf("a changed generationConfig: %d %s", status, body)
	}
}
