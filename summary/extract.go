package summary

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vtcode/vtcode-ls/evidence"
	"github.com/vtcode/vtcode-ls/history"
)

// Section titles, mirroring the default summary prompt.
const (
	secGoal      = "Goal"
	secRestrict  = "Constraints and user restrictions"
	secDoing     = "What was just being done"
	secLast      = "Last action and result"
	secChecks    = "Checks"
	secPending   = "Pending sessions and approvals"
	secDecisions = "Key decisions"
	secFiles     = "Files read or changed"
	secErrors    = "Errors seen"
	secNext      = "Next steps"
	// secFocus carries a compaction's custom instructions, first.
	secFocus = "Focus requested for this summary"
)

var sectionOrder = []string{secWIP, secGoal, secUser, secRestrict, secDoing, secLast, secChecks, secCommands, secPending, secDecisions, secFiles, secCommits, secErrors, secNext}

// Bounds.
const (
	maxInstructionChars = 600
	sentenceChars       = 240
	goalChars           = 1200
	requestChars        = 220
	commandChars        = 160
	detailChars         = 150
	// maxUserScan bounds how much of one user message is read for the
	// request and its restrictions.
	maxUserScan = 64 << 10
)

// entry is one line of a list section. Lists keep their highest-priority
// entries when they must shrink, and show them in order.
type entry struct {
	text  string
	prio  int
	order int
	// short is the entry's name in a few bytes (a changed file's path, a
	// commit's hash): when its list must leave the entry out, the name
	// stays, on the list's "also" line (see list.pick).
	short string
}

// facts is what the summary is built from.
type facts struct {
	goal         string
	requests     []entry // later typed requests
	typed        []entry // every message the user typed, whole, in order
	restrictions []entry
	doing        []string
	last         []string
	checks       []entry
	commands     []entry // simple commands of chains and scripts
	commits      []entry
	pending      []entry
	decisions    []entry
	files        []entry
	errors       []entry
	next         []entry
	wip          []string               // the work in progress, in its own order
	stopped      string                 // the harness's line saying the user stopped the agent, "" for none
	instructions []evidence.Instruction // project instructions, verbatim
	staleCheck   map[int]bool           // checks (indexes in rec.Checks) the next steps re-run as stale
	rec          *evidence.Record
	root         string          // the folder paths are shown relative to, "" for none
	workDir      string          // the workspace folder the harness reported
	ran          map[string]bool // commands of the record, as shown
	answered     map[string]bool // call ids of the record that have a result
	prior        map[string][]string
	priorFocus   string
	priorGoal    string
	// textCap, when set, bounds each free-text line (goal, what was being
	// done, last action) to that many bytes: a tight output bound shortens
	// prose before it drops the lists of checks, files and errors.
	textCap int
	// userCap bounds the bytes of the user's own messages carried
	// verbatim; 0 until render sets it.
	userCap int
}

var (
	restrictionRE = regexp.MustCompile(`(?i)\b(must|mustn't|never|don't|do not|dont|always|only|avoid|without|should|shouldn't|cannot|can't|make sure|no need (?:to|for)|prefer|keep|not yet|stop)\b`)
	prohibitionRE = regexp.MustCompile(`(?i)\b(mustn't|must not|never|don't|do not|dont|only|avoid|without|shouldn't|cannot|can't|no need (?:to|for)|not yet|stop)\b`)
	// ruleHeadingRE matches the heading of a section of the user's message
	// that lists rules ("## Constraints", "Requirements:"): its items are
	// the restrictions the user wrote down on purpose.
	ruleHeadingRE     = regexp.MustCompile(`(?i)\b(constraints?|restrictions?|rules|requirements|guidelines|conventions|guardrails|limitations|non-goals|do not|don'?ts)\b`)
	markdownHeadingRE = regexp.MustCompile(`^#{1,6}\s`)
	// listItemRE matches a line that is an item of a list.
	listItemRE = regexp.MustCompile(`^\s*(?:[-*+]|\d{1,2}[.)])\s+\S`)
	decisionRE = regexp.MustCompile(`(?i)\b(decided|decision|i'll use|we'll use|i will use|instead|chose|choosing|going with|switch(ed|ing)? to|rather than|because|root cause|the cause|caused by)\b`)
	nextRE     = regexp.MustCompile(`(?i)\b(next|todo|remaining|still need|then i|we need to|needs to be|will now)\b`)
	// codeIdentRE matches a backquoted code identifier: snake_case,
	// camelCase, a call or a qualified name, not a path.
	codeIdentRE = regexp.MustCompile("`([A-Za-z_][A-Za-z0-9_]*(?:[.:]{1,2}[A-Za-z_][A-Za-z0-9_]*)*(?:\\(\\))?)`")
)

