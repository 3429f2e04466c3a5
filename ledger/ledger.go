// Package ledger is the fact ledger of compaction (docs/design.md §15): it compacts
// recorded sessions through the real path (transcript import, then
// compaction.Compact with the offline summarizer at a fixed window) and
// counts, per session, the facts of a facts.json kept in the summary and in
// the whole compacted history, the work-in-progress facts (uncommitted paths,
// the active plan item, stale checks) kept in the summary, and the claims of
// the summary that the record contradicts (see [Contradictions]). A second
// table sets the offline summary against the agent's own summary of the same
// prefix, for every session whose record holds one (see [CompareAgent]).
// `vtcode-ls eval` and `make bench` print both tables; a test holds the
// totals of the first to the targets.
package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/vtcode/vtcode-ls/compaction"
	"github.com/vtcode/vtcode-ls/evidence"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/summary"
	"github.com/vtcode/vtcode-ls/transcript"
)

// Window is the context window the ledger compacts at.
const Window = 32_000

// Targets of the fact ledger: the share of facts a compaction keeps.
const (
	TargetHistory = 0.95 // share of facts in the compacted history
	TargetSummary = 0.85 // share of facts in the summary itself
	// TargetWIP is the share of work-in-progress facts in the summary
	// (issue 20).
	TargetWIP = 0.85
)

// Facts is one session's entry of a facts file. In the file it is either a
// list of strings (facts) or an object {"facts": [...], "wip": [...]}; the
// "wip" strings are the work in progress where the record ends (uncommitted
// paths, the active plan item's text, stale check commands). Every string
// must occur literally in the record.
type Facts struct {
	Facts []string `json:"facts"`
	WIP   []string `json:"wip"`
}

// UnmarshalJSON reads either form of an entry.
func (f *Facts) UnmarshalJSON(data []byte) error {
	var list []string
	if err := json.Unmarshal(data, &list); err == nil {
		*f = Facts{Facts: list}
		return nil
	}
	var obj struct {
		Facts *[]string `json:"facts"`
		WIP   *[]string `json:"wip"`
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&obj); err != nil {
		return errors.New(`want a list of strings or {"facts": [...], "wip": [...]}`)
	}
	*f = Facts{}
	if obj.Facts != nil {
		f.Facts = *obj.Facts
	}
	if obj.WIP != nil {
		f.WIP = *obj.WIP
	}
	return nil
}

// ReadFacts reads a facts file: session file name to its facts.
func ReadFacts(path string) (map[string]Facts, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read facts: %w", err)
	}
	var facts map[string]Facts
	if err := json.Unmarshal(data, &facts); err != nil {
		return nil, fmt.Errorf("read facts: %s: %w", path, err)
	}
	for n, f := range facts {
		for _, s := range append(append([]string(nil), f.Facts...), f.WIP...) {
			if strings.TrimSpace(s) == "" {
				return nil, fmt.Errorf("read facts: %s: %s: an empty fact", path, n)
			}
		}
	}
	return facts, nil
}

// mergeFacts adds the facts of more to base, each string once; a session
// that base does not list is not added (more annotates base's sessions).
func mergeFacts(base, more map[string]Facts) {
	for n, f := range more {
		b, ok := base[n]
		if !ok {
			continue
		}
		for _, s := range f.Facts {
			if !slices.Contains(b.Facts, s) {
				b.Facts = append(b.Facts, s)
			}
		}
		for _, s := range f.WIP {
			if !slices.Contains(b.WIP, s) {
				b.WIP = append(b.WIP, s)
			}
		}
		base[n] = b
	}
}

// Options of the compaction the ledger runs, as a session with the default
// policy would (4,096 tokens reserved for output, a 3,000-token prefix).
const (
	reservedOutput = 4096
	prefixTokens   = 3000
)

// Session is the ledger of one session.
type Session struct {
	Name      string   `json:"name"`
	Facts     []string `json:"facts"`
	InSummary []bool   `json:"inSummary"`
	InHistory []bool   `json:"inHistory"`
	// WIP are the work-in-progress facts, WIPInSummary which of them the
	// summary keeps.
	WIP          []string `json:"wip,omitempty"`
	WIPInSummary []bool   `json:"wipInSummary,omitempty"`
	// NotInRecord lists the work-in-progress facts the record does not
	// hold: a mistake of the facts file (a fact may be a command as the
	// summary normalizes it, a work-in-progress fact is the record's text).
	NotInRecord     []string `json:"notInRecord,omitempty"`
	Contradictions  []string `json:"contradictions"`
	OriginalTokens  int      `json:"originalTokens"`
	CompactedTokens int      `json:"compactedTokens"`
	Summary         string   `json:"summary"`
	ElapsedNs       int64    `json:"elapsedNs"`
	// Error is set when the session could not be compacted.
	Error string `json:"error,omitempty"`
}

