package transcript

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
)

// OpenHands event history: a stream of events, each an action
// ({"action":"run","args":{...}}) or an observation
// ({"observation":"run","content":...,"cause":<action id>}). Events recorded
// with function calling carry tool_call_metadata, with the raw model response
// (OpenAI-style tool_calls) and the call id; that is what the model saw, so it
// is used when present. recall actions and observations (workspace context
// retrieval) are skipped.

func isEvent(o map[string]json.RawMessage) bool {
	if str(o["action"]) == "" && str(o["observation"]) == "" {
		return false
	}
	return hasKey(o, "source") || hasKey(o, "timestamp")
}

func isOpenHandsInstance(o map[string]json.RawMessage) bool {
	h, ok := objectArray(o["history"])
	return ok && len(h) > 0 && isEvent(h[0])
}

func convertOpenHandsLines(lines []line) (*Transcript, error) {
	var convs [][]map[string]json.RawMessage
	var events []map[string]json.RawMessage
	for _, l := range lines {
		if isOpenHandsInstance(l.obj) {
			h, _ := objectArray(l.obj["history"])
			convs = append(convs, h)
			continue
		}
		events = append(events, l.obj)
	}
	if len(events) > 0 {
		convs = append(convs, events)
	}
	return convertOpenHands(convs)
}

type ohConv struct {
	b         *builder
	responses map[string]int    // model response id → index of its assistant message
	causes    map[string]string // action event id → synthesized call id
	names     map[string]string // call id → tool name
}

func convertOpenHands(convs [][]map[string]json.RawMessage) (*Transcript, error) {
	c := &ohConv{b: newBuilder(FormatOpenHands)}
	for _, events := range convs {
		c.responses = map[string]int{}
		c.causes = map[string]string{}
		c.names = map[string]string{}
		for _, e := range events {
			if a := str(e["action"]); a != "" {
				c.action(a, e)
			} else {
				c.observation(str(e["observation"]), e)
			}
		}
	}
	c.b.t.Conversations = len(convs)
	return c.b.done(), nil
}

func (c *ohConv) action(kind string, e map[string]json.RawMessage) {
	args := object(e["args"])
	meta := object(e["tool_call_metadata"])
	switch {
	case kind == "system":
		c.b.add(history.NewText(history.System, firstNonEmpty(str(args["content"]), str(e["message"]))))
		return
	case kind == "recall" || kind == "null" || kind == "change_agent_state":
		c.b.skip("action/" + kind)
		return
	case kind == "message" && meta == nil:
		text := firstNonEmpty(str(args["content"]), str(e["message"]))
		role := history.Assistant
		if str(e["source"]) == "user" {
			role = history.User
		}
		c.b.add(history.NewText(role, text))
		return
	}
	if meta != nil {
		c.toolAction(kind, e, args, meta)
		return
	}
	// An action recorded without function calling: synthesize the call.
	id := c.b.callID("")
	c.causes[rawID(e["id"])] = id
	c.names[id] = kind
	m := history.Message{Role: history.Assistant, Content: history.Text(thoughtOf(args))}
	m.ToolCalls = []history.ToolCall{{ID: id, Name: kind, Arguments: argsJSON(args)}}
	c.b.add(m)
}

