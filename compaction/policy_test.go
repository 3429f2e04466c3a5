package compaction

import (
	"testing"

	"github.com/vtcode/vtcode-ls/config"
	"github.com/vtcode/vtcode-ls/providers"
)

// A session whose policy leaves the route policy and the threshold ratio
// unconfigured compacts as a caller that leaves the options zero.
func TestPolicyDefaultsAreTheEngines(t *testing.T) {
	pol := config.Default()
	rp := RoutePolicy{ThresholdRatio: pol.RoutePolicy.ThresholdRatio, RetainRatio: pol.RoutePolicy.RetainRatio,
		MaxOverflowRetries: pol.RoutePolicy.MaxOverflowRetries}
	if rp != DefaultRoutePolicy() {
		t.Errorf("config's route policy %+v, the engine's %+v", rp, DefaultRoutePolicy())
	}
	if got, want := Readiness(32768, 4096, 0, pol.AutoCompaction.ThresholdRatio, rp), Readiness(32768, 4096, 0, 0, RoutePolicy{}); got != want {
		t.Errorf("thresholds under config's ratio %+v, under the engine's default %+v", got, want)
	}
}

func TestReadiness(t *testing.T) {
	def := DefaultRoutePolicy()
	tests := []struct {
		name                        string
		capacity, reserved, explict int
		ratio                       float64
		rp                          RoutePolicy
		want                        Thresholds
	}{
		// 128,000 − 4,096 = 123,904; × 0.75 = 92,928; soft 92,928 − 9,292 = 83,636.
		{"ratio", 128000, 4096, 0, 0.75, def, Thresholds{123904, 92928, 83636}},
		// 123,904 × 0.75 × 0.8 = 74,342.4 → 74,342; soft 74,342 − 7,434 = 66,908.
		{"route ratio 0.8", 128000, 4096, 0, 0.75, RoutePolicy{ThresholdRatio: 0.8}, Thresholds{123904, 74342, 66908}},
		// A route ratio above 1 never delays compaction.
		{"route ratio 1.5", 128000, 4096, 0, 0.75, RoutePolicy{ThresholdRatio: 1.5}, Thresholds{123904, 92928, 83636}},
		// 32,768 − 4,096 = 28,672; × 0.75 = 21,504; soft 21,504 − 2,150 = 19,354.
		{"32k", 32768, 4096, 0, 0.75, def, Thresholds{28672, 21504, 19354}},
		// ratio 0 means the default 0.75.
		{"default ratio", 32768, 4096, 0, 0, def, Thresholds{28672, 21504, 19354}},
		// Explicit thresholds are capped at effective.
		{"explicit capped", 128000, 4096, 200000, 0.75, def, Thresholds{123904, 123904, 111514}},
		{"explicit", 128000, 4096, 50000, 0.75, def, Thresholds{123904, 50000, 45000}},
		// 200,000 × 0.9 (ratio) = 180,000; soft 162,000.
		{"200k ratio 0.9", 200000, 0, 0, 0.9, def, Thresholds{200000, 180000, 162000}},
		// Unknown capacity: only an explicit threshold is known.
		{"unknown", 0, 4096, 0, 0.75, def, Thresholds{}},
		{"unknown explicit", 0, 4096, 30000, 0.75, def, Thresholds{0, 30000, 27000}},
		// Reserve larger than the window: effective 0, threshold at least 1.
		{"reserve exceeds", 4000, 4096, 0, 0.75, def, Thresholds{0, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Readiness(tt.capacity, tt.reserved, tt.explict, tt.ratio, tt.rp)
			if got != tt.want {
				t.Errorf("Readiness(%d, %d, %d, %v, %+v) = %+v, want %+v", tt.capacity, tt.reserved, tt.explict, tt.ratio, tt.rp, got, tt.want)
			}
		})
	}
}

