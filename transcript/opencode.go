package transcript

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
)

// opencode session export (`opencode export <sessionID>`): one JSON object
// {info: {id, directory, title, version, …}, messages: [{info: {id, role,
// …}, parts: [...]}]}. A user message's parts are text (synthetic: true when
// opencode wrote it, such as the contents of an attached file or "Summarize
// the task tool output above"), file, agent, subtask and compaction parts.
// An assistant message holds one or more model steps, each opened by a
// step-start part and closed by step-finish: reasoning, text and tool parts
// {callID, tool, state: {status, input, output | error, metadata}}. A tool
// part carries both the call and its result, so each step becomes an
// assistant message with its calls followed by their results; the exit code
// of a shell call (state.metadata.exit) is appended to its output. An
// assistant message with info.summary is the summary a compaction wrote: it
// (summary: true, agent "compaction") reaches the model as the history before
// it, so it is imported as a user message marked isCompactSummary, like Claude Code's. File, agent, subtask,
// compaction, patch, snapshot and retry parts are bookkeeping the model does
// not read as such; they are skipped and counted per kind.

// isOpencodeExport reports whether o is an opencode session export.
func isOpencodeExport(o map[string]json.RawMessage) bool {
	info := object(o["info"])
	if info == nil || !hasKey(info, "id") || !(hasKey(info, "directory") || hasKey(info, "projectID")) {
		return false
	}
	msgs, ok := objectArray(o["messages"])
	if !ok {
		return false
	}
	for _, m := range msgs {
		if object(m["info"]) == nil || !hasKey(m, "parts") {
			return false
		}
	}
	return true
}

type opencodeConv struct {
	b    *builder
	used map[string]bool // call ids already given out, so each is unique
}

func convertOpencode(o map[string]json.RawMessage) (*Transcript, error) {
	c := &opencodeConv{b: newBuilder(FormatOpencode), used: map[string]bool{}}
	msgs, _ := objectArray(o["messages"])
	for i, m := range msgs {
		info := object(m["info"])
		parts, ok := objectArray(m["parts"])
		if !ok {
			return nil, fmt.Errorf("message %d: parts is not a list of objects", i)
		}
		switch role := str(info["role"]); role {
		case "user":
			c.user(info, parts)
		case "assistant":
			if isTrue(info["summary"]) || str(info["agent"]) == "compaction" || str(info["mode"]) == "compaction" {
				c.summary(info, parts)
				continue
			}
			c.assistant(info, parts)
		default:
			c.b.skip("role:" + role)
			c.b.drop("roles", role)
		}
	}
	return c.b.done(), nil
}

// user adds the user's text as one message and each run of synthetic text
// (written by opencode) as a message marked isSynthetic, in part order.
func (c *opencodeConv) user(info map[string]json.RawMessage, parts []map[string]json.RawMessage) {
	var run []string
	synthetic, first := false, true
	flush := func() {
		if len(run) == 0 {
			return
		}
		m := history.NewText(history.User, strings.Join(run, "\n\n"))
		if first {
			m.ID = str(info["id"])
			first = false
		}
		if synthetic {
			m.Extra = map[string]json.RawMessage{"isSynthetic": json.RawMessage("true")}
		}
		c.b.add(m)
		run = nil
	}
	for _, p := range parts {
		switch typ := str(p["type"]); typ {
		case "text":
			if isTrue(p["ignored"]) {
				c.b.skip("part/text-ignored")
				continue
			}
			if s := isTrue(p["synthetic"]); s != synthetic {
				flush()
				synthetic = s
			}
			run = append(run, str(p["text"]))
		default:
			c.skipPart(typ)
		}
	}
	flush()
}

// summary adds the text of a compaction's summary message.
func (c *opencodeConv) summary(info map[string]json.RawMessage, parts []map[string]json.RawMessage) {
	var text []string
	for _, p := range parts {
		switch typ := str(p["type"]); typ {
		case "text":
			text = append(text, str(p["text"]))
		case "step-start":
		case "step-finish":
			c.b.skip("part/" + typ)
		default:
			c.skipPart(typ)
		}
	}
	m := history.NewText(history.User, strings.Join(text, "\n\n"))
	m.ID = str(info["id"])
	m.Extra = map[string]json.RawMessage{"isCompactSummary": json.RawMessage("true")}
	c.b.add(m)
}

