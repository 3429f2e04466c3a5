package summary

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/vtcode/vtcode-ls/evidence"
)

// isPriorSummary reports whether text is an earlier summary: the summary
// message of a compaction, or the <summary_content> carrier of a second pass.
func isPriorSummary(text string) bool {
	return evidence.HasSummaryHeading(text) || strings.Contains(text, "<summary_content>")
}

// mergePrior reads the "## Section" blocks of an earlier summary.
func (f *facts) mergePrior(text string) {
	if i := strings.Index(text, "<summary_content>"); i >= 0 {
		text = text[i+len("<summary_content>"):]
		if j := strings.Index(text, "</summary_content>"); j >= 0 {
			text = text[:j]
		}
	}
	text = strings.TrimPrefix(strings.TrimSpace(text), evidence.SummaryHeading)
	text = f.mergePriorInstructions(text)
	sec := ""
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "## ") {
			title := strings.TrimSpace(t[3:])
			sec = canonicalSection(title)
			if strings.EqualFold(title, secFocus) {
				sec = secFocus
			}
			continue
		}
		if sec == secUser {
			if strings.HasPrefix(t, "- ") && !(strings.HasPrefix(t, "- (") && strings.HasSuffix(t, "omitted)")) {
				f.prior[secUser] = append(f.prior[secUser], strings.TrimPrefix(t, "- "))
			}
			continue
		}
		if sec == secFocus && t != "" {
			f.priorFocus = strings.TrimSpace(f.priorFocus + " " + t)
			continue
		}
		if sec == "" || t == "" || strings.EqualFold(t, "none") || strings.HasPrefix(t, "(") && strings.HasSuffix(t, "omitted)") {
			continue
		}
		if sec == secGoal {
			if f.priorGoal == "" {
				f.priorGoal = clip(t, goalChars)
			} else if strings.HasPrefix(t, "- ") {
				f.prior[secGoal] = append(f.prior[secGoal], strings.TrimPrefix(t, "- "))
			}
			continue
		}
		t = strings.TrimSpace(strings.TrimPrefix(t, "- "))
		if sec == secNext {
			t = strings.TrimSpace(strings.TrimLeft(t, "0123456789.) "))
		}
		if t != "" {
			f.prior[sec] = append(f.prior[sec], t)
		}
	}
}

func canonicalSection(title string) string {
	for _, s := range sectionOrder {
		if strings.EqualFold(title, s) {
			return s
		}
	}
	return ""
}

// shownRE finds a command as the summary shows it: "`cmd`" and an optional
// " in `dir`".
var shownRE = regexp.MustCompile("`[^`\n]+`(?: in `[^`\n]+`)?")

// callIDRE finds a tool call id in an earlier summary's line.
var callIDRE = regexp.MustCompile(`\bcall [A-Za-z0-9_.-]+|\b(?:call|toolu|fc)_[A-Za-z0-9_-]+`)

// shownKey returns the first command a summary line shows, "" for none.
func shownKey(l string) string { return shownRE.FindString(l) }

// list is one bounded section: the entries of earlier summaries first (in
// their order), then the new ones.
type list struct {
	title   string
	entries []entry
	cap     int
	numbers bool // a numbered list (next steps)
	// also names, on one line, the entries left out that have a short name
	// ("also changed: `a`, `b`"), within alsoBytes; the names beyond it are
	// counted, with where the record keeps them (alsoWhere).
	also      string
	alsoWhere string
	alsoBytes int
}

// pick returns the lines of l within its cap: the highest-priority entries,
// shown in order, with a line saying how many were left out.
func (l *list) pick() []string {
	es := l.entries
	keep := make([]bool, len(es))
	if len(es) > l.cap {
		idx := make([]int, len(es))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return es[idx[a]].prio > es[idx[b]].prio })
		for _, k := range idx[:max(0, l.cap)] {
			keep[k] = true
		}
	} else {
		for i := range keep {
			keep[i] = true
		}
	}
	out := make([]string, 0, len(es)+2)
	var also []int // left out, with a short name: by rank
	n, skipped := 0, 0
	flush := func() {
		if skipped == 0 {
			return
		}
		note := fmt.Sprintf("(%d more omitted)", skipped)
		if !l.numbers {
			note = "- " + note
		}
		out = append(out, note)
		skipped = 0
	}
	for i, e := range es {
		if !keep[i] && l.also != "" && e.short != "" {
			also = append(also, i)
			continue
		}
		if !keep[i] {
			skipped++
			continue
		}
		flush()
		n++
		if l.numbers {
			out = append(out, fmt.Sprintf("%d. %s", n, e.text))
		} else {
			out = append(out, "- "+e.text)
		}
	}
	flush()
	if len(also) > 0 {
		sort.SliceStable(also, func(a, b int) bool { return es[also[a]].prio > es[also[b]].prio })
		line := "- " + l.also + ": "
		shown := 0
		for _, i := range also {
			name := es[i].short
			if shown > 0 {
				name = ", " + name
			}
			if shown > 0 && len(line)+len(name) > l.alsoBytes {
				break
			}
			line += name
			shown++
		}
		if more := len(also) - shown; more > 0 {
			line += fmt.Sprintf(" … and %d more (%s)", more, l.alsoWhere)
		}
		out = append(out, line)
	}
	return out
}

