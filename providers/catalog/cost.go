package catalog

import (
	"strings"
	"time"

	"github.com/vtcode/vtcode-ls/providers"
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

// defaultCache is the cache pricing of a vendor whose row in [routes] sets
// none: reads at 0.1, no write premium, a 5-minute lifetime.
var defaultCache = CacheCost{Read: 0.1, Write: 1, TTL: defaultCacheTTL}

// builtinCost is the built-in cache pricing of a route: an Anthropic-format
// route's, else the vendor's, with the model row's fields replacing them.
func builtinCost(provider, model string) CacheCost {
	vendor, m, _ := vendorOf(provider, model)
	if WireOf(provider) == providers.WireAnthropic {
		vendor = "anthropic"
	}
	cc := defaultCache
	if r := routes[vendor]; r.cache != (CacheCost{}) {
		cc = r.cache
	}
	if row := builtinRow(vendor, m); row != nil {
		if row.Cache.Read > 0 {
			cc.Read = row.Cache.Read
		}
		if row.Cache.Write > 0 {
			cc.Write = row.Cache.Write
		}
		if row.Cache.TTL > 0 {
			cc.TTL = row.Cache.TTL
		}
	}
	return cc
}
