package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
)

// OpenHands V1 (software-agent-sdk) events, discriminated by "kind":
//
//   - SystemPromptEvent {system_prompt: {text}}: the system prompt;
//   - MessageEvent {source, llm_message: {role, content, reasoning_content}}:
//     a user or agent message;
//   - ActionEvent {thought, reasoning_content, tool_name, tool_call_id,
//     tool_call: {id, name, arguments}, action, llm_response_id}: one tool
//     call; the actions of one LLM response (same llm_response_id, in a row)
//     are one assistant message;
//   - ObservationEvent {tool_name, tool_call_id, observation: {content,
//     exit_code?, metadata?: {exit_code}}}, UserRejectObservation
//     {rejection_reason} and AgentErrorEvent {error}: the results of a call.
//
// Other kinds (condensation, state updates, pauses, tokens, …) carry no
// conversation and are skipped by kind. They come as a JSON array, as JSONL,
// or inside an object (a conversation export or an evaluation output line)
// under "events" or "history".

// v1Kinds are the event kinds that carry conversation.
var v1Kinds = map[string]bool{
	"SystemPromptEvent": true, "MessageEvent": true, "ActionEvent": true, "ObservationEvent": true,
	"UserRejectObservation": true, "AgentErrorEvent": true,
}

// isV1Event reports whether o is a software-agent-sdk event.
func isV1Event(o map[string]json.RawMessage) bool {
	kind := str(o["kind"])
	if kind == "" || !(hasKey(o, "id") || hasKey(o, "timestamp") || hasKey(o, "source")) {
		return false
	}
	return v1Kinds[kind] || strings.HasSuffix(kind, "Event") || strings.HasSuffix(kind, "Observation") || kind == "Condensation"
}

// v1Events returns the events of an object that holds them under "events"
// or "history".
func v1Events(o map[string]json.RawMessage) ([]map[string]json.RawMessage, bool) {
	for _, k := range []string{"events", "history"} {
		if evs, ok := objectArray(o[k]); ok && len(evs) > 0 && isV1Event(evs[0]) {
			return evs, true
		}
	}
	return nil, false
}

type v1Conv struct {
	b        *builder
	lastResp string // llm_response_id of the open assistant message
	open     int    // index of that message, -1 when none
}

// convertOpenHandsV1Lines converts JSONL whose lines are events, or objects
// (evaluation outputs) that each hold one conversation's events.
func convertOpenHandsV1Lines(lines []line) (*Transcript, error) {
	var convs [][]map[string]json.RawMessage
	var events []map[string]json.RawMessage
	for _, l := range lines {
		if evs, ok := v1Events(l.obj); ok {
			convs = append(convs, evs)
			continue
		}
		events = append(events, l.obj)
	}
	if len(events) > 0 {
		convs = append(convs, events)
	}
	return convertOpenHandsV1(convs)
}

func convertOpenHandsV1(convs [][]map[string]json.RawMessage) (*Transcript, error) {
	c := &v1Conv{b: newBuilder(FormatOpenHandsV1)}
	for _, events := range convs {
		c.open, c.lastResp = -1, ""
		for i, e := range events {
			if err := c.event(e); err != nil {
				return nil, fmt.Errorf("event %d: %w", i, err)
			}
		}
	}
	c.b.t.Conversations = len(convs)
	return c.b.done(), nil
}

func (c *v1Conv) event(e map[string]json.RawMessage) error {
	kind := str(e["kind"])
	if kind != "ActionEvent" {
		c.open, c.lastResp = -1, ""
	}
	switch kind {
	case "SystemPromptEvent":
		sp := e["system_prompt"]
		text := str(sp)
		if o := object(sp); o != nil {
			text = str(o["text"])
		}
		c.b.add(history.NewText(history.System, text))
	case "MessageEvent":
		msg := object(e["llm_message"])
		if msg == nil {
			return fmt.Errorf("MessageEvent without llm_message")
		}
		text, ok := textOf(msg["content"])
		if !ok {
			return fmt.Errorf("llm_message content is neither text nor parts")
		}
		if ext, _ := textOf(e["extended_content"]); ext != "" {
			text = strings.TrimSpace(text + "\n" + ext)
		}
		var m history.Message
		switch role := firstNonEmpty(str(msg["role"]), str(e["source"])); role {
		case "user":
			m = history.NewText(history.User, text)
		case "assistant", "agent":
			m = history.NewText(history.Assistant, text)
			m.Reasoning = str(msg["reasoning_content"])
		case "system":
			m = history.NewText(history.System, text)
		default:
			c.b.skip("role:" + role)
			c.b.drop("roles", role)
			return nil
		}
		c.b.add(m)
	case "ActionEvent":
		c.action(e)
	case "ObservationEvent":
		obs := object(e["observation"])
		c.result(e, v1ObservationText(obs))
	case "UserRejectObservation":
		c.result(e, "Action rejected: "+firstNonEmpty(str(e["rejection_reason"]), "rejected by the user"))
	case "AgentErrorEvent":
		if str(e["tool_call_id"]) == "" {
			c.b.add(history.NewText(history.User, str(e["error"])))
			return nil
		}
		c.result(e, str(e["error"]))
	default:
		c.b.skip(kind)
	}
	return nil
}

