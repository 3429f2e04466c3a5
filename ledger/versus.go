package ledger

import (
	"context"
	"fmt"
	"strings"

	"github.com/vtcode/vtcode-ls/evidence"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/transcript"
)

// Versus compares, on a session whose record holds the agent's own
// compaction, the agent's summary with the offline summary of the same
// prefix: the messages before the agent's first compaction, compacted the
// way [Measure] compacts a whole session. Only the session's facts that
// occur in the prefix count.
type Versus struct {
	Name string `json:"name"`
	// PrefixMessages and PrefixTokens are the size of the prefix the agent
	// summarized.
	PrefixMessages int `json:"prefixMessages"`
	PrefixTokens   int `json:"prefixTokens"`
	// Facts are the session's facts that occur in the prefix; InAgent and
	// InOffline say which of them the agent's and the offline summary keep.
	Facts     []string `json:"facts"`
	InAgent   []bool   `json:"inAgent"`
	InOffline []bool   `json:"inOffline"`
	// AgentTokens and OfflineTokens are the sizes of the two summaries
	// (o200k estimate).
	AgentTokens   int `json:"agentTokens"`
	OfflineTokens int `json:"offlineTokens"`
	// Contradictions are the claims of the offline summary that the
	// prefix's record contradicts ([Contradictions] reads the offline
	// summary's form; the agent's prose is not held to it).
	Contradictions []string `json:"contradictions"`
	AgentSummary   string   `json:"agentSummary"`
	OfflineSummary string   `json:"offlineSummary"`
	// Error is set when the prefix could not be compacted.
	Error string `json:"error,omitempty"`
}

// Kept returns the number of facts the agent's and the offline summary keep.
func (v *Versus) Kept() (agent, off int) { return kept(v.InAgent), kept(v.InOffline) }

// firstCompaction returns the agent's first compaction whose prefix holds
// some of the conversation (a record that starts with the summary of an
// earlier session holds no prefix for it).
func firstCompaction(tr *transcript.Transcript) (transcript.AgentCompaction, bool) {
	for _, c := range tr.AgentCompactions() {
		for i := range tr.Messages[:c.At] {
			if r := tr.Messages[i].Role; r == history.User || r == history.Assistant {
				return c, true
			}
		}
	}
	return transcript.AgentCompaction{}, false
}

// CompareAgent compacts the prefix of tr before the agent's first compaction
// offline and scores both summaries on the facts that occur in the prefix.
// ok is false when the record holds no compaction of the agent's. It fails
// only with ctx's error; a compaction failure is recorded in Error.
func CompareAgent(ctx context.Context, name string, facts []string, tr *transcript.Transcript) (v *Versus, ok bool, err error) {
	c, ok := firstCompaction(tr)
	if !ok {
		return nil, false, nil
	}
	prefix := tr.Messages[:c.At]
	var record strings.Builder
	for i := range prefix {
		record.WriteString(Texts(&prefix[i]))
		record.WriteByte('\n')
	}
	var agent strings.Builder
	for i := range c.Summary {
		if i > 0 {
			agent.WriteString("\n\n")
		}
		agent.WriteString(Texts(&c.Summary[i]))
	}
	est := history.NewEstimator(history.O200k)
	v = &Versus{Name: name, PrefixMessages: len(prefix), PrefixTokens: est.Messages(prefix),
		AgentSummary: agent.String(), AgentTokens: est.Text(agent.String())}
	for _, f := range facts {
		if strings.Contains(record.String(), f) {
			v.Facts = append(v.Facts, f)
		}
	}
	v.InAgent, v.InOffline = make([]bool, len(v.Facts)), make([]bool, len(v.Facts))
	for i, f := range v.Facts {
		v.InAgent[i] = strings.Contains(v.AgentSummary, f)
	}
	res, err := compactOffline(ctx, prefix)
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		v.Error = err.Error()
		return v, true, nil
	}
	v.OfflineSummary, v.OfflineTokens = res.Summary, est.Text(res.Summary)
	for i, f := range v.Facts {
		v.InOffline[i] = strings.Contains(res.Summary, f)
	}
	rec, err := evidence.Extract(ctx, prefix)
	if err != nil {
		return nil, false, err
	}
	v.Contradictions = Contradictions(res.Summary, rec)
	return v, true, nil
}

