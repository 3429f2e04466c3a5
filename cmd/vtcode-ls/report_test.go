package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/daemon"
	"github.com/vtcode/vtcode-ls/store"
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
	if code := reportMain([]string{"--json", "--since", "30d", "--workspace", ws, "--config", user}, &out, &errb, reportNow, noEnv); code != 0 {
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
	if code := reportMain([]string{"--workspace", ws, "--config", user, "--since", "2026-11-01"}, &out, &errb, reportNow, noEnv); code != 0 {
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
		if code := reportMain(append(bad, "--config", user), &out, &errb, reportNow, noEnv); code != 2 || errb.Len() == 0 {
			t.Errorf("report %v: exit %d, %q; want 2 and a message", bad, code, errb.String())
		}
	}
}

func noEnv(string) string { return "" }

// `vtcode-ls report --all --json` reports every workspace of the user's
// registry that still has a session store, each session labelled with its
// workspace, and adds them per agent and in total: the golden
// testdata/report/report-all.json (two workspaces holding the same logs, so
// every count is twice the one-workspace report's). A registered workspace
// that was deleted is skipped; --all with --workspace is an error.
func TestReportAllJSONGolden(t *testing.T) {
	base := t.TempDir()
	var roots []string
	for _, name := range []string{"alpha", "beta"} {
		ws, _ := reportWorkspace(t)
		root := filepath.Join(base, name)
		if err := os.Rename(ws, root); err != nil {
			t.Fatal(err)
		}
		roots = append(roots, root)
	}
	_, user := reportWorkspace(t)
	dir := t.TempDir()
	env := func(k string) string {
		if k == daemon.DirEnv {
			return dir
		}
		return ""
	}
	reg, err := daemon.RegistryPath(env)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range append(roots, filepath.Join(base, "gone")) {
		if err := store.RecordWorkspace(reg, r, reportNow()); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	if code := reportMain([]string{"--all", "--json", "--since", "30d", "--config", user}, &out, &errb, reportNow, env); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	got := strings.ReplaceAll(out.String(), base, "$BASE")
	golden := filepath.Join("testdata", "report", "report-all.json")
	if *updateReport {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("report --all --json differs from %s (-update-report):\n%s", golden, got)
	}
	out.Reset()
	if code := reportMain([]string{"--all", "--config", user}, &out, &errb, reportNow, env); code != 0 || !strings.Contains(out.String(), "alpha/s-editor") || !strings.Contains(out.String(), "beta/s-codex") {
		t.Errorf("text report --all: exit %d, %s", code, out.String())
	}
	errb.Reset()
	if code := reportMain([]string{"--all", "--workspace", roots[0], "--config", user}, &out, &errb, reportNow, env); code != 2 || !strings.Contains(errb.String(), "exclusive") {
		t.Errorf("--all --workspace: exit %d, %q; want 2 and a message", code, errb.String())
	}
}
