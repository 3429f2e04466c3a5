// Package evidence reads, from a coding-agent history, what the record shows
// happened: the checks that ran (command, exit code, passed or failed, and
// whether a later run fixed a failure), the files changed (through editor
// tools, patches or a shell) and the files only read, the distinct errors,
// the final state (last check, committed, pushed, released, submitted), the
// simple commands run inside chains and scripts ([Record.Commands]), whether
// the user stopped the agent's last turn, and which user-role messages were
// typed by the user rather than injected by the agent's harness (reminders,
// environment blocks, command echoes, continuation summaries, tool
// observations, format nags). A Codex code-mode script (the `exec` tool
// running JavaScript) is read as the shell calls it makes.
//
// Every rule is structural (tag shapes, tool-argument names, the shapes in
// which harnesses print exit codes, shell syntax), so that sessions of agents
// the package has never seen are read the same way. [Extract] is
// deterministic: the same history gives the same [Record]. Every rule is a
// row of RULES.md (its name, what it recognizes, the harness shape it came
// from, its code and its test); rules_test.go keeps the table true.
package evidence

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/vtcode/vtcode-ls/history"
)

// Origin says who wrote a message, as far as the record shows.
type Origin string

// The origins [Extract] assigns. Assistant, tool and system messages get
// OriginAgent, OriginTool and OriginSystem; user-role messages get one of the
// others.
const (
	OriginTyped    Origin = "typed"    // typed by the user: the request, a restriction, a follow-up
	OriginInjected Origin = "injected" // harness context: reminders, environment, command echoes, caveats
	OriginSummary  Origin = "summary"  // the continuation summary of an earlier compaction
	// OriginObservation is a user-role message that carries a tool result
	// (agents that act through text blocks receive their output this way).
	OriginObservation Origin = "observation"
	// OriginHarness is a harness complaint about the previous response's
	// format ("no tool call found", "exactly one action expected").
	OriginHarness Origin = "harness"
	// OriginDelegated is a prompt one agent role wrote for another (an
	// architect's instructions to its editor).
	OriginDelegated Origin = "delegated"
	OriginAgent     Origin = "agent"
	OriginTool      Origin = "tool"
	OriginSystem    Origin = "system"
)

// Outcome is the outcome of a check. One owner decides it (the extractor's
// check, from the evidence below, in this order), and the summary and
// [Contradictions] both read it, of a command's last run:
//
//   - an exit code the harness printed (Codex's "Exit code: N" header,
//     Gemini CLI's "Exit Code: N" line; a Gemini CLI trailer ending in
//     "Process Group PGID: N" without one is exit 0);
//   - the harness's error flag: Claude Code sets is_error from the exit
//     code and writes it on every result, so true is a failed run and, once
//     the record shows the flag on a command's result, an unflagged result
//     whose output has no failing runner line is a passed one;
//   - a runner's own result line (a test summary, git's commit line);
//   - otherwise Unknown: "ran; outcome not reported", no next step.
type Outcome string

// Check outcomes.
const (
	Passed      Outcome = "passed"      // exit 0, or a harness that flags failures did not flag it
	Failed      Outcome = "failed"      // a non-zero exit code, or a flagged or failing result
	Unknown     Outcome = "unknown"     // ran; the record shows no exit code
	Running     Outcome = "running"     // still running in the background when the record ends
	Interrupted Outcome = "interrupted" // the call has no result
	// NotRun is a command the harness or the user refused: its result is
	// flagged and carries no exit code, while the same tool reports exit
	// codes elsewhere in the record.
	NotRun Outcome = "not run"
	// Submitted is a command that hands the work in and ends the record
	// without a result.
	Submitted Outcome = "submitted"
	// NoMatch is a search (grep, rg, ag, git grep, as the last command of
	// its line) that exited 1 and printed nothing: it found no match, which
	// is an answer, not a failure to fix.
	NoMatch Outcome = "no match"
)

// Action is one tool call, or one command an agent wrote in a fenced block
// (agents that act through text), with its result.
type Action struct {
	Index  int    // message index of the call
	Result int    // message index of the result, -1 when there is none
	CallID string // "" for a text action
	Tool   string // tool name; "shell" for a text action
	// Command is the shell command line, "" when the call runs none.
	Command string
	Args    map[string]any // decoded JSON arguments, nil when none
	Input   string         // freeform input (patches)
	// Dir is the folder the call ran in when its arguments say so (Codex's
	// exec_command workdir, a cwd argument), "" otherwise: the relative paths
	// it names are relative to it.
	Dir     string
	Output  string // the result's text (the output of a JSON envelope)
	Exit    int
	HasExit bool
	// Flagged is true when the harness marked the result as an error.
	Flagged bool
	// Rejected is true when the call was refused or had no effect (a
	// rejected or failed edit, a denied permission).
	Rejected bool
	// Script is the state a code-mode script's result reports
	// ("completed", "failed", "running with cell ID N"), "" for others.
	Script string
}

// HasResult reports whether the action has a result.
func (a *Action) HasResult() bool { return a.Result >= 0 }

// Check is one run of a command.
type Check struct {
	Command string
	// Normalized is Normalize(Command) and Dir is WorkDir(Command): together
	// they identify the command.
	Normalized string
	Dir        string
	Outcome    Outcome
	Exit       int
	HasExit    bool
	Index      int // message index of the call
	Action     int // index in Record.Actions
	// FixedBy is the index in Record.Checks of a later passing run that
	// covers this failed one (the same command, or one that contains all its
	// words), -1 when none.
	FixedBy int
	// Flagged is true when the harness marked the result as an error.
	Flagged bool
	// Detail is a short line of the output that explains the outcome (a
	// test summary, the first error), "" when none.
	Detail string
	// Polled is the index in Record.Actions of the poll that reported how a
	// command run in the background ended, -1 when none (see Output).
	Polled int
}

// Output returns the output that tells how c ended: that of the poll that
// reported the end of a command run in the background, else its own.
func (r *Record) Output(c Check) string {
	if c.Polled >= 0 && c.Polled < len(r.Actions) {
		return r.Actions[c.Polled].Output
	}
	if c.Action >= 0 && c.Action < len(r.Actions) {
		return r.Actions[c.Action].Output
	}
	return ""
}

