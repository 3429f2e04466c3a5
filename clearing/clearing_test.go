package clearing

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
)

var approx = history.NewEstimator(history.Approx)

// filler returns text of exactly n approx tokens.
func filler(n int) string { return strings.Repeat("x", 4*n) }

// batchOf returns an assistant message with one read call per size and the
// results, each of estimate 5+size under approx (4 + size + 1 for a short id).
// Each call estimates 22 (20 + "read" + "{}"), so the assistant is 4 + 22k.
func batchOf(prefix string, sizes ...int) []history.Message {
	a := history.Message{Role: history.Assistant}
	var rs []history.Message
	for i, n := range sizes {
		id := prefix + string(rune('a'+i))
		a.ToolCalls = append(a.ToolCalls, history.ToolCall{ID: id, Name: "read", Arguments: "{}"})
		rs = append(rs, history.NewToolResult(id, "read", filler(n)))
	}
	return append([]history.Message{a}, rs...)
}

func hist(parts ...[]history.Message) []history.Message {
	var out []history.Message
	for _, p := range parts {
		out = append(out, p...)
	}
	approx.Messages(out) // estimates are cached when messages arrive
	return out
}

func user(s string) []history.Message { return []history.Message{history.NewText(history.User, s)} }

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTrigger(t *testing.T) {
	def := DefaultPolicy()
	low := def
	low.TriggerTokens = 10000
	for _, tc := range []struct {
		name          string
		p             Policy
		b             Budget
		local, budget int
	}{
		{"seed example", def, Budget{Capacity: 32000, ReservedOutput: 4000, Prefix: 2000}, 15600, 26000},
		{"lower configured trigger wins", low, Budget{Capacity: 32000, ReservedOutput: 4000, Prefix: 2000}, 10000, 26000},
		{"large window keeps the configured trigger", def, Budget{Capacity: 200000, ReservedOutput: 4096, Prefix: 3000}, 40000, 192904},
		{"unknown capacity keeps the configured trigger", def, Budget{Capacity: 0, ReservedOutput: 4000, Prefix: 2000}, 40000, 0},
		{"unknown capacity, low trigger", low, Budget{}, 10000, 0},
		{"reserve exceeds capacity", def, Budget{Capacity: 4000, ReservedOutput: 8000, Prefix: 0}, 1, 0},
		{"prefix exceeds the rest", def, Budget{Capacity: 10000, ReservedOutput: 4000, Prefix: 9000}, 1, 0},
		{"floor of 3/5", def, Budget{Capacity: 7, ReservedOutput: 0, Prefix: 0}, 4, 7},
		{"at least 1", def, Budget{Capacity: 1, ReservedOutput: 0, Prefix: 0}, 1, 1},
		{"negative reserve counts as 0", def, Budget{Capacity: 10, ReservedOutput: -5, Prefix: 0}, 6, 10},
		{"no overflow", Policy{TriggerTokens: math.MaxInt}, Budget{Capacity: math.MaxInt}, 5534023222112865484, math.MaxInt},
	} {
		local, budget := Trigger(tc.p, tc.b)
		if local != tc.local || budget != tc.budget {
			t.Errorf("%s: Trigger = %d, %d; want %d, %d", tc.name, local, budget, tc.local, tc.budget)
		}
	}
}

func TestDefaultPolicy(t *testing.T) {
	seed := Policy{Enabled: true, TriggerTokens: 40000, KeepToolUses: 2, KeepRecentToolBatches: 2, ClearToolInputs: false}
	if SeedPolicy() != seed || SeedPolicy().Stepped() {
		t.Errorf("SeedPolicy() = %+v", SeedPolicy())
	}
	want := seed
	want.ClearAtLeastTokens, want.CacheAware = DefaultClearAtLeastTokens, true
	if DefaultPolicy() != want || !DefaultPolicy().Stepped() {
		t.Errorf("DefaultPolicy() = %+v", DefaultPolicy())
	}
}

