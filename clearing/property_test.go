package clearing

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
	"pgregory.net/rapid"
)

var o200k = history.NewEstimator(history.O200k)

// genHistory draws a history the way clients produce them: user turns, system
// messages, batches of parallel calls with reused ids, results that arrive
// out of order, late, twice or never, orphans, and results already cleared.
func genHistory(t *rapid.T) []history.Message { return genHistoryScaled(t, 1) }

// genHistoryScaled is genHistory with message sizes divided by div.
func genHistoryScaled(t *rapid.T, div int) []history.Message {
	filler := func(n int) string { return filler(n / div) }
	var msgs []history.Message
	n := rapid.IntRange(0, 24).Draw(t, "events")
	unique := 0
	var late []history.Message
	for range n {
		switch rapid.IntRange(0, 9).Draw(t, "event") {
		case 0:
			msgs = append(msgs, history.NewText(history.User, "u"+filler(rapid.IntRange(0, 30).Draw(t, "user"))))
		case 1:
			msgs = append(msgs, history.NewText(history.System, "reminder"))
		case 2:
			msgs = append(msgs, history.NewText(history.Assistant, filler(rapid.IntRange(0, 50).Draw(t, "text"))))
		case 3:
			msgs = append(msgs, history.NewToolResult(fmt.Sprintf("orphan_%d", len(msgs)), "read", filler(rapid.IntRange(0, 300).Draw(t, "orphan"))))
		default:
			k := rapid.IntRange(1, 4).Draw(t, "calls")
			reuse := rapid.Bool().Draw(t, "reuse")
			a := history.Message{Role: history.Assistant}
			if rapid.IntRange(0, 3).Draw(t, "reasoning") == 0 {
				a.Reasoning = "thinking"
				a.ReasoningDetails = []json.RawMessage{json.RawMessage(`{"type":"thinking","signature":"abc"}`)}
			}
			var results []history.Message
			for c := range k {
				id := fmt.Sprintf("call_%d", c)
				if !reuse {
					unique++
					id = fmt.Sprintf("toolu_%d", unique)
				}
				tc := history.ToolCall{ID: id, Name: rapid.SampledFrom([]string{"read_file", "grep", "run"}).Draw(t, "name")}
				switch rapid.IntRange(0, 3).Draw(t, "args") {
				case 0:
					tc.Arguments = `{"path":"a.go"}`
				case 1:
					tc.Arguments = `{"content":"` + strings.Repeat("z", rapid.IntRange(1000, 1100).Draw(t, "argsize")) + `"}`
				case 2:
					tc.Input = strings.Repeat("p", rapid.IntRange(1000, 3000).Draw(t, "inputsize"))
				}
				if rapid.Bool().Draw(t, "sig") {
					tc.ThoughtSignature = "c2ln" + strings.Repeat("A", rapid.IntRange(0, 40).Draw(t, "sigsize"))
				}
				a.ToolCalls = append(a.ToolCalls, tc)
				r := history.NewToolResult(id, tc.Name, filler(rapid.IntRange(0, 600).Draw(t, "result")))
				switch rapid.IntRange(0, 9).Draw(t, "resultkind") {
				case 0:
					continue // never answered
				case 1:
					r.ToolName = ""
				case 2:
					r.Content = history.Text(StubText(tc.Name, id, 999))
				case 3:
					r.Content = history.Parts(history.TextPart(filler(50)), history.TextPart("tail"))
				}
				results = append(results, r)
			}
			msgs = append(msgs, a)
			msgs = append(msgs, late...)
			late = nil
			perm := rapid.Permutation(results).Draw(t, "order")
			if rapid.IntRange(0, 4).Draw(t, "inorder") > 0 {
				perm = results
			}
			switch rapid.IntRange(0, 9).Draw(t, "placement") {
			case 0:
				late = perm // after the next batch
			case 1:
				if len(perm) > 0 {
					msgs = append(msgs, perm[0], history.NewText(history.System, "between"))
					msgs = append(msgs, perm[1:]...)
				}
			case 2:
				msgs = append(msgs, perm...)
				if len(perm) > 0 {
					msgs = append(msgs, perm[0]) // a duplicate
				}
			default:
				msgs = append(msgs, perm...)
			}
		}
	}
	return append(msgs, late...)
}

func genPolicy(t *rapid.T) Policy {
	return Policy{
		Enabled:               rapid.IntRange(0, 5).Draw(t, "enabled") > 0,
		TriggerTokens:         rapid.IntRange(0, 3000).Draw(t, "trigger"),
		KeepToolUses:          rapid.IntRange(0, 4).Draw(t, "keepToolUses"),
		KeepRecentToolBatches: rapid.IntRange(0, 4).Draw(t, "keepRecent"),
		ClearToolInputs:       rapid.Bool().Draw(t, "clearInputs"),
	}
}

