package session

import (
	"encoding/json"
	"time"

	"github.com/vtcode/vtcode-ls/config"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/store"
)

// The parameter and result structs of this file are the inputs and outputs
// of the Manager's calls. Their JSON names are those of the vtcode/*
// methods (docs/design.md §10), so the JSON-RPC transport decodes params into them and
// encodes results as they are; what belongs to a transport alone (progress
// tokens, request ids) is not here: progress is a [Progress] the transport
// passes, and a call's place in its queue a [Ticket] in the [Place] the
// params embed, which has no JSON name. A "count" field named messages is
// the number of messages of the live history.

// OpenParams are the parameters of vtcode/openSession.
type OpenParams struct {
	// Workspace is a path or file:// URI; empty means the first workspace
	// folder. A folder that is not a workspace yet is added.
	Workspace string `json:"workspace,omitempty"`
	// SessionID resumes the stored session of that id; a valid id that is not
	// stored creates a session with it; empty generates one.
	SessionID     string `json:"sessionId,omitempty"`
	Provider      string `json:"provider,omitempty"`
	Model         string `json:"model,omitempty"`
	ContextWindow int    `json:"contextWindow,omitempty"`
	Place                // the call's place in its queue (see [Manager.Reserve])
}

// OpenResult is the result of vtcode/openSession.
type OpenResult struct {
	SessionID string        `json:"sessionId"`
	Resumed   bool          `json:"resumed"`
	Messages  int           `json:"messages"`
	Policy    config.Policy `json:"policy"`
}

// ListParams are the parameters of vtcode/listSessions.
type ListParams struct {
	Workspace string `json:"workspace,omitempty"` // empty: every workspace
	Place            // the call's place in its queue (see [Manager.Reserve])
}

// SessionInfo is one entry of vtcode/listSessions.
type SessionInfo struct {
	SessionID string    `json:"sessionId"`
	Workspace string    `json:"workspace"`
	Messages  int       `json:"messages"`
	UpdatedAt time.Time `json:"updatedAt"`
	// Active marks the one session of the listing a client follows until
	// the user picks one: the most recently updated.
	Active bool `json:"active,omitempty"`
}

// AppendParams are the parameters of vtcode/appendMessages.
type AppendParams struct {
	SessionID string            `json:"sessionId"`
	Messages  []history.Message `json:"messages"`
	Place                       // the call's place in its queue (see [Manager.Reserve])
}

// AppendResult is the result of vtcode/appendMessages: the length of the live
// history and its estimate (before normalization and clearing).
type AppendResult struct {
	Messages      int `json:"messages"`
	HistoryTokens int `json:"historyTokens"`
}

// HistoryParams are the parameters of vtcode/history.
type HistoryParams struct {
	SessionID string `json:"sessionId"`
	Offset    int    `json:"offset,omitempty"`
	Limit     int    `json:"limit,omitempty"` // 0: to the end
	Place            // the call's place in its queue (see [Manager.Reserve])
}

// HistoryResult is the result of vtcode/history.
type HistoryResult struct {
	Messages []history.Message `json:"messages"`
	Total    int               `json:"total"`
}

// PrepareParams are the parameters of vtcode/prepareRequest.
type PrepareParams struct {
	SessionID string `json:"sessionId"`
	// Messages are appended to the live history before projecting.
	Messages     []history.Message `json:"messages,omitempty"`
	SystemPrompt string            `json:"systemPrompt,omitempty"`
	Tools        []json.RawMessage `json:"tools,omitempty"`
	// PrefixTokens replaces the estimate of SystemPrompt and Tools.
	PrefixTokens         *int `json:"prefixTokens,omitempty"`
	ReservedOutputTokens *int `json:"reservedOutputTokens,omitempty"`
	// NativeContextEdits says the request will carry Anthropic native context
	// edits; on a route that supports them local clearing is skipped.
	NativeContextEdits bool `json:"nativeContextEdits,omitempty"`
	Place                   // the call's place in its queue (see [Manager.Reserve])
}

// PrepareResult is the result of vtcode/prepareRequest.
type PrepareResult struct {
	Messages []history.Message `json:"messages"`
	Stats    Stats             `json:"stats"`
	// ContextManagement is the Anthropic edit ladder to send, for Anthropic
	// routes when the request asked for native context edits.
	ContextManagement json.RawMessage `json:"contextManagement,omitempty"`
	// Compaction reports an automatic compaction attempt of this request:
	// its outcome, or why it failed (Error) or did nothing.
	Compaction *CompactResult `json:"compaction,omitempty"`
	Trimmed    bool           `json:"trimmed"`
	// Base relates the projection to the previous one (cache.go); a
	// transport uses it to send only what changed.
	Base ProjectionBase `json:"-"`
}

