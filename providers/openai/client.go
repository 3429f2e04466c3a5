// Package openai is the client of OpenAI Responses API routes: openai,
// openresponses, vercel (AI Gateway) and xai. It implements
// [providers.Generator] with POST {base}/responses and [providers.Compactor]
// with POST {base}/responses/compact, over plain net/http.
//
// History messages become Responses input items: text messages become
// "message" items, assistant tool calls "function_call" (or
// "custom_tool_call" for freeform input) items, tool results
// "function_call_output" items, and the opaque items an assistant message
// carries in ReasoningDetails (reasoning items, {"type":"compaction",
// "encrypted_content":…} items) are replayed in front of it: verbatim, except
// compaction items, which are sent in their input form (type, id,
// encrypted_content). Blocks that belong to other wire formats (Anthropic
// thinking and compaction blocks, chat-completions reasoning details) are
// not sent. The phase of an assistant output message ("commentary",
// "final_answer") is kept in the message's Extra ([PhaseKey]) and sent back
// with it. Function tools translated from another form carry strict (false
// unless the tool set it).
//
// Base URLs: openai, vercel and xai default to their official endpoints (see
// [catalog.DefaultBaseURL]), which include the /v1 segment. An
// openresponses route needs a configured base URL. The endpoints are built
// by [httpapi.APIURL]: "https://host" and "https://host/v1" both address
// https://host/v1/responses and https://host/v1/responses/compact.
package openai

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/catalog"
	"github.com/vtcode/vtcode-ls/providers/httpapi"
)

// Config configures a Client. Provider is "openai" when empty, or
// "openresponses", "vercel", "xai" or another Responses-compatible route; an
// openresponses route needs a BaseURL. The API key is sent as a bearer token.
// Stream applies to generation only: compaction never streams. Header can
// carry, for example, OpenAI-Organization.
type Config struct {
	httpapi.Endpoint
}

// Client is a Responses API client. It is safe for concurrent use.
type Client struct {
	cfg    Config
	base   string
	caller *httpapi.Caller
}

var (
	_ providers.Generator = (*Client)(nil)
	_ providers.Compactor = (*Client)(nil)
)

// New returns a client for cfg. It fails when the route has no base URL
// (openresponses without one) or the base URL is not an absolute http(s) URL.
func New(cfg Config) (*Client, error) {
	cfg.Provider = catalog.CanonicalProvider(cmp.Or(cfg.Provider, "openai"))
	base, caller, err := cfg.Resolve(cfg.Provider)
	if err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	return &Client{cfg: cfg, base: base, caller: caller}, nil
}

// Route returns the client's route: provider, default model and configured
// base URL.
func (c *Client) Route() providers.Route { return c.cfg.Route() }

// ResponsesURL returns the generation endpoint: /v1/responses on the base URL
// ([httpapi.APIURL]).
func (c *Client) ResponsesURL() string { return httpapi.JoinURL(c.base, "/v1/responses") }

// CompactURL returns the native compaction endpoint: /v1/responses/compact on
// the base URL.
func (c *Client) CompactURL() string { return httpapi.JoinURL(c.base, "/v1/responses/compact") }

func (c *Client) header(stream bool) http.Header {
	h := c.cfg.RequestHeader(stream)
	if c.cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	return h
}

// generateRequest is the body of POST /responses.
type generateRequest struct {
	Model           string            `json:"model"`
	Instructions    string            `json:"instructions,omitempty"`
	Input           []json.RawMessage `json:"input"`
	Tools           []json.RawMessage `json:"tools,omitempty"`
	ToolChoice      string            `json:"tool_choice,omitempty"`
	MaxOutputTokens int               `json:"max_output_tokens,omitempty"`
	Store           bool              `json:"store"`
	Stream          bool              `json:"stream,omitempty"`
}

