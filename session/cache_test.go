package session_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/clearing"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/session"
)

// clock is an injected clock the test advances.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// cachePolicy makes clearing engage on a small session: a 6,000-token
// trigger, steps of at least 3,000 tokens.
const cachePolicy = `{"toolResultClearing":{"triggerTokens":6000,"clearAtLeastTokens":3000}}`

// playTurns plays msgs like an agent: the messages before each assistant
// message go with prepareRequest, then the assistant message is recorded;
// gap passes on the clock between requests. It returns every prepare result.
func playTurns(t *testing.T, e *env, id string, msgs []history.Message, clk *clock, gap time.Duration) []*session.PrepareResult {
	t.Helper()
	var out []*session.PrepareResult
	var pending []history.Message
	for _, m := range msgs {
		if m.Role != history.Assistant {
			pending = append(pending, m)
			continue
		}
		clk.advance(gap)
		out = append(out, prepare(t, e, session.PrepareParams{SessionID: id, Messages: pending}, nil))
		pending = nil
		if _, err := e.m.RecordResponse(context.Background(), session.RecordParams{SessionID: id, Message: m}); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// afterRestart restarts the daemon, reopens session id and prepares a
// request with no new messages.
func afterRestart(t *testing.T, e *env, id string) *session.PrepareResult {
	t.Helper()
	e.restart("")
	if _, err := e.m.OpenSession(context.Background(), session.OpenParams{SessionID: id}); err != nil {
		t.Fatal(err)
	}
	return prepare(t, e, session.PrepareParams{SessionID: id}, nil)
}

// leading is the number of leading messages two projections share, byte
// for byte.
func leading(t *testing.T, a, b []history.Message) int {
	n := 0
	for n < len(a) && n < len(b) && jsonOf(t, a[n]) == jsonOf(t, b[n]) {
		n++
	}
	return n
}

// With a warm cache the default schedule holds clearing back between steps:
// most requests start with the whole previous request byte for byte, the
// stats say what is held and predict the reuse, and the horizon survives a
// restart: the resumed daemon projects the same bytes, not the seed's.
func TestHorizonHoldsAndSurvivesRestart(t *testing.T) {
	clk := newClock()
	e := newEnv(t, session.Options{Clock: clk.now}, "")
	id := e.open(session.OpenParams{Provider: "offline", Model: "m", ContextWindow: 64000})
	e.setPolicy(id, cachePolicy)
	res := playTurns(t, e, id, turns(26, 2400), clk, time.Second)

	kept, held, advanced := 0, 0, 0
	for i := 1; i < len(res); i++ {
		prev, cur := res[i-1].Messages, res[i].Messages
		r := res[i].Stats.Reuse
		if r == nil {
			t.Fatalf("request %d: no reuse stats", i)
		}
		if leading(t, prev, cur) == len(prev) {
			kept++
			if r.ReusedMessages < len(prev) || r.ReusedTokens == 0 {
				t.Errorf("request %d kept the prefix but predicts %+v", i, r)
			}
		} else {
			advanced++
		}
		if r.HeldTokens > 0 {
			held++
		}
		if r.CacheCold {
			t.Errorf("request %d: cache cold one second after the previous request", i)
		}
	}
	if held == 0 || advanced == 0 || kept < 3*advanced {
		t.Fatalf("%d requests kept the prefix, %d broke it, %d held results back", kept, advanced, held)
	}
	last := res[len(res)-1]
	if last.Stats.Reuse.HeldTokens == 0 {
		// Make the last request one that holds, so that the seed's
		// projection differs from it.
		t.Fatalf("the last request holds nothing: %+v", last.Stats.Reuse)
	}

	// The same request again, after a restart: the same bytes.
	again := func() *session.PrepareResult {
		return prepare(t, e, session.PrepareParams{SessionID: id}, nil)
	}
	before := again()
	after := afterRestart(t, e, id)
	if jsonOf(t, after.Messages) != jsonOf(t, before.Messages) {
		t.Fatal("a restarted daemon projects other bytes")
	}
	if after.Stats.ClearedResults == clearedBySeed(t, e, id) {
		t.Fatal("the resumed projection is the seed's: the horizon was not restored")
	}
}

// clearedBySeed is how many results the seed's clearing clears on the live
// history of id under the session's budget.
func clearedBySeed(t *testing.T, e *env, id string) int {
	t.Helper()
	e.setPolicy(id, `{"toolResultClearing":{"clearAtLeastTokens":0,"cacheAware":false}}`)
	st := e.stats(id)
	e.setPolicy(id, cachePolicy)
	return st.ClearedResults
}

// clear_at_least_tokens = 0 with TTL awareness off is exactly the seed:
// every request's projection is clearing.Clear of the normalized history.
func TestSeedModeIsExactlyTheSeed(t *testing.T) {
	clk := newClock()
	e := newEnv(t, session.Options{Clock: clk.now}, "")
	id := e.open(session.OpenParams{Provider: "offline", Model: "m", ContextWindow: 64000})
	e.setPolicy(id, `{"toolResultClearing":{"triggerTokens":6000,"clearAtLeastTokens":0,"cacheAware":false}}`)
	msgs := turns(26, 2400)
	res := playTurns(t, e, id, msgs, clk, time.Second)
	est := history.NewEstimator(history.Approx)
	pol := clearing.SeedPolicy()
	pol.TriggerTokens = 6000
	n, engaged := 0, 0
	for i, r := range res {
		// The live history the request saw: everything up to its
		// assistant message.
		for n < len(msgs) && (msgs[n].Role != history.Assistant || countAssistants(msgs[:n]) < i) {
			n++
		}
		norm, _ := history.Normalize(msgs[:n])
		want, st := clearing.Clear(est, norm, pol, clearing.Budget{Capacity: 64000, ReservedOutput: 4096, Prefix: r.Stats.PrefixTokens})
		if jsonOf(t, r.Messages) != jsonOf(t, want) {
			t.Fatalf("request %d differs from the seed's projection", i)
		}
		if st.ClearedResults > 0 {
			engaged++
		}
		if r.Stats.Reuse.HeldTokens != 0 {
			t.Errorf("request %d holds %d tokens in seed mode", i, r.Stats.Reuse.HeldTokens)
		}
	}
	if engaged < 5 {
		t.Fatalf("clearing engaged on %d requests only", engaged)
	}
}

func countAssistants(msgs []history.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == history.Assistant {
			n++
		}
	}
	return n
}

// Requests further apart than the route's cache TTL find the cache cold:
// clearing goes down to the floor on each of them (nothing held), and the
// prediction reuses nothing. A [[models]] cache_ttl_seconds keeps the same
// gaps warm.
func TestColdCacheClearsFreely(t *testing.T) {
	for _, tc := range []struct {
		name   string
		config string
		cold   bool
	}{
		{"5-minute TTL", "", true},
		{"1-hour TTL from [[models]]", "[[models]]\nprovider = \"offline\"\nmodel = \"m\"\ncache_ttl_seconds = 3600\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			o := session.Options{Clock: clk.now}
			if tc.config != "" {
				o.UserConfig = writeTemp(t, tc.config)
			}
			e := newEnv(t, o, "")
			id := e.open(session.OpenParams{Provider: "offline", Model: "m", ContextWindow: 64000})
			e.setPolicy(id, cachePolicy)
			res := playTurns(t, e, id, turns(26, 2400), clk, 10*time.Minute)
			held := 0
			for i, r := range res[1:] {
				ru := r.Stats.Reuse
				if ru.CacheCold != tc.cold {
					t.Fatalf("request %d: cacheCold = %v", i+1, ru.CacheCold)
				}
				if tc.cold && (ru.HeldTokens != 0 || ru.ReusedTokens != 0) {
					t.Fatalf("request %d on a cold cache: %+v", i+1, ru)
				}
				if ru.HeldTokens > 0 {
					held++
				}
			}
			if !tc.cold && held == 0 {
				t.Fatal("a warm cache never held clearing back")
			}
			if want := map[bool]int{true: 300, false: 3600}[tc.cold]; res[0].Stats.Reuse.Pricing.TTLSeconds != want {
				t.Errorf("pricing %+v, want TTL %d s", res[0].Stats.Reuse.Pricing, want)
			}
		})
	}
}

