package catalog

import (
	"testing"

	"github.com/vtcode/vtcode-ls/providers"
)

func TestLookupModel(t *testing.T) {
	cases := []struct {
		provider, model string
		ok              bool
		window, output  int
		responses       bool
		inline          bool
	}{
		{"openai", "gpt-5.1-codex", true, 400_000, 128_000, true, false},
		{"openai", "gpt-5.1-codex-mini", true, 400_000, 128_000, true, false},
		{"openai", "gpt-5-2025-08-07", true, 400_000, 128_000, true, false},
		{"openai", "gpt-5-chat-latest", true, 128_000, 16_384, true, false},
		{"openai", "gpt-5.4", true, 1_050_000, 128_000, true, false},
		{"openai", "gpt-5.4-mini", true, 400_000, 128_000, true, false},
		{"openai", "GPT-4.1-mini", true, 1_047_576, 32_768, true, false},
		{"openai", "gpt-4o-2024-08-06", true, 128_000, 16_384, true, false},
		{"openai", "o3-mini", true, 200_000, 100_000, true, false},
		{"openai", "o4-mini", true, 200_000, 100_000, true, false},
		{"openai", "gpt-4", false, 0, 0, false, false},
		{"anthropic", "claude-sonnet-4-5-20250929", true, 200_000, 64_000, false, false},
		{"anthropic", "claude-sonnet-4-5[1m]", true, 1_000_000, 64_000, false, false},
		{"anthropic", "claude-sonnet-4-6", true, 1_000_000, 64_000, false, true},
		{"anthropic", "claude-opus-4-1-20250805", true, 200_000, 32_000, false, true},
		{"anthropic", "claude-opus-4-20250514", true, 200_000, 32_000, false, true},
		{"anthropic", "claude-opus-4-6", true, 1_000_000, 128_000, false, true},
		{"anthropic", "claude-opus-5", true, 1_000_000, 128_000, false, true},
		{"anthropic", "claude-haiku-4-5@20251001", true, 200_000, 64_000, false, false},
		{"gemini", "gemini-2.5-pro", true, 1_048_576, 65_536, false, false},
		{"gemini", "gemini-3-pro-preview", true, 1_048_576, 65_536, false, false},
		{"gemini", "gemini-3.1-flash-lite-preview", true, 1_048_576, 65_536, false, false},
		{"xai", "grok-4-0709", true, 256_000, 0, true, false},
		{"xai", "grok-4-fast-reasoning", true, 2_000_000, 30_000, true, false},
		{"xai", "grok-code-fast-1", true, 256_000, 10_000, true, false},
		{"xai", "grok-3-mini", true, 131_072, 0, false, false},
		{"deepseek", "deepseek-chat", true, 128_000, 8_192, false, false},
		{"deepseek", "deepseek-reasoner", true, 128_000, 64_000, false, false},
		{"minimax", "MiniMax-M2.1", true, 204_800, 128_000, false, false},
		// Gateways look up the vendor's model.
		{"vercel", "openai/gpt-5.1-codex", true, 400_000, 128_000, true, false},
		{"vercel", "anthropic/claude-sonnet-4.5", true, 200_000, 64_000, false, false},
		{"openrouter", "anthropic/claude-opus-4.6", true, 1_000_000, 128_000, false, false},
		{"openrouter", "openai/gpt-5", true, 400_000, 128_000, false, false},
		{"openrouter", "google/gemini-2.5-flash", true, 1_048_576, 65_536, false, false},
		{"openrouter", "x-ai/grok-4", true, 256_000, 0, false, false},
		{"merge", "deepseek/deepseek-reasoner", true, 128_000, 64_000, false, false},
		{"openresponses", "gpt-5.2", true, 400_000, 128_000, true, false},
		{"xai", "gpt-5", false, 0, 0, false, false},
		{"ollama", "qwen3-coder", false, 0, 0, false, false},
		{"openai", "", false, 0, 0, false, false},
	}
	for _, tc := range cases {
		info, ok := LookupModel(tc.provider, tc.model)
		if ok != tc.ok {
			t.Errorf("%s/%s: ok = %v", tc.provider, tc.model, ok)
			continue
		}
		if !ok {
			continue
		}
		if info.ContextWindow != tc.window || info.MaxOutputTokens != tc.output || info.Responses != tc.responses || info.InlineCompaction != tc.inline {
			t.Errorf("%s/%s = %+v", tc.provider, tc.model, info)
		}
		if info.Provider != CanonicalProvider(tc.provider) || info.Model != tc.model {
			t.Errorf("%s/%s: identity = %s/%s", tc.provider, tc.model, info.Provider, info.Model)
		}
	}
}

