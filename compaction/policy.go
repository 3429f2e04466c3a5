package compaction

import (
	"math"
	"strings"

	"github.com/vtcode/vtcode-ls/compaction/routepolicy"
	"github.com/vtcode/vtcode-ls/providers"
)

// MaxTailTokens caps the continuity tail: min(20,000, window × retain_ratio).
const MaxTailTokens = 20000

// RoutePolicy tunes compaction for one provider/model route (docs/design.md §8.7).
type RoutePolicy struct {
	// ThresholdRatio scales the compaction threshold; values above 1 are
	// treated as 1, so it only ever makes compaction earlier. 0 means 1.
	ThresholdRatio float64
	// RetainRatio sizes the continuity tail: min(20,000, window × RetainRatio).
	RetainRatio float64
	// MaxOverflowRetries is how many times a summary request rejected for
	// context capacity is retried with a halved budget.
	MaxOverflowRetries int
}

// DefaultRoutePolicy returns the built-in route policy (package
// routepolicy): 1.0, 0.16, 1.
func DefaultRoutePolicy() RoutePolicy {
	return RoutePolicy{ThresholdRatio: routepolicy.RouteThreshold, RetainRatio: routepolicy.RetainRatio, MaxOverflowRetries: routepolicy.MaxOverflowRetries}
}

// RouteOverride is one [[compaction.routes]] entry. Provider and Model are
// case-insensitive substrings (empty matches every route); nil fields keep
// the base value.
type RouteOverride struct {
	Provider, Model    string
	ThresholdRatio     *float64
	RetainRatio        *float64
	MaxOverflowRetries *int
}

// ResolveRoutePolicy applies the first override matching r to base.
func ResolveRoutePolicy(r providers.Route, overrides []RouteOverride, base RoutePolicy) RoutePolicy {
	provider, model := strings.ToLower(r.Provider), strings.ToLower(r.Model)
	for _, o := range overrides {
		if !strings.Contains(provider, strings.ToLower(o.Provider)) || !strings.Contains(model, strings.ToLower(o.Model)) {
			continue
		}
		if o.ThresholdRatio != nil {
			base.ThresholdRatio = *o.ThresholdRatio
		}
		if o.RetainRatio != nil {
			base.RetainRatio = *o.RetainRatio
		}
		if o.MaxOverflowRetries != nil {
			base.MaxOverflowRetries = *o.MaxOverflowRetries
		}
		break
	}
	return base
}

// Thresholds are the readiness numbers of docs/design.md §8.1, in tokens of
// projected history plus prefix.
type Thresholds struct {
	Effective int // capacity − reservedOutput; 0 when capacity is unknown
	Threshold int // compaction threshold; 0 when unknown
	Soft      int // start of background pass 1: 90 % of Threshold
}

// Readiness computes the compaction thresholds (docs/design.md §8.1):
//
//	effective = capacity − reservedOutput (saturating at 0)
//	threshold = thresholdTokens capped at effective, when thresholdTokens > 0
//	          = round(effective × ratio × min(1, rp.ThresholdRatio)) otherwise
//	soft      = threshold − floor(threshold / 10)
//
// ratio ≤ 0 means [routepolicy.ThresholdRatio]; rp.ThresholdRatio ≤ 0 means 1. With
// unknown capacity (≤ 0) only an explicit thresholdTokens is known; everything
// else is 0. A known threshold is at least 1.
func Readiness(capacity, reservedOutput, thresholdTokens int, ratio float64, rp RoutePolicy) Thresholds {
	var t Thresholds
	if capacity <= 0 {
		if thresholdTokens > 0 {
			t.Threshold = thresholdTokens
			t.Soft = soft(thresholdTokens)
		}
		return t
	}
	t.Effective = max(0, capacity-max(0, reservedOutput))
	if thresholdTokens > 0 {
		t.Threshold = min(thresholdTokens, t.Effective)
	} else {
		if ratio <= 0 {
			ratio = routepolicy.ThresholdRatio
		}
		route := rp.ThresholdRatio
		if route <= 0 || route > 1 {
			route = 1
		}
		t.Threshold = int(math.Round(float64(t.Effective) * ratio * route))
	}
	t.Threshold = max(1, t.Threshold)
	t.Soft = soft(t.Threshold)
	return t
}

func soft(threshold int) int { return max(1, threshold-threshold/10) }

// Budget formulas of docs/design.md §8.5.

// Headroom is the safety margin of a local summary request:
// floor(capacity/8) + 512.
func Headroom(capacity int) int { return capacity/8 + 512 }

// SummaryBudget is local_summary_history_budget: the tokens a summary
// request may spend on history plus instructions,
//
//	capacity − (floor(capacity/8) + 512) − prefix − outputLimit
//
// saturating at 0. It is 0 when capacity is unknown (≤ 0): callers send the
// fork verbatim then.
func SummaryBudget(capacity, prefix, outputLimit int) int {
	if capacity <= 0 {
		return 0
	}
	return max(0, capacity-Headroom(capacity)-max(0, prefix)-max(0, outputLimit))
}

// TailBudget is the continuity tail: min(20,000, floor(window × retainRatio)),
// 20,000 when the window is unknown. A negative ratio counts as 0.
func TailBudget(window int, retainRatio float64) int {
	if window <= 0 {
		return MaxTailTokens
	}
	return min(MaxTailTokens, int(float64(window)*max(0, retainRatio)))
}

// WindowBound is what a rebuilt local history may occupy:
// min(window − (floor(window/8) + 512), window − reservedOutput) − prefix,
// saturating at 0; 0 means unbounded (unknown window).
func WindowBound(window, reservedOutput, prefix int) int {
	if window <= 0 {
		return 0
	}
	b := min(window-Headroom(window), window-max(0, reservedOutput)) - max(0, prefix)
	return max(1, b)
}