// Op is what happened to a file.
type Op string

// File operations.
const (
	Modified Op = "modified"
	Created  Op = "created"
	Deleted  Op = "deleted"
	Moved    Op = "moved" // Path is the new name, From the old one
	Reverted Op = "reverted"
)

// Change is one change to a file the record shows.
type Change struct {
	Path   string
	Op     Op
	From   string // old name of a move
	Index  int    // message index of the call (or the text) that shows it
	Action int    // index in Record.Actions, -1 for a change reported in text
	Via    string // tool name, "shell", or "text" (a line such as "Applied edit to f")
	// Where lists the code a patch's hunks name (their @@ context), nil
	// when unknown.
	Where []string
}

// Error is one distinct error the record shows.
type Error struct {
	Text  string
	First int // message index of the first occurrence
	Last  int // message index of the latest occurrence
	Count int
	// FromUser is true when the user pasted it (a CI log, a terminal).
	FromUser bool
	// Kind classifies the error (see the Err* constants).
	Kind string
}

// Error kinds.
const (
	ErrPanic      = "panic"      // a Go or Rust panic, a fatal runtime error
	ErrException  = "exception"  // the last line of a traceback, an exception line
	ErrDiagnostic = "diagnostic" // a compiler or linter diagnostic
	ErrNotFound   = "not-found"  // a missing command, file or package
	ErrTest       = "test"       // a failing test or a test summary
	ErrTool       = "tool"       // a tool refused the call (a rejected edit, a bad argument)
	ErrOther      = "error"      // a line that starts with an error word
)

// Commit is a commit the record shows.
type Commit struct {
	Ref     string // short hash
	Message string
	Index   int
	// Stat is git's summary line of the commit ("3 files changed, 55
	// insertions(+)"), "" when the record does not show it.
	Stat string
}

// Final is the state the record ends in.
type Final struct {
	// LastCheck is the index in Record.Checks of the last check, -1 when none.
	LastCheck int
	Commits   []Commit
	Pushed    bool
	// PushedAt is the message index of the last successful git push, -1
	// when none.
	PushedAt int
	// PushedRefs is the last push's ref update as git reported it
	// ("c1a49bf0..7e1ba229  feat -> feat"), "" when the record shows none.
	PushedRefs string
	// Branch is the git branch the work is on as the record last shows it
	// (a branch created or switched to, git status, a commit report), ""
	// when none.
	Branch    string
	Released  bool
	Submitted bool
	// Interrupted is true when the last action has no result.
	Interrupted bool
}

// Record is everything [Extract] found.
type Record struct {
	Origins []Origin // one per message
	Actions []Action
	Checks  []Check
	// Changes lists file changes in order; rejected edits are not changes.
	Changes []Change
	// Rejected lists the edits that were refused or had no effect.
	Rejected []Change
	// Reads lists, in first-seen order, the files read or searched and
	// never changed.
	Reads []string
	// Opened lists, in first-seen order, every file read or searched,
	// changed or not.
	Opened []string
	Errors []Error
	// Artifacts lists what tools created or changed outside the files
	// (tickets, issues, pull requests), in order.
	Artifacts []Artifact
	// WorkDir is the workspace folder the harness reported (a <cwd> block),
	// "" when none.
	WorkDir string
	// Plan is the agent's own plan as it last wrote it, nil when none.
	Plan *Plan
	// Proposal is the last plan the agent proposed for approval as a
	// document (Claude Code's plan mode), nil when none.
	Proposal *Proposal
	// Answers are the user's answers to the agent's questions (the results
	// of a question tool: Claude Code's AskUserQuestion, opencode's
	// question), in order.
	Answers []Answer
	// Worktree is what git said of the uncommitted work.
	Worktree Worktree
	// Stopped is the message index of the user's interruption of the agent
	// after the last message the user typed (the agent's step then did not
	// finish), -1 when none.
	Stopped int
	Final   Final
}

// Artifact is something a tool created, updated or closed outside the
// workspace files, as its result identifies it.
type Artifact struct {
	Tool  string
	Op    string // the verb of the tool name: create, update, close, delete, comment, ...
	ID    string // the identifier the result reports (key, identifier, number, id)
	Title string
	State string // the state the result reports, "" when none
	URL   string
	Index int
}

// ChangedPaths returns the changed paths in first-change order, each once.
func (r *Record) ChangedPaths() []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range r.Changes {
		if !seen[c.Path] {
			seen[c.Path] = true
			out = append(out, c.Path)
		}
	}
	return out
}

// Changed reports whether path was changed.
func (r *Record) Changed(path string) bool {
	for _, c := range r.Changes {
		if c.Path == path {
			return true
		}
	}
	return false
}

// UserRequests returns the indexes of the messages the user typed.
func (r *Record) UserRequests() []int {
	var out []int
	for i, o := range r.Origins {
		if o == OriginTyped {
			out = append(out, i)
		}
	}
	return out
}

// LastRun returns the index in r.Checks of the last run of command, -1 when
// it never ran.
func (r *Record) LastRun(command string) int {
	for i := len(r.Checks) - 1; i >= 0; i-- {
		if r.Checks[i].Command == command {
			return i
		}
	}
	return -1
}

// ctxEvery is how many loop steps run between two context checks.
const ctxEvery = 256

// maxScan bounds how much of one text is scanned, from each end: output in
// the middle of a huge result is not read.
const maxScan = 256 << 10

// Extract reads msgs and returns what the record shows. It fails only with
// ctx's error.
func Extract(ctx context.Context, msgs []history.Message) (*Record, error) {
	x := &extractor{ctx: ctx, msgs: msgs, r: &Record{Final: Final{LastCheck: -1, PushedAt: -1}, Worktree: Worktree{StatusAt: -1, DiffAt: -1}}, changed: map[string]bool{}, read: map[string]bool{}, errIdx: map[string]int{}, unseenCommit: -1, staged: map[string]bool{}}
	if err := x.run(); err != nil {
		return nil, err
	}
	x.r.Stopped = lastStop(msgs, x.r.Origins)
	return x.r, nil
}