// Kept returns the number of facts kept in the summary and in the history.
func (s *Session) Kept() (summary, hist int) {
	return kept(s.InSummary), kept(s.InHistory)
}

// WIPKept returns the number of work-in-progress facts kept in the summary.
func (s *Session) WIPKept() int { return kept(s.WIPInSummary) }

// kept counts the facts a column keeps.
func kept(in []bool) int {
	n := 0
	for _, ok := range in {
		if ok {
			n++
		}
	}
	return n
}

// Report is the ledger of every session.
type Report struct {
	Dir      string    `json:"dir"`
	Window   int       `json:"window"`
	Sessions []Session `json:"sessions"`
	// Versus compares the offline summary with the agent's own, for every
	// session whose record holds one (see [CompareAgent]).
	Versus []Versus `json:"versusAgent"`
}

// Totals returns the facts, those kept in the summary and in the history,
// and the contradictions, over every session.
func (r *Report) Totals() (facts, summary, hist, contradictions int) {
	for i := range r.Sessions {
		s := &r.Sessions[i]
		a, b := s.Kept()
		facts += len(s.Facts)
		summary += a
		hist += b
		contradictions += len(s.Contradictions)
	}
	return
}

// WIPTotals returns the work-in-progress facts and those kept in the
// summary, over every session.
func (r *Report) WIPTotals() (wip, summary int) {
	for i := range r.Sessions {
		wip += len(r.Sessions[i].WIP)
		summary += r.Sessions[i].WIPKept()
	}
	return
}

// Pass reports whether the totals meet the targets; the work-in-progress
// target applies when some session has such facts.
func (r *Report) Pass() bool {
	facts, summary, hist, contra := r.Totals()
	if facts == 0 {
		return false
	}
	for i := range r.Sessions {
		if len(r.Sessions[i].NotInRecord) > 0 {
			return false // the facts file is wrong
		}
	}
	wip, wipKept := r.WIPTotals()
	return float64(hist) >= TargetHistory*float64(facts) && float64(summary) >= TargetSummary*float64(facts) && contra == 0 &&
		float64(wipKept) >= TargetWIP*float64(wip)
}

// Run compacts every session listed in dir/facts.json, and the long-turn
// scenario, and returns the ledger. The facts of each more file (see
// [ReadFacts]) are added to those of the sessions dir/facts.json lists.
func Run(ctx context.Context, dir string, more ...string) (*Report, error) {
	facts, err := ReadFacts(filepath.Join(dir, "facts.json"))
	if err != nil {
		return nil, err
	}
	for _, p := range more {
		m, err := ReadFacts(p)
		if err != nil {
			return nil, err
		}
		mergeFacts(facts, m)
	}
	names := make([]string, 0, len(facts))
	for n := range facts {
		names = append(names, n)
	}
	sort.Strings(names)
	rep := &Report{Dir: dir, Window: Window}
	for _, n := range names {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s := Session{Name: n, Facts: facts[n].Facts, WIP: facts[n].WIP}
		tr, err := transcript.Load(filepath.Join(dir, n))
		if err != nil {
			s.Error = err.Error()
			s.InSummary, s.InHistory = make([]bool, len(s.Facts)), make([]bool, len(s.Facts))
			s.WIPInSummary = make([]bool, len(s.WIP))
			rep.Sessions = append(rep.Sessions, s)
			continue
		}
		if err := Measure(ctx, &s, tr.Messages); err != nil {
			return nil, err
		}
		rep.Sessions = append(rep.Sessions, s)
		v, ok, err := CompareAgent(ctx, n, s.Facts, tr)
		if err != nil {
			return nil, err
		}
		if ok {
			rep.Versus = append(rep.Versus, *v)
		}
	}
	lt := Session{Name: LongTurnName, Facts: LongTurnFacts()}
	if err := Measure(ctx, &lt, LongTurn()); err != nil {
		return nil, err
	}
	rep.Sessions = append(rep.Sessions, lt)
	return rep, nil
}

// Measure compacts msgs at [Window] and fills in s. It fails only with ctx's
// error; a compaction failure is recorded in s.Error.
func Measure(ctx context.Context, s *Session, msgs []history.Message) error {
	s.InSummary, s.InHistory = make([]bool, len(s.Facts)), make([]bool, len(s.Facts))
	s.WIPInSummary = make([]bool, len(s.WIP))
	var record strings.Builder
	for i := range msgs {
		record.WriteString(Texts(&msgs[i]))
		record.WriteByte('\n')
	}
	s.NotInRecord = nil
	for _, f := range s.WIP {
		if !strings.Contains(record.String(), f) {
			s.NotInRecord = append(s.NotInRecord, f)
		}
	}
	began := time.Now()
	res, err := compactOffline(ctx, msgs)
	s.ElapsedNs = time.Since(began).Nanoseconds()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.Error = err.Error()
		return nil
	}
	s.OriginalTokens, s.CompactedTokens = res.OriginalTokens, res.CompactedTokens
	s.Summary = res.Summary
	var all strings.Builder
	for i := range res.Messages {
		all.WriteString(Texts(&res.Messages[i]))
		all.WriteByte('\n')
	}
	for i, f := range s.Facts {
		s.InSummary[i] = strings.Contains(res.Summary, f)
		s.InHistory[i] = strings.Contains(all.String(), f)
	}
	for i, f := range s.WIP {
		s.WIPInSummary[i] = strings.Contains(res.Summary, f)
	}
	rec, err := evidence.Extract(ctx, msgs)
	if err != nil {
		return err
	}
	s.Contradictions = Contradictions(res.Summary, rec)
	return nil
}