func (c *v1Conv) action(e map[string]json.RawMessage) {
	call := history.ToolCall{ID: str(e["tool_call_id"]), Name: str(e["tool_name"])}
	if tc := object(e["tool_call"]); tc != nil {
		call.ID = firstNonEmpty(str(tc["id"]), call.ID)
		call.Name = firstNonEmpty(str(tc["name"]), call.Name)
		call.Arguments = argumentsOf(tc["arguments"])
	}
	if call.Arguments == "" {
		call.Arguments = "{}"
		if a := object(e["action"]); a != nil {
			delete(a, "kind")
			if b, err := json.Marshal(a); err == nil {
				call.Arguments = string(b) // map keys sorted: deterministic
			}
		}
	}
	call.ID = c.b.callID(call.ID)
	resp := str(e["llm_response_id"])
	if c.open >= 0 && resp != "" && resp == c.lastResp {
		m := &c.b.t.Messages[c.open]
		m.ToolCalls = append(m.ToolCalls, call)
		m.Forget()
		return
	}
	m := history.Message{Role: history.Assistant, ToolCalls: []history.ToolCall{call}}
	if thought, _ := textOf(e["thought"]); thought != "" {
		m.Content = history.Text(thought)
	}
	m.Reasoning = str(e["reasoning_content"])
	c.open, c.lastResp = len(c.b.t.Messages), resp
	c.b.add(m)
}

func (c *v1Conv) result(e map[string]json.RawMessage, text string) {
	id := str(e["tool_call_id"])
	if id == "" {
		c.b.add(history.NewText(history.User, text))
		return
	}
	c.b.add(history.NewToolResult(id, str(e["tool_name"]), text))
}

// v1ObservationText is an observation's text content (or output), with its
// exit code when the observation reports one and the text does not say it.
func v1ObservationText(obs map[string]json.RawMessage) string {
	if obs == nil {
		return ""
	}
	text, ok := textOf(obs["content"])
	if !ok || text == "" {
		text = firstNonEmpty(str(obs["output"]), text)
	}
	code, has := num(obs["exit_code"])
	if md := object(obs["metadata"]); md != nil {
		if c, ok := num(md["exit_code"]); ok {
			code, has = c, true
		}
	}
	if has && code != -1 {
		text = withExitCode(text, code)
	}
	if isTrue(obs["is_error"]) && !strings.HasPrefix(text, "Error") {
		text = "Error: " + text
	}
	return text
}

// eventFileRE names one persisted event: event-<index, 5 or more
// digits>-<event id>.json.
var eventFileRE = regexp.MustCompile(`^event-(\d{5,})-[0-9A-Za-z\-]{8,}\.json$`)

// loadEventDir reads a persisted V1 conversation: the directory itself or
// its events/ subdirectory holds one JSON file per event, named
// event-<index>-<id>.json; they are read in index order as one event list.
func loadEventDir(dir string) (*Transcript, error) {
	evDir := dir
	if fi, err := os.Stat(filepath.Join(dir, "events")); err == nil && fi.IsDir() {
		evDir = filepath.Join(dir, "events")
	}
	entries, err := os.ReadDir(evDir)
	if err != nil {
		return nil, fmt.Errorf("read transcript directory: %w", err)
	}
	type file struct {
		idx  int
		name string
	}
	var files []file
	for _, e := range entries {
		m := eventFileRE.FindStringSubmatch(e.Name())
		if m == nil || !e.Type().IsRegular() {
			continue
		}
		idx, err := strconv.Atoi(m[1])
		if err != nil {
			continue
		}
		files = append(files, file{idx, e.Name()})
	}
	if len(files) == 0 {
		return nil, &UnknownFormatError{Name: dir, Reason: "a directory without OpenHands V1 event files (events/event-NNNNN-ID.json)"}
	}
	sort.Slice(files, func(a, b int) bool { return files[a].idx < files[b].idx })
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, f := range files {
		data, err := readBounded(filepath.Join(evDir, f.name), maxSize-int64(buf.Len()))
		if err != nil {
			return nil, err
		}
		data = bytes.TrimSpace(data)
		if len(data) == 0 || data[0] != '{' || !json.Valid(data) {
			return nil, fmt.Errorf("%s: %s is not one JSON event", dir, f.name)
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(data)
	}
	buf.WriteByte(']')
	t, err := Parse(&buf, dir)
	if err != nil {
		return nil, err
	}
	if t.Format != FormatOpenHandsV1 {
		return nil, &UnknownFormatError{Name: dir, Reason: "a directory whose event files are not OpenHands V1 events"}
	}
	return t, nil
}

// readBounded reads at most limit bytes of the file at path.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open transcript: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: transcript larger than %d bytes", filepath.Dir(path), maxSize)
	}
	return data, nil
}
