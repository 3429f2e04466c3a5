// Package transcript imports recorded coding-agent sessions as protocol
// messages, so that `vtcode-ls replay` and `vtcode-ls compact` can play them
// through the request pipeline.
//
// The format of a file is detected from its content, never from its name, and
// never guessed: content that matches no known format is an
// [*UnknownFormatError] that lists the formats that exist. Records that carry
// no conversation (progress events, snapshots, token counts, UI output) are
// skipped and counted per kind.
//
// Supported formats (see [Formats]):
//
//   - vtcode-messages: this protocol's Message JSONL (or a JSON array of messages);
//   - claude-code: Claude Code session JSONL;
//   - codex-rollout: Codex CLI rollout JSONL;
//   - openai-chat: OpenAI chat-completions messages JSON, a top-level array or
//     an object with a messages array (a request body), with or without tool_calls;
//   - swe-agent: SWE-agent .traj (history, or the trajectory of actions and observations);
//   - mini-swe-agent: mini-swe-agent .traj.json (messages);
//   - openhands: OpenHands event history, as a JSON array of events, a JSONL
//     of events, or evaluation output JSONL whose lines carry a history;
//   - aider: aider's .aider.chat.history.md markdown;
//   - gemini-cli: Gemini CLI chat history ({role, parts} Content values, as
//     saved by /chat save) and session recordings (JSON or JSONL);
//   - pi: pi coding-agent session JSONL (the branch the session continued on);
//   - openhands-v1: OpenHands V1 (software-agent-sdk) events, as a JSON array,
//     JSONL, an export/evaluation object holding them, or a persisted
//     conversation directory (events/event-<index>-<id>.json).
//
// SWE-agent and mini-swe-agent talk to their model in plain text: the
// command is an assistant message's action field or its one bash block,
// and its output comes back as the next user message. Each such pair is
// imported as what it is, a tool call ("bash", the command as its input)
// answered by a tool result, so that clearing and the evidence of checks
// apply to it; the task, the reminders and every other user message stay
// user messages.
//
// A file that matches a format but whose content the conversion mostly did
// not carry (while dropping roles, parts or records it does not know) is a
// [*MisreadError] that says what was dropped, never a silent misread.
//
// The agent's own compactions the record holds (Claude Code's compact
// summary, Codex compacted items, Copilot CLI's and opencode's summaries)
// and the prefix each replaced are listed by [Transcript.AgentCompactions].
//
// Conversion keeps the ids the source has (message ids and tool call ids);
// a tool call without an id gets a deterministic one (call_1, call_2, … in
// order of appearance).
package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
)

// The format names a [Transcript] reports.
const (
	FormatMessages     = "vtcode-messages"
	FormatClaudeCode   = "claude-code"
	FormatCodex        = "codex-rollout"
	FormatChat         = "openai-chat"
	FormatSWEAgent     = "swe-agent"
	FormatMiniSWEAgent = "mini-swe-agent"
	FormatOpenHands    = "openhands"
	FormatAider        = "aider"
	FormatGemini       = "gemini-cli"
	FormatPi           = "pi"
	FormatOpenHandsV1  = "openhands-v1"
	FormatOpencode     = "opencode"
	FormatCopilot      = "copilot-cli"
)

var formats = []struct{ name, desc string }{
	{FormatMessages, "vtcode Message JSONL"},
	{FormatClaudeCode, "Claude Code session JSONL"},
	{FormatCodex, "Codex CLI rollout JSONL"},
	{FormatChat, "OpenAI chat-completions messages JSON"},
	{FormatSWEAgent, "SWE-agent .traj"},
	{FormatMiniSWEAgent, "mini-swe-agent .traj.json"},
	{FormatOpenHands, "OpenHands event history JSON/JSONL"},
	{FormatAider, "aider chat history markdown"},
	{FormatGemini, "Gemini CLI chat history or session JSON/JSONL"},
	{FormatPi, "pi coding-agent session JSONL"},
	{FormatOpenHandsV1, "OpenHands V1 software-agent-sdk events JSON/JSONL"},
	{FormatOpencode, "opencode export session JSON"},
	{FormatCopilot, "GitHub Copilot CLI events.jsonl"},
}

