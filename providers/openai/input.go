package openai

import (
	"encoding/json"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
)

// toInput converts history messages to Responses input items. With
// liftSystem, system messages are returned as instruction texts instead of
// items.
func toInput(msgs []history.Message, liftSystem bool) (items []json.RawMessage, system []string) {
	custom := map[string]bool{} // call ids of freeform (custom) tool calls
	add := func(v any) {
		if b, err := json.Marshal(v); err == nil {
			items = append(items, b)
		}
	}
	for i := range msgs {
		m := &msgs[i]
		switch m.Role {
		case history.System:
			if liftSystem {
				if t := m.Text(); strings.TrimSpace(t) != "" {
					system = append(system, t)
				}
				continue
			}
			if c, ok := inputContent(m.Content); ok {
				add(messageItem{Type: "message", Role: "system", Content: c})
			}
		case history.User:
			if c, ok := inputContent(m.Content); ok {
				add(messageItem{Type: "message", Role: "user", Content: c})
			}
		case history.Assistant:
			for _, d := range m.ReasoningDetails {
				if obj, typ, ok := providers.DetailObject(d); ok && replayable(obj, typ) {
					items = append(items, inputItem(obj, typ))
				}
			}
			if t := m.Text(); t != "" {
				add(messageItem{Type: "message", Role: "assistant", Content: t, Phase: phaseOf(m)})
			}
			for _, tc := range m.ToolCalls {
				if tc.Input != "" && tc.Arguments == "" {
					custom[tc.ID] = true
					add(customCall{Type: "custom_tool_call", CallID: tc.ID, Name: tc.Name, Input: tc.Input})
					continue
				}
				args := tc.Arguments
				if strings.TrimSpace(args) == "" {
					args = "{}"
				}
				add(functionCall{Type: "function_call", CallID: tc.ID, Name: tc.Name, Arguments: args})
			}
		case history.Tool:
			typ := "function_call_output"
			if custom[m.ToolCallID] {
				typ = "custom_tool_call_output"
			}
			add(callOutput{Type: typ, CallID: m.ToolCallID, Output: m.Text()})
		}
	}
	return items, system
}

type messageItem struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	Content any    `json:"content"`
	// Phase labels an assistant message "commentary" or "final_answer";
	// models from gpt-5.3-codex on want it back on every assistant message.
	Phase string `json:"phase,omitempty"`
}

// PhaseKey is the history.Message Extra field holding an assistant
// message's Responses phase ("commentary", "final_answer"), kept from the
// output message item and sent back on replay.
const PhaseKey = "phase"

// phaseOf returns an assistant message's phase, or "".
func phaseOf(m *history.Message) string {
	var p string
	if raw, ok := m.Extra[PhaseKey]; ok && json.Unmarshal(raw, &p) == nil {
		return p
	}
	return ""
}

// compactionItem is the input form of a compaction item: the output item
// has more fields (created_by), which the input does not take.
type compactionItem struct {
	Type             string `json:"type"`
	ID               string `json:"id,omitempty"`
	EncryptedContent string `json:"encrypted_content"`
}

// inputItem returns a replayed output item in its input form: a compaction
// item keeps only type, id and encrypted_content; other items pass
// verbatim.
func inputItem(obj json.RawMessage, typ string) json.RawMessage {
	if typ != "compaction" {
		return obj
	}
	var v compactionItem
	if json.Unmarshal(obj, &v) != nil {
		return obj
	}
	v.Type = "compaction"
	b, err := json.Marshal(v)
	if err != nil {
		return obj
	}
	return b
}

type functionCall struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type customCall struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Name   string `json:"name"`
	Input  string `json:"input"`
}

type callOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

type textPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// inputContent returns the content of a user or system message item: a
// string for plain text, input parts when the message has media. ok is false
// for a message with no content.
func inputContent(c history.Content) (any, bool) {
	parts := c.PartList()
	if parts == nil {
		t := c.Text()
		return t, strings.TrimSpace(t) != ""
	}
	plain := true
	for _, p := range parts {
		if p.Raw != nil {
			plain = false
		}
	}
	if plain {
		if len(parts) == 1 {
			return parts[0].Text, strings.TrimSpace(parts[0].Text) != ""
		}
		out := make([]any, 0, len(parts))
		for _, p := range parts {
			out = append(out, textPart{"input_text", p.Text})
		}
		return out, len(out) > 0
	}
	out := make([]any, 0, len(parts))
	for _, p := range parts {
		out = append(out, inputPart(p))
	}
	return out, len(out) > 0
}

// inputPart converts one content part to a Responses input part: Responses
// parts pass verbatim, images of the other formats become input_image parts,
// files input_file parts, anything else a short text placeholder.
func inputPart(p history.Part) any {
	switch p.Type {
	case "input_text", "input_image", "input_file", "input_audio":
		return p.Raw
	case "text":
		return textPart{"input_text", p.Text}
	case "file":
		var v map[string]any
		_ = json.Unmarshal(p.Raw, &v)
		f := map[string]any{"type": "input_file"}
		for _, k := range []string{"file_id", "file_data", "file_url", "filename"} {
			if s, ok := v[k].(string); ok && s != "" {
				f[k] = s
			}
		}
		if len(f) > 1 {
			return f
		}
	}
	if url, ok := providers.ImageURL(p); ok {
		return map[string]string{"type": "input_image", "image_url": url, "detail": "auto"}
	}
	return textPart{"input_text", "[" + p.Type + " part omitted]"}
}

// replayable reports whether a reasoningDetails object is a Responses item
// to send back verbatim. Anthropic blocks (thinking, redacted_thinking,
// compaction blocks with a content field, server tool blocks) and
// chat-completions reasoning details ("reasoning.text", ...) belong to other
// wire formats and are skipped.
func replayable(obj json.RawMessage, typ string) bool {
	switch {
	case typ == "", typ == "thinking", typ == "redacted_thinking",
		strings.HasPrefix(typ, "reasoning."),
		strings.HasSuffix(typ, "_tool_result"), typ == "server_tool_use":
		return false
	case typ == "compaction":
		c := providers.CompactionOf(obj)
		return c != providers.AnthropicCompaction && c != providers.FailedCompaction
	}
	return true
}
