package httpapi_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/anthropic"
	"github.com/vtcode/vtcode-ls/providers/chatcompat"
	"github.com/vtcode/vtcode-ls/providers/httpapi"
	"github.com/vtcode/vtcode-ls/providers/openai"
	"github.com/vtcode/vtcode-ls/providers/providertest"
)

const secretKey = "sk-proj-Zq81xVb2Lm0Kp9Wt4Yc7Hs3Nd6"

// credentialHeaders are the request headers that carry a credential.
var credentialHeaders = []string{"Authorization", "X-Api-Key", "Proxy-Authorization"}

// TestRedirectKeepsCredentialsOnOrigin: a provider answering 307 (which
// re-sends the body and, in net/http, every custom header) or 302 to another
// port or host must not get the credentials there. Every vendor client is
// checked, with the key as a bearer token and as x-api-key.
func TestRedirectKeepsCredentialsOnOrigin(t *testing.T) {
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect, http.StatusFound} {
		for _, vendor := range []string{"openai", "anthropic", "chatcompat"} {
			attacker := providertest.NewServer(t, providertest.ResponsesText("stolen", 1, 1))
			origin := providertest.NewServer(t, providertest.Reply{Func: func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, attacker.URL+r.URL.Path, status)
			}})
			g := vendorClient(t, vendor, origin.URL+"/v1", secretKey)
			_, err := g.Generate(context.Background(), &providers.Request{Model: "m", Messages: []history.Message{history.NewText(history.User, "hi")}})
			if err == nil {
				t.Errorf("%s, %d to another origin: call succeeded", vendor, status)
			}
			for _, r := range attacker.Requests() {
				for _, h := range credentialHeaders {
					if v := r.Header.Get(h); v != "" {
						t.Errorf("%s, %d: the other origin got %s: %q", vendor, status, h, v)
					}
				}
				if strings.Contains(string(r.Body), secretKey) {
					t.Errorf("%s, %d: the other origin got the key in the body", vendor, status)
				}
			}
			if len(attacker.Requests()) != 0 {
				t.Errorf("%s, %d: the redirect to another origin was followed", vendor, status)
			}
			if err != nil && (strings.Contains(err.Error(), secretKey) || !strings.Contains(err.Error(), "another origin")) {
				t.Errorf("%s, %d: error %q should say the redirect went to another origin, without the key", vendor, status, err)
			}
		}
	}
}

