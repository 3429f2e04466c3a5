package providers

import (
	"strings"
	"time"
)

// CacheCost is how a route bills its prompt cache, in units of one uncached
// input token: a cached prefix read costs Read per token, a prefix written
// to the cache costs Write per token (1 when the provider has no write
// premium), and a cached prefix lives TTL after its last use.
type CacheCost struct {
	Read  float64
	Write float64
	TTL   time.Duration
}

// Cost returns the cache pricing of model on provider: the built-in table
// (by vendor and model), with the fields a matching [[models]] entry sets
// (its Cache field) replacing those. Anthropic writes cost 1.25× with the
// default 5-minute TTL and 2× when a 1-hour TTL is configured.
func (c *Catalog) Cost(provider, model string) CacheCost {
	provider = CanonicalProvider(provider)
	cc := builtinCost(provider, model)
	if c == nil {
		return cc
	}
	for _, e := range c.extra {
		if (e.Provider != "" && e.Provider != provider) || !modelMatches(strings.ToLower(e.Model), strings.ToLower(strings.TrimSpace(model))) {
			continue
		}
		o := e.Cache
		if o.TTL > 0 {
			if o.Write == 0 && cc.Write == anthropicWrite5m && o.TTL >= time.Hour {
				cc.Write = anthropicWrite1h
			}
			cc.TTL = o.TTL
		}
		if o.Read > 0 {
			cc.Read = o.Read
		}
		if o.Write > 0 {
			cc.Write = o.Write
		}
		break
	}
	return cc
}

// Units returns the cost of one request of total input tokens whose first
// reused tokens are read from the cache and the rest written to it.
func (cc CacheCost) Units(total, reused int) float64 {
	reused = min(max(reused, 0), total)
	return float64(reused)*cc.Read + float64(total-reused)*cc.Write
}

const (
	anthropicWrite5m = 1.25
	anthropicWrite1h = 2.0
	defaultCacheTTL  = 5 * time.Minute
)

// costPrefixes are the cached-input multipliers of the vendors whose price
// depends on the model (longest prefix wins).
var costPrefixes = map[string][]struct {
	prefix string
	read   float64
}{
	"openai": {
		{"gpt-5", 0.1}, {"gpt-4.1", 0.25}, {"gpt-4o", 0.5}, {"o4", 0.25}, {"o3", 0.25}, {"o1", 0.5}, {"codex-mini", 0.25},
	},
	"gemini": {
		{"gemini-2", 0.25}, {"gemini-3", 0.1},
	},
}

// builtinCost is the built-in cache pricing of a route.
func builtinCost(provider, model string) CacheCost {
	m := strings.ToLower(strings.TrimSpace(model))
	vendor := provider
	if i := strings.IndexByte(m, '/'); i > 0 {
		if v, ok := vendorProviders[m[:i]]; ok {
			vendor, m = v, m[i+1:]
		}
	} else if gateways[provider] || endpoints[provider].wire == "" {
		if v := guessVendor(m); v != "" {
			vendor = v
		}
	}
	if WireOf(provider) == WireAnthropic || vendor == "anthropic" {
		return CacheCost{Read: 0.1, Write: anthropicWrite5m, TTL: defaultCacheTTL}
	}
	cc := CacheCost{Read: 0.1, Write: 1, TTL: defaultCacheTTL}
	switch vendor {
	case "xai":
		cc.Read = 0.25
	case "deepseek", "minimax":
		cc.Read = 0.1
	}
	best := -1
	for _, e := range costPrefixes[vendor] {
		if strings.HasPrefix(m, e.prefix) && len(e.prefix) > best {
			cc.Read, best = e.read, len(e.prefix)
		}
	}
	return cc
}
