package catalog

import (
	"slices"
	"strconv"
	"strings"

	"github.com/vtcode/vtcode-ls/providers"
)

// ModelInfo is what the catalog knows about one model on one provider: its
// limits and the capabilities every other package reads from here (the
// compaction strategy, the Anthropic client's thinking and streaming
// choices). [Catalog.Lookup] is the one entry point.
type ModelInfo struct {
	Provider string // canonical provider name ("openai", "anthropic", ...)
	Model    string // model id, or an id prefix in catalog entries
	// ContextWindow is the model's context window in tokens; 0 = unknown.
	ContextWindow int
	// MaxOutputTokens is the largest output the model produces; 0 = unknown.
	MaxOutputTokens int
	// Responses reports that the model is served by the Responses API with a
	// native /responses/compact endpoint on this provider (openai Responses
	// models, openresponses, vercel openai/* models, allowlisted xAI Grok
	// models). Host gates (official endpoint) are the compaction engine's.
	Responses bool
	// InlineCompaction reports that the model accepts the Anthropic
	// compact_20260112 context-management edit (Claude Opus 4.x, Sonnet 4.6
	// and newer).
	InlineCompaction bool
	// ContextEdits reports that the model accepts the Anthropic clearing
	// edits (clear_thinking_20251015, clear_tool_uses_20250919).
	ContextEdits bool
	// ThinksByDefault reports that the model thinks unless told otherwise
	// (the Claude 5 generation).
	ThinksByDefault bool
	// AdaptiveThinking reports that the model takes {"type":"adaptive"}
	// thinking (Claude Opus 4.6+, Sonnet 4.6+ and newer).
	AdaptiveThinking bool
	// NonStreamingOutputTokens is the largest max_tokens the provider serves
	// without streaming for this model; 0 means the general bound
	// ([MaxNonStreamingOutputTokens]).
	NonStreamingOutputTokens int
	// Cache is the model's prompt-cache pricing where it differs from its
	// vendor's (built-in rows), or the [[models]] override (zero fields: not
	// set); see [Catalog.Cost].
	Cache CacheCost
	// Price is the model's list price; the zero value means unknown.
	Price Price
	// UsageExcludesCache reports that the route reports input tokens
	// without the cached part (Anthropic-format routes, MiniMax): the
	// prompt is input + cache reads + cache writes.
	UsageExcludesCache bool
}

// Model is the typed result of [Catalog.Lookup].
type Model = ModelInfo

// MaxNonStreamingOutputTokens is the largest output an Anthropic request
// asks for without streaming: the Messages API expects about an hour per
// 128,000 output tokens, and answers expected to take over ten minutes must
// stream.
const MaxNonStreamingOutputTokens = 21_333

// StreamingRequired reports whether a request asking for maxTokens output
// tokens must stream (see [MaxNonStreamingOutputTokens] and
// NonStreamingOutputTokens).
func (m ModelInfo) StreamingRequired(maxTokens int) bool {
	limit := MaxNonStreamingOutputTokens
	if m.NonStreamingOutputTokens > 0 {
		limit = min(limit, m.NonStreamingOutputTokens)
	}
	return maxTokens > limit
}

// Catalog is an ordered list of extra model entries in front of the built-in
// catalog. The zero value is the built-in catalog alone.
type Catalog struct {
	extra []ModelInfo
}

// WithModels returns a catalog in which extra entries (from [[models]] in the
// configuration) take precedence over the built-in ones. The first extra
// entry whose provider and model match wins; its non-zero numbers replace the
// built-in entry's and its capability flags are added to them, so an entry
// that only corrects context_window keeps the built-in capabilities.
func WithModels(extra []ModelInfo) *Catalog {
	c := &Catalog{extra: make([]ModelInfo, len(extra))}
	copy(c.extra, extra)
	for i := range c.extra {
		c.extra[i].Provider = CanonicalProvider(c.extra[i].Provider)
	}
	return c
}

