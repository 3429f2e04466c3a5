package session_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/session"
)

// scriptedModel answers every request with a fixed summary that claims a
// check passed which the session's record shows failing.
type scriptedModel struct{ calls chan *providers.Request }

func (m scriptedModel) Generate(_ context.Context, req *providers.Request) (*providers.Response, error) {
	m.calls <- req
	return &providers.Response{Message: history.NewText(history.Assistant, "## Goal\nShip it.\n\n## Checks\n- passed: `go test ./...` (exit 0)")}, nil
}

// TestCompactionWriter: with compaction.writer "offline" the model is not
// asked; by default the model writes the summary and the record checks it
// (the model receives the record, its contradicted claim is removed).
func TestCompactionWriter(t *testing.T) {
	m := scriptedModel{calls: make(chan *providers.Request, 16)}
	e := newEnv(t, session.Options{Clients: clients(map[string]providers.Generator{"local": m})}, "")
	failing := func(id string) {
		e.append(id, turns(10, 3000)...)
		e.append(id,
			history.Message{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: "t1", Name: "bash", Arguments: `{"command":"go test ./..."}`}}},
			history.NewToolResult("t1", "bash", "--- FAIL: TestX (0.00s)\nFAIL\texample.com/m\t0.01s\n[exit code: 1]"),
			history.NewText(history.Assistant, "It fails."),
		)
		e.append(id, turns(4, 3000)...)
	}

	id := e.open(session.OpenParams{Provider: "local", Model: "m", ContextWindow: 32000})
	failing(id)
	if _, err := e.m.Compact(context.Background(), session.CompactParams{SessionID: id, Strategy: "local"}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case req := <-m.calls:
		if last := req.Messages[len(req.Messages)-1].Text(); !strings.Contains(last, "The record of this session") {
			t.Error("the model did not receive the record")
		}
	default:
		t.Fatal("the model was not asked for the summary")
	}
	if s := e.history(id)[0].Text(); strings.Contains(s, "- passed: `go test ./...` (exit 0)") || !strings.Contains(s, "## Corrected from the record") {
		t.Errorf("the model's contradicted claim was not corrected:\n%s", s)
	}

	if err := os.WriteFile(filepath.Join(e.dir, "vtcode.toml"), []byte("[compaction]\nwriter = \"offline\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.restart("")
	id = e.open(session.OpenParams{Provider: "local", Model: "m", ContextWindow: 32000})
	failing(id)
	if _, err := e.m.Compact(context.Background(), session.CompactParams{SessionID: id, Strategy: "local"}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-m.calls:
		t.Error(`compaction.writer = "offline" asked the model`)
	default:
	}
}
