package transcript

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
)

// pi coding-agent session JSONL: a header {"type":"session", id, cwd,
// version?}, then entries {type, id, parentId, timestamp, …} that form a
// tree (a branch is a new child of an older entry; the session continues
// from the last entry). Entries of type "message" carry {message: {role:
// "user"|"assistant"|"toolResult"|"bashExecution"|"custom", …}}: user
// content is a string or text/image parts, assistant content is a list of
// text, thinking and toolCall {id, name, arguments} parts, and a
// toolResult answers toolCallId with text/image parts. custom_message and
// branch_summary entries reach the model as user text; compaction entries
// are summaries of messages that are still in the file, so they are
// skipped, as are settings, labels and extension state.

func isPiHeader(o map[string]json.RawMessage) bool {
	return str(o["type"]) == "session" && hasKey(o, "id") && (hasKey(o, "cwd") || hasKey(o, "version"))
}

func isPiEntry(o map[string]json.RawMessage) bool {
	if str(o["type"]) != "message" {
		return false
	}
	m := object(o["message"])
	return m != nil && hasKey(m, "role") && hasKey(o, "timestamp")
}

// piPath returns the entries of the branch the session continued on: the
// path from the last entry to the root through parentId. Sessions written
// before entries had ids are linear: every entry is on the path.
func piPath(entries []line) (path []line, off int) {
	byID := map[string]int{}
	for i, e := range entries {
		if id := str(e.obj["id"]); id != "" {
			byID[id] = i
		}
	}
	last := len(entries) - 1
	if last < 0 || str(entries[last].obj["id"]) == "" || !hasKey(entries[last].obj, "parentId") {
		return entries, 0
	}
	on := make([]bool, len(entries))
	for i, seen := last, 0; i >= 0 && !on[i] && seen <= len(entries); seen++ {
		on[i] = true
		p, ok := byID[str(entries[i].obj["parentId"])]
		if !ok {
			break
		}
		i = p
	}
	for i, e := range entries {
		if on[i] {
			path = append(path, e)
		} else {
			off++
		}
	}
	return path, off
}

func convertPi(lines []line) (*Transcript, error) {
	b := newBuilder(FormatPi)
	var entries []line
	for _, l := range lines {
		if isPiHeader(l.obj) {
			b.skip("session")
			continue
		}
		entries = append(entries, l)
	}
	path, off := piPath(entries)
	for range off {
		b.skip("other-branch")
	}
	for _, e := range path {
		o := e.obj
		switch typ := str(o["type"]); typ {
		case "message":
			if err := piMessage(b, object(o["message"])); err != nil {
				return nil, fmt.Errorf("line %d: %w", e.no, err)
			}
		case "custom_message":
			text, _ := textOf(o["content"])
			b.add(history.NewText(history.User, text))
		case "branch_summary":
			b.add(history.NewText(history.User, "Summary of an abandoned branch of this conversation:\n"+str(o["summary"])))
		case "compaction", "model_change", "thinking_level_change", "custom", "label", "session_info":
			b.skip(typ)
		default:
			b.skip("type:" + typ)
			b.drop("types", typ)
		}
	}
	return b.done(), nil
}

func piMessage(b *builder, m map[string]json.RawMessage) error {
	if m == nil {
		return fmt.Errorf("message is not an object")
	}
	switch role := str(m["role"]); role {
	case "user":
		c, ok := piContent(m["content"])
		if !ok {
			return fmt.Errorf("user content is neither text nor parts")
		}
		b.add(history.Message{Role: history.User, Content: c})
	case "assistant":
		out := history.Message{Role: history.Assistant}
		var text, thinking []string
		for _, raw := range rawArray(m["content"]) {
			p := object(raw)
			switch str(p["type"]) {
			case "text":
				text = append(text, str(p["text"]))
			case "thinking":
				thinking = append(thinking, str(p["thinking"]))
			case "toolCall":
				args := "{}"
				if hasKey(p, "arguments") {
					args = argumentsOf(p["arguments"])
				}
				out.ToolCalls = append(out.ToolCalls, history.ToolCall{ID: b.callID(str(p["id"])), Name: str(p["name"]), Arguments: args})
			default:
				b.drop("parts", str(p["type"]))
			}
		}
		if s := str(m["errorMessage"]); s != "" && len(text) == 0 && len(out.ToolCalls) == 0 {
			text = append(text, "[error: "+s+"]")
		}
		if len(text) > 0 || len(out.ToolCalls) == 0 {
			out.Content = history.Text(strings.Join(text, "\n"))
		}
		out.Reasoning = strings.Join(thinking, "\n")
		b.add(out)
	case "toolResult":
		c, ok := piContent(m["content"])
		if !ok {
			return fmt.Errorf("tool result content is neither text nor parts")
		}
		id := str(m["toolCallId"])
		if id == "" {
			b.add(history.Message{Role: history.User, Content: c})
			return nil
		}
		b.add(history.Message{Role: history.Tool, ToolCallID: id, ToolName: str(m["toolName"]), Content: c})
	case "bashExecution":
		if isTrue(m["excludeFromContext"]) {
			b.skip("bashExecution/excluded")
			return nil
		}
		var sb strings.Builder
		fmt.Fprintf(&sb, "The user ran `%s`", str(m["command"]))
		switch code, ok := num(m["exitCode"]); {
		case isTrue(m["cancelled"]):
			sb.WriteString(" (cancelled)")
		case ok:
			fmt.Fprintf(&sb, " (exit code %d)", code)
		}
		sb.WriteString(":\n")
		if out := str(m["output"]); out != "" {
			sb.WriteString(out)
		} else {
			sb.WriteString("(no output)")
		}
		b.add(history.NewText(history.User, sb.String()))
	case "custom", "branchSummary":
		text, _ := textOf(m["content"])
		if role == "branchSummary" {
			text = "Summary of an abandoned branch of this conversation:\n" + str(m["summary"])
		}
		b.add(history.NewText(history.User, text))
	case "compactionSummary":
		b.skip("compactionSummary")
	default:
		b.skip("role:" + role)
		b.drop("roles", role)
	}
	return nil
}

// piContent converts user or tool-result content: a string, or parts of
// which text parts are kept as text and others (images) verbatim; all-text
// parts become one string.
func piContent(v json.RawMessage) (history.Content, bool) {
	if isNull(v) {
		return history.Text(""), true
	}
	if v[0] == '"' {
		return history.Text(str(v)), true
	}
	if v[0] != '[' {
		return history.Content{}, false
	}
	var parts []history.Part
	for _, raw := range rawArray(v) {
		p := object(raw)
		if typ := str(p["type"]); typ == "text" {
			parts = append(parts, history.TextPart(str(p["text"])))
		} else {
			parts = append(parts, history.Part{Type: typ, Raw: compact(raw)})
		}
	}
	return joinParts(parts), true
}
