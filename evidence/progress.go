package evidence

import (
	"path"
	"regexp"
	"slices"
	"strings"
)

// PlanItem is one item of the agent's plan, as the agent wrote it.
type PlanItem struct {
	Text   string
	Status string // as written: "completed", "in_progress", "pending", …
	ID     string // the item's id when the tool gives one, "" otherwise
}

// Plan is the agent's own plan as it last wrote it: the arguments of its
// last call of a plan tool (Claude Code's TodoWrite, Codex's update_plan,
// opencode's todowrite, Gemini CLI's write_todos, or any tool whose
// arguments hold a list of items that each have a text and a status), or
// the tasks it created one per call and updated by id (Claude Code's
// TaskCreate and TaskUpdate).
type Plan struct {
	Tool  string
	Index int // message index of the call
	Items []PlanItem
	// Note is what the agent wrote with the plan besides its items (the
	// other string arguments of the call, such as Codex's update_plan
	// explanation), "" when none: the agent's own word on where it stands.
	Note string
}

// Active returns the index in p.Items of the item in progress, -1 when none.
func (p *Plan) Active() int {
	if p == nil {
		return -1
	}
	for i, it := range p.Items {
		if planStatus(it.Status) == planActive {
			return i
		}
	}
	return -1
}

// NextOpen returns the index of the first open item after the active one
// (or the first open item when none is active), -1 when none.
func (p *Plan) NextOpen() int {
	if p == nil {
		return -1
	}
	for i := p.Active() + 1; i < len(p.Items); i++ {
		if planStatus(p.Items[i].Status) == planOpen {
			return i
		}
	}
	return -1
}

// Done reports whether item i is finished (done or cancelled).
func (p *Plan) Done(i int) bool { return planStatus(p.Items[i].Status) == planDone }

type planState int

const (
	planOpen planState = iota
	planActive
	planDone
)

// planStatus reads a status word: "in_progress", "in-progress", "active",
// "doing" are active; "completed", "done", "cancelled", "skipped" are done;
// anything else ("pending", "todo", "not_started") is open.
func planStatus(s string) planState {
	n := strings.NewReplacer("-", "", "_", "", " ", "").Replace(strings.ToLower(s))
	switch n {
	case "inprogress", "active", "doing", "started", "running", "current":
		return planActive
	case "completed", "complete", "done", "finished", "cancelled", "canceled", "skipped", "succeeded", "success":
		return planDone
	}
	return planOpen
}

// planTextKeys and planStatusKeys are the fields a plan item holds its text
// and its status in.
var (
	planTextKeys   = []string{"content", "step", "description", "title", "text", "task", "name", "subject"}
	planStatusKeys = []string{"status", "state"}
)

// planOf returns the plan a tool call's arguments write: a list (under any
// key) of at least one object, every one with a text and a status. A call
// that reads the plan (no such list) returns nil.
func planOf(a *Action) *Plan {
	if len(a.Args) == 0 {
		return nil
	}
	merging, _ := a.Args["merge"].(bool)
	keys := make([]string, 0, len(a.Args))
	for k := range a.Args {
		keys = append(keys, k)
	}
	// One order for a call with two lists.
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	for _, k := range keys {
		list, ok := a.Args[k].([]any)
		if !ok || len(list) == 0 {
			continue
		}
		items := make([]PlanItem, 0, len(list))
		for _, e := range list {
			o, ok := e.(map[string]any)
			if !ok {
				items = nil
				break
			}
			text, status := firstString(o, planTextKeys), firstString(o, planStatusKeys)
			// An update by id (a merge) may give only the status.
			if status == "" || text == "" && !(merging && scalar(o["id"]) != "") {
				items = nil
				break
			}
			items = append(items, PlanItem{Text: text, Status: status, ID: scalar(o["id"])})
		}
		if items != nil {
			var note []string
			for _, o := range keys {
				if v, isStr := a.Args[o].(string); isStr && o != k && strings.TrimSpace(v) != "" {
					note = append(note, strings.TrimSpace(v))
				}
			}
			return &Plan{Tool: a.Tool, Index: a.Index, Items: items, Note: strings.Join(note, " ")}
		}
	}
	return nil
}

