package session_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/catalog"
	"github.com/vtcode/vtcode-ls/session"
)

func TestCapacitySources(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	if err := os.WriteFile(filepath.Join(e.dir, "vtcode.toml"), []byte(
		"[[models]]\nprovider = \"ollama\"\nmodel = \"qwen3-coder\"\ncontext_window = 65536\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.restart("") // read the file
	builtin, ok := catalog.LookupModel("anthropic", "claude-sonnet-4-6")
	if !ok || builtin.ContextWindow == 0 {
		t.Fatal("catalog has no window for claude-sonnet-4-6")
	}
	for _, tc := range []struct {
		name string
		open session.OpenParams
		max  int
		want int
	}{
		{"session window", session.OpenParams{Provider: "ollama", Model: "qwen3-coder", ContextWindow: 30000}, 0, 30000},
		{"models entry", session.OpenParams{Provider: "ollama", Model: "qwen3-coder"}, 0, 65536},
		{"catalog", session.OpenParams{Provider: "anthropic", Model: "claude-sonnet-4-6"}, 0, builtin.ContextWindow},
		{"ceiling", session.OpenParams{Provider: "ollama", Model: "qwen3-coder"}, 50000, 50000},
		{"ceiling above window", session.OpenParams{Provider: "ollama", Model: "qwen3-coder"}, 100000, 65536},
		{"ceiling alone", session.OpenParams{Provider: "ollama", Model: "unknown-model"}, 20000, 20000},
		{"unknown", session.OpenParams{Provider: "ollama", Model: "unknown-model"}, 0, 0},
	} {
		id := e.open(tc.open)
		if tc.max > 0 {
			e.setPolicy(id, `{"context":{"maxContextTokens":`+strconv.Itoa(tc.max)+`}}`)
		}
		st := e.stats(id)
		if st.Capacity != tc.want {
			t.Errorf("%s: capacity = %d, want %d", tc.name, st.Capacity, tc.want)
		}
		if tc.want == 0 && (st.CompactionThreshold != 0 || st.Pressure != 0 || st.State != "ok") {
			t.Errorf("%s: unknown capacity stats = %+v", tc.name, st)
		}
	}
}

func TestSummarizerRoute(t *testing.T) {
	c := &counting{calls: make(chan *providers.Request, 16)}
	e := newEnv(t, session.Options{Clients: clients(map[string]providers.Generator{"local": c})}, "")
	if err := os.WriteFile(filepath.Join(e.dir, "vtcode.toml"), []byte(
		"[compaction]\nsummarizer = { provider = \"local\", model = \"summarizer-1\" }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.restart("")
	id := e.open(session.OpenParams{ContextWindow: 32000}) // offline session route
	e.append(id, turns(12, 3000)...)
	if _, err := e.m.Compact(context.Background(), session.CompactParams{SessionID: id}, nil); err != nil {
		t.Fatal(err)
	}
	if req := <-c.calls; req.Model != "summarizer-1" {
		t.Errorf("summary request model = %q", req.Model)
	}
}