func genBudget(t *rapid.T) Budget {
	if rapid.Bool().Draw(t, "unknownCapacity") {
		return Budget{}
	}
	return Budget{
		Capacity:       rapid.IntRange(0, 8000).Draw(t, "capacity"),
		ReservedOutput: rapid.IntRange(0, 3000).Draw(t, "reserved"),
		Prefix:         rapid.IntRange(0, 3000).Draw(t, "prefix"),
	}
}

type tb interface {
	Helper()
	Fatalf(format string, args ...any)
}

func encode(t tb, msgs []history.Message) string {
	t.Helper()
	b, err := json.Marshal(msgs)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(b)
}

// checkClear checks the properties of docs/design.md §7.4 on one history, raw and
// normalized.
func checkClear(t tb, est *history.Estimator, raw []history.Message, p Policy, b Budget) {
	t.Helper()
	if rawCached(raw) {
		est.Messages(raw) // as on arrival, for half of the cases
	}
	for _, in := range [][]history.Message{normalized(raw), raw} {
		isNorm := history.Normalized(in)
		before := encode(t, in)
		cachedBefore := cacheState(est, in)

		out, st := Clear(est, in, p, b)

		// The history is never modified, not even its estimate caches.
		if encode(t, in) != before || cacheState(est, in) != cachedBefore {
			t.Fatalf("input modified")
		}
		if len(out) != len(in) {
			t.Fatalf("length %d → %d", len(in), len(out))
		}
		// Estimates.
		orig := 0
		for i := range in {
			m := in[i]
			m.Forget()
			orig += est.Message(&m)
		}
		if st.OriginalTokens != orig {
			t.Fatalf("OriginalTokens %d, want %d", st.OriginalTokens, orig)
		}
		proj := 0
		for i := range out {
			m := out[i]
			cached, ok := est.Cached(&m)
			m.Forget()
			n := est.Message(&m)
			if ok && cached != n {
				t.Fatalf("message %d: cached estimate %d, real %d", i, cached, n)
			}
			proj += n
		}
		if st.ProjectedTokens != proj || proj > orig {
			t.Fatalf("ProjectedTokens %d, real %d, original %d", st.ProjectedTokens, proj, orig)
		}
		local, hb := Trigger(p, b)
		if st.LocalTrigger != local || st.HistoryBudget != hb {
			t.Fatalf("stats trigger %d/%d, want %d/%d", st.LocalTrigger, st.HistoryBudget, local, hb)
		}
		// Identity when disabled or under the trigger.
		if !p.Enabled || orig <= local {
			if len(in) > 0 && &out[0] != &in[0] {
				t.Fatalf("not engaged but copied (enabled %v, %d ≤ %d)", p.Enabled, orig, local)
			}
			if st.ClearedResults+st.ProtectedResults+st.ProtectedBatches+st.ClearedInputs != 0 {
				t.Fatalf("not engaged but stats %+v", st)
			}
		}
		// Only result content, signatures and large inputs change; pairing
		// structure is kept, so normalized input stays normalized.
		for i := range out {
			o, m := &out[i], &in[i]
			if o.Role != m.Role || o.ToolCallID != m.ToolCallID || o.ToolName != m.ToolName || len(o.ToolCalls) != len(m.ToolCalls) {
				t.Fatalf("message %d: structure changed", i)
			}
			if m.Role == history.Tool && !history.Equal(*o, *m) && (!IsStub(o) || IsStub(m)) {
				t.Fatalf("message %d: result changed into %q", i, o.Text())
			}
			for c := range o.ToolCalls {
				oc, mc := o.ToolCalls[c], m.ToolCalls[c]
				if oc.ID != mc.ID || oc.Name != mc.Name ||
					oc.ThoughtSignature != mc.ThoughtSignature && oc.ThoughtSignature != "" ||
					oc.Arguments != mc.Arguments && (!p.ClearToolInputs || len(mc.Arguments) <= MaxKeptInputBytes || !strings.HasPrefix(oc.Arguments, `{"cleared":"`)) ||
					oc.Input != mc.Input && (!p.ClearToolInputs || len(mc.Input) <= MaxKeptInputBytes) {
					t.Fatalf("message %d call %d: %+v → %+v", i, c, mc, oc)
				}
			}
		}
		if isNorm {
			if err := history.CheckPairing(out); err != nil {
				t.Fatalf("pairing broken: %v", err)
			}
			// The newest keep_tool_uses results and the newest
			// keep_recent_tool_batches batches are untouched.
			checkCountProtection(t, in, out, p)
		}
		// Idempotent.
		again, st2 := Clear(est, out, p, b)
		if encode(t, again) != encode(t, out) {
			t.Fatalf("not idempotent")
		}
		if st2.OriginalTokens != st.ProjectedTokens || st2.ProjectedTokens != st.ProjectedTokens {
			t.Fatalf("second pass stats %+v after %+v", st2, st)
		}
	}
}

