package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/vtcode/vtcode-ls/clearing"
	"github.com/vtcode/vtcode-ls/compaction/routepolicy"
)

// Policy is the run-time adjustable part of the configuration. Its JSON form
// is the policy object of docs/design.md §10.
type Policy struct {
	AutoCompaction     AutoCompaction     `json:"autoCompaction"`
	ToolResultClearing ToolResultClearing `json:"toolResultClearing"`
	Context            ContextPolicy      `json:"context"`
	RoutePolicy        RoutePolicy        `json:"routePolicy"`
}

// AutoCompaction controls automatic compaction (agent.harness.*).
type AutoCompaction struct {
	// Enabled: compact automatically when the threshold is reached.
	Enabled bool `json:"enabled"`
	// ThresholdTokens is an absolute threshold; 0 derives it from capacity.
	ThresholdTokens int `json:"thresholdTokens"`
	// ThresholdRatio is the fraction of the effective window that triggers
	// compaction, in (0, 1].
	ThresholdRatio float64 `json:"thresholdRatio"`
	// CompactOnModelSwitch compacts when a switch lands on a smaller window.
	CompactOnModelSwitch bool `json:"compactOnModelSwitch"`
	// Mode is "auto" (compact at the threshold) or "ask" (at the soft
	// threshold prepare a preview and propose it; until the user answers,
	// requests go on with clearing only; at the hard limit compact anyway).
	Mode string `json:"mode"`
}

// ToolResultClearing controls local clearing of old tool results
// (agent.harness.tool_result_clearing.*).
type ToolResultClearing struct {
	Enabled               bool `json:"enabled"`
	TriggerTokens         int  `json:"triggerTokens"`
	KeepToolUses          int  `json:"keepToolUses"`
	KeepRecentToolBatches int  `json:"keepRecentToolBatches"`
	ClearToolInputs       bool `json:"clearToolInputs"`
	// ClearAtLeastTokens is the smallest step in which results above the
	// protected floor are cleared (Anthropic's clear_at_least); 0 clears
	// them on every request.
	ClearAtLeastTokens int `json:"clearAtLeastTokens"`
	// CacheAware clears freely when the provider's prompt cache has expired
	// (the previous request is older than the route's cache TTL).
	CacheAware bool `json:"cacheAware"`
}

// ContextPolicy sets the context limits (context.*).
type ContextPolicy struct {
	// MaxContextTokens is a session ceiling; 0 follows the model's window.
	MaxContextTokens     int `json:"maxContextTokens"`
	ReservedOutputTokens int `json:"reservedOutputTokens"`
	// TrimToPercent is the last-rung trim target, 1 to 100.
	TrimToPercent       int `json:"trimToPercent"`
	PreserveRecentTurns int `json:"preserveRecentTurns"`
	// Tokenizer is "o200k" or "approx".
	Tokenizer string `json:"tokenizer"`
	// StayBelowPriceTier keeps every request under the model's long-context
	// price tier when its window is larger (the catalog's tier threshold
	// caps the window the projection fits in).
	StayBelowPriceTier bool `json:"stayBelowPriceTier"`
}

// RoutePolicy is the base route policy (compaction.route_policy.*).
type RoutePolicy struct {
	// ThresholdRatio scales the compaction threshold, in (0, 1].
	ThresholdRatio float64 `json:"thresholdRatio"`
	// RetainRatio sizes the continuity tail, in [0, 1].
	RetainRatio        float64 `json:"retainRatio"`
	MaxOverflowRetries int     `json:"maxOverflowRetries"`
}

// Default returns the built-in policy of docs/design.md §12.
func Default() Policy {
	// The engine's packages own their defaults; the policy reads them, so
	// a zero field left to a package and an unconfigured key agree.
	cl := clearing.DefaultPolicy()
	return Policy{
		AutoCompaction: AutoCompaction{
			Enabled:              true,
			ThresholdTokens:      0,
			ThresholdRatio:       routepolicy.ThresholdRatio,
			CompactOnModelSwitch: true,
			Mode:                 "auto",
		},
		ToolResultClearing: ToolResultClearing{
			Enabled:               cl.Enabled,
			TriggerTokens:         cl.TriggerTokens,
			KeepToolUses:          cl.KeepToolUses,
			KeepRecentToolBatches: cl.KeepRecentToolBatches,
			ClearToolInputs:       cl.ClearToolInputs,
			ClearAtLeastTokens:    cl.ClearAtLeastTokens,
			CacheAware:            cl.CacheAware,
		},
		Context: ContextPolicy{
			MaxContextTokens:     0,
			ReservedOutputTokens: 4096,
			TrimToPercent:        60,
			PreserveRecentTurns:  6,
			Tokenizer:            "o200k",
			StayBelowPriceTier:   true,
		},
		RoutePolicy: RoutePolicy{
			ThresholdRatio:     routepolicy.RouteThreshold,
			RetainRatio:        routepolicy.RetainRatio,
			MaxOverflowRetries: routepolicy.MaxOverflowRetries,
		},
	}
}

