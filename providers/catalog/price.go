package catalog

import "math"

// Price is a model's list price in US dollars per million tokens, as the
// provider publishes it, and the date it was read. The zero value means the
// price is unknown: a receipt then shows tokens and no cost, never a guess.
//
// Above TierTokens prompt tokens (input, cache reads and cache writes of one
// request together), a long-context tier bills every token of that request
// at TierInput × the input and cache prices and TierOutput × the output
// price; TierTokens 0 means the model has no such tier.
type Price struct {
	Input        float64 // uncached input
	CacheRead    float64 // cache hits and refreshes
	CacheWrite5m float64 // cache writes with the default 5-minute lifetime
	CacheWrite1h float64 // cache writes with a 1-hour lifetime
	Output       float64 // output, reasoning included
	TierTokens   int
	TierInput    float64
	TierOutput   float64
	// AsOf is the date (YYYY-MM-DD) the prices were read from the
	// provider's pricing page, or set in [[models]].
	AsOf string
}

// Known reports whether the price is set.
func (p Price) Known() bool { return p.Input > 0 || p.Output > 0 }

// Bill is one request's usage in disjoint kinds, as a provider bills it:
// uncached input, cache reads, cache writes (by lifetime), and output
// (reasoning is part of output; Reasoning says how much of it).
type Bill struct {
	Input        int `json:"input"`
	CacheRead    int `json:"cacheRead"`
	CacheWrite5m int `json:"cacheWrite5m"`
	CacheWrite1h int `json:"cacheWrite1h"`
	Output       int `json:"output"`
	Reasoning    int `json:"reasoning,omitempty"`
}

// Prompt is the request's whole prompt size: input, cache reads and writes.
func (b Bill) Prompt() int { return b.Input + b.CacheRead + b.CacheWrite5m + b.CacheWrite1h }

// Add returns the sum of b and o.
func (b Bill) Add(o Bill) Bill {
	return Bill{b.Input + o.Input, b.CacheRead + o.CacheRead, b.CacheWrite5m + o.CacheWrite5m,
		b.CacheWrite1h + o.CacheWrite1h, b.Output + o.Output, b.Reasoning + o.Reasoning}
}

// InTier reports whether a request whose prompt is prompt tokens is billed
// at the long-context tier.
func (p Price) InTier(prompt int) bool { return p.TierTokens > 0 && prompt > p.TierTokens }

// Cost returns what one request's bill costs in US dollars under p, the
// long-context tier applied when its prompt is over the tier's threshold.
// A price left at zero is the one it falls back on: a cache read or a
// 5-minute write without its own price costs the input price (a provider
// without a write premium), a 1-hour write the 5-minute one.
func (p Price) Cost(b Bill) float64 {
	in, out := 1.0, 1.0
	if p.InTier(b.Prompt()) {
		in, out = orOne(p.TierInput), orOne(p.TierOutput)
	}
	read := or(p.CacheRead, p.Input)
	w5m := or(p.CacheWrite5m, p.Input)
	w1h := or(p.CacheWrite1h, w5m)
	usd := in*(float64(b.Input)*p.Input+float64(b.CacheRead)*read+
		float64(b.CacheWrite5m)*w5m+float64(b.CacheWrite1h)*w1h) +
		out*float64(b.Output)*p.Output
	return usd / 1e6
}

func or(v, fallback float64) float64 {
	if v > 0 {
		return v
	}
	return fallback
}

func orOne(m float64) float64 { return or(m, 1) }

// RoundUSD rounds a dollar amount to a hundredth of a cent, the precision
// receipts show.
func RoundUSD(v float64) float64 { return math.Round(v*1e4) / 1e4 }

// withPrice returns p with the set fields of o replacing its own.
func (p Price) withPrice(o Price) Price {
	set := func(dst *float64, v float64) {
		if v > 0 {
			*dst = v
		}
	}
	set(&p.Input, o.Input)
	set(&p.CacheRead, o.CacheRead)
	set(&p.CacheWrite5m, o.CacheWrite5m)
	set(&p.CacheWrite1h, o.CacheWrite1h)
	set(&p.Output, o.Output)
	set(&p.TierInput, o.TierInput)
	set(&p.TierOutput, o.TierOutput)
	if o.TierTokens > 0 {
		p.TierTokens = o.TierTokens
	}
	if o.AsOf != "" {
		p.AsOf = o.AsOf
	}
	return p
}
