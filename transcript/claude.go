package transcript

import (
	"encoding/json"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
)

// Claude Code session JSONL: one record per line. user and assistant records
// carry an Anthropic message in "message"; an assistant response is split over
// several records (one per content block) that share message.id. Everything
// else (summary, system, progress, file-history-snapshot, queue-operation) is
// bookkeeping of the CLI and is skipped.
//
// One kind of bookkeeping carries the user's words: a message the user types
// while the agent works is queued (a queue-operation "enqueue" with the text
// as content) and handed to the model when the queue gives it up ("remove"
// while a turn runs, "dequeue" when the next turn starts; "popAll" hands
// the queue back to the input box). A handed-over message that no later
// user record repeats reached the model only that way, so it is imported as
// a user message after the results of the calls that were running (the
// records themselves are still counted as skipped). Queued slash commands,
// task notifications and background-task bookkeeping (JSON) are not typed
// text and stay out.

// pending is a message under construction: text blocks are joined at the end.
type pending struct {
	msg   history.Message
	parts []history.Part // content blocks in order
	reas  []string       // thinking texts
	msgID string         // Anthropic message id, for merging split records
	// queued marks a message typed while the agent worked, imported from
	// the CLI's queue.
	queued bool
}

func (p *pending) finish() history.Message {
	m := p.msg
	// A response split over records often has whitespace-only text blocks.
	var parts []history.Part
	for _, part := range p.parts {
		if part.Raw == nil && strings.TrimSpace(part.Text) == "" {
			continue
		}
		parts = append(parts, part)
	}
	switch {
	case len(parts) > 0:
		m.Content = joinParts(parts)
	case len(p.parts) > 0 && m.Role != history.Assistant:
		m.Content = history.Text("")
	}
	if len(p.reas) > 0 {
		m.Reasoning = strings.Join(p.reas, "\n\n")
	}
	return m
}

// joinParts returns one string when every part is plain text, else the parts.
func joinParts(parts []history.Part) history.Content {
	texts := make([]string, 0, len(parts))
	for _, p := range parts {
		if p.Raw != nil {
			return history.Parts(parts...)
		}
		texts = append(texts, p.Text)
	}
	return history.Text(strings.Join(texts, "\n\n"))
}

type claudeConv struct {
	b     *builder
	out   []*pending
	names map[string]string // tool_use id → tool name
	// open is the index in out of the last assistant message, while only tool
	// results have followed it; -1 otherwise.
	open int
	// queued holds the typed messages waiting in the CLI's queue; handed
	// holds those the queue gave to the model, until the running calls'
	// results are in.
	queued, handed []string
}

func convertClaude(lines []line) (*Transcript, error) {
	c := &claudeConv{b: newBuilder(FormatClaudeCode), names: map[string]string{}, open: -1}
	for _, l := range lines {
		o := l.obj
		typ := str(o["type"])
		if (typ == "user" || typ == "assistant") && isTrue(o["isSidechain"]) {
			c.b.skip("sidechain")
			continue
		}
		msg := object(o["message"])
		switch {
		case typ == "user" && msg != nil:
			c.user(o, msg)
		case typ == "assistant" && msg != nil:
			c.assistant(o, msg)
		case typ == "queue-operation":
			c.queueOp(o)
			c.b.skip(typ)
		default:
			kind := typ
			if kind == "" {
				kind = "unknown"
			}
			if sub := str(o["subtype"]); sub != "" {
				kind += "/" + sub
			}
			c.b.skip(kind)
		}
	}
	c.flushHanded()
	for i, p := range c.out {
		if p.queued && repeatedLater(c.out[i+1:], p.msg.Content.Text()) {
			continue // delivered as a prompt of its own, recorded below
		}
		c.b.add(p.finish())
	}
	return c.b.done(), nil
}

func isTrue(v json.RawMessage) bool { return string(v) == "true" }

// queueOp follows the CLI's queue of messages typed during a turn.
func (c *claudeConv) queueOp(o map[string]json.RawMessage) {
	switch str(o["operation"]) {
	case "enqueue":
		text := str(o["content"])
		if t := strings.TrimSpace(text); t == "" || strings.ContainsAny(t[:1], "{</") {
			return // bookkeeping, a notification or a slash command
		}
		c.queued = append(c.queued, text)
	case "remove", "dequeue":
		if len(c.queued) > 0 {
			c.handed = append(c.handed, c.queued[0])
			c.queued = c.queued[1:]
		}
	case "popAll":
		c.queued = nil
	}
}

// flushHanded adds the queued messages handed to the model, before the next
// response or prompt.
func (c *claudeConv) flushHanded() {
	for _, text := range c.handed {
		c.push(&pending{msg: history.NewText(history.User, text), queued: true})
	}
	if len(c.handed) > 0 {
		c.open = -1
	}
	c.handed = nil
}

// repeatedLater reports whether a later user message carries text.
func repeatedLater(later []*pending, text string) bool {
	text = strings.TrimSpace(text)
	for _, p := range later {
		if p.msg.Role != history.User || p.queued {
			continue
		}
		for _, part := range p.parts {
			if strings.Contains(part.Text, text) {
				return true
			}
		}
		if strings.Contains(p.msg.Content.Text(), text) {
			return true
		}
	}
	return false
}

