package evidence

import (
	"fmt"
	"regexp"
	"strings"
)

// Contradictions returns the claims of a summary (or of any text written
// about the record) that the record contradicts. A claim is read from one line of the summary:
//
//   - a check: the line's first backquoted string is a command the record
//     ran, and the line says it passed (or exit 0) while the record's last
//     run of it failed, or says it failed while its last run passed (unless
//     the line says a later run fixed it);
//   - a file change: a backquoted path on a line that says it was modified,
//     created, deleted, edited, written or moved, while the record shows no
//     change to it (the edit was rejected, or the file was only read) and
//     the last git status does not show it uncommitted;
//   - an interruption: a line that says a call was interrupted while every
//     call of the record has a result (or the call it names has one);
//   - the final state: a line about the final state that says the work was
//     submitted, committed or pushed while the record shows no such step,
//     or names as the last commit one older than the record's last;
//   - an outcome the record does not show: a line that says a command
//     passed or failed while its last run reported neither an exit code nor
//     a runner's result line, or that a search which found no match failed;
//   - a stale step: "Fix the failure of `X`" while X's last run did not
//     fail or a later run fixed it, "Poll `X`" while X is not running;
//   - a file only read: "`p`: read" (without a change word) while the
//     record shows p changed;
//   - a stale check: "`X` … not re-run since the edit of `P`" while a run
//     of X came after the last change of P;
//   - no checks: a "## Checks" section that says none while the summary
//     names a command the record ran as a check.
//
// The user's own words that a summary quotes are not its claims: the
// sections about the goal, the requests, the restrictions, the focus and
// the user's messages quoted verbatim,
// and lines that give the user's latest request, are skipped.
func Contradictions(summary string, rec *Record) []string {
	var out []string
	quoting := false
	section, checksNone, namesCheck := "", false, ""
	for _, raw := range strings.Split(summary, "\n") {
		line := strings.TrimSpace(raw)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "#") {
			quoting = userSectionRE.MatchString(line)
			section = strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "# ")))
			continue
		}
		if section == "checks" && strings.EqualFold(line, "none") {
			checksNone = true
		}
		if !quoting && namesCheck == "" {
			for _, t := range backquoted(line) {
				if matchCommand(t, "", rec) >= 0 {
					namesCheck = t
					break
				}
			}
		}
		if quoting || userLineRE.MatchString(line) {
			continue
		}
		lower := strings.ToLower(line)
		ticks := backquoted(line)
		if c := checkClaim(line, lower, ticks, rec); c != "" {
			out = append(out, c)
		}
		out = append(out, fileClaims(line, lower, ticks, rec)...)
		if c := interruptClaim(line, lower, rec); c != "" {
			out = append(out, c)
		}
		out = append(out, finalClaims(line, lower, rec)...)
		if c := stepClaim(line, ticks, rec); c != "" {
			out = append(out, c)
		}
		if c := readClaim(line, ticks, rec); c != "" {
			out = append(out, c)
		}
		if c := staleClaim(line, ticks, rec); c != "" {
			out = append(out, c)
		}
	}
	if checksNone && namesCheck != "" {
		out = append(out, fmt.Sprintf("says no checks ran; it names `%s`, which the record ran", namesCheck))
	}
	return out
}

var (
	fixStepRE  = regexp.MustCompile("(?i)\\bfix the failure of `")
	pollStepRE = regexp.MustCompile("(?i)^\\W*(?:\\d+\\.\\s*)?poll `")
	// readOnlyRE matches a file line that says the file was only read.
	readOnlyRE = regexp.MustCompile("^\\W*`[^`]+`: read\\b")
)

// stepClaim reads a next step about a check.
func stepClaim(line string, ticks []string, rec *Record) string {
	if len(ticks) == 0 {
		return ""
	}
	switch {
	case fixStepRE.MatchString(line):
		dir := ""
		if len(ticks) > 1 && strings.Contains(line, "`"+ticks[0]+"` in `"+ticks[1]+"`") {
			dir = ticks[1]
		}
		i := matchCommand(ticks[0], dir, rec)
		if i < 0 {
			return ""
		}
		c := rec.Checks[i]
		switch {
		case c.Outcome != Failed:
			return fmt.Sprintf("says to fix the failure of `%s`; its last run %s", ticks[0], c.Outcome)
		case c.FixedBy >= 0:
			return fmt.Sprintf("says to fix the failure of `%s`; a later run of `%s` passed", ticks[0], clip(rec.Checks[c.FixedBy].Command, commandChars))
		}
	case pollStepRE.MatchString(line):
		if i := matchCommand(ticks[0], "", rec); i >= 0 && rec.Checks[i].Outcome != Running {
			return fmt.Sprintf("says to poll `%s`; it is not running (%s)", ticks[0], rec.Checks[i].Outcome)
		}
	}
	return ""
}

