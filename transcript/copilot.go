package transcript

import (
	"encoding/json"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
)

// GitHub Copilot CLI session events (~/.copilot/session-state/<id>/events.jsonl):
// one event per line, {type, data, id, timestamp, parentId, ephemeral?}.
// The conversation is in user.message {content} (the words typed; the
// harness's transformedContent adds the date and reminders),
// assistant.message {messageId, content, toolRequests: [{toolCallId, name,
// arguments}], reasoningText?} and tool.execution_complete {toolCallId,
// success, result: {content, detailedContent}, error: {message}}; a shell
// result ends in "<exited with exit code N>". tool.execution_start repeats
// a requested call (it is the call itself only when no request named it).
// A successful session.compaction_complete carries the summary that
// replaced the history before it (imported as a user message marked
// isCompactSummary). Events of a sub-agent's own turns name the call that
// started it (parentToolCallId): the main conversation sees only that
// call's result, so they are skipped, as are ephemeral events (streaming
// deltas), turns, hooks, session and model bookkeeping.

// copilotSpaces are the first dotted segments of Copilot CLI event types.
var copilotSpaces = map[string]bool{
	"session": true, "user": true, "assistant": true, "tool": true, "hook": true,
	"subagent": true, "skill": true, "system": true, "model": true, "mcp": true,
	"permission": true, "abort": true,
}

// isCopilotEvent reports whether o is a Copilot CLI session event: {type,
// data} of a kind the CLI writes, or of its namespaces when the record has
// the session file's id or timestamp (the JSON output of `copilot -p` has
// neither).
func isCopilotEvent(o map[string]json.RawMessage) bool {
	typ := str(o["type"])
	if object(o["data"]) == nil {
		return false
	}
	if copilotConversation[typ] || copilotQuiet[typ] {
		return true
	}
	space, _, dotted := strings.Cut(typ, ".")
	return dotted && copilotSpaces[space] && (hasKey(o, "id") || hasKey(o, "timestamp"))
}

// copilotConversation are the event kinds the conversation is made of.
var copilotConversation = map[string]bool{
	"user.message": true, "assistant.message": true, "tool.execution_start": true,
	"tool.execution_complete": true, "session.compaction_complete": true,
}

// copilotQuiet are the event kinds that carry no conversation.
var copilotQuiet = map[string]bool{
	"session.start": true, "session.resume": true, "session.model_change": true, "session.info": true,
	"session.error": true, "session.warning": true, "session.shutdown": true, "session.usage_info": true,
	"session.compaction_start": true, "session.truncation": true, "session.context_changed": true,
	"session.plan_changed": true, "session.mode_changed": true, "session.tools_updated": true,
	"session.skills_loaded": true, "session.mcp_server_status_changed": true, "session.auto_mode_resolved": true,
	"session.title_changed": true, "session.handoff": true, "session.idle": true,
	"assistant.turn_start": true, "assistant.turn_end": true, "assistant.reasoning": true, "assistant.intent": true,
	"assistant.usage": true, "tool.execution_partial_result": true, "tool.execution_progress": true,
	"tool.user_requested": true, "hook.start": true, "hook.end": true, "subagent.started": true,
	"subagent.completed": true, "subagent.failed": true, "subagent.selected": true, "skill.invoked": true,
	"system.notification": true, "abort": true, "permission.requested": true, "permission.completed": true,
	"mcp.tools.list_changed": true, "model.call_start": true, "model.call_end": true,
	"assistant.message_delta": true, "assistant.reasoning_delta": true, "assistant.tool_call_delta": true,
}

type copilotConv struct {
	b *builder
	// batch is the index of the assistant message whose calls results
	// answer, or -1; known holds every call id requested so far.
	batch int
	known map[string]bool
	names map[string]string
}

func convertCopilot(lines []line) (*Transcript, error) {
	c := &copilotConv{b: newBuilder(FormatCopilot), batch: -1, known: map[string]bool{}, names: map[string]string{}}
	for _, l := range lines {
		o := l.obj
		typ := str(o["type"])
		d := object(o["data"])
		switch {
		case isTrue(o["ephemeral"]):
			c.b.skip("ephemeral")
		case str(d["parentToolCallId"]) != "":
			c.b.skip("subagent/" + typ)
		case typ == "user.message":
			m := history.NewText(history.User, str(d["content"]))
			m.ID = str(o["id"])
			c.batch = -1
			c.b.add(m)
		case typ == "assistant.message":
			c.assistant(o, d)
		case typ == "tool.execution_start":
			c.started(d)
		case typ == "tool.execution_complete":
			c.completed(d)
		case typ == "session.compaction_complete" && isTrue(d["success"]) && str(d["summaryContent"]) != "":
			m := history.NewText(history.User, str(d["summaryContent"]))
			m.ID = str(o["id"])
			m.Extra = map[string]json.RawMessage{"isCompactSummary": json.RawMessage("true")}
			c.batch = -1
			c.b.add(m)
		case copilotQuiet[typ] || typ == "session.compaction_complete":
			c.b.skip(typ)
		default:
			c.b.skip(typ)
			c.b.drop("types", typ)
		}
	}
	c.order()
	return c.b.done(), nil
}