// LookupModel looks a model up in the built-in catalog. See [Catalog.Lookup].
func LookupModel(provider, model string) (ModelInfo, bool) {
	return (*Catalog)(nil).Lookup(provider, model)
}

// Lookup returns what the catalog knows about model on provider.
//
// Model ids match case-insensitively, exactly or by prefix at a boundary
// ("-", ".", ":", "@", "_", "/"), the longest built-in prefix winning, so
// "claude-sonnet-4-5-20250929" finds "claude-sonnet-4-5" and "gpt-5.1-codex-mini"
// finds "gpt-5.1-codex-mini" before "gpt-5.1". Gateway ids with a vendor prefix
// ("openai/gpt-5", "anthropic/claude-sonnet-4.5", "google/gemini-2.5-pro") are
// looked up in the vendor's table; dotted Claude versions ("4.5") match the
// dashed ids. A "[1m]" suffix on a Claude model selects its 1M-token window.
// Provider-specific capabilities are adjusted for the route: Responses is
// true on vercel only for openai/* models, always on openresponses, and never
// on chat routes; InlineCompaction and ContextEdits only on Anthropic-format
// routes.
//
// Capabilities come from the model family rules (an OpenAI Responses family,
// a Grok model on xAI's compact allowlist, the Claude version), so a model
// newer than the table ("claude-sonnet-4-7-20261001") gets them too. ok
// reports whether an entry matched (the window and output limit are known);
// without one, the returned info still carries the capabilities.
func (c *Catalog) Lookup(provider, model string) (ModelInfo, bool) {
	provider = CanonicalProvider(provider)
	info, ok := lookupBuiltin(provider, model)
	if c != nil {
		for _, e := range c.extra {
			if (e.Provider == "" || e.Provider == provider) && modelMatches(strings.ToLower(e.Model), strings.ToLower(strings.TrimSpace(model))) {
				if e.ContextWindow > 0 {
					info.ContextWindow = e.ContextWindow
				}
				if e.MaxOutputTokens > 0 {
					info.MaxOutputTokens = e.MaxOutputTokens
				}
				info.Responses = info.Responses || e.Responses
				info.InlineCompaction = info.InlineCompaction || e.InlineCompaction
				info.ContextEdits = info.ContextEdits || e.ContextEdits
				info.Price = info.Price.withPrice(e.Price)
				return info, true
			}
		}
	}
	return info, ok
}

// modelMatches reports whether pattern equals model or is a prefix of it
// ending at a boundary.
func modelMatches(pattern, model string) bool {
	if pattern == "" {
		return false
	}
	if pattern == model {
		return true
	}
	if !strings.HasPrefix(model, pattern) {
		return false
	}
	switch model[len(pattern)] {
	case '-', '.', ':', '@', '_', '/', '[':
		return true
	}
	return false
}

// vendorOf returns the vendor whose table serves model on provider and the
// model id to look up there (lower case, vendor prefix removed, Claude dots
// as dashes), and whether it asked for the 1M-token window ("[1m]").
func vendorOf(provider, model string) (vendor, m string, oneM bool) {
	m = strings.ToLower(strings.TrimSpace(model))
	vendor = provider
	if i := strings.IndexByte(m, '/'); i > 0 {
		if v := vendorNamed(m[:i]); v != "" {
			vendor, m = v, m[i+1:]
		}
	} else if r, known := routes[provider]; r.gateway || !known {
		vendor = guessVendor(m)
	}
	if base, ok := strings.CutSuffix(m, "[1m]"); ok {
		m, oneM = base, true
	}
	if vendor == "anthropic" || strings.HasPrefix(m, "claude-") {
		m = strings.ReplaceAll(m, ".", "-")
	}
	return vendor, m, oneM
}

// builtinRow returns the longest built-in row of vendor matching m.
func builtinRow(vendor, m string) *ModelInfo {
	var best *ModelInfo
	for i := range builtinModels {
		e := &builtinModels[i]
		if e.Provider != vendor || !modelMatches(e.Model, m) {
			continue
		}
		if best == nil || len(e.Model) > len(best.Model) {
			best = e
		}
	}
	return best
}