// priorEntries turns an earlier summary's lines of a section into entries
// that rank with the new ones (prio) and come first.
func priorEntries(lines []string, prio int, skip func(string) bool) []entry {
	var out []entry
	for i, l := range lines {
		if skip != nil && skip(l) {
			continue
		}
		out = append(out, entry{text: l, prio: prio, order: -1<<20 + i})
	}
	return out
}

// dedupe drops entries whose text repeats an earlier one.
func dedupe(es []entry) []entry {
	seen := map[string]bool{}
	out := es[:0:0]
	for _, e := range es {
		k := strings.ToLower(e.text)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, e)
	}
	return out
}

func sortByOrder(es []entry) []entry {
	sort.SliceStable(es, func(a, b int) bool { return es[a].order < es[b].order })
	return es
}

// render writes the sections within limit bytes, shrinking the lists (least
// important first) until the text fits.
func (f *facts) render(ctx context.Context, limit int) (string, error) {
	// Project instructions are carried verbatim, whatever their size: they
	// may take up to half of the bound, and what they need beyond it is
	// added to it, so that a long AGENTS.md does not leave the summary's
	// own sections no room (the rest of the record is the summary's job).
	if len(f.instructions) > 0 {
		need := len("\n## "+secInstructions+"\n") + len(evidence.FormatInstructions(f.instructions))
		limit = max(limit, need+limit/2)
	}
	pathOfLine := func(l string) string {
		if strings.HasPrefix(l, "`") {
			if i := strings.Index(l[1:], "`"); i >= 0 {
				return l[1 : 1+i]
			}
		}
		return ""
	}
	newFiles := map[string]bool{}
	for _, e := range f.files {
		newFiles[pathOfLine(e.text)] = true
	}
	// The user's words get a quarter of the bound, more in a session of
	// many messages (up to half), so that every message keeps some form.
	f.userCap = min(limit/2, max(limit/4, userMsgChars+(len(f.typed)+len(f.prior[secUser]))*(userFloorChars+4)))
	requests := &list{title: "", entries: dedupe(sortByOrder(append(priorEntries(f.prior[secGoal], 50, nil), f.requests...))), cap: 16}
	restrict := &list{title: secRestrict, entries: dedupe(append(priorEntries(f.prior[secRestrict], 1, nil), f.restrictions...)), cap: 30}
	// An earlier summary's line about a command that ran again, or a call
	// that has a result now, is superseded by the record.
	stale := func(l string) bool {
		if k := shownKey(l); k != "" && f.ran[k] {
			return true
		}
		for _, id := range callIDRE.FindAllString(l, -1) {
			if f.answered[id] {
				return true
			}
		}
		return false
	}
	checks := &list{title: secChecks, entries: dedupe(append(priorEntries(f.prior[secChecks], 40, stale), f.checks...)), cap: 30}
	pending := &list{title: secPending, entries: dedupe(append(priorEntries(f.prior[secPending], 90, stale), f.pending...)), cap: 8}
	decisions := &list{title: secDecisions, entries: dedupe(append(priorEntries(f.prior[secDecisions], 5, nil), f.decisions...)), cap: 8}
	// A changed file or a commit the list leaves out keeps its name on the
	// list's "also" line: files within an eighth of the bound, commits
	// always (they are few, and a resuming engineer needs every one).
	// On the "also" line a changed file under the workspace is named
	// relative to it, as the section's "(workspace …)" line says.
	for i, e := range f.files {
		if e.short == "" {
			continue
		}
		p := e.short
		if rel, ok := strings.CutPrefix(p, strings.TrimSuffix(f.workDir, "/")+"/"); ok && f.workDir != "" && rel != "" {
			p = rel
		}
		f.files[i].short = "`" + p + "`"
	}
	files := &list{title: secFiles, entries: dedupe(append(priorEntries(f.prior[secFiles], 60, func(l string) bool { return newFiles[pathOfLine(l)] }), f.files...)), cap: 40,
		also: "also changed", alsoWhere: "the record's edits; git status", alsoBytes: limit / 8}
	commits := &list{title: secCommits, entries: dedupe(append(priorEntries(f.prior[secCommits], -1, nil), f.commits...)), cap: 40,
		also: "also committed", alsoWhere: "git log", alsoBytes: max(limit/8, 64*len(f.commits))}
	commands := &list{title: secCommands, entries: dedupe(append(priorEntries(f.prior[secCommands], -1, nil), f.commands...)), cap: 40}
	errs := &list{title: secErrors, entries: dedupe(append(priorEntries(f.prior[secErrors], 60, nil), f.errors...)), cap: 24}
	nextEntries := f.next
	if len(nextEntries) == 0 {
		nextEntries = priorEntries(f.prior[secNext], 1, stale)
	}
	sort.SliceStable(nextEntries, func(a, b int) bool { return nextEntries[a].prio > nextEntries[b].prio })
	for i := range nextEntries {
		nextEntries[i].order = i
	}
	next := &list{title: secNext, entries: dedupe(nextEntries), cap: 6, numbers: true}
	// Least important first, and faster; restrictions shrink last.
	shrink := []*list{decisions, requests, files, commands, checks, errs, commits, pending, next, restrict}
	floors := map[*list]int{decisions: 1, requests: 2, files: 6, commands: 4, checks: 4, errs: 3, commits: 3, pending: 2, next: 2, restrict: 4}
	rate := map[*list]int{decisions: 50, requests: 70, files: 75, commands: 75, checks: 80, errs: 80, commits: 85, pending: 90, next: 90, restrict: 90} // percent kept per round
	for range 64 {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		out := f.renderWith(requests, restrict, checks, commands, pending, decisions, files, commits, errs, next)
		if len(out) <= limit {
			return out, nil
		}
		shrunk := false
		for _, l := range shrink {
			if l.cap > floors[l] && l.cap > 0 && len(l.entries) > floors[l] {
				l.cap = max(floors[l], min(l.cap, len(l.entries))*rate[l]/100)
				shrunk = true
			}
			if out := f.renderWith(requests, restrict, checks, commands, pending, decisions, files, commits, errs, next); len(out) <= limit {
				return out, nil
			}
		}
		if floor := f.userFloor(limit); !shrunk && f.userCap > floor {
			// The lists are at their floors: fewer of the user's words.
			f.userCap = max(floor, f.userCap*2/3)
			continue
		}
		if !shrunk && (f.textCap == 0 || f.textCap > minTextCap) {
			// The lists are at their floors: shorten the prose next.
			if f.textCap == 0 {
				f.textCap = 2 * maxTextCap
			}
			f.textCap = max(minTextCap, f.textCap/2)
			continue
		}
		if !shrunk && f.userCap > 0 {
			// The record's lists below their floors before the user's words
			// go (what the user typed is what the agent must obey on
			// resume); if even that does not fit, the lists stay at their
			// floors and the goal and the restrictions still quote the user.
			if out, ok := f.belowFloors(limit, shrink, requests, restrict, checks, commands, pending, decisions, files, commits, errs, next); ok {
				return out, nil
			}
			f.userCap = 0
			continue
		}
		if !shrunk {
			for _, l := range shrink {
				if l.cap > 0 {
					l.cap--
					shrunk = true
					break
				}
			}
		}
		if !shrunk {
			break
		}
	}
	out := f.renderWith(requests, restrict, checks, commands, pending, decisions, files, commits, errs, next)
	if len(out) > limit {
		cut := strings.LastIndex(out[:limit], "\n")
		if cut <= 0 {
			cut = limit
			for cut > 0 && !utf8.RuneStart(out[cut]) {
				cut--
			}
		}
		out = out[:cut]
	}
	return out, nil
}

