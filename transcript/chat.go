package transcript

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
)

// OpenAI chat-completions messages: {role, content, tool_calls, tool_call_id,
// name, reasoning_content}. mini-swe-agent and SWE-agent histories use the same
// shape with extra bookkeeping fields.

func isMiniSWEAgent(o map[string]json.RawMessage) bool {
	if strings.HasPrefix(str(o["trajectory_format"]), "mini-swe-agent") {
		return true
	}
	info := object(o["info"])
	return hasKey(o, "messages") && info != nil && hasKey(info, "mini_version")
}

func isSWEAgent(o map[string]json.RawMessage) bool {
	if !hasKey(o, "history") && !hasKey(o, "trajectory") {
		return false
	}
	if h, ok := objectArray(o["history"]); ok && len(h) > 0 && hasKey(h[0], "role") {
		return true
	}
	if tr, ok := objectArray(o["trajectory"]); ok && len(tr) > 0 && (hasKey(tr[0], "action") || hasKey(tr[0], "observation")) && !isEvent(tr[0]) {
		return true
	}
	return false
}

// chatFields are the message fields the chat reader converts.
var chatFields = map[string]bool{
	"role": true, "content": true, "id": true, "name": true, "tool_calls": true, "tool_call_id": true,
	"tool_call_ids": true, "function_call": true, "reasoning_content": true, "reasoning": true,
}

// chatConv pairs tool messages without a tool_call_id with the oldest
// unanswered call, so synthesized call ids stay paired.
type chatConv struct {
	b          *builder
	unanswered []history.ToolCall
	names      map[string]string // call id → tool name
}

// textProtocol is how an agent that talks to its model in plain text
// (mini-swe-agent, SWE-agent without function calling) marks its actions:
// action returns the command an assistant message runs ("" for none), and
// observation reports whether the user-role message after it is that
// command's output. Each such pair is imported as a tool call and its
// result, which is what it was: the command and what it printed.
type textProtocol struct {
	action      func(o map[string]json.RawMessage, text string) string
	observation func(text string) bool
}

// miniSWEAction is mini-swe-agent's action syntax: exactly one bash block.
var miniSWEAction = regexp.MustCompile("(?s)```bash\\s*\\n(.*?)\\n```")

// miniSWEProtocol: the action is the message's only bash block, and its
// observation starts with the return code.
var miniSWEProtocol = &textProtocol{
	action: func(_ map[string]json.RawMessage, text string) string {
		if m := miniSWEAction.FindAllStringSubmatch(text, 2); len(m) == 1 {
			return strings.TrimSpace(m[0][1])
		}
		return ""
	},
	observation: func(text string) bool { return strings.HasPrefix(strings.TrimSpace(text), "<returncode>") },
}

// submitting returns the protocol of a trajectory whose run ended by
// submitting: mini-swe-agent records the output of its submit command (the
// patch, info.submission) as a user message without a return code, which
// is that command's output too.
func (p *textProtocol) submitting(submission string) *textProtocol {
	submission = strings.TrimSpace(submission)
	if submission == "" {
		return p
	}
	q := *p
	q.observation = func(text string) bool {
		return p.observation(text) || strings.TrimSpace(text) == submission
	}
	return &q
}

// sweAgentProtocol: the action is the message's action field, and the user
// message that follows it is its observation.
var sweAgentProtocol = &textProtocol{
	action:      func(o map[string]json.RawMessage, _ string) string { return strings.TrimSpace(str(o["action"])) },
	observation: func(string) bool { return true },
}

func convertChat(objs []map[string]json.RawMessage, format string, proto *textProtocol) (*Transcript, error) {
	c := &chatConv{b: newBuilder(format), names: map[string]string{}}
	var action *history.ToolCall // the text action the next message answers
	for i, o := range objs {
		m, ok, err := c.message(o)
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		if !ok {
			continue
		}
		switch {
		case action != nil && m.Role == history.User:
			m.Role, m.ToolCallID, m.ToolName = history.Tool, action.ID, action.Name
			action = nil
		case proto != nil && m.Role == history.Assistant && len(m.ToolCalls) == 0 && i+1 < len(objs):
			next := objs[i+1]
			if cmd := proto.action(o, m.Content.Text()); cmd != "" && str(next["role"]) == "user" {
				if nc, err := contentOf(next["content"]); err == nil && proto.observation(nc.Text()) {
					call := history.ToolCall{ID: c.b.callID(""), Name: "bash", Input: cmd}
					m.ToolCalls, action = []history.ToolCall{call}, &call
				}
			}
		}
		c.b.add(m)
	}
	return c.b.done(), nil
}