func lookupBuiltin(provider, model string) (ModelInfo, bool) {
	if strings.TrimSpace(model) == "" && provider != "openresponses" {
		return ModelInfo{Provider: provider, Model: model}, false
	}
	vendor, m, oneM := vendorOf(provider, model)
	best := builtinRow(vendor, m)
	info := ModelInfo{}
	if best != nil {
		info = *best
	}
	info.Provider, info.Model = provider, model
	if best != nil && oneM && info.ContextWindow < 1_000_000 && vendor == "anthropic" {
		info.ContextWindow = 1_000_000
	}
	info.UsageExcludesCache = WireOf(provider) == providers.WireAnthropic || routes[provider].usageExcludesCache
	familyCapabilities(&info, provider, vendor, m)
	return info, best != nil
}

// familyCapabilities sets the capabilities of model m (lower case, vendor
// prefix removed) of vendor on provider from the family rules, then adjusts
// them for the route's wire format.
func familyCapabilities(info *ModelInfo, provider, vendor, m string) {
	responses := false
	switch vendor {
	case "openai":
		responses = isOpenAIResponsesModel(m)
	case "xai":
		responses = hasAnyPrefix(m, xaiCompactModels...)
	}
	if family, major, minor, ok := claudeVersion(m); ok {
		info.InlineCompaction = claudeAtLeast(family, major, minor, claudeInline)
		info.AdaptiveThinking = claudeAtLeast(family, major, minor, claudeAdaptive)
		info.ContextEdits = major >= 4
		info.ThinksByDefault = major >= 5
	}
	switch WireOf(provider) {
	case providers.WireResponses:
		switch provider {
		case "openresponses":
			info.Responses = true
		case "vercel":
			info.Responses = vendor == "openai" && responses
		case "openai", "xai":
			info.Responses = vendor == provider && responses
		}
		info.InlineCompaction, info.ContextEdits = false, false
	case providers.WireAnthropic:
		info.Responses = false
	default:
		info.Responses, info.InlineCompaction, info.ContextEdits = false, false, false
	}
}

// openAIResponsesPrefixes are the OpenAI model families served by the
// Responses API with /responses/compact; openAINonResponses are variants
// that are not (audio, realtime, speech, search-preview chat models).
var (
	openAIResponsesPrefixes = []string{"gpt-5", "gpt-4.1", "gpt-4o", "o1", "o3", "o4", "codex-", "computer-use-"}
	openAINonResponses      = []string{"audio", "realtime", "transcribe", "tts", "search-preview"}
)

// xaiCompactModels is the curated allowlist of Grok models served by xAI's
// OpenAI-compatible compact endpoint.
var xaiCompactModels = []string{"grok-4", "grok-code-fast"}

