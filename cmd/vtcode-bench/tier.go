package main

import (
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers/catalog"
	"github.com/vtcode/vtcode-ls/session"
)

// TierRow is one real session played turn by turn at a 1M-token window on
// a model whose price doubles above 200k prompt tokens (Claude Sonnet 4.5
// with the 1M window: input and cache 2×, output 1.5× over the tier), under
// Anthropic list prices, three ways: sending everything (clearing and
// compaction off), the default policy (stay_below_price_tier on) and the
// default policy with stay_below_price_tier off. Each request is billed on
// its own: the prefix the pipeline predicts reused at the cache-read price,
// the rest written at the 5-minute write price, the answer as output, and
// the tier's multipliers on every token of a request over 200k. A
// compaction (made offline here) is billed as one summarizer call on the
// same model: the history it compacts as uncached input, the summary as
// output.
type TierRow struct {
	Session string `json:"session"`
	Turns   int    `json:"turns"`
	// USD are the costs of the three plays; the ratios divide by sending
	// everything.
	EverythingUSD float64 `json:"everythingUsd"`
	StayUSD       float64 `json:"stayUsd"`
	NoStayUSD     float64 `json:"noStayUsd"`
	StayRatio     float64 `json:"stayRatio"`
	NoStayRatio   float64 `json:"noStayRatio"`
	// InTier count the requests over the tier in each play.
	EverythingInTier int `json:"everythingInTier"`
	StayInTier       int `json:"stayInTier"`
	NoStayInTier     int `json:"noStayInTier"`
	// Compactions of the stay and no-stay plays.
	StayCompactions   int `json:"stayCompactions"`
	NoStayCompactions int `json:"noStayCompactions"`
	// MaxRequest is the largest request of sending everything, in tokens.
	MaxRequest int `json:"maxRequest"`
}

const (
	tierWindow = 1_000_000
	tierModel  = "claude-sonnet-4-5" // the catalog's 200k tier
)

// tierPlay is the bill of one play.
type tierPlay struct {
	usd                 float64
	inTier, compactions int
	maxRequest, turns   int
}

// playTier plays msgs with the policy patch and bills every request.
func playTier(ctx context.Context, msgs []history.Message, policy string, price catalog.Price) (tierPlay, error) {
	var tp tierPlay
	est := history.NewEstimator(history.Approx)
	p, err := playWith(ctx, msgs, "anthropic", tierModel, policy, tierWindow, func(pr *session.PrepareResult, resp *history.Message) {
		st := pr.Stats
		var b catalog.Bill
		if ru := st.Reuse; ru != nil {
			b.CacheRead, b.CacheWrite5m = ru.ReusedTokens, ru.RequestTokens-ru.ReusedTokens
		} else {
			b.CacheWrite5m = st.ProjectedTokens + st.PrefixTokens
		}
		if resp != nil {
			b.Output = est.Message(resp)
		}
		if price.InTier(b.Prompt()) {
			tp.inTier++
		}
		tp.maxRequest = max(tp.maxRequest, b.Prompt())
		tp.usd += price.Cost(b)
		if c := pr.Compaction; c != nil && c.ArtifactID != "" {
			tp.usd += price.Cost(catalog.Bill{Input: c.OriginalTokens, Output: c.CompactedTokens})
		}
	})
	tp.turns, tp.compactions = p.turns, p.compactions
	return tp, err
}

// benchTier plays every real session of the corpus three ways.
func benchTier(ctx context.Context, logf func(string, ...any)) ([]TierRow, error) {
	mi, _ := catalog.LookupModel("anthropic", tierModel)
	price := mi.Price
	if price.TierTokens == 0 {
		return nil, fmt.Errorf("tier: the catalog has no long-context tier for %s", tierModel)
	}
	sessions, err := corpusSessions()
	if err != nil {
		return nil, err
	}
	var rows []TierRow
	for _, tr := range sessions {
		name := tr.name
		logf("tier: %s", name)
		var plays [3]tierPlay
		for i, pol := range []string{costBaseline, "", `{"context":{"stayBelowPriceTier":false}}`} {
			if plays[i], err = playTier(ctx, tr.Messages, pol, price); err != nil {
				return nil, fmt.Errorf("tier of %s: %w", name, err)
			}
		}
		all, stay, noStay := plays[0], plays[1], plays[2]
		rows = append(rows, TierRow{Session: name, Turns: all.turns,
			EverythingUSD: catalog.RoundUSD(all.usd), StayUSD: catalog.RoundUSD(stay.usd), NoStayUSD: catalog.RoundUSD(noStay.usd),
			StayRatio: fratio(stay.usd, all.usd), NoStayRatio: fratio(noStay.usd, all.usd),
			EverythingInTier: all.inTier, StayInTier: stay.inTier, NoStayInTier: noStay.inTier,
			StayCompactions: stay.compactions, NoStayCompactions: noStay.compactions, MaxRequest: all.maxRequest})
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Session < rows[j].Session })
	return rows, nil
}

// writeTierTable prints the tier section.
func writeTierTable(w io.Writer, rows []TierRow) error {
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintf(w, "6c. Price tier: real sessions at a %s window on %s (2× input, 1.5× output over 200k prompt tokens),\n",
		formatInt(tierWindow), tierModel)
	fmt.Fprintf(w, "   Anthropic list prices (%s); cost with and without stay_below_price_tier ÷ sending everything;\n", pricesDate())
	fmt.Fprintf(w, "   in tier = requests over 200k; compactions billed as one summarizer call on the same model\n")
	t := newTable(w)
	t.row("session", "turns", "largest", "everything", "stay below", "tier on", "in tier (all, stay, tier on)", "compactions (stay, tier on)")
	for _, r := range rows {
		t.row(r.Session, fmt.Sprint(r.Turns), formatInt(int64(r.MaxRequest)), fmt.Sprintf("$%.2f", r.EverythingUSD),
			fmt.Sprintf("$%.2f %s", r.StayUSD, fmtRatio(r.StayRatio)), fmt.Sprintf("$%.2f %s", r.NoStayUSD, fmtRatio(r.NoStayRatio)),
			fmt.Sprintf("%d, %d, %d", r.EverythingInTier, r.StayInTier, r.NoStayInTier),
			fmt.Sprintf("%d, %d", r.StayCompactions, r.NoStayCompactions))
	}
	if err := t.flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return nil
}

func pricesDate() string {
	mi, _ := catalog.LookupModel("anthropic", tierModel)
	return "as of " + mi.Price.AsOf
}
