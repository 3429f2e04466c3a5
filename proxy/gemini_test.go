package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/proxy/proxytest"
	"github.com/vtcode/vtcode-ls/session"
)

// geminiAgent is a minimal Gemini CLI: it keeps its contents (a
// <session_context> first, its own ids added to the calls, thought parts
// dropped), sends them whole to streamGenerateContent?alt=sse, and answers
// every call with a large file.
type geminiAgent struct {
	t        *testing.T
	done     <-chan struct{}
	url      string
	contents []map[string]any
	sent     [][]byte
	answered []string
	n        int
}

func newGeminiAgent(t *testing.T, e *env, prompt string) *geminiAgent {
	a := &geminiAgent{t: t, done: e.done, url: e.url}
	a.contents = []map[string]any{{"role": "user", "parts": []any{
		map[string]any{"text": "<session_context>\nThis is the Gemini CLI.\n- **Directory Structure:**\n/src/\n</session_context>"},
		map[string]any{"text": prompt}}}}
	return a
}

func (a *geminiAgent) body() []byte {
	b, _ := json.Marshal(map[string]any{
		"contents":          a.contents,
		"systemInstruction": map[string]any{"role": "user", "parts": []any{map[string]any{"text": "You are Gemini CLI, a test agent."}}},
		"tools": []any{map[string]any{"functionDeclarations": []any{map[string]any{"name": "Read", "description": "read a file",
			"parametersJsonSchema": map[string]any{"type": "object"}}}}},
		"generationConfig": map[string]any{"thinkingConfig": map[string]any{"includeThoughts": true}},
	})
	return b
}