// staleEditRE finds the path a line says a check was not re-run since the
// edit of.
var staleEditRE = regexp.MustCompile("(?i)\\bnot re-?run since the (?:last )?edit of `([^`]+)`")

// staleClaim reads a line that says a check went stale: its command is the
// line's first backquoted string (with " in `DIR`"), and a run of it after
// the path's last change re-ran it.
func staleClaim(line string, ticks []string, rec *Record) string {
	m := staleEditRE.FindStringSubmatch(line)
	if m == nil || len(ticks) == 0 {
		return ""
	}
	dir := ""
	at := strings.Index(line, "`"+ticks[0]+"`")
	if len(ticks) > 1 && strings.HasPrefix(line[at+len(ticks[0])+2:], " in `"+ticks[1]+"`") {
		dir = ticks[1]
	}
	i := matchCommand(ticks[0], dir, rec)
	if i < 0 {
		return ""
	}
	edit := -1
	for _, ch := range rec.Changes {
		if ch.Path == m[1] || strings.HasSuffix(ch.Path, "/"+m[1]) || strings.HasSuffix(m[1], "/"+ch.Path) {
			edit = max(edit, ch.Index)
		}
	}
	if edit >= 0 && rec.Checks[i].Index > edit {
		return fmt.Sprintf("says `%s` was not re-run since the edit of `%s`; it ran after that edit", ticks[0], m[1])
	}
	return ""
}

// readClaim reads a file line that says a file was only read.
func readClaim(line string, ticks []string, rec *Record) string {
	if len(ticks) == 0 || !readOnlyRE.MatchString(line) || changeWordRE.MatchString(line) || negatedEditRE.MatchString(line) {
		return ""
	}
	if known, changed := pathStatus(ticks[0], rec); known && changed {
		return fmt.Sprintf("says `%s` was only read; the record shows it changed", ticks[0])
	}
	return ""
}

var (
	userSectionRE = regexp.MustCompile(`(?i)\b(goal|request|constraint|restriction|instruction|focus|task|user'?s? messages)`)
	userLineRE    = regexp.MustCompile(`(?i)^\W*(latest |later |last )?(user('s)? )?(request|asked|said|wrote)\b|\buser (request|asked|said|wrote)\b|\(pasted by the user\)`)
)

var tickRE = regexp.MustCompile("`([^`\n]+)`")

func backquoted(line string) []string {
	var out []string
	for _, m := range tickRE.FindAllStringSubmatch(line, -1) {
		out = append(out, m[1])
	}
	return out
}

var (
	passWordRE  = regexp.MustCompile(`(?i)\b(passed|passes|succeeded|exit 0|exit code 0)\b`)
	claimFailRE = regexp.MustCompile(`(?i)\b(failed|fails|failing|exit [1-9]\d*|exit code [1-9]\d*)\b`)
	fixedRE     = regexp.MustCompile(`(?i)\b(fixed|later (run )?passed|then passed|since passed|resolved)\b`)
)

