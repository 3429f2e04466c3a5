// Package routepolicy owns the built-in numbers of compaction's readiness
// and route policy (docs/design.md §8.1, §8.7): what a session's policy
// defaults to (package config) and what a zero compaction option means
// (package compaction). It sits below both so that the two read one copy
// and config does not import the engine.
package routepolicy

// Defaults of docs/design.md §8.1 and §8.7.
const (
	ThresholdRatio     = 0.75 // auto_compaction_threshold_ratio
	RouteThreshold     = 1.0  // route_policy.threshold_ratio
	RetainRatio        = 0.16 // route_policy.retain_ratio
	MaxOverflowRetries = 1    // route_policy.max_overflow_retries
)
