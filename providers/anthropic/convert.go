package anthropic

import (
	"encoding/json"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
)

// ContinueText closes a request that would otherwise end with an assistant
// turn.
const ContinueText = "[Continue]"

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type toolUseBlock struct {
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type toolResultBlock struct {
	Type      string `json:"type"`
	ToolUseID string `json:"tool_use_id"`
	Content   any    `json:"content"`
}

func marshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// detail is one replayable reasoningDetails block.
type detail struct {
	obj json.RawMessage
	typ string
}

// replayDetails returns the blocks of a message's ReasoningDetails that the
// Messages API accepts, and the index among them of the last compaction
// block with content (-1 if none). Compaction blocks without content (an
// OpenAI compaction item, a failed compaction) are not replayed.
func replayDetails(m *history.Message) ([]detail, int) {
	var out []detail
	boundary := -1
	for _, raw := range m.ReasoningDetails {
		obj, typ, ok := providers.DetailObject(raw)
		if !ok {
			continue
		}
		switch {
		case typ == "thinking", typ == "redacted_thinking",
			typ == "server_tool_use", strings.HasSuffix(typ, "_tool_result"), strings.HasSuffix(typ, "_tool_use"):
			out = append(out, detail{obj, typ})
		case typ == "compaction":
			if providers.CompactionOf(obj) != providers.AnthropicCompaction {
				continue
			}
			boundary = len(out)
			out = append(out, detail{obj, typ})
		}
	}
	return out, boundary
}

// conversion reports what a converted request holds.
type conversion struct {
	thinking   bool // a thinking block is replayed
	compaction bool // a compaction block is replayed (it needs the compact beta)
}

// convert turns history messages into Messages API turns. System messages
// are returned as texts.
//
// The newest compaction block with content is the compaction boundary: the
// API reads nothing before it, and refuses a compaction block that is not
// the first block of the conversation (compaction_block_misplaced) or one
// of several (compaction_block_ambiguous). So the turns before the boundary
// message are not sent, the boundary message starts with its compaction
// block (the blocks before it in that message are dropped), and older
// compaction blocks are dropped. System messages are kept wherever they
// are: they go to the system prompt.
func convert(msgs []history.Message, textTools bool) (system []string, out []message, conv conversion) {
	details := make([][]detail, len(msgs))
	bounds := make([]int, len(msgs))
	boundaryMsg := -1
	for i := range msgs {
		if msgs[i].Role != history.Assistant {
			continue
		}
		details[i], bounds[i] = replayDetails(&msgs[i])
		if bounds[i] >= 0 {
			boundaryMsg = i
		}
	}
	push := func(role string, blocks []json.RawMessage) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			return
		}
		out = append(out, message{Role: role, Content: blocks})
	}
	for i := range msgs {
		m := &msgs[i]
		if m.Role == history.System {
			if t := m.Text(); strings.TrimSpace(t) != "" {
				system = append(system, t)
			}
			continue
		}
		if i < boundaryMsg {
			continue // before the compaction boundary: the API reads none of it
		}
		switch m.Role {
		case history.User:
			push("user", contentBlocks(m.Content))
		case history.Assistant:
			var blocks []json.RawMessage
			for j, d := range details[i] {
				if i == boundaryMsg && j < bounds[i] {
					continue // before the compaction block in its own message
				}
				if d.typ == "compaction" {
					if i != boundaryMsg || j != bounds[i] {
						continue // an older compaction block
					}
					conv.compaction = true
				}
				if d.typ == "thinking" || d.typ == "redacted_thinking" {
					conv.thinking = true
				}
				blocks = append(blocks, d.obj)
			}
			if t := m.Text(); strings.TrimSpace(t) != "" {
				blocks = append(blocks, marshal(textBlock{"text", t}))
			}
			for _, tc := range m.ToolCalls {
				if textTools {
					blocks = append(blocks, marshal(textBlock{"text", callText(tc)}))
					continue
				}
				blocks = append(blocks, marshal(toolUseBlock{"tool_use", tc.ID, tc.Name, toolInput(tc)}))
			}
			push("assistant", blocks)
		case history.Tool:
			if textTools {
				push("user", []json.RawMessage{marshal(textBlock{"text", resultText(m)})})
				continue
			}
			push("user", []json.RawMessage{marshal(toolResultBlock{"tool_result", m.ToolCallID, resultContent(m.Content)})})
		}
	}
	for i := range out {
		if out[i].Role == "user" {
			hoistToolResults(out[i].Content)
		}
	}
	if n := len(out); n == 0 || out[n-1].Role == "assistant" {
		out = append(out, message{Role: "user", Content: []json.RawMessage{marshal(textBlock{"text", ContinueText})}})
	}
	return system, out, conv
}