// compactOffline compacts msgs as the ledger does: the offline summarizer at
// [Window], as a session with the default policy would.
func compactOffline(ctx context.Context, msgs []history.Message) (*compaction.Result, error) {
	return compaction.Compact(ctx, msgs, compaction.Options{
		Trigger:        compaction.TriggerManual,
		Strategy:       "local",
		Capacity:       Window,
		ReservedOutput: reservedOutput,
		Prefix:         prefixTokens,
		Route:          providers.Route{Provider: summary.Name},
		Client:         summary.New(),
	})
}

// Texts returns every string of m a model reads: content, tool call
// arguments and inputs, reasoning.
func Texts(m *history.Message) string {
	var b strings.Builder
	b.WriteString(m.Text())
	for _, tc := range m.ToolCalls {
		b.WriteString("\n" + tc.Name + " " + tc.Arguments + " " + tc.Input)
	}
	if m.Reasoning != "" {
		b.WriteString("\n" + m.Reasoning)
	}
	return b.String()
}

// Write prints the ledger as a table.
func Write(w io.Writer, r *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Fact ledger: offline compaction at a %s-token window (%s)\n\n", history.FormatCount(r.Window), r.Dir)
	fmt.Fprintf(&b, "%-62s %7s %9s %9s %8s %7s %18s\n", "session", "facts", "summary", "history", "contra", "wip", "tokens")
	for i := range r.Sessions {
		s := &r.Sessions[i]
		a, h := s.Kept()
		tokens := history.FormatCount(s.OriginalTokens) + " → " + history.FormatCount(s.CompactedTokens)
		if s.Error != "" {
			tokens = "error"
		}
		wip := "-"
		if len(s.WIP) > 0 {
			wip = frac(s.WIPKept(), len(s.WIP))
		}
		fmt.Fprintf(&b, "%-62s %7d %9s %9s %8d %7s %18s\n", s.Name, len(s.Facts), frac(a, len(s.Facts)), frac(h, len(s.Facts)), len(s.Contradictions), wip, tokens)
	}
	facts, sum, hist, contra := r.Totals()
	wip, wipKept := r.WIPTotals()
	fmt.Fprintf(&b, "%-62s %7d %9s %9s %8d %7s\n", "total", facts, frac(sum, facts), frac(hist, facts), contra, frac(wipKept, wip))
	verdict := "met"
	if !r.Pass() {
		verdict = "missed"
	}
	fmt.Fprintf(&b, "targets: history ≥ %.0f %%, summary ≥ %.0f %%, 0 contradictions, work in progress ≥ %.0f %%: %s (history %s, summary %s, work in progress %s)\n",
		TargetHistory*100, TargetSummary*100, TargetWIP*100, verdict, pct(hist, facts), pct(sum, facts), pct(wipKept, wip))
	for i := range r.Sessions {
		s := &r.Sessions[i]
		var missing []string
		for j, f := range s.Facts {
			if !s.InSummary[j] {
				where := "summary"
				if !s.InHistory[j] {
					where = "history"
				}
				missing = append(missing, fmt.Sprintf("%q (not in %s)", f, where))
			}
		}
		for j, f := range s.WIP {
			if !s.WIPInSummary[j] {
				missing = append(missing, fmt.Sprintf("work in progress %q (not in summary)", f))
			}
		}
		if len(missing) > 0 || len(s.Contradictions) > 0 || len(s.NotInRecord) > 0 || s.Error != "" {
			fmt.Fprintf(&b, "\n%s:\n", s.Name)
		}
		if s.Error != "" {
			fmt.Fprintf(&b, "  error: %s\n", s.Error)
		}
		for _, m := range missing {
			fmt.Fprintf(&b, "  missing %s\n", m)
		}
		for _, c := range s.Contradictions {
			fmt.Fprintf(&b, "  contradiction: %s\n", c)
		}
		for _, f := range s.NotInRecord {
			fmt.Fprintf(&b, "  facts file: %q is not in the record\n", f)
		}
	}
	writeVersus(&b, r)
	_, err := io.WriteString(w, b.String())
	return err
}

func frac(a, n int) string { return fmt.Sprintf("%d/%d", a, n) }

func pct(a, n int) string {
	if n == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f %%", 100*float64(a)/float64(n))
}