// step sends one request and folds the answer in; it returns false when
// the model made no call.
func (a *geminiAgent) step() (more bool, status int) {
	body := a.body()
	a.sent = append(a.sent, body)
	req, _ := http.NewRequest(http.MethodPost, a.url+"/v1beta/models/gemini-test:streamGenerateContent?alt=sse", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-goog-api-key", "gemini-secret-test-key")
	req.Header.Set("x-goog-api-client", "google-genai-sdk/1.30.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	settled(a.t, a.done)
	a.answered = append(a.answered, string(raw))
	if resp.StatusCode != 200 {
		return false, resp.StatusCode
	}
	var text string
	var parts, results []any
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var chunk struct {
			Candidates []struct {
				Content struct {
					Parts []map[string]any `json:"parts"`
				} `json:"content"`
			} `json:"candidates"`
		}
		if err := json.Unmarshal([]byte(line), &chunk); err != nil || len(chunk.Candidates) == 0 {
			a.t.Fatalf("a stream chunk: %v %q", err, line)
		}
		for _, p := range chunk.Candidates[0].Content.Parts {
			switch {
			case p["thought"] == true:
			case p["functionCall"] != nil:
				fc := p["functionCall"].(map[string]any)
				a.n++
				id := fmt.Sprintf("Read__Read_%d_0", a.n) // Gemini CLI names the calls the API leaves unnamed
				fc["id"] = id
				parts = append(parts, p)
				results = append(results, map[string]any{"functionResponse": map[string]any{"id": id, "name": fc["name"],
					"response": map[string]any{"output": fileText(len(a.contents))}}})
			case p["text"] != nil:
				text += p["text"].(string)
			}
		}
	}
	if text != "" {
		parts = append([]any{map[string]any{"text": text}}, parts...)
	}
	a.contents = append(a.contents, map[string]any{"role": "model", "parts": parts})
	if len(results) == 0 {
		return false, 200
	}
	a.contents = append(a.contents, map[string]any{"role": "user", "parts": results})
	return true, 200
}

func geminiSetup(t *testing.T, extra string, turns []proxytest.Turn) (*env, *proxytest.Upstream) {
	up, err := proxytest.Start(turns, proxytest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	return setup(t, fmt.Sprintf("[providers.gemini]\nbase_url = %q\n", up.URL)+extra, turns, ""), up
}

// TestGeminiThroughTheEngine: a Gemini CLI conversation goes through the
// engine like the others: old results cleared in the forwarded body, every
// byte before the first changed content kept, the thoughtSignatures of the
// calls unchanged (the strict fake refuses a request otherwise), the
// answer recorded so that every request extends the one session.
func TestGeminiThroughTheEngine(t *testing.T) {
	e, up := geminiSetup(t, clearingTOML, readTurns(8))
	a := newGeminiAgent(t, e, "Read the parts.")
	for i := 0; i < 20; i++ {
		more, status := a.step()
		if status != 200 {
			t.Fatalf("step %d: status %d: %s", i, status, a.answered[len(a.answered)-1])
		}
		if !more {
			break
		}
	}
	reqs := up.Requests()
	if len(reqs) != 9 || len(a.sent) != 9 {
		t.Fatalf("upstream got %d requests, agent sent %d; want 9 each", len(reqs), len(a.sent))
	}
	if !strings.Contains(a.answered[8], "FINAL: done.") {
		t.Errorf("the last answer is not the script's end: %.300s", a.answered[8])
	}
	cleared := 0
	for i, r := range reqs {
		sent := a.sent[i]
		if r.Header.Get("X-Goog-Api-Key") != "[redacted]" || r.Kind != "main" {
			t.Errorf("request %d: kind %s, the agent's key reached the upstream: %v", i, r.Kind, r.Header.Get("X-Goog-Api-Key") != "")
		}
		if n, m := bytes.Count(r.Body, []byte(`"thoughtSignature"`)), bytes.Count(sent, []byte(`"thoughtSignature"`)); n != m {
			t.Errorf("request %d: %d thoughtSignatures forwarded, the agent sent %d", i, n, m)
		}
		if !bytes.Contains(r.Body, []byte("[tool result cleared")) {
			if !bytes.Equal(r.Body, sent) {
				t.Errorf("request %d: nothing cleared, yet the body changed", i)
			}
			continue
		}
		cleared++
		if len(r.Body) >= len(sent) {
			t.Errorf("request %d: forwarded %d bytes, not fewer than the agent's %d", i, len(r.Body), len(sent))
		}
		p := commonPrefix(r.Body, sent)
		if first := bytes.Index(sent, []byte(`{"functionResponse"`)); p < first {
			t.Errorf("request %d: bodies differ at byte %d, before the first function response at %d", i, p, first)
		}
		if !bytes.HasSuffix(r.Body, sent[bytes.Index(sent, []byte(`],"generationConfig"`)):]) {
			t.Errorf("request %d: the members after contents changed", i)
		}
	}
	if cleared == 0 {
		t.Fatal("no request reached the upstream with cleared tool results")
	}
	list, err := e.mgr.ListSessions(context.Background(), session.ListParams{})
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions: %v %v", list, err)
	}
	h, err := e.mgr.History(context.Background(), session.HistoryParams{SessionID: list[0].SessionID})
	if err != nil {
		t.Fatal(err)
	}
	if h.Total != 1+8*2+1 {
		t.Errorf("session history has %d messages, want %d (prompt, 8 calls with results, final answer)", h.Total, 1+8*2+1)
	}
	st := e.srv.Stats()
	if st.Requests != 9 || st.FailOpen != 0 || st.Rewritten != cleared {
		t.Errorf("stats %+v, want 9 requests, %d rewritten, no fail-open", st, cleared)
	}
	for i, r := range st.Recent {
		// The first request's key is not known good yet: it goes as it came.
		if (r.Disposition != "append" && (i > 0 || r.Disposition != "unverified")) || r.Endpoint != "streamGenerateContent" {
			t.Errorf("request %s: %s %s, want every turn to extend the conversation", r.Path, r.Endpoint, r.Disposition)
		}
	}
	if b, _ := json.Marshal(st); bytes.Contains(b, []byte("gemini-secret")) {
		t.Error("the stats echo the agent's key")
	}
}

// TestGeminiFailOpen: a body the engine cannot read goes upstream as it
// came, and the upstream's own error comes back.
func TestGeminiFailOpen(t *testing.T) {
	e, up := geminiSetup(t, "", readTurns(1))
	for _, body := range []string{`{"contents":[{"role":"user","parts":[{"text":"hi"}]}`, `{"contents":{"role":"user"}}`, `{"contents":[{"role":"user","parts":["x"]}]}`} {
		resp, out := post(t, e, "/v1beta/models/gemini-test:generateContent", body, map[string]string{"x-goog-api-key": "k"})
		reqs := up.Requests()
		if resp.StatusCode != 400 || !bytes.Contains(out, []byte("INVALID_ARGUMENT")) || string(reqs[len(reqs)-1].Body) != body {
			t.Errorf("%s: %d %s; upstream got %q", body, resp.StatusCode, out, reqs[len(reqs)-1].Body)
		}
	}
	if st := e.srv.Stats(); st.FailOpen != 3 {
		t.Errorf("stats %+v: want 3 fail-open", st)
	}
}

// TestGeminiRoutes: the model is the path's, the key may be in the query,
// countTokens is forwarded as the projection and records nothing, other
// Gemini paths pass through to the Gemini upstream.
func TestGeminiRoutes(t *testing.T) {
	e, up := geminiSetup(t, clearingTOML, readTurns(8))
	a := newGeminiAgent(t, e, "Read.")
	for i := 0; i < 6; i++ {
		a.step()
	}
	list, _ := e.mgr.ListSessions(context.Background(), session.ListParams{})
	before, _ := e.mgr.History(context.Background(), session.HistoryParams{SessionID: list[0].SessionID})
	body := a.body()
	resp, out := post(t, e, "/v1beta/models/gemini-test:countTokens?key=query-secret", string(body), nil)
	reqs := up.Requests()
	last := reqs[len(reqs)-1]
	if resp.StatusCode != 200 || last.Kind != "count" || !bytes.Contains(last.Body, []byte("[tool result cleared")) || len(last.Body) >= len(body) ||
		!bytes.Contains(out, []byte("totalTokens")) {
		t.Fatalf("countTokens: %d %s; upstream got %d bytes (agent %d)", resp.StatusCode, out, len(last.Body), len(body))
	}
	after, _ := e.mgr.History(context.Background(), session.HistoryParams{SessionID: list[0].SessionID})
	if after.Total != before.Total {
		t.Errorf("countTokens changed the history: %d -> %d", before.Total, after.Total)
	}
	if st := e.srv.Stats(); bytes.Contains(must(json.Marshal(st)), []byte("query-secret")) {
		t.Error("the stats echo the key of the query")
	}
	req, _ := http.NewRequest(http.MethodGet, e.url+"/v1beta/models?pageSize=5", nil)
	req.Header.Set("x-goog-api-key", "k")
	r2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, r2.Body)
	r2.Body.Close()
	settled(t, e.done)
	reqs = up.Requests()
	if last := reqs[len(reqs)-1]; last.Method != "GET" || last.Path != "/v1beta/models" {
		t.Errorf("GET /v1beta/models went to %s %s of the Gemini upstream", last.Method, last.Path)
	}
}