// Formats returns the names of the supported formats, in the order above.
func Formats() []string {
	out := make([]string, len(formats))
	for i, f := range formats {
		out[i] = f.name
	}
	return out
}

// Transcript is a recorded session converted to protocol messages.
type Transcript struct {
	// Format is the detected format, one of [Formats].
	Format string
	// Messages is the conversation, in recorded order.
	Messages []history.Message
	// Skipped counts the records that carry no conversation.
	Skipped int
	// SkippedByKind breaks Skipped down by record kind (for example
	// "progress", "file-history-snapshot", "event_msg/token_count").
	SkippedByKind map[string]int
	// Conversations is the number of separate conversations the file held;
	// they are concatenated in Messages. It is 1 except for evaluation outputs
	// with several instances.
	Conversations int

	dropped map[string]map[string]int // what the conversion did not carry, for the misread guard

	// compactions are the agent's own compactions not imported as marked
	// messages (see AgentCompactions).
	compactions []AgentCompaction
}

// UnknownFormatError reports content that matches no supported format.
type UnknownFormatError struct {
	Name   string // the file name given to Parse
	Reason string // what the content looked like
}

func (e *UnknownFormatError) Error() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s: unknown transcript format", e.Name)
	if e.Reason != "" {
		fmt.Fprintf(&sb, " (%s)", e.Reason)
	}
	sb.WriteString("; supported formats: ")
	for i, f := range formats {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "%s (%s)", f.name, f.desc)
	}
	return sb.String()
}

// maxSize bounds what Parse reads.
const maxSize = 1 << 30

// Load reads and converts the transcript at path. A directory is read as a
// persisted OpenHands V1 conversation (see [loadEventDir]).
func Load(path string) (*Transcript, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return loadEventDir(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open transcript: %w", err)
	}
	defer f.Close()
	return Parse(f, path)
}

// Parse reads a transcript from r, detects its format and converts it. name is
// used in error messages only.
func Parse(r io.Reader, name string) (*Transcript, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(data) > maxSize {
		return nil, fmt.Errorf("%s: transcript larger than %d bytes", name, maxSize)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	t, err := parse(data, name)
	if err != nil {
		return nil, err
	}
	if err := checkCoverage(t, len(data), name); err != nil {
		return nil, err
	}
	if len(t.Messages) == 0 {
		return nil, fmt.Errorf("%s: %s transcript holds no conversation messages", name, t.Format)
	}
	if t.Conversations == 0 {
		t.Conversations = 1
	}
	return t, nil
}

func parse(data []byte, name string) (*Transcript, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, &UnknownFormatError{Name: name, Reason: "empty file"}
	}
	switch trimmed[0] {
	case '{', '[':
		if single, ok := singleValue(trimmed); ok {
			if t, err, matched := parseDocument(single, name); matched {
				return t, err
			}
			if trimmed[0] == '[' {
				return nil, &UnknownFormatError{Name: name, Reason: "a JSON array whose elements are neither messages nor events"}
			}
			if bytes.Contains(trimmed, []byte("\n")) {
				return nil, &UnknownFormatError{Name: name, Reason: "a JSON object with keys " + keyList(single)}
			}
		}
		return parseJSONL(trimmed, name)
	case '#':
		if isAider(trimmed) {
			return parseAider(trimmed)
		}
	}
	return nil, &UnknownFormatError{Name: name, Reason: "neither JSON, JSONL nor a known markdown chat log"}
}

// keyList returns the sorted top-level keys of a JSON object, for messages.
func keyList(doc json.RawMessage) string {
	o := object(doc)
	ks := make([]string, 0, len(o))
	for k := range o {
		ks = append(ks, strconv.Quote(k))
	}
	sort.Strings(ks)
	if len(ks) > 12 {
		ks = append(ks[:12], "...")
	}
	return "[" + strings.Join(ks, ", ") + "]"
}

