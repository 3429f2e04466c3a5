package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/vtcode/vtcode-ls/clearing"
	"github.com/vtcode/vtcode-ls/corpus"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers/catalog"
	"github.com/vtcode/vtcode-ls/session"
	"github.com/vtcode/vtcode-ls/transcript"
)

// CostRow is one real session played turn by turn through the session
// pipeline at costWindow, on one pricing's route, with the default policy,
// against the same session with clearing and compaction off, and with the
// seed's clearing (clear_at_least_tokens = 0, TTL awareness off).
type CostRow struct {
	Session string `json:"session"`
	Pricing string `json:"pricing"` // the route whose cache pricing applies
	Turns   int    `json:"turns"`
	// SentRatio is the tokens sent over the session ÷ the baseline's.
	SentRatio float64 `json:"sentRatio"`
	// Reuse is the share of the tokens sent read from the cache.
	Reuse     float64 `json:"reuse"`
	BaseReuse float64 `json:"baseReuse"`
	SeedReuse float64 `json:"seedReuse"`
	// CostRatio is the cost-weighted tokens ÷ the baseline's; SeedCostRatio
	// the seed's.
	CostRatio     float64 `json:"costRatio"`
	SeedCostRatio float64 `json:"seedCostRatio"`
	SeedSentRatio float64 `json:"seedSentRatio"`
	// FloorBound is a lower bound of CostRatio for any schedule that keeps
	// the seed's floor: the seed's tokens all at the cache-read price, plus
	// the new content written once.
	FloorBound float64 `json:"floorBound"`
	// BestRatio is the cost ratio of the best schedule of steps in
	// hindsight (oracle.go): what no online schedule of steps beats.
	// Neither it nor FloorBound models compaction: both are 0 for a
	// session whose play compacted.
	BestRatio float64 `json:"bestRatio"`
	// Stable and SeedStable are the shares of the requests after the first
	// that start with the previous request byte for byte (its messages are
	// the leading ones of the next), with the default policy and the seed's.
	Stable     float64 `json:"stable"`
	SeedStable float64 `json:"seedStable"`
	// OverBudget counts requests over the window minus the reserved output.
	OverBudget  int `json:"overBudget"`
	Compactions int `json:"compactions"`
}

// costWindow is the context window of the cost section.
const costWindow = 200_000

// costRoutes are the pricings of the cost section: Anthropic (read 0.1×,
// write 1.25×) and OpenAI at the highest cached-input multiplier of its
// current models (0.25×, no write premium).
var costRoutes = []struct{ name, provider, model string }{
	{"anthropic", "anthropic", "claude-sonnet-4-5"},
	{"openai", "openai", "gpt-4.1"},
}

// policies of the three plays.
const (
	costBaseline = `{"toolResultClearing":{"enabled":false},"autoCompaction":{"enabled":false}}`
	costSeed     = `{"toolResultClearing":{"clearAtLeastTokens":0,"cacheAware":false}}`
)

// corpusSession is one conversation of the corpus, imported.
type corpusSession struct {
	name     string
	Messages []history.Message
}

// corpusSessions imports the sessions of the corpus (corpus.All: the
// committed ones, then the extra corpus's others; the tables sort their
// rows); a file that is no conversation (an aider note) is left out.
func corpusSessions() ([]corpusSession, error) {
	files, err := corpus.All()
	if err != nil {
		return nil, err
	}
	var out []corpusSession
	for _, f := range files {
		tr, err := transcript.Load(f)
		if err != nil {
			continue // not a conversation
		}
		out = append(out, corpusSession{name: filepath.Base(f), Messages: tr.Messages})
	}
	return out, nil
}

// benchCost plays every transcript of the corpus (see corpus.Dir).
func benchCost(ctx context.Context, logf func(string, ...any)) ([]CostRow, error) {
	sessions, err := corpusSessions()
	if err != nil {
		return nil, err
	}
	var rows []CostRow
	for _, tr := range sessions {
		name := tr.name
		for _, rt := range costRoutes {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			logf("cost: %s, %s pricing", name, rt.name)
			row, err := costOf(ctx, name, tr.Messages, rt.provider, rt.model)
			if err != nil {
				return nil, fmt.Errorf("cost of %s: %w", name, err)
			}
			row.Pricing = rt.name
			rows = append(rows, row)
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Session < rows[j].Session })
	return rows, nil
}