// matchCommand returns the index in rec.Checks of the last run of the
// command a summary names (exactly, or clipped with "…"), -1 when none.
//
// Commands compare in their normalized form (Normalize), or with their
// lines joined (Spelled); a clipped
// one names the last run of any command it is a prefix of, as a summary that
// groups runs by what it shows means it.
//
// A command followed by " in `DIR`" ran in DIR (WorkDir); one
// without ran where the record's command does not say, unless it is the
// line as the record spells it (whitespace collapsed), "cd DIR &&" and all.
//
// A clipped command that ends in "# script D" (ScriptMark) names only runs
// whose inline script has the digest D.
func matchCommand(s, dir string, rec *Record) int {
	script := ""
	if m := scriptMarkRE.FindStringSubmatchIndex(s); m != nil {
		script, s = s[m[2]:m[3]], strings.TrimSpace(s[:m[0]])
	}
	p, clipped := strings.CutSuffix(s, "…")
	p = strings.TrimSpace(p)
	for i := len(rec.Checks) - 1; i >= 0; i-- {
		c := rec.Checks[i].Command
		if script != "" && Script(c) != script {
			continue
		}
		if spelled := strings.Join(strings.Fields(c), " "); spelled == s {
			return i // the line as the record spells it
		}
		if rec.Checks[i].Dir != dir && c != s {
			continue
		}
		n := rec.Checks[i].Normalized
		if n == s || c == s || clipped && len(p) >= 8 && strings.HasPrefix(n, p) {
			return i
		}
		if strings.Contains(c, "\n") {
			// Its lines joined as a summary spells them (Spelled).
			if sp := Spelled(c); sp == s || clipped && len(p) >= 8 && strings.HasPrefix(sp, p) {
				return i
			}
		}
	}
	return -1
}

// scriptMarkRE finds the mark ScriptMark appends to a clipped command.
var scriptMarkRE = regexp.MustCompile(`\s#\s?script ([0-9a-f]{6})$`)

// ScriptMark returns what a summary appends to a command line it clips
// (" # script D", a shell comment) so that the line names its inline script
// (see [Script]), "" for a line without one.
func ScriptMark(cmd string) string {
	if d := Script(cmd); d != "" {
		return " # script " + d
	}
	return ""
}

func checkClaim(line, lower string, ticks []string, rec *Record) string {
	if len(ticks) == 0 {
		return ""
	}
	at := strings.Index(line, "`"+ticks[0]+"`")
	after := line[at+len(ticks[0])+2:]
	dir := ""
	if len(ticks) > 1 && strings.HasPrefix(after, " in `"+ticks[1]+"`") {
		dir = ticks[1]
		after = after[len(" in `"+ticks[1]+"`"):]
	}
	i := matchCommand(ticks[0], dir, rec)
	if i < 0 {
		return ""
	}
	last := rec.Checks[i]
	// Only the text before the first command and right after it speaks about it.
	claim := line[:at] + after
	if j := strings.Index(after, "`"); j >= 0 {
		claim = line[:at] + after[:j]
	}
	passes, fails := passWordRE.MatchString(claim), claimFailRE.MatchString(claim)
	switch {
	case (passes || fails) && last.Outcome == Unknown && !last.Flagged:
		return fmt.Sprintf("says `%s` %s; its last run shows neither an exit code nor a runner's result line", ticks[0], map[bool]string{true: "passed", false: "failed"}[passes && !fails])
	case fails && !passes && last.Outcome == NoMatch && !strings.Contains(lower, "no match"):
		return fmt.Sprintf("says `%s` failed; it found no match (exit 1, no output)", ticks[0])
	case passes && !fails && last.Outcome == Failed:
		return fmt.Sprintf("says `%s` passed; its last run failed (%s)", ticks[0], exitText(last))
	case fails && !passes && last.Outcome == Passed && !fixedRE.MatchString(claim):
		return fmt.Sprintf("says `%s` failed; its last run passed", ticks[0])
	}
	return ""
}

func exitText(c Check) string {
	if c.HasExit {
		return fmt.Sprintf("exit %d", c.Exit)
	}
	return "flagged as an error"
}

var (
	changeWordRE  = regexp.MustCompile(`(?i)\b(modified|created|deleted|edited|written|wrote|moved|renamed|changed|updated|patched)\b`)
	negatedEditRE = regexp.MustCompile(`(?i)\b(rejected|not applied|was not|were not|never|failed|refused|denied|no change|only read|reverted)\b`)
)

// fileClaims reads the paths a line says were changed.
func fileClaims(line, lower string, ticks []string, rec *Record) []string {
	if len(ticks) == 0 || !changeWordRE.MatchString(line) || negatedEditRE.MatchString(line) {
		return nil
	}
	var out []string
	for _, t := range ticks {
		if strings.ContainsAny(t, " \t") || !strings.Contains(t, "/") && !strings.Contains(t, ".") {
			continue
		}
		known, changed := pathStatus(t, rec)
		if !changed && gitDirty(t, rec) {
			continue // git status says it changed, by whatever the record does not show
		}
		if known && !changed {
			out = append(out, fmt.Sprintf("says `%s` was changed; the record shows no change to it", t))
		}
	}
	return out
}