// compactRequest is the body of POST /responses/compact: exactly the fields
// of docs/design.md §8.3. It has no stream, max_output_tokens, store, include,
// reasoning, text or previous_response_id field.
type compactRequest struct {
	Model                string            `json:"model"`
	Input                []json.RawMessage `json:"input"`
	Instructions         string            `json:"instructions,omitempty"`
	ServiceTier          string            `json:"service_tier,omitempty"`
	PromptCacheKey       string            `json:"prompt_cache_key,omitempty"`
	PromptCacheOptions   json.RawMessage   `json:"prompt_cache_options,omitempty"`
	PromptCacheRetention string            `json:"prompt_cache_retention,omitempty"`
}

// Generate sends one POST {base}/responses. System messages and req.System
// become instructions (req.System first); tool schemas are sent with
// tool_choice "none" so the model answers in text; store is false. A
// streamed answer is consumed transparently.
//
// The returned message holds the output text, the reasoning summary as
// Reasoning, and every reasoning or other opaque output item verbatim in
// ReasoningDetails. StopReason is the response status ("completed"), or the
// incomplete_details reason ("max_output_tokens") of an incomplete response.
// A response with no output item is a KindEmpty error; a failed response is
// classified like an HTTP error.
func (c *Client) Generate(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	model := cmp.Or(req.Model, c.cfg.Model)
	if model == "" {
		return nil, c.caller.Fail(model, providers.KindRejected, "no model configured")
	}
	items, system := toInput(req.Messages, true)
	instr := system
	if req.System != "" {
		instr = append([]string{req.System}, system...)
	}
	body := generateRequest{
		Model:           model,
		Instructions:    strings.Join(instr, "\n\n"),
		Input:           items,
		MaxOutputTokens: req.MaxOutputTokens,
		Stream:          c.cfg.Stream,
	}
	if len(req.Tools) > 0 {
		body.Tools = responsesTools(req.Tools)
		body.ToolChoice = "none"
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("openai: encode request: %w", err)
	}
	res, err := c.post(ctx, model, c.ResponsesURL(), raw, c.cfg.Stream)
	if err != nil {
		return nil, err
	}
	if err := c.failure(model, res); err != nil {
		return nil, err
	}
	if len(res.Output) == 0 {
		return nil, c.caller.Fail(model, providers.KindEmpty, "response has no output")
	}
	msg, err := responseMessage(res.Output)
	if err != nil {
		return nil, c.caller.Malformed(model, err)
	}
	out := &providers.Response{Message: msg, Usage: res.usage(), StopReason: res.Status}
	if res.Status == "incomplete" && res.IncompleteDetails != nil && res.IncompleteDetails.Reason != "" {
		out.StopReason = res.IncompleteDetails.Reason
	}
	return c.caller.RedactResponse(out), nil
}

// Compact sends one POST {base}/responses/compact with the docs/design.md §8.3 payload:
// model, input (req.Input as input items, system messages kept in place as
// system message items), and, when set, instructions, service_tier,
// prompt_cache_key, prompt_cache_options and prompt_cache_retention.
//
// The output items become messages: message items map by role ("developer"
// becomes system), function_call items become assistant tool calls (the id is
// call_id, else id, else "tool_call_compacted"), consecutive calls sharing
// one assistant message, function_call_output items become tool results, and
// every other item (for example {"type":"compaction","encrypted_content":…})
// becomes an assistant message with absent content whose ReasoningDetails
// holds the raw item. An empty output is a KindEmpty error; a missing output
// array is KindMalformed.
func (c *Client) Compact(ctx context.Context, req *providers.CompactRequest) (*providers.CompactResponse, error) {
	model := cmp.Or(req.Model, c.cfg.Model)
	if model == "" {
		return nil, c.caller.Fail(model, providers.KindRejected, "no model configured")
	}
	items, _ := toInput(req.Input, false)
	if len(items) == 0 {
		return nil, c.caller.Fail(model, providers.KindRejected, "nothing to compact: the input has no items")
	}
	body := compactRequest{
		Model:                model,
		Input:                items,
		Instructions:         req.Instructions,
		ServiceTier:          req.ServiceTier,
		PromptCacheKey:       req.PromptCacheKey,
		PromptCacheRetention: req.PromptCacheRetention,
	}
	if opts := strings.TrimSpace(string(req.PromptCacheOptions)); opts != "" && opts != "null" {
		body.PromptCacheOptions = req.PromptCacheOptions
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("openai: encode compact request: %w", err)
	}
	res, err := c.post(ctx, model, c.CompactURL(), raw, false)
	if err != nil {
		return nil, err
	}
	if err := c.failure(model, res); err != nil {
		return nil, err
	}
	if res.Output == nil {
		return nil, c.caller.Malformed(model, errors.New("compaction response has no output array"))
	}
	if len(res.Output) == 0 {
		return nil, c.caller.Fail(model, providers.KindEmpty, "compaction response contained no output items")
	}
	msgs, err := compactedMessages(res.Output, req.Input)
	if err != nil {
		return nil, c.caller.Malformed(model, err)
	}
	return c.caller.RedactCompact(&providers.CompactResponse{Output: msgs, Usage: res.usage()}), nil
}

