package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
)

// Gemini CLI keeps a conversation in two shapes.
//
// Chat history (what `/chat save` writes, and the Gemini API's own
// history): Content values {role: "user"|"model", parts: [...]}, as a JSON
// array or as {history: [...]}. A part is {text}, {text, thought: true}
// (a thought summary), {functionCall: {id?, name, args}} or
// {functionResponse: {id?, name, response}}; tool responses travel in a
// user Content after the model Content that asked for them.
//
// Session recordings (~/.gemini/tmp/<project>/chats/session-*): records
// {id, timestamp, type: "user"|"gemini"|"info"|"error"|"warning", content,
// thoughts?, toolCalls?: [{id, name, args, result, status, resultDisplay}]},
// either in one JSON object {sessionId, projectHash, messages: [...]} or as
// JSONL: a metadata line {sessionId, projectHash, …}, message records (a
// repeated id replaces the earlier record), {$set: {…}} metadata updates and
// {$rewindTo: id} markers that drop the records from id on.

// isGeminiContents reports whether objs look like Gemini Content values.
func isGeminiContents(objs []map[string]json.RawMessage) bool {
	if len(objs) == 0 {
		return false
	}
	role := str(objs[0]["role"])
	parts := bytes.TrimSpace(objs[0]["parts"])
	return len(parts) > 0 && parts[0] == '[' && (role == "user" || role == "model" || role == "function")
}

// isGeminiSession reports whether o is a session recording object or its
// JSONL metadata line.
func isGeminiSession(o map[string]json.RawMessage) bool {
	return hasKey(o, "sessionId") && hasKey(o, "projectHash") && !hasKey(o, "type")
}

// isGeminiRecord reports whether a JSONL line belongs to a session recording.
func isGeminiRecord(o map[string]json.RawMessage) bool {
	switch {
	case isGeminiSession(o), hasKey(o, "$rewindTo"), object(o["$set"]) != nil && len(o) == 1:
		return true
	case str(o["type"]) == "gemini" && hasKey(o, "id"):
		return true
	}
	return false
}

type geminiConv struct {
	b          *builder
	unanswered []history.ToolCall
}

// convertGeminiContents converts chat history Content values.
func convertGeminiContents(objs []map[string]json.RawMessage) (*Transcript, error) {
	c := &geminiConv{b: newBuilder(FormatGemini)}
	for i, o := range objs {
		if err := c.content(o); err != nil {
			return nil, fmt.Errorf("content %d: %w", i, err)
		}
	}
	return c.b.done(), nil
}

func (c *geminiConv) content(o map[string]json.RawMessage) error {
	role := str(o["role"])
	if v := bytes.TrimSpace(o["parts"]); len(v) > 0 && v[0] != '[' && !isNull(v) {
		return fmt.Errorf("parts is not an array")
	}
	parts := geminiParts(o["parts"])
	switch role {
	case "model":
		m := history.Message{Role: history.Assistant}
		var text, thought []string
		for _, p := range parts {
			switch {
			case hasKey(p, "functionCall"):
				fc := object(p["functionCall"])
				args := "{}"
				if hasKey(fc, "args") {
					args = string(compact(fc["args"]))
				}
				call := history.ToolCall{ID: c.b.callID(str(fc["id"])), Name: str(fc["name"]), Arguments: args, ThoughtSignature: str(p["thoughtSignature"])}
				m.ToolCalls = append(m.ToolCalls, call)
			case isTrue(p["thought"]):
				thought = append(thought, str(p["text"]))
			case hasKey(p, "text"):
				text = append(text, str(p["text"]))
			case hasKey(p, "thoughtSignature") && len(p) == 1:
				// A bare signature carries no text.
			default:
				c.dropPart(p)
			}
		}
		if len(text) > 0 || len(m.ToolCalls) == 0 {
			m.Content = history.Text(strings.Join(text, ""))
		}
		m.Reasoning = strings.Join(thought, "\n")
		c.unanswered = append(c.unanswered, m.ToolCalls...)
		c.b.add(m)
	case "user", "function":
		var content []history.Part
		for _, p := range parts {
			switch {
			case hasKey(p, "functionResponse"):
				fr := object(p["functionResponse"])
				c.result(str(fr["id"]), str(fr["name"]), geminiResponseText(fr["response"]))
			case hasKey(p, "text") && !isTrue(p["thought"]):
				content = append(content, history.TextPart(str(p["text"])))
			case hasKey(p, "inlineData"), hasKey(p, "fileData"):
				raw, _ := json.Marshal(p)
				content = append(content, history.Part{Type: "media", Raw: raw}) // kept verbatim
			default:
				c.dropPart(p)
			}
		}
		if len(content) > 0 {
			c.b.add(history.Message{Role: history.User, Content: joinParts(content)})
		}
	default:
		c.b.skip("role:" + role)
		c.b.drop("roles", role)
	}
	return nil
}

