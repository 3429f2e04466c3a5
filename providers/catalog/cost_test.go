package catalog

import (
	"testing"
	"time"
)

// Cache pricing per route, and [[models]] overrides.
func TestCost(t *testing.T) {
	for _, tc := range []struct {
		provider, model string
		want            CacheCost
	}{
		{"anthropic", "claude-sonnet-4-5", CacheCost{0.1, 1.25, 5 * time.Minute}},
		{"openrouter", "anthropic/claude-opus-4.5", CacheCost{0.1, 1.25, 5 * time.Minute}},
		{"openai", "gpt-5.1-codex", CacheCost{0.1, 1, 5 * time.Minute}},
		{"openai", "gpt-4.1", CacheCost{0.25, 1, 5 * time.Minute}},
		{"openai", "gpt-4o", CacheCost{0.5, 1, 5 * time.Minute}},
		{"vercel", "openai/o3", CacheCost{0.25, 1, 5 * time.Minute}},
		{"xai", "grok-4", CacheCost{0.25, 1, 5 * time.Minute}},
		{"gemini", "gemini-2.5-pro", CacheCost{0.1, 1, 5 * time.Minute}},
		{"google", "gemini-3-pro-preview", CacheCost{0.1, 1, 5 * time.Minute}},
	} {
		if got := (*Catalog)(nil).Cost(tc.provider, tc.model); got != tc.want {
			t.Errorf("Cost(%s, %s) = %+v, want %+v", tc.provider, tc.model, got, tc.want)
		}
	}
	c := WithModels([]ModelInfo{
		{Provider: "anthropic", Model: "claude-sonnet-4-5", Cache: CacheCost{TTL: time.Hour}},
		{Provider: "ollama", Model: "qwen3", Cache: CacheCost{Read: 0.5, Write: 1.5}},
	})
	if got := c.Cost("anthropic", "claude-sonnet-4-5-20250929"); got != (CacheCost{0.1, 2, time.Hour}) {
		t.Errorf("1-hour TTL: %+v (the write premium of a 1-hour cache is 2×)", got)
	}
	if got := c.Cost("ollama", "qwen3"); got != (CacheCost{0.5, 1.5, 5 * time.Minute}) {
		t.Errorf("override: %+v", got)
	}
	if u := (CacheCost{0.1, 1.25, 0}).Units(1000, 900); u != 90+125 {
		t.Errorf("Units = %v", u)
	}
}
