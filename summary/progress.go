package summary

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/vtcode/vtcode-ls/evidence"
)

// secWIP is the work in progress where the record ends; the summary shows
// it first.
const secWIP = "Work in progress"

// Bounds of the work-in-progress section.
const (
	maxWIPPaths = 15
	// gitStatusBytes bounds the line of the paths git status showed.
	gitStatusBytes = 2048
	maxPlanItems   = 24
	planItemChars  = 400
	maxStaleFailed = 3
	maxStalePassed = 2
	// The stale checks beyond those are counted on one line that names the
	// short ones (a resuming agent re-runs them), within staleNamesBytes.
	staleNameChars  = 64
	staleNamesBytes = 320
	proposalChars   = 900
	planNoteChars   = 600
)

// Labels of the work-in-progress lines, by which an earlier summary's
// lines are carried when the record no longer shows what they say.
const (
	wipUncommitted = "Uncommitted edits"
	wipGitStatus   = "Not committed per git status"
	wipDiffStat    = "Uncommitted diff per git diff --stat"
	wipBranch      = "Branch:"
	wipStale       = "Stale check"
	wipPlan        = "Plan ("
	wipActive      = "Active plan item:"
	wipItem        = "["
	wipPlanNote    = "The agent's note with the plan:"
	wipStopped     = "Stopped by the user:"
	wipUnconfirmed = "Commit not confirmed:"
	// wipProposal is a plan proposed for approval, wipProposalText its text.
	wipProposal     = "Proposed plan"
	wipProposalText = "Plan text:"
)

// noteProgress writes the work in progress (edits after the last commit,
// checks not re-run since an edit they cover, the agent's plan as last
// written and its active item) and the next steps it implies: finish the
// active item (build, test, commit what is uncommitted), then the next open
// item.
func (f *facts) noteProgress(rec *evidence.Record) {
	if rec.Stopped >= 0 && f.stopped != "" {
		f.wip = append(f.wip, f.stoppedLine(rec))
	}
	if n := len(rec.Actions); n > 0 && rec.Final.Interrupted {
		if subj := evidence.CommitSubject(rec.Actions[n-1].Command); subj != "" {
			f.wip = append(f.wip, fmt.Sprintf("%s the record ends on the git commit of %q, with no result: confirm it landed", wipUnconfirmed, clip(subj, planItemChars)))
		}
	}
	var un []string
	for _, p := range rec.Uncommitted() {
		if f.inWorkspace(p) {
			un = append(un, p)
		}
	}
	if len(un) > 0 {
		since := "no commit in the record"
		if n := len(rec.Final.Commits); n > 0 {
			since = "after the last commit " + rec.Final.Commits[n-1].Ref
		}
		f.wip = append(f.wip, fmt.Sprintf("%s (%s): %s", wipUncommitted, since, f.pathList(un)))
	}
	f.noteWorktree(rec, un)
	// The failed ones first (a fix not verified yet), then the passed ones;
	// the rest are counted.
	var stale []evidence.Stale
	shownStale := map[string]bool{}
	all := rec.StaleChecks(staleCandidate, f.inWorkspace)
	more := 0
	var moreNames []string // the short commands among them, named
	for _, failed := range []bool{true, false} {
		limit := maxStaleFailed
		if !failed {
			limit = maxStalePassed
		}
		n := 0
		for _, s := range all {
			c := rec.Checks[s.Check]
			k := f.shown(c.Command)
			if (c.Outcome == evidence.Failed) != failed || shownStale[k] {
				continue
			}
			shownStale[k] = true
			if n == limit {
				more++
				if len(k) <= staleNameChars && !strings.Contains(k, "` in `") {
					moreNames = append(moreNames, k)
				}
				continue
			}
			n++
			stale = append(stale, s)
		}
	}
	for _, s := range stale {
		c := rec.Checks[s.Check]
		line := fmt.Sprintf("%s: %s %s", wipStale, f.shown(c.Command), statusWord(c.Outcome))
		if d := exitDetail(c); d != "" {
			line += " (" + d + ")"
		}
		f.wip = append(f.wip, line+", not re-run since the edit of `"+s.Path+"`")
	}
	if more > 0 {
		line := fmt.Sprintf("%s: %d more not re-run since later edits", wipStale, more)
		if len(moreNames) > 0 {
			named := 0
			for _, k := range moreNames {
				if named > 0 && len(line)+len(k) > staleNamesBytes {
					break
				}
				if named == 0 {
					line += ": " + k
				} else {
					line += ", " + k
				}
				named++
			}
			if rest := more - named; rest > 0 {
				line += fmt.Sprintf(" and %d more", rest)
			}
		}
		f.wip = append(f.wip, line)
	}
	p := rec.Plan
	active := p.Active()
	if p != nil {
		f.wip = append(f.wip, fmt.Sprintf("%s%s, as last written, %d %s):", wipPlan, p.Tool, len(p.Items), plural(len(p.Items), "item", "items")))
		for i, it := range p.Items {
			if i == maxPlanItems {
				f.wip = append(f.wip, fmt.Sprintf("  (%d more items)", len(p.Items)-i))
				break
			}
			f.wip = append(f.wip, fmt.Sprintf("  %s%s] %s", wipItem, it.Status, clip(it.Text, planItemChars)))
		}
		if p.Note != "" {
			f.wip = append(f.wip, "  "+wipPlanNote+" "+clip(p.Note, planNoteChars))
		}
		if active >= 0 {
			f.wip = append(f.wip, wipActive+" "+clip(p.Items[active].Text, planItemChars))
		}
	}

	prop := rec.Proposal
	if prop != nil && prop.State == "approved" && rec.LastCommit() > prop.Index {
		prop = nil // carried out and committed
	}
	if prop != nil {
		line := fmt.Sprintf("%s (%s): %q", wipProposal, prop.State, clip(prop.Title, planItemChars))
		if prop.Path != "" {
			// As written: the harness keeps plan files outside the project.
			line += ", written to `" + prop.Path + "`"
		}
		f.wip = append(f.wip, line)
		f.wip = append(f.wip, "  "+wipProposalText+" "+clip(strings.Join(nonEmptyLines(prop.Text), " / "), proposalChars))
	}

	// Next steps, from that state.
	prio := 1 << 23
	step := func(s string) {
		f.next = append(f.next, entry{text: s, prio: prio, order: prio})
		prio--
	}
	if prop != nil && prop.State != "approved" {
		step(fmt.Sprintf("Wait for the user's decision on the proposed plan %q (%s); nothing of it is carried out yet.", clip(prop.Title, planItemChars), prop.State))
	}
	if active >= 0 {
		step("Finish the active plan item: " + clip(p.Items[active].Text, planItemChars))
	}
	for _, s := range stale {
		c := rec.Checks[s.Check]
		f.staleCheck[s.Check] = true
		was := statusWord(c.Outcome)
		if d := exitDetail(c); d != "" {
			was += ", " + d
		}
		step(fmt.Sprintf("Re-run %s (it %s): not re-run since the edit of `%s`.", f.shown(c.Command), was, s.Path))
	}
	if len(un) > 0 {
		latest, latestIdx := "", -1
		for _, ch := range rec.Changes {
			if f.inWorkspace(ch.Path) {
				latest, latestIdx = ch.Path, ch.Index
			}
		}
		if len(stale) == 0 && latest != "" && !checkedSince(rec, latestIdx) {
			step(fmt.Sprintf("Build and test the uncommitted edits: no check ran since the edit of `%s`.", latest))
		}
		if usesGit(rec) {
			step("Commit the uncommitted edits once their checks pass: " + f.pathList(un) + ".")
		}
	}
	if n := p.NextOpen(); n >= 0 {
		step("Then the next open plan item: " + clip(p.Items[n].Text, planItemChars))
	}
}

