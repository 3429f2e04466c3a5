// Package anthropic is the client of Anthropic Messages API routes. It
// implements [providers.Generator] with POST {base}/messages (x-api-key and
// anthropic-version 2023-06-01), including the native inline compaction edit
// ladder of docs/design.md §8.4, over plain net/http.
//
// Requests: system messages and Request.System are lifted into "system";
// tool calls become tool_use blocks and tool results tool_result blocks in a
// user turn (consecutive turns of one role are merged, tool results first);
// thinking, redacted_thinking, compaction and server-tool blocks kept in an
// assistant message's ReasoningDetails are replayed verbatim before its text,
// a compaction block always first. The last assistant message whose
// ReasoningDetails holds a compaction block with content is the compaction
// boundary: the conversation sent starts there, with that block as its
// first block (the API reads nothing before it and refuses a misplaced or a
// second compaction block), so earlier turns, earlier blocks of that
// message and older compaction blocks are not sent. A request replaying a
// compaction block carries the compact-2026-01-12 beta. A request whose
// max_tokens is expected to take over ten minutes
// ([catalog.ModelInfo.StreamingRequired]) streams. Tool schemas are sent
// with tool_choice {"type":"none"}; when a request has tool calls but no tool
// schemas, calls and results are sent as text, since the API refuses tool
// blocks without tool definitions. A request that would end with an
// assistant turn gets a closing user turn "[Continue]": current models do
// not accept assistant prefill.
//
// Responses: text blocks become the message text, thinking blocks the
// Reasoning text, tool_use blocks tool calls, and every non-text block is
// kept whole in ReasoningDetails (a compaction block first), so the next
// request replays it. Usage InputTokens counts all input (input_tokens plus
// cache reads and cache writes), like the other providers' input counts.
package anthropic

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/catalog"
	"github.com/vtcode/vtcode-ls/providers/httpapi"
)

// DefaultVersion is the anthropic-version header value.
const DefaultVersion = "2023-06-01"

// The beta headers this client derives from a request payload.
const (
	BetaContextManagement = "context-management-2025-06-27" // clear_* edits
	BetaCompact           = "compact-2026-01-12"            // compact_* edits
	BetaContext1M         = "context-1m-2025-08-07"         // models named with a "[1m]" suffix
)

// The edit ladder of docs/design.md §8.4 (defined in package providers, which session
// uses too).
const (
	EditClearThinking = providers.AnthropicEditClearThinking
	EditClearToolUses = providers.AnthropicEditClearToolUses
	EditCompact       = providers.AnthropicEditCompact
	// CompactTriggerFloor is the provider's minimum compact trigger.
	CompactTriggerFloor = providers.AnthropicCompactTriggerFloor
	// ClearToolUsesTrigger and ClearToolUsesKeep configure the tool-use
	// clearing edit; ClearThinkingKeep the thinking clearing edit.
	ClearToolUsesTrigger = providers.AnthropicClearToolUsesTrigger
	ClearToolUsesKeep    = providers.AnthropicClearToolUsesKeep
	ClearThinkingKeep    = providers.AnthropicClearThinkingKeep
)

// Config configures a Client. Provider is "anthropic" when empty; whatever
// the route name, an empty BaseURL means https://api.anthropic.com/v1. The
// API key is sent as x-api-key, or as a bearer token with BearerAuth. An
// anthropic-beta value in Header is ignored: beta headers are derived from
// the payload.
type Config struct {
	httpapi.Endpoint
	// Version is the anthropic-version header; "" means DefaultVersion.
	Version string
	// MaxTokens is max_tokens when a request leaves MaxOutputTokens 0; 0
	// means the catalog's output limit capped at 32,000, or 8,192 for
	// unknown models.
	MaxTokens int
	// BearerAuth sends "Authorization: Bearer <key>" instead of x-api-key,
	// for Anthropic-format gateways that want it.
	BearerAuth bool
}

// Client is a Messages API client. It is safe for concurrent use.
type Client struct {
	cfg    Config
	base   string
	caller *httpapi.Caller
}

var _ providers.Generator = (*Client)(nil)

// New returns a client for cfg. It fails when the base URL is not an
// absolute http(s) URL.
func New(cfg Config) (*Client, error) {
	cfg.Provider = catalog.CanonicalProvider(cmp.Or(cfg.Provider, "anthropic"))
	cfg.Version = cmp.Or(cfg.Version, DefaultVersion)
	base, caller, err := cfg.Resolve("anthropic")
	if err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	return &Client{cfg: cfg, base: base, caller: caller}, nil
}

// Route returns the client's route: provider, default model and configured
// base URL.
func (c *Client) Route() providers.Route { return c.cfg.Route() }

