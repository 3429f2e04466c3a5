package httpapi

import (
	"testing"

	"github.com/vtcode/vtcode-ls/providers/catalog"
)

// TestAPIURLBothConventions: every provider's endpoint is the same URL
// whether its base URL is written with its version segment or without, and
// the engine's clients and the proxy build it the same way (APIURL).
func TestAPIURLBothConventions(t *testing.T) {
	cases := []struct {
		provider, path string
		bases          []string
		want           string
	}{
		{"anthropic", "/v1/messages", []string{"https://api.anthropic.com", "https://api.anthropic.com/", "https://api.anthropic.com/v1", "https://api.anthropic.com/v1/"}, "https://api.anthropic.com/v1/messages"},
		{"anthropic", "/v1/messages/count_tokens", []string{"https://api.anthropic.com", "https://api.anthropic.com/v1"}, "https://api.anthropic.com/v1/messages/count_tokens"},
		{"openai", "/v1/responses", []string{"https://api.openai.com", "https://api.openai.com/v1"}, "https://api.openai.com/v1/responses"},
		{"openai", "/v1/responses/compact", []string{"https://api.openai.com", "https://api.openai.com/v1/"}, "https://api.openai.com/v1/responses/compact"},
		{"openai", "/v1/chat/completions", []string{"https://api.openai.com", "https://api.openai.com/v1"}, "https://api.openai.com/v1/chat/completions"},
		{"vercel", "/v1/responses", []string{"https://ai-gateway.vercel.sh", "https://ai-gateway.vercel.sh/v1"}, "https://ai-gateway.vercel.sh/v1/responses"},
		{"xai", "/v1/responses", []string{"https://api.x.ai", "https://api.x.ai/v1"}, "https://api.x.ai/v1/responses"},
		{"openresponses", "/v1/responses", []string{"http://127.0.0.1:8080", "http://127.0.0.1:8080/v1"}, "http://127.0.0.1:8080/v1/responses"},
		{"openrouter", "/v1/chat/completions", []string{"https://openrouter.ai/api/v1"}, "https://openrouter.ai/api/v1/chat/completions"},
		{"deepseek", "/v1/chat/completions", []string{"https://api.deepseek.com", "https://api.deepseek.com/v1"}, "https://api.deepseek.com/v1/chat/completions"},
		{"gemini", "/v1/chat/completions", []string{"https://generativelanguage.googleapis.com/v1beta/openai", "https://generativelanguage.googleapis.com/v1beta/openai/"}, "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions"},
		{"minimax", "/v1/chat/completions", []string{"https://api.minimax.io", "https://api.minimax.io/v1"}, "https://api.minimax.io/v1/chat/completions"},
		{"merge", "/v1/chat/completions", []string{"https://api-gateway.merge.dev", "https://api-gateway.merge.dev/v1"}, "https://api-gateway.merge.dev/v1/chat/completions"},
		{"ollama", "/v1/chat/completions", []string{"http://localhost:11434", "http://localhost:11434/v1"}, "http://localhost:11434/v1/chat/completions"},
		{"llamacpp", "/v1/chat/completions", []string{"http://localhost:8080", "http://localhost:8080/v1"}, "http://localhost:8080/v1/chat/completions"},
		// A gateway with a path of its own names the version it wants.
		{"anthropic", "/v1/messages", []string{"https://gw.example/acct/anthropic/v1"}, "https://gw.example/acct/anthropic/v1/messages"},
	}
	for _, c := range cases {
		for _, base := range c.bases {
			u, err := APIURL(base, c.path, "")
			if err != nil || u.String() != c.want {
				t.Errorf("%s: APIURL(%q, %q) = %v, %v; want %s", c.provider, base, c.path, u, err, c.want)
			}
			if got := JoinURL(base, c.path); got != c.want {
				t.Errorf("%s: JoinURL(%q, %q) = %q, want %s", c.provider, base, c.path, got, c.want)
			}
		}
	}
	// Every provider's default endpoint is covered by the table.
	for _, p := range catalog.KnownProviders() {
		def := catalog.DefaultBaseURL(p)
		if def == "" {
			continue
		}
		found := false
		for _, c := range cases {
			for _, b := range c.bases {
				found = found || (c.provider == p && TrimSlash(b) == def)
			}
		}
		if !found {
			t.Errorf("provider %s: its default base URL %s has no case", p, def)
		}
	}
	// Queries: the base URL's own first, then the request's.
	if u, _ := APIURL("https://h.example/v1?api-version=2", "/v1/responses", "beta=true"); u.String() != "https://h.example/v1/responses?api-version=2&beta=true" {
		t.Errorf("query = %s", u)
	}
	if got := JoinURL("https://h/v1/?key=x", "/v1/responses"); got != "https://h/v1/responses?key=x" {
		t.Errorf("JoinURL with a query = %q", got)
	}
	for _, bad := range []string{"", "ftp://h/v1", "api.anthropic.com", "http://"} {
		if _, err := APIURL(bad, "/v1/messages", ""); err == nil {
			t.Errorf("APIURL(%q): no error", bad)
		}
	}
}

// TrimSlash is the base URL without its trailing slash (test helper).
func TrimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}

func TestBaseURL(t *testing.T) {
	for _, tc := range []struct{ provider, base, want string }{
		{"openai", "", "https://api.openai.com/v1"},
		{"openai", " http://localhost:9/v1/ ", "http://localhost:9/v1"},
		{"openresponses", "", ""},
		{"openai", "localhost:9", ""},
		{"my-proxy", "", ""},
	} {
		got, err := BaseURL(tc.provider, tc.base)
		if got != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("BaseURL(%q, %q) = %q, %v", tc.provider, tc.base, got, err)
		}
	}
}