// noteWorktree writes what git itself said of the uncommitted work after
// the last commit: the paths of the last git status no later commit took
// (besides the edits already listed) and the last git diff --stat's totals.
func (f *facts) noteWorktree(rec *evidence.Record, listed []string) {
	w := rec.Worktree
	last := rec.LastCommit()
	// The paths, grouped by state (in the order git showed the states),
	// within gitStatusBytes: a long session's status keeps every path a
	// resuming engineer must commit or restore, and says where the rest is.
	var states []string
	byState := map[string][]string{}
	for _, d := range w.Dirty {
		if containsSuffix(listed, d.Path) {
			continue
		}
		if byState[d.State] == nil {
			states = append(states, d.State)
		}
		byState[d.State] = append(byState[d.State], "`"+d.Path+"`")
	}
	if len(states) > 0 {
		line := wipGitStatus + ":"
		shown, total := 0, 0
		for i, st := range states {
			total += len(byState[st])
			part := " " + st + " "
			if i > 0 {
				part = ";" + part
			}
			n := 0
			for _, p := range byState[st] {
				if shown > 0 && len(line)+len(part)+len(p)+2 > gitStatusBytes {
					break
				}
				if n > 0 {
					part += ", "
				}
				part += p
				n++
				shown++
			}
			if n > 0 {
				line += part
			}
		}
		if more := total - shown; more > 0 {
			line += fmt.Sprintf(" … and %d more (the git status at message %d)", more, w.StatusAt)
		}
		f.wip = append(f.wip, line)
	}
	if w.DiffStat != "" && w.DiffAt > last {
		f.wip = append(f.wip, wipDiffStat+": "+w.DiffStat)
	}
	if b := rec.Final.Branch; b != "" {
		line := wipBranch + " `" + b + "`"
		if n := len(rec.Final.Commits); n > 0 && rec.Final.PushedAt < last {
			line += "; the last commit " + rec.Final.Commits[n-1].Ref + " is not pushed"
			if rec.Final.PushedAt < 0 {
				line += " (no git push in the record)"
			}
		}
		f.wip = append(f.wip, line)
	}
}

