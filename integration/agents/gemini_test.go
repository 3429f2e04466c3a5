//go:build agents && linux

package agents_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/proxy/proxytest"
)

// Gemini CLI (VTCODE_GEMINI, its bin/gemini on the system Node) speaks the
// Gemini API: streamGenerateContent?alt=sse for its turns, generateContent
// for its side requests (routing, next-speaker checks) and for its own
// chat compression.

const readAll = "Read every module of this folder, one by one, then count the files."

// geminiScript is the script with Gemini CLI's read_file and
// run_shell_command tools.
func geminiScript(ws string, singles, batches int) []proxytest.Turn {
	return script(ws, singles, batches,
		func(path string) proxytest.Call {
			return proxytest.Call{Name: "read_file", Input: input(map[string]string{"file_path": path})}
		},
		func(cmd string) proxytest.Call {
			return proxytest.Call{Name: "run_shell_command", Input: input(map[string]string{"command": cmd, "description": "Run " + cmd})}
		})
}

// configureGemini adds the Gemini upstream to the user configuration
// configure wrote.
func configureGemini(t *testing.T, ws, geminiURL string) {
	p := filepath.Join(userConfigHome(ws), "vtcode", "vtcode.toml")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, fmt.Sprintf("\n[providers.gemini]\nbase_url = %q\n", geminiURL)...)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// runGemini runs Gemini CLI headless through the proxy and returns its