// The budget wins over the cache: with a compaction threshold the held
// results would reach, the schedule clears instead of holding, and no
// request goes over the window.
func TestBudgetWinsOverCache(t *testing.T) {
	clk := newClock()
	e := newEnv(t, session.Options{Clock: clk.now}, "")
	id := e.open(session.OpenParams{Provider: "offline", Model: "m", ContextWindow: 24000})
	e.setPolicy(id, `{"toolResultClearing":{"triggerTokens":6000,"clearAtLeastTokens":1000000}}`)
	for i, r := range playTurns(t, e, id, turns(26, 2400), clk, time.Second) {
		st := r.Stats
		if st.ProjectedTokens+st.PrefixTokens > st.Capacity-st.ReservedOutput {
			t.Fatalf("request %d over the budget: %d + %d > %d", i, st.ProjectedTokens, st.PrefixTokens, st.Capacity-st.ReservedOutput)
		}
		if st.CompactionThreshold > 0 && st.Reuse.HeldTokens > 0 && st.ProjectedTokens+st.PrefixTokens >= st.CompactionThreshold {
			t.Fatalf("request %d holds %d tokens at the compaction threshold", i, st.Reuse.HeldTokens)
		}
	}
}

// recordResponse's cache counts are compared with the prediction for the
// request they answer.
func TestReportedCacheCountsComparedWithPrediction(t *testing.T) {
	clk := newClock()
	e := newEnv(t, session.Options{Clock: clk.now}, "")
	id := e.open(session.OpenParams{Provider: "anthropic", Model: "claude-sonnet-4-5", ContextWindow: 64000})
	prepare(t, e, session.PrepareParams{SessionID: id, Messages: turns(2, 2400)[:1]}, nil)
	rec := func(u history.Usage) {
		if _, err := e.m.RecordResponse(context.Background(), session.RecordParams{SessionID: id,
			Message: history.NewText(history.Assistant, "ok"), Usage: &u}); err != nil {
			t.Fatal(err)
		}
	}
	rec(history.Usage{InputTokens: 10, CacheCreationTokens: 900})
	clk.advance(time.Second)
	pr := prepare(t, e, session.PrepareParams{SessionID: id, Messages: []history.Message{history.NewText(history.User, "next")}}, nil)
	predicted := pr.Stats.Reuse.ReusedTokens
	if predicted == 0 {
		t.Fatalf("nothing predicted: %+v", pr.Stats.Reuse)
	}
	rec(history.Usage{InputTokens: 5, CacheReadTokens: predicted + 7, CacheCreationTokens: 3})
	st := e.stats(id)
	got := st.Reuse.LastResponse
	if got == nil || got.PredictedReadTokens != predicted || got.CacheReadTokens != predicted+7 || got.CacheWriteTokens != 3 || got.Difference != 7 {
		t.Fatalf("lastResponse = %+v (predicted %d)", got, predicted)
	}
	// Anthropic pricing on an Anthropic route.
	if p := st.Reuse.Pricing; p.Read != 0.1 || p.Write != 1.25 || p.TTLSeconds != 300 {
		t.Errorf("pricing %+v", p)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(jsonOf(t, st)), &raw); err != nil || raw["reuse"] == nil {
		t.Fatalf("stats JSON has no reuse: %v", err)
	}
}

