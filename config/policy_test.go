package config

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDefaultPolicy(t *testing.T) {
	p := Default()
	if err := p.Validate(); err != nil {
		t.Fatalf("Default().Validate() = %v", err)
	}
	got, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"autoCompaction":{"enabled":true,"thresholdTokens":0,"thresholdRatio":0.75,"compactOnModelSwitch":true,"mode":"auto"},` +
		`"toolResultClearing":{"enabled":true,"triggerTokens":40000,"keepToolUses":2,"keepRecentToolBatches":2,"clearToolInputs":false,"clearAtLeastTokens":5000,"cacheAware":true},` +
		`"context":{"maxContextTokens":0,"reservedOutputTokens":4096,"trimToPercent":60,"preserveRecentTurns":6,"tokenizer":"o200k","stayBelowPriceTier":true},` +
		`"routePolicy":{"thresholdRatio":1,"retainRatio":0.16,"maxOverflowRetries":1}}`
	if string(got) != want {
		t.Errorf("Default() JSON =\n%s\nwant\n%s", got, want)
	}
	// The JSON form round-trips through ApplyJSON.
	back, err := ApplyJSON(Policy{}, got)
	if err != nil || back != p {
		t.Errorf("ApplyJSON(zero, Default JSON) = %+v, %v", back, err)
	}
}

func TestApplyJSON(t *testing.T) {
	mod := func(f func(*Policy)) Policy {
		p := Default()
		f(&p)
		return p
	}
	for _, tc := range []struct {
		patch string
		want  Policy
	}{
		{``, Default()},
		{`null`, Default()},
		{`{}`, Default()},
		{`{"context":{}}`, Default()},
		{`{"toolResultClearing":{"keepToolUses":0,"enabled":false}}`, mod(func(p *Policy) {
			p.ToolResultClearing.KeepToolUses = 0
			p.ToolResultClearing.Enabled = false
		})},
		{`{"autoCompaction":{"thresholdRatio":1}}`, mod(func(p *Policy) { p.AutoCompaction.ThresholdRatio = 1 })},
		{`{"autoCompaction":{"thresholdRatio":0.5, "thresholdTokens": 120000}}`, mod(func(p *Policy) {
			p.AutoCompaction.ThresholdRatio = 0.5
			p.AutoCompaction.ThresholdTokens = 120000
		})},
		{`{"routePolicy":{"retainRatio":0,"maxOverflowRetries":0,"thresholdRatio":0.8}}`, mod(func(p *Policy) {
			p.RoutePolicy = RoutePolicy{ThresholdRatio: 0.8, RetainRatio: 0, MaxOverflowRetries: 0}
		})},
		{`{"context":{"maxContextTokens":100000.0,"trimToPercent":100,"tokenizer":"approx"}}`, mod(func(p *Policy) {
			p.Context.MaxContextTokens = 100000
			p.Context.TrimToPercent = 100
			p.Context.Tokenizer = "approx"
		})},
		{`{"context":{"trimToPercent":1e1}}`, mod(func(p *Policy) { p.Context.TrimToPercent = 10 })},
	} {
		got, err := ApplyJSON(Default(), json.RawMessage(tc.patch))
		if err != nil {
			t.Errorf("ApplyJSON(%s) = %v", tc.patch, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ApplyJSON(%s) (-want +got):\n%s", tc.patch, diff)
		}
	}
}

func TestApplyJSONErrors(t *testing.T) {
	for _, tc := range []struct{ patch, want string }{
		{`{"toolResultClearing":{"keepToolUses":-1}}`, `policy.toolResultClearing.keepToolUses: must be >= 0`},
		{`{"context":{"tokenizer":"cl100k"}}`, `policy.context.tokenizer: must be "o200k" or "approx"`},
		{`{"context":{"tokenizer":5}}`, `policy.context.tokenizer: must be "o200k" or "approx"`},
		{`{"autoCompaction":{"enabled":"yes"}}`, `policy.autoCompaction.enabled: must be a boolean`},
		{`{"autoCompaction":{"enabled":null}}`, `policy.autoCompaction.enabled: must be a boolean`},
		{`{"autoCompaction":{"thresholdRatio":0}}`, `policy.autoCompaction.thresholdRatio: must be > 0 and <= 1`},
		{`{"autoCompaction":{"thresholdRatio":1.5}}`, `policy.autoCompaction.thresholdRatio: must be > 0 and <= 1`},
		{`{"autoCompaction":{"thresholdRatio":"0.5"}}`, `policy.autoCompaction.thresholdRatio: must be a number`},
		{`{"autoCompaction":{"thresholdTokens":-5}}`, `policy.autoCompaction.thresholdTokens: must be >= 0`},
		{`{"routePolicy":{"thresholdRatio":-1}}`, `policy.routePolicy.thresholdRatio: must be > 0 and <= 1`},
		{`{"routePolicy":{"retainRatio":-0.1}}`, `policy.routePolicy.retainRatio: must be between 0 and 1`},
		{`{"routePolicy":{"retainRatio":1.01}}`, `policy.routePolicy.retainRatio: must be between 0 and 1`},
		{`{"routePolicy":{"maxOverflowRetries":-1}}`, `policy.routePolicy.maxOverflowRetries: must be >= 0`},
		{`{"context":{"trimToPercent":0}}`, `policy.context.trimToPercent: must be between 1 and 100`},
		{`{"context":{"trimToPercent":101}}`, `policy.context.trimToPercent: must be between 1 and 100`},
		{`{"context":{"maxContextTokens":1.5}}`, `policy.context.maxContextTokens: must be an integer`},
		{`{"context":{"reservedOutputTokens":"4096"}}`, `policy.context.reservedOutputTokens: must be an integer`},
		{`{"context":{"preserveRecentTurns":[6]}}`, `policy.context.preserveRecentTurns: must be an integer`},
		{`{"toolResultClearing":{"triggerTokens":1e300}}`, `policy.toolResultClearing.triggerTokens: must be an integer`},
		{`{"foo":{}}`, `policy.foo: unknown field`},
		{`{"context":{"foo":1}}`, `policy.context.foo: unknown field`},
		{`{"context":{"Tokenizer":"approx"}}`, `policy.context.Tokenizer: unknown field`},
		{`{"context":5}`, `policy.context: must be an object`},
		{`{"context":null}`, `policy.context: must be an object`},
		{`[1]`, `policy: must be an object`},
		{`"x"`, `policy: must be an object`},
		{`{"context":{"trimToPercent":`, `policy: must be an object`},
		// The first offending field in document order is reported.
		{`{"context":{"tokenizer":"x","trimToPercent":0}}`, `policy.context.tokenizer: must be "o200k" or "approx"`},
		{`{"context":{"trimToPercent":0,"tokenizer":"x"}}`, `policy.context.trimToPercent: must be between 1 and 100`},
	} {
		in := Default()
		in.Context.TrimToPercent = 42
		got, err := ApplyJSON(in, json.RawMessage(tc.patch))
		var fe *FieldError
		if !errors.As(err, &fe) {
			t.Errorf("ApplyJSON(%s) = %v, want a *FieldError", tc.patch, err)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("ApplyJSON(%s) error\n got %s\nwant %s", tc.patch, err, tc.want)
		}
		if got != in {
			t.Errorf("ApplyJSON(%s) changed the policy despite the error", tc.patch)
		}
	}
}

func TestApplyJSONAtomic(t *testing.T) {
	in := Default()
	got, err := ApplyJSON(in, json.RawMessage(`{"toolResultClearing":{"triggerTokens":5},"context":{"trimToPercent":50,"tokenizer":"bad"}}`))
	if err == nil || got != in {
		t.Errorf("partial application on error: %+v, %v", got, err)
	}
}

func TestValidate(t *testing.T) {
	p := Default()
	p.Context.Tokenizer = "cl100k"
	if err := p.Validate(); err == nil || err.Error() != `policy.context.tokenizer: must be "o200k" or "approx"` {
		t.Errorf("Validate = %v", err)
	}
	p = Default()
	p.RoutePolicy.ThresholdRatio = 0
	if err := p.Validate(); err == nil || err.Error() != `policy.routePolicy.thresholdRatio: must be > 0 and <= 1` {
		t.Errorf("Validate = %v", err)
	}
}