// message converts one chat message; ok is false when it was skipped.
func (c *chatConv) message(o map[string]json.RawMessage) (history.Message, bool, error) {
	role := str(o["role"])
	m := history.Message{ID: str(o["id"])}
	switch role {
	case "system", "developer":
		m.Role = history.System
	case "user":
		m.Role = history.User
	case "assistant":
		m.Role = history.Assistant
	case "tool", "function":
		m.Role = history.Tool
	default:
		c.b.skip("role:" + role)
		c.b.drop("roles", role)
		return m, false, nil
	}
	for k, v := range o {
		if !chatFields[k] && len(v) > 64 && (v[0] == '[' || v[0] == '{') {
			c.b.drop("fields", k) // structured content this reader does not know
		}
	}
	content, err := contentOf(o["content"])
	if err != nil {
		return m, false, err
	}
	if role != "assistant" && content.IsAbsent() {
		content = history.Text("")
	}
	m.Content = content
	if r := firstNonEmpty(str(o["reasoning_content"]), str(o["reasoning"])); r != "" && m.Role == history.Assistant {
		m.Reasoning = r
	}
	switch m.Role {
	case history.Assistant:
		for _, raw := range rawArray(o["tool_calls"]) {
			tc := object(raw)
			if tc == nil {
				continue
			}
			call := history.ToolCall{ID: str(tc["id"])}
			if fn := object(tc["function"]); fn != nil {
				call.Name = str(fn["name"])
				call.Arguments = argumentsOf(fn["arguments"])
			} else if str(tc["type"]) == "custom" {
				if cu := object(tc["custom"]); cu != nil {
					call.Name = str(cu["name"])
					call.Input = str(cu["input"])
				}
			} else {
				call.Name = str(tc["name"])
				call.Arguments = argumentsOf(tc["arguments"])
			}
			call.ID = c.b.callID(call.ID)
			m.ToolCalls = append(m.ToolCalls, call)
		}
		if fc := object(o["function_call"]); fc != nil && len(m.ToolCalls) == 0 {
			m.ToolCalls = append(m.ToolCalls, history.ToolCall{ID: c.b.callID(""), Name: str(fc["name"]), Arguments: argumentsOf(fc["arguments"])})
		}
		c.unanswered = append(c.unanswered, m.ToolCalls...)
		for _, tc := range m.ToolCalls {
			c.names[tc.ID] = tc.Name
		}
	case history.Tool:
		m.ToolCallID = str(o["tool_call_id"])
		if m.ToolCallID == "" {
			if ids := rawArray(o["tool_call_ids"]); len(ids) > 0 {
				m.ToolCallID = str(ids[0])
			}
		}
		m.ToolName = str(o["name"])
		if m.ToolCallID == "" && len(c.unanswered) > 0 {
			m.ToolCallID = c.unanswered[0].ID
			if m.ToolName == "" {
				m.ToolName = c.unanswered[0].Name
			}
		}
		if m.ToolName == "" {
			m.ToolName = c.names[m.ToolCallID]
		}
		c.answer(m.ToolCallID)
		if m.ToolCallID == "" {
			// A result that answers nothing is plain output for the model.
			m.Role = history.User
			m.ToolName = ""
		}
	}
	return m, true, nil
}

func (c *chatConv) answer(id string) {
	for i, tc := range c.unanswered {
		if tc.ID == id {
			c.unanswered = append(c.unanswered[:i], c.unanswered[i+1:]...)
			return
		}
	}
}

// argumentsOf returns arguments as JSON text: a string as is, an object compacted.
func argumentsOf(v json.RawMessage) string {
	if isNull(v) {
		return ""
	}
	if v[0] == '"' {
		return str(v)
	}
	return string(compact(v))
}

// convertSWEAgent converts a SWE-agent .traj: the history when it has one,
// otherwise the trajectory of (thought, action, observation) steps.
func convertSWEAgent(o map[string]json.RawMessage) (*Transcript, error) {
	if h, ok := objectArray(o["history"]); ok && len(h) > 0 {
		t, err := convertChat(h, FormatSWEAgent, sweAgentProtocol)
		if err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
		return t, nil
	}
	steps, _ := objectArray(o["trajectory"])
	b := newBuilder(FormatSWEAgent)
	for _, s := range steps {
		action := str(s["action"])
		text := firstNonEmpty(str(s["response"]), str(s["thought"]))
		m := history.Message{Role: history.Assistant, Content: history.Text(text)}
		if strings.TrimSpace(action) != "" {
			call := history.ToolCall{ID: b.callID(""), Name: "bash", Input: action}
			m.ToolCalls = []history.ToolCall{call}
			b.add(m)
			b.add(history.NewToolResult(call.ID, call.Name, str(s["observation"])))
			continue
		}
		b.add(m)
	}
	return b.done(), nil
}