// MessagesURL returns the generation endpoint: /v1/messages on the base URL
// ([httpapi.APIURL]).
func (c *Client) MessagesURL() string { return httpapi.JoinURL(c.base, "/v1/messages") }

// request is the body of POST /messages.
type request struct {
	Model             string            `json:"model"`
	MaxTokens         int               `json:"max_tokens"`
	System            string            `json:"system,omitempty"`
	Messages          []message         `json:"messages"`
	Tools             []json.RawMessage `json:"tools,omitempty"`
	ToolChoice        *toolChoice       `json:"tool_choice,omitempty"`
	Thinking          *thinking         `json:"thinking,omitempty"`
	ContextManagement *contextMgmt      `json:"context_management,omitempty"`
	Stream            bool              `json:"stream,omitempty"`
}

type message struct {
	Role    string            `json:"role"`
	Content []json.RawMessage `json:"content"`
}

type toolChoice struct {
	Type string `json:"type"`
}

type thinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens,omitempty"`
}

type contextMgmt struct {
	Edits []providers.AnthropicEdit `json:"edits"`
}

// Generate sends one POST {base}/messages.
//
// With req.Inline set it adds the edit ladder: clear_thinking_20251015 (keep
// 2 thinking turns) and clear_tool_uses_20250919 (trigger 100,000 input
// tokens, keep 3 tool uses) when Inline.ClearingEdits, then compact_20260112
// (trigger max(50,000, TriggerTokens) input tokens, pause_after_compaction,
// Inline.Instructions). The API refuses clear_thinking without thinking, so
// a request carrying it enables thinking (adaptive on models that support
// it, else with a budget of half of max_tokens) unless the model thinks by
// default (the Claude 5 generation). The anthropic-beta
// header lists context-management-2025-06-27 when a clear_* edit is sent and
// compact-2026-01-12 when a compact_* edit is sent or a compaction block is
// replayed.
//
// A compaction block with content becomes Response.Compaction and the first
// ReasoningDetails entry. A compaction block with "content": null is a
// failed compaction: it is dropped, Response.Compaction stays nil and
// StopReason is the provider's ("compaction"), so the caller falls back to a
// local summary. StopReason is the provider's stop_reason ("end_turn",
// "compaction", "max_tokens", ...). Usage sums the message,
// fallback_message, advisor_message and compaction iterations when the
// provider reports iterations (what the call cost), the top-level numbers
// otherwise; the raw iterations are kept, and the last message iteration
// among them is the context size after the answer. An answer with no
// content block is a KindEmpty error.
func (c *Client) Generate(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	model := cmp.Or(req.Model, c.cfg.Model)
	if model == "" {
		return nil, c.caller.Fail(model, providers.KindRejected, "no model configured")
	}
	wireModel, oneM := strings.CutSuffix(model, "[1m]")
	info, _ := catalog.LookupModel("anthropic", model)
	body := request{Model: wireModel, MaxTokens: c.maxTokens(req, info)}
	textTools := len(req.Tools) == 0
	system, msgs, conv := convert(req.Messages, textTools)
	if req.System != "" {
		system = append([]string{req.System}, system...)
	}
	body.System = strings.Join(system, "\n\n")
	body.Messages = msgs
	if len(req.Tools) > 0 {
		body.Tools = anthropicTools(req.Tools)
		body.ToolChoice = &toolChoice{Type: "none"}
	}
	if in := req.Inline; in != nil {
		if in.ClearingEdits && !info.ThinksByDefault {
			body.Thinking = thinkingFor(info, &body.MaxTokens)
		}
		edits := providers.AnthropicEdits(in.ClearingEdits, true, in.TriggerTokens, in.Instructions)
		body.ContextManagement = &contextMgmt{Edits: providers.AnthropicClearAtLeast(edits, in.ClearAtLeastTokens)}
	}
	// Answers expected to take over ten minutes must stream; the stream is
	// consumed into the same response.
	body.Stream = c.cfg.Stream || info.StreamingRequired(body.MaxTokens)
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("anthropic: encode request: %w", err)
	}
	resp, err := c.caller.Post(ctx, httpapi.Call{Model: model, URL: c.MessagesURL(), Header: c.header(&body, conv.compaction, oneM), Body: raw})
	if err != nil {
		return nil, err
	}
	var res *messageResponse
	if httpapi.IsEventStream(resp) {
		defer resp.Body.Close()
		res, err = c.readStream(ctx, model, resp)
	} else {
		var data []byte
		res = &messageResponse{}
		data, err = c.caller.ReadJSON(ctx, model, resp, res)
		if err == nil && res.Type == "error" {
			return nil, c.caller.Classify(model, 0, data, nil)
		}
	}
	if err != nil {
		return nil, err
	}
	if len(res.Content) == 0 {
		return nil, c.caller.Fail(model, providers.KindEmpty, "response has no content")
	}
	out, err := parseResponse(res)
	if err != nil {
		return nil, c.caller.Malformed(model, err)
	}
	if out.Compaction == nil && res.StopReason == "compaction" && c.cfg.Logger != nil {
		c.cfg.Logger.Debug("provider compaction produced no summary", "provider", c.cfg.Provider, "model", model)
	}
	return c.caller.RedactResponse(out), nil
}