// pathStatus reports whether the record knows path (changed, rejected or
// read) and whether it was changed. Paths match on equality or on a
// trailing path segment boundary (relative against absolute).
// gitDirty reports whether the last git status of the record shows p not
// committed.
func gitDirty(p string, rec *Record) bool {
	for _, d := range rec.Worktree.Dirty {
		if d.Path == p || strings.HasSuffix(d.Path, "/"+p) || strings.HasSuffix(p, "/"+d.Path) {
			return true
		}
	}
	return false
}

func pathStatus(p string, rec *Record) (known, changed bool) {
	same := func(a string) bool {
		return a == p || strings.HasSuffix(a, "/"+p) || strings.HasSuffix(p, "/"+a)
	}
	for _, c := range rec.Changes {
		if same(c.Path) || (c.From != "" && same(c.From)) {
			return true, true
		}
	}
	for _, c := range rec.Rejected {
		if same(c.Path) {
			known = true
		}
	}
	for _, r := range rec.Reads {
		if same(r) {
			known = true
		}
	}
	return known, false
}

var (
	interruptRE = regexp.MustCompile(`(?i)\binterrupted\b`)
	notInterRE  = regexp.MustCompile(`(?i)\b(not|never|no call was|nothing was)\b[^.]{0,20}\binterrupted\b`)
	callIDRE    = regexp.MustCompile(`\b(call[_-]?[A-Za-z0-9_-]+|toolu_[A-Za-z0-9]+)\b`)
)

func interruptClaim(line, lower string, rec *Record) string {
	if !interruptRE.MatchString(line) || notInterRE.MatchString(line) || strings.Contains(lower, "user") {
		return ""
	}
	for _, id := range callIDRE.FindAllString(line, -1) {
		for _, a := range rec.Actions {
			if a.CallID == id && a.HasResult() {
				return fmt.Sprintf("says call %s was interrupted; it has a result", id)
			}
		}
	}
	for _, a := range rec.Actions {
		if !a.HasResult() {
			return ""
		}
	}
	return "says a call was interrupted; every call of the record has a result"
}

var (
	finalLineRE = regexp.MustCompile(`(?i)\bfinal\b|\bended\b|\bend state\b`)
	claimRE     = map[string]*regexp.Regexp{
		"submitted": regexp.MustCompile(`(?i)\b(was |were |been )?submitted\b`),
		"committed": regexp.MustCompile(`(?i)\b(was |were |been )?committed\b`),
		"pushed":    regexp.MustCompile(`(?i)\b(was |were |been )?pushed\b`),
	}
	notClaimRE = regexp.MustCompile(`(?i)\b(not|never|nothing|no)\b[^.,;]{0,20}$`)
)

func finalClaims(line, lower string, rec *Record) []string {
	if !finalLineRE.MatchString(line) {
		return nil
	}
	var out []string
	for _, k := range []string{"committed", "pushed", "submitted"} {
		loc := claimRE[k].FindStringIndex(line)
		if loc == nil || notClaimRE.MatchString(line[:loc[0]]) {
			continue
		}
		ok := false
		switch k {
		case "submitted":
			ok = rec.Final.Submitted
		case "committed":
			ok = len(rec.Final.Commits) > 0
		case "pushed":
			ok = rec.Final.Pushed
		}
		if !ok {
			out = append(out, fmt.Sprintf("says the work was %s; the record shows no such step", k))
		}
	}
	if n := len(rec.Final.Commits); n > 0 {
		newest := rec.Final.Commits[n-1]
		for _, m := range lastCommitRE.FindAllStringSubmatch(line, -1) {
			ref := strings.ToLower(m[1])
			if !strings.HasPrefix(newest.Ref, ref) && !strings.HasPrefix(ref, newest.Ref) {
				for _, c := range rec.Final.Commits[:n-1] {
					if strings.HasPrefix(c.Ref, ref) || strings.HasPrefix(ref, c.Ref) {
						out = append(out, fmt.Sprintf("says the last commit is %s; the record's last is %s", m[1], newest.Ref))
						break
					}
				}
			}
		}
	}
	return out
}

// lastCommitRE finds "the last <ref>", "committed <ref>", "last commit <ref>".
var lastCommitRE = regexp.MustCompile(`(?i)\b(?:the last|last commit|committed)\s+` + "`?" + `([0-9a-f]{7,40})\b`)