// userStopRE recognizes a harness's line saying the user stopped the
// agent (Claude Code's "[Request interrupted by user]" and "[Request
// interrupted by user for tool use]").
var userStopRE = regexp.MustCompile(`(?i)\binterrupted by (?:the )?user\b`)

// lastStop returns the message index of the user's interruption of the
// agent that no message typed later answered: rule "user interrupt" (a
// bracketed status line in the user's turn, Claude Code), -1 when none.
func lastStop(msgs []history.Message, origins []Origin) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if i < len(origins) && origins[i] == OriginTyped {
			return -1
		}
		if msgs[i].Role == history.User {
			if t := msgs[i].Text(); isStatusLine(t) && userStopRE.MatchString(t) {
				return i
			}
		}
	}
	return -1
}

type extractor struct {
	ctx     context.Context
	msgs    []history.Message
	r       *Record
	changed map[string]bool
	read    map[string]bool
	readOrd []string
	errIdx  map[string]int
	steps   int
	// openFile is the file an editor interface reports as open (for
	// line-range edit commands that name no file).
	openFile string
	flagging bool // the harness flags failed results
	// unseenCommit is the message index of a git commit whose output showed
	// no commit line, -1 when none: a later git log shows what it made.
	unseenCommit int
	// running maps the id a command running in the background printed
	// ("running in background with ID: 7d95c5", "session ID 3") to its
	// check, until a later poll reports how it ended.
	running map[string]int
	// staged are the paths git add named since the last git status or
	// commit; stagedAll and stagedTracked say git add -A and git add -u.
	staged                   map[string]bool
	stagedAll, stagedTracked bool
}

func (x *extractor) tick() error {
	x.steps++
	if x.steps%ctxEvery == 0 {
		return x.ctx.Err()
	}
	return nil
}

func (x *extractor) run() error {
	if err := x.ctx.Err(); err != nil {
		return err
	}
	origins, err := classify(x.ctx, x.msgs)
	if err != nil {
		return err
	}
	x.r.Origins = origins
	textAgent, err := isTextActionSession(x.ctx, x.msgs)
	if err != nil {
		return err
	}
	// The harness flags failed commands (Claude Code's is_error) when it
	// flagged a shell tool's result, or wrote the flag (true or false) on
	// one: Claude Code sets is_error from the command's exit code and writes
	// it on every result. A harness that flags only tool errors says
	// nothing of the commands it did not flag.
	for i := range x.msgs {
		if m := &x.msgs[i]; writesFlag(m) && (m.ToolName == "" || isCommandTool(m.ToolName)) {
			x.flagging = true
			break
		}
	}
	pairing := history.Pair(x.msgs)
	consumed := map[int]bool{} // observations that answer a text action
	for i := range x.msgs {
		if err := x.tick(); err != nil {
			return err
		}
		m := &x.msgs[i]
		switch origins[i] {
		case OriginAgent:
			if m.HasToolCalls() {
				b := pairing.Batches[pairing.BatchOf[i]]
				for c, tc := range m.ToolCalls {
					if err := x.tick(); err != nil {
						return err
					}
					res := -1
					if c < len(b.Results) {
						res = b.Results[c]
					}
					x.toolAction(i, tc, res)
				}
			} else if cmd, ok := textAction(m.Text()); ok && i+1 < len(x.msgs) && origins[i+1] == OriginObservation {
				x.textAction(i, cmd, i+1)
				consumed[i+1] = true
			} else if ok && textAgent && i == len(x.msgs)-1 {
				x.textAction(i, cmd, -1) // the record ends with it
			}
			x.textChanges(i, m.Text())
		case OriginTool:
			if pairing.BatchOf[i] < 0 { // an orphan result
				x.errorsIn(i, m.Text(), false)
			}
		case OriginTyped:
			x.errorsIn(i, m.Text(), true)
			x.textChanges(i, m.Text())
		case OriginObservation:
			if cmd, out, ok := userRun(m.Text()); ok && !consumed[i] {
				x.userAction(i, cmd, out)
				break
			}
			x.noteOpenFile(m.Text())
		case OriginHarness:
			// The harness refused the previous response: what it says is an
			// error of the agent's.
			if l := firstMessage(stripTags(m.Text())); hasLetter(l) {
				x.addError(i, clip(l, errorChars), false, ErrTool)
			}
		case OriginInjected:
			if cmd, ok := tagBody(m.Text(), "bash-input"); ok && cmd != "" {
				// A command the user ran through the harness ("!make test"):
				// its output is in the next message.
				res, out := -1, ""
				if i+1 < len(x.msgs) {
					next := x.msgs[i+1].Text()
					stdout, ok1 := tagBody(next, "bash-stdout")
					stderr, ok2 := tagBody(next, "bash-stderr")
					if ok1 || ok2 {
						res, out = i+1, strings.TrimSpace(stdout+"\n"+stderr)
					}
				}
				a := Action{Index: i, Result: res, Tool: "user", Command: cmd, Output: out}
				if res >= 0 {
					a.Exit, a.HasExit = textExit(out)
				}
				x.record(a)
			}
			x.textChanges(i, m.Text())
			x.notification(i, m.Text())
			if x.r.WorkDir == "" {
				x.r.WorkDir = cwdOf(m.Text())
			}
		}
		if err := x.ctx.Err(); err != nil {
			return err
		}
	}
	if err := x.finish(); err != nil {
		return err
	}
	return x.ctx.Err()
}

func isFlagged(m *history.Message) bool {
	v, ok := m.Extra["isError"]
	return ok && string(v) == "true"
}

// writesFlag reports whether the harness wrote its error flag on a result,
// set or not.
func writesFlag(m *history.Message) bool {
	v, ok := m.Extra["isError"]
	return ok && (string(v) == "true" || string(v) == "false")
}

