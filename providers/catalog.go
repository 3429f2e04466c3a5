package providers

import (
	"strings"
)

// ModelInfo is what the catalog knows about one model on one provider.
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
	// Cache overrides the route's prompt-cache pricing in [[models]]
	// entries (zero fields: not set); see [Catalog.Cost].
	Cache CacheCost
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
func (c *Catalog) Lookup(provider, model string) (ModelInfo, bool) {
	provider = CanonicalProvider(provider)
	info, ok := lookupBuiltin(provider, model)
	if c != nil {
		for _, e := range c.extra {
			if (e.Provider == "" || e.Provider == provider) && modelMatches(strings.ToLower(e.Model), strings.ToLower(strings.TrimSpace(model))) {
				if !ok {
					info = ModelInfo{Provider: provider, Model: model}
				}
				if e.ContextWindow > 0 {
					info.ContextWindow = e.ContextWindow
				}
				if e.MaxOutputTokens > 0 {
					info.MaxOutputTokens = e.MaxOutputTokens
				}
				info.Responses = info.Responses || e.Responses
				info.InlineCompaction = info.InlineCompaction || e.InlineCompaction
				info.ContextEdits = info.ContextEdits || e.ContextEdits
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

var vendorProviders = map[string]string{
	"openai": "openai", "anthropic": "anthropic", "google": "gemini", "gemini": "gemini",
	"x-ai": "xai", "xai": "xai", "deepseek": "deepseek", "minimax": "minimax",
}

// gateways route vendor/model ids to other vendors' models.
var gateways = map[string]bool{"vercel": true, "openrouter": true, "merge": true, "openresponses": true}

func lookupBuiltin(provider, model string) (ModelInfo, bool) {
	m := strings.ToLower(strings.TrimSpace(model))
	if m == "" {
		return ModelInfo{}, false
	}
	vendor := provider
	if i := strings.IndexByte(m, '/'); i > 0 {
		if v, ok := vendorProviders[m[:i]]; ok {
			vendor, m = v, m[i+1:]
		}
	} else if gateways[provider] || endpoints[provider].wire == "" {
		vendor = guessVendor(m)
	}
	oneM := false
	if base, ok := strings.CutSuffix(m, "[1m]"); ok {
		m, oneM = base, true
	}
	if vendor == "anthropic" || strings.HasPrefix(m, "claude-") {
		m = strings.ReplaceAll(m, ".", "-")
	}
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
	if best == nil {
		return ModelInfo{}, false
	}
	info := *best
	info.Provider, info.Model = provider, model
	if oneM && info.ContextWindow < 1_000_000 && vendor == "anthropic" {
		info.ContextWindow = 1_000_000
	}
	switch WireOf(provider) {
	case WireResponses:
		switch provider {
		case "openresponses":
			info.Responses = true
		case "vercel":
			info.Responses = vendor == "openai" && best.Responses
		case "openai", "xai":
			info.Responses = vendor == provider && best.Responses
		}
		info.InlineCompaction, info.ContextEdits = false, false
	case WireAnthropic:
		info.Responses = false
	default:
		info.Responses, info.InlineCompaction, info.ContextEdits = false, false, false
	}
	return info, true
}

func guessVendor(m string) string {
	switch {
	case strings.HasPrefix(m, "gpt-"), strings.HasPrefix(m, "o1"), strings.HasPrefix(m, "o3"),
		strings.HasPrefix(m, "o4"), strings.HasPrefix(m, "codex"):
		return "openai"
	case strings.HasPrefix(m, "claude"):
		return "anthropic"
	case strings.HasPrefix(m, "gemini"):
		return "gemini"
	case strings.HasPrefix(m, "grok"):
		return "xai"
	case strings.HasPrefix(m, "deepseek"):
		return "deepseek"
	case strings.HasPrefix(m, "minimax"):
		return "minimax"
	}
	return ""
}

// builtinModels is the built-in catalog (model ids are lower-case prefixes).
// Values are the vendors' published limits; [[models]] entries correct them.
var builtinModels = []ModelInfo{
	// OpenAI: Responses models, all with /responses/compact on the official host.
	{Provider: "openai", Model: "gpt-5.6", ContextWindow: 1_050_000, MaxOutputTokens: 128_000, Responses: true},
	{Provider: "openai", Model: "gpt-5.5", ContextWindow: 1_050_000, MaxOutputTokens: 128_000, Responses: true},
	{Provider: "openai", Model: "gpt-5.4", ContextWindow: 1_050_000, MaxOutputTokens: 128_000, Responses: true},
	{Provider: "openai", Model: "gpt-5.4-mini", ContextWindow: 400_000, MaxOutputTokens: 128_000, Responses: true},
	{Provider: "openai", Model: "gpt-5.4-nano", ContextWindow: 400_000, MaxOutputTokens: 128_000, Responses: true},
	{Provider: "openai", Model: "gpt-5.3-codex", ContextWindow: 400_000, MaxOutputTokens: 128_000, Responses: true},
	{Provider: "openai", Model: "gpt-5.2", ContextWindow: 400_000, MaxOutputTokens: 128_000, Responses: true},
	{Provider: "openai", Model: "gpt-5.2-codex", ContextWindow: 400_000, MaxOutputTokens: 128_000, Responses: true},
	{Provider: "openai", Model: "gpt-5.1", ContextWindow: 400_000, MaxOutputTokens: 128_000, Responses: true},
	{Provider: "openai", Model: "gpt-5.1-codex", ContextWindow: 400_000, MaxOutputTokens: 128_000, Responses: true},
	{Provider: "openai", Model: "gpt-5.1-codex-mini", ContextWindow: 400_000, MaxOutputTokens: 128_000, Responses: true},
	{Provider: "openai", Model: "gpt-5.1-codex-max", ContextWindow: 400_000, MaxOutputTokens: 128_000, Responses: true},
	{Provider: "openai", Model: "gpt-5.1-chat", ContextWindow: 128_000, MaxOutputTokens: 16_384, Responses: true},
	{Provider: "openai", Model: "gpt-5", ContextWindow: 400_000, MaxOutputTokens: 128_000, Responses: true},
	{Provider: "openai", Model: "gpt-5-codex", ContextWindow: 400_000, MaxOutputTokens: 128_000, Responses: true},
	{Provider: "openai", Model: "gpt-5-mini", ContextWindow: 400_000, MaxOutputTokens: 128_000, Responses: true},
	{Provider: "openai", Model: "gpt-5-nano", ContextWindow: 400_000, MaxOutputTokens: 128_000, Responses: true},
	{Provider: "openai", Model: "gpt-5-chat", ContextWindow: 128_000, MaxOutputTokens: 16_384, Responses: true},
	{Provider: "openai", Model: "gpt-4.1", ContextWindow: 1_047_576, MaxOutputTokens: 32_768, Responses: true},
	{Provider: "openai", Model: "gpt-4o", ContextWindow: 128_000, MaxOutputTokens: 16_384, Responses: true},
	{Provider: "openai", Model: "o4-mini", ContextWindow: 200_000, MaxOutputTokens: 100_000, Responses: true},
	{Provider: "openai", Model: "o3", ContextWindow: 200_000, MaxOutputTokens: 100_000, Responses: true},
	{Provider: "openai", Model: "o1", ContextWindow: 200_000, MaxOutputTokens: 100_000, Responses: true},
	{Provider: "openai", Model: "codex-mini", ContextWindow: 200_000, MaxOutputTokens: 100_000, Responses: true},

	// Anthropic. Opus 4.x and Sonnet 4.6+ take the compact_20260112 edit;
	// every Claude 4 model takes the clearing edits. Sonnet 4 and 4.5 reach
	// 1M tokens only with the context-1m beta (model id suffix "[1m]").
	{Provider: "anthropic", Model: "claude-opus-5", ContextWindow: 1_000_000, MaxOutputTokens: 128_000, InlineCompaction: true, ContextEdits: true},
	{Provider: "anthropic", Model: "claude-sonnet-5", ContextWindow: 1_000_000, MaxOutputTokens: 128_000, InlineCompaction: true, ContextEdits: true},
	{Provider: "anthropic", Model: "claude-fable-5", ContextWindow: 1_000_000, MaxOutputTokens: 128_000, InlineCompaction: true, ContextEdits: true},
	{Provider: "anthropic", Model: "claude-mythos-5", ContextWindow: 1_000_000, MaxOutputTokens: 128_000, InlineCompaction: true, ContextEdits: true},
	{Provider: "anthropic", Model: "claude-opus-4-8", ContextWindow: 1_000_000, MaxOutputTokens: 128_000, InlineCompaction: true, ContextEdits: true},
	{Provider: "anthropic", Model: "claude-opus-4-7", ContextWindow: 1_000_000, MaxOutputTokens: 128_000, InlineCompaction: true, ContextEdits: true},
	{Provider: "anthropic", Model: "claude-opus-4-6", ContextWindow: 1_000_000, MaxOutputTokens: 128_000, InlineCompaction: true, ContextEdits: true},
	{Provider: "anthropic", Model: "claude-sonnet-4-6", ContextWindow: 1_000_000, MaxOutputTokens: 64_000, InlineCompaction: true, ContextEdits: true},
	{Provider: "anthropic", Model: "claude-opus-4-5", ContextWindow: 200_000, MaxOutputTokens: 64_000, InlineCompaction: true, ContextEdits: true},
	{Provider: "anthropic", Model: "claude-opus-4-1", ContextWindow: 200_000, MaxOutputTokens: 32_000, InlineCompaction: true, ContextEdits: true},
	{Provider: "anthropic", Model: "claude-opus-4", ContextWindow: 200_000, MaxOutputTokens: 32_000, InlineCompaction: true, ContextEdits: true},
	{Provider: "anthropic", Model: "claude-sonnet-4-5", ContextWindow: 200_000, MaxOutputTokens: 64_000, ContextEdits: true},
	{Provider: "anthropic", Model: "claude-sonnet-4", ContextWindow: 200_000, MaxOutputTokens: 64_000, ContextEdits: true},
	{Provider: "anthropic", Model: "claude-haiku-4-5", ContextWindow: 200_000, MaxOutputTokens: 64_000, ContextEdits: true},
	{Provider: "anthropic", Model: "claude-3-7-sonnet", ContextWindow: 200_000, MaxOutputTokens: 64_000},
	{Provider: "anthropic", Model: "claude-3-5-haiku", ContextWindow: 200_000, MaxOutputTokens: 8_192},

	// Google Gemini (OpenAI-compatible endpoint).
	{Provider: "gemini", Model: "gemini-3.5", ContextWindow: 1_048_576, MaxOutputTokens: 65_536},
	{Provider: "gemini", Model: "gemini-3.1", ContextWindow: 1_048_576, MaxOutputTokens: 65_536},
	{Provider: "gemini", Model: "gemini-3", ContextWindow: 1_048_576, MaxOutputTokens: 65_536},
	{Provider: "gemini", Model: "gemini-2.5", ContextWindow: 1_048_576, MaxOutputTokens: 65_536},
	{Provider: "gemini", Model: "gemini-2.0-flash", ContextWindow: 1_048_576, MaxOutputTokens: 8_192},

	// xAI. Grok 4 family models are on the native compact allowlist.
	{Provider: "xai", Model: "grok-4", ContextWindow: 256_000, Responses: true},
	{Provider: "xai", Model: "grok-4-fast", ContextWindow: 2_000_000, MaxOutputTokens: 30_000, Responses: true},
	{Provider: "xai", Model: "grok-4-1-fast", ContextWindow: 2_000_000, MaxOutputTokens: 30_000, Responses: true},
	{Provider: "xai", Model: "grok-4.1-fast", ContextWindow: 2_000_000, MaxOutputTokens: 30_000, Responses: true},
	{Provider: "xai", Model: "grok-code-fast", ContextWindow: 256_000, MaxOutputTokens: 10_000, Responses: true},
	{Provider: "xai", Model: "grok-3", ContextWindow: 131_072},

	// DeepSeek.
	{Provider: "deepseek", Model: "deepseek-chat", ContextWindow: 128_000, MaxOutputTokens: 8_192},
	{Provider: "deepseek", Model: "deepseek-reasoner", ContextWindow: 128_000, MaxOutputTokens: 64_000},

	// MiniMax.
	{Provider: "minimax", Model: "minimax-m2", ContextWindow: 204_800, MaxOutputTokens: 128_000},
	{Provider: "minimax", Model: "minimax-m1", ContextWindow: 1_000_000, MaxOutputTokens: 40_000},
}
