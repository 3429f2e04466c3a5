package session_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers/catalog"
	"github.com/vtcode/vtcode-ls/session"
)

// toolTurns is n turns of an agent reading files of about size tokens each.
func toolTurns(n, size int) []history.Message {
	msgs := []history.Message{history.NewText(history.User, "Read the whole module and fix the bug.")}
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("call_%d", i)
		msgs = append(msgs,
			history.Message{Role: history.Assistant, Content: history.Text(fmt.Sprintf("Reading part %d.", i)),
				ToolCalls: []history.ToolCall{{ID: id, Name: "read_file", Arguments: fmt.Sprintf(`{"path":"part%d.go"}`, i)}}},
			history.NewToolResult(id, "read_file", strings.Repeat(fmt.Sprintf("func part%d() int { return %d }\n", i, i), size*4/30)))
	}
	return msgs
}

// A 1M-token model with a long-context price tier at 200k prompt tokens
// (Claude Sonnet 4.5 with the 1M window): with stay_below_price_tier (the
// default) the request the pipeline prepares from a 300k-token history
// stays under the tier, and the receipt shows the tier the request would
// have paid without vtcode-ls; with it off the window is the model's.
func TestStayBelowPriceTier(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	id := e.open(session.OpenParams{Provider: "anthropic", Model: "claude-sonnet-4-5[1m]"})
	if st := e.stats(id); st.Capacity != 200_000+st.ReservedOutput {
		t.Fatalf("capacity %d, want the tier's 200,000 + the reserved output %d", st.Capacity, st.ReservedOutput)
	}
	e.append(id, toolTurns(30, 10_000)...)
	res, err := e.m.PrepareRequest(context.Background(), session.PrepareParams{SessionID: id, SystemPrompt: "You are a coding agent."}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := res.Stats
	if st.OriginalTokens < 250_000 {
		t.Fatalf("history of %d tokens: the test needs one over the tier", st.OriginalTokens)
	}
	if sent := st.ProjectedTokens + st.PrefixTokens; sent > 200_000 {
		t.Errorf("the request holds %d tokens, over the 200,000 tier", sent)
	}
	sent := st.ProjectedTokens + st.PrefixTokens
	rec, err := e.m.RecordResponse(context.Background(), session.RecordParams{SessionID: id,
		Message: history.NewText(history.Assistant, "Fixed."),
		Usage:   &history.Usage{InputTokens: sent, OutputTokens: 200}})
	if err != nil {
		t.Fatal(err)
	}
	rc := rec.Stats.Receipt
	if rc == nil || rc.TierRequests != 0 || rc.WithoutTierRequests != 1 || rc.SavedUSD == nil || *rc.SavedUSD <= 0 {
		t.Errorf("receipt %+v: want no request in the tier, the one without vtcode-ls in it, and a saving", rc)
	}

	e.setPolicy(id, `{"context":{"stayBelowPriceTier":false}}`)
	if st := e.stats(id); st.Capacity != 1_000_000 {
		t.Errorf("capacity %d with stayBelowPriceTier off, want the model's 1,000,000", st.Capacity)
	}
}

// A receipt's tokens are the provider's usage in disjoint kinds, whichever
// way the route counts input: Anthropic's input excludes the cached part,
// OpenAI's includes it.
func TestReceiptKindsPerRoute(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	for _, tc := range []struct {
		provider, model string
		usage           history.Usage
	}{
		{"anthropic", "claude-sonnet-4-5", history.Usage{InputTokens: 1000, CacheReadTokens: 8000, CacheCreationTokens: 2000, CacheCreation1hTokens: 500, OutputTokens: 300, ReasoningTokens: 100}},
		{"openai", "gpt-5", history.Usage{InputTokens: 11000, CacheReadTokens: 8000, CacheCreationTokens: 2000, CacheCreation1hTokens: 500, OutputTokens: 300, ReasoningTokens: 100}},
	} {
		id := e.open(session.OpenParams{Provider: tc.provider, Model: tc.model})
		e.append(id, history.NewText(history.User, "Fix it."))
		us := tc.usage
		rec, err := e.m.RecordResponse(context.Background(), session.RecordParams{SessionID: id, Message: history.NewText(history.Assistant, "Done."), Usage: &us})
		if err != nil {
			t.Fatal(err)
		}
		rc := rec.Stats.Receipt
		want := catalog.Bill{Input: 1000, CacheRead: 8000, CacheWrite5m: 1500, CacheWrite1h: 500, Output: 300, Reasoning: 100}
		if rc == nil || rc.Tokens != want || rc.Requests != 1 || rc.PaidUSD == nil {
			t.Errorf("%s: receipt %+v, want tokens %+v, priced", tc.provider, rc, want)
		}
	}
}
