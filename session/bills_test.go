package session_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/anthropic"
	"github.com/vtcode/vtcode-ls/providers/catalog"
	"github.com/vtcode/vtcode-ls/providers/httpapi"
	"github.com/vtcode/vtcode-ls/providers/providertest"
	"github.com/vtcode/vtcode-ls/session"
)

// upstream is a fake Anthropic Messages API on loopback whose every answer
// is a summary with the usage given, and the bills a provider would send
// for them.
type upstream struct {
	srv  *providertest.Server
	sent catalog.Bill // the sum of the usage of the answers it sent
	n    int
}

// answer queues a summary billed in, read, write5m, write1h and out
// tokens (input as Anthropic reports it: without the cached part).
func (u *upstream) answer(in, read, w5m, w1h, out int) {
	u.n++
	u.srv.Push(providertest.JSON(200, fmt.Sprintf(`{"id":"msg_01Bill%d","type":"message","role":"assistant","model":"claude-sonnet-4-5",`+
		`"content":[{"type":"text","text":"Summary %d: the parser in pkg/mod0 was fixed; go test ./pkg/... passes. Next: review the vendor notes."}],`+
		`"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,`+
		`"cache_creation":{"ephemeral_5m_input_tokens":%d,"ephemeral_1h_input_tokens":%d},"output_tokens":%d,"service_tier":"standard"}}`,
		u.n, u.n, in, w5m+w1h, read, w5m, w1h, out)))
	u.sent = u.sent.Add(catalog.Bill{Input: in, CacheRead: read, CacheWrite5m: w5m, CacheWrite1h: w1h, Output: out})
}