// RecordParams are the parameters of vtcode/recordResponse.
type RecordParams struct {
	SessionID  string          `json:"sessionId"`
	Message    history.Message `json:"message"`
	Usage      *history.Usage  `json:"usage,omitempty"`
	StopReason string          `json:"stopReason,omitempty"`
	Place                      // the call's place in its queue (see [Manager.Reserve])
}

// RecordResult is the result of vtcode/recordResponse.
type RecordResult struct {
	Messages int   `json:"messages"`
	Stats    Stats `json:"stats"`
}

// CompactParams are the parameters of vtcode/compact.
type CompactParams struct {
	SessionID    string `json:"sessionId"`
	Instructions string `json:"instructions,omitempty"`
	// Strategy is "auto" (default), "local" or "native".
	Strategy string `json:"strategy,omitempty"`
	Place           // the call's place in its queue (see [Manager.Reserve])
}

// CompactResult is the result of vtcode/compact, and the report of an
// automatic or model-switch compaction inside other results.
type CompactResult struct {
	Mode                  string `json:"mode"`     // "local" or "provider"; "none" for a no-op
	Strategy              string `json:"strategy"` // the strategy that ran
	Trigger               string `json:"trigger"`
	ElapsedMs             int64  `json:"elapsedMs"`
	OriginalMessageCount  int    `json:"originalMessageCount"`
	CompactedMessageCount int    `json:"compactedMessageCount"`
	OriginalTokens        int    `json:"originalTokens"`
	CompactedTokens       int    `json:"compactedTokens"`
	// ArtifactID names the stored pre-compaction history; empty when nothing
	// was compacted (no-op or failure).
	ArtifactID string `json:"artifactId"`
	// Message is the human-readable outcome.
	Message string `json:"message"`
	// Error is the bounded root cause of a failed automatic compaction.
	Error string `json:"error,omitempty"`
}

// SetPolicyParams are the parameters of vtcode/setPolicy.
type SetPolicyParams struct {
	// SessionID scopes the change to one session; empty changes the
	// workspace default.
	SessionID string `json:"sessionId,omitempty"`
	// Workspace picks the workspace of a default change (path or URI);
	// empty means the first one.
	Workspace string          `json:"workspace,omitempty"`
	Policy    json.RawMessage `json:"policy"`
	Place                     // the call's place in its queue (see [Manager.Reserve])
}

// GetPolicyParams are the parameters of vtcode/getPolicy.
type GetPolicyParams struct {
	SessionID string `json:"sessionId,omitempty"`
	Workspace string `json:"workspace,omitempty"`
	Place            // the call's place in its queue (see [Manager.Reserve])
}

// ArtifactInfo is one entry of vtcode/listArtifacts:
// {artifactId, createdAt, messages, trigger, mode}. Trigger is manual, auto,
// recovery or model_switch, or restore for the backup a restore makes (whose
// mode is empty).
type ArtifactInfo = store.ArtifactInfo

// RestoreParams are the parameters of vtcode/restore.
type RestoreParams struct {
	SessionID  string `json:"sessionId"`
	ArtifactID string `json:"artifactId"`
	Place             // the call's place in its queue (see [Manager.Reserve])
}

// RestoreResult is the result of vtcode/restore.
type RestoreResult struct {
	Messages int `json:"messages"`
	// BackupArtifactID names the artifact holding the live history as it was
	// before the restore.
	BackupArtifactID string `json:"backupArtifactId,omitempty"`
}

// SwitchParams are the parameters of vtcode/switchModel.
type SwitchParams struct {
	SessionID     string `json:"sessionId"`
	Provider      string `json:"provider"`
	Model         string `json:"model"`
	ContextWindow int    `json:"contextWindow,omitempty"`
	Place                // the call's place in its queue (see [Manager.Reserve])
}

// SwitchResult is the result of vtcode/switchModel.
type SwitchResult struct {
	Compaction *CompactResult `json:"compaction,omitempty"`
	Message    string         `json:"message"`
}

// PromptParams are the parameters of vtcode/compactPrompt.
type PromptParams struct {
	Workspace string `json:"workspace,omitempty"`
	Action    string `json:"action"` // get, set or reset
	Prompt    string `json:"prompt,omitempty"`
	Place            // the call's place in its queue (see [Manager.Reserve])
}