// assistant adds one assistant message per model step, each followed by the
// results of its tool calls that finished.
func (c *opencodeConv) assistant(info map[string]json.RawMessage, parts []map[string]json.RawMessage) {
	var (
		text, reasoning []string
		calls           []history.ToolCall
		results         []history.Message
		steps           int
		started         bool
	)
	flush := func() {
		if len(text) == 0 && len(calls) == 0 && len(reasoning) == 0 {
			return
		}
		m := history.Message{Role: history.Assistant, ToolCalls: calls, Reasoning: strings.Join(reasoning, "\n\n")}
		if steps == 0 {
			m.ID = str(info["id"])
		}
		if len(text) > 0 || len(calls) == 0 {
			m.Content = history.Text(strings.Join(text, "\n\n"))
		}
		c.b.add(m)
		for _, r := range results {
			c.b.add(r)
		}
		steps++
		text, reasoning, calls, results = nil, nil, nil, nil
	}
	for _, p := range parts {
		switch typ := str(p["type"]); typ {
		case "step-start":
			if started {
				flush()
			}
			started = true
		case "step-finish":
			flush()
			started = false
			c.b.skip("part/" + typ)
		case "text":
			if len(calls) > 0 {
				flush() // text after calls is the next response
			}
			if s := str(p["text"]); strings.TrimSpace(s) != "" {
				text = append(text, s)
			}
		case "reasoning":
			if s := str(p["text"]); strings.TrimSpace(s) != "" {
				reasoning = append(reasoning, s)
			}
		case "tool":
			call, res, answered := c.tool(p)
			calls = append(calls, call)
			if answered {
				results = append(results, res)
			}
		default:
			c.skipPart(typ)
		}
	}
	flush()
	if steps == 0 {
		// A response that failed before writing anything says why.
		if e := object(info["error"]); e != nil {
			msg := firstNonEmpty(str(object(e["data"])["message"]), str(e["name"]))
			m := history.NewText(history.Assistant, "[error: "+msg+"]")
			m.ID = str(info["id"])
			c.b.add(m)
		}
	}
}

// tool converts a tool part into its call and, when the tool finished, its
// result. A call still pending or running when the session was exported has
// no result.
func (c *opencodeConv) tool(p map[string]json.RawMessage) (history.ToolCall, history.Message, bool) {
	id := str(p["callID"])
	if id == "" || c.used[id] {
		// Ids must be unique for results to pair; the part id is.
		id = str(p["id"])
	}
	id = c.b.callID(id)
	c.used[id] = true
	name := str(p["tool"])
	st := object(p["state"])
	args := "{}"
	if hasKey(st, "input") {
		args = string(compact(st["input"]))
	}
	call := history.ToolCall{ID: id, Name: name, Arguments: args}
	switch status := str(st["status"]); status {
	case "completed":
		text := str(st["output"])
		md := object(st["metadata"])
		if code, ok := num(md["exit"]); ok {
			text = withExitCode(text, code)
		}
		return call, history.NewToolResult(id, name, text), true
	case "error":
		text := str(st["error"])
		if !strings.HasPrefix(text, "Error") {
			text = "Error: " + text
		}
		m := history.NewToolResult(id, name, text)
		m.Extra = map[string]json.RawMessage{"isError": json.RawMessage("true")}
		return call, m, true
	default:
		c.b.skip("tool/" + firstNonEmpty(status, "unknown"))
		return call, history.Message{}, false
	}
}

// opencodeBookkeeping are the part kinds that carry no conversation text.
var opencodeBookkeeping = map[string]bool{
	"file": true, "agent": true, "subtask": true, "compaction": true, "patch": true,
	"snapshot": true, "retry": true,
}

func (c *opencodeConv) skipPart(typ string) {
	c.b.skip("part/" + typ)
	if !opencodeBookkeeping[typ] {
		c.b.drop("parts", typ)
	}
}