func TestBudgetFormulas(t *testing.T) {
	t.Run("SummaryBudget", func(t *testing.T) {
		tests := []struct{ capacity, prefix, out, want int }{
			// 32,768 − (4,096 + 512) − 2,000 − 1,000 = 25,160.
			{32768, 2000, 1000, 25160},
			// 32,768 − 4,608 = 28,160 (headroom floor(capacity/8) + 512, docs/design.md §8.5).
			{32768, 0, 0, 28160},
			// 200,000 − 25,000 − 512 = 174,488 (the same headroom).
			{200000, 0, 0, 174488},
			// 128,000 − 16,512 − 3,000 − 4,096 = 104,392.
			{128000, 3000, 4096, 104392},
			// 1,000 − 125 − 512 = 363; a larger prefix saturates at 0.
			{1000, 0, 0, 363},
			{1000, 500, 0, 0},
			{0, 0, 0, 0},
		}
		for _, tt := range tests {
			if got := SummaryBudget(tt.capacity, tt.prefix, tt.out); got != tt.want {
				t.Errorf("SummaryBudget(%d, %d, %d) = %d, want %d", tt.capacity, tt.prefix, tt.out, got, tt.want)
			}
		}
	})
	t.Run("TailBudget", func(t *testing.T) {
		tests := []struct {
			window int
			ratio  float64
			want   int
		}{
			{32768, 0.16, 5242},   // 5,242.88
			{100000, 0.16, 16000}, // 16,000
			{125000, 0.16, 20000}, // exactly the cap
			{200000, 0.16, 20000}, // capped
			{0, 0.16, 20000},      // unknown window
			{32768, 0, 0},         // no tail
		}
		for _, tt := range tests {
			if got := TailBudget(tt.window, tt.ratio); got != tt.want {
				t.Errorf("TailBudget(%d, %v) = %d, want %d", tt.window, tt.ratio, got, tt.want)
			}
		}
	})
	t.Run("WindowBound", func(t *testing.T) {
		tests := []struct{ window, reserved, prefix, want int }{
			{32768, 4096, 0, 28160},    // min(28,160, 28,672)
			{32768, 4096, 2000, 26160}, // − prefix
			{16000, 4096, 0, 11904},    // min(13,488, 11,904)
			{0, 4096, 0, 0},            // unbounded
		}
		for _, tt := range tests {
			if got := WindowBound(tt.window, tt.reserved, tt.prefix); got != tt.want {
				t.Errorf("WindowBound(%d, %d, %d) = %d, want %d", tt.window, tt.reserved, tt.prefix, got, tt.want)
			}
		}
	})
	if got := Headroom(32768); got != 4608 {
		t.Errorf("Headroom(32768) = %d, want 4,608", got)
	}
}

func TestResolveRoutePolicy(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	i := func(v int) *int { return &v }
	overrides := []RouteOverride{
		{Provider: "openrouter", Model: "deepseek", ThresholdRatio: f(0.8)},
		{Provider: "openrouter", RetainRatio: f(0.1), MaxOverflowRetries: i(3)},
		{Model: "tiny", MaxOverflowRetries: i(0)},
	}
	base := DefaultRoutePolicy()
	tests := []struct {
		route providers.Route
		want  RoutePolicy
	}{
		{providers.Route{Provider: "openrouter", Model: "deepseek/deepseek-chat"}, RoutePolicy{0.8, 0.16, 1}}, // first match wins alone
		{providers.Route{Provider: "OpenRouter", Model: "qwen/qwen3"}, RoutePolicy{1, 0.1, 3}},
		{providers.Route{Provider: "ollama", Model: "TinyLlama"}, RoutePolicy{1, 0.16, 0}},
		{providers.Route{Provider: "openai", Model: "gpt-5"}, base},
	}
	for _, tt := range tests {
		if got := ResolveRoutePolicy(tt.route, overrides, base); got != tt.want {
			t.Errorf("ResolveRoutePolicy(%+v) = %+v, want %+v", tt.route, got, tt.want)
		}
	}
	if got := ResolveRoutePolicy(providers.Route{Provider: "x"}, nil, base); got != base {
		t.Errorf("empty table changed the policy: %+v", got)
	}
}