// post sends body and decodes the answer, JSON or event stream.
func (c *Client) post(ctx context.Context, model, endpoint string, body []byte, stream bool) (*response, error) {
	resp, err := c.caller.Post(ctx, httpapi.Call{Model: model, URL: endpoint, Header: c.header(stream), Body: body})
	if err != nil {
		return nil, err
	}
	if httpapi.IsEventStream(resp) {
		defer resp.Body.Close()
		return c.readStream(ctx, model, resp)
	}
	var res response
	if _, err := c.caller.ReadJSON(ctx, model, resp, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// failure returns the classified error of a failed response, or nil.
func (c *Client) failure(model string, res *response) error {
	if res.Status != "failed" && len(res.Error) == 0 {
		return nil
	}
	if len(res.Error) == 0 || string(res.Error) == "null" {
		if res.Status == "failed" {
			return c.caller.Fail(model, providers.KindServer, "response failed without an error")
		}
		return nil
	}
	return c.caller.Classify(model, 0, []byte(`{"error":`+string(res.Error)+`}`), nil)
}

// response is a Responses API response object (also the compaction object).
type response struct {
	ID                string            `json:"id"`
	Object            string            `json:"object"`
	Status            string            `json:"status"`
	Output            []json.RawMessage `json:"output"`
	Usage             *usage            `json:"usage"`
	Error             json.RawMessage   `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
}

type usage struct {
	InputTokens        int `json:"input_tokens"`
	OutputTokens       int `json:"output_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

func (r *response) usage() history.Usage {
	if r.Usage == nil {
		return history.Usage{}
	}
	return history.Usage{
		InputTokens:     r.Usage.InputTokens,
		OutputTokens:    r.Usage.OutputTokens,
		CacheReadTokens: r.Usage.InputTokensDetails.CachedTokens,
		ReasoningTokens: r.Usage.OutputTokensDetails.ReasoningTokens,
	}
}

// responsesTools returns tool schemas in Responses form: chat-completions
// and Anthropic function schemas are translated, everything else (schemas
// already in Responses form, built-in tools) is passed verbatim. A
// translated tool always carries strict: its own flag, else false (the
// default of the form it came from; a Responses tool without strict would be
// strict).
func responsesTools(tools []json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(tools))
	for _, raw := range tools {
		t, form, ok := providers.ParseTool(raw)
		if !ok || form == providers.WireResponses {
			out = append(out, raw)
			continue
		}
		strict := false
		if t.Strict != nil {
			strict = *t.Strict
		}
		b, err := json.Marshal(struct {
			Type        string          `json:"type"`
			Name        string          `json:"name"`
			Description string          `json:"description,omitempty"`
			Parameters  json.RawMessage `json:"parameters,omitempty"`
			Strict      bool            `json:"strict"`
		}{"function", t.Name, t.Description, t.Parameters, strict})
		if err != nil {
			out = append(out, raw)
			continue
		}
		out = append(out, b)
	}
	return out
}
