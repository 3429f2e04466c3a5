// Package chatcompat is the client of OpenAI-compatible chat completions
// routes: openrouter, deepseek, gemini (Google's OpenAI-compatible
// endpoint), minimax, merge, and local servers (ollama, llama.cpp server).
// It implements [providers.Generator] with a non-streaming POST
// {base}/chat/completions ("stream": false), consuming a server-sent event
// stream transparently when a server streams anyway, over plain net/http.
// These routes have no native compaction endpoint: they serve local
// summaries.
//
// History messages map to chat messages one to one: assistant tool calls
// become "tool_calls" (with Gemini's thought signature under
// extra_content.google.thought_signature on the gemini route), tool results
// "tool" messages. Reasoning text is not sent back (DeepSeek rejects
// reasoning_content in input), and opaque blocks of other wire formats in
// ReasoningDetails are not sent. Tool schemas are sent with tool_choice
// "none".
//
// Responses: the message content becomes the text (a leading
// <think>…</think> block of local reasoning models becomes Reasoning), and
// reasoning_content (DeepSeek, llama.cpp) or reasoning (OpenRouter) becomes
// Reasoning; OpenRouter's reasoning_details are kept in ReasoningDetails.
package chatcompat

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/catalog"
	"github.com/vtcode/vtcode-ls/providers/httpapi"
)

// Config configures a Client. Provider is required: "openrouter",
// "deepseek", "gemini", "minimax", "merge", "ollama", "llamacpp", or another
// OpenAI-compatible server, which needs a BaseURL. The API key is sent as a
// bearer token; without one no Authorization header is sent (local
// servers). Stream also asks for usage in the last chunk. Header can carry,
// for example, OpenRouter's HTTP-Referer and X-Title.
type Config struct {
	httpapi.Endpoint
}

// Client is a chat completions client. It is safe for concurrent use.
type Client struct {
	cfg    Config
	base   string
	caller *httpapi.Caller
}

var _ providers.Generator = (*Client)(nil)

// New returns a client for cfg. It fails when the route has no base URL or
// the base URL is not an absolute http(s) URL.
func New(cfg Config) (*Client, error) {
	cfg.Provider = catalog.CanonicalProvider(cfg.Provider)
	if cfg.Provider == "" {
		return nil, fmt.Errorf("chatcompat: provider name required")
	}
	base, caller, err := cfg.Resolve(cfg.Provider)
	if err != nil {
		return nil, fmt.Errorf("chatcompat: %w", err)
	}
	return &Client{cfg: cfg, base: base, caller: caller}, nil
}

// Route returns the client's route: provider, default model and configured
// base URL.
func (c *Client) Route() providers.Route { return c.cfg.Route() }

// CompletionsURL returns the generation endpoint: /v1/chat/completions on the
// base URL ([httpapi.APIURL]).
func (c *Client) CompletionsURL() string { return httpapi.JoinURL(c.base, "/v1/chat/completions") }