func must(b []byte, _ error) []byte { return b }

// TestGeminiRacingCompressionsStayInTheSession: Gemini CLI can run two
// compressions at once (its own before a turn and a /compress), so its
// second fresh window arrives after the first was taken up and shares no
// message with it (the directory tree in its <session_context> changed);
// it carries the compression's answer, so it is a window of the same
// session, not a new conversation.
func TestGeminiRacingCompressionsStayInTheSession(t *testing.T) {
	e, up := geminiSetup(t, "", readTurns(2))
	a := newGeminiAgent(t, e, "Read the parts.")
	for i := 0; i < 3; i++ {
		if _, status := a.step(); status != 200 {
			t.Fatalf("step %d: status %d: %s", i, status, a.answered[len(a.answered)-1])
		}
	}
	compress := func() string {
		body := map[string]any{
			"contents": append(append([]map[string]any(nil), a.contents...), map[string]any{"role": "user", "parts": []any{
				map[string]any{"text": "Generate a new <state_snapshot> based on the provided history."}}}),
			"systemInstruction": map[string]any{"parts": []any{map[string]any{"text": "You are a component that specializes in distilling chat history into a structured XML <state_snapshot>."}}},
		}
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, e.url+"/v1beta/models/gemini-test:generateContent", bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-goog-api-key", "gemini-secret-test-key")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Candidates []struct {
				Content struct {
					Parts []struct {
						Text string `json:"text"`
					} `json:"parts"`
				} `json:"content"`
			} `json:"candidates"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || len(out.Candidates) == 0 || len(out.Candidates[0].Content.Parts) == 0 {
			t.Fatalf("the compression's answer: %v", err)
		}
		settled(t, e.done)
		return out.Candidates[0].Content.Parts[0].Text
	}
	window := func(tree, snapshot string, tail ...map[string]any) {
		a.contents = append([]map[string]any{
			{"role": "user", "parts": []any{
				map[string]any{"text": "<session_context>\nThis is the Gemini CLI.\n- **Directory Structure:**\n" + tree + "\n</session_context>"},
				map[string]any{"text": snapshot}}},
			{"role": "model", "parts": []any{map[string]any{"text": "Got it. Thanks for the additional context!"}}},
		}, tail...)
		if _, status := a.step(); status != 200 {
			t.Fatalf("a window: status %d: %s", status, a.answered[len(a.answered)-1])
		}
	}
	first, second := compress(), compress()
	window("/src/\n/.vtcode/", first, map[string]any{"role": "user", "parts": []any{map[string]any{"text": "/compress"}}})
	window("/src/\n/.vtcode/\n/.vtcode/sessions/", second)

	var disp []string
	sessions := map[string]bool{}
	for _, r := range e.srv.Stats().Recent {
		disp = append(disp, r.Disposition)
		if r.SessionID != "" { // the first request goes as it came (its key is not known good yet)
			sessions[r.SessionID] = true
		}
	}
	if got := strings.Join(disp, " "); got != "unverified append append side side window window" {
		t.Errorf("dispositions %q, want the two windows after the two compressions", got)
	}
	if len(sessions) != 1 {
		t.Errorf("the requests went to sessions %v, want the one conversation", sessions)
	}
	if n := len(proxytest.Bodies(up.Requests(), "compact")); n != 2 {
		t.Errorf("the upstream saw %d compression requests, want 2", n)
	}
}