func (f *facts) renderWith(requests, restrict, checks, commands, pending, decisions, files, commits, errs, next *list) string {
	var b strings.Builder
	section := func(title string, lines []string) {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString("## " + title + "\n")
		if len(lines) == 0 {
			b.WriteString("none\n")
			return
		}
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
	}
	prose := func(t string) string {
		if f.textCap > 0 {
			return clip(t, f.textCap)
		}
		return t
	}
	if wip := append(append([]string(nil), f.wip...), f.priorWIP()...); len(wip) > 0 {
		lines := make([]string, len(wip))
		for i, l := range wip {
			if t := strings.TrimLeft(l, " "); t != l {
				lines[i] = "  - " + t // a plan item, under its plan
			} else {
				lines[i] = "- " + l
			}
		}
		section(secWIP, lines)
	}
	var goal []string
	if f.goal != "" {
		goal = append(goal, prose(f.goal))
	}
	said, shown := f.userWords()
	if len(requests.entries) > 0 {
		rest := &list{entries: make([]entry, 0, len(requests.entries)), cap: requests.cap}
		for _, e := range requests.entries {
			if !shown[e.order] {
				rest.entries = append(rest.entries, e)
			}
		}
		if len(rest.entries) > 0 {
			goal = append(goal, "Later requests from the user, in order:")
			goal = append(goal, rest.pick()...)
		}
	}
	section(secGoal, goal)
	if len(said) > 0 {
		section(secUser, said)
	}
	section(secRestrict, restrict.pick())
	doing := f.doing
	if len(doing) == 0 {
		doing = f.prior[secDoing]
	}
	section(secDoing, bullets(doing, prose))
	last := f.last
	if len(last) == 0 {
		last = f.prior[secLast]
	}
	section(secLast, bullets(sameReply(doing, last), prose))
	section(secChecks, checks.pick())
	if len(commands.entries) > 0 {
		section(secCommands, commands.pick())
	}
	section(secPending, pending.pick())
	section(secDecisions, decisions.pick())
	fl := files.pick()
	if f.workDir != "" && len(fl) > 0 {
		fl = append([]string{"(workspace `" + f.workDir + "`)"}, fl...)
	}
	section(secFiles, fl)
	if len(commits.entries) > 0 {
		section(secCommits, commits.pick())
	}
	section(secErrors, errs.pick())
	section(secNext, next.pick())
	if len(f.instructions) > 0 {
		b.WriteString("\n## " + secInstructions + "\n")
		b.WriteString(evidence.FormatInstructions(f.instructions))
	}
	return strings.TrimRight(b.String(), "\n")
}