func (c *copilotConv) assistant(o, d map[string]json.RawMessage) {
	m := history.Message{ID: firstNonEmpty(str(d["messageId"]), str(o["id"])), Role: history.Assistant, Reasoning: str(d["reasoningText"])}
	for _, raw := range rawArray(d["toolRequests"]) {
		r := object(raw)
		if r == nil {
			continue
		}
		m.ToolCalls = append(m.ToolCalls, c.call(str(r["toolCallId"]), str(r["name"]), r["arguments"]))
	}
	if text := str(d["content"]); text != "" || len(m.ToolCalls) == 0 {
		m.Content = history.Text(text)
	}
	c.b.add(m)
	c.batch = -1
	if len(m.ToolCalls) > 0 {
		c.batch = len(c.b.t.Messages) - 1
	}
}

// started adds a call no request announced (older CLIs wrote only the
// execution events).
func (c *copilotConv) started(d map[string]json.RawMessage) {
	id := str(d["toolCallId"])
	if id != "" && c.known[id] {
		c.b.skip("tool.execution_start")
		return
	}
	tc := c.call(id, str(d["toolName"]), d["arguments"])
	if c.batch >= 0 && c.batch == len(c.b.t.Messages)-1 {
		m := &c.b.t.Messages[c.batch]
		m.ToolCalls = append(m.ToolCalls, tc)
		return
	}
	c.b.add(history.Message{Role: history.Assistant, ToolCalls: []history.ToolCall{tc}})
	c.batch = len(c.b.t.Messages) - 1
}

func (c *copilotConv) call(id, name string, args json.RawMessage) history.ToolCall {
	id = c.b.callID(id)
	c.known[id] = true
	c.names[id] = name
	return history.ToolCall{ID: id, Name: name, Arguments: argumentsText(args)}
}

// argumentsText renders call arguments: an object as compact JSON, a
// string (already JSON text) as it is, nothing as {}.
func argumentsText(v json.RawMessage) string {
	switch {
	case isNull(v):
		return "{}"
	case v[0] == '"':
		return str(v)
	}
	return string(compact(v))
}

// completed adds the result of a call: what the model read (result.content,
// else the detailed display), or the error of a failed call, flagged.
func (c *copilotConv) completed(d map[string]json.RawMessage) {
	id := str(d["toolCallId"])
	res := object(d["result"])
	text := firstNonEmpty(str(res["content"]), str(res["detailedContent"]))
	if res == nil {
		text = str(d["result"])
	}
	failed := string(d["success"]) == "false"
	if failed {
		e := object(d["error"])
		msg := firstNonEmpty(str(e["message"]), str(d["error"]))
		if msg != "" && !strings.Contains(text, msg) {
			text = strings.TrimSpace(text + "\n" + msg)
		}
		if !strings.HasPrefix(text, "Error") {
			text = "Error: " + text
		}
	}
	m := history.NewToolResult(id, c.names[id], text)
	if failed {
		m.Extra = map[string]json.RawMessage{"isError": json.RawMessage("true")}
	}
	c.b.add(m)
}

// order puts the results that directly follow an assistant message in the
// order of its calls: parallel calls complete in any order.
func (c *copilotConv) order() {
	msgs := c.b.t.Messages
	for i := 0; i < len(msgs); i++ {
		if !msgs[i].HasToolCalls() {
			continue
		}
		pos := map[string]int{}
		for k, tc := range msgs[i].ToolCalls {
			pos[tc.ID] = k
		}
		j := i + 1
		for j < len(msgs) && msgs[j].Role == history.Tool {
			if _, ok := pos[msgs[j].ToolCallID]; !ok {
				break
			}
			j++
		}
		run := msgs[i+1 : j]
		for a := 1; a < len(run); a++ { // insertion sort: runs are short and stable
			for b := a; b > 0 && pos[run[b].ToolCallID] < pos[run[b-1].ToolCallID]; b-- {
				run[b], run[b-1] = run[b-1], run[b]
			}
		}
		i = j - 1
	}
}