// billEnv is a workspace whose session summarizes with claude-sonnet-4-5
// at the fake upstream, with a history of turns(n, 4000).
func billEnv(t *testing.T, n int) (*env, *upstream, string) {
	t.Helper()
	u := &upstream{srv: providertest.NewServer(t)}
	t.Cleanup(u.srv.Close)
	g, err := anthropic.New(anthropic.Config{Endpoint: httpapi.Endpoint{
		Provider: "anthropic", BaseURL: u.srv.URL, APIKey: "sk-ant-test-key-0001", Model: "claude-sonnet-4-5",
		Retry: httpapi.RetryPolicy{MaxAttempts: 1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, session.Options{Clients: clients(map[string]providers.Generator{"anthropic": g})}, "")
	id := e.open(session.OpenParams{Provider: "anthropic", Model: "claude-sonnet-4-5", ContextWindow: 40000})
	e.setPolicy(id, `{"toolResultClearing":{"enabled":false}}`)
	if n > 0 {
		e.append(id, turns(n, 4000)...)
	}
	return e, u, id
}

// receipt is the session's receipt, which must exist.
func (e *env) receipt(id string) session.Receipt {
	e.t.Helper()
	rc, err := e.m.Receipt(context.Background(), id)
	if err != nil || rc == nil {
		e.t.Fatalf("Receipt: %v, %v", rc, err)
	}
	return *rc
}

// stored is the receipt `vtcode-ls report` reads of session id.
func (e *env) stored(id string) session.Receipt {
	e.t.Helper()
	rs, err := e.m.Receipts(e.dir, time.Time{})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, r := range rs {
		if r.SessionID == id {
			return r.Receipt
		}
	}
	e.t.Fatalf("no stored receipt of %s in %+v", id, rs)
	return session.Receipt{}
}

// reopened is the receipt of session id after a restart of the daemon.
func (e *env) reopened(id string) session.Receipt {
	e.t.Helper()
	e.restart("")
	e.open(session.OpenParams{SessionID: id})
	return e.receipt(id)
}

// unused is the receipt's unused part, zero when none.
func unused(rc session.Receipt) session.UnusedReceipt {
	if rc.Unused == nil {
		return session.UnusedReceipt{}
	}
	return *rc.Unused
}

// checkKept fails unless the stored receipt and the one after a restart
// equal the live one: every bill recorded once.
func checkKept(t *testing.T, e *env, id string, live session.Receipt) {
	t.Helper()
	if got := e.stored(id); jsonOf(t, got) != jsonOf(t, live) {
		t.Errorf("the store reads\n%s\nthe session said\n%s", jsonOf(t, got), jsonOf(t, live))
	}
	if got := e.reopened(id); jsonOf(t, got) != jsonOf(t, live) {
		t.Errorf("after a restart\n%s\nbefore\n%s", jsonOf(t, got), jsonOf(t, live))
	}
}

func preview(t *testing.T, e *env, id string) *session.CompactPreview {
	t.Helper()
	pv, err := e.m.PreviewCompact(context.Background(), session.CompactParams{SessionID: id}, nil)
	if err != nil || pv.PreviewID == "" {
		t.Fatalf("PreviewCompact: %+v, %v", pv, err)
	}
	return pv
}

// A preview the user never applies cost what its call cost: billed once,
// as unused, and kept so across a restart.
func TestPreviewNeverAppliedIsBilled(t *testing.T) {
	e, u, id := billEnv(t, 10)
	u.answer(1000, 9000, 100, 300, 500)
	preview(t, e, id)
	rc := e.receipt(id)
	if rc.Tokens != u.sent || len(rc.Compactions) != 0 || rc.Requests != 0 {
		t.Fatalf("receipt %+v, want the upstream's %+v and no compaction", rc, u.sent)
	}
	if un := unused(rc); un.Calls != 1 || un.Tokens != u.sent || un.USD == nil || rc.PaidUSD == nil || *un.USD != *rc.PaidUSD || *un.USD <= 0 {
		t.Errorf("unused %+v (paid %v), want the one call at its price", un, rc.PaidUSD)
	}
	checkKept(t, e, id, rc)
}

// Two previews and then an apply of the second: three bills, the applied
// one the compaction's, the replaced one unused.
func TestTwoPreviewsThenApplyBillsThree(t *testing.T) {
	e, u, id := billEnv(t, 10)
	u.answer(8000, 0, 0, 0, 400)
	preview(t, e, id)
	u.answer(7000, 1000, 0, 0, 300)
	preview(t, e, id)
	first := u.sent
	u.answer(6000, 2000, 500, 0, 200)
	pv := preview(t, e, id)
	if _, err := e.m.CommitPreview(context.Background(), session.CommitParams{SessionID: id, PreviewID: pv.PreviewID}); err != nil {
		t.Fatal(err)
	}
	rc := e.receipt(id)
	if rc.Tokens != u.sent {
		t.Errorf("receipt tokens %+v, want the upstream's %+v", rc.Tokens, u.sent)
	}
	applied := catalog.Bill{Input: 6000, CacheRead: 2000, CacheWrite5m: 500, Output: 200}
	if len(rc.Compactions) != 1 || rc.Compactions[0].Calls != 1 || rc.Compactions[0].Tokens != applied || rc.Compactions[0].USD == nil {
		t.Errorf("compactions %+v, want one of the applied preview's call %+v", rc.Compactions, applied)
	}
	if un := unused(rc); un.Calls != 2 || un.Tokens != first {
		t.Errorf("unused %+v, want the two earlier previews %+v", un, first)
	}
	checkKept(t, e, id, rc)
}

// crossSoft prepares a request between the soft threshold and the
// threshold, which starts pass 1 in the background, and waits for it.
func crossSoft(t *testing.T, e *env, id string) {
	t.Helper()
	// Threshold: round((40000-4096) × 0.75) = 26928; soft: 24236.
	res := prepare(t, e, session.PrepareParams{SessionID: id, Messages: turns(22, 4000)}, nil)
	if st := res.Stats; st.State != "warn" || res.Compaction != nil {
		t.Fatalf("not between the soft threshold and the threshold: %+v", st)
	}
	session.WaitPassOne(e.m, id)
}

// Pass 1 then its note used: pass 1 billed once and the final call billed,
// both the compaction's.
func TestPassOneNoteUsedIsBilledWithItsCompaction(t *testing.T) {
	e, u, id := billEnv(t, 0)
	u.answer(20000, 0, 0, 0, 700) // pass 1
	crossSoft(t, e, id)
	u.answer(3000, 1000, 0, 0, 400) // pass 2
	res, err := e.m.Compact(context.Background(), session.CompactParams{SessionID: id}, nil)
	if err != nil || res.ArtifactID == "" {
		t.Fatalf("Compact: %+v, %v", res, err)
	}
	if reqs := u.srv.Requests(); len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "Summary 1") {
		t.Fatalf("%d upstream calls; want pass 1 and a pass 2 carrying its note", len(reqs))
	}
	rc := e.receipt(id)
	if rc.Tokens != u.sent || len(rc.Compactions) != 1 || rc.Compactions[0].Calls != 2 || rc.Compactions[0].Tokens != u.sent || rc.Unused != nil {
		t.Errorf("receipt %s, want both calls (%+v) the compaction's", jsonOf(t, rc), u.sent)
	}
	checkKept(t, e, id, rc)
}

// A pass 1 whose note is discarded (the history changed under it: a model
// switch) is billed all the same, as unused; so is one whose session
// closes before any other event records it.
func TestPassOneDiscardedIsBilled(t *testing.T) {
	e, u, id := billEnv(t, 0)
	u.answer(20000, 0, 0, 0, 700)
	crossSoft(t, e, id)
	if _, err := e.m.SwitchModel(context.Background(), session.SwitchParams{SessionID: id, Provider: "anthropic", Model: "claude-haiku-4-5", ContextWindow: 40000}, nil); err != nil {
		t.Fatal(err)
	}
	rc := e.receipt(id)
	if rc.Tokens != u.sent || len(rc.Compactions) != 0 || unused(rc).Calls != 1 || unused(rc).Tokens != u.sent {
		t.Errorf("receipt %s, want the pass-1 call %+v unused", jsonOf(t, rc), u.sent)
	}
	checkKept(t, e, id, rc)

	// A pass 1 that answered just before the daemon stops: its bill is
	// recorded as the session closes.
	e2, u2, id2 := billEnv(t, 0)
	u2.answer(18000, 0, 0, 0, 600)
	crossSoft(t, e2, id2)
	e2.restart("")
	e2.open(session.OpenParams{SessionID: id2})
	if rc := e2.receipt(id2); rc.Tokens != u2.sent || unused(rc).Calls != 1 {
		t.Errorf("after a restart: receipt %s, want the pass-1 call %+v once", jsonOf(t, rc), u2.sent)
	}
}

// A call that fails without an answer bills nothing; one that answered
// with nothing of use (an empty summary) is billed although the compaction
// failed.
func TestFailedCallsBill(t *testing.T) {
	e, u, id := billEnv(t, 10)
	u.srv.Push(providertest.AnthropicError(500, "api_error", "Internal server error"))
	if _, err := e.m.Compact(context.Background(), session.CompactParams{SessionID: id}, nil); err == nil {
		t.Fatal("a failing upstream compacted")
	}
	if rc, err := e.m.Receipt(context.Background(), id); err != nil || rc != nil {
		t.Fatalf("after a failed call: receipt %+v, %v; want none", rc, err)
	}
	u.srv.Push(providertest.JSON(200, `{"id":"msg_01Empty","type":"message","role":"assistant","model":"claude-sonnet-4-5",`+
		`"content":[{"type":"text","text":"  "}],"stop_reason":"end_turn","stop_sequence":null,`+
		`"usage":{"input_tokens":9000,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":3}}`))
	u.sent = u.sent.Add(catalog.Bill{Input: 9000, Output: 3})
	if _, err := e.m.Compact(context.Background(), session.CompactParams{SessionID: id}, nil); err == nil {
		t.Fatal("an empty summary compacted")
	}
	rc := e.receipt(id)
	if rc.Tokens != u.sent || len(rc.Compactions) != 0 || unused(rc).Calls != 1 {
		t.Errorf("receipt %s, want the empty answer %+v unused", jsonOf(t, rc), u.sent)
	}
	checkKept(t, e, id, rc)
}

// A log written before bills were events (the boundary carries its
// compaction's cost) still loads, with the same receipt.
func TestOldLogReceipt(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	const id = "20261130T090000.000Z-0a1b2c3d"
	dir := filepath.Join(e.dir, ".vtcode", "sessions", id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	old := `{"seq":1,"type":"messages","time":"2026-11-30T09:00:00Z","messages":1,"data":{"messages":[{"role":"user","content":"Fix the failing test."}]}}
{"seq":2,"type":"response","time":"2026-11-30T09:00:05Z","messages":2,"data":{"message":{"role":"assistant","content":"Done."},"usage":{"inputTokens":1200,"outputTokens":300},"receipt":{"provider":"anthropic","model":"claude-sonnet-4-5","bill":{"input":1200,"cacheRead":0,"cacheWrite5m":0,"cacheWrite1h":0,"output":300}}}}
{"seq":3,"type":"compact_boundary","time":"2026-11-30T09:02:00Z","messages":1,"checkpoint":true,"data":{"trigger":"manual","mode":"local","strategy":"local","originalMessageCount":2,"compactedMessageCount":1,"originalTokens":6000,"compactedTokens":900,"artifactId":"a1","elapsedMs":1200,"messages":[{"role":"system","content":"[Summary] Fixed."}],"cost":{"provider":"anthropic","model":"claude-sonnet-4-5","bill":{"input":5000,"cacheRead":0,"cacheWrite5m":0,"cacheWrite1h":0,"output":200}}}}
`
	if err := os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	e.open(session.OpenParams{SessionID: id})
	rc := e.receipt(id)
	want := catalog.Bill{Input: 5000, Output: 200}
	if rc.Requests != 1 || rc.Tokens != want.Add(catalog.Bill{Input: 1200, Output: 300}) || len(rc.Compactions) != 1 ||
		rc.Compactions[0].Tokens != want || rc.Compactions[0].USD == nil || rc.Unused != nil {
		t.Errorf("old log receipt %s", jsonOf(t, rc))
	}
	if got := e.stored(id); jsonOf(t, got) != jsonOf(t, rc) {
		t.Errorf("the store reads %s, the session %s", jsonOf(t, got), jsonOf(t, rc))
	}
}