func TestStubText(t *testing.T) {
	for _, tc := range []struct {
		tool, id string
		n        int
		want     string
	}{
		{"read_file", "call_7", 4812, "[tool result cleared: read_file call_7, 4,812 tokens; run the tool again if you need it]"},
		{"grep", "c1", 999, "[tool result cleared: grep c1, 999 tokens; run the tool again if you need it]"},
		{"grep", "c1", 1000, "[tool result cleared: grep c1, 1,000 tokens; run the tool again if you need it]"},
		{"grep", "c1", 1234567, "[tool result cleared: grep c1, 1,234,567 tokens; run the tool again if you need it]"},
		{"", "c1", 0, "[tool result cleared: c1, 0 tokens; run the tool again if you need it]"},
		{"t", "", 12, "[tool result cleared: t, 12 tokens; run the tool again if you need it]"},
		{"", "", 100000, "[tool result cleared: 100,000 tokens; run the tool again if you need it]"},
	} {
		got := StubText(tc.tool, tc.id, tc.n)
		if got != tc.want || !strings.HasPrefix(got, StubPrefix) {
			t.Errorf("StubText(%q, %q, %d) = %q", tc.tool, tc.id, tc.n, got)
		}
	}
	if history.FormatCount(-1234) != "-1,234" || history.FormatCount(-12) != "-12" {
		t.Error("negative thousands")
	}
}

// The seed's count example: batches of 1, 4 and 3 results; every batch is
// larger than the evidence window, so only count retention protects.
func TestCountRetentionSeedExample(t *testing.T) {
	h := hist(user("u1"), batchOf("a", 30000), user("u2"), batchOf("b", 30000, 30000, 30000, 30000), user("u3"), batchOf("c", 30000, 30000, 30000))
	before := mustJSON(t, h)

	out, st := Clear(approx, h, DefaultPolicy(), Budget{})
	if st.ProtectedResults != 7 || st.ProtectedBatches != 2 || st.ClearedResults != 1 {
		t.Errorf("default policy: %+v; want 7 protected results in 2 batches, 1 cleared", st)
	}
	if !IsStub(&out[2]) {
		t.Errorf("oldest result not cleared: %q", out[2].Text()[:20])
	}
	for i := 4; i < len(out); i++ {
		if out[i].Role == history.Tool && !history.Equal(out[i], h[i]) {
			t.Errorf("protected result %d changed", i)
		}
	}

	p := DefaultPolicy()
	p.KeepRecentToolBatches = 0
	_, st = Clear(approx, h, p, Budget{})
	if st.ProtectedResults != 3 || st.ProtectedBatches != 1 || st.ClearedResults != 5 {
		t.Errorf("keep_recent_tool_batches=0: %+v; want 3 protected (newest 2 results expanded to their batch), 5 cleared", st)
	}
	p.KeepToolUses = 0
	_, st = Clear(approx, h, p, Budget{})
	if st.ProtectedResults != 0 || st.ClearedResults != 8 {
		t.Errorf("no count retention: %+v", st)
	}
	p = DefaultPolicy()
	p.KeepToolUses = 4 // newest 4 results: 3 of batch c, 1 of batch b
	p.KeepRecentToolBatches = 1
	_, st = Clear(approx, h, p, Budget{})
	if st.ProtectedResults != 7 || st.ProtectedBatches != 2 {
		t.Errorf("keep_tool_uses=4 expands to whole batches: %+v", st)
	}
	if mustJSON(t, h) != before {
		t.Error("history modified")
	}
}