// secUser carries the messages the user typed, verbatim, the latest first,
// within a byte budget: requests, restrictions and answers to the agent's
// questions are the user's own words, which no rule should paraphrase.
const secUser = "The user's messages (verbatim, latest first)"

// Bounds of the user's verbatim messages.
const (
	userMsgChars = 1500 // one message
	minUserCap   = 600  // all of them, under the tightest bound
)

// belowFloors shrinks the record's lists of shrink (not the restrictions,
// not the next steps) below their floors, the least important first, a
// quarter at a time, until the text fits limit; when it never does, every cap is as it was and ok is
// false.
func (f *facts) belowFloors(limit int, shrink []*list, requests, restrict, checks, commands, pending, decisions, files, commits, errs, next *list) (string, bool) {
	saved := make([]int, len(shrink))
	for i, l := range shrink {
		saved[i] = l.cap
	}
	for _, l := range shrink {
		for l != restrict && l != next && l.cap > 0 {
			l.cap = min(l.cap-1, l.cap*3/4)
			if out := f.renderWith(requests, restrict, checks, commands, pending, decisions, files, commits, errs, next); len(out) <= limit {
				return out, true
			}
		}
	}
	for i, l := range shrink {
		l.cap = saved[i]
	}
	return "", false
}

// userFloor is the least of the bound the user's verbatim messages keep
// while the lists shrink: every message at userFloorChars (the latest at
// twice that), at least minUserCap, at most a quarter of the bound.
func (f *facts) userFloor(limit int) int {
	n := len(f.typed) + len(f.prior[secUser])
	return min(limit/4, max(minUserCap, (n+1)*(userFloorChars+4)))
}

