package config

import (
	"testing"

	"github.com/vtcode/vtcode-ls/clearing"
	"github.com/vtcode/vtcode-ls/compaction"
)

// TestDefaultsAgree: [Default] is the source of the built-in policy; the
// fallbacks compaction and clearing apply to a zero policy must be the same
// values, or a caller that leaves a field zero gets another default than a
// user who configures nothing.
func TestDefaultsAgree(t *testing.T) {
	d := Default()
	rp := compaction.DefaultRoutePolicy()
	if rp.ThresholdRatio != d.RoutePolicy.ThresholdRatio || rp.RetainRatio != d.RoutePolicy.RetainRatio || rp.MaxOverflowRetries != d.RoutePolicy.MaxOverflowRetries {
		t.Errorf("compaction.DefaultRoutePolicy() = %+v, config.Default().RoutePolicy = %+v", rp, d.RoutePolicy)
	}
	if compaction.DefaultThresholdRatio != d.AutoCompaction.ThresholdRatio {
		t.Errorf("compaction.DefaultThresholdRatio = %v, config %v", compaction.DefaultThresholdRatio, d.AutoCompaction.ThresholdRatio)
	}
	cp := clearing.DefaultPolicy()
	tc := d.ToolResultClearing
	if cp != (clearing.Policy{Enabled: tc.Enabled, TriggerTokens: tc.TriggerTokens, KeepToolUses: tc.KeepToolUses,
		KeepRecentToolBatches: tc.KeepRecentToolBatches, ClearToolInputs: tc.ClearToolInputs,
		ClearAtLeastTokens: tc.ClearAtLeastTokens, CacheAware: tc.CacheAware}) {
		t.Errorf("clearing.DefaultPolicy() = %+v, config.Default().ToolResultClearing = %+v", cp, tc)
	}
}