// hoistToolResults moves tool_result blocks to the front of a user turn,
// keeping the order within each group.
func hoistToolResults(blocks []json.RawMessage) {
	var results, rest []json.RawMessage
	for _, b := range blocks {
		if strings.HasPrefix(string(b), `{"type":"tool_result"`) {
			results = append(results, b)
		} else {
			rest = append(rest, b)
		}
	}
	if len(results) == 0 || len(rest) == 0 {
		return
	}
	copy(blocks, append(results, rest...))
}

// toolInput returns a call's input object: the arguments when they are a
// JSON object, else an object wrapping the freeform input or raw arguments.
func toolInput(tc history.ToolCall) json.RawMessage {
	args := strings.TrimSpace(tc.Arguments)
	if args != "" {
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(args), &obj) == nil && obj != nil {
			return providers.CompactJSON([]byte(args))
		}
		return marshal(map[string]string{"arguments": tc.Arguments})
	}
	if tc.Input != "" {
		return marshal(map[string]string{"input": tc.Input})
	}
	return json.RawMessage(`{}`)
}

func callText(tc history.ToolCall) string {
	arg := tc.Arguments
	if arg == "" {
		arg = tc.Input
	}
	return "[tool call " + tc.ID + ": " + tc.Name + " " + arg + "]"
}

func resultText(m *history.Message) string {
	name := ""
	if m.ToolName != "" {
		name = " (" + m.ToolName + ")"
	}
	return "[tool result " + m.ToolCallID + name + "]\n" + m.Text()
}

// resultContent is a tool_result's content: the text, or blocks when the
// result has media.
func resultContent(c history.Content) any {
	parts := c.PartList()
	media := false
	for _, p := range parts {
		if p.Raw != nil {
			media = true
		}
	}
	if !media {
		return c.Text()
	}
	return contentBlocks(c)
}

// contentBlocks converts message content to content blocks, skipping empty
// text.
func contentBlocks(c history.Content) []json.RawMessage {
	parts := c.PartList()
	if parts == nil {
		if t := c.Text(); strings.TrimSpace(t) != "" {
			return []json.RawMessage{marshal(textBlock{"text", t})}
		}
		return nil
	}
	var out []json.RawMessage
	for _, p := range parts {
		if p.Raw == nil || p.Type == "text" {
			if strings.TrimSpace(p.Text) != "" {
				out = append(out, marshal(textBlock{"text", p.Text}))
			}
			continue
		}
		out = append(out, mediaBlock(p))
	}
	return out
}

// mediaBlock converts a non-text part to an Anthropic block: image and
// document blocks pass verbatim, images of the other formats become image
// blocks, anything else a short text placeholder.
func mediaBlock(p history.Part) json.RawMessage {
	var v struct {
		Source json.RawMessage `json:"source"`
	}
	if (p.Type == "image" || p.Type == "document") && json.Unmarshal(p.Raw, &v) == nil && len(v.Source) > 0 {
		return p.Raw
	}
	if url, ok := providers.ImageURL(p); ok {
		return imageBlock(url)
	}
	return marshal(textBlock{"text", "[" + p.Type + " part omitted]"})
}

func imageBlock(url string) json.RawMessage {
	if rest, ok := strings.CutPrefix(url, "data:"); ok {
		if meta, data, ok := strings.Cut(rest, ","); ok {
			mt, _, _ := strings.Cut(meta, ";")
			return marshal(map[string]any{"type": "image", "source": map[string]string{"type": "base64", "media_type": mt, "data": data}})
		}
	}
	return marshal(map[string]any{"type": "image", "source": map[string]string{"type": "url", "url": url}})
}