// played are the totals of one play.
type played struct {
	turns, compactions, overBudget int
	sent, reused                   int
	cost                           float64
	// stable counts the requests after the first that start with the
	// previous one byte for byte.
	stable int
}

// stableShare is the share of the requests after the first that start
// with the previous one.
func (p played) stableShare() float64 { return fratio(float64(p.stable), float64(p.turns-1)) }

func (p played) reuse() float64 { return fratio(float64(p.reused), float64(p.sent)) }

func costOf(ctx context.Context, name string, msgs []history.Message, provider, model string) (CostRow, error) {
	row := CostRow{Session: name}
	var res [3]played
	for i, pol := range []string{"", costBaseline, costSeed} {
		p, err := playCost(ctx, msgs, provider, model, pol)
		if err != nil {
			return row, err
		}
		res[i] = p
	}
	cur, base, seed := res[0], res[1], res[2]
	cc := (*catalog.Catalog)(nil).Cost(provider, model)
	row.Turns, row.OverBudget, row.Compactions = cur.turns, cur.overBudget, cur.compactions
	row.SentRatio = fratio(float64(cur.sent), float64(base.sent))
	row.Reuse, row.BaseReuse, row.SeedReuse = cur.reuse(), base.reuse(), seed.reuse()
	row.CostRatio = fratio(cur.cost, base.cost)
	row.SeedCostRatio = fratio(seed.cost, base.cost)
	row.SeedSentRatio = fratio(float64(seed.sent), float64(base.sent))
	row.Stable, row.SeedStable = cur.stableShare(), seed.stableShare()
	// Any schedule sends at least the seed's tokens, each at least at the
	// read price, and writes the new content (what the baseline cannot
	// reuse) once.
	if cur.compactions > 0 || seed.compactions > 0 {
		return row, nil // the bounds know clearing only
	}
	row.FloorBound = fratio(float64(seed.sent)*cc.Read+float64(base.sent-base.reused)*(cc.Write-cc.Read), base.cost)
	row.BestRatio = bestStepped(msgs, cc, costWindow)
	return row, nil
}

// playCost plays msgs turn by turn on a fresh session of the route with the
// policy patch (empty: the defaults), compactions by the offline summarizer.
func playCost(ctx context.Context, msgs []history.Message, provider, model, policy string) (played, error) {
	return playWith(ctx, msgs, provider, model, policy, costWindow, nil)
}

// playWith is playCost at a window, calling each (when not nil) with the
// result of every prepared request and the answer that followed it (nil
// for a last request without one).
func playWith(ctx context.Context, msgs []history.Message, provider, model, policy string, window int,
	each func(pr *session.PrepareResult, resp *history.Message)) (played, error) {
	var out played
	dir, err := os.MkdirTemp("", "vtcode-bench-cost-*")
	if err != nil {
		return out, err
	}
	defer os.RemoveAll(dir)
	cfg := filepath.Join(dir, "user.toml")
	if err := os.WriteFile(cfg, []byte("[compaction]\nsummarizer = { provider = \"offline\" }\n"), 0o600); err != nil {
		return out, err
	}
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o700); err != nil {
		return out, err
	}
	m := session.NewManager(session.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), UserConfig: cfg, NoWatch: true, Clients: offlineClients})
	defer m.Close()
	if err := m.AddWorkspace(ws, nil); err != nil {
		return out, err
	}
	op, err := m.OpenSession(ctx, session.OpenParams{Workspace: ws, Provider: provider, Model: model, ContextWindow: window})
	if err != nil {
		return out, err
	}
	id := op.SessionID
	if policy != "" {
		if _, err := m.SetPolicy(ctx, session.SetPolicyParams{SessionID: id, Policy: json.RawMessage(policy)}); err != nil {
			return out, err
		}
	}
	var pending, prev []history.Message
	step := func(resp *history.Message) error {
		pr, err := m.PrepareRequest(ctx, session.PrepareParams{SessionID: id, Messages: pending}, nil)
		if err != nil {
			return err
		}
		pending = nil
		out.turns++
		if c := pr.Compaction; c != nil && c.ArtifactID != "" {
			out.compactions++
		}
		if prev != nil && len(pr.Messages) >= len(prev) && leadingSame(prev, pr.Messages) {
			out.stable++
		}
		prev = pr.Messages
		st := pr.Stats
		if st.Capacity > 0 && st.ProjectedTokens+st.PrefixTokens > st.Capacity-st.ReservedOutput {
			out.overBudget++
		}
		if ru := st.Reuse; ru != nil {
			out.sent += ru.RequestTokens
			out.reused += ru.ReusedTokens
			out.cost += ru.CostUnits
		}
		if each != nil {
			each(pr, resp)
		}
		if resp != nil {
			_, err = m.RecordResponse(ctx, session.RecordParams{SessionID: id, Message: *resp})
		}
		return err
	}
	for i := range msgs {
		if msgs[i].Role != history.Assistant {
			pending = append(pending, msgs[i])
			continue
		}
		if err := step(&msgs[i]); err != nil {
			return out, err
		}
	}
	if len(pending) > 0 {
		if err := step(nil); err != nil {
			return out, err
		}
	}
	return out, nil
}