type request struct {
	Model         string            `json:"model"`
	Messages      []chatMessage     `json:"messages"`
	Tools         []json.RawMessage `json:"tools,omitempty"`
	ToolChoice    string            `json:"tool_choice,omitempty"`
	MaxTokens     int               `json:"max_tokens,omitempty"`
	Stream        bool              `json:"stream"`
	StreamOptions *streamOptions    `json:"stream_options,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role       string     `json:"role"`
	Content    any        `json:"content"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type toolCall struct {
	Index        *int            `json:"index,omitempty"`
	ID           string          `json:"id,omitempty"`
	Type         string          `json:"type,omitempty"`
	Function     function        `json:"function"`
	ExtraContent json.RawMessage `json:"extra_content,omitempty"`
}

type function struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// Generate sends one POST {base}/chat/completions. req.System comes first as
// a system message; history system messages stay in place. StopReason is the
// choice's finish_reason. An answer without choices is a KindEmpty error; an
// error object in a 200 answer is classified like an HTTP error.
func (c *Client) Generate(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	model := cmp.Or(req.Model, c.cfg.Model)
	if model == "" {
		return nil, c.caller.Fail(model, providers.KindRejected, "no model configured")
	}
	body := request{Model: model, MaxTokens: req.MaxOutputTokens, Stream: c.cfg.Stream}
	if req.System != "" {
		body.Messages = append(body.Messages, chatMessage{Role: "system", Content: req.System})
	}
	body.Messages = append(body.Messages, c.messages(req.Messages)...)
	if len(req.Tools) > 0 {
		body.Tools = chatTools(req.Tools)
		body.ToolChoice = "none"
	}
	if c.cfg.Stream {
		body.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("chatcompat: encode request: %w", err)
	}
	h := c.cfg.RequestHeader(c.cfg.Stream)
	if c.cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.caller.Post(ctx, httpapi.Call{Model: model, URL: c.CompletionsURL(), Header: h, Body: raw})
	if err != nil {
		return nil, err
	}
	var res *completion
	if httpapi.IsEventStream(resp) {
		defer resp.Body.Close()
		res, err = c.readStream(ctx, model, resp)
		if err != nil {
			return nil, err
		}
	} else {
		res = &completion{}
		data, err := c.caller.ReadJSON(ctx, model, resp, res)
		if err != nil {
			return nil, err
		}
		if len(res.Error) > 0 && string(res.Error) != "null" {
			return nil, c.caller.Classify(model, 0, data, nil)
		}
	}
	if len(res.Choices) == 0 {
		return nil, c.caller.Fail(model, providers.KindEmpty, "response has no choices")
	}
	msg, err := res.Choices[0].Message.toHistory()
	if err != nil {
		return nil, c.caller.Malformed(model, err)
	}
	return c.caller.RedactResponse(&providers.Response{Message: msg, Usage: res.usage(), StopReason: res.Choices[0].FinishReason}), nil
}

// messages converts history messages to chat messages.
func (c *Client) messages(msgs []history.Message) []chatMessage {
	out := make([]chatMessage, 0, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		switch m.Role {
		case history.System, history.User:
			content, ok := chatContent(m.Content)
			if !ok {
				continue
			}
			out = append(out, chatMessage{Role: string(m.Role), Content: content})
		case history.Assistant:
			cm := chatMessage{Role: "assistant"}
			if t := m.Text(); t != "" {
				cm.Content = t
			}
			for _, tc := range m.ToolCalls {
				args := tc.Arguments
				if args == "" && tc.Input != "" {
					b, _ := json.Marshal(map[string]string{"input": tc.Input})
					args = string(b)
				}
				if strings.TrimSpace(args) == "" {
					args = "{}"
				}
				call := toolCall{ID: tc.ID, Type: "function", Function: function{Name: tc.Name, Arguments: args}}
				if c.cfg.Provider == "gemini" && tc.ThoughtSignature != "" {
					call.ExtraContent, _ = json.Marshal(map[string]any{"google": map[string]string{"thought_signature": tc.ThoughtSignature}})
				}
				cm.ToolCalls = append(cm.ToolCalls, call)
			}
			if cm.Content == nil && len(cm.ToolCalls) == 0 {
				continue // opaque blocks only: nothing a chat route can replay
			}
			out = append(out, cm)
		case history.Tool:
			out = append(out, chatMessage{Role: "tool", ToolCallID: m.ToolCallID, Content: m.Text()})
		}
	}
	return out
}

// chatContent returns a string for text content, parts when media is
// present; ok is false for empty content.
func chatContent(c history.Content) (any, bool) {
	parts := c.PartList()
	media := false
	for _, p := range parts {
		if p.Raw != nil && p.Type != "text" {
			media = true
		}
	}
	if !media {
		t := c.Text()
		return t, strings.TrimSpace(t) != ""
	}
	out := make([]any, 0, len(parts))
	for _, p := range parts {
		out = append(out, chatPart(p))
	}
	return out, true
}

type textPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// chatPart converts a content part to a chat-completions part: text,
// image_url, input_audio and file parts pass, images of the other formats
// become image_url parts, anything else a short text placeholder.
func chatPart(p history.Part) any {
	switch p.Type {
	case "text":
		return textPart{"text", p.Text}
	case "image_url", "input_audio", "file":
		return p.Raw
	}
	if u, ok := providers.ImageURL(p); ok {
		return map[string]any{"type": "image_url", "image_url": map[string]string{"url": u}}
	}
	return textPart{"text", "[" + p.Type + " part omitted]"}
}

// chatTools returns tool schemas in chat-completions form: Responses and
// Anthropic function schemas are translated (with their strict flag when
// they set one), everything else passes verbatim.
func chatTools(tools []json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(tools))
	for _, raw := range tools {
		t, form, ok := providers.ParseTool(raw)
		if !ok || form == providers.WireChat {
			out = append(out, raw)
			continue
		}
		type fn struct {
			Name        string          `json:"name"`
			Description string          `json:"description,omitempty"`
			Parameters  json.RawMessage `json:"parameters,omitempty"`
			Strict      *bool           `json:"strict,omitempty"`
		}
		b, err := json.Marshal(struct {
			Type     string `json:"type"`
			Function fn     `json:"function"`
		}{"function", fn{t.Name, t.Description, t.Parameters, t.Strict}})
		if err != nil {
			out = append(out, raw)
			continue
		}
		out = append(out, b)
	}
	return out
}
