// Command fakeagent is the end-to-end test's stand-in for a coding agent that
// runs through the proxy (editors/vscode/scripts/e2e.sh), offline:
//
//	fakeagent upstream
//	    runs the scripted fake Anthropic provider (proxy/proxytest) on a
//	    loopback port, prints its URL on the first stdout line and serves
//	    until SIGTERM or SIGINT;
//	fakeagent run -session ID -turns N [-base URL | -base-env NAME]
//	    is the agent: N tool turns of the Messages API through the proxy at
//	    the base URL, streamed as Claude Code streams them, each request the
//	    whole conversation so far, each tool result a large file; prints
//	    "fakeagent: N requests in session ID".
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/vtcode/vtcode-ls/proxy/proxytest"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: fakeagent upstream | fakeagent run -session ID -turns N [-base URL | -base-env NAME]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "upstream":
		err = upstream()
	case "run":
		err = run(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeagent:", err)
		os.Exit(1)
	}
}

// script is the model's side: every turn reads a file, the last repeats.
func script() []proxytest.Turn {
	var turns []proxytest.Turn
	for i := 0; i < 40; i++ {
		in, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("pkg/server/file_%d.go", i)})
		turns = append(turns, proxytest.Turn{Text: fmt.Sprintf("Reading file %d to find the handler.", i),
			Calls: []proxytest.Call{{Name: "read_file", Input: in}}})
	}
	return turns
}

func upstream() error {
	// 70 % of the input reported as cache reads, as a warm prompt cache would
	up, err := proxytest.Start(script(), proxytest.Options{CacheRatio: 0.7})
	if err != nil {
		return fmt.Errorf("start upstream: %w", err)
	}
	defer up.Close()
	fmt.Println(up.URL)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	return nil
}

// fileText is the content of a read file: about 3k tokens, distinct per turn.
func fileText(turn int, path string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s\n", path)
	for j := 0; j < 90; j++ {
		fmt.Fprintf(&b, "%4d  func handler%d_%d(ctx context.Context, req *Request%d) (*Response, error) { return svc%d.Do(ctx, req, %d) }\n",
			j+1, turn, j, j%7, turn, j*17%101)
	}
	return b.String()
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"content,omitempty"`
}

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

func run(argv []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	sessionID := fs.String("session", "", "the agent's session id (x-claude-code-session-id)")
	turns := fs.Int("turns", 20, "tool turns to make")
	base := fs.String("base", "", "base URL of the proxy")
	baseEnv := fs.String("base-env", "", "environment variable holding the base URL (as vtcode-ls run --env sets it)")
	model := fs.String("model", "claude-sonnet-4-5", "model")
	if err := fs.Parse(argv); err != nil {
		return err
	}
	if *baseEnv != "" {
		*base = os.Getenv(*baseEnv)
	}
	if *base == "" || *sessionID == "" {
		return fmt.Errorf("run needs -session and a base URL")
	}
	url := strings.TrimRight(*base, "/") + "/v1/messages"
	client := &http.Client{Timeout: 2 * time.Minute}
	msgs := []message{{Role: "user", Content: []block{{Type: "text", Text: "Fix the failing test TestHandler in pkg/server. Do not change the public API."}}}}
	tools := []map[string]any{{"name": "read_file", "description": "Read a file of the workspace.",
		"input_schema": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]string{"type": "string"}}, "required": []string{"path"}}}}
	requests := 0
	for requests < *turns {
		body, err := json.Marshal(map[string]any{"model": *model, "max_tokens": 4096, "system": "You are a coding agent.",
			"tools": tools, "messages": msgs, "stream": true})
		if err != nil {
			return err
		}
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("content-type", "application/json")
		req.Header.Set("anthropic-version", "2023-06-01")
		req.Header.Set("x-api-key", "sk-ant-e2e-fake")
		req.Header.Set("x-claude-code-session-id", *sessionID)
		resp, err := client.Do(req)
		if err != nil {
			return fmt.Errorf("request %d: %w", requests+1, err)
		}
		if resp.StatusCode != http.StatusOK {
			raw, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
			resp.Body.Close()
			return fmt.Errorf("request %d: %s: %s", requests+1, resp.Status, raw)
		}
		content, err := readStream(resp.Body)
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("request %d: %w", requests+1, err)
		}
		requests++
		msgs = append(msgs, message{Role: "assistant", Content: content})
		var results []block
		for _, b := range content {
			if b.Type != "tool_use" {
				continue
			}
			var in struct {
				Path string `json:"path"`
			}
			json.Unmarshal(b.Input, &in)
			results = append(results, block{Type: "tool_result", ToolUseID: b.ID, Content: fileText(requests, in.Path)})
		}
		if len(results) == 0 {
			return fmt.Errorf("request %d: the model called no tool", requests)
		}
		msgs = append(msgs, message{Role: "user", Content: results})
	}
	fmt.Printf("fakeagent: %d requests in session %s\n", requests, *sessionID)
	return nil
}

// readStream reads a Messages SSE stream into the answer's content blocks.
func readStream(r io.Reader) ([]block, error) {
	var content []block
	var inputs []strings.Builder
	stopped := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 8<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type         string `json:"type"`
			Index        int    `json:"index"`
			ContentBlock block  `json:"content_block"`
			Delta        struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				PartialJSON string `json:"partial_json"`
			} `json:"delta"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return nil, fmt.Errorf("stream event: %w", err)
		}
		switch ev.Type {
		case "error":
			if ev.Error != nil {
				return nil, fmt.Errorf("stream error: %s", ev.Error.Message)
			}
			return nil, fmt.Errorf("stream error")
		case "content_block_start":
			if ev.Index != len(content) {
				return nil, fmt.Errorf("content block %d starts after %d", ev.Index, len(content))
			}
			b := ev.ContentBlock
			b.Input = nil
			content = append(content, b)
			inputs = append(inputs, strings.Builder{})
		case "content_block_delta":
			if ev.Index < 0 || ev.Index >= len(content) {
				return nil, fmt.Errorf("delta of unknown content block %d", ev.Index)
			}
			switch ev.Delta.Type {
			case "text_delta":
				content[ev.Index].Text += ev.Delta.Text
			case "input_json_delta":
				inputs[ev.Index].WriteString(ev.Delta.PartialJSON)
			}
		case "message_stop":
			stopped = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("stream: %w", err)
	}
	if !stopped {
		return nil, fmt.Errorf("stream ended without message_stop")
	}
	for i := range content {
		if content[i].Type == "tool_use" {
			in := inputs[i].String()
			if in == "" {
				in = "{}"
			}
			if !json.Valid([]byte(in)) {
				return nil, fmt.Errorf("tool_use %s: invalid input %q", content[i].ID, in)
			}
			content[i].Input = json.RawMessage(in)
		}
	}
	return content, nil
}
