package main

import (
	"os"
	"path/filepath"
	"testing"
)

// evalDir writes a transcripts folder holding the debugging example and a
// facts.json with the given facts for it.
func evalDir(t *testing.T, facts string) string {
	t.Helper()
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(moduleRoot(t), "examples", "debugging-session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "debugging.jsonl"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "facts.json"), []byte(`{"debugging.jsonl": `+facts+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

// TestEval: the fact ledger prints each session, the long-turn scenario and
// the totals, and its exit code says whether the targets are met.
func TestEval(t *testing.T) {
	for _, st := range []step{
		{args: []string{"eval", "--help"}, stdout: []string{`^Usage: vtcode-ls eval \[DIR\]`, `facts.json`, `-json`}, noStderr: true},
		{args: []string{"eval", evalDir(t, `["internal/invoice", "go test ./..."]`)}, stdout: []string{
			`^Fact ledger: offline compaction at a 32,000-token window`,
			`^debugging\.jsonl +2 +2/2 +2/2 +0 `,
			`^long-turn .* +6 +6/6 +6/6 +0 `,
			`^total +8 +8/8 +8/8 +0`,
			`: met \(history 100\.0 %, summary 100\.0 %, work in progress n/a\)`,
		}, noStderr: true},
		{args: []string{"eval", evalDir(t, `["internal/invoice", "a string no session holds", "another one"]`)}, code: 1, stdout: []string{
			`^debugging\.jsonl +3 +1/3 +1/3 `,
			`: missed \(`,
			`missing "a string no session holds" \(not in history\)`,
		}},
		{args: []string{"eval", evalDir(t, `{"facts": ["internal/invoice"], "wip": ["a string no session holds"]}`)}, code: 1, stdout: []string{
			`^debugging\.jsonl +1 +1/1 +1/1 +0 +0/1 `,
			`work in progress 0\.0 %`,
			`facts file: "a string no session holds" is not in the record`,
		}},
		{args: []string{"eval", "--json", evalDir(t, `["internal/invoice"]`)}, stdout: []string{`"sessions": \[`, `"inSummary": \[\s*true\s*\]`}},
		{args: []string{"eval", filepath.Join(moduleRoot(t), "ledger", "testdata")}, code: 1, stdout: []string{
			`^vs the agent's own summary`,
			`^claude-code-compacted-prefix\.jsonl +\d+ msgs, [\d,]+ tok +3 +2/3 +2/3 +0 `,
			`kept by the agent's summary only: "entire/checkpoints/v1"`,
		}},
		{args: []string{"eval", "--json", filepath.Join(moduleRoot(t), "ledger", "testdata")}, code: 1, stdout: []string{`"versusAgent": \[`, `"inAgent": \[`, `"agentSummary": "This session is being continued`}},
		{args: []string{"eval", t.TempDir()}, code: 1, stderr: []string{`read facts: .*facts\.json`}},
		{args: []string{"eval", "a", "b"}, code: 2, stderr: []string{`want at most one DIR`}},
	} {
		st.check(t)
	}
}
