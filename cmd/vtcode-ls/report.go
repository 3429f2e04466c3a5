package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vtcode/vtcode-ls/daemon"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers/catalog"
	"github.com/vtcode/vtcode-ls/session"
	"github.com/vtcode/vtcode-ls/store"
)

// reportOut is what `vtcode-ls report --json` prints.
type reportOut struct {
	Since    *time.Time              `json:"since,omitempty"`
	Sessions []session.StoredReceipt `json:"sessions"`
	Agents   []agentReceipt          `json:"agents"`
	Total    session.Receipt         `json:"total"`
}

// agentReceipt is the receipt of an agent's sessions, added.
type agentReceipt struct {
	Agent    string          `json:"agent"`
	Sessions int             `json:"sessions"`
	Receipt  session.Receipt `json:"receipt"`
}

// protocolAgent names the sessions an editor drove over JSON-RPC (no proxy
// identified an agent).
const protocolAgent = "editor"

// reportOptions are the flags of vtcode-ls report.
type reportOptions struct {
	asJSON, all        bool
	since, ws, cfgFile string
	from               time.Time // --since, resolved
	dir, user          string    // the workspace folder and the user configuration, resolved
}

func reportMain(args []string, stdout, stderr io.Writer, now func() time.Time, getenv func(string) string) int {
	var o reportOptions
	fs := reportFlags(&o, stderr)
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	if fs.NArg() > 0 {
		return fail(stderr, "report", usageError("unexpected argument %q (see --help)", fs.Arg(0)))
	}
	if err := o.resolve(now()); err != nil {
		return fail(stderr, "report", err)
	}
	roots, err := o.roots(getenv)
	if err != nil {
		return fail(stderr, "report", err)
	}
	out, err := o.collect(roots)
	if err == nil {
		err = o.write(stdout, out)
	}
	if err != nil {
		return fail(stderr, "report", err)
	}
	return 0
}

// reportUsage is the help of vtcode-ls report, before its flags.
const reportUsage = `Usage: vtcode-ls report [--since 7d] [--json] [--workspace DIR | --all] [--config FILE]

Prints what the recorded sessions of a workspace cost, from the usage the
provider reported for every answer: per session and per agent the requests,
the tokens by kind (uncached input, cache reads, cache writes of 5 minutes and
1 hour, output), the cost under the models' list prices, the estimated cost
of the same requests without vtcode-ls (the agent's whole request each time,
its own cache breakpoints, no clearing or compaction), what that saved, and
the compactions with what the summarizer calls each committed cost, and the
summarizer calls no compaction committed (previews never applied, two-pass
notes discarded, failed compactions), billed all the same. A model without a known list price shows
tokens and no cost; [[models]] input_price, cache_read_price,
cache_write_price, cache_write_1h_price and output_price set one.

Flags:
`

// reportFlags is the flag set of vtcode-ls report, filling o.
func reportFlags(o *reportOptions, stderr io.Writer) *flag.FlagSet {
	fs := newFlags("report", reportUsage, stderr)
	fs.BoolVar(&o.asJSON, "json", false, "print the report as JSON")
	fs.StringVar(&o.since, "since", "", "only sessions updated in this period (7d, 24h, 90m) or since this date (2026-11-01)")
	fs.StringVar(&o.ws, "workspace", "", "the workspace whose sessions to report (default: the current folder)")
	fs.BoolVar(&o.all, "all", false, "report every workspace the engine has served (from the user's registry)")
	fs.StringVar(&o.cfgFile, "config", "", "the user configuration file (default: the usual one)")
	return fs
}