// toolAction records a tool call and what its result shows.
func (x *extractor) toolAction(i int, tc history.ToolCall, res int) {
	a := Action{Index: i, Result: res, CallID: tc.ID, Tool: tc.Name, Input: tc.Input}
	if strings.TrimSpace(tc.Arguments) != "" {
		var v any
		if json.Unmarshal([]byte(tc.Arguments), &v) == nil {
			a.Args, _ = v.(map[string]any)
		}
	}
	a.Command = commandOf(&a)
	for _, k := range []string{"workdir", "cwd", "working_directory"} {
		if d, ok := a.Args[k].(string); ok && strings.HasPrefix(d, "/") {
			a.Dir = strings.TrimSuffix(d, "/")
			break
		}
	}
	if isCommandTool(a.Tool) && a.Command == strings.TrimSpace(a.Input) && isCodeModeScript(a.Input) {
		// Codex code mode: the script's inner exec_command is what ran;
		// a script that calls no shell runs no command.
		c, d, _ := codeModeCommand(a.Input)
		a.Command = c
		if strings.HasPrefix(d, "/") {
			a.Dir = strings.TrimSuffix(d, "/")
		}
	}
	if x.r.WorkDir == "" && a.Dir != "" {
		// The folder the first call ran in: the session's working folder as
		// far as the record shows.
		x.r.WorkDir = a.Dir
	}
	if res >= 0 {
		rm := &x.msgs[res]
		raw := rm.Text()
		if strings.HasPrefix(raw, history.InterruptedResult) || strings.HasPrefix(strings.ToLower(raw), "canceled: tool execution was interrupted") {
			a.Result = -1
		} else if state, rest, ok := codeModeResult(raw); ok {
			a.Output, a.Exit, a.HasExit = resultOf(rest)
			a.Flagged = isFlagged(rm) || state == "failed"
			a.Script = state
			if strings.HasPrefix(state, "running") {
				a.Output = "Script " + state + "\n" + a.Output
			}
		} else {
			a.Output, a.Exit, a.HasExit = resultOf(raw)
			a.Flagged = isFlagged(rm)
		}
	}
	x.record(a)
}

// textAction records a command written in a fenced block and answered by
// the observation at index res.
func (x *extractor) textAction(i int, cmd string, res int) {
	a := Action{Index: i, Result: res, Tool: "shell", Command: cmd}
	if res < 0 {
		x.record(a)
		return
	}
	raw := x.msgs[res].Text()
	a.Output, a.Exit, a.HasExit = resultOf(raw)
	x.record(a)
	x.noteOpenFile(raw)
}

// tagBody returns the trimmed content of the first <tag>…</tag> block of text.
func tagBody(text, tag string) (string, bool) {
	t := HeadBytes(text, maxScan)
	i := strings.Index(t, "<"+tag+">")
	if i < 0 {
		return "", false
	}
	rest := t[i+len(tag)+2:]
	j := strings.Index(rest, "</"+tag+">")
	if j < 0 {
		return strings.TrimSpace(rest), true
	}
	return strings.TrimSpace(rest[:j]), true
}

var cwdRE = regexp.MustCompile(`<cwd>\s*([^<\n]+?)\s*</cwd>`)

// cwdOf returns the folder an injected environment block names.
func cwdOf(text string) string {
	if m := cwdRE.FindStringSubmatch(HeadBytes(text, 8192)); m != nil {
		return m[1]
	}
	return ""
}

// userRunRE matches the first line of a message reporting a command the
// user ran themselves: one backquoted command and its exit code, ending
// with a colon before the output ("Ran `make check` (exit code 2):").
var userRunRE = regexp.MustCompile(`^[^\x60\n]{0,60}\x60([^\x60\n]+)\x60[^\x60\n]{0,30}\b(?:exit(?:ed)?(?: with)?[ _-]?(?:code|status)|return[ _-]?code)\s*[:=]?\s*-?\d{1,3}\b[^\x60\n]{0,20}:\s*$`)

// userRun reports whether text is the report of a command the user ran,
// and returns the command and the report (exit code and output).
func userRun(text string) (cmd, report string, ok bool) {
	t := strings.TrimSpace(HeadBytes(text, maxScan))
	first, rest, _ := strings.Cut(t, "\n")
	m := userRunRE.FindStringSubmatch(strings.TrimSpace(first))
	if m == nil {
		return "", "", false
	}
	return m[1], first + "\n" + rest, true
}

// userAction records a command the user ran as a check.
func (x *extractor) userAction(i int, cmd, report string) {
	first, rest, _ := strings.Cut(report, "\n")
	a := Action{Index: i, Result: i, Tool: "user", Command: cmd, Output: rest}
	if code, ok := textExit(first); ok {
		a.Exit, a.HasExit = code, true
	}
	x.record(a)
}

func (x *extractor) record(a Action) {
	if a.HasResult() && !a.HasExit && a.Command != "" {
		a.Exit, a.HasExit = echoedExit(a.Command, a.Output)
	}
	a.Rejected = a.HasResult() && isEdit(&a) && rejected(&a)
	x.r.Actions = append(x.r.Actions, a)
	ai := len(x.r.Actions) - 1
	ap := &x.r.Actions[ai]
	x.files(ai, ap)
	if ap.HasResult() {
		// A command that exited 0 (and was not piped, which hides the exit
		// of what ran first) failed at nothing: the error lines it printed
		// are logs (tests of error paths, a hook's passing tests).
		passed := ap.Command != "" && ap.HasExit && ap.Exit == 0 && !ap.Flagged && !strings.Contains(ap.Command, "|")
		if !passed && (!readsOnly(ap) || ap.Flagged || ap.HasExit && ap.Exit != 0) {
			x.errorsIn(ap.Result, ap.Output, false)
		}
		if ap.Flagged || ap.Rejected {
			if l := firstMessage(stripTags(ap.Output)); ap.Command == "" && hasLetter(l) {
				x.addError(ap.Result, clip(l, errorChars), false, ErrTool)
			}
		}
	}
	x.poll(ap)
	if p := planOf(ap); p != nil && !ap.Flagged && ap.Command == "" {
		x.r.Plan = mergePlan(x.r.Plan, p, ap)
	} else if !ap.Flagged && !ap.Rejected {
		x.r.Plan = taskPlan(x.r.Plan, ap)
	}
	if p := x.proposal(ai, ap); p != nil {
		x.r.Proposal = p
	}
	if isQuestion(ap) && ap.HasResult() && !ap.Flagged && !ap.Rejected && strings.TrimSpace(ap.Output) != "" {
		x.r.Answers = append(x.r.Answers, Answer{Index: ap.Result, Text: strings.TrimSpace(HeadBytes(ap.Output, maxAnswer))})
	}
	if ap.Command != "" {
		x.check(ai, ap)
		x.shellArtifact(ap)
	} else if ap.HasResult() && !ap.Flagged {
		x.artifact(ap)
	}
	x.finalState(ai, ap)
}