func TestWithModels(t *testing.T) {
	c := WithModels([]ModelInfo{
		{Provider: "ollama", Model: "qwen3-coder", ContextWindow: 65536},
		{Provider: "openai", Model: "gpt-5.1-codex", ContextWindow: 272_000},
		{Provider: "openai", Model: "gpt-5.1", ContextWindow: 1},            // shadowed for codex by the entry above
		{Provider: "Llama.CPP", Model: "local", ContextWindow: 8192},        // provider alias
		{Model: "my-finetune", ContextWindow: 32768, MaxOutputTokens: 4096}, // any provider
	})
	check := func(provider, model string, window, output int, responses bool) {
		t.Helper()
		info, ok := c.Lookup(provider, model)
		if !ok || info.ContextWindow != window || info.MaxOutputTokens != output || info.Responses != responses {
			t.Errorf("%s/%s = %+v, %v", provider, model, info, ok)
		}
	}
	check("ollama", "qwen3-coder:30b", 65536, 0, false)
	check("openai", "gpt-5.1-codex-max", 272_000, 128_000, true) // numbers replaced, capabilities kept
	check("openai", "gpt-5.1", 1, 128_000, true)
	check("llamacpp", "local", 8192, 0, false)
	check("deepseek", "my-finetune", 32768, 4096, false)
	check("anthropic", "claude-opus-4-6", 1_000_000, 128_000, false)
	if _, ok := c.Lookup("ollama", "qwen3"); ok {
		t.Error("qwen3 matched qwen3-coder")
	}
	var nilCat *Catalog
	if _, ok := nilCat.Lookup("openai", "gpt-5"); !ok {
		t.Error("nil catalog lost the built-in entries")
	}
}

func TestEndpoints(t *testing.T) {
	for _, p := range KnownProviders() {
		if p == "openresponses" || p == "offline" {
			if DefaultBaseURL(p) != "" {
				t.Errorf("%s has a default base URL", p)
			}
			continue
		}
		if DefaultBaseURL(p) == "" {
			t.Errorf("%s has no default base URL", p)
		}
	}
	for p, env := range map[string]string{"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "OpenRouter": "OPENROUTER_API_KEY",
		"gemini": "GEMINI_API_KEY", "xai": "XAI_API_KEY", "ollama": "", "llama.cpp": "", "nope": ""} {
		if got := DefaultAPIKeyEnv(p); got != env {
			t.Errorf("DefaultAPIKeyEnv(%q) = %q, want %q", p, got, env)
		}
	}
	for p, w := range map[string]providers.Wire{"openai": providers.WireResponses, "vercel": providers.WireResponses, "anthropic": providers.WireAnthropic,
		"deepseek": providers.WireChat, "offline": providers.WireOffline, "some-proxy": providers.WireChat} {
		if got := WireOf(p); got != w {
			t.Errorf("WireOf(%q) = %q", p, got)
		}
	}
	for _, tc := range []struct {
		provider, base string
		want           bool
	}{
		{"openai", "", true},
		{"openai", "https://api.openai.com/v1/", true},
		{"openai", "https://proxy.example.com/v1", false},
		{"xai", "https://API.X.AI/v1", true},
		{"openresponses", "", false},
		{"vercel", "http://ai-gateway.vercel.sh/v1", false},
	} {
		if got := IsOfficialBaseURL(tc.provider, tc.base); got != tc.want {
			t.Errorf("IsOfficialBaseURL(%q, %q) = %v", tc.provider, tc.base, got)
		}
	}
}

func TestAPIKey(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": " sk-a \n", "MY_KEY": "k2"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	if k, e := APIKey("openai", "", lookup); k != "sk-a" || e != "OPENAI_API_KEY" {
		t.Errorf("default env: %q %q", k, e)
	}
	if k, e := APIKey("openai", "MY_KEY", lookup); k != "k2" || e != "MY_KEY" {
		t.Errorf("named env: %q %q", k, e)
	}
	if k, e := APIKey("anthropic", "", lookup); k != "" || e != "ANTHROPIC_API_KEY" {
		t.Errorf("unset: %q %q", k, e)
	}
	if k, e := APIKey("ollama", "", lookup); k != "" || e != "" {
		t.Errorf("keyless: %q %q", k, e)
	}
}

// TestOneRowPerFamily: a model family is one row of builtinModels and its
// vendor one row of the provider table: every family row belongs to a
// vendor whose row lists the family's id prefix, so a gateway serving the
// id without a vendor prefix, or with the vendor's name as one, finds the
// same row (window, cache pricing, price) as the vendor's own route.
func TestOneRowPerFamily(t *testing.T) {
	for _, e := range builtinModels {
		r, ok := routes[e.Provider]
		if !ok || !hasAnyPrefix(e.Model, r.models...) {
			t.Errorf("row %s/%s: its vendor's row does not list the family (models %v)", e.Provider, e.Model, r.models)
			continue
		}
		own, _ := LookupModel(e.Provider, e.Model)
		for _, id := range []string{e.Model, e.Provider + "/" + e.Model} {
			via, found := LookupModel("openrouter", id)
			if !found || via.ContextWindow != own.ContextWindow || via.Price != own.Price {
				t.Errorf("openrouter %s: %+v (found %v), want the row of %s/%s", id, via, found, e.Provider, e.Model)
			}
			if got, want := builtinCost("openrouter", id), builtinCost(e.Provider, e.Model); got != want {
				t.Errorf("openrouter %s: cache %+v, want the vendor's %+v", id, got, want)
			}
		}
	}
	for _, p := range []string{"google", "x-ai"} {
		if v := vendorNamed(p); v != CanonicalProvider(p) {
			t.Errorf("vendor prefix %q names %q, want %q", p, v, CanonicalProvider(p))
		}
	}
}
