// Command gen writes the example transcripts of examples/ (Message JSONL, the
// format of vtcode/appendMessages): a long debugging session and a refactor.
// The output is deterministic; run it from the repository root:
//
//	go run ./examples/gen
//
// It imports nothing from the module, so the examples stay an independent
// record of the wire format.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	out := flag.String("out", "examples", "directory to write the transcripts to")
	flag.Parse()
	for _, ex := range examples() {
		path := filepath.Join(*out, ex.file)
		if err := os.WriteFile(path, ex.session.encode(), 0o644); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %d messages, %d tool calls\n", path, len(ex.session.msgs), ex.session.calls)
	}
}

type example struct {
	file    string
	session *session
}

func examples() []example {
	return []example{
		{"debugging-session.jsonl", debuggingSession()},
		{"refactor-session.jsonl", refactorSession()},
	}
}

// message is the protocol's Message (docs/design.md §2).
type message struct {
	ID         string     `json:"id,omitempty"`
	Role       string     `json:"role"`
	Content    *string    `json:"content,omitempty"`
	ToolCalls  []toolCall `json:"toolCalls,omitempty"`
	ToolCallID string     `json:"toolCallId,omitempty"`
	ToolName   string     `json:"toolName,omitempty"`
}

type toolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// session accumulates a conversation.
type session struct {
	prefix string // message id prefix
	msgs   []message
	calls  int
}

func newSession(prefix, system string) *session {
	s := &session{prefix: prefix}
	s.add("system", system)
	return s
}

func (s *session) add(role, text string) *message {
	m := message{ID: fmt.Sprintf("%s-%03d", s.prefix, len(s.msgs)+1), Role: role}
	if text != "" || role != "assistant" {
		m.Content = &text
	}
	s.msgs = append(s.msgs, m)
	return &s.msgs[len(s.msgs)-1]
}

// user adds a user message.
func (s *session) user(text string) { s.add("user", text) }

// say adds an assistant message without tool calls.
func (s *session) say(text string) { s.add("assistant", text) }

// call is one tool call and the output it produced.
type call struct {
	name string
	args map[string]any
	out  string
}

// do adds an assistant message with the calls, followed by their results.
func (s *session) do(text string, calls ...call) {
	m := s.add("assistant", text)
	var results []message
	for _, c := range calls {
		s.calls++
		id := fmt.Sprintf("call_%s_%02d", s.prefix, s.calls)
		m.ToolCalls = append(m.ToolCalls, toolCall{ID: id, Name: c.name, Arguments: jsonArgs(c.args)})
		out := c.out
		results = append(results, message{Role: "tool", Content: &out, ToolCallID: id, ToolName: c.name})
	}
	for _, r := range results {
		r.ID = fmt.Sprintf("%s-%03d", s.prefix, len(s.msgs)+1)
		s.msgs = append(s.msgs, r)
	}
}

func jsonArgs(args map[string]any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(args); err != nil { // map keys are sorted
		panic(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

func (s *session) encode() []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, m := range s.msgs {
		if err := enc.Encode(m); err != nil {
			panic(err)
		}
	}
	return buf.Bytes()
}

// Tool helpers. Outputs look like what a coding agent's tools return.

// readFile returns a read_file call showing src with line numbers.
func readFile(path, src string) call {
	return call{name: "read_file", args: map[string]any{"path": path}, out: numbered(src, 1)}
}

// readRange returns a read_file call for lines [from, to] of src.
func readRange(path, src string, from, to int) call {
	lines := strings.Split(strings.TrimSuffix(src, "\n"), "\n")
	if to > len(lines) {
		to = len(lines)
	}
	out := numbered(strings.Join(lines[from-1:to], "\n"), from)
	return call{name: "read_file", args: map[string]any{"path": path, "start_line": from, "end_line": to}, out: out}
}

func numbered(src string, first int) string {
	var sb strings.Builder
	for i, l := range strings.Split(strings.TrimSuffix(src, "\n"), "\n") {
		fmt.Fprintf(&sb, "%6d\t%s\n", first+i, l)
	}
	return strings.TrimSuffix(sb.String(), "\n")
}

// run returns a run_command call whose output ends with the exit code.
func run(cmd string, code int, out string) call {
	out = strings.TrimRight(out, "\n")
	if out != "" {
		out += "\n"
	}
	return call{name: "run_command", args: map[string]any{"command": cmd}, out: fmt.Sprintf("$ %s\n%s[exit code: %d]", cmd, out, code)}
}

// edit returns an edit_file call replacing old by new in path.
func edit(path, old, new string) call {
	return call{
		name: "edit_file",
		args: map[string]any{"path": path, "old_string": old, "new_string": new},
		out:  fmt.Sprintf("Edited %s: replaced 1 occurrence (%d lines -> %d lines).", path, lines(old), lines(new)),
	}
}

// write returns a write_file call creating path.
func write(path, src string) call {
	return call{
		name: "write_file",
		args: map[string]any{"path": path, "content": src},
		out:  fmt.Sprintf("Wrote %s (%d lines, %d bytes).", path, lines(src), len(src)),
	}
}

// grep returns a grep call with its matches.
func grep(pattern, path, out string) call {
	return call{name: "grep", args: map[string]any{"pattern": pattern, "path": path}, out: strings.TrimRight(out, "\n")}
}

func lines(s string) int { return strings.Count(strings.TrimSuffix(s, "\n"), "\n") + 1 }

// goSrc turns the four-space indentation of a Go source written in this file
// into tabs (gofmt style) and ‵ into backquotes.
func goSrc(s string) string {
	s = strings.ReplaceAll(s, "‵", "`")
	ls := strings.Split(strings.TrimPrefix(s, "\n"), "\n")
	for i, l := range ls {
		n := 0
		for strings.HasPrefix(l[n*4:], "    ") {
			n++
		}
		ls[i] = strings.Repeat("\t", n) + l[n*4:]
	}
	return strings.Join(ls, "\n")
}

// text trims a leading newline and turns ‵ into backquotes.
func text(s string) string {
	return strings.ReplaceAll(strings.TrimPrefix(s, "\n"), "‵", "`")
}
