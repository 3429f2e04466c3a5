package providers

import (
	"errors"
	"net/url"
	"strings"
)

// Wire names the HTTP dialect a provider speaks.
type Wire string

// The wire formats of the vendor clients.
const (
	// WireResponses is the OpenAI Responses API (package providers/openai):
	// openai, openresponses, vercel, xai.
	WireResponses Wire = "responses"
	// WireAnthropic is the Anthropic Messages API (package providers/anthropic).
	WireAnthropic Wire = "anthropic"
	// WireChat is OpenAI-compatible chat completions (package
	// providers/chatcompat): openrouter, deepseek, gemini, minimax, merge,
	// ollama, llamacpp, and any provider this package does not know.
	WireChat Wire = "chat"
	// WireOffline is the embedded offline summarizer (package providers/offline).
	WireOffline Wire = "offline"
)

// tableEntry is a provider's row of the endpoints table.
type tableEntry struct {
	base string // default base URL; "" = none (must be configured)
	env  string // default API key environment variable; "" = no key needed
	wire Wire
}

// endpoints is the one table of provider defaults. Endpoints on a base URL
// are built by [APIURL].
var endpoints = map[string]tableEntry{
	"openai":        {"https://api.openai.com/v1", "OPENAI_API_KEY", WireResponses},
	"openresponses": {"", "OPENRESPONSES_API_KEY", WireResponses},
	"vercel":        {"https://ai-gateway.vercel.sh/v1", "AI_GATEWAY_API_KEY", WireResponses},
	"xai":           {"https://api.x.ai/v1", "XAI_API_KEY", WireResponses},
	"anthropic":     {"https://api.anthropic.com/v1", "ANTHROPIC_API_KEY", WireAnthropic},
	"openrouter":    {"https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", WireChat},
	"deepseek":      {"https://api.deepseek.com", "DEEPSEEK_API_KEY", WireChat},
	"gemini":        {"https://generativelanguage.googleapis.com/v1beta/openai", "GEMINI_API_KEY", WireChat},
	"minimax":       {"https://api.minimax.io/v1", "MINIMAX_API_KEY", WireChat},
	"merge":         {"https://api-gateway.merge.dev/v1", "MERGE_GATEWAY_API_KEY", WireChat},
	"ollama":        {"http://localhost:11434/v1", "", WireChat},
	"llamacpp":      {"http://localhost:8080/v1", "", WireChat},
	"offline":       {"", "", WireOffline},
}

var providerAliases = map[string]string{
	"llama.cpp":         "llamacpp",
	"llama-cpp":         "llamacpp",
	"google":            "gemini",
	"x-ai":              "xai",
	"grok":              "xai",
	"claude":            "anthropic",
	"vercel-ai-gateway": "vercel",
	"ai-gateway":        "vercel",
	"merge-gateway":     "merge",
	"open-responses":    "openresponses",
}

// CanonicalProvider returns the table name of a provider: lower case, with a
// few common aliases resolved ("llama.cpp" → "llamacpp", "google" → "gemini",
// "x-ai" → "xai"). Unknown names are returned lower-cased.
func CanonicalProvider(provider string) string {
	p := strings.ToLower(strings.TrimSpace(provider))
	if a, ok := providerAliases[p]; ok {
		return a
	}
	return p
}

// DefaultBaseURL returns the official endpoint of a provider, including its
// version segment, or "" when the provider has none (openresponses must be
// configured; offline needs no endpoint; unknown providers have no default).
//
//	openai        https://api.openai.com/v1
//	openresponses (base URL required)
//	vercel        https://ai-gateway.vercel.sh/v1
//	xai           https://api.x.ai/v1
//	anthropic     https://api.anthropic.com/v1
//	openrouter    https://openrouter.ai/api/v1
//	deepseek      https://api.deepseek.com
//	gemini        https://generativelanguage.googleapis.com/v1beta/openai
//	minimax       https://api.minimax.io/v1
//	merge         https://api-gateway.merge.dev/v1
//	ollama        http://localhost:11434/v1
//	llamacpp      http://localhost:8080/v1
func DefaultBaseURL(provider string) string {
	return endpoints[CanonicalProvider(provider)].base
}

// DefaultAPIKeyEnv returns the environment variable a provider's API key is
// read from when the configuration names none, or "" when the provider needs
// no key (ollama, llamacpp, offline) or is unknown.
//
//	openai OPENAI_API_KEY, openresponses OPENRESPONSES_API_KEY,
//	vercel AI_GATEWAY_API_KEY, xai XAI_API_KEY, anthropic ANTHROPIC_API_KEY,
//	openrouter OPENROUTER_API_KEY, deepseek DEEPSEEK_API_KEY,
//	gemini GEMINI_API_KEY, minimax MINIMAX_API_KEY, merge MERGE_GATEWAY_API_KEY
func DefaultAPIKeyEnv(provider string) string {
	return endpoints[CanonicalProvider(provider)].env
}