// resolve checks the flags and resolves --since, the workspace folder and
// the user configuration.
func (o *reportOptions) resolve(now time.Time) error {
	if o.since != "" {
		t, err := parseSince(o.since, now)
		if err != nil {
			return usageError("--since: %v", err)
		}
		o.from = t
	}
	if o.all && o.ws != "" {
		return usageError("--all and --workspace are exclusive")
	}
	dir := o.ws
	if o.all {
		dir = "."
	}
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(dir); err == nil && !fi.IsDir() {
			err = fmt.Errorf("%s is not a folder", dir)
		}
	}
	if err != nil {
		return usageError("--workspace: %v", err)
	}
	o.dir = dir
	o.user = o.cfgFile
	if o.user == "" {
		o.user = userConfigFile()
	} else if _, err := os.Stat(o.user); err != nil {
		return usageError("--config: %v", err)
	}
	return nil
}

// roots are the workspaces to report: the one folder, or with --all every
// workspace of the user's registry that has sessions, sorted.
func (o *reportOptions) roots(getenv func(string) string) ([]string, error) {
	if !o.all {
		return []string{o.dir}, nil
	}
	reg, err := daemon.RegistryPath(getenv)
	if err != nil {
		return nil, fmt.Errorf("--all: %w", err)
	}
	entries, err := store.ReadWorkspaces(reg)
	if err != nil {
		return nil, fmt.Errorf("--all: %w", err)
	}
	var roots []string
	for _, e := range entries {
		if fi, serr := os.Stat(filepath.Join(e.Root, ".vtcode", "sessions")); serr == nil && fi.IsDir() {
			roots = append(roots, e.Root)
		}
	}
	sort.Strings(roots)
	return roots, nil
}

// collect reads the receipts of the sessions of roots and adds them up.
func (o *reportOptions) collect(roots []string) (reportOut, error) {
	mgr := session.NewManager(session.Options{UserConfig: o.user, NoWatch: true})
	defer mgr.Close()
	var sessions []session.StoredReceipt
	for _, root := range roots {
		if err := mgr.AddWorkspace(root, nil); err != nil {
			return reportOut{}, fmt.Errorf("workspace %s: %w", root, err)
		}
		got, err := mgr.Receipts(root, o.from)
		if err != nil {
			return reportOut{}, fmt.Errorf("%s: %w", root, err)
		}
		if o.all {
			for i := range got {
				if got[i].Workspace == "" {
					got[i].Workspace = root
				}
			}
		}
		sessions = append(sessions, got...)
	}
	out := summarize(sessions)
	if !o.from.IsZero() {
		out.Since = &o.from
	}
	return out, nil
}

// write prints the report, as a table or as JSON.
func (o *reportOptions) write(stdout io.Writer, out reportOut) error {
	if !o.asJSON {
		return writeReport(stdout, out)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// summarize adds the sessions' receipts per agent and in total.
func summarize(sessions []session.StoredReceipt) reportOut {
	out := reportOut{Sessions: sessions, Agents: []agentReceipt{}}
	if out.Sessions == nil {
		out.Sessions = []session.StoredReceipt{}
	}
	by := map[string]*agentReceipt{}
	first := true
	for _, s := range sessions {
		name := s.Agent
		if name == "" {
			name = protocolAgent
		}
		a := by[name]
		if a == nil {
			a = &agentReceipt{Agent: name, Receipt: s.Receipt}
			by[name] = a
		} else {
			a.Receipt = a.Receipt.Add(s.Receipt)
		}
		a.Sessions++
		if first {
			out.Total, first = s.Receipt, false
		} else {
			out.Total = out.Total.Add(s.Receipt)
		}
	}
	out.Total.Estimate = true
	for _, a := range by {
		out.Agents = append(out.Agents, *a)
	}
	sort.Slice(out.Agents, func(i, j int) bool { return out.Agents[i].Agent < out.Agents[j].Agent })
	return out
}

// parseSince reads a period before now (7d, 24h, 90m) or a date.
func parseSince(s string, now time.Time) (time.Time, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days < 0 {
			return time.Time{}, fmt.Errorf("%q: want a number of days such as 7d", s)
		}
		return now.AddDate(0, 0, -days), nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("%q: a period cannot be negative", s)
		}
		return now.Add(-d), nil
	}
	if t, err := time.ParseInLocation(time.DateOnly, s, time.Local); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q: want a period (7d, 24h, 90m) or a date (2026-11-01)", s)
}