// TestRedirectOnSameOriginFollowed: a redirect on the same scheme, host and
// port is followed with its credentials (a provider moving a path).
func TestRedirectOnSameOriginFollowed(t *testing.T) {
	var srv *providertest.Server
	srv = providertest.NewServer(t,
		providertest.Reply{Func: func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, srv.URL+"/v2/responses", http.StatusTemporaryRedirect)
		}},
		providertest.ResponsesText("ok", 1, 1))
	g := vendorClient(t, "openai", srv.URL+"/v1", secretKey)
	res, err := g.Generate(context.Background(), &providers.Request{Model: "m", Messages: []history.Message{history.NewText(history.User, "hi")}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Message.Text() != "ok" || srv.Last().Header.Get("Authorization") != "Bearer "+secretKey || srv.Last().Path != "/v2/responses" {
		t.Errorf("same-origin redirect: text %q, path %q, auth %q", res.Message.Text(), srv.Last().Path, srv.Last().Header.Get("Authorization"))
	}
}

// A caller's own http.Client gets the same guard, without being modified.
func TestRedirectGuardOnInjectedClient(t *testing.T) {
	attacker := providertest.NewServer(t, providertest.ResponsesText("stolen", 1, 1))
	origin := providertest.NewServer(t, providertest.Reply{Func: func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, attacker.URL+"/v1/responses", http.StatusTemporaryRedirect)
	}})
	hc := &http.Client{}
	g, err := openai.New(openai.Config{Endpoint: httpapi.Endpoint{Provider: "openai", BaseURL: origin.URL + "/v1", APIKey: secretKey, HTTPClient: hc,
		Retry: httpapi.RetryPolicy{MaxAttempts: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Generate(context.Background(), &providers.Request{Model: "m", Messages: []history.Message{history.NewText(history.User, "hi")}}); err == nil {
		t.Error("redirect to another origin followed")
	}
	if len(attacker.Requests()) != 0 || hc.CheckRedirect != nil {
		t.Errorf("attacker got %d requests; injected client changed: %v", len(attacker.Requests()), hc.CheckRedirect != nil)
	}
}

// TestRedactBeforeBound is the leak of a key cut by the message bound: an
// error body that places the key across the 700-byte cut left most of its
// characters in the message (and the log) because the redactor no longer saw
// the whole key.
func TestRedactBeforeBound(t *testing.T) {
	key := "vt-" + strings.Repeat("Qx7", 9) // no well-known key shape: only the exact key finds it
	for offset := 680; offset <= 700; offset += 2 {
		msg := strings.Repeat("e", offset) + key + " trailing"
		srv := providertest.NewServer(t, providertest.OpenAIError(400, "invalid_request_error", "", msg))
		g := vendorClient(t, "openai", srv.URL+"/v1", key)
		_, err := g.Generate(context.Background(), &providers.Request{Model: "m", Messages: []history.Message{history.NewText(history.User, "hi")}})
		if err == nil {
			t.Fatal("no error")
		}
		if leak := longestKeyPart(err.Error(), key); leak >= 6 {
			t.Errorf("key at offset %d: %d characters of the key in %q", offset, leak, err.Error()[max(0, len(err.Error())-80):])
		}
	}
	// A non-JSON body (an HTML page from a proxy) is redacted before it is cut too.
	srv := providertest.NewServer(t, providertest.JSON(502, "<html><body>"+strings.Repeat("x ", 95)+key+"</body></html>").WithHeader("Content-Type", "text/html"))
	g := vendorClient(t, "openai", srv.URL+"/v1", key)
	_, err := g.Generate(context.Background(), &providers.Request{Model: "m", Messages: []history.Message{history.NewText(history.User, "hi")}})
	if err == nil || longestKeyPart(err.Error(), key) >= 6 {
		t.Errorf("HTML body: %v", err)
	}
}

// longestKeyPart is the length of the longest prefix of key found in s.
func longestKeyPart(s, key string) int {
	for n := len(key); n > 0; n-- {
		if strings.Contains(s, key[:n]) {
			return n
		}
	}
	return 0
}

// TestBasicCredentialsRedacted: a base URL with user info sends Basic
// credentials; a server echoing them (plain or base64) must not get them into
// the error.
func TestBasicCredentialsRedacted(t *testing.T) {
	const user, pass = "zpUSER", "hunter2-Xk9vQ3pL"
	b64 := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
	srv := providertest.NewServer(t, providertest.Reply{Func: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(401)
		msg := "bad credentials: " + r.Header.Get("Authorization") + " for " + user + ":" + pass + " (" + b64 + ")"
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "authentication_error"}})
		w.Write(b)
	}})
	u, _ := url.Parse(srv.URL + "/v1")
	u.User = url.UserPassword(user, pass)
	g := vendorClient(t, "chatcompat", u.String(), "")
	_, err := g.Generate(context.Background(), &providers.Request{Model: "m", Messages: []history.Message{history.NewText(history.User, "hi")}})
	if err == nil {
		t.Fatal("no error")
	}
	if got := srv.Last().Header.Get("Authorization"); got != "Basic "+b64 {
		t.Fatalf("the test server did not get Basic credentials: %q", got)
	}
	for _, s := range []string{pass, b64, b64[:12]} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error %q holds %q", err, s)
		}
	}
	// The same for the redactor alone: the Basic header form.
	if got := httpapi.Redact("auth: Basic " + b64); strings.Contains(got, b64[:8]) {
		t.Errorf("Redact(Basic ...) = %q", got)
	}
	if got := httpapi.Redact("GET https://" + user + ":" + pass + "@proxy.example/v1"); strings.Contains(got, pass) {
		t.Errorf("Redact(user info) = %q", got)
	}
	// Ordinary text after "basic" is not a credential.
	if in := "the basic settings are missing"; httpapi.Redact(in) != in {
		t.Errorf("Redact(%q) = %q", in, httpapi.Redact(in))
	}
}