// writeTemp writes a user configuration file and returns its path.
func writeTemp(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "vtcode.toml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A request whose cache has expired and whose pressure is past the soft
// threshold compacts now, before the threshold: the prefix is written again
// anyway. With a warm cache the same request does not compact.
func TestColdCacheCompactsNearThreshold(t *testing.T) {
	for _, tc := range []struct {
		name    string
		gap     time.Duration
		compact bool
	}{
		{"warm", time.Second, false},
		{"cold", 10 * time.Minute, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			e := newEnv(t, session.Options{Clock: clk.now}, "")
			id := e.open(session.OpenParams{Provider: "offline", Model: "m", ContextWindow: 16000})
			e.setPolicy(id, `{"toolResultClearing":{"enabled":false}}`)
			// Grow the history until a request is past the soft threshold
			// but under the threshold.
			msgs := turns(40, 300)
			var st session.Stats
			i := 0
			for ; i < len(msgs); i++ {
				st = prepare(t, e, session.PrepareParams{SessionID: id, Messages: msgs[i : i+1]}, nil).Stats
				used := st.ProjectedTokens + st.PrefixTokens
				if used >= st.CompactionThreshold*9/10 {
					break
				}
			}
			if st.Compactions != 0 || st.ProjectedTokens+st.PrefixTokens >= st.CompactionThreshold {
				t.Fatalf("setup: %+v", st)
			}
			clk.advance(tc.gap)
			res := prepare(t, e, session.PrepareParams{SessionID: id, Messages: []history.Message{history.NewText(history.User, "go on")}}, nil)
			compacted := res.Compaction != nil && res.Compaction.ArtifactID != ""
			if compacted != tc.compact {
				t.Fatalf("compacted = %v after a %v gap (pressure %.2f, report %+v)", compacted, tc.gap, st.Pressure, res.Compaction)
			}
		})
	}
}