func (c *ohConv) toolAction(kind string, e, args, meta map[string]json.RawMessage) {
	callID := str(meta["tool_call_id"])
	name := firstNonEmpty(str(meta["function_name"]), kind)
	resp := object(meta["model_response"])
	respID := ""
	if resp != nil {
		respID = str(resp["id"])
	}
	if idx, ok := c.responses[respID]; ok && respID != "" {
		m := &c.b.t.Messages[idx]
		for _, tc := range m.ToolCalls {
			if tc.ID == callID {
				return // this action is one of the response's calls, already added
			}
		}
		callID = c.b.callID(callID)
		c.names[callID] = name
		m.ToolCalls = append(m.ToolCalls, history.ToolCall{ID: callID, Name: name, Arguments: argsJSON(args)})
		m.Forget()
		return
	}
	m := history.Message{Role: history.Assistant}
	if msg := responseMessage(resp); msg != nil {
		if text, ok := textOf(msg["content"]); ok && text != "" {
			m.Content = history.Text(text)
		}
		for _, raw := range rawArray(msg["tool_calls"]) {
			tc := object(raw)
			fn := object(tc["function"])
			if tc == nil || fn == nil {
				continue
			}
			id := c.b.callID(str(tc["id"]))
			c.names[id] = str(fn["name"])
			m.ToolCalls = append(m.ToolCalls, history.ToolCall{ID: id, Name: str(fn["name"]), Arguments: argumentsOf(fn["arguments"])})
		}
	} else if t := thoughtOf(args); t != "" {
		m.Content = history.Text(t)
	}
	found := false
	for _, tc := range m.ToolCalls {
		found = found || tc.ID == callID
	}
	if !found {
		callID = c.b.callID(callID)
		c.names[callID] = name
		m.ToolCalls = append(m.ToolCalls, history.ToolCall{ID: callID, Name: name, Arguments: argsJSON(args)})
	}
	if respID != "" {
		c.responses[respID] = len(c.b.t.Messages)
	}
	c.b.add(m)
}

func (c *ohConv) observation(kind string, e map[string]json.RawMessage) {
	if kind == "recall" || kind == "agent_state_changed" || kind == "null" {
		c.b.skip("observation/" + kind)
		return
	}
	text := observationText(e)
	if meta := object(e["tool_call_metadata"]); meta != nil && str(meta["tool_call_id"]) != "" {
		id := str(meta["tool_call_id"])
		c.b.add(history.NewToolResult(id, firstNonEmpty(str(meta["function_name"]), c.names[id]), text))
		return
	}
	if id, ok := c.causes[rawID(e["cause"])]; ok {
		c.b.add(history.NewToolResult(id, c.names[id], text))
		return
	}
	// Errors and other feedback not tied to a call reach the model as user text.
	c.b.add(history.NewText(history.User, text))
}

// observationText is the observation content plus the command-completion
// suffix OpenHands shows the model (it carries the exit code).
func observationText(e map[string]json.RawMessage) string {
	text := str(e["message"])
	if _, ok := e["content"]; ok {
		text = str(e["content"])
	}
	if extras := object(e["extras"]); extras != nil {
		if md := object(extras["metadata"]); md != nil {
			if suffix := str(md["suffix"]); suffix != "" && !strings.HasSuffix(text, suffix) {
				text += suffix
			}
		}
	}
	return text
}

func responseMessage(resp map[string]json.RawMessage) map[string]json.RawMessage {
	if resp == nil {
		return nil
	}
	choices := rawArray(resp["choices"])
	if len(choices) == 0 {
		return nil
	}
	ch := object(choices[0])
	if ch == nil {
		return nil
	}
	return object(ch["message"])
}

func thoughtOf(args map[string]json.RawMessage) string {
	return firstNonEmpty(str(args["thought"]), str(args["final_thought"]), str(args["content"]))
}

// argsJSON returns the action arguments as JSON text, without the thought
// (which is the message content) and without empty values.
func argsJSON(args map[string]json.RawMessage) string {
	out := map[string]json.RawMessage{}
	for k, v := range args {
		if k == "thought" || isNull(v) || string(v) == `""` || string(v) == "false" || string(v) == "[]" || string(v) == "{}" {
			continue
		}
		out[k] = compact(v)
	}
	b, err := json.Marshal(out) // map keys are sorted: deterministic
	if err != nil {
		return "{}"
	}
	return string(b)
}

func rawID(v json.RawMessage) string {
	if n, ok := num(v); ok {
		return strconv.FormatInt(n, 10)
	}
	return str(v)
}
