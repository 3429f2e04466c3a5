package catalog

import (
	"math"
	"testing"
)

// List prices come from the model's catalog row; a model without one has
// no price (a receipt then shows tokens only), and [[models]] sets or
// corrects one.
func TestPrices(t *testing.T) {
	for _, tc := range []struct {
		provider, model string
		input, output   float64
		tier            int
	}{
		{"anthropic", "claude-sonnet-4-5-20250929", 3, 15, 200_000},
		{"anthropic", "claude-opus-4-8", 5, 25, 0},
		{"openrouter", "anthropic/claude-haiku-4.5", 1, 5, 0},
		{"openai", "gpt-5-codex", 1.25, 10, 0},
		{"openai", "gpt-4.1", 0, 0, 0},     // not verified: no price
		{"ollama", "qwen3", 0, 0, 0},       // unknown model
		{"minimax", "minimax-m2", 0, 0, 0}, // not verified
		{"gemini", "gemini-2.5-pro", 1.25, 10, 200_000},
		{"gemini", "gemini-2.5-flash", 0.3, 2.5, 0},
		{"gemini", "gemini-2.5-flash-lite", 0.1, 0.4, 0},
		{"gemini", "gemini-3-pro-preview", 2, 12, 200_000},
		{"gemini", "gemini-3.1-pro-preview", 2, 12, 200_000},
		{"gemini", "gemini-3-flash-preview", 0.5, 3, 0},
		{"openrouter", "google/gemini-2.5-flash", 0.3, 2.5, 0},
		{"gemini", "gemini-3.1-flash-lite-preview", 0, 0, 0}, // not verified
	} {
		mi, _ := LookupModel(tc.provider, tc.model)
		if mi.Price.Input != tc.input || mi.Price.Output != tc.output || mi.Price.TierTokens != tc.tier {
			t.Errorf("%s/%s: price %+v, want input %v output %v tier %d", tc.provider, tc.model, mi.Price, tc.input, tc.output, tc.tier)
		}
		if mi.Price.Known() != (tc.input > 0) || mi.Price.Known() && mi.Price.AsOf == "" {
			t.Errorf("%s/%s: known %v, as of %q", tc.provider, tc.model, mi.Price.Known(), mi.Price.AsOf)
		}
	}
	c := WithModels([]ModelInfo{{Provider: "ollama", Model: "qwen3", Price: Price{Input: 0.2, Output: 0.6, AsOf: "2026-11-30"}},
		{Provider: "anthropic", Model: "claude-sonnet-4-5", Price: Price{Output: 16}}})
	if mi, _ := c.Lookup("ollama", "qwen3"); mi.Price.Input != 0.2 || mi.Price.AsOf != "2026-11-30" {
		t.Errorf("[[models]] price: %+v", mi.Price)
	}
	if mi, _ := c.Lookup("anthropic", "claude-sonnet-4-5"); mi.Price.Output != 16 || mi.Price.Input != 3 || mi.Price.TierTokens != 200_000 {
		t.Errorf("[[models]] correcting one price keeps the others: %+v", mi.Price)
	}
}

// A bill's cost: each kind at its price, a missing cache price at the input
// price (no write premium), and the long-context tier on every token of a
// request over its threshold.
func TestPriceCost(t *testing.T) {
	p := Price{Input: 3, CacheRead: 0.3, CacheWrite5m: 3.75, CacheWrite1h: 6, Output: 15, TierTokens: 200_000, TierInput: 2, TierOutput: 1.5}
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	small := Bill{Input: 1000, CacheRead: 100_000, CacheWrite5m: 2000, CacheWrite1h: 1000, Output: 500}
	if got, want := p.Cost(small), (1000*3+100_000*0.3+2000*3.75+1000*6+500*15)/1e6; !near(got, want) {
		t.Errorf("under the tier: %v, want %v", got, want)
	}
	big := Bill{Input: 1000, CacheRead: 200_000, Output: 500}
	if !p.InTier(big.Prompt()) || p.InTier(200_000) {
		t.Error("the tier starts above its threshold")
	}
	if got, want := p.Cost(big), (2*(1000*3+200_000*0.3)+1.5*500*15)/1e6; !near(got, want) {
		t.Errorf("over the tier: %v, want %v", got, want)
	}
	openai := Price{Input: 1.25, CacheRead: 0.125, Output: 10}
	if got, want := openai.Cost(Bill{CacheWrite5m: 1000, CacheWrite1h: 1000}), 2000*1.25/1e6; !near(got, want) {
		t.Errorf("writes without a write price: %v, want the input price %v", got, want)
	}
}