// result adds a tool message answering call id, or, without an id, the
// oldest unanswered call of that name (else the oldest unanswered call).
func (c *geminiConv) result(id, name, text string) {
	at := -1
	for i, tc := range c.unanswered {
		if (id != "" && tc.ID == id) || (id == "" && tc.Name == name) {
			at = i
			break
		}
	}
	if at < 0 && id == "" && len(c.unanswered) > 0 {
		at = 0
	}
	if at >= 0 {
		tc := c.unanswered[at]
		c.unanswered = append(c.unanswered[:at], c.unanswered[at+1:]...)
		id = tc.ID
		if name == "" {
			name = tc.Name
		}
	}
	if id == "" {
		// A response that answers no call reaches the model as user text.
		c.b.add(history.NewText(history.User, text))
		return
	}
	c.b.add(history.NewToolResult(id, name, text))
}

// dropPart records a part kind the conversion does not carry.
func (c *geminiConv) dropPart(p map[string]json.RawMessage) {
	for k := range p {
		if k != "thoughtSignature" && k != "thought" {
			c.b.drop("parts", k)
		}
	}
}

// geminiResponseText renders a functionResponse.response: its output or
// error string when it has one, else the JSON.
func geminiResponseText(v json.RawMessage) string {
	o := object(v)
	if o == nil {
		if s := str(v); s != "" {
			return s
		}
		if isNull(v) {
			return ""
		}
		return string(compact(v))
	}
	if out, ok := o["output"]; ok && len(o) == 1 {
		if s := str(out); s != "" || string(out) == `""` {
			return s
		}
	}
	if e := str(o["error"]); e != "" && len(o) == 1 {
		return "Error: " + e
	}
	return string(compact(v))
}

// convertGeminiSession converts session records in order.
func convertGeminiSession(records []map[string]json.RawMessage) (*Transcript, error) {
	c := &geminiConv{b: newBuilder(FormatGemini)}
	for i, r := range records {
		if err := c.record(r); err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
	}
	return c.b.done(), nil
}

func (c *geminiConv) record(r map[string]json.RawMessage) error {
	typ := str(r["type"])
	switch typ {
	case "user":
		text, ok := geminiPartsText(r["content"])
		if !ok {
			return fmt.Errorf("content is neither text nor parts")
		}
		m := history.NewText(history.User, text)
		m.ID = str(r["id"])
		c.b.add(m)
	case "gemini", "model":
		text, ok := geminiPartsText(r["content"])
		if !ok {
			return fmt.Errorf("content is neither text nor parts")
		}
		m := history.Message{ID: str(r["id"]), Role: history.Assistant}
		var thoughts []string
		for _, th := range rawArray(r["thoughts"]) {
			t := object(th)
			s := strings.TrimSpace(strings.TrimSpace(str(t["subject"])) + ": " + str(t["description"]))
			if s = strings.TrimPrefix(s, ": "); s != "" && s != ":" {
				thoughts = append(thoughts, s)
			}
		}
		m.Reasoning = strings.Join(thoughts, "\n")
		type res struct{ id, name, text string }
		var results []res
		for _, raw := range rawArray(r["toolCalls"]) {
			tc := object(raw)
			if tc == nil {
				continue
			}
			args := "{}"
			if hasKey(tc, "args") {
				args = string(compact(tc["args"]))
			}
			call := history.ToolCall{ID: c.b.callID(str(tc["id"])), Name: str(tc["name"]), Arguments: args}
			m.ToolCalls = append(m.ToolCalls, call)
			results = append(results, res{call.ID, call.Name, geminiToolResult(tc)})
		}
		if text != "" || len(m.ToolCalls) == 0 {
			m.Content = history.Text(text)
		}
		c.b.add(m)
		for _, rs := range results {
			c.b.add(history.NewToolResult(rs.id, rs.name, rs.text))
		}
	case "info", "error", "warning":
		c.b.skip(typ) // shown to the user, never sent to the model
	default:
		c.b.skip("type:" + typ)
		c.b.drop("types", typ)
	}
	return nil
}