// keep_recent_tool_batches = 0 turns off the batch count only: the evidence
// window still protects.
func TestEvidenceWindow(t *testing.T) {
	// Local trigger 1,000 → window 500. Batch sizes: assistant 4+22k plus
	// results 5+size each.
	//   d: 48 + 105 + 105 = 258   (newest)
	//   c: 26 + 185       = 211   → running 469 ≤ 500
	//   b: 26 + 35        =  61   → 530 > 500: stop (although a would fit: 500)
	//   a: 26 + 5         =  31
	h := hist(user("u"), batchOf("a", 0), batchOf("b", 30), batchOf("c", 180), batchOf("d", 100, 100), user("big "+filler(2000)))
	p := Policy{Enabled: true, TriggerTokens: 1000}
	out, st := Clear(approx, h, p, Budget{})
	if st.ProtectedBatches != 2 || st.ProtectedResults != 3 {
		t.Fatalf("window: %+v; want batches c and d", st)
	}
	// b's result is cleared; a's 5-token result is left as is (a stub would
	// not reduce it).
	if !IsStub(&out[4]) || IsStub(&out[2]) || !history.Equal(out[2], h[2]) {
		t.Errorf("a: %q, b: %q", out[2].Text(), out[4].Text())
	}
	if st.ClearedResults != 1 {
		t.Errorf("cleared %d, want 1", st.ClearedResults)
	}
	// A window exactly filled is included: trigger 938 → half 469.
	p.TriggerTokens = 938
	if _, st := Clear(approx, h, p, Budget{}); st.ProtectedBatches != 2 {
		t.Errorf("window of exactly the running sum: %+v", st)
	}
	p.TriggerTokens = 936 // half 468: c no longer fits
	if _, st := Clear(approx, h, p, Budget{}); st.ProtectedBatches != 1 || st.ProtectedResults != 2 {
		t.Errorf("window one short: %+v", st)
	}
	// The window uses the resolved local trigger: capacity 1,000 → hb 1,000
	// → local 600 → window 300: only d.
	p.TriggerTokens = 40000
	if _, st := Clear(approx, h, p, Budget{Capacity: 1000}); st.LocalTrigger != 600 || st.ProtectedBatches != 1 {
		t.Errorf("resolved trigger: %+v", st)
	}
	// Count retention adds to the window.
	p = DefaultPolicy()
	p.TriggerTokens = 1000
	if _, st := Clear(approx, h, p, Budget{}); st.ProtectedBatches != 2 {
		t.Errorf("window ∪ count: %+v", st)
	}
	p.KeepToolUses, p.KeepRecentToolBatches = 0, 3
	if _, st := Clear(approx, h, p, Budget{}); st.ProtectedBatches != 3 || st.ProtectedResults != 4 {
		t.Errorf("window ∪ 3 recent batches: %+v", st)
	}
}

func TestTriggerBoundary(t *testing.T) {
	h := hist(user("u"), batchOf("a", 500), batchOf("b", 500), batchOf("c", 500), user("v"))
	total := approx.Messages(h)
	p := Policy{Enabled: true, TriggerTokens: total} // estimate == trigger: no clearing
	out, st := Clear(approx, h, p, Budget{})
	if &out[0] != &h[0] || st.ClearedResults != 0 || st.ProtectedResults != 0 || st.OriginalTokens != total || st.ProjectedTokens != total {
		t.Errorf("at the trigger: %+v", st)
	}
	p.TriggerTokens = total - 1 // estimate == trigger + 1: clears all but c, in the window
	out, st = Clear(approx, h, p, Budget{})
	if st.ClearedResults != 2 || st.ProtectedBatches != 1 || st.ProjectedTokens >= total || &out[0] == &h[0] {
		t.Errorf("one above the trigger: %+v", st)
	}
	// The same boundary through a resolved trigger: capacity c gives
	// floor(c*3/5).
	p.TriggerTokens = 40000
	capacity := total * 5 / 3
	for local, _ := Trigger(p, Budget{Capacity: capacity}); local < total; local, _ = Trigger(p, Budget{Capacity: capacity}) {
		capacity++
	}
	if local, _ := Trigger(p, Budget{Capacity: capacity}); local != total {
		t.Fatalf("no capacity resolves to %d", total)
	}
	if _, st := Clear(approx, h, p, Budget{Capacity: capacity}); st.ClearedResults != 0 {
		t.Errorf("resolved trigger == estimate cleared: %+v", st)
	}
	if _, st := Clear(approx, h, p, Budget{Capacity: capacity - 2}); st.ClearedResults == 0 {
		t.Errorf("resolved trigger below estimate did not clear: %+v", st)
	}
}