func firstString(o map[string]any, keys []string) string {
	for _, k := range keys {
		if s, ok := o[k].(string); ok && strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

// mergePlan folds a plan call into the plan so far: a call whose arguments
// say merge (Cursor's todo_write {"merge": true}) updates the items it names
// by id and adds the others; any other call replaces the plan.
func mergePlan(old, p *Plan, a *Action) *Plan {
	if m, _ := a.Args["merge"].(bool); !m || old == nil {
		return p
	}
	out := &Plan{Tool: p.Tool, Index: p.Index, Items: append([]PlanItem(nil), old.Items...)}
	for _, it := range p.Items {
		found := false
		for i := range out.Items {
			if it.ID != "" && out.Items[i].ID == it.ID {
				if it.Text == "" {
					it.Text = out.Items[i].Text
				}
				out.Items[i], found = it, true
				break
			}
		}
		if !found && it.Text != "" {
			out.Items = append(out.Items, it)
		}
	}
	return out
}

// LastCommit returns the message index of the last commit the record shows,
// -1 when none.
func (r *Record) LastCommit() int {
	last := -1
	for _, c := range r.Final.Commits {
		last = max(last, c.Index)
	}
	return last
}

// Uncommitted returns the paths changed after the last commit the record
// shows (every changed path when it shows none), in first-change order;
// nil when the run submitted its work. A path deleted after the commit is
// listed too (the deletion is not committed either), unless it was created
// after the commit: a scratch file made and removed changes nothing.
func (r *Record) Uncommitted() []string {
	if r.Final.Submitted {
		return nil
	}
	after := r.LastCommit()
	var out []string
	first, last := map[string]Op{}, map[string]Op{}
	for _, c := range r.Changes {
		if c.Index <= after {
			continue
		}
		if _, ok := first[c.Path]; !ok {
			first[c.Path] = c.Op
			out = append(out, c.Path)
		}
		last[c.Path] = c.Op
	}
	kept := out[:0]
	for _, p := range out {
		if !(first[p] == Created && last[p] == Deleted) {
			kept = append(kept, p)
		}
	}
	return kept
}

// DeletedAfter reports whether a file a command names was deleted after
// message index i (and not written again): a failure of a check of that file
// is moot.
func (r *Record) DeletedAfter(cmd string, i int) bool {
	targets := checkTargets(cmd)
	if len(targets) == 0 {
		return false
	}
	for _, t := range targets {
		gone := false
		for _, ch := range r.Changes {
			if ch.Index > i && (ch.Path == t || pathSuffix(ch.Path, t) || pathSuffix(t, ch.Path)) {
				gone = ch.Op == Deleted
			}
		}
		if gone {
			return true
		}
	}
	return false
}

// Stale is a check whose last run came before an edit it covers.
type Stale struct {
	Check int    // index in Record.Checks of the check's last run
	Path  string // the latest edit after it that it covers
}

// docExts are the extensions of files no build or test reads.
var docExts = map[string]bool{".md": true, ".txt": true, ".rst": true, ".adoc": true}

// StaleChecks returns the checks (the commands isCheck accepts, but not
// inspections nor commands that write files) whose last run came before an
// edit it covers of a path inScope accepts, the latest run first; none when
// the run submitted its work. A check is read
// by its simple commands (`ruff check x/ && pytest` is two); one of them is
// re-run by any later run whose words hold all of its words (flags aside).
// A command that names files or folders covers edits of those; one that
// names none covers every edit but of documentation. A command the shell
// could not run (exit 126 or 127) checked nothing. A check whose last run
// reported no outcome (Unknown) is not reported by an earlier run: the
// summary and [Contradictions] both speak of a check's last run. A failure a
// later run fixed (FixedBy) is not reported: the later run is the check.
func (r *Record) StaleChecks(isCheck func(cmd string) bool, inScope func(path string) bool) []Stale {
	ran := func(c *Check) bool {
		return (c.Outcome == Passed || c.Outcome == Failed) && !(c.HasExit && (c.Exit == 126 || c.Exit == 127))
	}
	words := make([][]string, len(r.Checks))
	for i := range r.Checks {
		words[i] = commandWords(r.Checks[i].Command)
	}
	if r.Final.Submitted {
		return nil
	}
	var out []Stale
	reported := map[string]bool{}
	for i := len(r.Checks) - 1; i >= 0; i-- {
		c := &r.Checks[i]
		if c.Outcome == Unknown && isCheck(c.Command) {
			// Its last run reported no outcome: an earlier run's outcome
			// is not the check's, so it is not reported stale by it.
			reported[c.Normalized+"\x00"+c.Dir] = true
		}
		if !ran(c) || !isCheck(c.Command) || reported[c.Normalized+"\x00"+c.Dir] {
			continue
		}
		if c.Outcome == Failed && c.FixedBy >= 0 {
			continue // a later run made it good: that run's staleness is the one
		}
		if strings.HasPrefix(c.Dir, "/") && !inScope(path.Join(c.Dir, "_")) {
			continue // it ran in another folder (a scratch program in /tmp)
		}
		latest := ""
		for _, seg := range segments(c.Command) {
			if !isCheck(seg) || IsInspection(seg) || len(shellChanges(seg)) > 0 {
				continue
			}
			targets, want := checkTargets(seg), commandWords(seg)
			edit, editIdx := "", -1
			for _, ch := range r.Changes {
				// A deleted file is not checked again.
				if ch.Index > c.Index && ch.Op != Deleted && inScope(ch.Path) && covers(targets, ch.Path) {
					edit, editIdx = ch.Path, ch.Index
				}
			}
			if edit == "" {
				continue
			}
			rerun := false
			for j := i + 1; j < len(r.Checks) && !rerun; j++ {
				rerun = r.Checks[j].Index > editIdx && ran(&r.Checks[j]) && (coversWords(words[j], want) || rechecks(r.Checks[j].Command, seg))
			}
			if !rerun {
				latest = edit
				break
			}
		}
		reported[c.Normalized+"\x00"+c.Dir] = true
		if latest != "" {
			out = append(out, Stale{Check: i, Path: latest})
		}
	}
	return out
}

// rechecks reports whether a later command runs the same program over
// targets that hold those of seg (flags and test selectors aside): `go test
// ./...` re-checks `go test -run TestX ./internal/api`, `pytest tests/`
// re-checks `pytest tests/test_a.py::test_b`. A seg that names no target is
// re-checked only by a run that names none either, or the whole tree.
func rechecks(later, seg string) bool {
	prog := programWords(seg)
	if len(prog) == 0 {
		return false
	}
	for _, s := range segments(later) {
		have := commandWords(s)
		if !coversWords(have, prog) {
			continue
		}
		targets, haveTargets := checkTargets(seg), checkTargets(s)
		if len(targets) == 0 {
			if len(haveTargets) == 0 || slices.ContainsFunc(have, func(w string) bool { return w == "./..." || w == "." }) {
				return true
			}
			continue
		}
		if coversWords(have, targets) {
			return true
		}
	}
	return false
}

// rechecksAll reports whether a later command re-checks every simple
// command of segs that runs a program (see rechecks): the same program and
// subcommand over targets that hold the failed run's, whatever the flags
// and test selectors.
func rechecksAll(later string, segs []string) bool {
	n := 0
	for _, seg := range segs {
		if len(programWords(seg)) == 0 {
			continue
		}
		if !rechecks(later, seg) {
			return false
		}
		n++
	}
	return n > 0
}

// shellBuiltins set up the shell for the commands after them.
var shellBuiltins = map[string]bool{"cd": true, "pushd": true, "popd": true, "export": true, "source": true, ".": true, "set": true, "unset": true, "env": true, "true": true, "echo": true}

// programWords returns the words of a simple command before its first flag
// or target: the program and its subcommand ("go test", "uv run pytest").
func programWords(seg string) []string {
	var out []string
	w := shellWords(seg)
	if len(w) > 0 && shellBuiltins[w[0]] {
		return nil // it sets up the shell, it checks nothing
	}
	for _, w := range w {
		if strings.HasPrefix(w, "-") || strings.ContainsAny(w, "/.=") {
			break
		}
		out = append(out, w)
	}
	return out
}

// checkTargets returns the files and folders a command names: its words
// that look like paths, without a test selector ("::TestX") or Go's "/...".
func checkTargets(cmd string) []string {
	var out []string
	for _, w := range commandWords(cmd) {
		if strings.Contains(w, "=") || strings.ContainsAny(w, "$<>|&\"'") {
			continue
		}
		w, _, _ = strings.Cut(w, "::")
		w = strings.TrimSuffix(strings.TrimSuffix(w, "/..."), "...")
		w = strings.TrimPrefix(w, "./")
		if w == "" || w == "." {
			return nil // the whole tree
		}
		if strings.Contains(w, "/") || path.Ext(w) != "" && looksLikeFile(w) {
			out = append(out, strings.TrimSuffix(w, "/"))
		}
	}
	return out
}

// covers reports whether a check naming targets covers an edit of p.
func covers(targets []string, p string) bool {
	if len(targets) == 0 {
		return !docExts[strings.ToLower(path.Ext(p))]
	}
	for _, t := range targets {
		if p == t || pathSuffix(p, t) || pathSuffix(t, p) || strings.HasPrefix(p, t+"/") || strings.Contains(p, "/"+t+"/") {
			return true
		}
	}
	return false
}

// Proposal is a plan the agent wrote as a document and proposed for the
// user's approval: the "plan" text of a call that runs no command (Claude
// Code's ExitPlanMode), and the file the agent wrote that text to first.
type Proposal struct {
	Index int    // message index of the call
	Title string // the plan's first line, without its heading marks
	Text  string // the plan as proposed
	// Path is the file the agent wrote the plan to (a write whose content
	// starts with the plan's first line), "" when none.
	Path string
	// State is "rejected" (the user refused it), "approved" (the call has
	// a result that is no error) or "awaiting the user" (no result yet).
	State string
}

// minProposal is the shortest plan text read as a proposed plan.
const minProposal = 40

// proposal returns the plan a call proposes, nil when it proposes none.
func (x *extractor) proposal(ai int, a *Action) *Proposal {
	if a.Command != "" || len(a.Args) == 0 {
		return nil
	}
	text, _ := a.Args["plan"].(string)
	text = strings.TrimSpace(text)
	if len(text) < minProposal {
		return nil
	}
	p := &Proposal{Index: a.Index, Text: text, Title: planTitle(text)}
	switch {
	case a.Rejected || a.Flagged:
		p.State = "rejected"
	case a.HasResult():
		p.State = "approved"
	default:
		p.State = "awaiting the user"
	}
	// The file written with the same first line, latest first.
	for i := ai; i >= 0; i-- {
		w := &x.r.Actions[i]
		content, _ := w.Args["content"].(string)
		if content == "" || w.Rejected || w.Flagged {
			continue
		}
		if planTitle(content) == p.Title {
			p.Path = firstString(w.Args, []string{"file_path", "path", "filePath", "filename"})
			if p.Path != "" {
				break
			}
		}
	}
	return p
}

// planTitle returns the first non-empty line of a plan, without its
// Markdown heading marks.
func planTitle(text string) string {
	for _, l := range strings.Split(text, "\n") {
		if t := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "#")); t != "" {
			return t
		}
	}
	return ""
}