// FieldError reports a rejected policy field. Path is the JSON path of the
// field, starting with "policy.".
type FieldError struct {
	Path string // e.g. "policy.toolResultClearing.keepToolUses"
	Msg  string // e.g. "must be >= 0"
}

// Error reads "<path>: <msg>", e.g. "policy.context.trimToPercent: must be between 1 and 100".
func (e *FieldError) Error() string { return e.Path + ": " + e.Msg }

// A rule says which values a setting accepts. convert turns a decoded JSON or
// TOML value (bool, int64, float64, string, or anything else) into the Go
// value of the setting (bool, int, float64 or string), or explains why not.
type rule struct {
	kind  byte               // 'b' bool, 'i' int, 'f' float, 's' string
	check func(v any) string // range check on the converted value; nil: none
	what  string             // message for a value of the wrong type; "" = by kind
	enum  []string           // allowed strings (kind 's')
}

var (
	ruleBool     = rule{kind: 'b'}
	ruleString   = rule{kind: 's'}
	ruleNonNeg   = rule{kind: 'i', check: func(v any) string { return msgIf(v.(int) < 0, "must be >= 0") }}
	rulePositive = rule{kind: 'i', check: func(v any) string { return msgIf(v.(int) <= 0, "must be > 0") }}
	rulePercent  = rule{kind: 'i', check: func(v any) string {
		return msgIf(v.(int) < 1 || v.(int) > 100, "must be between 1 and 100")
	}}
	// ruleRatio accepts (0, 1]; NaN fails every comparison and is rejected.
	ruleRatio = rule{kind: 'f', check: func(v any) string {
		f := v.(float64)
		return msgIf(!(f > 0 && f <= 1), "must be > 0 and <= 1")
	}}
	ruleUnit = rule{kind: 'f', check: func(v any) string {
		f := v.(float64)
		return msgIf(!(f >= 0 && f <= 1), "must be between 0 and 1")
	}}
	// ruleMultiplier is a price relative to an uncached input token, in (0, 10].
	ruleMultiplier = rule{kind: 'f', check: func(v any) string {
		f := v.(float64)
		return msgIf(!(f > 0 && f <= 10), "must be > 0 and <= 10")
	}}
	// rulePrice is a list price in US dollars per million tokens, in (0, 10000].
	rulePrice = rule{kind: 'f', check: func(v any) string {
		f := v.(float64)
		return msgIf(!(f > 0 && f <= 10000), "must be > 0 and <= 10000 (US dollars per million tokens)")
	}}
	ruleTokenizer = rule{kind: 's', enum: []string{"o200k", "approx"}, what: `must be "o200k" or "approx"`}
	ruleNative    = rule{kind: 's', enum: []string{"auto", "always", "never"}, what: `must be "auto", "always" or "never"`}
	// ruleCompactionMode is agent.harness.auto_compaction_mode.
	ruleCompactionMode = rule{kind: 's', enum: []string{"auto", "ask"}, what: `must be "auto" or "ask"`}
)

func msgIf(bad bool, msg string) string {
	if bad {
		return msg
	}
	return ""
}

