package compaction

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/vtcode/vtcode-ls/providers"
)

// Strategy is how a route compacts.
type Strategy string

// The strategies of SPEC §8.2.
const (
	Local            Strategy = "local"             // summary by a generate call, rebuilt locally
	NativeStandalone Strategy = "native_standalone" // POST …/responses/compact
	NativeInline     Strategy = "native_inline"     // Anthropic compact_20260112 edit
)

// Trigger is what started a compaction; it is recorded by the caller in the
// compact boundary event.
type Trigger string

// The compaction triggers.
const (
	TriggerManual      Trigger = "manual"
	TriggerAuto        Trigger = "auto"
	TriggerRecovery    Trigger = "recovery"
	TriggerModelSwitch Trigger = "model_switch"
)

// Values of [providers.Route.NativeCompaction].
const (
	NativeAuto   = "auto"   // the route table decides
	NativeAlways = "always" // force native (e.g. a compatible proxy)
	NativeNever  = "never"  // always Local
)

// routeRule is one row of the strategy table. A route matches when its
// provider equals Provider, its host (when Hosts is set) is one of Hosts, and
// its model (when Model is set) passes Model.
type routeRule struct {
	Provider string
	// Hosts lists the official hosts the native endpoint is gated on; an empty
	// BaseURL means the official host. Nil: any host.
	Hosts    []string
	Model    func(model string) bool // nil: any model
	Strategy Strategy
}

// routeTable is SPEC §8.2. The first matching row wins; a route that matches
// no row is Local (openrouter, gemini, deepseek, minimax, merge, ollama,
// offline, ...).
var routeTable = []routeRule{
	{Provider: "openai", Hosts: []string{"api.openai.com"}, Model: isOpenAIResponsesModel, Strategy: NativeStandalone},
	{Provider: "openresponses", Strategy: NativeStandalone},
	{Provider: "vercel", Model: hasPrefix("openai/"), Strategy: NativeStandalone},
	{Provider: "xai", Hosts: []string{"api.x.ai"}, Model: hasPrefix(xaiCompactModels...), Strategy: NativeStandalone},
	{Provider: "anthropic", Model: isAnthropicInlineModel, Strategy: NativeInline},
}

// openAIResponsesPrefixes are the OpenAI model families served by the
// Responses API; openAINonResponses are variants that are not (audio,
// realtime, speech, search-preview chat models).
var (
	openAIResponsesPrefixes = []string{"gpt-5", "gpt-4.1", "gpt-4o", "o1", "o3", "o4", "codex-", "computer-use-"}
	openAINonResponses      = []string{"audio", "realtime", "transcribe", "tts", "search-preview"}
)

// xaiCompactModels is the curated allowlist of Grok models served by xAI's
// OpenAI-compatible compact endpoint.
var xaiCompactModels = []string{"grok-4", "grok-code-fast"}

// anthropicInline gives, per Claude family, the first version with native
// inline compaction: Opus 4.x, Sonnet 4.6 and newer, and the 5-series
// families. Haiku and older models are Local.
var anthropicInline = []struct {
	family       string
	major, minor int
}{
	{"opus", 4, 0},
	{"sonnet", 4, 6},
	{"fable", 5, 0},
	{"mythos", 5, 0},
}

// StrategyFor returns the compaction strategy of route r (SPEC §8.2):
// r.NativeCompaction "never" forces Local; "always" forces NativeInline for
// Anthropic routes and NativeStandalone for every other (OpenAI-format) route;
// otherwise the route table decides. Provider names compare case-insensitively.
func StrategyFor(r providers.Route) Strategy {
	provider := strings.ToLower(strings.TrimSpace(r.Provider))
	switch strings.ToLower(strings.TrimSpace(r.NativeCompaction)) {
	case NativeNever:
		return Local
	case NativeAlways:
		if provider == "anthropic" {
			return NativeInline
		}
		return NativeStandalone
	}
	model := strings.ToLower(strings.TrimSpace(r.Model))
	for _, row := range routeTable {
		if row.Provider != provider {
			continue
		}
		if row.Hosts != nil && !onHost(r.BaseURL, row.Hosts) {
			continue
		}
		if row.Model != nil && !row.Model(model) {
			continue
		}
		return row.Strategy
	}
	return Local
}

// onHost reports whether baseURL is empty (the official endpoint) or names one
// of hosts.
func onHost(baseURL string, hosts []string) bool {
	baseURL = strings.TrimSpace(baseURL)
	if baseURL == "" {
		return true
	}
	if !strings.Contains(baseURL, "://") {
		baseURL = "https://" + baseURL
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return false
	}
	h := strings.ToLower(u.Hostname())
	for _, want := range hosts {
		if h == want {
			return true
		}
	}
	return false
}

func hasPrefix(prefixes ...string) func(string) bool {
	return func(model string) bool {
		for _, p := range prefixes {
			if strings.HasPrefix(model, p) {
				return true
			}
		}
		return false
	}
}

func isOpenAIResponsesModel(model string) bool {
	if !hasPrefix(openAIResponsesPrefixes...)(model) {
		return false
	}
	for _, s := range openAINonResponses {
		if strings.Contains(model, s) {
			return false
		}
	}
	return true
}

// isAnthropicInlineModel parses Claude model ids such as "claude-opus-4-1",
// "claude-sonnet-4-6-20260101", "claude-opus-4.5", "anthropic/claude-sonnet-5"
// or "us.anthropic.claude-opus-4-8-v1:0" and compares the version with
// [anthropicInline]. A date suffix is not a minor version.
func isAnthropicInlineModel(model string) bool {
	i := strings.Index(model, "claude-")
	if i < 0 {
		return false
	}
	rest := model[i+len("claude-"):]
	for _, f := range anthropicInline {
		if !strings.HasPrefix(rest, f.family+"-") {
			continue
		}
		major, minor, ok := parseVersion(rest[len(f.family)+1:])
		if !ok {
			return false
		}
		return major > f.major || (major == f.major && minor >= f.minor)
	}
	return false
}

// parseVersion reads "4", "4-6", "4.6", "4-6-20260101" or "4-20250514".
func parseVersion(s string) (major, minor int, ok bool) {
	num := func(s string) (int, string) {
		j := 0
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == 0 {
			return -1, s
		}
		n, err := strconv.Atoi(s[:j])
		if err != nil {
			return -1, s
		}
		return n, s[j:]
	}
	major, rest := num(s)
	if major < 0 {
		return 0, 0, false
	}
	if len(rest) > 1 && (rest[0] == '-' || rest[0] == '.') {
		j := 1
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if j > 1 && j <= 3 { // one or two digits: a minor version, not a date
			minor, _ = strconv.Atoi(rest[1:j])
		}
	}
	return major, minor, true
}