func TestStrategyFor(t *testing.T) {
	tests := []struct {
		r    providers.Route
		want Strategy
	}{
		// openai: Responses models on the official host.
		{providers.Route{Provider: "openai", Model: "gpt-5"}, NativeStandalone},
		{providers.Route{Provider: "openai", Model: "gpt-4.1-mini", BaseURL: "https://api.openai.com/v1"}, NativeStandalone},
		{providers.Route{Provider: "openai", Model: "o4-mini", BaseURL: "api.openai.com"}, NativeStandalone},
		{providers.Route{Provider: "openai", Model: "gpt-5", BaseURL: "https://proxy.example.com/v1"}, Local},
		{providers.Route{Provider: "openai", Model: "gpt-4o-realtime-preview"}, Local},
		{providers.Route{Provider: "openai", Model: "gpt-3.5-turbo"}, Local},
		// openresponses: always native.
		{providers.Route{Provider: "openresponses", Model: "anything", BaseURL: "http://localhost:8080"}, NativeStandalone},
		// vercel: openai/ models only.
		{providers.Route{Provider: "vercel", Model: "openai/gpt-5"}, NativeStandalone},
		{providers.Route{Provider: "vercel", Model: "anthropic/claude-sonnet-4-6"}, Local},
		// xai: allowlisted Grok models on api.x.ai.
		{providers.Route{Provider: "xai", Model: "grok-4"}, NativeStandalone},
		{providers.Route{Provider: "xai", Model: "grok-4-fast-reasoning", BaseURL: "https://api.x.ai/v1"}, NativeStandalone},
		{providers.Route{Provider: "xai", Model: "grok-code-fast-1"}, NativeStandalone},
		{providers.Route{Provider: "xai", Model: "grok-3"}, Local},
		{providers.Route{Provider: "xai", Model: "grok-4", BaseURL: "https://gateway.example.com"}, Local},
		// anthropic: Opus 4.x, Sonnet 4.6+, and newer.
		{providers.Route{Provider: "anthropic", Model: "claude-opus-4-1"}, NativeInline},
		{providers.Route{Provider: "anthropic", Model: "claude-opus-4-20250514"}, NativeInline},
		{providers.Route{Provider: "anthropic", Model: "claude-opus-4.8"}, NativeInline},
		{providers.Route{Provider: "anthropic", Model: "claude-sonnet-4-6"}, NativeInline},
		{providers.Route{Provider: "anthropic", Model: "claude-sonnet-4-7-20261001"}, NativeInline},
		{providers.Route{Provider: "anthropic", Model: "claude-opus-5"}, NativeInline},
		{providers.Route{Provider: "anthropic", Model: "claude-sonnet-5"}, NativeInline},
		{providers.Route{Provider: "anthropic", Model: "claude-fable-5"}, NativeInline},
		{providers.Route{Provider: "anthropic", Model: "claude-sonnet-4-5"}, Local},
		{providers.Route{Provider: "anthropic", Model: "claude-sonnet-4-20250514"}, Local},
		{providers.Route{Provider: "anthropic", Model: "claude-3-7-sonnet-latest"}, Local},
		{providers.Route{Provider: "anthropic", Model: "claude-haiku-4-5"}, Local},
		// everything else.
		{providers.Route{Provider: "openrouter", Model: "openai/gpt-5"}, Local},
		{providers.Route{Provider: "gemini", Model: "gemini-2.5-pro"}, Local},
		{providers.Route{Provider: "deepseek", Model: "deepseek-chat"}, Local},
		{providers.Route{Provider: "minimax", Model: "MiniMax-M2"}, Local},
		{providers.Route{Provider: "merge", Model: "gpt-5"}, Local},
		{providers.Route{Provider: "ollama", Model: "qwen3-coder"}, Local},
		{providers.Route{Provider: "offline", Model: ""}, Local},
		// native_compaction overrides.
		{providers.Route{Provider: "openrouter", Model: "x", NativeCompaction: "always"}, NativeStandalone},
		{providers.Route{Provider: "openai", Model: "gpt-5", BaseURL: "https://proxy.example.com", NativeCompaction: "always"}, NativeStandalone},
		{providers.Route{Provider: "anthropic", Model: "claude-3-haiku", NativeCompaction: "always"}, NativeInline},
		{providers.Route{Provider: "openai", Model: "gpt-5", NativeCompaction: "never"}, Local},
		{providers.Route{Provider: "anthropic", Model: "claude-opus-4-1", NativeCompaction: "never"}, Local},
		{providers.Route{Provider: "OpenAI", Model: "GPT-5", NativeCompaction: "auto"}, NativeStandalone},
	}
	for _, tt := range tests {
		if got := StrategyFor(tt.r); got != tt.want {
			t.Errorf("StrategyFor(%+v) = %s, want %s", tt.r, got, tt.want)
		}
	}
}
