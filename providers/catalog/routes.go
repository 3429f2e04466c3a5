package catalog

import (
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/vtcode/vtcode-ls/providers"
)

// route is a provider's row of the one provider table: where and how its
// API is reached, and, for a vendor whose models the catalog lists, what its
// models share unless their own row says otherwise.
type route struct {
	base string // default base URL; "" = none (must be configured)
	env  string // default API key environment variable; "" = no key needed
	wire providers.Wire
	// gateway: the route serves other vendors' models, named with a vendor
	// prefix ("anthropic/claude-sonnet-4.5") or without one.
	gateway bool
	// models are the id prefixes of the vendor's own models, by which a
	// gateway (or an unknown provider) serving an id without a vendor prefix
	// finds the vendor ("claude" → anthropic).
	models []string
	// prefixes are the further names gateways give the vendor in a model id
	// prefix ("google/gemini-2.5-pro", "x-ai/grok-4"); the row's own name
	// always counts.
	prefixes []string
	// cache is how the vendor bills its prompt cache; the zero value is
	// [defaultCache].
	cache CacheCost
	// usageExcludesCache: the route reports input tokens without the
	// cached part.
	usageExcludesCache bool
}

// routes is the one table of providers: adding one is one row. Endpoints
// on a base URL are built by httpapi.APIURL.
var routes = map[string]route{
	"openai": {base: "https://api.openai.com/v1", env: "OPENAI_API_KEY", wire: providers.WireResponses,
		models: []string{"gpt-", "o1", "o3", "o4", "codex"}},
	"openresponses": {env: "OPENRESPONSES_API_KEY", wire: providers.WireResponses, gateway: true},
	"vercel":        {base: "https://ai-gateway.vercel.sh/v1", env: "AI_GATEWAY_API_KEY", wire: providers.WireResponses, gateway: true},
	"xai": {base: "https://api.x.ai/v1", env: "XAI_API_KEY", wire: providers.WireResponses,
		models: []string{"grok"}, prefixes: []string{"x-ai"}, cache: CacheCost{Read: 0.25, Write: 1, TTL: defaultCacheTTL}},
	"anthropic": {base: "https://api.anthropic.com/v1", env: "ANTHROPIC_API_KEY", wire: providers.WireAnthropic,
		models: []string{"claude"}, cache: CacheCost{Read: 0.1, Write: anthropicWrite5m, TTL: defaultCacheTTL}, usageExcludesCache: true},
	"openrouter": {base: "https://openrouter.ai/api/v1", env: "OPENROUTER_API_KEY", wire: providers.WireChat, gateway: true},
	"deepseek": {base: "https://api.deepseek.com", env: "DEEPSEEK_API_KEY", wire: providers.WireChat,
		models: []string{"deepseek"}},
	"gemini": {base: "https://generativelanguage.googleapis.com/v1beta/openai", env: "GEMINI_API_KEY", wire: providers.WireChat,
		models: []string{"gemini"}, prefixes: []string{"google"}},
	"minimax": {base: "https://api.minimax.io/v1", env: "MINIMAX_API_KEY", wire: providers.WireChat,
		models: []string{"minimax"}, cache: CacheCost{Read: 0.1, Write: 1, TTL: defaultCacheTTL}, usageExcludesCache: true},
	"merge":    {base: "https://api-gateway.merge.dev/v1", env: "MERGE_GATEWAY_API_KEY", wire: providers.WireChat, gateway: true},
	"ollama":   {base: "http://localhost:11434/v1", wire: providers.WireChat},
	"llamacpp": {base: "http://localhost:8080/v1", wire: providers.WireChat},
	"offline":  {wire: providers.WireOffline},
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
	return routes[CanonicalProvider(provider)].base
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
	return routes[CanonicalProvider(provider)].env
}

// WireOf returns the wire format of a provider. Unknown providers are assumed
// to be OpenAI-compatible chat completions servers.
func WireOf(provider string) providers.Wire {
	if e, ok := routes[CanonicalProvider(provider)]; ok {
		return e.wire
	}
	return providers.WireChat
}

// KnownProviders returns the provider names of the built-in table, sorted.
func KnownProviders() []string {
	return slices.Sorted(maps.Keys(routes))
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
