// Package providers is the contract between the engine and a model
// provider: what compaction and session ask of one ([Generator],
// [Summarizer] and, on routes that offer it, native standalone compaction
// with [Compactor]), the request and response types those carry, the usage
// they report ([ReportedUsage]), the classified failure they return
// ([Error]), the wire formats a route can speak ([Wire]), and the shapes a
// response carries that every reader must recognize the same way
// (compaction entries, tool schemas, image parts, the Anthropic edit ladder
// an inline compaction request turns into).
//
// It holds no tables and makes no HTTP calls, so importing the contract
// imports nothing else: what is known about routes and models (windows,
// prices, default endpoints) is package providers/catalog, the HTTP calling
// the vendor clients share (retries, classification of failures, redaction
// of credentials, the redirect guard, URL building) is providers/httpapi,
// the event-stream reader is providers/sse, what a proxy needs of any
// vendor's bodies (the byte-preserving request, the decode cache) is
// providers/proxywire, and the fakes for tests are providers/providertest. Vendor clients live in subpackages and are chosen
// by cmd/vtcode-ls; compaction and session see only these interfaces.
package providers

import (
	"context"
	"encoding/json"

	"github.com/vtcode/vtcode-ls/history"
)

// Route identifies where requests go: the provider name as configured
// ("openai", "anthropic", "openresponses", "vercel", "xai", "openrouter",
// "gemini", "deepseek", "minimax", "merge", "ollama", "offline", ...), the model,
// and the provider settings that gate native strategies.
type Route struct {
	Provider string
	Model    string
	BaseURL  string // empty: the provider's official endpoint
	// NativeCompaction is "auto" (the built-in gates), "always" or "never".
	NativeCompaction string
	// SupportsContextEdits reports whether an Anthropic-format route accepts the
	// clearing edits of the inline ladder.
	SupportsContextEdits bool
}

// Request is a one-shot generation request.
type Request struct {
	Model    string
	System   string            // system prompt; empty for none
	Tools    []json.RawMessage // tool schemas (prompt-cache envelope); tool use is always disabled
	Messages []history.Message
	// MaxOutputTokens bounds the response; 0 means the model's default.
	MaxOutputTokens int
	// Inline asks an Anthropic-format route for native inline compaction.
	Inline *InlineCompaction
}

// InlineCompaction configures the Anthropic context-management edit ladder.
type InlineCompaction struct {
	Instructions string // optional compaction instructions
	// ClearingEdits sends clear_thinking_20251015 and clear_tool_uses_20250919
	// before compact_20260112.
	ClearingEdits bool
	// TriggerTokens is the compact edit's input-token trigger; values under
	// 50,000 are raised to 50,000.
	TriggerTokens int
	// ClearAtLeastTokens, when > 0, is sent as the clear_tool_uses edit's
	// clear_at_least (input tokens): the edit applies only when it clears at
	// least that many.
	ClearAtLeastTokens int
}

// Response is a generation result.
type Response struct {
	// Message is the assistant message: text, reasoning and, after an inline
	// compaction, the raw compaction block as the first reasoningDetails entry.
	Message    history.Message
	Usage      history.Usage
	StopReason string
	// Compaction is the raw compaction block when the provider compacted
	// inline (content not null), nil otherwise.
	Compaction json.RawMessage
}

// CompactRequest is a native standalone compaction request
// (POST {base}/responses/compact).
type CompactRequest struct {
	Model                string
	Input                []history.Message
	Instructions         string
	ServiceTier          string
	PromptCacheKey       string
	PromptCacheOptions   json.RawMessage
	PromptCacheRetention string
}

// CompactResponse is the compacted window a native endpoint returned: its
// output items as messages, opaque items kept as assistant messages whose
// ReasoningDetails hold the raw item.
type CompactResponse struct {
	Output []history.Message
	Usage  history.Usage
}

// SummaryInstructions introduces a compaction's custom instructions at the
// end of the summary prompt (the last user message of a summary request):
// "<prompt>\n\n" + SummaryInstructions + "\n<instructions>". A summarizer
// that does not send the prompt to a model (the offline one) reads them
// from there.
const SummaryInstructions = "Additional instructions for this summary:"

// SummaryRequest asks a [Summarizer] for a summary of a whole history.
type SummaryRequest struct {
	// Messages is the whole live history, earlier summaries included, not a
	// fork bounded to a model window.
	Messages []history.Message
	// Instructions are the caller's extra instructions for this compaction
	// (vtcode/compact instructions), "" for none.
	Instructions string
	// Prompt is the workspace's summary prompt; "" means the default.
	Prompt string
	// MaxOutputTokens bounds the summary; 0 means the summarizer's default.
	MaxOutputTokens int
}

// Summarizer is implemented by local summarizers whose input is not limited
// by a model window (the offline one): compaction hands them the whole
// history instead of a bounded fork, and they bound only their output. The
// contract is these typed fields, never text to parse out of a prompt.
type Summarizer interface {
	Summarize(ctx context.Context, req *SummaryRequest) (*Response, error)
}

// Generator produces one response. Implementations must honour ctx.
type Generator interface {
	Generate(ctx context.Context, req *Request) (*Response, error)
}

// Compactor is implemented by clients of routes with a native standalone
// compaction endpoint.
type Compactor interface {
	Compact(ctx context.Context, req *CompactRequest) (*CompactResponse, error)
}