// Answer is the user's answer to the agent's questions: the result of a
// call that asked them, as the harness reported it.
type Answer struct {
	Index int // message index of the result
	Text  string
}

// maxAnswer bounds the text of one answer.
const maxAnswer = 8 << 10

// isQuestion reports whether a call asks the user: its arguments hold a
// "question" text, or a list of "questions" that each have one.
func isQuestion(a *Action) bool {
	if a.Command != "" || len(a.Args) == 0 {
		return false
	}
	if q, ok := a.Args["question"].(string); ok && strings.TrimSpace(q) != "" {
		return true
	}
	list, ok := a.Args["questions"].([]any)
	if !ok || len(list) == 0 {
		return false
	}
	for _, e := range list {
		o, ok := e.(map[string]any)
		if !ok || firstString(o, []string{"question", "text", "prompt"}) == "" {
			return false
		}
	}
	return true
}

// taskToolMark is how a plan built from one-task calls names its tool.
const taskToolMark = "tasks: "

// taskIDRE finds the id a task tool's result gives the task it created
// ("Task #3 created successfully").
var taskIDRE = regexp.MustCompile(`#(\d+)\b`)

// taskPlan folds a call of a one-task-per-call tool into the plan: a call
// with a "subject" (or "title") and no task id creates an open item, its id
// from the result ("Task #3 created"); a call with a task id and a status
// sets that item's status (Claude Code's TaskCreate and TaskUpdate). Any
// other call leaves the plan as it is.
func taskPlan(p *Plan, a *Action) *Plan {
	if a.Command != "" || len(a.Args) == 0 {
		return p
	}
	id := scalar(a.Args["taskId"])
	if id == "" {
		id = scalar(a.Args["task_id"])
	}
	subject := firstString(a.Args, []string{"subject"})
	status, _ := a.Args["status"].(string)
	tasks := p != nil && strings.HasPrefix(p.Tool, taskToolMark)
	switch {
	case id == "" && subject != "" && status == "" && a.HasResult():
		head := HeadBytes(a.Output, 512)
		m := taskIDRE.FindStringSubmatch(head)
		if m == nil || !strings.Contains(strings.ToLower(head), "task") {
			return p
		}
		out := &Plan{Tool: taskToolMark + a.Tool, Index: a.Index}
		if tasks {
			out.Items = append(out.Items, p.Items...)
			out.Tool = p.Tool
			if !strings.Contains(p.Tool, a.Tool) {
				out.Tool += ", " + a.Tool
			}
		}
		out.Items = append(out.Items, PlanItem{Text: subject, Status: "pending", ID: m[1]})
		return out
	case id != "" && tasks && (status != "" || subject != ""):
		out := &Plan{Tool: p.Tool, Index: a.Index, Items: append([]PlanItem(nil), p.Items...)}
		if !strings.Contains(out.Tool, a.Tool) {
			out.Tool += ", " + a.Tool
		}
		for i := range out.Items {
			if out.Items[i].ID == id {
				if status != "" {
					out.Items[i].Status = status
				}
				if subject != "" {
					out.Items[i].Text = subject
				}
			}
		}
		return out
	}
	return p
}