// check records a shell action as a check.
func (x *extractor) check(ai int, a *Action) {
	c := Check{Command: a.Command, Normalized: Normalize(a.Command), Dir: WorkDir(a.Command), Index: a.Index, Action: ai, FixedBy: -1, Polled: -1, Exit: a.Exit, HasExit: a.HasExit, Flagged: a.Flagged}
	switch {
	case !a.HasResult() && isSubmit(a):
		c.Outcome = Submitted
	case !a.HasResult():
		c.Outcome = Interrupted
	case a.HasExit && a.Exit == 0:
		c.Outcome = Passed
	case a.HasExit && a.Exit == 1 && isSearch(a.Command) && emptyOutput(a.Output):
		c.Outcome = NoMatch
	case a.HasExit:
		c.Outcome = Failed
	case a.Flagged:
		c.Outcome = Failed
	case isRunning(a.Output):
		c.Outcome = Running
	case endsInCommit(a.Command) && len(commitsIn(HeadBytes(a.Output, maxScan), false)) > 0:
		c.Outcome = Passed // git reported the commit the command ends with
	default:
		switch testVerdict(a.Output) {
		case Failed:
			c.Outcome = Failed
		case Passed:
			c.Outcome = Passed
		default:
			switch {
			case crashed(x.ctx, a.Output):
				c.Outcome = Failed // an uncaught exception or a panic exits non-zero
			case x.flagging:
				c.Outcome = Passed // the harness flags failures and did not flag this one
			default:
				c.Outcome = Unknown
			}
		}
	}
	if a.HasResult() {
		c.Detail = detailOf(a.Output, c.Outcome)
	}
	x.r.Checks = append(x.r.Checks, c)
	if c.Outcome == Running {
		for _, id := range backgroundIDs(a.Output) {
			if x.running == nil {
				x.running = map[string]int{}
			}
			x.running[id] = len(x.r.Checks) - 1
		}
	}
}

// backgroundIDRE finds the id a command started in the background is known
// by: "with ID: 7d95c5", "session ID 3", "pid 4242", "job id=12".
var backgroundIDRE = regexp.MustCompile(`(?i)\b(?:id|pid|session|job|shell|process)\b\s*(?:id\b)?\s*[:=#]?\s*([A-Za-z0-9][\w.-]{0,39})`)