// writeReport prints the report as tables.
func writeReport(w io.Writer, r reportOut) error {
	if len(r.Sessions) == 0 {
		_, err := fmt.Fprintln(w, "No recorded answers with usage in this workspace.")
		return err
	}
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	header := "\trequests\tinput\tcache read\tcache write\toutput\tpaid\twithout vtcode-ls*\tsaved\tcompactions\t\n"
	row := func(name string, rc session.Receipt) {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n", name, rc.Requests,
			history.FormatCount(rc.Tokens.Input), history.FormatCount(rc.Tokens.CacheRead),
			history.FormatCount(rc.Tokens.CacheWrite5m+rc.Tokens.CacheWrite1h), history.FormatCount(rc.Tokens.Output),
			dollars(rc.PaidUSD), dollars(rc.WithoutUSD), dollars(rc.SavedUSD), len(rc.Compactions))
	}
	fmt.Fprint(tw, "session"+header)
	for _, s := range r.Sessions {
		name := s.SessionID
		if s.Workspace != "" {
			name = filepath.Base(s.Workspace) + "/" + name
		}
		if s.Model != "" {
			name += " (" + s.Model + ")"
		}
		row(name, s.Receipt)
	}
	fmt.Fprint(tw, "\t\t\t\t\t\t\t\t\t\t\n")
	fmt.Fprint(tw, "agent"+header)
	for _, a := range r.Agents {
		row(fmt.Sprintf("%s (%d sessions)", a.Agent, a.Sessions), a.Receipt)
	}
	row("total", r.Total)
	if err := tw.Flush(); err != nil {
		return err
	}
	var notes []string
	for _, s := range r.Sessions {
		for _, c := range s.Receipt.Compactions {
			cost := "no provider call"
			if c.Tokens.Prompt()+c.Tokens.Output > 0 {
				cost = spend(c.Tokens, c.USD)
				if c.Calls > 1 {
					cost = fmt.Sprintf("%d calls, %s", c.Calls, cost)
				}
			}
			notes = append(notes, fmt.Sprintf("  %s: %s compaction (%s) %s -> %s tokens; %s", s.SessionID, c.Trigger, c.Mode,
				history.FormatCount(c.OriginalTokens), history.FormatCount(c.CompactedTokens), cost))
		}
		if u := s.Receipt.Unused; u != nil {
			notes = append(notes, fmt.Sprintf("  %s: unused (previews not applied, pass-1 notes discarded, failed compactions) %d calls; %s",
				s.SessionID, u.Calls, spend(u.Tokens, u.USD)))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "\nCompactions (summarizer calls, all included in paid):")
		fmt.Fprintln(w, strings.Join(notes, "\n"))
	}
	fmt.Fprintln(w, "\n* an estimate: the agent's whole request each time, with its own cache breakpoints, no clearing or compaction.")
	if r.Total.TierRequests > 0 || r.Total.WithoutTierRequests > 0 {
		fmt.Fprintf(w, "  Long-context tier: %d requests paid it; %d would have without vtcode-ls.\n", r.Total.TierRequests, r.Total.WithoutTierRequests)
	}
	if len(r.Total.Unpriced) > 0 {
		fmt.Fprintf(w, "  No list price known for %s: tokens only (set one in [[models]]).\n", strings.Join(r.Total.Unpriced, ", "))
	} else if r.Total.PricesAsOf != "" {
		fmt.Fprintf(w, "  List prices as of %s.\n", r.Total.PricesAsOf)
	}
	return nil
}

// spend is the tokens and cost of summarizer calls.
func spend(b catalog.Bill, usd *float64) string {
	return fmt.Sprintf("%s in, %s out, %s", history.FormatCount(b.Prompt()), history.FormatCount(b.Output), dollars(usd))
}

func dollars(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("$%.4f", *v)
}