// WireOf returns the wire format of a provider. Unknown providers are assumed
// to be OpenAI-compatible chat completions servers.
func WireOf(provider string) Wire {
	if e, ok := endpoints[CanonicalProvider(provider)]; ok {
		return e.wire
	}
	return WireChat
}

// KnownProviders returns the provider names of the built-in table, sorted.
func KnownProviders() []string {
	return []string{"anthropic", "deepseek", "gemini", "llamacpp", "merge", "minimax",
		"offline", "ollama", "openai", "openresponses", "openrouter", "vercel", "xai"}
}

// IsOfficialBaseURL reports whether baseURL points at the provider's official
// host: true for an empty baseURL when the provider has a default, and when
// the scheme and host match the default's. Providers without a default
// endpoint (openresponses, unknown names) have no official host.
func IsOfficialBaseURL(provider, baseURL string) bool {
	def := DefaultBaseURL(provider)
	if def == "" {
		return false
	}
	if strings.TrimSpace(baseURL) == "" {
		return true
	}
	u, err1 := url.Parse(strings.TrimSpace(baseURL))
	d, err2 := url.Parse(def)
	if err1 != nil || err2 != nil {
		return false
	}
	return strings.EqualFold(u.Scheme, d.Scheme) && strings.EqualFold(u.Host, d.Host)
}

// APIURL returns the URL of an API path on a base URL: the one rule every
// upstream URL is built by, the engine's own clients and the proxy's
// forwarding alike. path is the path as the API documents it, with its
// version ("/v1/messages", "/v1/responses/compact", "/v1/chat/completions");
// query ("" for none) follows the base URL's own query. Both conventions of
// a base URL work:
//
//	https://api.anthropic.com        + /v1/messages → https://api.anthropic.com/v1/messages
//	https://api.anthropic.com/v1     + /v1/messages → https://api.anthropic.com/v1/messages
//	https://api.openai.com/v1        + /v1/responses → https://api.openai.com/v1/responses
//	https://openrouter.ai/api/v1     + /v1/chat/completions → https://openrouter.ai/api/v1/chat/completions
//	…/v1beta/openai                  + /v1/chat/completions → …/v1beta/openai/chat/completions
//
// A base URL without a path takes the whole path; one with a path stands
// for the path's leading /v1 (a gateway that wants …/anthropic/v1/messages
// is configured as …/anthropic/v1). It fails when base is not an absolute
// http(s) URL.
func APIURL(base, path, query string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("base_url must be an absolute http(s) URL")
	}
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	basePath := strings.TrimRight(u.Path, "/")
	if basePath != "" {
		if p, ok := strings.CutPrefix(path, "/v1/"); ok {
			path = "/" + p
		} else if path == "/v1" {
			path = ""
		}
	}
	out := *u
	out.Path = basePath + path
	out.RawPath = ""
	out.Fragment, out.RawFragment = "", ""
	switch {
	case out.RawQuery == "":
		out.RawQuery = query
	case query != "":
		out.RawQuery += "&" + query
	}
	return &out, nil
}

// JoinURL is [APIURL] as a string, for a base URL already checked (the
// vendor clients check theirs when they are built); "" when base is not an
// absolute http(s) URL.
func JoinURL(base, path string) string {
	q := ""
	if i := strings.IndexByte(base, '?'); i >= 0 {
		base, q = base[:i], base[i+1:]
	}
	u, err := APIURL(base, path, q)
	if err != nil {
		return ""
	}
	return u.String()
}

// APIKey reads a provider's API key from the environment: the variable named
// apiKeyEnv (the configuration's api_key_env), or DefaultAPIKeyEnv(provider)
// when that is empty. lookup is os.LookupEnv outside tests. It returns the
// variable's name as well, for messages such as "set OPENAI_API_KEY"; the
// key itself must never be logged or echoed. key is "" when the variable is
// unset or the provider needs none.
func APIKey(provider, apiKeyEnv string, lookup func(string) (string, bool)) (key, env string) {
	env = strings.TrimSpace(apiKeyEnv)
	if env == "" {
		env = DefaultAPIKeyEnv(provider)
	}
	if env == "" || lookup == nil {
		return "", env
	}
	v, _ := lookup(env)
	return strings.TrimSpace(v), env
}