// backgroundIDs returns the ids a running command's output gives it; an id
// has a digit, so that words are not taken for one.
func backgroundIDs(out string) []string {
	var ids []string
	for _, m := range backgroundIDRE.FindAllStringSubmatch(HeadBytes(out, 2048), 4) {
		if id := strings.TrimRight(m[1], ".-"); strings.ContainsAny(id, "0123456789") && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// poll folds in a call that reads on a command running in the background
// (Claude Code's BashOutput, Codex's write_stdin, a process tool's poll or
// kill): one whose id-like argument (bash_id, shell_id, session_id, pid, …)
// names the id the command's output gave it. A poll whose output reports an
// exit code says how the command ended: its check takes that outcome. A
// poll that stopped it leaves the check without an exit code; one that
// reports it still running leaves it running.
func (x *extractor) poll(a *Action) {
	if len(x.running) == 0 || !a.HasResult() || len(a.Args) == 0 {
		return
	}
	head := HeadBytes(a.Output, 2048)
	for k, v := range a.Args {
		if !strings.HasSuffix(strings.ToLower(k), "id") {
			continue
		}
		var id string
		switch v := v.(type) {
		case string:
			id = v
		case float64:
			id = strconv.FormatFloat(v, 'f', -1, 64)
		}
		ci, ok := x.running[id]
		if !ok {
			continue
		}
		c := &x.r.Checks[ci]
		switch {
		case a.HasExit:
			c.Exit, c.HasExit = a.Exit, true
			c.Outcome = Passed
			if a.Exit != 0 {
				c.Outcome = Failed
			}
			c.Detail = detailOf(a.Output, c.Outcome)
			c.Polled = len(x.r.Actions) - 1
		case isRunning(a.Output) || statusRunningRE.MatchString(head):
			continue
		case a.Script == "completed" || a.Script == "failed":
			// A code-mode script that ran the command finished: its output
			// is the command's, which prints no exit code.
			c.Outcome = testVerdict(a.Output)
			if a.Script == "failed" {
				c.Outcome = Failed
			} else if c.Outcome != Failed && c.Outcome != Passed {
				c.Outcome = Unknown
			}
			c.Detail = detailOf(a.Output, c.Outcome)
			c.Polled = len(x.r.Actions) - 1
		case stoppedRE.MatchString(head):
			c.Outcome, c.Detail, c.Polled = Unknown, "stopped before it finished", len(x.r.Actions)-1
		default:
			continue
		}
		delete(x.running, id)
	}
}

var (
	// notifIDRE and notifStatusRE read a harness's notification that a
	// background task ended (Claude Code's <task-notification> with
	// <task-id> and <status>).
	notifIDRE     = regexp.MustCompile(`<(?:task|shell|bash|process)[-_]?id>\s*([^<\s]+)\s*</`)
	notifStatusRE = regexp.MustCompile(`<status>\s*([A-Za-z_ -]+?)\s*</status>`)
)

// notification ends the background task an injected notification names
// with the status it reports: completed passes, failed, killed or an exit
// code other than 0 fails; another status leaves it running.
func (x *extractor) notification(i int, text string) {
	if len(x.running) == 0 {
		return
	}
	body, ok := tagBody(text, "task-notification")
	if !ok {
		if body, ok = tagBody(text, "task_notification"); !ok {
			return
		}
	}
	m := notifIDRE.FindStringSubmatch(body)
	if m == nil {
		return
	}
	ci, ok := x.running[m[1]]
	if !ok {
		return
	}
	status := ""
	if s := notifStatusRE.FindStringSubmatch(body); s != nil {
		status = strings.ToLower(s[1])
	}
	c := &x.r.Checks[ci]
	code, hasCode := 0, false
	if all := anyExitRE.FindAllStringSubmatch(body, -1); len(all) > 0 {
		code, hasCode = atoi(all[len(all)-1][1])
	}
	switch {
	case hasCode:
		c.Exit, c.HasExit = code, true
		c.Outcome = Passed
		if code != 0 {
			c.Outcome = Failed
		}
	case status == "completed" || status == "success" || status == "succeeded":
		c.Outcome = Passed
	case status == "failed" || status == "error":
		c.Outcome = Failed
	case stoppedRE.MatchString(status):
		c.Outcome = Unknown
	default:
		return
	}
	if sum, ok := tagBody(body, "summary"); ok && sum != "" {
		c.Detail = clip(sum, detailChars)
	}
	for id, j := range x.running {
		if j == ci {
			delete(x.running, id)
		}
	}
}

// refusedRE matches the first line of a result that says the user or a
// permission rule refused the call ("The user doesn't want to proceed with
// this tool use. The tool use was rejected …", "exec command rejected by
// user"): the command did not run, whatever the harness reports elsewhere.
var refusedRE = regexp.MustCompile(`(?i)\b(user|permission|tool (use|call)|command)\b.{0,60}\b(rejected|denied|declined|refused)\b|\b(rejected|denied|declined|refused)\b.{0,30}\bby (the )?user\b|\buser (doesn't|does not) want to\b`)

var (
	// statusRunningRE: a poll's report that the process goes on
	// ("<status>running</status>", "status: running").
	statusRunningRE = regexp.MustCompile(`(?i)\bstatus\W{0,3}running\b`)
	// stoppedRE: a poll's report that the process was stopped.
	stoppedRE = regexp.MustCompile(`(?i)\b(killed|terminated|stopped|aborted)\b`)
)

// coverWindow bounds how many later checks are compared with a failed one
// for a broader command that covers it; the same command is found at any
// distance.
const coverWindow = 256

func (x *extractor) finish() error {
	r := x.r
	reports := map[string]bool{} // tools whose results carry exit codes
	for _, a := range r.Actions {
		if a.Command != "" && a.HasExit {
			reports[a.Tool] = true
		}
	}
	for i := range r.Checks {
		c := &r.Checks[i]
		a := &r.Actions[c.Action]
		if c.Outcome == Failed && !c.HasExit && a.Flagged && (reports[a.Tool] || refusedRE.MatchString(firstLine(stripTags(a.Output)))) {
			c.Outcome = NotRun
		}
	}
	// The next passing run of the same command, by a reverse scan.
	nextPass := make([]int, len(r.Checks))
	words := make([][]string, len(r.Checks)) // computed on demand
	seen := map[string]int{}
	for i := len(r.Checks) - 1; i >= 0; i-- {
		if err := x.tick(); err != nil {
			return err
		}
		k := r.Checks[i].Normalized + "\x00" + r.Checks[i].Dir
		nextPass[i] = -1
		if j, ok := seen[k]; ok {
			nextPass[i] = j
		}
		if r.Checks[i].Outcome == Passed {
			seen[k] = i
		}
	}
	for i := range r.Checks {
		if r.Checks[i].Outcome != Failed {
			continue
		}
		if err := x.tick(); err != nil {
			return err
		}
		limit := min(len(r.Checks), i+1+coverWindow)
		if nextPass[i] >= 0 {
			limit = min(limit, nextPass[i])
		}
		r.Checks[i].FixedBy = nextPass[i]
		want := commandWords(r.Checks[i].Command)
		segs := segments(r.Checks[i].Command)
		for j := i + 1; j < limit; j++ {
			if r.Checks[j].Outcome != Passed {
				continue
			}
			if words[j] == nil {
				words[j] = commandWords(r.Checks[j].Command)
			}
			if coversWords(words[j], want) || r.Checks[j].Dir == r.Checks[i].Dir && (rechecksAll(r.Checks[j].Command, segs) || revises(r.Checks[j].Command, r.Checks[i].Command)) {
				r.Checks[i].FixedBy = j
				break
			}
		}
	}
	if n := len(r.Checks); n > 0 {
		r.Final.LastCheck = n - 1
	}
	if n := len(r.Actions); n > 0 {
		last := &r.Actions[n-1]
		r.Final.Interrupted = !last.HasResult() && !isSubmit(last)
	}
	r.Reads = r.Reads[:0]
	r.Opened = append([]string(nil), x.readOrd...)
	for _, p := range x.readOrd {
		if !x.changed[p] {
			r.Reads = append(r.Reads, p)
		}
	}
	return nil
}

// coversWords reports whether a passing command's words cover a failed
// one's: every word of it, as `go test ./pkg/` failing and
// `gofmt -l . && go test -v ./pkg/` passing; a path given relative to
// another folder names the same file.
func coversWords(have, want []string) bool {
	if len(want) == 0 {
		return false
	}
	for _, w := range want {
		found := false
		for _, h := range have {
			// A path given relative to another folder names the same file;
			// a folder (or the whole tree) holds the files under it.
			if h == w || pathSuffix(h, w) || pathSuffix(w, h) || holdsPath(h, w) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// holdsPath reports whether the target h of a passing run holds the target
// w of a failed one: a folder and a file or folder under it
// ("src/" and "src/a.ts", "./..." and "./pkg"), a test file and one of its
// tests ("t/a.py" and "t/a.py::test_x").
func holdsPath(h, w string) bool {
	if !strings.ContainsAny(w, "/.") {
		return false
	}
	hs := strings.TrimPrefix(strings.TrimSuffix(strings.TrimSuffix(h, "..."), "/"), "./")
	ws := strings.TrimPrefix(w, "./")
	if base, _, ok := strings.Cut(ws, "::"); ok && (base == hs || pathSuffix(base, hs) || pathSuffix(hs, base)) {
		return true
	}
	if h == "./..." || h == "..." || h == "." {
		return !strings.HasPrefix(ws, "/") && !strings.HasPrefix(ws, "-")
	}
	return hs != "" && strings.Contains(h, "/") && (strings.HasPrefix(ws, hs+"/") || strings.Contains(ws, "/"+hs+"/"))
}

// pathSuffix reports whether long ends with "/" + short.
func pathSuffix(long, short string) bool {
	return len(long) > len(short) && long[len(long)-len(short)-1] == '/' && strings.HasSuffix(long, short)
}

// commandWords returns the words of a command line without bare flags and
// shell operators; a flag with a value ("--cov-fail-under=99") is kept.
func commandWords(cmd string) []string {
	var out []string
	for _, w := range strings.Fields(withoutMessages(cmd)) {
		w = strings.Trim(w, "();")
		switch {
		case w == "", w == "&&", w == "||", w == "|", strings.HasPrefix(w, "-") && !strings.Contains(w, "="):
			continue // a bare flag changes how, not what, a command verifies
		}
		out = append(out, w)
	}
	return out
}

// commitMessageRE finds the message option of a commit (git commit -m,
// --message, -am; several may follow one another).
var commitMessageRE = regexp.MustCompile(`\bgit\s+(?:-C\s+\S+\s+)?commit\b[^&|;\n]*?\s(?:-a?m|--message)(?:=|\s+)`)

// messageHeredocRE matches the start of a message written as "$(cat <<'EOF' … EOF )".
var messageHeredocRE = regexp.MustCompile(`^"\$\(cat\s+<<-?\s*['"]?(\w+)['"]?\s*\n`)

// withoutMessages returns cmd without the messages of its commits: a commit
// that failed is made good by a later one that passed, whatever either
// message says.
func withoutMessages(cmd string) string {
	for from := 0; from < len(cmd); {
		loc := commitMessageRE.FindStringIndex(cmd[from:])
		if loc == nil {
			break
		}
		start := from + loc[1]
		for {
			end := start + messageEnd(cmd[start:])
			cmd = cmd[:start] + cmd[end:]
			m := nextMessageRE.FindStringIndex(cmd[start:])
			if m == nil {
				break
			}
			start += m[1] // another message of the same commit
		}
		from = start
	}
	return cmd
}

// nextMessageRE matches a message option right after another.
var nextMessageRE = regexp.MustCompile(`^\s+(?:-a?m|--message)(?:=|\s+)`)

// messageEnd returns the length of the message s starts with: a heredoc
// in "$(cat <<'EOF' … EOF )", else one shell word.
func messageEnd(s string) int {
	if m := messageHeredocRE.FindStringSubmatch(s); m != nil {
		if i := strings.Index(s, "\n"+m[1]+"\n"); i >= 0 {
			end := i + len(m[1]) + 2
			if j := strings.Index(s[end:], `)"`); j >= 0 && strings.TrimSpace(s[end:end+j]) == "" {
				end += j + 2
			}
			return end
		}
	}
	return shellWordEnd(s)
}

// shellWordEnd returns the length of the shell word s starts with: a
// quoted string (with its escapes) or a run of non-space bytes.
func shellWordEnd(s string) int {
	i := 0
	for i < len(s) {
		switch c := s[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|':
			return i
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return len(s)
			}
			i += j + 2
		case c == '"':
			i++
			for i < len(s) && s[i] != '"' {
				if s[i] == '\\' {
					i++
				}
				i++
			}
			i++
		default:
			i++
		}
	}
	return min(i, len(s))
}

// gitDirRE matches git's -C DIR option.
var gitDirRE = regexp.MustCompile(`\bgit\s+-C\s+("[^"]*"|'[^']*'|\S+)\s+`)

// cdRE matches a leading "cd DIR &&" (or ";").
var cdRE = regexp.MustCompile(`^\s*cd\s+("[^"]*"|'[^']*'|\S+)\s*(&&|;)\s*`)

// cdLineRE matches a script's first line when it is only "cd DIR": a
// newline separates commands as ";" does, so the script runs in DIR.
var cdLineRE = regexp.MustCompile(`^\s*cd\s+("[^"]*"|'[^']*'|[^\s;&|]+)[ \t]*\r?\n`)

// oneLine collapses a command line's whitespace; a leading "cd DIR" line
// becomes "cd DIR;" first, so that Normalize and WorkDir read it as the
// folder the rest runs in.
func oneLine(cmd string) string {
	c := HeadBytes(cmd, 64<<10)
	var b strings.Builder
	for {
		m := cdLineRE.FindStringIndex(c)
		if m == nil {
			break
		}
		line := strings.TrimRight(c[:m[1]], " \t\r\n")
		b.WriteString(line + "; ")
		c = c[m[1]:]
	}
	b.WriteString(c)
	return strings.Join(strings.Fields(b.String()), " ")
}

// Normalize returns a command line as a reader compares it: whitespace
// collapsed, without a leading "cd DIR &&" and without git's "-C DIR", so
// `git -C /repo fsck --full` reads as `git fsck --full`. A huge command is
// normalized from its first 64 KiB.
func Normalize(cmd string) string {
	c := oneLine(cmd)
	for {
		n := cdRE.ReplaceAllString(c, "")
		if n == c {
			break
		}
		c = n
	}
	return gitDirRE.ReplaceAllString(c, "git ")
}

// Script returns a short digest (6 hex digits) of the code a command line
// carries inline, "" when it carries none: rule "inline script identity"
// (Claude Code's Bash heredocs `.venv/bin/python - <<'PY'`, Codex's
// `bash -lc '…'`, `python -c '…'`, `node -e '…'`). A summary clips such a
// line to its first words, which two different scripts share; the digest
// keeps them apart, and two runs of the same script share it.
func Script(cmd string) string {
	body := scriptBody(cmd)
	if body == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(body))
	return hex.EncodeToString(sum[:3])
}

// inlineCodeRE finds an interpreter's inline-code option: python -c,
// bash/sh -c or -lc, node/ruby/perl -e, as the word before its code.
var inlineCodeRE = regexp.MustCompile(`(?:^|[\s;&|(])(?:\S*/)?(?:python[\d.]*|node|bash|sh|zsh|ruby|perl|php|bun|deno)\s+(?:-[a-zA-Z]+\s+)*?-[a-zA-Z]*[ce]\s+`)

// scriptBody returns the inline code of a command line (its heredoc
// bodies, then the code arguments of inline-code options), each line with
// its whitespace collapsed, "" when there is none.
func scriptBody(cmd string) string {
	c := HeadBytes(cmd, 64<<10)
	var parts []string
	for _, m := range heredocOpenRE.FindAllStringIndex(c, -1) {
		if dataReaders[readerOf(c[:m[0]])] {
			continue // a file's text or a message, not code
		}
		if sp := heredocSpans(c[m[0]:]); len(sp) > 0 {
			parts = append(parts, c[m[0]+sp[0][0]:m[0]+sp[0][1]])
		}
	}
	rest := stripSpans(c, heredocSpans(c))
	for _, m := range inlineCodeRE.FindAllStringIndex(rest, -1) {
		arg := rest[m[1]:]
		parts = append(parts, arg[:shellWordEnd(arg)])
	}
	var lines []string
	for _, p := range parts {
		for _, l := range strings.Split(p, "\n") {
			if l = strings.Join(strings.Fields(l), " "); l != "" {
				lines = append(lines, l)
			}
		}
	}
	return strings.Join(lines, "\n")
}

// dataReaders are the programs whose heredoc is text, not code: a file's
// content (cat > f, tee f) or a message (git commit -F -, gh pr create).
var dataReaders = map[string]bool{"cat": true, "tee": true, "git": true, "gh": true}

// readerOf returns the program (its base name) of the simple command that
// ends at the end of before: the one a heredoc opened there feeds.
func readerOf(before string) string {
	i := strings.LastIndexAny(before, "\n;&|(")
	w := strings.Fields(before[i+1:])
	if len(w) == 0 {
		return ""
	}
	return path.Base(w[0])
}

// revises reports whether the inline script of a later command line is a
// revision of an earlier one's: the same line around the script, and at
// least half of the earlier script's distinct lines kept: rule "script
// revision" (an agent that edits the heredoc it ran and runs it again, as
// Claude Code does after a failed assertion).
func revises(later, earlier string) bool {
	a, b := scriptBody(earlier), scriptBody(later)
	if a == "" || b == "" || scriptFrame(earlier) != scriptFrame(later) {
		return false
	}
	have := map[string]bool{}
	for _, l := range strings.Split(b, "\n") {
		have[l] = true
	}
	seen := map[string]bool{}
	kept := 0
	for _, l := range strings.Split(a, "\n") {
		if seen[l] {
			continue
		}
		seen[l] = true
		if have[l] {
			kept++
		}
	}
	return 2*kept >= len(seen)
}

// scriptFrame returns a command line up to its first inline script, as
// Normalize reads it: what runs the script.
func scriptFrame(cmd string) string {
	c := HeadBytes(cmd, 64<<10)
	if sp := heredocSpans(c); len(sp) > 0 {
		return Normalize(c[:sp[0][0]])
	}
	c = Normalize(c)
	if m := inlineCodeRE.FindStringIndex(c); m != nil {
		return c[:m[1]]
	}
	return c
}

// Spelled returns a command line as a summary writes it on one line: its
// lines (outside quotes) joined by "; ", as the shell runs them one after
// the other, or by a space after a line that continues (a trailing \\, &&,
// ||, |, or an opening keyword), then normalized (Normalize). A script with
// a heredoc is only normalized. Codex code-mode scripts that call the shell
// several times are several lines: `vp test run; vp check`, not
// `vp test run vp check`.
func Spelled(cmd string) string {
	c := strings.TrimSpace(HeadBytes(cmd, 64<<10))
	if !strings.Contains(c, "\n") || len(heredocSpans(c)) > 0 {
		return Normalize(c)
	}
	b := make([]byte, 0, len(c)+16)
	quote := byte(0)
	for i := 0; i < len(c); i++ {
		ch := c[i]
		switch {
		case quote != 0:
			if ch == '\\' && quote == '"' && i+1 < len(c) {
				b = append(b, ch)
				i++
				ch = c[i]
			} else if ch == quote {
				quote = 0
			}
		case ch == '\'' || ch == '"':
			quote = ch
		case ch == '\n':
			for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
				b = b[:len(b)-1]
			}
			switch {
			case len(b) > 0 && b[len(b)-1] == '\\':
				b = b[:len(b)-1] // a continued line
			case len(b) > 0 && !continuedRE.Match(b[max(0, len(b)-16):]):
				b = append(b, ';')
			}
			ch = ' '
		}
		b = append(b, ch)
	}
	return Normalize(strings.TrimSuffix(strings.TrimSpace(string(b)), ";"))
}

// continuedRE matches a line the next one continues.
var continuedRE = regexp.MustCompile(`(?:\\|&&|\|\||\||[;{(]|\b(?:then|do|else|in))$`)

// WorkDir returns the folder a command line runs in when it says so itself
// (a leading "cd DIR &&", or git's "-C DIR"), "" otherwise. Together with
// [Normalize] it identifies a command: `cd /a && make` and `cd /b && make`
// are different checks.
func WorkDir(cmd string) string {
	c := oneLine(cmd)
	dir := ""
	for {
		m := cdRE.FindStringSubmatch(c)
		if m == nil {
			break
		}
		d := strings.Trim(m[1], `"'`)
		if dir != "" && !strings.HasPrefix(d, "/") && !strings.HasPrefix(d, "~") {
			d = strings.TrimSuffix(dir, "/") + "/" + d
		}
		dir = d
		c = c[len(m[0]):]
	}
	if m := gitDirRE.FindStringSubmatch(c); m != nil && dir == "" {
		dir = strings.Trim(m[1], `"'`)
	}
	return dir
}

// hasLetter reports whether a refusal's first line has a letter: a line
// without one (an exit code the harness printed in a tag) is no message.
func hasLetter(l string) bool { return strings.IndexFunc(l, unicode.IsLetter) >= 0 }
