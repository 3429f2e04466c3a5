package providers

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/vtcode/vtcode-ls/history"
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

// vendorFacts are what a vendor's models share unless their catalog row
// says otherwise: the cache pricing, and (by provider name) whether its
// usage reports input without the cached part. A vendor not listed bills
// cache reads at 0.1 with no write premium and a 5-minute lifetime.
var vendorFacts = map[string]struct {
	cache              CacheCost
	usageExcludesCache bool
}{
	"anthropic": {cache: CacheCost{Read: 0.1, Write: anthropicWrite5m, TTL: defaultCacheTTL}, usageExcludesCache: true},
	"xai":       {cache: CacheCost{Read: 0.25, Write: 1, TTL: defaultCacheTTL}},
	"minimax":   {cache: CacheCost{Read: 0.1, Write: 1, TTL: defaultCacheTTL}, usageExcludesCache: true},
}

var defaultCache = CacheCost{Read: 0.1, Write: 1, TTL: defaultCacheTTL}

// builtinCost is the built-in cache pricing of a route: an Anthropic-format
// route's, else the vendor's, with the model row's fields replacing them.
func builtinCost(provider, model string) CacheCost {
	vendor, m, _ := vendorOf(provider, model)
	if WireOf(provider) == WireAnthropic {
		vendor = "anthropic"
	}
	cc := defaultCache
	if f, ok := vendorFacts[vendor]; ok {
		cc = f.cache
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

// ReportedUsage is a response's usage as a client passes it on: in this
// protocol's camelCase shape (inputTokens, outputTokens, cacheReadTokens,
// cacheCreationTokens, iterations), or as the provider reported it:
// Anthropic's input_tokens, output_tokens, cache_read_input_tokens and
// cache_creation_input_tokens; OpenAI's input_tokens (or prompt_tokens),
// output_tokens (or completion_tokens), input_tokens_details.cached_tokens
// (or prompt_tokens_details.cached_tokens) and cache_write_tokens (top level
// or in the details). The 1-hour part of the cache writes is
// cacheCreation1hTokens or Anthropic's
// cache_creation.ephemeral_1h_input_tokens; the reasoning part of the output
// reasoningTokens or OpenAI's output_tokens_details.reasoning_tokens (or
// completion_tokens_details.reasoning_tokens). It decodes with
// encoding/json's own rules, so a decoding error names the field.
type ReportedUsage struct {
	InputTokens         *int              `json:"inputTokens,omitempty"`
	OutputTokens        *int              `json:"outputTokens,omitempty"`
	CacheReadTokens     *int              `json:"cacheReadTokens,omitempty"`
	CacheCreationTokens *int              `json:"cacheCreationTokens,omitempty"`
	CacheCreation1h     *int              `json:"cacheCreation1hTokens,omitempty"`
	ReasoningTokens     *int              `json:"reasoningTokens,omitempty"`
	Iterations          []json.RawMessage `json:"iterations,omitempty"`

	Input         *int          `json:"input_tokens,omitempty"`
	Output        *int          `json:"output_tokens,omitempty"`
	Prompt        *int          `json:"prompt_tokens,omitempty"`
	Completion    *int          `json:"completion_tokens,omitempty"`
	CacheRead     *int          `json:"cache_read_input_tokens,omitempty"`
	CacheCreation *int          `json:"cache_creation_input_tokens,omitempty"`
	CacheWrite    *int          `json:"cache_write_tokens,omitempty"`
	InputDetails  *usageDetails `json:"input_tokens_details,omitempty"`
	PromptDetails *usageDetails `json:"prompt_tokens_details,omitempty"`
	// Anthropic's split of the cache writes by lifetime, OpenAI's output details.
	CacheCreationSplit *struct {
		Ephemeral1h *int `json:"ephemeral_1h_input_tokens,omitempty"`
	} `json:"cache_creation,omitempty"`
	OutputDetails     *outputDetails `json:"output_tokens_details,omitempty"`
	CompletionDetails *outputDetails `json:"completion_tokens_details,omitempty"`
}

type usageDetails struct {
	Cached     *int `json:"cached_tokens,omitempty"`
	CacheWrite *int `json:"cache_write_tokens,omitempty"`
}

type outputDetails struct {
	Reasoning *int `json:"reasoning_tokens,omitempty"`
}

// Usage returns the counts in this protocol's shape; a camelCase field wins
// over a provider's name for the same count.
func (r *ReportedUsage) Usage() history.Usage {
	d := r.InputDetails
	if d == nil {
		d = r.PromptDetails
	}
	if d == nil {
		d = &usageDetails{}
	}
	var oneHour, reasoning *int
	if c := r.CacheCreationSplit; c != nil {
		oneHour = c.Ephemeral1h
	}
	for _, o := range []*outputDetails{r.OutputDetails, r.CompletionDetails} {
		if o != nil && reasoning == nil {
			reasoning = o.Reasoning
		}
	}
	return history.Usage{
		InputTokens:           firstCount(r.InputTokens, r.Input, r.Prompt),
		OutputTokens:          firstCount(r.OutputTokens, r.Output, r.Completion),
		CacheReadTokens:       firstCount(r.CacheReadTokens, r.CacheRead, d.Cached),
		CacheCreationTokens:   firstCount(r.CacheCreationTokens, r.CacheCreation, r.CacheWrite, d.CacheWrite),
		CacheCreation1hTokens: firstCount(r.CacheCreation1h, oneHour),
		ReasoningTokens:       firstCount(r.ReasoningTokens, reasoning),
		Iterations:            r.Iterations,
	}
}

func firstCount(ps ...*int) int {
	for _, p := range ps {
		if p != nil {
			return *p
		}
	}
	return 0
}