// PromptResult is the result of vtcode/compactPrompt.
type PromptResult struct {
	Prompt    string `json:"prompt"`
	IsDefault bool   `json:"isDefault"`
}

// Boundary is a compaction boundary (docs/design.md §8.8): the event recorded when a
// compaction replaced the live history, and the body of
// vtcode/compactBoundary.
type Boundary struct {
	Trigger               string `json:"trigger"`
	Mode                  string `json:"mode"`
	Strategy              string `json:"strategy"`
	OriginalMessageCount  int    `json:"originalMessageCount"`
	CompactedMessageCount int    `json:"compactedMessageCount"`
	OriginalTokens        int    `json:"originalTokens"`
	CompactedTokens       int    `json:"compactedTokens"`
	ArtifactID            string `json:"artifactId"`
	ElapsedMs             int64  `json:"elapsedMs"`
}

// BoundaryEvent is what [Notifier.CompactBoundary] receives: the boundary and
// the session it happened in.
type BoundaryEvent struct {
	SessionID string `json:"sessionId"`
	Workspace string `json:"workspace"`
	Boundary
}

// PressureEvent is the body of vtcode/tokenPressure.
type PressureEvent struct {
	SessionID       string  `json:"sessionId"`
	Workspace       string  `json:"workspace"`
	ProjectedTokens int     `json:"projectedTokens"`
	OriginalTokens  int     `json:"originalTokens"`
	Capacity        int     `json:"capacity"`
	Pressure        float64 `json:"pressure"`
	State           string  `json:"state"`
	Display         Display `json:"display"`
}

// Stats describe a session's projection (docs/design.md §9).
type Stats struct {
	SessionID         string `json:"sessionId"`
	Messages          int    `json:"messages"`
	ProjectedMessages int    `json:"projectedMessages"`
	// OriginalTokens estimates the normalized history before clearing.
	OriginalTokens int `json:"originalTokens"`
	// ProjectedTokens estimates the projection returned (after clearing,
	// compaction and trimming).
	ProjectedTokens     int     `json:"projectedTokens"`
	PrefixTokens        int     `json:"prefixTokens"`
	ClearedResults      int     `json:"clearedResults"`
	ProtectedResults    int     `json:"protectedResults"`
	ProtectedBatches    int     `json:"protectedBatches"`
	ClearedInputs       int     `json:"clearedInputs"`
	LocalTrigger        int     `json:"localTrigger"`
	HistoryBudget       int     `json:"historyBudget"`
	Capacity            int     `json:"capacity"`
	ReservedOutput      int     `json:"reservedOutput"`
	CompactionThreshold int     `json:"compactionThreshold"`
	Pressure            float64 `json:"pressure"`
	// State is ok (under the soft threshold), warn, compacting, or critical
	// (pressure over 1, at or over the threshold with compaction failed or
	// disabled, or trimmed).
	State                   string `json:"state"`
	LastReportedInputTokens *int   `json:"lastReportedInputTokens,omitempty"`
	// LastRequestEstimate is the local estimate (projection + prefix) of
	// the request that the last reported usage answers, and
	// ReportedDifference is lastReportedInputTokens minus it: how far the
	// estimate is from the provider's count.
	LastRequestEstimate *int        `json:"lastRequestEstimate,omitempty"`
	ReportedDifference  *int        `json:"reportedDifference,omitempty"`
	Strategy            string      `json:"strategy"`
	Compactions         int         `json:"compactions"`
	LastCompaction      *Boundary   `json:"lastCompaction,omitempty"`
	Cache               *CacheStats `json:"cache,omitempty"`
	// Reuse predicts the prompt-cache reuse and cost of the request (see
	// cache.go).
	Reuse *ReuseStats `json:"reuse,omitempty"`
	// Receipt is what the session's calls cost so far (receipt.go).
	Receipt *Receipt `json:"receipt,omitempty"`
	// Display is the pressure, the used tokens (prefix included) and the
	// window as an editor shows them.
	Display Display `json:"display"`
}

// CacheStats track the provider's prompt-cache reuse as reported by
// vtcode/recordResponse.
type CacheStats struct {
	LastHitRate               float64 `json:"lastHitRate"`
	LowReuseStreak            int     `json:"lowReuseStreak"`
	CumulativeInputTokens     int     `json:"cumulativeInputTokens"`
	CumulativeCacheReadTokens int     `json:"cumulativeCacheReadTokens"`
}

// The states of [Stats.State].
const (
	StateOK         = "ok"
	StateWarn       = "warn"
	StateCompacting = "compacting"
	StateCritical   = "critical"
)