// singleValue reports whether data is exactly one JSON value.
func singleValue(data []byte) (json.RawMessage, bool) {
	if !json.Valid(data) {
		return nil, false
	}
	return json.RawMessage(data), true
}

// parseDocument converts a file that is one JSON value. matched is false when
// the value is an object that should be read as a one-line JSONL file.
func parseDocument(doc json.RawMessage, name string) (t *Transcript, err error, matched bool) {
	if doc[0] == '[' {
		var elems []json.RawMessage
		if err := json.Unmarshal(doc, &elems); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err), true
		}
		objs, ok := objects(elems)
		if !ok || len(objs) == 0 {
			return nil, nil, false
		}
		switch {
		case isV1Event(objs[0]):
			t, err := convertOpenHandsV1([][]map[string]json.RawMessage{objs})
			return t, wrap(name, err), true
		case isEvent(objs[0]):
			t, err := convertOpenHands([][]map[string]json.RawMessage{objs})
			return t, wrap(name, err), true
		case isGeminiContents(objs):
			t, err := convertGeminiContents(objs)
			return t, wrap(name, err), true
		case hasKey(objs[0], "role"):
			if anyProtocolMessage(objs) {
				t, err := convertProtocol(elems)
				return t, wrap(name, err), true
			}
			t, err := convertChat(objs, FormatChat, nil)
			return t, wrap(name, err), true
		}
		return nil, nil, false
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(doc, &obj); err != nil || obj == nil {
		return nil, nil, false
	}
	if isOpencodeExport(obj) {
		t, err := convertOpencode(obj)
		return t, wrap(name, err), true
	}
	if evs, ok := v1Events(obj); ok {
		t, err := convertOpenHandsV1([][]map[string]json.RawMessage{evs})
		return t, wrap(name, err), true
	}
	if h, ok := objectArray(obj["history"]); ok && isGeminiContents(h) {
		t, err := convertGeminiContents(h)
		return t, wrap(name, err), true
	}
	if msgs, ok := objectArray(obj["messages"]); ok && isGeminiSession(obj) {
		t, err := convertGeminiSession(msgs)
		return t, wrap(name, err), true
	}
	switch {
	case isMiniSWEAgent(obj):
		msgs, _ := objectArray(obj["messages"])
		t, err := convertChat(msgs, FormatMiniSWEAgent, miniSWEProtocol.submitting(str(object(obj["info"])["submission"])))
		return t, wrap(name, err), true
	case isSWEAgent(obj):
		t, err := convertSWEAgent(obj)
		return t, wrap(name, err), true
	case isOpenHandsInstance(obj):
		h, _ := objectArray(obj["history"])
		t, err := convertOpenHands([][]map[string]json.RawMessage{h})
		return t, wrap(name, err), true
	case hasKey(obj, "messages"):
		msgs, ok := objectArray(obj["messages"])
		if ok && len(msgs) > 0 && hasKey(msgs[0], "role") {
			t, err := convertChat(msgs, FormatChat, nil)
			return t, wrap(name, err), true
		}
	}
	return nil, nil, false
}

func wrap(name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", name, err)
}

// line is one record of a JSONL file.
type line struct {
	no  int // 1-based line number
	raw json.RawMessage
	obj map[string]json.RawMessage
}

