package session

import (
	"encoding/json"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
)

// lowReuse is the cache hit rate under which a response extends the
// low-reuse streak.
const lowReuse = 0.5

// usageState accumulates the provider usage reported by recordResponse.
type usageState struct {
	responses int // responses that carried usage
	lastInput int // normalized input tokens of the last one
	estimate  int // the local estimate of the request it answered, 0 if unknown
	cache     CacheStats
}

// record folds one response's usage in.
//
// Input is normalized to the total prompt size: providers that report input
// exclusive of cached tokens (Anthropic-format routes and MiniMax, or any
// usage with iterations or whose cached part exceeds its input) get
// input + cacheRead + cacheCreation. The hit rate is cacheRead / input. A
// response after the first whose hit rate is under 0.5 extends the low-reuse
// streak; one at or over 0.5 ends it.
func (u *usageState) record(us history.Usage, provider string, estimate int) {
	in, read, create, exclusive := us.InputTokens, us.CacheReadTokens, us.CacheCreationTokens, false
	if it, ok := sumIterations(us.Iterations); ok {
		in, read, create, exclusive = it.InputTokens, it.CacheReadTokens, it.CacheCreationTokens, true
	}
	name := providers.CanonicalProvider(provider)
	if exclusive || providers.WireOf(name) == providers.WireAnthropic || name == "minimax" || read+create > in {
		in += read + create
	}
	rate := 0.0
	if in > 0 {
		rate = min(1, float64(read)/float64(in))
	}
	if u.responses > 0 {
		if rate < lowReuse {
			u.cache.LowReuseStreak++
		} else {
			u.cache.LowReuseStreak = 0
		}
	}
	u.responses++
	u.lastInput = in
	u.estimate = estimate
	u.cache.LastHitRate = rate
	u.cache.CumulativeInputTokens += in
	u.cache.CumulativeCacheReadTokens += read
}

// compacted starts a new low-reuse streak after a successful compaction;
// cumulative totals stay.
func (u *usageState) compacted() { u.cache.LowReuseStreak = 0 }

// stats fills the usage fields of st.
func (u *usageState) stats(st *Stats) {
	if u.responses == 0 {
		return
	}
	last := u.lastInput
	st.LastReportedInputTokens = &last
	if u.estimate > 0 {
		est, diff := u.estimate, last-u.estimate
		st.LastRequestEstimate, st.ReportedDifference = &est, &diff
	}
	c := u.cache
	st.Cache = &c
}

// recognizedIterations are the Anthropic usage iteration types that are
// summed (SPEC §8.4).
var recognizedIterations = map[string]bool{
	"message": true, "fallback_message": true, "advisor_message": true, "compaction": true,
}

// sumIterations sums the recognized iterations of an Anthropic usage; ok is
// false when there is none, and top-level usage applies.
func sumIterations(its []json.RawMessage) (sum history.Usage, ok bool) {
	for _, raw := range its {
		var it struct {
			Type string `json:"type"`
			// Anthropic's names, and this protocol's camelCase ones.
			Input          *int `json:"input_tokens"`
			Output         *int `json:"output_tokens"`
			CacheRead      *int `json:"cache_read_input_tokens"`
			CacheCreate    *int `json:"cache_creation_input_tokens"`
			InputC         *int `json:"inputTokens"`
			OutputC        *int `json:"outputTokens"`
			CacheReadC     *int `json:"cacheReadTokens"`
			CacheCreationC *int `json:"cacheCreationTokens"`
		}
		if json.Unmarshal(raw, &it) != nil || !recognizedIterations[it.Type] {
			continue
		}
		ok = true
		sum.InputTokens += first(it.Input, it.InputC)
		sum.OutputTokens += first(it.Output, it.OutputC)
		sum.CacheReadTokens += first(it.CacheRead, it.CacheReadC)
		sum.CacheCreationTokens += first(it.CacheCreate, it.CacheCreationC)
	}
	return sum, ok
}

func first(ps ...*int) int {
	for _, p := range ps {
		if p != nil {
			return *p
		}
	}
	return 0
}

// ReportedUsage is a usage as a client passes it to recordResponse: this
// protocol's shape or the provider's own names (providers.ReportedUsage).
type ReportedUsage = providers.ReportedUsage