func rawCached(raw []history.Message) bool { return len(raw)%2 == 0 }

func normalized(raw []history.Message) []history.Message {
	out, _ := history.Normalize(raw)
	return out
}

func cacheState(est *history.Estimator, msgs []history.Message) string {
	var sb strings.Builder
	for i := range msgs {
		n, ok := est.Cached(&msgs[i])
		fmt.Fprint(&sb, n, ok, ";")
	}
	return sb.String()
}

func checkCountProtection(t tb, in, out []history.Message, p Policy) {
	t.Helper()
	k := p.KeepToolUses
	batches := p.KeepRecentToolBatches
	for i := len(in) - 1; i >= 0; i-- {
		m := &in[i]
		if m.HasToolCalls() && batches > 0 {
			batches--
			for j := i; j <= i+len(m.ToolCalls); j++ {
				if !history.Equal(in[j], out[j]) {
					t.Fatalf("message %d of a recent batch changed", j)
				}
			}
		}
		if m.Role == history.Tool && k > 0 {
			k--
			if !history.Equal(*m, out[i]) {
				t.Fatalf("result %d among the newest %d changed", i, p.KeepToolUses)
			}
		}
	}
}

func TestClearProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		est := approx
		if rapid.IntRange(0, 4).Draw(t, "o200k") == 0 {
			est = o200k
		}
		checkClear(t, est, genHistory(t), genPolicy(t), genBudget(t))
	})
}

// Disabled clearing returns the normalized history itself.
func TestDisabledIdentityProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := normalized(genHistory(t))
		p := genPolicy(t)
		p.Enabled = false
		out, st := Clear(approx, in, p, genBudget(t))
		if len(in) > 0 && &out[0] != &in[0] || len(out) != len(in) || st.OriginalTokens != st.ProjectedTokens {
			t.Fatalf("disabled clearing changed the projection")
		}
	})
}

// FuzzClear checks the same properties on histories decoded from JSON, or
// drawn by genHistory from the fuzzer's bytes.
func FuzzClear(f *testing.F) {
	f.Add([]byte(`[{"role":"user","content":"u"},{"role":"assistant","toolCalls":[{"id":"call_0","name":"read","thoughtSignature":"s"}]},{"role":"tool","toolCallId":"call_0","content":"` + filler(300) + `"},{"role":"assistant","toolCalls":[{"id":"call_0","name":"read"}]},{"role":"tool","toolCallId":"call_0","content":"r"}]`))
	drawn := rapid.MakeFuzz(func(t *rapid.T) {
		p, b := genPolicy(t), genBudget(t)
		p.TriggerTokens /= 10
		b.Capacity /= 10
		checkClear(t, approx, genHistoryScaled(t, 10), p, b)
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		var msgs []history.Message
		if json.Unmarshal(data, &msgs) != nil {
			drawn(t, data)
			return
		}
		for _, p := range []Policy{
			{Enabled: true},
			{Enabled: true, TriggerTokens: 50, KeepToolUses: 1, ClearToolInputs: true},
			{Enabled: true, TriggerTokens: 200, KeepRecentToolBatches: 1},
			DefaultPolicy(),
		} {
			checkClear(t, approx, msgs, p, Budget{})
		}
		if len(data) < 512 { // o200k is slow under coverage instrumentation
			checkClear(t, o200k, msgs, Policy{Enabled: true, TriggerTokens: 20, KeepToolUses: 1, ClearToolInputs: true}, Budget{})
		}
	})
}

// The o200k count of a stub composed from its pieces equals the count of the
// whole stub, for every label composedStubTokens accepts.
func TestComposedStubTokens(t *testing.T) {
	check := func(t tb, name, id string, n int) {
		label := stubLabel(name, id)
		got, ok := (*Memo)(nil).composedStubTokens(o200k, history.O200k, label, n)
		if want := o200k.Text(StubText(name, id, n)); ok && got != want {
			t.Fatalf("stub %q: composed %d, tokenized %d", StubText(name, id, n), got, want)
		}
		if ok != (simpleLabel(label) && n >= 0) {
			t.Fatalf("label %q: composed = %v", label, ok)
		}
	}
	for _, tc := range []struct {
		name, id string
		n        int
	}{
		{"read_file", "call_7", 4812}, {"read_file", "call_0", 0}, {"", "", 1}, {"grep", "", 1000},
		{"", "toolu_01ABCdef", 1000000}, {"run", "x", 1_000_001}, {"web.fetch", "c-1.", 999_099},
		{"_x", "-y", 1_023_456_789}, {"A", "Z9", 100_000}, {"read", "call_", 10_010}, {"x's", "1", 5},
		{"a b", "c", 7}, {"名前", "id", 12}, {"tool\n", "id", 3}, {"t", "id,", 20}, {"read_file", "call_7", -3},
	} {
		check(t, tc.name, tc.id, tc.n)
	}
	ident := rapid.StringMatching(`[A-Za-z0-9_.\-]{0,12}`)
	rapid.Check(t, func(t *rapid.T) {
		name := ident.Draw(t, "name")
		id := ident.Draw(t, "id")
		if rapid.IntRange(0, 5).Draw(t, "weird") == 0 {
			id = rapid.String().Draw(t, "weirdID")
		}
		n := rapid.OneOf(rapid.IntRange(0, 2000), rapid.IntRange(0, 2_000_000_000)).Draw(t, "n")
		check(t, name, id, n)
	})
}