func (c *claudeConv) push(p *pending) { c.out = append(c.out, p) }

// claudeFlags are the record flags that mark a user record the CLI wrote
// itself (a caveat, its own continuation summary); they are kept on the
// message, so that summarizers do not take it for the user's request.
var claudeFlags = []string{"isMeta", "isCompactSummary", "isVisibleInTranscriptOnly"}

func userFlags(rec map[string]json.RawMessage) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	for _, k := range claudeFlags {
		if isTrue(rec[k]) {
			if out == nil {
				out = map[string]json.RawMessage{}
			}
			out[k] = json.RawMessage("true")
		}
	}
	return out
}

func (c *claudeConv) user(rec, msg map[string]json.RawMessage) {
	id := str(rec["uuid"])
	content := msg["content"]
	if len(content) > 0 && content[0] == '"' {
		c.flushHanded()
		c.open = -1
		c.push(&pending{msg: history.Message{ID: id, Role: history.User, Content: history.Text(str(content)), Extra: userFlags(rec)}})
		return
	}
	blocks := rawArray(content)
	var user []history.Part
	results := 0
	for _, raw := range blocks {
		blk := object(raw)
		if blk == nil {
			continue
		}
		switch str(blk["type"]) {
		case "tool_result":
			callID := str(blk["tool_use_id"])
			m := history.Message{Role: history.Tool, ToolCallID: callID, ToolName: c.names[callID]}
			m.Content = toolResultContent(blk["content"])
			// The harness's error flag as it wrote it: Claude Code writes
			// is_error on every result (true when a command exited non-zero,
			// was refused or interrupted), so an explicit false is evidence too.
			switch v := blk["is_error"]; {
			case isTrue(v):
				m.Extra = map[string]json.RawMessage{"isError": json.RawMessage("true")}
			case string(v) == "false":
				m.Extra = map[string]json.RawMessage{"isError": json.RawMessage("false")}
			}
			results++
			if results == 1 {
				m.ID = id
			}
			c.push(&pending{msg: m})
		case "text":
			user = append(user, history.TextPart(str(blk["text"])))
		default:
			user = append(user, history.Part{Type: str(blk["type"]), Raw: compact(raw)})
		}
	}
	if len(user) > 0 {
		c.flushHanded()
		c.open = -1
		m := history.Message{Role: history.User, Extra: userFlags(rec)}
		if results == 0 {
			m.ID = id
		}
		c.push(&pending{msg: m, parts: user})
	}
}

// toolResultContent converts a tool_result's content: a string, or blocks
// (text joined; images and other blocks kept as parts).
func toolResultContent(v json.RawMessage) history.Content {
	if isNull(v) {
		return history.Text("")
	}
	if v[0] == '"' {
		return history.Text(str(v))
	}
	var parts []history.Part
	for _, raw := range rawArray(v) {
		blk := object(raw)
		if blk == nil {
			continue
		}
		if str(blk["type"]) == "text" {
			parts = append(parts, history.TextPart(str(blk["text"])))
			continue
		}
		parts = append(parts, history.Part{Type: str(blk["type"]), Raw: compact(raw)})
	}
	if len(parts) == 0 {
		return history.Text("")
	}
	for _, p := range parts {
		if p.Raw != nil {
			return history.Parts(parts...)
		}
	}
	texts := make([]string, len(parts))
	for i, p := range parts {
		texts[i] = p.Text
	}
	return history.Text(strings.Join(texts, "\n"))
}

func (c *claudeConv) assistant(rec, msg map[string]json.RawMessage) {
	msgID := str(msg["id"])
	var p *pending
	if c.open >= 0 && msgID != "" && c.out[c.open].msgID == msgID {
		p = c.out[c.open] // another block of the same response
	} else {
		c.flushHanded()
		id := msgID
		if id == "" {
			id = str(rec["uuid"])
		}
		p = &pending{msg: history.Message{ID: id, Role: history.Assistant}, msgID: msgID}
		c.push(p)
		c.open = len(c.out) - 1
	}
	content := msg["content"]
	if len(content) > 0 && content[0] == '"' {
		p.parts = append(p.parts, history.TextPart(str(content)))
		return
	}
	for _, raw := range rawArray(content) {
		blk := object(raw)
		if blk == nil {
			continue
		}
		switch str(blk["type"]) {
		case "text":
			p.parts = append(p.parts, history.TextPart(str(blk["text"])))
		case "thinking":
			if t := str(blk["thinking"]); t != "" {
				p.reas = append(p.reas, t)
			}
			p.msg.ReasoningDetails = append(p.msg.ReasoningDetails, compact(raw))
		case "redacted_thinking":
			p.msg.ReasoningDetails = append(p.msg.ReasoningDetails, compact(raw))
		case "tool_use", "server_tool_use":
			id := c.b.callID(str(blk["id"]))
			name := str(blk["name"])
			c.names[id] = name
			args := "{}"
			if in, ok := blk["input"]; ok && !isNull(in) {
				args = string(compact(in))
			}
			p.msg.ToolCalls = append(p.msg.ToolCalls, history.ToolCall{ID: id, Name: name, Arguments: args})
		default:
			p.parts = append(p.parts, history.Part{Type: str(blk["type"]), Raw: compact(raw)})
		}
	}
}
