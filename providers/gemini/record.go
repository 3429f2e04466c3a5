package gemini

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers/proxywire"
)

// response is a GenerateContentResponse, or one chunk of a stream of them.
type response struct {
	Candidates []struct {
		Content struct {
			Role  string            `json:"role"`
			Parts []json.RawMessage `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	UsageMetadata *usageMetadata   `json:"usageMetadata"`
	Error         *json.RawMessage `json:"error"`
}

// usageMetadata is a response's token counts. promptTokenCount includes
// the cached tokens; thoughts are billed as output.
type usageMetadata struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
	ToolUsePromptTokenCount int `json:"toolUsePromptTokenCount"`
	TotalTokenCount         int `json:"totalTokenCount"`
}

func (u *usageMetadata) usage() *history.Usage {
	if u == nil {
		return nil
	}
	return &history.Usage{
		InputTokens:     u.PromptTokenCount + u.ToolUsePromptTokenCount,
		OutputTokens:    u.CandidatesTokenCount + u.ThoughtsTokenCount,
		CacheReadTokens: u.CachedContentTokenCount,
	}
}

// answer accumulates the first candidate of one response or stream.
type answer struct {
	parts  []json.RawMessage
	finish string
	usage  *usageMetadata
	failed string
}

func (a *answer) add(r *response) {
	if r.Error != nil {
		a.failed = "the stream carried an error"
		return
	}
	if r.PromptFeedback != nil && r.PromptFeedback.BlockReason != "" {
		a.failed = "the prompt was blocked: " + r.PromptFeedback.BlockReason
	}
	if r.UsageMetadata != nil {
		a.usage = r.UsageMetadata
	}
	if len(r.Candidates) == 0 {
		return
	}
	c := r.Candidates[0]
	a.parts = append(a.parts, c.Content.Parts...)
	if c.FinishReason != "" {
		a.finish = c.FinishReason
	}
}

func (a *answer) recorded() (history.Response, error) {
	if a.failed != "" {
		return history.Response{}, errors.New(a.failed)
	}
	if a.finish == "" {
		return history.Response{}, proxywire.ErrIncomplete
	}
	parts := mergeText(a.parts)
	heads := make([]part, len(parts))
	for i, p := range parts {
		if err := json.Unmarshal(p, &heads[i]); err != nil {
			return history.Response{}, fmt.Errorf("gemini response: parts[%d]: must be an object", i)
		}
	}
	return history.Response{Message: assistantMessage(parts, heads), Usage: a.usage.usage(), StopReason: a.finish}, nil
}

// mergeText joins the text pieces of a stream the way a client keeps them:
// consecutive plain text parts (thought or not, without other fields) are
// one part. Other parts are kept as they came.
func mergeText(parts []json.RawMessage) []json.RawMessage {
	var out []json.RawMessage
	type piece struct {
		Text    *string `json:"text"`
		Thought bool    `json:"thought"`
	}
	var run *piece
	var runRaw json.RawMessage
	flush := func() {
		if run != nil {
			m := map[string]any{"text": *run.Text}
			if run.Thought {
				m["thought"] = true
			}
			out = append(out, mustJSON(m))
			run = nil
		} else if runRaw != nil {
			out = append(out, runRaw)
		}
		runRaw = nil
	}
	for _, p := range parts {
		fields := rawFields(p)
		var pc piece
		_ = json.Unmarshal(p, &pc)
		plain := pc.Text != nil && (len(fields) == 1 || (len(fields) == 2 && fields["thought"] != nil))
		if !plain {
			flush()
			out = append(out, p)
			continue
		}
		if run != nil && run.Thought == pc.Thought {
			s := *run.Text + *pc.Text
			run.Text = &s
			continue
		}
		flush()
		run = &pc
	}
	flush()
	return out
}

// Recorder records the assistant message of a streamGenerateContent
// (alt=sse) answer passed through a proxy: every event is a response chunk;
// the stream is complete once a candidate gave its finishReason.
func Recorder() *proxywire.SSERecorder {
	a := &answer{}
	on := func(_, data string) error {
		var r response
		if err := json.Unmarshal([]byte(data), &r); err != nil {
			return fmt.Errorf("gemini stream event: %w", err)
		}
		a.add(&r)
		if a.failed != "" {
			return errors.New(a.failed)
		}
		return nil
	}
	return proxywire.NewSSERecorder(on, a.recorded)
}

// Record reads a generateContent answer body. A JSON array of chunks (what
// streamGenerateContent sends without alt=sse) is read as a stream.
func Record(body []byte) (history.Response, error) {
	a := &answer{}
	var chunks []response
	if json.Unmarshal(body, &chunks) == nil {
		for i := range chunks {
			a.add(&chunks[i])
		}
		return a.recorded()
	}
	var r response
	if err := json.Unmarshal(body, &r); err != nil {
		return history.Response{}, fmt.Errorf("gemini response: %w", err)
	}
	a.add(&r)
	return a.recorded()
}