// A projection built on the last one (its output as Base, the memo's record
// of it) holds exactly what a projection from scratch holds (fields,
// estimates, stats, horizon), whatever the history, the policy and how they
// change between requests: the history growing, a message before the end
// replaced, the policy or budget switched, the horizon reset, the cache
// cold. It extends Base's array only past Base, so no earlier result ever
// changes.
func TestPropertyIncrementalIsFromScratch(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		full := genHistory(t)
		full, _ = history.Normalize(full)
		approx.Messages(full)
		policies := []Policy{genPolicy(t), genPolicy(t)}
		for i := range policies {
			policies[i].ClearAtLeastTokens = rapid.IntRange(0, 1500).Draw(t, "step")
			policies[i].CacheAware = rapid.Bool().Draw(t, "cacheAware")
		}
		budgets := []Budget{genBudget(t), genBudget(t)}
		memo := NewMemo()
		var base []history.Message
		var held [][]history.Message
		var heldJSON []string
		var hz Horizon
		msgs := []history.Message{}
		last := 0 // messages of the last projection's input
		for n := 0; n <= len(full); n += rapid.IntRange(1, 3).Draw(t, "grow") {
			msgs = append(msgs[:min(len(msgs), n)], full[len(msgs[:min(len(msgs), n)]):n]...)
			unchanged := min(last, len(msgs))
			switch rapid.IntRange(0, 9).Draw(t, "change") {
			case 0: // a message before the end replaced
				if len(msgs) > 1 {
					i := rapid.IntRange(0, len(msgs)-2).Draw(t, "at")
					if msgs[i].Role == history.Tool {
						c := msgs[i].WithContent(history.Text("changed " + filler(rapid.IntRange(0, 300).Draw(t, "new"))))
						approx.Message(&c)
						msgs = append([]history.Message{}, msgs...)
						msgs[i] = c
						unchanged = min(unchanged, i)
					}
				}
			case 1:
				hz = Horizon{}
			}
			last = len(msgs)
			req := Request{
				Policy:    policies[rapid.IntRange(0, 1).Draw(t, "policy")],
				Budget:    budgets[rapid.IntRange(0, 1).Draw(t, "budget")],
				Horizon:   hz,
				CacheCold: rapid.Bool().Draw(t, "cold"),
			}
			want := Project(approx, msgs, req)
			// Any count up to the unchanged messages keeps the caller's word.
			req.Memo, req.Base, req.Unchanged = memo, base, rapid.IntRange(0, unchanged).Draw(t, "unchanged")
			got := Project(approx, msgs, req)
			if encode(t, got.Messages) != encode(t, want.Messages) || got.Stats != want.Stats || got.Horizon != want.Horizon || got.Advanced != want.Advanced {
				t.Fatalf("at %d messages: built on the last projection, the result differs:\n got %+v\nwant %+v", len(msgs), got.Stats, want.Stats)
			}
			for i := range got.Messages {
				g, _ := approx.Cached(&got.Messages[i])
				w, _ := approx.Cached(&want.Messages[i])
				if g != w {
					t.Fatalf("at %d messages: message %d carries estimate %d, want %d", len(msgs), i, g, w)
				}
			}
			if got.Shared > len(base) || got.Shared > len(got.Messages) {
				t.Fatalf("shared %d of a base of %d", got.Shared, len(base))
			}
			for i := range held {
				if encode(t, held[i]) != heldJSON[i] {
					t.Fatalf("at %d messages: the projection returned %d requests ago changed", len(msgs), len(held)-i)
				}
			}
			hz = got.Horizon
			held, heldJSON = append(held, got.Messages), append(heldJSON, encode(t, got.Messages))
			// The next base: this result (as the session does), or,
			// sometimes, none or a copy of an earlier one (a later result
			// may extend an earlier one's array: holding it, the caller
			// may not pass the earlier one itself).
			switch rapid.IntRange(0, 5).Draw(t, "base") {
			case 0:
				base = nil
			case 1:
				base = slices.Clone(held[rapid.IntRange(0, len(held)-1).Draw(t, "earlier")])
			default:
				base = got.Messages
			}
		}
	})
}