// containsSuffix reports whether one of paths is p or ends in /p (a path
// git shows relative to the repository, the record absolute).
func containsSuffix(paths []string, p string) bool {
	for _, q := range paths {
		if q == p || strings.HasSuffix(q, "/"+p) {
			return true
		}
	}
	return false
}

// inlineScriptRE matches an interpreter given its program inline (python
// -c, node -e): a one-off probe, not a check that is run again.
// A heredoc fed to one (python - <<'PY') is inline too.
var inlineScriptRE = regexp.MustCompile(`\b(python[0-9.]*|node|ruby|perl|php|deno|bun)\s+(-[A-Za-z]*[ce]\b|--eval\b|(-\s+)?<<)`)

// staleCandidate reports whether a command is a check a later edit makes
// stale: a build, test or lint, not a one-off inline script.
func staleCandidate(cmd string) bool {
	return (isTestCommand(cmd) || typeCheckRE.MatchString(evidence.Normalize(cmd))) && !inlineScriptRE.MatchString(cmd)
}

// typeCheckRE matches a type checker's run (`bun run typecheck`, mypy,
// pyright): a check an edit makes stale, like a test run.
var typeCheckRE = regexp.MustCompile(`(?i)\btype-?check\b|\bmypy\b|\bpyright\b`)

// inWorkspace reports whether p is a file of the workspace: relative, or
// under the workspace root, and not inside a .git folder. Scratch files in
// /tmp are not uncommitted work.
func (f *facts) inWorkspace(p string) bool {
	if strings.HasPrefix(p, ".git/") || strings.Contains(p, "/.git/") {
		return false
	}
	if !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~") {
		return true
	}
	for _, root := range []string{f.root, f.workDir} {
		if root != "" && strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/") {
			return true
		}
	}
	return false
}

// pathList shows paths as the record spells them, at most maxWIPPaths.
func (f *facts) pathList(paths []string) string {
	var b strings.Builder
	for i, p := range paths {
		if i == maxWIPPaths {
			fmt.Fprintf(&b, " and %d more", len(paths)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("`" + p + "`")
	}
	return b.String()
}

// checkedSince reports whether a build, test or lint ran (with an outcome)
// after message index i.
func checkedSince(rec *evidence.Record, i int) bool {
	for _, c := range rec.Checks {
		if c.Index > i && isTestCommand(c.Command) && (c.Outcome == evidence.Passed || c.Outcome == evidence.Failed) {
			return true
		}
	}
	return false
}

// usesGit reports whether the record shows git commits or git commands:
// then what is uncommitted is to be committed.
func usesGit(rec *evidence.Record) bool {
	if len(rec.Final.Commits) > 0 {
		return true
	}
	for _, c := range rec.Checks {
		if strings.HasPrefix(c.Normalized, "git commit") || strings.Contains(c.Normalized, "&& git commit") {
			return true
		}
	}
	return false
}

// stoppedLine says that the user stopped the agent, quoting the harness's
// line, and which step did not finish.
func (f *facts) stoppedLine(rec *evidence.Record) string {
	line := fmt.Sprintf("%s %q after the last message the user typed", wipStopped, f.stopped)
	for i := len(rec.Actions) - 1; i >= 0; i-- {
		if a := &rec.Actions[i]; a.Index < rec.Stopped {
			line += ": the agent's turn did not finish (its last step: " + f.describe(a) + ")"
			break
		}
	}
	return line
}

// priorWIP returns the lines of an earlier summary's work in progress that
// the record no longer shows: its plan when the record has none, its
// uncommitted edits when the record shows no edit and no commit.
func (f *facts) priorWIP() []string {
	var out []string
	hasPlan := f.rec.Plan != nil
	hasEdits := len(f.rec.Changes) > 0 || len(f.rec.Final.Commits) > 0
	for _, l := range f.prior[secWIP] {
		switch {
		case strings.HasPrefix(l, wipPlan), strings.HasPrefix(l, wipActive):
			if !hasPlan {
				out = append(out, l)
			}
		case strings.HasPrefix(l, wipItem), strings.HasPrefix(l, wipPlanNote):
			if !hasPlan {
				out = append(out, "  "+l)
			}
		case strings.HasPrefix(l, wipProposal):
			if f.rec.Proposal == nil {
				out = append(out, l)
			}
		case strings.HasPrefix(l, wipProposalText):
			if f.rec.Proposal == nil {
				out = append(out, "  "+l)
			}
		case strings.HasPrefix(l, wipUncommitted):
			if !hasEdits {
				out = append(out, l)
			}
		}
	}
	return out
}