func (c *Client) header(body *request, compactionBlock, oneM bool) http.Header {
	h := c.cfg.RequestHeader(body.Stream, "anthropic-beta")
	if c.cfg.APIKey != "" {
		if c.cfg.BearerAuth {
			h.Set("Authorization", "Bearer "+c.cfg.APIKey)
		} else {
			h.Set("X-Api-Key", c.cfg.APIKey)
		}
	}
	h.Set("Anthropic-Version", c.cfg.Version)
	if betas := BetasFor(body.ContextManagement.editTypes(), compactionBlock, oneM); betas != "" {
		h.Set("Anthropic-Beta", betas)
	}
	return h
}

func (cm *contextMgmt) editTypes() []string {
	if cm == nil {
		return nil
	}
	var ts []string
	for _, e := range cm.Edits {
		ts = append(ts, e.Type)
	}
	return ts
}

// Betas derives the anthropic-beta header value from the context-management
// edit types of a payload (and whether the model was named with "[1m]"):
// context-management-2025-06-27 for clear_* edits, compact-2026-01-12 for
// compact_* edits, context-1m-2025-08-07 for 1M-context models, in that
// order, comma-separated; "" when none applies. See [BetasFor] for a
// payload that replays a compaction block.
func Betas(editTypes []string, oneM bool) string { return BetasFor(editTypes, false, oneM) }

// BetasFor is [Betas] for a payload that may replay a compaction block: a
// compaction block exists only in the compact beta, so compactionBlock adds
// compact-2026-01-12 even without a compact edit (a local-summary request
// over a history the provider compacted).
func BetasFor(editTypes []string, compactionBlock, oneM bool) string {
	clear, compact := false, compactionBlock
	for _, t := range editTypes {
		clear = clear || strings.HasPrefix(t, "clear_")
		compact = compact || strings.HasPrefix(t, "compact_")
	}
	var b []string
	if clear {
		b = append(b, BetaContextManagement)
	}
	if compact {
		b = append(b, BetaCompact)
	}
	if oneM {
		b = append(b, BetaContext1M)
	}
	return strings.Join(b, ",")
}

// maxTokens is max_tokens: the request's, else the configured one, else the
// catalog's output limit capped at 32,000, else 8,192.
func (c *Client) maxTokens(req *providers.Request, info catalog.ModelInfo) int {
	if req.MaxOutputTokens > 0 {
		return req.MaxOutputTokens
	}
	if c.cfg.MaxTokens > 0 {
		return c.cfg.MaxTokens
	}
	if info.MaxOutputTokens > 0 {
		return min(info.MaxOutputTokens, 32_000)
	}
	return 8_192
}

// thinkingFor returns the thinking configuration that enables thinking on a
// model: adaptive where the catalog says it is supported, else a budget of
// half of max_tokens (raising max_tokens to 2,048 when smaller).
func thinkingFor(info catalog.ModelInfo, maxTokens *int) *thinking {
	if info.AdaptiveThinking {
		return &thinking{Type: "adaptive"}
	}
	if *maxTokens < 2048 {
		*maxTokens = 2048
	}
	return &thinking{Type: "enabled", BudgetTokens: *maxTokens / 2}
}

// anthropicTools returns tool schemas in Anthropic form: chat-completions
// and Responses function schemas are translated (with their strict flag
// when they set one), everything else (schemas
// already in Anthropic form, server tools) is passed verbatim.
func anthropicTools(tools []json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(tools))
	for _, raw := range tools {
		t, form, ok := providers.ParseTool(raw)
		if !ok || form == providers.WireAnthropic {
			out = append(out, raw)
			continue
		}
		params := t.Parameters
		if len(params) == 0 || string(params) == "null" {
			params = json.RawMessage(`{"type":"object"}`)
		}
		b, err := json.Marshal(struct {
			Name        string          `json:"name"`
			Description string          `json:"description,omitempty"`
			InputSchema json.RawMessage `json:"input_schema"`
			Strict      *bool           `json:"strict,omitempty"`
		}{t.Name, t.Description, params, t.Strict})
		if err != nil {
			out = append(out, raw)
			continue
		}
		out = append(out, b)
	}
	return out
}