// JSON result's tool calls, final answer and session id (what --resume
// takes: "latest" orders chats by a start time two runs in one second
// share). settings are merged into its settings.json.
func runGemini(t *testing.T, ws, home, proxyURL, prompt string, settings map[string]any, extra ...string) (tools int, final, sessionID string) {
	gemini := mustEnv(t, "VTCODE_GEMINI")
	cfg := map[string]any{
		"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"general":   map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
	}
	for k, v := range settings {
		cfg[k] = v
	}
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(input(cfg)), 0o600); err != nil {
		t.Fatal(err)
	}
	out, took := run(t, ws, []string{"PATH=/usr/bin:/bin", "HOME=" + home, "TERM=dumb",
		"GEMINI_API_KEY=fake-gemini-key", "GOOGLE_GEMINI_BASE_URL=" + proxyURL, "GEMINI_CLI_TRUST_WORKSPACE=true"},
		gemini, append([]string{"-p", prompt, "--output-format", "json", "--yolo"}, extra...)...)
	var res struct {
		SessionID string `json:"session_id"`
		Response  string `json:"response"`
		Stats     struct {
			Tools struct {
				TotalCalls   int `json:"totalCalls"`
				TotalSuccess int `json:"totalSuccess"`
				TotalFail    int `json:"totalFail"`
			} `json:"tools"`
		} `json:"stats"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if i := bytes.IndexByte(out, '{'); i >= 0 {
		out = out[i:]
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("gemini output is not its JSON result: %v\n%s", err, tailOf(string(out), 2000))
	}
	if res.Error != nil {
		t.Errorf("gemini reported an error: %s", res.Error.Message)
	}
	if res.Stats.Tools.TotalFail != 0 {
		t.Errorf("gemini: %d tool calls failed", res.Stats.Tools.TotalFail)
	}
	t.Logf("gemini: %d tool calls in %s, final %q", res.Stats.Tools.TotalCalls, took.Round(time.Millisecond), res.Response)
	return res.Stats.Tools.TotalSuccess, res.Response, res.SessionID
}

// TestGeminiCLI runs Gemini CLI alone and through the proxy (runPair), as
// the other agents: through the proxy no request the API would refuse, the
// prompt cache nearly as stable as alone and a lower modelled input cost,
// and the agent's key on every request.
func TestGeminiCLI(t *testing.T) {
	mustEnv(t, "VTCODE_GEMINI")
	offline(t)
	p := runPair(t, func(ws string) []proxytest.Turn { return geminiScript(ws, singles, batches) }, "gemini", 64000,
		func(t *testing.T, ws, baseURL string) {
			// Its LLM loop check (after 30 turns) sends the recent history
			// with the last model turn's calls unanswered when that turn
			// also has text: alone, a request the API refuses with 400
			// (the agent ignores the failure); through the proxy the
			// projection pairs it. Off, so that both runs are held to
			// "nothing refused".
			settings := map[string]any{"model": map[string]any{"disableLoopDetection": true}}
			tools, final, _ := runGemini(t, ws, t.TempDir(), baseURL, readAll, settings)
			if tools < files+1 || !strings.Contains(final, "FINAL") {
				t.Errorf("gemini ran %d tools, final %q: want at least %d and the final answer", tools, final, files+1)
			}
		})
	checkEngine(t, p.c, p.engine, p.proxyURL, ":streamGenerateContent")
	compareCache(t, p)
	checkGeminiReceipt(t, p)
	for _, r := range p.engine.Requests() {
		if r.Header.Get("X-Goog-Api-Key") != "[redacted]" && r.Kind != "other" {
			t.Errorf("%s reached the upstream without the agent's key", r.Path)
			break
		}
	}
}

// checkGeminiReceipt asserts that the proxied session's receipt has the
// cache reads the upstream reported as cachedContentTokenCount, priced at
// Gemini's list prices.
func checkGeminiReceipt(t *testing.T, p pair) {
	t.Helper()
	reported := 0
	for _, r := range p.engine.Requests() {
		if r.Kind == "main" {
			reported += r.Usage.CacheRead
		}
	}
	if reported == 0 {
		t.Fatal("the upstream reported no cachedContentTokenCount to the proxied agent")
	}
	sessionID := ""
	for _, r := range statsOf(t, p.proxyURL).Recent {
		if strings.HasSuffix(r.Path, ":streamGenerateContent") && r.SessionID != "" {
			sessionID = r.SessionID
		}
	}
	var stats struct {
		Receipt *struct {
			Tokens struct {
				Input     int `json:"input"`
				CacheRead int `json:"cacheRead"`
			} `json:"tokens"`
			PaidUSD  *float64 `json:"paidUsd"`
			Unpriced []string `json:"unpriced"`
		} `json:"receipt"`
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.c.conn.Call(ctx, "vtcode/projectionStats", map[string]any{"sessionId": sessionID}, &stats); err != nil {
		t.Fatalf("vtcode/projectionStats %s: %v", sessionID, err)
	}
	rc := stats.Receipt
	if rc == nil {
		t.Fatalf("session %s has no receipt", sessionID)
	}
	paid := 0.0
	if rc.PaidUSD != nil {
		paid = *rc.PaidUSD
	}
	t.Logf("receipt: %d uncached input, %d cache reads (the upstream reported %d on the agent's turns), $%.4f, unpriced %v",
		rc.Tokens.Input, rc.Tokens.CacheRead, reported, paid, rc.Unpriced)
	if rc.Tokens.CacheRead == 0 || rc.Tokens.CacheRead > reported {
		t.Errorf("the receipt has %d cache reads, the upstream reported %d on the agent's turns", rc.Tokens.CacheRead, reported)
	}
	if rc.PaidUSD == nil || *rc.PaidUSD <= 0 || len(rc.Unpriced) > 0 {
		t.Errorf("the receipt is not priced at Gemini's list prices: paid %v, unpriced %v", rc.PaidUSD, rc.Unpriced)
	}
}

// TestGeminiCLICompressesItself makes Gemini CLI compress its chat on its
// own (the fake reports 10× the tokens it receives and the threshold is
// low): its summary and verification requests are projected but not
// recorded, and the window it starts afterwards is a boundary of trigger
// "agent" in the same session, not a branch.
func TestGeminiCLICompressesItself(t *testing.T) {
	mustEnv(t, "VTCODE_GEMINI")
	offline(t)
	ws := workspace(t)
	gem := startUpstream(t, geminiScript(ws, 12, 0), proxytest.Options{})
	other := startUpstream(t, []proxytest.Turn{{Text: "unused"}}, proxytest.Options{})
	configure(t, ws, other.URL, other.URL+"/v1", 400000, 2)
	configureGemini(t, ws, gem.URL)
	c, proxyURL := daemon(t, ws)
	home := t.TempDir()
	settings := map[string]any{"model": map[string]any{"compressionThreshold": 0.04}}
	tools, final, id := runGemini(t, ws, home, proxyURL, readAll, settings)
	if tools < 13 || !strings.Contains(final, "FINAL") {
		t.Errorf("gemini ran %d tools, final %q: want at least 13 and the final answer", tools, final)
	}
	if id == "" {
		t.Fatal("gemini's JSON result has no session_id to resume")
	}
	runGemini(t, ws, home, proxyURL, "/compress", settings, "--resume", id)
	runGemini(t, ws, home, proxyURL, "Count the files once more.", settings, "--resume", id)
	compacts := proxytest.Bodies(gem.Requests(), "compact")
	if len(compacts) == 0 {
		for _, r := range gem.Requests() {
			t.Logf("%s %s kind %s turn %d, %d bytes", r.Method, r.Path, r.Kind, r.Turn, len(r.Body))
		}
		t.Fatal("Gemini CLI never compressed on its own: the test does not exercise its compaction")
	}
	st := statsOf(t, proxyURL)
	main := map[string]bool{}
	for _, r := range st.Recent {
		if strings.HasSuffix(r.Path, ":streamGenerateContent") && r.SessionID != "" {
			main[r.SessionID] = true
		}
	}
	if len(main) != 1 {
		t.Errorf("the agent's turns went to sessions %v: its compression must stay in its one session", main)
	}
	disp := map[string]int{}
	for _, r := range st.Recent {
		if main[r.SessionID] {
			disp[r.Disposition]++
		}
	}
	t.Logf("gemini compressed itself with %d requests; dispositions %v", len(compacts), disp)
	if disp["side"] != len(compacts) || disp["window"] == 0 || disp["branch"] != 0 || disp["fail-open"] != 0 {
		t.Errorf("dispositions %v: want one side per compression request (%d), a window after it, no branch, no fail-open", disp, len(compacts))
	}
	agentBounds := 0
	for _, p := range c.notes("vtcode/compactBoundary") {
		if bytes.Contains(p, []byte(`"trigger":"agent"`)) {
			agentBounds++
		}
	}
	if agentBounds != disp["window"] {
		t.Errorf("%d compactBoundary notifications with trigger agent, want one per window (%d)", agentBounds, disp["window"])
	}
}
