package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/transcript"
)

// TestCompareAgent: on a real Claude Code record cut before its compact
// summary, the ledger's second table scores Claude Code's summary and the
// offline summary of the same prefix on the facts that occur in the
// prefix: a fact only the agent's keeps, one only the offline one keeps,
// one both keep; a fact that is not in the prefix does not count.
func TestCompareAgent(t *testing.T) {
	rep, err := Run(context.Background(), "testdata")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Versus) != 1 {
		t.Fatalf("compared %d sessions, want 1 (the long-turn scenario holds no agent compaction)", len(rep.Versus))
	}
	v := rep.Versus[0]
	if v.Error != "" {
		t.Fatal(v.Error)
	}
	want := map[string][2]bool{ // fact: kept by the agent's, by the offline summary
		"e53647ba1f1e5203bedff558b482f178db045555": {true, true},
		"entire/checkpoints/v1":                    {true, false},
		"febabe6a01c3eaf6f6b12be3bf655cee62d47b63": {false, true},
	}
	if len(v.Facts) != len(want) || slices.Contains(v.Facts, "manual_commit_hooks.go") {
		t.Errorf("facts compared = %q, want the 3 that occur in the prefix", v.Facts)
	}
	for i, f := range v.Facts {
		w, ok := want[f]
		if ok && (v.InAgent[i] != w[0] || v.InOffline[i] != w[1]) {
			t.Errorf("%q: in agent's %v, in offline %v; want %v, %v", f, v.InAgent[i], v.InOffline[i], w[0], w[1])
		}
	}
	if !strings.HasPrefix(v.AgentSummary, "This session is being continued") || !strings.Contains(v.OfflineSummary, "## Goal") {
		t.Errorf("summaries compared are not Claude Code's and the offline one:\n%.200s\n---\n%.200s", v.AgentSummary, v.OfflineSummary)
	}
	tr, err := transcript.Load("testdata/claude-code-compacted-prefix.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	est := history.NewEstimator(history.O200k)
	if n := len(tr.Messages) - 1; v.PrefixMessages != n || v.PrefixTokens != est.Messages(tr.Messages[:n]) {
		t.Errorf("prefix = %d messages, %d tokens; want the %d messages before the summary", v.PrefixMessages, v.PrefixTokens, n)
	}
	if v.AgentTokens != est.Text(v.AgentSummary) || v.OfflineTokens != est.Text(v.OfflineSummary) || v.AgentTokens < 1000 || v.OfflineTokens < 100 {
		t.Errorf("summary tokens = %d / %d", v.AgentTokens, v.OfflineTokens)
	}
	if f, a, o, _, _ := rep.VersusTotals(); f != 3 || a != 2 || o != 2 {
		t.Errorf("totals = %d facts, %d agent, %d offline; want 3, 2, 2", f, a, o)
	}
	var out bytes.Buffer
	if err := Write(&out, rep); err != nil {
		t.Fatal(err)
	}
	for _, re := range []string{
		`(?m)^vs the agent's own summary`,
		`(?m)^claude-code-compacted-prefix\.jsonl +\d+ msgs, [\d,]+ tok +3 +2/3 +2/3 +0 +[\d,]+ / [\d,]+$`,
		`(?m)^total +3 +2/3 +2/3 +0 `,
		`kept by the agent's summary only: "entire/checkpoints/v1"`,
		`kept by the offline summary only: "febabe6a01c3eaf6f6b12be3bf655cee62d47b63"`,
	} {
		if !regexp.MustCompile(re).MatchString(out.String()) {
			t.Errorf("table lacks %s:\n%s", re, out.String())
		}
	}
}

// TestCompareAgentNone: a record without the agent's compaction, or whose
// only summary opens it (the summary of an earlier session), is not
// compared.
func TestCompareAgentNone(t *testing.T) {
	summary := history.NewText(history.User, "This session is being continued from a previous conversation.")
	summary.Extra = map[string]json.RawMessage{"isCompactSummary": json.RawMessage("true")}
	for name, msgs := range map[string][]history.Message{
		"no compaction":    LongTurn(),
		"summary opens it": append([]history.Message{history.NewText(history.System, "You are an agent."), summary}, LongTurn()[1:]...),
	} {
		v, ok, err := CompareAgent(context.Background(), name, LongTurnFacts(), &transcript.Transcript{Messages: msgs})
		if err != nil || ok || v != nil {
			t.Errorf("%s: compared (%v, %v, %v)", name, v, ok, err)
		}
	}
	s := Session{Name: "lt", Facts: LongTurnFacts()}
	if err := Measure(context.Background(), &s, LongTurn()); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Write(&out, &Report{Window: Window, Sessions: []Session{s}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "vs the agent's own summary") {
		t.Errorf("a ledger without agent compactions prints the second table:\n%s", out.String())
	}
}
