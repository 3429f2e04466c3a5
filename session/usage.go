package session

import (
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/catalog"
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

// apply applies an event's usage: the answer's, read under route r with
// the prices of cat, and a compaction's new low-reuse streak.
func (u *usageState) apply(c *change, cat *catalog.Catalog, r route) {
	if c.usage != nil {
		mi, _ := cat.Lookup(r.Provider, r.Model)
		u.record(*c.usage, mi.UsageExcludesCache, c.estimate)
	}
	if c.boundary != nil {
		u.compacted()
	}
}

// record folds one response's usage in.
//
// Input is normalized to the total prompt size: routes that report input
// exclusive of cached tokens (excludesCache, from the catalog:
// Anthropic-format routes and MiniMax), and any usage with iterations or
// whose cached part exceeds its input, get input + cacheRead +
// cacheCreation. With Anthropic usage iterations the
// context size after the response (the last reported input, and the hit
// rate) is the last message iteration's, while the cumulative counts add
// every billed iteration (see [providers.AnthropicIterations]). The hit
// rate is cacheRead / input. A response after the first whose hit rate is
// under 0.5 extends the low-reuse streak; one at or over 0.5 ends it.
func (u *usageState) record(us history.Usage, excludesCache bool, estimate int) {
	exclusive := excludesCache
	last, billed := us, us
	if b, c, ok := providers.AnthropicIterations(us.Iterations); ok {
		last, billed, exclusive = c, b, true
	}
	in, read := total(last, exclusive), last.CacheReadTokens
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
	u.cache.CumulativeInputTokens += total(billed, exclusive)
	u.cache.CumulativeCacheReadTokens += billed.CacheReadTokens
}

// total is the whole prompt size of a usage: input alone when it includes
// the cached part, else input plus cache reads and writes.
func total(us history.Usage, exclusive bool) int {
	in, read, create := us.InputTokens, us.CacheReadTokens, us.CacheCreationTokens
	if exclusive || read+create > in {
		in += read + create
	}
	return in
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

// ReportedUsage is a usage as a client passes it to recordResponse: this
// protocol's shape or the provider's own names (providers.ReportedUsage).
type ReportedUsage = providers.ReportedUsage