func TestDisabled(t *testing.T) {
	h := hist(user("u"), batchOf("a", 5000), batchOf("b", 5000), batchOf("c", 5000))
	p := DefaultPolicy()
	p.Enabled = false
	p.TriggerTokens = 1
	out, st := Clear(approx, h, p, Budget{})
	if len(out) != len(h) || &out[0] != &h[0] {
		t.Error("disabled clearing did not return its input")
	}
	total := approx.Messages(h)
	if st != (Stats{OriginalTokens: total, ProjectedTokens: total, LocalTrigger: 1}) {
		t.Errorf("stats = %+v", st)
	}
	if out, _ := Clear(approx, nil, DefaultPolicy(), Budget{}); out != nil {
		t.Error("nil history")
	}
}

func TestStubReplacement(t *testing.T) {
	o200k := history.NewEstimator(history.O200k)
	h := hist(user("u"), batchOf("a", 1000, 1), batchOf("b", 1000), batchOf("c", 1000), batchOf("d", 1000))
	h[3].ToolName = "" // named after its call
	h[3].Content = history.Parts(history.TextPart(filler(1000)), history.TextPart("more"))
	h[3].Forget()
	approx.Messages(h)
	p := Policy{Enabled: true, TriggerTokens: 100, KeepToolUses: 1}
	out, st := Clear(approx, h, p, Budget{})
	// a's first result: 4 + 1000 + 1 = 1005 tokens.
	want := "[tool result cleared: read aa, 1,005 tokens; run the tool again if you need it]"
	if got := out[2].Text(); got != want {
		t.Errorf("stub = %q\nwant %q", got, want)
	}
	if got := out[3].Text(); got != "[tool result cleared: read ab, 1,006 tokens; run the tool again if you need it]" || !out[3].Content.IsString() {
		t.Errorf("stub of an unnamed parts result = %q", got)
	}
	if out[2].ToolCallID != "aa" || out[2].ToolName != "read" || out[2].Role != history.Tool {
		t.Errorf("stub lost its pairing fields: %+v", out[2])
	}
	if st.ClearedResults != 4 || st.ProtectedResults != 1 {
		t.Errorf("stats %+v", st)
	}
	// Estimates of the output are cached and correct.
	checkEstimates(t, approx, out, st)
	// With o200k too.
	h2 := append([]history.Message(nil), h...)
	for i := range h2 {
		h2[i].Forget()
	}
	o200k.Messages(h2)
	out, st = Clear(o200k, h2, p, Budget{})
	if !IsStub(&out[2]) {
		t.Fatal("o200k: not cleared")
	}
	checkEstimates(t, o200k, out, st)
}

// checkEstimates verifies that every output message has a cached estimate
// equal to a fresh one, and that the stats add up.
func checkEstimates(t testing.TB, est *history.Estimator, out []history.Message, st Stats) {
	t.Helper()
	sum := 0
	for i := range out {
		cached, ok := est.Cached(&out[i])
		fresh := out[i]
		fresh.Forget()
		n := est.Message(&fresh)
		if ok && cached != n {
			t.Fatalf("message %d: cached estimate %d, fresh %d", i, cached, n)
		}
		sum += n
	}
	if sum != st.ProjectedTokens {
		t.Fatalf("ProjectedTokens %d, sum of estimates %d", st.ProjectedTokens, sum)
	}
}