// userWords returns the lines of the user's verbatim messages within
// f.userCap bytes, the latest first, and the indexes of the messages shown
// in some form (the goal's later requests need not repeat them). Every
// message is shown in some form: the latest up to
// userMsgChars, the others whole when short and cut with a marker when
// long, all of them to one width, the widest that fits; only when even
// userFloorChars each do not fit are the oldest omitted, with their count.
// The first message is left out when the goal quotes it.
func (f *facts) userWords() ([]string, map[int]bool) {
	shown := map[int]bool{}
	if f.userCap <= 0 {
		return nil, shown
	}
	// The messages of this record, then those an earlier summary carried
	// (older, and already latest first).
	all := make([]entry, 0, len(f.typed)+len(f.prior[secUser]))
	for i := len(f.typed) - 1; i >= 0; i-- {
		if i == 0 && f.priorGoal == "" && quotes(f.goal, f.typed[0].text) {
			continue // the goal quotes it
		}
		all = append(all, f.typed[i])
	}
	for _, l := range f.prior[secUser] {
		all = append(all, entry{text: l, order: -1})
	}
	if len(all) == 0 {
		return nil, shown
	}
	left := f.userCap
	latest := cutMarked(all[0].text, min(userMsgChars, max(minTextCap, left/2)))
	left -= len(latest) + 4
	rest := all[1:]
	// The widest width at which the rest fit, at least userFloorChars; the
	// oldest are dropped until they fit at that floor.
	need := func(width int, es []entry) int {
		n := 0
		for _, e := range es {
			n += len(cutMarked(e.text, width)) + 4
		}
		return n
	}
	keep := len(rest)
	for keep > 0 && need(userFloorChars, rest[:keep]) > left {
		keep--
	}
	width := userFloorChars
	for lo, hi := userFloorChars, userMsgChars; lo <= hi; {
		mid := (lo + hi) / 2
		if need(mid, rest[:keep]) <= left {
			width, lo = mid, mid+1
		} else {
			hi = mid - 1
		}
	}
	out := []string{"- " + latest}
	if all[0].order >= 0 {
		shown[all[0].order] = true
	}
	for _, e := range rest[:keep] {
		if e.order >= 0 {
			shown[e.order] = true
		}
		out = append(out, "- "+cutMarked(e.text, width))
	}
	if omitted := len(rest) - keep; omitted > 0 {
		out = append(out, fmt.Sprintf("- (%d earlier messages omitted)", omitted))
	}
	return out, shown
}

// userFloorChars is the width every user message is shown at, at least,
// when the bound allows.
const userFloorChars = 100

// minSplitChars is the narrowest cut that keeps both ends of a message.
const minSplitChars = 240

// quotes reports whether the goal line shows text (whole, or its start
// clipped with "…").
func quotes(goal, text string) bool {
	g := strings.TrimSpace(goal)
	if g == text {
		return true
	}
	p, clipped := strings.CutSuffix(g, "…")
	return clipped && len(p) > 0 && strings.HasPrefix(text, p)
}

// cutMarked returns s whole when it has at most n bytes, else its start
// and its end around a marker saying how much was cut: the words a user
// types around a paste (a log, a document) open or close the message. A
// narrow cut keeps the start only.
func cutMarked(s string, n int) string {
	if len(s) <= n {
		return s
	}
	room := max(0, n-len(" … [99999 bytes cut] … "))
	head := room * 3 / 5
	if room < minSplitChars {
		head = room // too narrow to say something at both ends: the start
	}
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	tail := len(s) - (room - head)
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	if tail <= head {
		tail = head
	}
	if tail >= len(s) {
		return fmt.Sprintf("%s … [%d bytes cut]", strings.TrimRight(s[:head], " "), len(s)-head)
	}
	return fmt.Sprintf("%s … [%d bytes cut] … %s", strings.TrimRight(s[:head], " "), tail-head, strings.TrimLeft(s[tail:], " "))
}

// Bounds of the free-text lines under a tight output bound.
const (
	maxTextCap = 240
	minTextCap = 80
)

func bullets(xs []string, prose func(string) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = "- " + prose(x)
	}
	return out
}

// sameReply replaces, in the last-action lines, a reply of the assistant that
// the what-was-being-done lines already quote, so that the same text is not
// written twice.
func sameReply(doing, last []string) []string {
	quoted := map[string]bool{}
	for _, d := range doing {
		if _, after, ok := strings.Cut(d, ": "); ok {
			quoted[after] = true
		}
	}
	out := make([]string, 0, len(last))
	for _, l := range last {
		label, after, ok := strings.Cut(l, ": ")
		if ok && strings.Contains(strings.ToLower(label), "replied") && quoted[after] && !strings.HasPrefix(after, "(") {
			out = append(out, label+": (the latest assistant step above)")
			continue
		}
		out = append(out, l)
	}
	return out
}
