package transcript

import (
	"encoding/json"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
)

// Codex CLI rollout JSONL: {"timestamp","type","payload"} records. The
// conversation is in response_item records (Responses API items: message,
// reasoning, function_call, function_call_output, custom_tool_call,
// custom_tool_call_output, local_shell_call); session_meta, turn_context and
// event_msg (token counts, UI echoes of the same items) are skipped.

type codexConv struct {
	b   *builder
	out []history.Message
	// open is the index in out of the assistant message that collects
	// consecutive calls and reasoning, or -1.
	open int
	// reasoning waiting for the next assistant item.
	reas    []string
	details []json.RawMessage
	names   map[string]string
}

func convertCodex(lines []line) (*Transcript, error) {
	c := &codexConv{b: newBuilder(FormatCodex), open: -1, names: map[string]string{}}
	for _, l := range lines {
		typ := str(l.obj["type"])
		payload := object(l.obj["payload"])
		switch typ {
		case "response_item":
			if payload == nil {
				c.b.skip("response_item/invalid")
				continue
			}
			c.item(payload, l.obj["payload"])
		case "compacted":
			// Codex's own compaction: the summary that replaced the history
			// (an older CLI's message), or the replacement history itself,
			// which is kept for AgentCompactions only.
			if payload != nil && str(payload["message"]) != "" {
				c.flushReasoning()
				c.open = -1
				c.out = append(c.out, history.NewText(history.User, str(payload["message"])))
				c.b.t.compactions = append(c.b.t.compactions, AgentCompaction{At: len(c.out) - 1, Summary: []history.Message{c.out[len(c.out)-1]}})
				continue
			}
			if payload != nil && len(rawArray(payload["replacement_history"])) > 0 {
				c.b.t.compactions = append(c.b.t.compactions, AgentCompaction{At: len(c.out), Summary: codexReplacement(payload["replacement_history"])})
			}
			c.b.skip(typ)
		case "event_msg":
			kind := typ
			if payload != nil && str(payload["type"]) != "" {
				kind += "/" + str(payload["type"])
			}
			c.b.skip(kind)
		default:
			if typ == "" {
				typ = "unknown"
			}
			c.b.skip(typ)
		}
	}
	c.flushReasoning()
	for _, m := range c.out {
		c.b.add(m)
	}
	return c.b.done(), nil
}

// assistant returns the open assistant message, starting one (with any
// pending reasoning) when none is open.
func (c *codexConv) assistant() *history.Message {
	if c.open < 0 {
		c.out = append(c.out, history.Message{Role: history.Assistant})
		c.open = len(c.out) - 1
	}
	m := &c.out[c.open]
	if len(c.reas) > 0 {
		if m.Reasoning != "" {
			m.Reasoning += "\n\n"
		}
		m.Reasoning += strings.Join(c.reas, "\n\n")
	}
	m.ReasoningDetails = append(m.ReasoningDetails, c.details...)
	c.reas, c.details = nil, nil
	return m
}

// flushReasoning turns reasoning that no assistant item followed into an
// assistant message of its own.
func (c *codexConv) flushReasoning() {
	if len(c.details) == 0 && len(c.reas) == 0 {
		return
	}
	c.open = -1
	c.assistant()
	c.open = -1
}

func (c *codexConv) item(p map[string]json.RawMessage, raw json.RawMessage) {
	typ := str(p["type"])
	switch typ {
	case "message":
		role := str(p["role"])
		content := codexContent(p["content"])
		switch role {
		case "assistant":
			m := c.assistant()
			if len(m.ToolCalls) > 0 || !m.Content.IsAbsent() {
				// Text after calls starts a new message.
				c.open = -1
				m = c.assistant()
			}
			m.Content = content
			m.ID = str(p["id"])
			c.open = -1
		case "user", "system", "developer":
			c.flushReasoning()
			c.open = -1
			r := history.Role(role)
			if role == "developer" {
				r = history.System
			}
			c.out = append(c.out, history.Message{ID: str(p["id"]), Role: r, Content: content})
		default:
			c.b.skip("response_item/message:" + role)
		}
	case "reasoning":
		var texts []string
		for _, key := range []string{"summary", "content"} {
			for _, e := range rawArray(p[key]) {
				if o := object(e); o != nil && str(o["text"]) != "" {
					texts = append(texts, str(o["text"]))
				}
			}
		}
		if len(texts) > 0 {
			c.reas = append(c.reas, strings.Join(texts, "\n"))
		}
		c.details = append(c.details, compact(raw))
		if c.open >= 0 && len(c.out[c.open].ToolCalls) > 0 {
			c.open = -1 // reasoning between calls: the next call is a new response
		}
	case "function_call", "custom_tool_call", "local_shell_call":
		m := c.assistant()
		id := c.b.callID(firstNonEmpty(str(p["call_id"]), str(p["id"])))
		tc := history.ToolCall{ID: id, Name: str(p["name"])}
		switch typ {
		case "function_call":
			tc.Arguments = str(p["arguments"])
		case "custom_tool_call":
			tc.Input = str(p["input"])
		case "local_shell_call":
			tc.Name = "local_shell"
			if a := p["action"]; !isNull(a) {
				tc.Arguments = string(compact(a))
			}
		}
		c.names[id] = tc.Name
		m.ToolCalls = append(m.ToolCalls, tc)
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		c.flushReasoning()
		c.open = -1
		id := str(p["call_id"])
		c.out = append(c.out, history.Message{Role: history.Tool, ToolCallID: id, ToolName: c.names[id], Content: codexOutput(p["output"])})
	default:
		c.b.skip("response_item/" + typ)
	}
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// codexContent converts Responses content items: input_text/output_text become
// text, anything else is kept verbatim.
func codexContent(v json.RawMessage) history.Content {
	if isNull(v) {
		return history.Content{}
	}
	if v[0] == '"' {
		return history.Text(str(v))
	}
	var parts []history.Part
	for _, raw := range rawArray(v) {
		o := object(raw)
		if o == nil {
			continue
		}
		switch str(o["type"]) {
		case "input_text", "output_text", "text":
			parts = append(parts, history.TextPart(str(o["text"])))
		default:
			parts = append(parts, history.Part{Type: str(o["type"]), Raw: compact(raw)})
		}
	}
	return joinParts(parts)
}

// codexOutput converts a function call output: a string (often JSON text with
// the command output and exit code, kept as is), or an object/array of content.
func codexOutput(v json.RawMessage) history.Content {
	switch {
	case isNull(v):
		return history.Text("")
	case v[0] == '"':
		return history.Text(str(v))
	case v[0] == '[':
		return codexContent(v)
	}
	if o := object(v); o != nil {
		if c, ok := o["content"]; ok && len(c) > 0 && c[0] == '"' {
			return history.Text(str(c))
		}
	}
	return history.Text(string(compact(v)))
}
