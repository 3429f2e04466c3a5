package compaction

import (
	"net/url"
	"strings"

	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/catalog"
)

// Strategy is how a route compacts.
type Strategy string

// The strategies of docs/design.md §8.2.
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

// StrategyFor returns the compaction strategy of route r (docs/design.md §8.2):
// r.NativeCompaction "never" forces Local; "always" forces NativeInline for
// Anthropic routes and NativeStandalone for every other (OpenAI-format) route;
// otherwise the model catalog decides ([catalog.Catalog.Lookup], the one
// source of model capabilities): NativeStandalone for a model with a native
// /responses/compact endpoint on its route (openai and xai only on their
// official hosts), NativeInline for an Anthropic model that takes the
// compact edit, Local for everything else (openrouter, gemini, deepseek,
// minimax, merge, ollama, offline, ...). Provider names compare
// case-insensitively.
func StrategyFor(r providers.Route) Strategy {
	provider := catalog.CanonicalProvider(r.Provider)
	switch strings.ToLower(strings.TrimSpace(r.NativeCompaction)) {
	case NativeNever:
		return Local
	case NativeAlways:
		if catalog.WireOf(provider) == providers.WireAnthropic {
			return NativeInline
		}
		return NativeStandalone
	}
	info, _ := catalog.LookupModel(provider, r.Model)
	switch {
	case info.Responses && (!officialOnly[provider] || onHost(r.BaseURL, officialHost(provider))):
		return NativeStandalone
	case info.InlineCompaction:
		return NativeInline
	}
	return Local
}

// officialOnly are the providers whose native endpoint is used only on
// their official host (a proxy may not implement it).
var officialOnly = map[string]bool{"openai": true, "xai": true}

// officialHost is the host of a provider's official endpoint.
func officialHost(provider string) []string {
	u, err := url.Parse(catalog.DefaultBaseURL(provider))
	if err != nil || u.Hostname() == "" {
		return nil
	}
	return []string{strings.ToLower(u.Hostname())}
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