// convert checks v against the rule; msg is empty on success.
func (r rule) convert(v any) (out any, msg string) {
	wrong := r.what
	if wrong == "" {
		wrong = map[byte]string{'b': "must be a boolean", 'i': "must be an integer", 'f': "must be a number", 's': "must be a string"}[r.kind]
	}
	switch r.kind {
	case 'b':
		b, ok := v.(bool)
		if !ok {
			return nil, wrong
		}
		out = b
	case 'i':
		switch n := v.(type) {
		case int64:
			if n < math.MinInt || n > math.MaxInt {
				return nil, "is out of range"
			}
			out = int(n)
		case float64:
			if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
				return nil, wrong
			}
			out = int(n)
		default:
			return nil, wrong
		}
	case 'f':
		switch n := v.(type) {
		case int64:
			out = float64(n)
		case float64:
			out = n
		default:
			return nil, wrong
		}
	case 's':
		s, ok := v.(string)
		if !ok {
			return nil, wrong
		}
		if r.enum != nil {
			ok = false
			for _, e := range r.enum {
				ok = ok || s == e
			}
			if !ok {
				return nil, wrong
			}
		}
		out = s
	}
	if r.check != nil {
		if msg := r.check(out); msg != "" {
			return nil, msg
		}
	}
	return out, ""
}

// policyField ties one policy setting to its JSON path, its TOML key and its rule.
type policyField struct {
	section, name string // JSON: policy.<section>.<name>
	toml          string // full TOML key
	rule          rule
	ptr           func(*Policy) any // *bool, *int, *float64 or *string
}

var policyFields = []policyField{
	{"autoCompaction", "enabled", "agent.harness.auto_compaction_enabled", ruleBool, func(p *Policy) any { return &p.AutoCompaction.Enabled }},
	{"autoCompaction", "thresholdTokens", "agent.harness.auto_compaction_threshold_tokens", ruleNonNeg, func(p *Policy) any { return &p.AutoCompaction.ThresholdTokens }},
	{"autoCompaction", "thresholdRatio", "agent.harness.auto_compaction_threshold_ratio", ruleRatio, func(p *Policy) any { return &p.AutoCompaction.ThresholdRatio }},
	{"autoCompaction", "compactOnModelSwitch", "agent.harness.compact_on_model_switch", ruleBool, func(p *Policy) any { return &p.AutoCompaction.CompactOnModelSwitch }},
	{"autoCompaction", "mode", "agent.harness.auto_compaction_mode", ruleCompactionMode, func(p *Policy) any { return &p.AutoCompaction.Mode }},

	{"toolResultClearing", "enabled", "agent.harness.tool_result_clearing.enabled", ruleBool, func(p *Policy) any { return &p.ToolResultClearing.Enabled }},
	{"toolResultClearing", "triggerTokens", "agent.harness.tool_result_clearing.trigger_tokens", ruleNonNeg, func(p *Policy) any { return &p.ToolResultClearing.TriggerTokens }},
	{"toolResultClearing", "keepToolUses", "agent.harness.tool_result_clearing.keep_tool_uses", ruleNonNeg, func(p *Policy) any { return &p.ToolResultClearing.KeepToolUses }},
	{"toolResultClearing", "keepRecentToolBatches", "agent.harness.tool_result_clearing.keep_recent_tool_batches", ruleNonNeg, func(p *Policy) any { return &p.ToolResultClearing.KeepRecentToolBatches }},
	{"toolResultClearing", "clearToolInputs", "agent.harness.tool_result_clearing.clear_tool_inputs", ruleBool, func(p *Policy) any { return &p.ToolResultClearing.ClearToolInputs }},
	{"toolResultClearing", "clearAtLeastTokens", "agent.harness.tool_result_clearing.clear_at_least_tokens", ruleNonNeg, func(p *Policy) any { return &p.ToolResultClearing.ClearAtLeastTokens }},
	{"toolResultClearing", "cacheAware", "agent.harness.tool_result_clearing.cache_aware", ruleBool, func(p *Policy) any { return &p.ToolResultClearing.CacheAware }},

	{"context", "maxContextTokens", "context.max_context_tokens", ruleNonNeg, func(p *Policy) any { return &p.Context.MaxContextTokens }},
	{"context", "reservedOutputTokens", "context.reserved_output_tokens", ruleNonNeg, func(p *Policy) any { return &p.Context.ReservedOutputTokens }},
	{"context", "trimToPercent", "context.trim_to_percent", rulePercent, func(p *Policy) any { return &p.Context.TrimToPercent }},
	{"context", "preserveRecentTurns", "context.preserve_recent_turns", ruleNonNeg, func(p *Policy) any { return &p.Context.PreserveRecentTurns }},
	{"context", "tokenizer", "context.tokenizer", ruleTokenizer, func(p *Policy) any { return &p.Context.Tokenizer }},
	{"context", "stayBelowPriceTier", "context.stay_below_price_tier", ruleBool, func(p *Policy) any { return &p.Context.StayBelowPriceTier }},

	{"routePolicy", "thresholdRatio", "compaction.route_policy.threshold_ratio", ruleRatio, func(p *Policy) any { return &p.RoutePolicy.ThresholdRatio }},
	{"routePolicy", "retainRatio", "compaction.route_policy.retain_ratio", ruleUnit, func(p *Policy) any { return &p.RoutePolicy.RetainRatio }},
	{"routePolicy", "maxOverflowRetries", "compaction.route_policy.max_overflow_retries", ruleNonNeg, func(p *Policy) any { return &p.RoutePolicy.MaxOverflowRetries }},
}