// A request's projection is built on the previous one, in place when it only
// grew: every projection handed out stays exactly as it was when returned,
// while later requests, responses and stats run, and each equals what a
// freshly restarted daemon projects for the same history.
func TestProjectionsHandedOutStayIntact(t *testing.T) {
	clk := newClock()
	e := newEnv(t, session.Options{Clock: clk.now}, "")
	id := e.open(session.OpenParams{Provider: "offline", Model: "m", ContextWindow: 64000})
	e.setPolicy(id, cachePolicy)
	var pending []history.Message
	var results []*session.PrepareResult
	var encoded []string
	for _, m := range turns(30, 2400) {
		if m.Role != history.Assistant {
			pending = append(pending, m)
			continue
		}
		clk.advance(time.Second)
		r := prepare(t, e, session.PrepareParams{SessionID: id, Messages: pending}, nil)
		pending = nil
		results, encoded = append(results, r), append(encoded, jsonOf(t, r.Messages))
		if _, err := e.m.RecordResponse(context.Background(), session.RecordParams{SessionID: id, Message: m}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.m.ProjectionStats(context.Background(), id, nil); err != nil {
			t.Fatal(err)
		}
	}
	for i, r := range results {
		if jsonOf(t, r.Messages) != encoded[i] {
			t.Fatalf("request %d: its projection changed after it was returned", i)
		}
	}
	last := prepare(t, e, session.PrepareParams{SessionID: id}, nil)
	if fresh := afterRestart(t, e, id); jsonOf(t, fresh.Messages) != jsonOf(t, last.Messages) {
		t.Fatal("the projection built on the previous request differs from a fresh one")
	}
}

// Through a compaction and a restore (each a new history), a request built
// on the previous projections projects what a freshly restarted daemon
// projects for the same history.
func TestIncrementalProjectionAcrossNewHistories(t *testing.T) {
	clk := newClock()
	e := newEnv(t, session.Options{Clock: clk.now}, "")
	id := e.open(session.OpenParams{Provider: "offline", Model: "m", ContextWindow: 24000})
	e.setPolicy(id, cachePolicy)
	ctx := context.Background()
	fresh := func(when string, got *session.PrepareResult) {
		t.Helper()
		if again := afterRestart(t, e, id); jsonOf(t, again.Messages) != jsonOf(t, got.Messages) {
			t.Fatalf("%s: the running daemon projects other bytes than a restarted one", when)
		}
	}
	all := turns(36, 2400)
	third := len(all) / 3
	playTurns(t, e, id, all[:third], clk, time.Second)
	c, err := e.m.Compact(ctx, session.CompactParams{SessionID: id, Strategy: "local"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.ArtifactID == "" {
		t.Fatalf("nothing compacted: %+v", c)
	}
	res := playTurns(t, e, id, all[third:2*third], clk, time.Second)
	fresh("after a compaction", prepare(t, e, session.PrepareParams{SessionID: id}, nil))
	if len(res) == 0 {
		t.Fatal("no requests after the compaction")
	}
	if _, err := e.m.Restore(ctx, session.RestoreParams{SessionID: id, ArtifactID: c.ArtifactID}); err != nil {
		t.Fatal(err)
	}
	playTurns(t, e, id, all[2*third:], clk, time.Second)
	fresh("after a restore", prepare(t, e, session.PrepareParams{SessionID: id}, nil))
}

// The interval between warm steps (clearing.StepInterval) is part of the
// persisted horizon: a daemon restarted just after a step waits for the
// same requests before the next one, and every request it prepares is
// byte for byte the one the running daemon prepared.
func TestStepIntervalSurvivesRestart(t *testing.T) {
	msgs := turns(30, 16000)
	play := func(restartAfter int) []*session.PrepareResult {
		clk := newClock()
		e := newEnv(t, session.Options{Clock: clk.now}, "")
		id := e.open(session.OpenParams{Provider: "offline", Model: "m", ContextWindow: 200000})
		// Small steps: the interval, not the step size, spaces them.
		e.setPolicy(id, `{"toolResultClearing":{"triggerTokens":6000,"clearAtLeastTokens":200}}`)
		if restartAfter < 0 {
			return playTurns(t, e, id, msgs, clk, time.Second)
		}
		// Cut after the answer of request restartAfter.
		cut, answered := 0, 0
		for cut < len(msgs) && answered <= restartAfter {
			if msgs[cut].Role == history.Assistant {
				answered++
			}
			cut++
		}
		res := playTurns(t, e, id, msgs[:cut], clk, time.Second)
		e.restart("")
		if _, err := e.m.OpenSession(context.Background(), session.OpenParams{SessionID: id}); err != nil {
			t.Fatal(err)
		}
		return append(res, playTurns(t, e, id, msgs[cut:], clk, time.Second)...)
	}
	running := play(-1)
	var breaks []int
	for i := 1; i < len(running); i++ {
		if prev := running[i-1].Messages; leading(t, prev, running[i].Messages) < len(prev) {
			breaks = append(breaks, i)
		}
	}
	for k := 1; k < len(breaks); k++ {
		if breaks[k]-breaks[k-1] < clearing.StepInterval {
			t.Errorf("breaks at requests %d and %d: want at least %d apart", breaks[k-1], breaks[k], clearing.StepInterval)
		}
	}
	if len(breaks) < 3 {
		t.Fatalf("breaks at %v: want at least 3 steps to compare", breaks)
	}
	t.Logf("breaks at %v", breaks)
	resumed := play(breaks[0])
	if len(resumed) != len(running) {
		t.Fatalf("%d requests after a restart, %d without", len(resumed), len(running))
	}
	for i := range running {
		if jsonOf(t, resumed[i].Messages) != jsonOf(t, running[i].Messages) {
			t.Fatalf("request %d after a restart at request %d differs from the running daemon's (steps at %v)", i, breaks[0], breaks)
		}
	}
}
