package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/config"
	"github.com/vtcode/vtcode-ls/daemon"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/anthropic"
	"github.com/vtcode/vtcode-ls/providers/catalog"
	"github.com/vtcode/vtcode-ls/providers/httpapi"
	"github.com/vtcode/vtcode-ls/providers/providertest"
	"github.com/vtcode/vtcode-ls/session"
	"github.com/vtcode/vtcode-ls/store"
	"github.com/vtcode/vtcode-ls/summary"
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
// summarizer's cost (s-editor: an older log's, in its boundary; s-bills:
// bill events, the compaction committing its own call and the pass 1 whose
// note it used, two previews never applied unused); a model without a list price (ollama/qwen3) shows
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
// does not know, says the estimate is one, and shows per session what its
// compactions' summarizer calls cost and what the calls no compaction
// committed cost.
func TestReportText(t *testing.T) {
	ws, user := reportWorkspace(t)
	var out, errb bytes.Buffer
	if code := reportMain([]string{"--workspace", ws, "--config", user, "--since", "2026-11-01"}, &out, &errb, reportNow, noEnv); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	s := out.String()
	for _, want := range []string{"s-editor (claude-sonnet-4-5)", "s-codex (gpt-5-codex)", "codex (1 sessions)", "editor (3 sessions)",
		"auto compaction (local) 60,000 -> 9,000 tokens; 52,000 in, 2,000 out, $0.0620", "an estimate", "No list price known for ollama/qwen3",
		"s-bills: auto compaction (local) 36,000 -> 5,000 tokens; 2 calls, 34,000 in, 1,400 out, $0.1176",
		"s-bills: unused (previews not applied, pass-1 notes discarded, failed compactions) 2 calls; 61,000 in, 1,850 out, $0.2108"} {
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

// The totals of `vtcode-ls report` are the sums of the usage a provider
// returned, exactly: a session whose summarizer (a fake Anthropic upstream
// on loopback) answers a preview never applied, a preview applied and a
// failed call, beside the agent's answers, reports every token it billed
// once, the applied preview as the compaction's and the other as unused.
func TestReportTotalsAreTheUpstreamsBills(t *testing.T) {
	srv := providertest.NewServer(t)
	t.Cleanup(srv.Close)
	var sent catalog.Bill
	answer := func(in, read, w1h, out int) {
		srv.Push(providertest.JSON(200, fmt.Sprintf(`{"id":"msg_01Rep","type":"message","role":"assistant","model":"claude-sonnet-4-5",`+
			`"content":[{"type":"text","text":"Summary: pkg/parser fixed, go test ./... passes."}],"stop_reason":"end_turn","stop_sequence":null,`+
			`"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":%d},"output_tokens":%d}}`,
			in, w1h, read, w1h, out)))
		sent = sent.Add(catalog.Bill{Input: in, CacheRead: read, CacheWrite1h: w1h, Output: out})
	}
	g, err := anthropic.New(anthropic.Config{Endpoint: httpapi.Endpoint{Provider: "anthropic", BaseURL: srv.URL,
		APIKey: "sk-ant-test-key-0001", Model: "claude-sonnet-4-5", Retry: httpapi.RetryPolicy{MaxAttempts: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	ws, user := t.TempDir(), filepath.Join(t.TempDir(), "vtcode.toml")
	if err := os.WriteFile(user, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	mgr := session.NewManager(session.Options{UserConfig: user, NoWatch: true,
		Clients: func(r providers.Route, _ config.Config) (providers.Generator, error) {
			if r.Provider == "anthropic" {
				return g, nil
			}
			return summary.New(), nil
		}})
	defer mgr.Close()
	if err := mgr.AddWorkspace(ws, json.RawMessage(`{"context":{"tokenizer":"approx"}}`)); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	open, err := mgr.OpenSession(ctx, session.OpenParams{Workspace: ws, Provider: "anthropic", Model: "claude-sonnet-4-5", ContextWindow: 40000})
	if err != nil {
		t.Fatal(err)
	}
	id := open.SessionID
	var msgs []history.Message
	for i := range 12 {
		msgs = append(msgs, history.NewText(history.User, fmt.Sprintf("Step %d: fix pkg/mod%d.", i, i)),
			history.NewText(history.Assistant, strings.Repeat(fmt.Sprintf("Edited pkg/mod%d/mod.go line by line. ", i), 60)))
	}
	if _, err := mgr.AppendMessages(ctx, session.AppendParams{SessionID: id, Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	agent := history.Usage{InputTokens: 1200, CacheReadTokens: 7000, CacheCreationTokens: 800, OutputTokens: 300}
	if _, err := mgr.RecordResponse(ctx, session.RecordParams{SessionID: id, Message: history.NewText(history.Assistant, "Done."), Usage: &agent}); err != nil {
		t.Fatal(err)
	}
	sent = sent.Add(catalog.Bill{Input: 1200, CacheRead: 7000, CacheWrite5m: 800, Output: 300})
	srv.Push(providertest.AnthropicError(529, "overloaded_error", "Overloaded"))
	if _, err := mgr.PreviewCompact(ctx, session.CompactParams{SessionID: id}, nil); err == nil {
		t.Fatal("an overloaded upstream previewed")
	}
	answer(9000, 0, 0, 400)
	if _, err := mgr.PreviewCompact(ctx, session.CompactParams{SessionID: id}, nil); err != nil {
		t.Fatal(err)
	}
	answer(2000, 7000, 500, 350)
	pv, err := mgr.PreviewCompact(ctx, session.CompactParams{SessionID: id}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mgr.CommitPreview(ctx, session.CommitParams{SessionID: id, PreviewID: pv.PreviewID}); err != nil {
		t.Fatal(err)
	}
	if err := mgr.Close(); err != nil {
		t.Fatal(err)
	}

	var out, errb bytes.Buffer
	if code := reportMain([]string{"--json", "--workspace", ws, "--config", user}, &out, &errb, time.Now, noEnv); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rep reportOut
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	tot := rep.Total
	if tot.Tokens != sent || tot.Requests != 1 {
		t.Errorf("report total %d requests %+v, want 1 and the upstream's %+v", tot.Requests, tot.Tokens, sent)
	}
	applied := catalog.Bill{Input: 2000, CacheRead: 7000, CacheWrite1h: 500, Output: 350}
	if len(tot.Compactions) != 1 || tot.Compactions[0].Tokens != applied || tot.Compactions[0].Calls != 1 {
		t.Errorf("compactions %+v, want the applied preview's %+v", tot.Compactions, applied)
	}
	if u := tot.Unused; u == nil || u.Calls != 1 || u.Tokens != (catalog.Bill{Input: 9000, Output: 400}) {
		t.Errorf("unused %+v, want the preview never applied", u)
	}
}
