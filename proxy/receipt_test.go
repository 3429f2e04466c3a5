package proxy_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/config"
	"github.com/vtcode/vtcode-ls/providers/catalog"
	"github.com/vtcode/vtcode-ls/proxy/proxytest"
	"github.com/vtcode/vtcode-ls/session"
	"github.com/vtcode/vtcode-ls/store"
)

// The receipt of a proxied session against the bills the provider sent:
// its token counts are the sums of the usage the fake upstream reported,
// exactly (cache reads, 5-minute and 1-hour writes, uncached input, output),
// live, after a restart (replayed from the log) and as `vtcode-ls report`
// reads it; its cost is those tokens under the [[models]] list price; the
// estimate without vtcode-ls is larger, since the engine cleared and
// compacted.
func TestReceiptEqualsTheProvidersUsage(t *testing.T) {
	const toml = `
[agent.harness]
auto_compaction_threshold_tokens = 16000
[agent.harness.tool_result_clearing]
trigger_tokens = 4000
keep_tool_uses = 3
keep_recent_tool_batches = 3
[[models]]
provider = "anthropic"
model = "claude-test"
input_price = 3
cache_read_price = 0.3
cache_write_price = 3.75
cache_write_1h_price = 6
output_price = 15
prices_as_of = "2026-12-01"
`
	e := setupWith(t, proxytest.Options{CacheRatio: 0.6}, toml, readTurns(12), "", offlineClients, nil)
	a := newAgent(t, e, "7e7e7e7e-0000-0000-0000-000000000023", "Read the parts.")
	for i := 0; i < 11; i++ {
		if _, status := a.step(); status != 200 {
			t.Fatalf("step %d: status %d", i, status)
		}
	}
	if len(e.notes.bounds) == 0 {
		t.Fatal("no compaction in 11 turns: the receipt is not tested across one")
	}
	bills := func() (want catalog.Bill, answers int) {
		for _, r := range e.up.Requests() {
			if r.Kind == "count" || r.Kind == "other" {
				continue
			}
			answers++
			want = want.Add(catalog.Bill{Input: r.Usage.Input, CacheRead: r.Usage.CacheRead,
				CacheWrite5m: r.Usage.CacheWrite5m, CacheWrite1h: r.Usage.CacheWrite1h, Output: r.Usage.Output})
		}
		return want, answers
	}
	want, answers := bills()
	if want.CacheRead == 0 || want.CacheWrite1h == 0 {
		t.Fatalf("the fake reported no cache reads or 1-hour writes: %+v", want)
	}
	price := catalog.Price{Input: 3, CacheRead: 0.3, CacheWrite5m: 3.75, CacheWrite1h: 6, Output: 15, AsOf: "2026-12-01"}
	check := func(when string, rc *session.Receipt) {
		t.Helper()
		if rc == nil {
			t.Fatalf("%s: no receipt", when)
		}
		if rc.Tokens != want || rc.Requests != answers {
			t.Errorf("%s: receipt %d requests %+v, want the upstream's %d requests %+v", when, rc.Requests, rc.Tokens, answers, want)
		}
		if rc.PaidUSD == nil || math.Abs(*rc.PaidUSD-price.Cost(want)) > 0.0001 {
			t.Errorf("%s: paid %s, want %.4f", when, usd(rc.PaidUSD), price.Cost(want))
		}
		if rc.WithoutTokens.Prompt() <= rc.Tokens.Prompt() || rc.SavedUSD == nil || *rc.SavedUSD <= 0 || !rc.Estimate {
			t.Errorf("%s: without vtcode-ls %+v (%s saved), want more input than the %d sent, as an estimate",
				when, rc.WithoutTokens, usd(rc.SavedUSD), rc.Tokens.Prompt())
		}
		if rc.PricesAsOf != "2026-12-01" || len(rc.Unpriced) != 0 {
			t.Errorf("%s: prices as of %q, unpriced %v", when, rc.PricesAsOf, rc.Unpriced)
		}
	}
	list, err := e.mgr.ListSessions(context.Background(), session.ListParams{})
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions %v %v", list, err)
	}
	id := list[0].SessionID
	st, err := e.mgr.ProjectionStats(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	check("live", st.Receipt)
	check("in the proxy's stats", e.srv.Stats().Receipt)
	live := *st.Receipt

	// A restarted daemon replays the log: the next answer adds to the
	// same totals, and the estimate so far is what it was.
	e.restart(t, a)
	if _, status := a.step(); status != 200 {
		t.Fatal(status)
	}
	want, answers = bills()
	if st, err = e.mgr.ProjectionStats(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	check("after a restart", st.Receipt)
	if st.Receipt.WithoutTokens.Prompt() <= live.WithoutTokens.Prompt() {
		t.Errorf("the estimate without vtcode-ls went from %+v to %+v with one more request", live.WithoutTokens, st.Receipt.WithoutTokens)
	}
	after := *st.Receipt

	sto, err := store.Open(config.DefaultStorageDir(e.ws), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sto.Close()
	cat := catalog.WithModels([]catalog.ModelInfo{{Provider: "anthropic", Model: "claude-test", Price: price}})
	stored, err := session.ReadReceipts(sto, cat, time.Time{})
	if err != nil || len(stored) != 1 {
		t.Fatalf("stored receipts %v %v", stored, err)
	}
	check("read from the store", &stored[0].Receipt)
	if stored[0].Receipt.WithoutTokens != after.WithoutTokens || len(stored[0].Receipt.Compactions) != len(after.Compactions) {
		t.Errorf("the report reads %+v, the session says %+v", stored[0].Receipt, after)
	}
	if stored[0].Agent != "claude" {
		t.Errorf("agent %q, want claude", stored[0].Agent)
	}
}

func usd(v *float64) string {
	if v == nil {
		return "no price"
	}
	return fmt.Sprintf("$%.4f", *v)
}

// [[compaction.routes]] rows can name the agent the proxy identifies:
// "Codex at 50 %, Claude Code at 90 %" is two rows, and a Claude Code
// session gets the Claude row's threshold, not the Codex one's.
func TestRoutesPerAgent(t *testing.T) {
	threshold := func(routes string) int {
		e := setup(t, "[[models]]\nprovider = \"anthropic\"\nmodel = \"claude-test\"\ncontext_window = 100000\n"+routes, readTurns(2), "")
		a := newAgent(t, e, "7e7e7e7e-0000-0000-0000-0000000000a9", "Read.")
		if _, status := a.step(); status != 200 {
			t.Fatal(status)
		}
		list, err := e.mgr.ListSessions(context.Background(), session.ListParams{})
		if err != nil || len(list) != 1 {
			t.Fatalf("sessions %v %v", list, err)
		}
		st, err := e.mgr.ProjectionStats(context.Background(), list[0].SessionID)
		if err != nil {
			t.Fatal(err)
		}
		return st.CompactionThreshold
	}
	none := threshold("")
	both := threshold("[[compaction.routes]]\nagent = \"codex\"\nthreshold_ratio = 0.5\n[[compaction.routes]]\nagent = \"claude-code\"\nthreshold_ratio = 0.9\n")
	codexOnly := threshold("[[compaction.routes]]\nagent = \"codex\"\nthreshold_ratio = 0.5\n")
	if none == 0 || codexOnly != none {
		t.Errorf("a Codex row changed the Claude Code session's threshold: %d, without rows %d", codexOnly, none)
	}
	if both >= none || both == codexOnly/2 || both < none*8/10 {
		t.Errorf("with the Claude Code row at 0.9 the threshold is %d (without rows %d): want the 0.9 row's, not the Codex one's", both, none)
	}
}
