package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var updateReport = flag.Bool("update-report", false, "rewrite testdata/report/report.json")

// reportWorkspace is a workspace whose store holds the sessions of
// testdata/report/sessions, and an empty user configuration.
func reportWorkspace(t *testing.T) (ws, user string) {
	t.Helper()
	ws = t.TempDir()
	src := filepath.Join("testdata", "report", "sessions")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name(), "events.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(ws, ".vtcode", "sessions", e.Name())
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "events.jsonl"), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	user = filepath.Join(t.TempDir(), "vtcode.toml")
	if err := os.WriteFile(user, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return ws, user
}

var reportNow = func() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) }

// `vtcode-ls report --json` of recorded sessions: the golden
// testdata/report/report.json. Per session and per agent: requests, tokens
// by kind, cost under the built-in list prices (Claude Sonnet 4.5 and Haiku
// 4.5, GPT-5-Codex), the estimate without vtcode-ls, the compaction and its
// summarizer's cost; a model without a list price (ollama/qwen3) shows
// tokens and no cost, and so does every total it is part of; a session
// older than --since is left out.
func TestReportJSONGolden(t *testing.T) {
	ws, user := reportWorkspace(t)
	var out, errb bytes.Buffer
	if code := reportMain([]string{"--json", "--since", "30d", "--workspace", ws, "--config", user}, &out, &errb, reportNow); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	golden := filepath.Join("testdata", "report", "report.json")
	if *updateReport {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != string(want) {
		t.Errorf("report --json differs from %s (go test ./cmd/vtcode-ls -run TestReportJSONGolden -update-report):\n%s", golden, got)
	}
}

// The text report names every session and agent, shows "-" for a cost it
// does not know, and says the estimate is one.
func TestReportText(t *testing.T) {
	ws, user := reportWorkspace(t)
	var out, errb bytes.Buffer
	if code := reportMain([]string{"--workspace", ws, "--config", user, "--since", "2026-11-01"}, &out, &errb, reportNow); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	s := out.String()
	for _, want := range []string{"s-editor (claude-sonnet-4-5)", "s-codex (gpt-5-codex)", "codex (1 sessions)", "editor (2 sessions)",
		"auto compaction (local) 60,000 -> 9,000 tokens; 52,000 in, 2,000 out, $0.0620", "an estimate", "No list price known for ollama/qwen3"} {
		if !strings.Contains(s, want) {
			t.Errorf("the report lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "s-old") {
		t.Errorf("a session older than --since is reported:\n%s", s)
	}
	for _, bad := range [][]string{{"--since", "soon"}, {"--workspace", filepath.Join(ws, "missing")}, {"extra"}} {
		errb.Reset()
		if code := reportMain(append(bad, "--config", user), &out, &errb, reportNow); code != 2 || errb.Len() == 0 {
			t.Errorf("report %v: exit %d, %q; want 2 and a message", bad, code, errb.String())
		}
	}
}