// VersusTotals returns, over every compared session, the facts, those the
// agent's and the offline summary keep, and the sizes of both summaries.
func (r *Report) VersusTotals() (facts, agent, off, agentTokens, offTokens int) {
	for i := range r.Versus {
		v := &r.Versus[i]
		a, o := v.Kept()
		facts += len(v.Facts)
		agent += a
		off += o
		agentTokens += v.AgentTokens
		offTokens += v.OfflineTokens
	}
	return
}

// writeVersus prints the second table of the ledger: the offline summary
// against the agent's own summary of the same prefix.
func writeVersus(b *strings.Builder, r *Report) {
	if len(r.Versus) == 0 {
		return
	}
	fmt.Fprintf(b, "\nvs the agent's own summary: the prefix before the agent's first compaction, compacted offline; facts that occur in the prefix\n\n")
	fmt.Fprintf(b, "%-46s %24s %6s %7s %8s %8s %16s\n", "session", "prefix", "facts", "agent", "offline", "contra", "summary tokens")
	for i := range r.Versus {
		v := &r.Versus[i]
		a, o := v.Kept()
		prefix := fmt.Sprintf("%d msgs, %s tok", v.PrefixMessages, history.FormatCount(v.PrefixTokens))
		off, contra, tokens := frac(o, len(v.Facts)), fmt.Sprint(len(v.Contradictions)), history.FormatCount(v.AgentTokens)+" / "+history.FormatCount(v.OfflineTokens)
		if v.Error != "" {
			off, tokens = "error", history.FormatCount(v.AgentTokens)+" / error"
		}
		fmt.Fprintf(b, "%-46s %24s %6d %7s %8s %8s %16s\n", v.Name, prefix, len(v.Facts), frac(a, len(v.Facts)), off, contra, tokens)
	}
	facts, a, o, at, ot := r.VersusTotals()
	contra := 0
	for i := range r.Versus {
		contra += len(r.Versus[i].Contradictions)
	}
	fmt.Fprintf(b, "%-46s %24s %6d %7s %8s %8s %16s\n", "total", "", facts, frac(a, facts), frac(o, facts), fmt.Sprint(contra), history.FormatCount(at)+" / "+history.FormatCount(ot))
	fmt.Fprintf(b, "(agent, offline: the facts each summary keeps; contra: claims of the offline summary the prefix's record contradicts; summary tokens: agent / offline)\n")
	for i := range r.Versus {
		v := &r.Versus[i]
		var agentOnly, offOnly []string
		for j, f := range v.Facts {
			switch {
			case v.InAgent[j] && !v.InOffline[j]:
				agentOnly = append(agentOnly, fmt.Sprintf("%q", f))
			case v.InOffline[j] && !v.InAgent[j]:
				offOnly = append(offOnly, fmt.Sprintf("%q", f))
			}
		}
		if len(agentOnly) == 0 && len(offOnly) == 0 && v.Error == "" && len(v.Contradictions) == 0 {
			continue
		}
		fmt.Fprintf(b, "\n%s (vs the agent's own summary):\n", v.Name)
		if v.Error != "" {
			fmt.Fprintf(b, "  error: %s\n", v.Error)
		}
		if len(agentOnly) > 0 {
			fmt.Fprintf(b, "  kept by the agent's summary only: %s\n", strings.Join(agentOnly, ", "))
		}
		if len(offOnly) > 0 {
			fmt.Fprintf(b, "  kept by the offline summary only: %s\n", strings.Join(offOnly, ", "))
		}
		for _, c := range v.Contradictions {
			fmt.Fprintf(b, "  offline summary, contradiction: %s\n", c)
		}
	}
}