func TestStubWouldNotReduce(t *testing.T) {
	h := hist(user("u"), batchOf("a", 3), batchOf("b", 40), batchOf("c", 2000))
	h[1].ToolCalls[0].ThoughtSignature = "sig-a"
	h[3].ToolCalls[0].ThoughtSignature = "sig-b"
	for i := range h {
		h[i].Forget()
	}
	approx.Messages(h)
	out, st := Clear(approx, h, Policy{Enabled: true, TriggerTokens: 10, KeepToolUses: 1}, Budget{})
	// a's result (8 tokens) would grow into a ~21-token stub: unchanged, and so
	// is its call (signature kept).
	if !history.Equal(out[2], h[2]) || out[1].ToolCalls[0].ThoughtSignature != "sig-a" {
		t.Errorf("small result or its call changed: %q", out[2].Text())
	}
	if !IsStub(&out[4]) || out[3].ToolCalls[0].ThoughtSignature != "" {
		t.Errorf("b not cleared or signature kept")
	}
	if st.ClearedResults != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestCallEdits(t *testing.T) {
	big := `{"content":"` + strings.Repeat("y", 2000) + `"}`
	edge := `{"content":"` + strings.Repeat("y", MaxKeptInputBytes-14) + `"}` // exactly 1,024 bytes
	over := `{"content":"` + strings.Repeat("y", MaxKeptInputBytes-13) + `"}` // 1,025 bytes
	if len(edge) != MaxKeptInputBytes || len(over) != MaxKeptInputBytes+1 {
		t.Fatal("bad sizes")
	}
	mk := func() []history.Message {
		old := batchOf("a", 1000, 1000, 1000, 1000)
		calls := old[0].ToolCalls
		calls[0].Arguments, calls[0].ThoughtSignature = big, "c2lnbmF0dXJl"
		calls[1].Arguments = edge
		calls[2].Arguments = over
		calls[3].Arguments, calls[3].Input = "", strings.Repeat("patch ", 300)
		recent := batchOf("z", 1000)
		recent[0].ToolCalls[0].Arguments, recent[0].ToolCalls[0].ThoughtSignature = big, "keep-me"
		return hist(user("u"), old, user("v"), recent)
	}

	h := mk()
	before := mustJSON(t, h)
	p := Policy{Enabled: true, TriggerTokens: 100, KeepToolUses: 1}
	out, st := Clear(approx, h, p, Budget{})
	a := out[1].ToolCalls
	if a[0].ThoughtSignature != "" || a[0].Arguments != big || a[1].Arguments != edge || a[2].Arguments != over || a[3].Input == "" {
		t.Errorf("without clear_tool_inputs only the signature goes: %+v", a)
	}
	if st.ClearedInputs != 0 {
		t.Errorf("ClearedInputs = %d", st.ClearedInputs)
	}
	if z := out[7].ToolCalls[0]; z.ThoughtSignature != "keep-me" || z.Arguments != big || !history.Equal(out[7], h[7]) {
		t.Error("protected call changed")
	}
	checkEstimates(t, approx, out, st)

	p.ClearToolInputs = true
	out, st = Clear(approx, h, p, Budget{})
	a = out[1].ToolCalls
	if a[0].Arguments != `{"cleared":"2014 bytes of arguments"}` {
		t.Errorf("large arguments: %q", a[0].Arguments)
	}
	if a[1].Arguments != edge {
		t.Error("1,024-byte arguments cleared")
	}
	if a[2].Arguments != `{"cleared":"1025 bytes of arguments"}` {
		t.Errorf("1,025-byte arguments: %q", a[2].Arguments)
	}
	if a[3].Input != `{"cleared":"1800 bytes of arguments"}` {
		t.Errorf("large input: %q", a[3].Input)
	}
	for _, tc := range a {
		if tc.Arguments != "" && !json.Valid([]byte(tc.Arguments)) {
			t.Errorf("invalid JSON arguments %q", tc.Arguments)
		}
	}
	if st.ClearedInputs != 3 {
		t.Errorf("ClearedInputs = %d, want 3", st.ClearedInputs)
	}
	if out[7].ToolCalls[0].Arguments != big {
		t.Error("protected call's input cleared")
	}
	checkEstimates(t, approx, out, st)

	// Copy-on-write: the input, its ToolCalls arrays included, is untouched.
	if mustJSON(t, h) != before || h[1].ToolCalls[0].ThoughtSignature == "" {
		t.Error("history modified")
	}
	if &out[1].ToolCalls[0] == &h[1].ToolCalls[0] {
		t.Error("edited ToolCalls shares its array with the input")
	}
	if &out[7].ToolCalls[0] != &h[7].ToolCalls[0] {
		t.Error("untouched message copied deeply")
	}

	// Input clearing never increases the estimate: 1,100 spaces are 9 o200k
	// tokens, the replacement 10.
	o200k := history.NewEstimator(history.O200k)
	h = mk()
	h[1].ToolCalls[1].Arguments = strings.Repeat(" ", 1100)
	for i := range h {
		h[i].Forget()
	}
	o200k.Messages(h)
	out, st = Clear(o200k, h, p, Budget{})
	if out[1].ToolCalls[1].Arguments != h[1].ToolCalls[1].Arguments {
		t.Error("input clearing increased the estimate")
	}
	if !strings.HasPrefix(out[1].ToolCalls[0].Arguments, `{"cleared":`) || st.ClearedInputs != 3 {
		t.Errorf("o200k input clearing: %+v", st)
	}
	checkEstimates(t, o200k, out, st)
}

// Results whose call cannot be matched are judged by keep_tool_uses alone.
func TestUnmatchedResults(t *testing.T) {
	orphan := func(id string, n int) []history.Message {
		return []history.Message{history.NewToolResult(id, "read", filler(n))}
	}
	h := hist(user("u"), batchOf("a", 1000), orphan("x1", 1000), batchOf("b", 1000), orphan("x2", 1000))
	p := Policy{Enabled: true, TriggerTokens: 100, KeepToolUses: 1, KeepRecentToolBatches: 5}
	out, st := Clear(approx, h, p, Budget{})
	// x2 is the newest result: kept; x1 is not among the newest 1: cleared
	// even though every batch is kept.
	if !history.Equal(out[6], h[6]) || !IsStub(&out[3]) || IsStub(&out[2]) || IsStub(&out[5]) {
		t.Errorf("orphans: x1 %q, x2 %q", out[3].Text()[:10], out[6].Text()[:10])
	}
	if st.ProtectedResults != 3 || st.ProtectedBatches != 2 || st.ClearedResults != 1 {
		t.Errorf("stats %+v", st)
	}
	if err := history.CheckPairing(out); err == nil {
		t.Error("clearing repaired pairing; it must only replace content")
	}
	if len(out) != len(h) {
		t.Error("messages dropped")
	}
}

func TestUnnormalizedInput(t *testing.T) {
	// Reordered completions, a missing result and a system message in between:
	// pairing is computed by call id.
	b := batchOf("a", 1000, 1000, 1000)
	h := hist(user("u"), b[:1], b[3:4], []history.Message{history.NewText(history.System, "s")}, b[1:2], batchOf("z", 1000))
	p := Policy{Enabled: true, TriggerTokens: 100, KeepToolUses: 1}
	out, st := Clear(approx, h, p, Budget{})
	if !IsStub(&out[2]) || !IsStub(&out[4]) || st.ClearedResults != 2 || st.ProtectedBatches != 1 {
		t.Errorf("stats %+v", st)
	}
	// The incomplete batch is not in the evidence window, but its cleared
	// results still lose their calls' signatures.
	checkEstimates(t, approx, out, st)
}

func TestIdempotent(t *testing.T) {
	o200k := history.NewEstimator(history.O200k)
	for _, est := range []*history.Estimator{approx, o200k} {
		h := append([]history.Message(nil), hist(user("u"), batchOf("a", 30, 2000), batchOf("b", 3000), user("v"), batchOf("c", 400), batchOf("d", 50))...)
		h[1].ToolCalls[1].ThoughtSignature = "c2lnbmF0dXJl"
		h[1].ToolCalls[1].Arguments = `{"content":"` + strings.Repeat("q", 3000) + `"}`
		for i := range h {
			h[i].Forget()
		}
		est.Messages(h)
		p := Policy{Enabled: true, TriggerTokens: 800, KeepToolUses: 1, ClearToolInputs: true}
		once, st1 := Clear(est, h, p, Budget{})
		if st1.ClearedResults == 0 || st1.ClearedInputs != 1 {
			t.Fatalf("%s: nothing cleared: %+v", est.Tokenizer(), st1)
		}
		twice, st2 := Clear(est, once, p, Budget{})
		if mustJSON(t, once) != mustJSON(t, twice) {
			t.Errorf("%s: Clear(Clear(h)) != Clear(h)", est.Tokenizer())
		}
		if st2.ProjectedTokens != st1.ProjectedTokens || st2.OriginalTokens != st1.ProjectedTokens {
			t.Errorf("%s: stats %+v then %+v", est.Tokenizer(), st1, st2)
		}
		// Two identical requests give identical projections.
		again, st3 := Clear(est, h, p, Budget{})
		if mustJSON(t, again) != mustJSON(t, once) || st3 != st1 {
			t.Errorf("%s: not deterministic", est.Tokenizer())
		}
		// Through JSON (no cached estimates) as well.
		var decoded []history.Message
		if err := json.Unmarshal([]byte(mustJSON(t, once)), &decoded); err != nil {
			t.Fatal(err)
		}
		thrice, _ := Clear(est, decoded, p, Budget{})
		if mustJSON(t, thrice) != mustJSON(t, once) {
			t.Errorf("%s: not idempotent after a JSON round trip", est.Tokenizer())
		}
	}
}

// Uncached input is estimated on copies: Clear writes nothing into it.
func TestUncachedInputNotWritten(t *testing.T) {
	h := hist(user("u"), batchOf("a", 1000), batchOf("b", 1000))
	for i := range h {
		h[i].Forget()
	}
	out, st := Clear(approx, h, Policy{Enabled: true, TriggerTokens: 10, KeepToolUses: 1}, Budget{})
	for i := range h {
		if _, ok := approx.Cached(&h[i]); ok {
			t.Fatalf("estimate cached on input message %d", i)
		}
	}
	if st.ClearedResults != 1 || !IsStub(&out[2]) {
		t.Errorf("stats %+v", st)
	}
}

func TestIsStub(t *testing.T) {
	r := history.NewToolResult("c", "t", StubText("t", "c", 10))
	if !IsStub(&r) {
		t.Error("stub not recognized")
	}
	for _, m := range []history.Message{
		history.NewText(history.User, StubPrefix),
		{Role: history.Tool, Content: history.Parts(history.TextPart(StubPrefix))},
		history.NewToolResult("c", "t", " "+StubPrefix),
	} {
		if IsStub(&m) {
			t.Errorf("%+v recognized as a stub", m)
		}
	}
}

// Clear may run concurrently on one shared history (run with -race).
func TestConcurrentClear(t *testing.T) {
	h := hist(user("u"), batchOf("a", 300, 200), batchOf("b", 400), batchOf("c", 100), batchOf("d", 300))
	h[1].ToolCalls[0].ThoughtSignature = strings.Repeat("s", 40)
	for i := range h {
		h[i].Forget()
	}
	o200k.Messages(h)
	want, _ := Clear(o200k, h, Policy{Enabled: true, TriggerTokens: 100, KeepToolUses: 1}, Budget{})
	done := make(chan string)
	for g := range 4 {
		go func() {
			out, _ := Clear(o200k, h, Policy{Enabled: true, TriggerTokens: 100 + g, KeepToolUses: 1}, Budget{})
			done <- mustJSON(t, out)
		}()
	}
	for range 4 {
		if got := <-done; got != mustJSON(t, want) {
			t.Error("concurrent Clear differs")
		}
	}
}

func TestMemoBounded(t *testing.T) {
	m := NewMemo()
	m.mu.Lock()
	for i := range memoLimit {
		m.texts[textKey{tok: history.O200k, h: uint64(i)}] = i
	}
	m.mu.Unlock()
	r := history.NewToolResult("c1", "read", filler(100))
	text, n := m.stub(o200k, history.O200k, &r, "read", 104)
	if want := StubText("read", "c1", 104); text != want || n != 4+o200k.Text(want)+o200k.Text("c1") {
		t.Errorf("stub = %q, %d", text, n)
	}
	if size := m.Len(); size > 3 { // the stub, its label and its call id
		t.Errorf("memo holds %d entries after reaching its limit, want at most 3", size)
	}
}

// After Warm on arrival, a projection tokenizes nothing: it adds nothing to
// the memo, and its result is the same as without Warm or without a memo.
func TestWarm(t *testing.T) {
	h := hist(user("u"), batchOf("a", 300, 200), batchOf("b", 400), user("v"), batchOf("c", 100), batchOf("d", 300))
	h[1].ToolCalls[0].ThoughtSignature = strings.Repeat("s", 40)
	h[1].ToolCalls[1].Arguments = `{"content":"` + strings.Repeat("q", 2000) + `"}`
	h[2].ToolName = ""
	for i := range h {
		h[i].Forget()
	}
	o200k.Messages(h)
	p := Policy{Enabled: true, TriggerTokens: 100, KeepToolUses: 1, ClearToolInputs: true}

	cold, coldStats := Clear(o200k, h, p, Budget{})

	m := NewMemo()
	before := mustJSON(t, h)
	m.Warm(o200k, h)
	if mustJSON(t, h) != before {
		t.Fatal("Warm modified its input")
	}
	size := m.Len()
	if size == 0 {
		t.Fatal("Warm memoized nothing")
	}
	warm := Project(o200k, h, Request{Policy: p, Memo: m})
	if after := m.Len(); after != size {
		t.Errorf("a projection after Warm memoized %d more counts", after-size)
	}
	if mustJSON(t, warm.Messages) != mustJSON(t, cold) || warm.Stats != coldStats {
		t.Error("Warm changed the projection")
	}
	if coldStats.ClearedResults != 4 || coldStats.ClearedInputs != 1 {
		t.Errorf("stats %+v", coldStats)
	}
	m.Warm(approx, h) // no-op
	var nilMemo *Memo
	nilMemo.Warm(o200k, h) // no-op
}

// TestMemoBoundGrowsWithWarmedResults: the bound leaves room for the counts
// of every warmed message, so a session with more results than memoLimit
// does not empty its memo on each projection (which made preparing a large
// session tokenize every stub again).
func TestMemoBoundGrowsWithWarmedResults(t *testing.T) {
	msgs := user("u")
	for i := range memoLimit / 2 {
		id := "call_" + strconv.Itoa(i)
		msgs = append(msgs, history.Message{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: id, Name: "read"}}},
			history.NewToolResult(id, "read", "contents of part "+strconv.Itoa(i)))
	}
	est := history.NewEstimator(history.O200k)
	est.Messages(msgs)
	m := NewMemo()
	m.Warm(est, msgs)
	stubs := len(m.stubs)
	if stubs < memoLimit/2 {
		t.Fatalf("Warm memoized %d stub counts for %d results", stubs, memoLimit/2)
	}
	// Entries a projection adds beyond the warmed ones (synthesized
	// results, labels) stay within the bound instead of emptying the memo.
	for i := range memoLimit {
		m.textTokens(est, history.O200k, "extra "+strconv.Itoa(i))
	}
	if after := len(m.stubs); after != stubs {
		t.Errorf("the memo was emptied: %d of the %d warmed stub counts left", after, stubs)
	}
}