// geminiToolResult renders a recorded tool call's result: its function
// responses, else what the CLI displayed, with the status when the call did
// not succeed.
func geminiToolResult(tc map[string]json.RawMessage) string {
	var out []string
	for _, p := range geminiParts(tc["result"]) {
		if fr := object(p["functionResponse"]); fr != nil {
			out = append(out, geminiResponseText(fr["response"]))
		} else if s := str(p["text"]); s != "" {
			out = append(out, s)
		}
	}
	text := strings.Join(out, "\n")
	if d := tc["resultDisplay"]; text == "" && !isNull(d) {
		if text = str(d); text == "" && object(d) != nil {
			text = string(compact(d)) // a structured display (a file diff)
		}
	}
	if st := str(tc["status"]); st != "" && st != "success" {
		text = strings.TrimSpace(text + "\n[status: " + st + "]")
	}
	return text
}

// geminiParts reads a PartListUnion: a string, one part, or a list of
// parts or strings; strings become text parts, and the snake_case field
// names of the Python SDK's dumps read as the camelCase ones.
func geminiParts(v json.RawMessage) []map[string]json.RawMessage {
	if s := str(v); s != "" {
		return []map[string]json.RawMessage{{"text": marshalText(s)}}
	}
	if o := object(v); o != nil {
		return []map[string]json.RawMessage{camelPart(o)}
	}
	var out []map[string]json.RawMessage
	for _, e := range rawArray(v) {
		if s := str(e); s != "" {
			out = append(out, map[string]json.RawMessage{"text": marshalText(s)})
		} else if o := object(e); o != nil {
			out = append(out, camelPart(o))
		}
	}
	return out
}

// geminiSnake maps the Python SDK's part field names to the API's.
var geminiSnake = map[string]string{
	"function_call": "functionCall", "function_response": "functionResponse", "thought_signature": "thoughtSignature",
	"inline_data": "inlineData", "file_data": "fileData", "executable_code": "executableCode", "code_execution_result": "codeExecutionResult",
}

func camelPart(o map[string]json.RawMessage) map[string]json.RawMessage {
	for snake, camel := range geminiSnake {
		if v, ok := o[snake]; ok && !hasKey(o, camel) {
			o[camel] = v
			delete(o, snake)
		}
	}
	return o
}

// geminiPartsText is the text of a PartListUnion; ok is false for other
// shapes.
func geminiPartsText(v json.RawMessage) (string, bool) {
	if isNull(v) {
		return "", true
	}
	if len(v) > 0 && v[0] != '"' && v[0] != '{' && v[0] != '[' {
		return "", false
	}
	var text []string
	for _, p := range geminiParts(v) {
		if s := str(p["text"]); s != "" && !isTrue(p["thought"]) {
			text = append(text, s)
		}
	}
	return strings.Join(text, ""), true
}

func marshalText(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// convertGeminiLines converts a JSONL session recording: updates and
// rewinds are applied, then the message records converted in order.
func convertGeminiLines(lines []line) (*Transcript, error) {
	c := &geminiConv{b: newBuilder(FormatGemini)}
	var recs []map[string]json.RawMessage
	at := map[string]int{}
	for _, l := range lines {
		o := l.obj
		switch {
		case isGeminiSession(o):
			c.b.skip("session-metadata")
		case hasKey(o, "$rewindTo"):
			c.b.skip("rewind")
			i, ok := at[str(o["$rewindTo"])]
			if !ok {
				i = 0 // an unknown target rewinds everything, as the CLI does
			}
			for _, r := range recs[i:] {
				delete(at, str(r["id"]))
			}
			recs = recs[:i]
		case object(o["$set"]) != nil:
			c.b.skip("metadata-update")
		case hasKey(o, "id") && hasKey(o, "type"):
			id := str(o["id"])
			if i, ok := at[id]; ok {
				recs[i] = o // a later write of the same message
				continue
			}
			at[id] = len(recs)
			recs = append(recs, o)
		default:
			c.b.skip("unknown-record")
			c.b.drop("records", fmt.Sprintf("line %d", l.no))
		}
	}
	for _, r := range recs {
		if err := c.record(r); err != nil {
			return nil, fmt.Errorf("message %s: %w", str(r["id"]), err)
		}
	}
	return c.b.done(), nil
}