func isOpenAIResponsesModel(m string) bool {
	if !hasAnyPrefix(m, openAIResponsesPrefixes...) {
		return false
	}
	for _, s := range openAINonResponses {
		if strings.Contains(m, s) {
			return false
		}
	}
	return true
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// claudeFirst gives, per Claude family, the first version with a capability.
type claudeFirst map[string][2]int

var (
	// claudeInline: native inline compaction (compact_20260112) on Opus
	// 4.x, Sonnet 4.6 and newer, and the 5-series families; Haiku and older
	// models have none.
	claudeInline = claudeFirst{"opus": {4, 0}, "sonnet": {4, 6}, "fable": {5, 0}, "mythos": {5, 0}}
	// claudeAdaptive: adaptive thinking on Opus 4.6+, Sonnet 4.6+ and the
	// 5-series families.
	claudeAdaptive = claudeFirst{"opus": {4, 6}, "sonnet": {4, 6}, "fable": {5, 0}, "mythos": {5, 0}}
)

func claudeAtLeast(family string, major, minor int, first claudeFirst) bool {
	v, ok := first[family]
	return ok && (major > v[0] || major == v[0] && minor >= v[1])
}

// claudeVersion parses Claude model ids such as "claude-opus-4-1",
// "claude-sonnet-4-6-20260101", "claude-opus-4.5", "claude-sonnet-5" or
// "us.anthropic.claude-opus-4-8-v1:0" into family and version; the older
// "claude-3-7-sonnet" form has the version first. A date suffix is not a
// minor version.
func claudeVersion(m string) (family string, major, minor int, ok bool) {
	i := strings.Index(m, "claude-")
	if i < 0 {
		return "", 0, 0, false
	}
	rest := m[i+len("claude-"):]
	if rest != "" && rest[0] >= '0' && rest[0] <= '9' { // claude-3-7-sonnet
		major, minor, ok = parseVersion(rest)
		return "", major, minor, ok
	}
	family, ver, found := strings.Cut(rest, "-")
	if !found {
		return "", 0, 0, false
	}
	major, minor, ok = parseVersion(ver)
	return family, major, minor, ok
}

// parseVersion reads "4", "4-6", "4.6", "4-6-20260101" or "4-20250514".
func parseVersion(s string) (major, minor int, ok bool) {
	j := 0
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j == 0 || j > 3 {
		return 0, 0, false
	}
	major, _ = strconv.Atoi(s[:j])
	rest := s[j:]
	if len(rest) > 1 && (rest[0] == '-' || rest[0] == '.') {
		k := 1
		for k < len(rest) && rest[k] >= '0' && rest[k] <= '9' {
			k++
		}
		if k > 1 && k <= 3 { // one or two digits: a minor version, not a date
			minor, _ = strconv.Atoi(rest[1:k])
		}
	}
	return major, minor, true
}

// guessVendor returns the vendor with the longest model id prefix that m
// starts with, "" for none.
func guessVendor(m string) string {
	vendor, longest := "", 0
	for name, r := range routes {
		for _, p := range r.models {
			if strings.HasPrefix(m, p) && (len(p) > longest || len(p) == longest && name < vendor) {
				vendor, longest = name, len(p)
			}
		}
	}
	return vendor
}

// vendorNamed returns the vendor a gateway model id prefix names
// ("anthropic", "google", "x-ai"), "" when it names none whose models the
// catalog lists.
func vendorNamed(prefix string) string {
	for name, r := range routes {
		if r.models != nil && (prefix == name || slices.Contains(r.prefixes, prefix)) {
			return name
		}
	}
	return ""
}

// builtinModels is the built-in catalog (model ids are lower-case prefixes):
// one row per model family with the vendors' published limits, the cache
// pricing where it differs from the vendor's (its row in [routes]) and the list
// price where it was verified on the vendor's pricing page (see the price
// variables below; a row without one shows tokens and no cost). [[models]]
// entries correct any of it. The capabilities come from the family rules
// above, not from these rows.
var builtinModels = []ModelInfo{
	// OpenAI.
	{Provider: "openai", Model: "gpt-5.6", ContextWindow: 1_050_000, MaxOutputTokens: 128_000},
	{Provider: "openai", Model: "gpt-5.5", ContextWindow: 1_050_000, MaxOutputTokens: 128_000},
	{Provider: "openai", Model: "gpt-5.4", ContextWindow: 1_050_000, MaxOutputTokens: 128_000},
	{Provider: "openai", Model: "gpt-5.4-mini", ContextWindow: 400_000, MaxOutputTokens: 128_000},
	{Provider: "openai", Model: "gpt-5.4-nano", ContextWindow: 400_000, MaxOutputTokens: 128_000},
	{Provider: "openai", Model: "gpt-5.3-codex", ContextWindow: 400_000, MaxOutputTokens: 128_000},
	{Provider: "openai", Model: "gpt-5.2", ContextWindow: 400_000, MaxOutputTokens: 128_000},
	{Provider: "openai", Model: "gpt-5.2-codex", ContextWindow: 400_000, MaxOutputTokens: 128_000},
	{Provider: "openai", Model: "gpt-5.1", ContextWindow: 400_000, MaxOutputTokens: 128_000},
	{Provider: "openai", Model: "gpt-5.1-codex", ContextWindow: 400_000, MaxOutputTokens: 128_000},
	{Provider: "openai", Model: "gpt-5.1-codex-mini", ContextWindow: 400_000, MaxOutputTokens: 128_000},
	{Provider: "openai", Model: "gpt-5.1-codex-max", ContextWindow: 400_000, MaxOutputTokens: 128_000},
	{Provider: "openai", Model: "gpt-5.1-chat", ContextWindow: 128_000, MaxOutputTokens: 16_384},
	{Provider: "openai", Model: "gpt-5", ContextWindow: 400_000, MaxOutputTokens: 128_000, Price: openaiGPT5},
	{Provider: "openai", Model: "gpt-5-codex", ContextWindow: 400_000, MaxOutputTokens: 128_000, Price: openaiGPT5},
	{Provider: "openai", Model: "gpt-5-mini", ContextWindow: 400_000, MaxOutputTokens: 128_000},
	{Provider: "openai", Model: "gpt-5-nano", ContextWindow: 400_000, MaxOutputTokens: 128_000},
	{Provider: "openai", Model: "gpt-5-chat", ContextWindow: 128_000, MaxOutputTokens: 16_384},
	{Provider: "openai", Model: "gpt-4.1", ContextWindow: 1_047_576, MaxOutputTokens: 32_768, Cache: CacheCost{Read: 0.25}},
	{Provider: "openai", Model: "gpt-4o", ContextWindow: 128_000, MaxOutputTokens: 16_384, Cache: CacheCost{Read: 0.5}},
	{Provider: "openai", Model: "o4", ContextWindow: 200_000, MaxOutputTokens: 100_000, Cache: CacheCost{Read: 0.25}},
	{Provider: "openai", Model: "o3", ContextWindow: 200_000, MaxOutputTokens: 100_000, Cache: CacheCost{Read: 0.25}},
	{Provider: "openai", Model: "o1", ContextWindow: 200_000, MaxOutputTokens: 100_000, Cache: CacheCost{Read: 0.5}},
	{Provider: "openai", Model: "codex-mini", ContextWindow: 200_000, MaxOutputTokens: 100_000, Cache: CacheCost{Read: 0.25}},

	// Anthropic. Sonnet 4 and 4.5 reach 1M tokens only with the context-1m
	// beta (model id suffix "[1m]"). Opus 4 and 4.1 serve at most 8,192
	// output tokens without streaming.
	{Provider: "anthropic", Model: "claude-opus-5", ContextWindow: 1_000_000, MaxOutputTokens: 128_000, Price: claudeOpus45},
	{Provider: "anthropic", Model: "claude-sonnet-5", ContextWindow: 1_000_000, MaxOutputTokens: 128_000, Price: claudeSonnet5},
	{Provider: "anthropic", Model: "claude-fable-5", ContextWindow: 1_000_000, MaxOutputTokens: 128_000, Price: claudeFable5},
	{Provider: "anthropic", Model: "claude-mythos-5", ContextWindow: 1_000_000, MaxOutputTokens: 128_000, Price: claudeFable5},
	{Provider: "anthropic", Model: "claude-opus-4-8", ContextWindow: 1_000_000, MaxOutputTokens: 128_000, Price: claudeOpus45},
	{Provider: "anthropic", Model: "claude-opus-4-7", ContextWindow: 1_000_000, MaxOutputTokens: 128_000, Price: claudeOpus45},
	{Provider: "anthropic", Model: "claude-opus-4-6", ContextWindow: 1_000_000, MaxOutputTokens: 128_000, Price: claudeOpus45},
	{Provider: "anthropic", Model: "claude-sonnet-4-6", ContextWindow: 1_000_000, MaxOutputTokens: 64_000},
	{Provider: "anthropic", Model: "claude-opus-4-5", ContextWindow: 200_000, MaxOutputTokens: 64_000, Price: claudeOpus45},
	{Provider: "anthropic", Model: "claude-opus-4-1", ContextWindow: 200_000, MaxOutputTokens: 32_000, NonStreamingOutputTokens: 8_192, Price: claudeOpus4},
	{Provider: "anthropic", Model: "claude-opus-4", ContextWindow: 200_000, MaxOutputTokens: 32_000, NonStreamingOutputTokens: 8_192, Price: claudeOpus4},
	{Provider: "anthropic", Model: "claude-sonnet-4-5", ContextWindow: 200_000, MaxOutputTokens: 64_000, Price: claudeSonnet4},
	{Provider: "anthropic", Model: "claude-sonnet-4", ContextWindow: 200_000, MaxOutputTokens: 64_000, Price: claudeSonnet4},
	{Provider: "anthropic", Model: "claude-haiku-4-5", ContextWindow: 200_000, MaxOutputTokens: 64_000, Price: claudeHaiku45},
	{Provider: "anthropic", Model: "claude-3-7-sonnet", ContextWindow: 200_000, MaxOutputTokens: 64_000},
	{Provider: "anthropic", Model: "claude-3-5-haiku", ContextWindow: 200_000, MaxOutputTokens: 8_192},

	// Google Gemini (OpenAI-compatible endpoint). Implicit caching bills
	// cached input at a tenth of the input price, with no write premium
	// and no storage charge.
	{Provider: "gemini", Model: "gemini-3.5", ContextWindow: 1_048_576, MaxOutputTokens: 65_536},
	{Provider: "gemini", Model: "gemini-3.1", ContextWindow: 1_048_576, MaxOutputTokens: 65_536},
	{Provider: "gemini", Model: "gemini-3.1-pro", ContextWindow: 1_048_576, MaxOutputTokens: 65_536, Cache: geminiCache, Price: gemini3Pro},
	{Provider: "gemini", Model: "gemini-3", ContextWindow: 1_048_576, MaxOutputTokens: 65_536},
	{Provider: "gemini", Model: "gemini-3-pro", ContextWindow: 1_048_576, MaxOutputTokens: 65_536, Cache: geminiCache, Price: gemini3Pro},
	{Provider: "gemini", Model: "gemini-3-flash", ContextWindow: 1_048_576, MaxOutputTokens: 65_536, Cache: geminiCache, Price: gemini3Flash},
	{Provider: "gemini", Model: "gemini-2.5", ContextWindow: 1_048_576, MaxOutputTokens: 65_536, Cache: CacheCost{Read: 0.25}},
	{Provider: "gemini", Model: "gemini-2.5-pro", ContextWindow: 1_048_576, MaxOutputTokens: 65_536, Cache: geminiCache, Price: gemini25Pro},
	{Provider: "gemini", Model: "gemini-2.5-flash", ContextWindow: 1_048_576, MaxOutputTokens: 65_536, Cache: geminiCache, Price: gemini25Flash},
	{Provider: "gemini", Model: "gemini-2.5-flash-lite", ContextWindow: 1_048_576, MaxOutputTokens: 65_536, Cache: geminiCache, Price: gemini25FlashLite},
	{Provider: "gemini", Model: "gemini-2.0-flash", ContextWindow: 1_048_576, MaxOutputTokens: 8_192, Cache: CacheCost{Read: 0.25}},

	// xAI.
	{Provider: "xai", Model: "grok-4", ContextWindow: 256_000},
	{Provider: "xai", Model: "grok-4-fast", ContextWindow: 2_000_000, MaxOutputTokens: 30_000},
	{Provider: "xai", Model: "grok-4-1-fast", ContextWindow: 2_000_000, MaxOutputTokens: 30_000},
	{Provider: "xai", Model: "grok-4.1-fast", ContextWindow: 2_000_000, MaxOutputTokens: 30_000},
	{Provider: "xai", Model: "grok-code-fast", ContextWindow: 256_000, MaxOutputTokens: 10_000},
	{Provider: "xai", Model: "grok-3", ContextWindow: 131_072},

	// DeepSeek.
	{Provider: "deepseek", Model: "deepseek-chat", ContextWindow: 128_000, MaxOutputTokens: 8_192},
	{Provider: "deepseek", Model: "deepseek-reasoner", ContextWindow: 128_000, MaxOutputTokens: 64_000},

	// MiniMax.
	{Provider: "minimax", Model: "minimax-m2", ContextWindow: 204_800, MaxOutputTokens: 128_000},
	{Provider: "minimax", Model: "minimax-m1", ContextWindow: 1_000_000, MaxOutputTokens: 40_000},
}

// The list prices of the rows above, in US dollars per million tokens, read
// from the vendors' own pages on the date in AsOf:
// platform.claude.com/docs/en/about-claude/pricing (the model table; the
// Sonnet 4 and 4.5 long-context tier over 200k prompt tokens with the 1M
// beta: 2× input, 1.5× output) and the models' overview pages, and
// developers.openai.com/api/docs/models (GPT-5, GPT-5-Codex). Models whose
// price was not verified there carry none.
const pricesAsOf = "2026-12-01"

var (
	claudeFable5  = Price{Input: 10, CacheWrite5m: 12.5, CacheWrite1h: 20, CacheRead: 1, Output: 50, AsOf: pricesAsOf}
	claudeOpus45  = Price{Input: 5, CacheWrite5m: 6.25, CacheWrite1h: 10, CacheRead: 0.5, Output: 25, AsOf: pricesAsOf}
	claudeOpus4   = Price{Input: 15, CacheWrite5m: 18.75, CacheWrite1h: 30, CacheRead: 1.5, Output: 75, AsOf: pricesAsOf}
	claudeSonnet5 = Price{Input: 2, CacheWrite5m: 2.5, CacheWrite1h: 4, CacheRead: 0.2, Output: 10, AsOf: pricesAsOf}
	claudeSonnet4 = Price{Input: 3, CacheWrite5m: 3.75, CacheWrite1h: 6, CacheRead: 0.3, Output: 15,
		TierTokens: 200_000, TierInput: 2, TierOutput: 1.5, AsOf: pricesAsOf}
	claudeHaiku45 = Price{Input: 1, CacheWrite5m: 1.25, CacheWrite1h: 2, CacheRead: 0.1, Output: 5, AsOf: pricesAsOf}
	openaiGPT5    = Price{Input: 1.25, CacheRead: 0.125, Output: 10, AsOf: pricesAsOf}
)

// The Gemini rows' list prices (standard tier, text input; the "context
// caching price" is what an implicit cache hit costs), from
// ai.google.dev/gemini-api/docs/pricing on the date in AsOf. The Pro
// models bill every token of a prompt over 200k tokens at 2× the input and
// cache prices and 1.5× the output price.
const geminiPricesAsOf = "2026-12-02"

var (
	geminiCache       = CacheCost{Read: 0.1, Write: 1}
	gemini3Pro        = Price{Input: 2, CacheRead: 0.2, Output: 12, TierTokens: 200_000, TierInput: 2, TierOutput: 1.5, AsOf: geminiPricesAsOf}
	gemini3Flash      = Price{Input: 0.5, CacheRead: 0.05, Output: 3, AsOf: geminiPricesAsOf}
	gemini25Pro       = Price{Input: 1.25, CacheRead: 0.125, Output: 10, TierTokens: 200_000, TierInput: 2, TierOutput: 1.5, AsOf: geminiPricesAsOf}
	gemini25Flash     = Price{Input: 0.3, CacheRead: 0.03, Output: 2.5, AsOf: geminiPricesAsOf}
	gemini25FlashLite = Price{Input: 0.1, CacheRead: 0.01, Output: 0.4, AsOf: geminiPricesAsOf}
)
