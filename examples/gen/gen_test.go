package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExamplesUpToDate checks that the committed transcripts are what the
// generator writes (run "go run ./examples/gen" from the root after a change).
func TestExamplesUpToDate(t *testing.T) {
	for _, ex := range examples() {
		got := ex.session.encode()
		want, err := os.ReadFile(filepath.Join("..", ex.file))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("examples/%s is stale: run go run ./examples/gen from the repository root", ex.file)
		}
	}
}

// TestExamplesShape checks what the examples promise: a long debugging session
// (150+ messages, many file reads and test runs with exit codes) and a
// refactor, with valid call/result pairing.
func TestExamplesShape(t *testing.T) {
	for _, ex := range examples() {
		msgs := ex.session.msgs
		counts := map[string]int{}
		open := map[string]bool{}
		for i, m := range msgs {
			counts[m.Role]++
			for _, tc := range m.ToolCalls {
				counts["call:"+tc.Name]++
				if !json.Valid([]byte(tc.Arguments)) {
					t.Errorf("%s: message %d: arguments are not JSON", ex.file, i)
				}
				open[tc.ID] = true
			}
			if m.Role == "tool" {
				if !open[m.ToolCallID] {
					t.Errorf("%s: message %d answers no open call %s", ex.file, i, m.ToolCallID)
				}
				delete(open, m.ToolCallID)
				if m.ToolName == "run_command" && !strings.Contains(*m.Content, "[exit code: ") {
					t.Errorf("%s: message %d: command output without exit code", ex.file, i)
				}
			}
		}
		if len(open) > 0 {
			t.Errorf("%s: %d calls without results", ex.file, len(open))
		}
		if msgs[0].Role != "system" || msgs[1].Role != "user" {
			t.Errorf("%s: starts with %s, %s", ex.file, msgs[0].Role, msgs[1].Role)
		}
		t.Logf("%s: %d messages, %v", ex.file, len(msgs), counts)
		if ex.file == "debugging-session.jsonl" {
			if len(msgs) < 150 || counts["call:read_file"] < 20 || counts["call:run_command"] < 30 {
				t.Errorf("debugging session too small: %d messages, %v", len(msgs), counts)
			}
		}
	}
	// Every line is one JSON object.
	for _, ex := range examples() {
		sc := bufio.NewScanner(bytes.NewReader(ex.session.encode()))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if !json.Valid(sc.Bytes()) {
				t.Fatalf("%s: invalid line %.80s", ex.file, sc.Text())
			}
		}
	}
}