func parseJSONL(data []byte, name string) (*Transcript, error) {
	var lines []line
	var torn int
	raw := bytes.Split(data, []byte("\n"))
	for i, l := range raw {
		l = bytes.TrimSpace(l)
		if len(l) == 0 {
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(l, &obj); err != nil || obj == nil {
			if i == len(raw)-1 && len(lines) > 0 {
				torn++ // a torn last line, as left by a killed writer
				continue
			}
			if len(lines) == 0 {
				return nil, &UnknownFormatError{Name: name, Reason: fmt.Sprintf("line %d is not a JSON object", i+1)}
			}
			return nil, fmt.Errorf("%s:%d: not a JSON object", name, i+1)
		}
		lines = append(lines, line{no: i + 1, raw: l, obj: obj})
	}
	format := detectJSONL(lines)
	var t *Transcript
	var err error
	switch format {
	case FormatClaudeCode:
		t, err = convertClaude(lines)
	case FormatCodex:
		t, err = convertCodex(lines)
	case FormatOpenHands:
		t, err = convertOpenHandsLines(lines)
	case FormatOpenHandsV1:
		t, err = convertOpenHandsV1Lines(lines)
	case FormatGemini:
		t, err = convertGeminiLines(lines)
	case FormatPi:
		t, err = convertPi(lines)
	case FormatCopilot:
		t, err = convertCopilot(lines)
	case FormatChat:
		objs := make([]map[string]json.RawMessage, len(lines))
		for i, l := range lines {
			objs[i] = l.obj
		}
		t, err = convertChat(objs, FormatChat, nil)
	case FormatMessages:
		t, err = convertProtocolLines(lines)
	default:
		return nil, &UnknownFormatError{Name: name, Reason: "JSONL records of no known kind"}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if torn > 0 {
		t.skip("torn-line")
	}
	return t, nil
}

// detectJSONL returns the format of the first record that identifies one.
func detectJSONL(lines []line) string {
	weakMessages := false
	for _, l := range lines {
		o := l.obj
		typ := str(o["type"])
		switch {
		case isPiHeader(o) || isPiEntry(o):
			return FormatPi
		case isCopilotEvent(o):
			return FormatCopilot
		case isGeminiRecord(o):
			return FormatGemini
		case isV1Event(o):
			return FormatOpenHandsV1
		case func() bool { _, ok := v1Events(o); return ok }():
			return FormatOpenHandsV1
		case hasKey(o, "payload") && (typ == "session_meta" || typ == "response_item" || typ == "event_msg" || typ == "turn_context" || typ == "compacted"):
			return FormatCodex
		case claudeTypes[typ] && (hasKey(o, "uuid") || hasKey(o, "sessionId") || hasKey(o, "leafUuid") || hasKey(o, "messageId") || hasKey(o, "snapshot")):
			return FormatClaudeCode
		case isOpenHandsInstance(o) || isEvent(o):
			return FormatOpenHands
		case str(o["role"]) == "developer" || str(o["role"]) == "function":
			return FormatChat // chat-completions roles the protocol does not have
		case hasKey(o, "role") && history.Role(str(o["role"])).Valid():
			if hasKey(o, "toolCalls") || hasKey(o, "toolCallId") || hasKey(o, "reasoningDetails") || hasKey(o, "toolName") {
				return FormatMessages
			}
			if hasKey(o, "tool_calls") || hasKey(o, "tool_call_id") || hasKey(o, "function_call") {
				return FormatChat
			}
			weakMessages = true
		}
	}
	if weakMessages {
		return FormatMessages
	}
	return ""
}

var claudeTypes = map[string]bool{
	"user": true, "assistant": true, "system": true, "summary": true, "progress": true,
	"file-history-snapshot": true, "queue-operation": true,
}

// builder accumulates converted messages.
type builder struct {
	t     Transcript
	synth int
}

func newBuilder(format string) *builder {
	return &builder{t: Transcript{Format: format, SkippedByKind: map[string]int{}}}
}

func (t *Transcript) skip(kind string) {
	if t.SkippedByKind == nil {
		t.SkippedByKind = map[string]int{}
	}
	t.Skipped++
	t.SkippedByKind[kind]++
}

func (b *builder) skip(kind string) { b.t.skip(kind) }

func (b *builder) add(m history.Message) { b.t.Messages = append(b.t.Messages, m) }

// callID returns id, or a deterministic synthetic id when it is empty.
func (b *builder) callID(id string) string {
	if id != "" {
		return id
	}
	b.synth++
	return fmt.Sprintf("call_%d", b.synth)
}

func (b *builder) done() *Transcript {
	t := b.t
	return &t
}

// SkippedKinds returns the kinds of skipped records sorted by name, for display.
func (t *Transcript) SkippedKinds() []string {
	ks := make([]string, 0, len(t.SkippedByKind))
	for k := range t.SkippedByKind {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Helpers over generic JSON objects.

func hasKey(o map[string]json.RawMessage, k string) bool {
	v, ok := o[k]
	return ok && !isNull(v)
}

func isNull(v json.RawMessage) bool { return len(v) == 0 || string(bytes.TrimSpace(v)) == "null" }

// str returns the string value of v, or "" when v is not a string.
func str(v json.RawMessage) string {
	if len(v) == 0 || v[0] != '"' {
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}

// num returns the integer value of v and whether it is a number.
func num(v json.RawMessage) (int64, bool) {
	var n json.Number
	if len(v) == 0 || json.Unmarshal(v, &n) != nil {
		return 0, false
	}
	i, err := n.Int64()
	if err != nil {
		f, ferr := n.Float64()
		if ferr != nil {
			return 0, false
		}
		return int64(f), true
	}
	return i, true
}

func object(v json.RawMessage) map[string]json.RawMessage {
	if len(v) == 0 || v[0] != '{' {
		return nil
	}
	var o map[string]json.RawMessage
	if json.Unmarshal(v, &o) != nil {
		return nil
	}
	return o
}

func objects(elems []json.RawMessage) ([]map[string]json.RawMessage, bool) {
	out := make([]map[string]json.RawMessage, 0, len(elems))
	for _, e := range elems {
		o := object(bytes.TrimSpace(e))
		if o == nil {
			return nil, false
		}
		out = append(out, o)
	}
	return out, true
}

func objectArray(v json.RawMessage) ([]map[string]json.RawMessage, bool) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || v[0] != '[' {
		return nil, false
	}
	var elems []json.RawMessage
	if json.Unmarshal(v, &elems) != nil {
		return nil, false
	}
	return objects(elems)
}

func rawArray(v json.RawMessage) []json.RawMessage {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || v[0] != '[' {
		return nil
	}
	var elems []json.RawMessage
	if json.Unmarshal(v, &elems) != nil {
		return nil
	}
	return elems
}

// withExitCode returns a command's output text ending in "[exit code N]",
// unless the text already says "exit code N": harnesses that report the exit
// code beside the output (a metadata field) lose it otherwise, since a tool
// result carries text only.
func withExitCode(text string, code int64) string {
	mark := fmt.Sprintf("exit code %d", code)
	if strings.Contains(strings.ToLower(text), mark) {
		return text
	}
	return strings.TrimRight(text, "\n") + "\n[" + mark + "]"
}

// compact returns v without insignificant whitespace.
func compact(v json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return append(json.RawMessage(nil), v...)
	}
	return buf.Bytes()
}

// textOf returns the text of a content value: a string, or the text of the
// text-like parts of an array, joined by newlines. ok is false for other shapes.
func textOf(v json.RawMessage) (text string, ok bool) {
	v = bytes.TrimSpace(v)
	if isNull(v) {
		return "", true
	}
	switch v[0] {
	case '"':
		return str(v), true
	case '[':
		var parts []string
		for _, e := range rawArray(v) {
			o := object(e)
			if o == nil {
				if s := str(e); s != "" {
					parts = append(parts, s)
				}
				continue
			}
			if t, ok := o["text"]; ok {
				parts = append(parts, str(t))
			}
		}
		return strings.Join(parts, "\n"), true
	}
	return "", false
}

// contentOf converts a content value into [history.Content]: a string stays a
// string, an array becomes parts (non-text parts kept verbatim).
func contentOf(v json.RawMessage) (history.Content, error) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return history.Content{}, nil
	}
	var c history.Content
	if err := c.UnmarshalJSON(v); err != nil {
		return history.Content{}, fmt.Errorf("content: %w", err)
	}
	return c, nil
}