// set stores a converted value through the field's pointer.
func (f *policyField) set(p *Policy, v any) {
	switch ptr := f.ptr(p).(type) {
	case *bool:
		*ptr = v.(bool)
	case *int:
		*ptr = v.(int)
	case *float64:
		*ptr = v.(float64)
	case *string:
		*ptr = v.(string)
	}
}

// get returns the field's value as a decoded value would carry it.
func (f *policyField) get(p *Policy) any {
	switch ptr := f.ptr(p).(type) {
	case *bool:
		return *ptr
	case *int:
		return int64(*ptr)
	case *float64:
		return *ptr
	case *string:
		return *ptr
	}
	return nil
}

func (f *policyField) path() string { return "policy." + f.section + "." + f.name }

// Validate checks every field of p, returning a [*FieldError] for the first
// value out of range.
func (p Policy) Validate() error {
	for i := range policyFields {
		f := &policyFields[i]
		if _, msg := f.rule.convert(f.get(&p)); msg != "" {
			return &FieldError{Path: f.path(), Msg: msg}
		}
	}
	return nil
}

// ApplyJSON returns p with the partial policy patch applied. patch has the
// shape of the policy JSON (docs/design.md §10) with any subset of sections and fields;
// an empty patch or null changes nothing. Unknown keys, values of the wrong
// type and values out of range are rejected with a [*FieldError] naming the
// field; on any error nothing is applied and p is returned unchanged.
func ApplyJSON(p Policy, patch json.RawMessage) (Policy, error) {
	if t := bytes.TrimSpace(patch); len(t) == 0 || string(t) == "null" {
		return p, nil
	}
	sections, err := objectMembers(patch)
	if err != nil {
		return p, &FieldError{Path: "policy", Msg: "must be an object"}
	}
	q := p
	for _, sec := range sections {
		if sec.key == "proxy" { // initializationOptions.proxy: not a policy section
			if _, _, err := decodeProxyJSON(sec.value, Proxy{}); err != nil {
				return p, err
			}
			continue
		}
		known := false
		for i := range policyFields {
			known = known || policyFields[i].section == sec.key
		}
		if !known {
			return p, &FieldError{Path: "policy." + sec.key, Msg: "unknown field"}
		}
		members, err := objectMembers(sec.value)
		if err != nil {
			return p, &FieldError{Path: "policy." + sec.key, Msg: "must be an object"}
		}
		for _, m := range members {
			f := lookupField(sec.key, m.key)
			if f == nil {
				return p, &FieldError{Path: "policy." + sec.key + "." + m.key, Msg: "unknown field"}
			}
			v, err := decodeJSONValue(m.value)
			if err != nil {
				return p, &FieldError{Path: f.path(), Msg: "invalid JSON"}
			}
			out, msg := f.rule.convert(v)
			if msg != "" {
				return p, &FieldError{Path: f.path(), Msg: msg}
			}
			f.set(&q, out)
		}
	}
	return q, nil
}

func lookupField(section, name string) *policyField {
	for i := range policyFields {
		if f := &policyFields[i]; f.section == section && f.name == name {
			return f
		}
	}
	return nil
}

type member struct {
	key   string
	value json.RawMessage
}

// objectMembers returns the members of a JSON object in document order.
func objectMembers(data json.RawMessage) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data")
	}
	return out, nil
}

// decodeJSONValue decodes one JSON value, numbers as int64 when integral
// and float64 otherwise, like the TOML decoder does.
func decodeJSONValue(data json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if n, ok := v.(json.Number); ok {
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return i, nil
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil {
			return nil, fmt.Errorf("number %s: %w", n, err)
		}
		return f, nil
	}
	return v, nil
}