// leadingSame reports whether prev is the leading part of msgs, message
// for message.
func leadingSame(prev, msgs []history.Message) bool {
	for i := range prev {
		if !history.Same(&prev[i], &msgs[i]) {
			return false
		}
	}
	return true
}

// costTargets are the prompt-cache cost targets on every session longer than 50
// turns.
func costTargets(rows []CostRow) []Target {
	var ts []Target
	for _, r := range rows {
		if r.Turns <= 50 {
			continue
		}
		add := func(name, want string, got float64, pass bool) {
			unit := "x"
			if !strings.HasSuffix(want, "×") {
				unit = ""
			}
			ts = append(ts, Target{Name: name, Want: want, Got: got, Unit: unit, Pass: pass, Measured: r.Session})
		}
		switch r.Pricing {
		case "anthropic":
			add("cost, Anthropic pricing / no clearing", "≤ 0.60×", r.CostRatio, r.CostRatio <= 0.6)
			add("tokens sent / no clearing", "≤ 0.70×", r.SentRatio, r.SentRatio <= 0.7)
			add("cache reuse", "≥ 0.95", r.Reuse, r.Reuse >= 0.95)
			add("requests over budget", "0", float64(r.OverBudget), r.OverBudget == 0)
		case "openai":
			add("cost, OpenAI pricing / no clearing", "≤ 0.70×", r.CostRatio, r.CostRatio <= 0.7)
		}
	}
	return ts
}

// writeCostTable prints the cost section.
func writeCostTable(w io.Writer, rows []CostRow) error {
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintf(w, "6. Prompt-cache cost: real sessions played turn by turn at a %s window (default policy), vs the same\n", formatInt(costWindow))
	fmt.Fprintf(w, "   session with clearing and compaction off; seed = clear_at_least_tokens 0, TTL awareness off; floor = the\n")
	fmt.Fprintf(w, "   seed's tokens all at the cache-read price plus the new content written once: a lower bound for any\n")
	fmt.Fprintf(w, "   schedule that keeps the protected floor; best = the best schedule of steps in hindsight (knowing the whole\n")
	fmt.Fprintf(w, "   session, it picks the turns that clear everything above the floor): what no online schedule of steps beats;\n")
	fmt.Fprintf(w, "   neither bound models compaction (n/a where a play compacted); the plays compact with the offline summarizer;\n")
	fmt.Fprintf(w, "   stable = share of the requests that start with the previous request byte for byte (at most one break per %d\n", clearing.StepInterval)
	fmt.Fprintf(w, "   requests by the schedule's own rule, besides cold caches, the budget and the session's own breaks)\n")
	t := newTable(w)
	t.row("session", "pricing", "turns", "sent", "reuse (none, seed)", "stable (seed)", "cost", "seed cost", "best", "floor", "over budget", "compactions")
	for _, r := range rows {
		t.row(r.Session, r.Pricing, fmt.Sprint(r.Turns), fmtRatio(r.SentRatio),
			fmt.Sprintf("%.3f (%.3f, %.3f)", r.Reuse, r.BaseReuse, r.SeedReuse),
			fmt.Sprintf("%.2f (%.2f)", r.Stable, r.SeedStable),
			fmtRatio(r.CostRatio), fmtRatio(r.SeedCostRatio), bound(r, r.BestRatio), bound(r, r.FloorBound), fmt.Sprint(r.OverBudget), fmt.Sprint(r.Compactions))
	}
	if err := t.flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return nil
}

// bound formats a bound of row r: n/a where a play compacted.
func bound(r CostRow, v float64) string {
	if v == 0 {
		return "n/a"
	}
	return fmtRatio(v)
}

// fratio is a/b, NaN when b is 0.
func fratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}