// TestEchoedKeyRedactedFromOutput: a provider that echoes the key inside a
// successful answer (text, reasoning, tool call, opaque block) returns it
// redacted, so it is never stored.
func TestEchoedKeyRedactedFromOutput(t *testing.T) {
	echo := "Summary: the user configured key " + secretKey + " for the session."
	cases := []struct {
		vendor string
		reply  providertest.Reply
	}{
		{"openai", providertest.JSON(200, `{"id":"r","object":"response","status":"completed","output":[`+
			`{"type":"reasoning","id":"rs","summary":[{"type":"summary_text","text":"saw `+secretKey+`"}],"encrypted_content":"e`+secretKey+`"},`+
			`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"`+echo+`"}]}],"usage":{"input_tokens":5,"output_tokens":5}}`)},
		{"anthropic", providertest.JSON(200, `{"id":"m","type":"message","role":"assistant","model":"claude-sonnet-4-5","stop_reason":"end_turn",`+
			`"content":[{"type":"thinking","thinking":"saw `+secretKey+`","signature":"s"},{"type":"text","text":"`+echo+`"}],"usage":{"input_tokens":5,"output_tokens":5}}`)},
		{"chatcompat", providertest.JSON(200, `{"id":"c","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"`+echo+`","reasoning_content":"saw `+secretKey+`"}}],"usage":{"prompt_tokens":5,"completion_tokens":5}}`)},
	}
	for _, tc := range cases {
		srv := providertest.NewServer(t, tc.reply)
		g := vendorClient(t, tc.vendor, srv.URL+"/v1", secretKey)
		res, err := g.Generate(context.Background(), &providers.Request{Model: "claude-sonnet-4-5", Messages: []history.Message{history.NewText(history.User, "hi")}})
		if err != nil {
			t.Fatalf("%s: %v", tc.vendor, err)
		}
		b, _ := json.Marshal(res.Message)
		if strings.Contains(string(b), secretKey) {
			t.Errorf("%s: the key is in the returned message: %s", tc.vendor, b)
		}
		if !strings.Contains(res.Message.Text(), "Summary: the user configured key [REDACTED]") {
			t.Errorf("%s: text %q", tc.vendor, res.Message.Text())
		}
	}
	// Native compaction output too.
	srv := providertest.NewServer(t, providertest.ResponsesCompacted(providertest.UserItem(echo), providertest.CompactionItem("cmp_1", "enc")))
	c, err := openai.New(openai.Config{Endpoint: httpapi.Endpoint{Provider: "openai", BaseURL: srv.URL + "/v1", APIKey: secretKey}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Compact(context.Background(), &providers.CompactRequest{Model: "gpt-5", Input: []history.Message{history.NewText(history.User, "hi")}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(out.Output)
	if strings.Contains(string(b), secretKey) {
		t.Errorf("compact output holds the key: %s", b)
	}
}

func vendorClient(t *testing.T, vendor, base, key string) providers.Generator {
	t.Helper()
	ep := httpapi.Endpoint{BaseURL: base, APIKey: key, Model: "m", Retry: httpapi.RetryPolicy{MaxAttempts: 1}}
	var (
		g   providers.Generator
		err error
	)
	switch vendor {
	case "openai":
		ep.Provider = "openai"
		g, err = openai.New(openai.Config{Endpoint: ep})
	case "anthropic":
		ep.Provider = "anthropic"
		g, err = anthropic.New(anthropic.Config{Endpoint: ep})
	default:
		ep.Provider = "llamacpp"
		g, err = chatcompat.New(chatcompat.Config{Endpoint: ep})
	}
	if err != nil {
		t.Fatal(err)
	}
	return g
}