func extract(ctx context.Context, msgs []history.Message) (*facts, error) {
	rec, err := evidence.Extract(ctx, msgs)
	if err != nil {
		return nil, err
	}
	f := &facts{prior: map[string][]string{}, rec: rec, staleCheck: map[int]bool{}}
	f.root = workspaceRoot(rec)
	f.workDir = rec.WorkDir
	f.ran, f.answered = map[string]bool{}, map[string]bool{}
	for i, c := range rec.Checks {
		if i%1024 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		f.ran[f.shown(c.Command)] = true
	}
	for _, a := range rec.Actions {
		if a.HasResult() && a.CallID != "" {
			f.answered["call "+a.CallID] = true
			f.answered[a.CallID] = true
		}
	}

	// Earlier summaries, and the user's own messages.
	var typed []int
	for i := range msgs {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		text := msgs[i].Text()
		if (rec.Origins[i] == evidence.OriginSystem || rec.Origins[i] == evidence.OriginSummary || msgs[i].Role == history.User) && isPriorSummary(text) {
			f.mergePrior(text)
			continue
		}
		switch rec.Origins[i] {
		case evidence.OriginTyped:
			typed = append(typed, i)
		case evidence.OriginSummary:
			// Another summarizer's note (the agent's own compaction): what it
			// says of the earlier conversation may be all that is left of it.
			f.requests = append(f.requests, entry{text: "(the agent's own summary of the earlier conversation) " + clip(summaryBody(evidence.HeadBytes(text, maxUserScan)), 600), prio: 1 << 21, order: i})
		}
	}
	for n, i := range typed {
		// The words typed, without the context the harness put first (the
		// file open in the IDE, a reminder).
		text := evidence.WithoutHarnessBlocks(msgs[i].Text())
		text = evidence.HeadBytes(text, maxUserScan)               // a huge paste: its start says what it is
		if t := strings.Join(strings.Fields(text), " "); t != "" { // one line each
			f.typed = append(f.typed, entry{text: t, order: i})
		}
		if n == 0 {
			f.goal = clip(text, goalChars)
		} else {
			prio := n // the latest requests, and the first ones that set the scene
			if n <= 3 {
				prio = 1 << 20
			}
			f.requests = append(f.requests, entry{text: clip(text, requestChars), prio: prio, order: i})
		}
		f.noteRestrictions(text, i)
	}
	// The user's answers to the agent's questions are the user's words too
	// (not read for restrictions: they quote the agent's questions).
	for _, a := range rec.Answers {
		f.typed = append(f.typed, entry{text: strings.Join(strings.Fields(a.Text), " "), order: a.Index})
	}
	sort.SliceStable(f.typed, func(a, b int) bool { return f.typed[a].order < f.typed[b].order })
	if f.priorGoal != "" {
		if f.goal != "" {
			f.requests = append([]entry{{text: clip(f.goal, requestChars), prio: 1 << 20, order: typed[0]}}, f.requests...)
		}
		f.goal = f.priorGoal
	}
	lastTyped := -1
	if len(typed) > 0 {
		lastTyped = typed[len(typed)-1]
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := f.noteChecks(ctx, rec); err != nil {
		return nil, err
	}
	f.noteFiles(rec)
	f.noteCommits(rec)
	f.noteCommands(rec)
	f.noteErrors(rec)
	f.noteAssistant(ctx, msgs, rec)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if rec.Stopped >= 0 {
		f.stopped = strings.TrimSpace(msgs[rec.Stopped].Text())
	}
	f.noteProgress(rec)
	f.noteInstructions(msgs, rec)
	f.noteState(msgs, rec, lastTyped)
	return f, ctx.Err()
}

// noteRestrictions adds the sentences of the user's text at message i that
// forbid or require something. An item of a list is one restriction, whole
// (its sentences belong together), and the items under a heading that names
// rules ("## Constraints") rank above the user's other sentences.
func (f *facts) noteRestrictions(text string, i int) {
	underRules := false
	for _, line := range strings.Split(userProse(text), "\n") {
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		item := listItemRE.MatchString(t)
		if !item && (markdownHeadingRE.MatchString(t) || strings.HasSuffix(t, ":")) {
			underRules = ruleHeadingRE.MatchString(t) && len(t) <= 80
			continue
		}
		units := sentences(t)
		if m := listItemRE.FindStringIndex(t); m != nil && len(t) <= sentenceChars {
			units = []string{t[m[1]-1:]} // the item without its marker
		}
		for _, s := range units {
			// A line ending in a colon introduces a list: its items are the
			// restrictions, not the introduction.
			if !restrictionRE.MatchString(keepGoingRE.ReplaceAllString(s, "")) || len(s) < 8 || strings.HasSuffix(s, "?") || strings.HasSuffix(s, ":") {
				continue
			}
			prio := 1
			if prohibitionRE.MatchString(s) {
				prio = 2 // what the user forbade ranks above what they would like
			}
			if underRules && item {
				prio += 2 // written down as a rule
			}
			f.restrictions = append(f.restrictions, entry{text: clip(s, sentenceChars), prio: prio, order: i})
		}
	}
}

// workspaceRoot returns the deepest folder that holds most absolute paths of
// the record, so paths can be shown relative to it; "" when there is none.
func workspaceRoot(rec *evidence.Record) string {
	var paths []string
	for _, c := range rec.Changes {
		paths = append(paths, c.Path)
	}
	for _, c := range rec.Rejected {
		paths = append(paths, c.Path)
	}
	paths = append(paths, rec.Reads...)
	count := map[string]int{}
	abs := 0
	distinct := map[string]bool{}
	for _, p := range paths {
		if !strings.HasPrefix(p, "/") || distinct[p] {
			continue
		}
		distinct[p] = true
		abs++
		for d := dirOf(p); d != "/" && d != ""; d = dirOf(d) {
			count[d]++
		}
	}
	// Of the folders that hold the most paths, the deepest: the project's
	// root, not the folder most of the edits happened to be in.
	best, most := "", 0
	for d, n := range count {
		if 2*n <= abs || strings.Count(d, "/") < 2 {
			continue
		}
		if n > most || n == most && (len(d) > len(best) || len(d) == len(best) && d < best) {
			best, most = d, n
		}
	}
	// The folder the session's commands ran in, where the record shows it.
	if rec.WorkDir != "" && abs > 0 && 2*count[rec.WorkDir] > abs {
		return rec.WorkDir
	}
	if abs < 2 {
		return ""
	}
	// The folder commands ran in, where the record shows it: a relative
	// path that names the same file as an absolute one.
	if cwd := inferredCwd(paths); cwd != "" && 2*count[cwd] > abs {
		return cwd
	}
	return best
}

// inferredCwd returns the folder that relative paths of the record are
// relative to, as absolute paths of the same files show it ("x/a.py" and
// "/repo/x/a.py" give "/repo"); the folder most such pairs give, "" when
// none does.
func inferredCwd(paths []string) string {
	var absPaths []string
	rels := map[string]bool{}
	for _, p := range paths {
		switch {
		case strings.HasPrefix(p, "/"):
			absPaths = append(absPaths, p)
		case strings.Contains(p, "/") && !strings.HasPrefix(p, "."):
			rels[p] = true
		}
	}
	votes := map[string]int{}
	for _, a := range absPaths {
		for r := range rels {
			if len(a) > len(r)+1 && strings.HasSuffix(a, "/"+r) {
				votes[a[:len(a)-len(r)-1]]++
			}
		}
	}
	best, most := "", 0
	for d, n := range votes {
		if n > most || n == most && d < best {
			best, most = d, n
		}
	}
	return best
}

func dirOf(p string) string {
	i := strings.LastIndexByte(strings.TrimSuffix(p, "/"), '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// rel returns a path relative to the workspace root, to compare two
// spellings of one file. The summary shows paths as the record spells
// them: the agent's next call names them so.
func (f *facts) rel(p string) string {
	if f.root != "" && strings.HasPrefix(p, f.root+"/") {
		return p[len(f.root)+1:]
	}
	return p
}

// shown returns a command as the summary shows it, backquoted: a line
// short enough to show whole as the record spells it (whitespace
// collapsed, its "cd DIR &&" kept: the agent can run it again as it is);
// a longer line or a script normalized (see evidence.Normalize) and
// clipped, a script by its first line, then the folder it ran in when it
// says so (" in `DIR`"); its lines are joined as the shell runs them
// (evidence.Spelled). What it shows of such a command is a prefix of the
// spelled command (before "…").
func (f *facts) shown(cmd string) string {
	if t := strings.TrimSpace(cmd); !strings.ContainsAny(t, "\n`") && len(t) <= commandChars {
		return "`" + strings.Join(strings.Fields(t), " ") + "`"
	}
	s := "`" + f.command(cmd) + "`"
	if d := evidence.WorkDir(cmd); d != "" {
		s += " in `" + d + "`"
	}
	return s
}

func (f *facts) command(cmd string) string {
	c := strings.TrimSpace(cmd)
	if len(c) > 8*commandChars {
		c = evidence.HeadBytes(c, 8*commandChars) + "…"
	}
	if i := strings.IndexByte(c, '\n'); i >= 0 && len(c) > commandChars {
		c = strings.TrimSpace(c[:i]) + " …" // a script: its first line
	}
	shown := clip(evidence.Spelled(c), commandChars)
	if shown != evidence.Spelled(cmd) {
		shown += evidence.ScriptMark(cmd) // clipped: which script it ran
	}
	return shown
}

// checkGroup is every run of one command.
type checkGroup struct {
	cmd      string
	runs     []int // indexes in rec.Checks
	failures int
}

// isVerification reports whether a command builds, tests, lints or checks
// something (or changes the repository's state), rather than inspecting.
func isVerification(cmd string) bool {
	n := evidence.Normalize(cmd)
	return buildCmdRE.MatchString(n) || stateCmdRE.MatchString(n)
}

// isTestCommand reports whether a command verifies (builds, tests, lints)
// rather than changes state.
func isTestCommand(cmd string) bool {
	n := evidence.Normalize(cmd)
	return buildCmdRE.MatchString(n) && !stateCmdRE.MatchString(n)
}

var buildCmdRE = regexp.MustCompile(`(?i)(\btest\b|pytest|\bmake\b|\bbuild\b|\blint\b|\bvet\b|ruff|eslint|\btsc\b|cargo|gradle|\bmvn\b|\bcmake\b|\bnpm (run|test)|\bpnpm\b|\byarn\b|\btox\b|\bnox\b|\bcheck\b|compile|\bgo (run|test|build|vet)\b|\bpython3? \S+\.py\b|\bnode \S+\.js\b|unittest|\bjest\b|\bmocha\b|\bphpunit\b|\brspec\b|\bctest\b|\buv run\b)`)

// stateCmdRE matches commands that change the repository or the
// environment (commits, pushes, installs): checks that matter, but not the
// verification a final state reports.
var stateCmdRE = regexp.MustCompile(`(?i)(\bgit (commit|push|fsck|gc|rebase|merge|read-tree|reset|stash|apply|am|cherry-pick|revert)\b|\bapt(-get)? install\b|\bpip3? install\b|\buv (sync|pip)\b|\bnpm (ci|install)\b|\bbrew install\b)`)

func (f *facts) noteChecks(ctx context.Context, rec *evidence.Record) error {
	fileOnly := 0
	var groups []*checkGroup
	var inspections []int // passed read-only commands: one line for all
	byCmd := map[string]*checkGroup{}
	for i, c := range rec.Checks {
		if i%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if isFileOnlyCommand(rec, c) {
			fileOnly++
			continue
		}
		// A passed inspection whose short output is a finding stays listed.
		if c.Outcome == evidence.Passed && evidence.IsInspection(c.Command) && shortOut(rec, c) == "" {
			inspections = append(inspections, i)
			continue
		}
		k := f.shown(c.Command) // runs that read the same are one line
		g := byCmd[k]
		if g == nil {
			g = &checkGroup{cmd: c.Command}
			byCmd[k] = g
			groups = append(groups, g)
		}
		g.runs = append(g.runs, i)
		if c.Outcome == evidence.Failed {
			g.failures++
		}
	}
	for _, g := range groups {
		last := rec.Checks[g.runs[len(g.runs)-1]]
		first := rec.Checks[g.runs[0]]
		status := statusWord(last.Outcome)
		var parts []string
		if d := exitDetail(last); d != "" {
			parts = append(parts, d)
		}
		if last.Outcome == evidence.Running {
			if id := sessionID(rec.Actions[last.Action].Output); id != "" {
				parts = []string{id}
			}
		} else if last.Outcome == evidence.Unknown {
			// Neither an exit code nor a runner's result line: say so, and
			// quote how it ended, so the reader judges.
			if l := lastOutputLine(rec, last); l != "" {
				parts = append(parts, "last line: "+l)
			}
		} else if last.Detail != "" {
			parts = append(parts, clip(last.Detail, detailChars))
		} else if o := shortOut(rec, last); o != "" {
			parts = append(parts, "output: "+o)
		}
		line := fmt.Sprintf("%s: %s", status, f.shown(g.cmd))
		if len(parts) > 0 {
			line += " (" + strings.Join(parts, "; ") + ")"
		}
		if n := len(g.runs); n > 1 {
			line += fmt.Sprintf(", run %d times", n)
			if d := outputChange(rec, first, last); d != "" && g.failures == 0 { // a failure says it already
				line += "; " + d
			}
			if g.failures > 0 && last.Outcome == evidence.Passed {
				line += fmt.Sprintf("; failed %d of them first", g.failures)
				if fd := firstFailure(rec, g); fd != "" && fd != last.Detail {
					line += " (" + clip(fd, detailChars) + ")"
				}
			}
		}
		if last.Outcome == evidence.Failed && last.FixedBy >= 0 {
			line += fmt.Sprintf("; fixed by a later run of %s that passed", f.shown(rec.Checks[last.FixedBy].Command))
		}
		prio := 20
		build := isVerification(g.cmd)
		switch {
		case last.Outcome == evidence.Failed && last.FixedBy < 0 && build:
			prio = 100
		case build && g.failures > 0:
			prio = 90
		case build:
			prio = 70
		case g.failures > 0:
			prio = 60
		case last.Outcome == evidence.Running || last.Outcome == evidence.Interrupted:
			prio = 95
		case shortOutput(rec, last):
			prio = 30
		}
		f.checks = append(f.checks, entry{text: line, prio: prio, order: first.Index})
	}
	if len(inspections) > 0 {
		f.checks = append(f.checks, inspectionLine(rec, inspections))
	}
	if len(f.checks) == 0 && fileOnly > 0 {
		// Never "none" beside the commands the summary names elsewhere.
		f.checks = append(f.checks, entry{text: fmt.Sprintf("only commands that write files ran (%d), listed with the files", fileOnly), prio: 10})
	}
	return nil
}

// inspectionLine is the one line that counts the passed inspections, by tool.
func inspectionLine(rec *evidence.Record, idx []int) entry {
	count := map[string]int{}
	var tools []string
	for _, i := range idx {
		w := strings.Fields(evidence.Normalize(rec.Checks[i].Command))
		t := w[0]
		if t == "git" && len(w) > 1 {
			t += " " + w[1]
		}
		if count[t] == 0 {
			tools = append(tools, t)
		}
		count[t]++
	}
	parts := make([]string, len(tools))
	for i, t := range tools {
		parts[i] = t
		if count[t] > 1 {
			parts[i] += fmt.Sprintf(" ×%d", count[t])
		}
	}
	return entry{text: fmt.Sprintf("also ran %d read-only %s that passed: %s", len(idx), plural(len(idx), "inspection", "inspections"), strings.Join(parts, ", ")), prio: 10, order: rec.Checks[idx[len(idx)-1]].Index}
}

// isFileOnlyCommand reports whether a check only reads or writes files
// (cat, sed -n, an editor interface's open/create/edit) and is shown with
// the files instead; a failed one stays a check.
func isFileOnlyCommand(rec *evidence.Record, c evidence.Check) bool {
	if c.Outcome == evidence.Failed {
		return false
	}
	w := strings.Fields(evidence.Normalize(c.Command))
	if len(w) == 0 {
		return true
	}
	switch w[0] {
	case "cat", "head", "tail", "nl", "less", "open", "create", "edit", "insert", "goto", "scroll_up", "scroll_down", "view":
		return !strings.Contains(c.Command, "|") && !strings.Contains(c.Command, "&&")
	case "sed":
		return true
	}
	return false
}

// shortOut returns the output of a check that printed one or two short
// lines (what an inspection found), "" otherwise.
func shortOut(rec *evidence.Record, c evidence.Check) string {
	if c.Action < 0 {
		return ""
	}
	var lines []string
	for _, l := range nonEmptyLines(rec.Output(c)) {
		if l[0] == '-' || l[0] == '+' || l[0] == '@' {
			return "" // a diff says what changed, not what was found
		}
		if !exitLineRE.MatchString(l) && !harnessLineRE.MatchString(l) {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 || len(lines) > 2 {
		return ""
	}
	out := clip(strings.Join(lines, " / "), detailChars+1)
	if len(out) > detailChars {
		return ""
	}
	return out
}

// harnessLineRE matches the status lines an editor interface appends to a
// command's output: "(Open file: p)", "(Current directory: d)", a bare
// prompt ("bash-$").
var harnessLineRE = regexp.MustCompile(`^(\([A-Z][\w ]{2,30}: [^)]*\)|[\w.@:~/-]*[$#>])$`)

// exitLineRE matches a line that only reports an exit code.
var exitLineRE = regexp.MustCompile(`(?i)^\W*(?:the command completed with |process )?(?:exit(?:ed)?(?: with)?[ _-]?(?:code|status)|return[ _-]?code)\W*\s*-?\d+\W*$`)

// Bounds of [outputChange]: outputs longer than changeScanLines lines are
// logs, not results to compare; each side shows changeShownLines lines.
const (
	changeScanLines  = 40
	changeShownLines = 2
)

// outputChange says how the output of a command's latest run differs from
// its first (a reproduction that printed a wrong value, then the right one):
// "before: … ; now: …" with the first lines only one side printed, "" when
// the outputs are the same, long, or missing.
func outputChange(rec *evidence.Record, first, last evidence.Check) string {
	// A failed latest run has its own detail; the change matters when the
	// latest passed.
	if first.Action < 0 || last.Action < 0 || first.Action == last.Action || last.Outcome != evidence.Passed {
		return ""
	}
	a := nonEmptyLines(rec.Output(first))
	b := nonEmptyLines(rec.Output(last))
	if len(a) == 0 || len(b) == 0 || len(a) > changeScanLines || len(b) > changeScanLines {
		return ""
	}
	only := func(xs, ys []string) []string {
		in := map[string]bool{}
		for _, y := range ys {
			in[y] = true
		}
		var out []string
		for _, x := range xs {
			if !in[x] && !exitLineRE.MatchString(x) && !harnessLineRE.MatchString(x) && len(out) < changeShownLines {
				out = append(out, x)
			}
		}
		return out
	}
	gone, added := only(a, b), only(b, a)
	if len(gone) == 0 || len(added) == 0 {
		return ""
	}
	return fmt.Sprintf("first run printed %s; the latest %s", clip(strings.Join(gone, " / "), detailChars), clip(strings.Join(added, " / "), detailChars))
}

// lastOutputLine returns the last line of a check's output, not a harness
// line, quoted; "" when it printed nothing.
func lastOutputLine(rec *evidence.Record, c evidence.Check) string {
	lines := nonEmptyLines(evidence.TailBytes(rec.Output(c), 4096))
	for i := len(lines) - 1; i >= 0; i-- {
		if l := lines[i]; !exitLineRE.MatchString(l) && !harnessLineRE.MatchString(l) {
			return "`" + strings.ReplaceAll(clip(l, detailChars), "`", "'") + "`"
		}
	}
	return ""
}

func shortOutput(rec *evidence.Record, c evidence.Check) bool {
	out := strings.TrimSpace(rec.Output(c))
	return out != "" && strings.Count(out, "\n") < 3
}

func firstFailure(rec *evidence.Record, g *checkGroup) string {
	for _, i := range g.runs {
		c := rec.Checks[i]
		if c.Outcome == evidence.Failed {
			d := exitDetail(c)
			if c.Detail != "" {
				d += ": " + c.Detail
			}
			return d
		}
	}
	return ""
}

func statusWord(o evidence.Outcome) string {
	switch o {
	case evidence.Passed:
		return "passed"
	case evidence.Failed:
		return "failed"
	case evidence.Running:
		return "running"
	case evidence.Interrupted, evidence.NotRun:
		return "not run"
	case evidence.Submitted:
		return "submitted"
	case evidence.NoMatch:
		return "found no match"
	}
	return "ran"
}

func exitDetail(c evidence.Check) string {
	switch {
	case c.HasExit:
		return fmt.Sprintf("exit %d", c.Exit)
	case c.Outcome == evidence.Interrupted:
		return "interrupted, no result"
	case c.Outcome == evidence.NotRun:
		return "refused before it ran"
	case c.Outcome == evidence.Submitted:
		return "the run ended with it"
	case c.Outcome == evidence.Running:
		return "no exit code yet"
	case c.Outcome == evidence.Failed && c.Flagged:
		return "flagged as an error"
	case c.Outcome == evidence.Failed:
		return "no exit code; its output reports a failure"
	case c.Outcome == evidence.Unknown:
		return "outcome not reported"
	}
	return ""
}

// opOrder is the order in which a file's operations are listed.
var opOrder = []evidence.Op{evidence.Created, evidence.Modified, evidence.Moved, evidence.Reverted, evidence.Deleted}

func (f *facts) noteFiles(rec *evidence.Record) {
	type fileInfo struct {
		path   string
		ops    map[evidence.Op]bool
		edits  int
		read   bool
		first  int
		last   int
		from   string
		reject []string
		where  []string
	}
	var order []*fileInfo
	by := map[string]*fileInfo{}
	get := func(p string, at int) *fileInfo {
		fi := by[p]
		if fi == nil {
			fi = &fileInfo{path: p, ops: map[evidence.Op]bool{}, first: at, last: at}
			by[p] = fi
			order = append(order, fi)
		}
		fi.last = max(fi.last, at)
		return fi
	}
	for _, c := range rec.Changes {
		fi := get(c.Path, c.Index)
		fi.ops[c.Op] = true
		fi.edits++
		if c.From != "" {
			fi.from = c.From
		}
		for _, w := range c.Where {
			if len(fi.where) < 4 && !containsStr(fi.where, w) {
				fi.where = append(fi.where, w)
			}
		}
	}
	for _, c := range rec.Rejected {
		fi := by[c.Path]
		if fi == nil {
			fi = get(c.Path, c.Index)
		}
		fi.reject = append(fi.reject, rejectReason(rec, c))
	}
	for _, p := range rec.Opened {
		if fi := by[p]; fi != nil {
			fi.read = true
		}
	}
	for _, fi := range order {
		var acts []string
		if fi.read {
			acts = append(acts, "read")
		}
		for _, op := range opOrder {
			if fi.ops[op] {
				acts = append(acts, string(op))
			}
		}
		p := "`" + fi.path + "`"
		switch {
		case len(fi.ops) > 0:
			line := p + ": " + strings.Join(acts, ", ")
			if fi.from != "" {
				line += " (from `" + fi.from + "`)"
			}
			if fi.edits > 1 {
				line += fmt.Sprintf(", %d edits", fi.edits)
			}
			if len(fi.where) > 0 {
				line += " (in " + strings.Join(fi.where, ", ") + ")"
			}
			if n := len(fi.reject); n > 0 {
				line += fmt.Sprintf("; %d other %s rejected, not applied", n, plural(n, "edit", "edits"))
				if r := firstNonEmpty(fi.reject); r != "" {
					line += " (" + clip(r, detailChars) + ")"
				}
			}
			// The files edited most are where the work is; among files
			// edited as often, the latest touched. Every edited file ranks
			// above commits, rejected edits and reads (prio ≤ 95).
			prio := editedPrio + min(fi.edits, 9)*10_000 + min(fi.last, 9_999)
			if fi.ops[evidence.Deleted] && !fi.ops[evidence.Modified] && fi.first == fi.last {
				prio = 80 // created and removed scratch files matter less
			}
			f.files = append(f.files, entry{text: line, prio: prio, order: fi.first, short: fi.path})
		default:
			reason := firstNonEmpty(fi.reject)
			read := ""
			if fi.read {
				read = "read; "
			}
			line := fmt.Sprintf("%s: %sedit rejected, not applied", p, read)
			if n := len(fi.reject); n > 1 {
				line = fmt.Sprintf("%s: %s%d edits rejected, none applied", p, read, n)
			}
			if reason != "" {
				line += " (" + clip(reason, detailChars) + ")"
			}
			f.files = append(f.files, entry{text: line, prio: 90, order: fi.first})
		}
	}
	for _, a := range rec.Artifacts {
		line := fmt.Sprintf("%s %s", verbPast(a.Op), a.ID)
		if a.Title != "" {
			line += fmt.Sprintf(" %q", a.Title)
		}
		if a.State != "" {
			line += " (state " + a.State + ")"
		}
		line += " with " + a.Tool
		f.files = append(f.files, entry{text: line, prio: 95, order: a.Index})
	}
	// A path that other paths of the record are under is a folder a search
	// or listing looked in, not a file read.
	all := append([]string(nil), rec.Reads...)
	for p := range by {
		all = append(all, p)
	}
	sort.Strings(all)
	folder := map[string]bool{}
	for i := 0; i+1 < len(all); i++ {
		for j := i + 1; j < len(all) && strings.HasPrefix(all[j], all[i]); j++ {
			if strings.HasPrefix(all[j], strings.TrimSuffix(all[i], "/")+"/") {
				folder[all[i]] = true
				break
			}
		}
	}
	// A relative path that names a changed file (given absolute) is that
	// file; so is the path a file was moved from.
	namesChanged := func(p string) bool {
		for _, c := range rec.Changes {
			for _, q := range []string{c.Path, c.From} {
				if q != "" && (f.rel(q) == f.rel(p) || strings.HasSuffix(q, "/"+p) || strings.HasSuffix(p, "/"+q)) {
					return true
				}
			}
		}
		return false
	}
	for i, p := range rec.Reads {
		if by[p] != nil || folder[p] || namesChanged(p) {
			continue
		}
		// The first files read set the scene; the latest are where work was.
		prio := 10
		if i < 3 || i >= len(rec.Reads)-5 {
			prio = 40
		}
		f.files = append(f.files, entry{text: "`" + p + "`: read", prio: prio, order: 1<<30 + i})
	}
}

// editedPrio is the base priority of an edited file in the files list.
const editedPrio = 100_000

// verbPast turns a tool verb into the past tense.
func verbPast(op string) string {
	switch op {
	case "create", "update", "close", "delete", "merge", "publish", "resolve":
		return strings.ToUpper(op[:1]) + op[1:] + "d"
	case "cancel":
		return "Cancelled"
	case "open", "post", "transition", "assign", "comment", "add":
		if op == "add" {
			return "Added"
		}
		return strings.ToUpper(op[:1]) + op[1:] + "ed"
	}
	return strings.ToUpper(op[:1]) + op[1:]
}

func containsStr(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func firstNonEmpty(xs []string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}

// rejectReason is the first line of a rejected edit's result.
func rejectReason(rec *evidence.Record, c evidence.Change) string {
	if c.Action < 0 {
		return ""
	}
	a := rec.Actions[c.Action]
	for _, l := range strings.Split(stripTags(a.Output), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasSuffix(l, ":") {
			return l
		}
	}
	return ""
}

var tagRE = regexp.MustCompile(`</?[A-Za-z][A-Za-z0-9_-]*>`)

func stripTags(s string) string {
	if len(s) > 4096 {
		s = s[:4096]
	}
	return tagRE.ReplaceAllString(s, "")
}

func (f *facts) noteErrors(rec *evidence.Record) {
	n := len(rec.Errors)
	// A test runner prints one line per failing test ("FAILED t.py::a",
	// "ERROR t.py::b"): lines of one verb and one test file are one entry,
	// the first, with how many more there were, so they do not crowd out
	// the errors that explain a failure.
	groups := map[string][]int{}
	for i, e := range rec.Errors {
		if k := testLineGroup(e); k != "" {
			groups[k] = append(groups[k], i)
		}
	}
	for i, e := range rec.Errors {
		text := e.Text
		if g := groups[testLineGroup(e)]; len(g) >= minTestLineGroup {
			if g[0] != i {
				continue
			}
			text += fmt.Sprintf(" (and %d more %s lines of the same test file)", len(g)-1, strings.Fields(e.Text)[0])
		}
		if e.FromUser {
			text += " (pasted by the user)"
		}
		if e.Count > 1 {
			text += fmt.Sprintf(" (%d times)", e.Count)
		}
		// The first distinct errors and the latest matter most, then the
		// errors that explain a failure (a refused tool call, a panic, a
		// missing command, a diagnostic), then single failing tests.
		// Within a kind, the later errors first.
		prio := kindPrio[e.Kind]*100000 + i
		switch {
		case e.FromUser:
			prio = 100 * 100000
		case i < 3:
			prio = max(prio, (85-i)*100000)
		case i >= n-3:
			prio = max(prio, (80+(i-(n-3)))*100000)
		}
		if e.Count > 1 {
			prio += 5 * 100000
		}
		f.errors = append(f.errors, entry{text: text, prio: prio, order: e.First})
	}
}

// minTestLineGroup is the number of per-test lines of one file from which
// they are shown as one entry.
const minTestLineGroup = 3

// testLineRE matches a test runner's per-test line: its verb and test file.
var testLineRE = regexp.MustCompile(`^(FAILED|ERROR|FAIL|PASSED|XFAIL|XPASS)\s+([^\s:]+)::\S`)

// testLineGroup returns the group of a per-test line (verb and file), "" for
// other errors.
func testLineGroup(e evidence.Error) string {
	if e.FromUser {
		return ""
	}
	if m := testLineRE.FindStringSubmatch(e.Text); m != nil {
		return m[1] + " " + m[2]
	}
	return ""
}

var kindPrio = map[string]int{
	evidence.ErrTool: 75, evidence.ErrPanic: 72, evidence.ErrNotFound: 70, evidence.ErrException: 68,
	evidence.ErrDiagnostic: 66, evidence.ErrOther: 50, evidence.ErrTest: 30,
}

// noteAssistant reads decisions and the code identifiers the assistant
// discussed most.
func (f *facts) noteAssistant(ctx context.Context, msgs []history.Message, rec *evidence.Record) {
	type ident struct {
		name  string
		count int
		first int
	}
	idents := map[string]*ident{}
	seen := map[string]bool{}
	for i := range msgs {
		if i%256 == 0 && ctx.Err() != nil {
			return
		}
		if rec.Origins[i] != evidence.OriginAgent {
			continue
		}
		t := strings.TrimSpace(msgs[i].Text())
		if t == "" {
			continue
		}
		t = evidence.HeadBytes(t, 16<<10)
		for _, s := range sentences(t) {
			// Markdown emphasis around a phrase that a sentence split cut in
			// two is noise; a line ending in a colon introduces what follows.
			s = strings.TrimSpace(strings.ReplaceAll(s, "**", ""))
			if decisionRE.MatchString(s) && len(s) >= 20 && !strings.HasSuffix(s, ":") && !f.contradicted(s) {
				k := strings.ToLower(s)
				if !seen[k] {
					seen[k] = true
					f.decisions = append(f.decisions, entry{text: clip(s, sentenceChars), prio: i, order: i})
				}
			}
		}
		for _, m := range codeIdentRE.FindAllStringSubmatch(t, -1) {
			name := m[1]
			if !isCodeIdent(name) {
				continue
			}
			id := idents[name]
			if id == nil {
				id = &ident{name: name, first: i}
				idents[name] = id
			}
			id.count++
		}
	}
	var list []*ident
	for _, id := range idents {
		if id.count >= 2 {
			list = append(list, id)
		}
	}
	sort.Slice(list, func(a, b int) bool {
		if list[a].count != list[b].count {
			return list[a].count > list[b].count
		}
		if list[a].first != list[b].first {
			return list[a].first < list[b].first
		}
		return list[a].name < list[b].name // one history, one summary
	})
	if len(list) > 8 {
		list = list[:8]
	}
	if len(list) > 0 {
		var names []string
		for _, id := range list {
			names = append(names, "`"+id.name+"`")
		}
		f.decisions = append(f.decisions, entry{text: "Code discussed most: " + strings.Join(names, ", "), prio: 1 << 30, order: 1 << 30})
	}
}

// contradicted reports whether text quoted from the assistant claims what the
// record contradicts (a check it says passed failed, a file it says it
// changed was not): the summary does not repeat such a claim.
func (f *facts) contradicted(text string) bool {
	return len(evidence.Contradictions(clip(text, 600), f.rec)) > 0
}

// quote returns the assistant's text for a summary line, or a note that it
// claims what the record contradicts.
// sentMessage returns the recipient and text of a call that sends a
// message (arguments with a recipient and a text), "" when it sends none.
func sentMessage(a *evidence.Action) (to, text string) {
	if a.Command != "" {
		return "", ""
	}
	for _, k := range []string{"recipient", "to"} {
		if s, ok := a.Args[k].(string); ok && strings.TrimSpace(s) != "" {
			to = strings.TrimSpace(s)
			break
		}
	}
	if to == "" {
		return "", ""
	}
	for _, k := range []string{"content", "message", "text", "body"} {
		if s, ok := a.Args[k].(string); ok && strings.TrimSpace(s) != "" {
			return to, strings.TrimSpace(s)
		}
	}
	return "", ""
}

// replyEnd returns, for a last reply longer than the n bytes quoted of it,
// a line with its last line: where a reply ends is what it leaves the user
// to answer (a question, a menu, "ready for commit").
func replyEnd(f *facts, text string, n int) []string {
	if len(strings.Join(strings.Fields(text), " ")) <= n {
		return nil
	}
	lines := nonEmptyLines(text)
	if len(lines) < 2 {
		return nil
	}
	return []string{"The reply ends: " + f.quote(lines[len(lines)-1], sentenceChars)}
}

func (f *facts) quote(text string, n int) string {
	q := clip(text, n)
	if f.contradicted(q) {
		return "(a reply whose claims the record contradicts; see Checks and Files)"
	}
	return q
}

// isCodeIdent keeps identifiers that look like code (snake_case, camelCase,
// qualified or called), not plain words.
func isCodeIdent(s string) bool {
	if len(s) < 4 {
		return false
	}
	if strings.ContainsAny(s, "_.:(") {
		return true
	}
	for i := 1; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' && s[i-1] >= 'a' && s[i-1] <= 'z' {
			return true
		}
	}
	return false
}

// noteState writes what was being done, the last action, pending work,
// the final state and the next steps.
func (f *facts) noteState(msgs []history.Message, rec *evidence.Record, lastTyped int) {
	var lastAct *evidence.Action
	if n := len(rec.Actions); n > 0 {
		lastAct = &rec.Actions[n-1]
	}
	lastText, lastTextIdx, lastAgentIdx := "", -1, -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if rec.Origins[i] != evidence.OriginAgent {
			continue
		}
		if lastAgentIdx < 0 {
			lastAgentIdx = i
		}
		if t := strings.TrimSpace(evidence.TailBytes(msgs[i].Text(), maxUserScan)); t != "" && !(lastAct != nil && lastAct.Index == i && lastAct.CallID == "") {
			lastText, lastTextIdx = t, i
			break
		}
		if lastAct != nil && lastAct.Index == i && lastAct.CallID == "" {
			lastText, lastTextIdx = proseOf(evidence.TailBytes(msgs[i].Text(), maxUserScan)), i
			if lastText != "" {
				break
			}
		}
	}
	if a := rec.Plan.Active(); a >= 0 {
		f.doing = append(f.doing, fmt.Sprintf("Active item of the agent's plan (%s): %s", rec.Plan.Tool, clip(rec.Plan.Items[a].Text, planItemChars)))
	}
	if lastTyped >= 0 {
		f.doing = append(f.doing, "Latest user request: "+clip(evidence.HeadBytes(evidence.WithoutHarnessBlocks(msgs[lastTyped].Text()), maxUserScan), 300))
	}
	switch {
	case lastAct != nil && lastAct.Index >= lastTextIdx:
		f.doing = append(f.doing, "Latest assistant step: "+f.describe(lastAct))
	case lastText != "":
		f.doing = append(f.doing, "Latest assistant step: "+f.quote(lastText, 300))
	}
	if lastAct != nil {
		f.last = append(f.last, "Action: "+f.describe(lastAct))
		if to, text := sentMessage(lastAct); text != "" {
			// What the agent told another agent (its lead, a teammate) is
			// its own report of where the work stands.
			f.last = append(f.last, "Message sent to "+to+": "+f.quote(text, 400))
		}
		f.last = append(f.last, "Result: "+f.result(rec, lastAct))
		if lastTextIdx > lastAct.Index {
			f.last = append(f.last, "Assistant then replied: "+f.quote(lastText, 500))
			f.last = append(f.last, replyEnd(f, lastText, 500)...)
		}
	} else if lastText != "" {
		f.last = append(f.last, "Assistant replied: "+f.quote(lastText, 300))
		f.last = append(f.last, replyEnd(f, lastText, 300)...)
	}
	if fs := f.finalState(rec); fs != "" {
		f.last = append(f.last, fs)
	}
	// Pending work.
	for i := range rec.Actions {
		a := &rec.Actions[i]
		if a.HasResult() || isSubmitAction(a) {
			continue
		}
		id := a.CallID
		if id == "" {
			id = "(text action)"
		}
		f.pending = append(f.pending, entry{text: fmt.Sprintf("Interrupted call %s: %s (no result)", id, f.describe(a)), prio: 100, order: a.Index})
		f.next = append(f.next, entry{text: fmt.Sprintf("Re-run or verify the interrupted call %s (%s).", id, a.Tool), prio: 1 << 20, order: a.Index})
	}
	keepRunning := false
	for i, o := range rec.Origins {
		if o == evidence.OriginTyped && keepRunningRE.MatchString(evidence.HeadBytes(msgs[i].Text(), maxUserScan)) {
			keepRunning = true
		}
	}
	for _, c := range rec.Checks {
		if c.Outcome != evidence.Running {
			continue
		}
		a := rec.Actions[c.Action]
		line := fmt.Sprintf("Running %s (call %s): check its output with %s", f.shown(c.Command), a.CallID, a.Tool)
		if id := sessionID(a.Output); id != "" {
			line = fmt.Sprintf("Running %s from %s: poll or stop it with %s", id, f.shown(c.Command), a.Tool)
		}
		if serverCmdRE.MatchString(c.Command) || keepRunning {
			// A server, or what the user asked to keep running: it is not
			// meant to finish.
			why := "a server, not meant to finish"
			if keepRunning {
				why = "left running as the user asked"
			}
			f.pending = append(f.pending, entry{text: line + " (" + why + ")", prio: 100, order: c.Index})
			continue
		}
		f.pending = append(f.pending, entry{text: line, prio: 100, order: c.Index})
		f.next = append(f.next, entry{text: fmt.Sprintf("Poll %s until it finishes and record its exit code.", f.shown(c.Command)), prio: 1 << 19, order: c.Index})
	}
	if lastTextIdx >= 0 && lastTextIdx == lastAgentIdx && lastTextIdx > lastTyped && strings.HasSuffix(strings.TrimSpace(lastText), "?") {
		ss := sentences(lastText)
		f.pending = append(f.pending, entry{text: "Awaiting the user's answer: " + clip(ss[len(ss)-1], sentenceChars), prio: 90, order: lastTextIdx})
	}
	// Next steps: failures no later run fixed, the assistant's stated plan,
	// the latest request when nothing else is left.
	lastOfShown := map[string]int{} // the last run of each command as shown
	for i, c := range rec.Checks {
		lastOfShown[f.shown(c.Command)] = i
	}
	for i, c := range rec.Checks {
		if c.Outcome != evidence.Failed || c.FixedBy >= 0 || lastOfShown[f.shown(c.Command)] != i || !isVerification(c.Command) {
			continue
		}
		if f.staleCheck[i] || rec.DeletedAfter(c.Command, c.Index) {
			continue // a step already re-runs it, or what it checked is gone
		}
		// The latest failures first.
		f.next = append(f.next, entry{text: fmt.Sprintf("Fix the failure of %s (%s) and re-run it.", f.shown(c.Command), exitDetail(c)), prio: 100000 + i, order: c.Index})
	}
	if lastText != "" && lastTextIdx > lastTyped {
		for _, s := range sentences(lastText) {
			if plansNext(s) && !f.contradicted(s) {
				f.next = append(f.next, entry{text: clip(s, sentenceChars), prio: 50000, order: 1 << 29})
			}
		}
	}
	// The user's latest request that no reply of the assistant followed is
	// what the agent was doing: a step, after its plan's active item.
	if lastTyped >= 0 && !rec.Final.Submitted && !repliedAfter(msgs, rec, lastTyped) && lastTyped != firstTyped(rec) {
		f.next = append(f.next, entry{text: "The user's latest request, not yet answered: " + clip(evidence.WithoutHarnessBlocks(msgs[lastTyped].Text()), 300), prio: 1 << 22, order: lastTyped})
	}
	if rec.Final.Submitted && len(f.pending) == 0 {
		f.next = append(f.next, entry{text: "None: the run submitted its work; review the result.", prio: 1 << 21, order: -1})
	}
	switch {
	case len(f.next) > 0 || lastTyped < 0:
	case lastTextIdx > lastTyped && (lastAct == nil || lastTextIdx > lastAct.Index):
		f.next = append(f.next, entry{text: "None recorded: the assistant answered the latest request; wait for the user's next one.", prio: 10, order: 1 << 30})
	default:
		f.next = append(f.next, entry{text: "Continue with the latest user request: " + clip(evidence.WithoutHarnessBlocks(msgs[lastTyped].Text()), 200), prio: 10, order: 1 << 30})
	}
}

var (
	// keepGoingRE matches a request to go on ("keep going", "keep at it",
	// "keep working"): a request, not a restriction, whatever follows it.
	keepGoingRE = regexp.MustCompile(`(?i)\bkeep (?:going|at it|working|on going|on)\b`)
	// keepRunningRE matches a user's request to keep a process running.
	keepRunningRE = regexp.MustCompile(`(?i)\b(keep|leave)\b[^.?!\n]{0,40}\brunning\b`)
	// serverCmdRE matches a command that serves until it is stopped: dev
	// servers, app servers, compose stacks in the foreground.
	serverCmdRE = regexp.MustCompile(`(?i)\b(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?(?:dev|start|serve|preview)\b|\b(?:next|vite|nuxt|astro|remix)\s+dev\b|\bhttp\.server\b|\b(?:uvicorn|gunicorn|hypercorn|flask run|rails s(?:erver)?|php -S|hugo server|jekyll serve|live-server|docker[ -]compose up|tail -f)\b|manage\.py runserver|\bgo run\b.*\bserve`)
)

// repliedAfter reports whether an assistant message without tool calls (a
// reply) follows message i.
func repliedAfter(msgs []history.Message, rec *evidence.Record, i int) bool {
	for j := i + 1; j < len(msgs); j++ {
		if rec.Origins[j] == evidence.OriginAgent && !msgs[j].HasToolCalls() && strings.TrimSpace(msgs[j].Text()) != "" {
			return true
		}
	}
	return false
}

// firstTyped returns the index of the first message the user typed, -1
// when none.
func firstTyped(rec *evidence.Record) int {
	if r := rec.UserRequests(); len(r) > 0 {
		return r[0]
	}
	return -1
}

// summaryLabelRE matches the label line that starts the summary proper in
// a note that first shows its reasoning ("Analysis: …" then "Summary:").
var summaryLabelRE = regexp.MustCompile(`(?mi)^\s*(?:#+\s*)?summary:?\s*$|<summary>`)

// summaryBody returns a note from its summary proper on, when it labels it.
func summaryBody(text string) string {
	if loc := summaryLabelRE.FindStringIndex(text); loc != nil {
		return text[loc[1]:]
	}
	return text
}

// proseOf returns the text of an assistant message without its fenced blocks.
func proseOf(text string) string {
	var out []string
	in := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			continue
		}
		if !in {
			out = append(out, l)
		}
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// userProse returns what the user wrote in their own words: the text
// without its fenced blocks and without the lines of data pasted bare (a
// JSON member, a line of an escaped string with its \n and \" still in it,
// a line of a terminal's tree or table), whose "keep-alive" or "without" is
// not a restriction of theirs.
func userProse(text string) string {
	var out []string
	for _, l := range strings.Split(proseOf(text), "\n") {
		if jsonMemberRE.MatchString(l) || strings.Count(l, `\n`)+strings.Count(l, `\"`) >= 2 || strings.ContainsFunc(l, isBoxDrawing) {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// isBoxDrawing reports a box-drawing rune (U+2500–U+257F): a line with one
// is a terminal's rendering (a tree, a table, a TUI) the user pasted.
func isBoxDrawing(r rune) bool { return r >= 0x2500 && r <= 0x257F }

// jsonMemberRE matches a line that is a member of a JSON object.
var jsonMemberRE = regexp.MustCompile(`^\s*"[^"\n]{1,80}"\s*:\s*(["{\[\d-]|true|false|null)`)

// plansNext reports whether a sentence of the assistant states what comes
// next: a word of nextRE that is not part of a name (Next.js, next.config).
func plansNext(s string) bool {
	for _, loc := range nextRE.FindAllStringIndex(s, -1) {
		if rest := s[loc[1]:]; len(rest) >= 2 && rest[0] == '.' && (unicode.IsLetter(rune(rest[1])) || rest[1] == '_') {
			continue
		}
		return true
	}
	return false
}

var sessionRE = regexp.MustCompile(`(?i)\b(session|process|job|pid|shell)[ _-]?(?:id)?\s*[:=#]\s*([A-Za-z0-9_.:-]+)`)

func sessionID(out string) string {
	if m := sessionRE.FindStringSubmatch(out); m != nil {
		return strings.ToLower(m[1]) + " " + strings.TrimRight(m[2], ".,;:")
	}
	return ""
}

func isSubmitAction(a *evidence.Action) bool {
	n := strings.ToLower(a.Tool)
	return strings.Contains(n, "submit") || n == "finish" || (a.Command != "" && (strings.HasPrefix(a.Command, "submit") || strings.HasPrefix(a.Command, "echo") && strings.Contains(strings.ToUpper(a.Command), "SUBMIT")))
}

func (f *facts) describe(a *evidence.Action) string {
	switch {
	case a.Command != "":
		return fmt.Sprintf("%s %s", a.Tool, f.shown(a.Command))
	case len(a.Args) > 0:
		var keys []string
		for k, v := range a.Args {
			if s, ok := v.(string); ok && len(s) < 200 && !strings.Contains(s, "\n") {
				keys = append(keys, k+"="+strings.ReplaceAll(s, "`", "'"))
			}
		}
		sort.Strings(keys)
		if len(keys) > 0 {
			return clip(a.Tool+" "+strings.Join(keys, " "), 200)
		}
	case a.Input != "":
		return a.Tool + " " + clip(a.Input, 160)
	}
	return a.Tool
}

func (f *facts) result(rec *evidence.Record, a *evidence.Action) string {
	if !a.HasResult() {
		if isSubmitAction(a) {
			return "submitted (the run ended with it)"
		}
		return "no result (interrupted)"
	}
	var parts []string
	if a.HasExit {
		parts = append(parts, fmt.Sprintf("exit %d", a.Exit))
	}
	if a.Rejected {
		parts = append(parts, "rejected, not applied")
	}
	out := a.Output
	if e := firstErrorLine(out); e != "" {
		return strings.Join(append(parts, e), "; ")
	}
	var lines []string
	for _, l := range nonEmptyLines(out) {
		if !exitLineRE.MatchString(l) {
			lines = append(lines, l)
		}
	}
	switch {
	case len(lines) == 0:
		parts = append(parts, "empty output")
	case len(lines) <= 2:
		parts = append(parts, clip(strings.Join(lines, " / "), 240))
	default:
		parts = append(parts, clip(lines[0], 120)+" … "+clip(lines[len(lines)-1], 120))
	}
	return strings.Join(parts, "; ")
}

var errStartRE = regexp.MustCompile(`(?i)^\W*(error|failed|failure|fatal|exception|panic|traceback|--- fail)\b`)

func firstErrorLine(out string) string {
	if len(out) > 64<<10 {
		out = out[:64<<10]
	}
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if t := strings.TrimSpace(l); errStartRE.MatchString(t) {
			// Test runners put the detail on the indented line that follows.
			if i+1 < len(lines) && strings.HasPrefix(lines[i+1], " ") && strings.TrimSpace(lines[i+1]) != "" {
				t += " / " + strings.TrimSpace(lines[i+1])
			}
			return clip(t, 240)
		}
	}
	return ""
}

// finalState states how the record ends: the last check, commits, pushes,
// releases, a submission.
func (f *facts) finalState(rec *evidence.Record) string {
	var parts []string
	if i := rec.Final.LastCheck; i >= 0 {
		c := rec.Checks[i]
		// The last check that verifies something, when there is one.
		for j := len(rec.Checks) - 1; j >= 0; j-- {
			if isTestCommand(rec.Checks[j].Command) && rec.Checks[j].Outcome != evidence.NotRun {
				c = rec.Checks[j]
				break
			}
		}
		s := fmt.Sprintf("last check %s %s", f.shown(c.Command), statusWord(c.Outcome))
		if d := exitDetail(c); d != "" {
			s += " (" + d + ")"
		}
		parts = append(parts, s)
	}
	if n := len(rec.Final.Commits); n > 0 {
		c := rec.Final.Commits[n-1]
		s := fmt.Sprintf("committed %s %q", c.Ref, clip(c.Message, 80))
		if n > 1 {
			s = fmt.Sprintf("%d commits, the last %s %q", n, c.Ref, clip(c.Message, 80))
		}
		if c.Stat != "" {
			s += " (" + c.Stat + ")"
		}
		parts = append(parts, s)
	}
	if rec.Final.Pushed {
		if r := rec.Final.PushedRefs; r != "" {
			parts = append(parts, "pushed "+r)
		} else {
			parts = append(parts, "pushed")
		}
	}
	for i := len(rec.Artifacts) - 1; i >= 0; i-- {
		if a := rec.Artifacts[i]; a.Op == "create" && a.URL != "" && strings.Contains(a.Tool, " create") {
			parts = append(parts, "opened "+a.URL) // the last pull request a command created
			break
		}
	}
	if rec.Final.Released {
		parts = append(parts, "released")
	}
	if rec.Final.Submitted {
		parts = append(parts, "submitted")
	}
	if len(parts) == 0 {
		return ""
	}
	return "Final state: " + strings.Join(parts, "; ")
}

func nonEmptyLines(s string) []string {
	if len(s) > 64<<10 {
		s = s[:64<<10] + "\n" + s[len(s)-(8<<10):]
	}
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// sentences splits text into lines and sentences.
func sentences(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "-*>#"))
		start := 0
		for i := 0; i < len(line); i++ {
			c := line[i]
			if (c == '.' || c == '!' || c == '?') && (i+1 == len(line) || line[i+1] == ' ') && (c != '.' || !abbreviationEnd(line[:i+1])) {
				if s := strings.TrimSpace(line[start : i+1]); s != "" {
					out = append(out, s)
				}
				start = i + 1
			}
		}
		if s := strings.TrimSpace(line[start:]); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// abbreviationEnd reports whether s ends with an abbreviation whose dot does
// not end a sentence: "e.g.", "i.e.", "etc.", "vs.", "cf.", or a single letter
// (an initial, "a.").
func abbreviationEnd(s string) bool {
	i := strings.LastIndexAny(s[:len(s)-1], " (\t")
	w := strings.ToLower(s[i+1:])
	switch w {
	case "e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.", "incl.", "esp.":
		return true
	}
	return len(w) == 2 && w[0] >= 'a' && w[0] <= 'z'
}

// clip collapses whitespace and cuts s to n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) > 4*n+64 {
		cut := 4*n + 64
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
