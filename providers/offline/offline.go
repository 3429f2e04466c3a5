// Package offline is the embedded default provider: a deterministic,
// extractive summarizer that needs no network (SPEC §8.9).
//
// It answers a summary request by reading the request's messages and
// writing the sections the default summary prompt asks for (goal,
// constraints and user restrictions, what was just being done, last action
// and result, checks with exact commands and exit codes, pending calls and
// sessions, key decisions, files read or changed, errors, next steps), built
// only from facts in the history: the first user message, user sentences
// with must/never/don't/always/only..., the commands run by shell-like tools
// with the exit codes their results report, the paths in tool arguments and
// patches, error lines of tool results, and interrupted calls. Earlier
// summaries in the input ("Previous conversation summary:" messages, or a
// <summary_content> note) are merged in, so repeated compaction keeps the
// original goal.
//
// The last message of a request is taken to be the summary prompt and is not
// summarized. The same request always yields byte-identical output.
package offline

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
)

// Name is the provider name of the offline summarizer.
const Name = "offline"

// MaxOutputTokens bounds every summary (≈ 4 bytes per token); a request's
// smaller MaxOutputTokens wins.
const MaxOutputTokens = 2000

// New returns the offline summarizer. It is safe for concurrent use.
func New() providers.Generator { return summarizer{} }

type summarizer struct{}

// Generate returns an extractive summary of req.Messages as the assistant
// message text.
func (summarizer) Generate(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	msgs := req.Messages
	instructions := ""
	if n := len(msgs); n > 1 && msgs[n-1].Role == history.User {
		prompt := msgs[n-1].Text()
		if _, after, ok := strings.Cut(prompt, providers.SummaryInstructions); ok {
			instructions = clip(strings.Join(strings.Fields(after), " "), maxInstructionChars)
		}
		msgs = msgs[:n-1] // the summary prompt
	}
	f, err := extract(ctx, msgs)
	if err != nil {
		return nil, err
	}
	limit := MaxOutputTokens
	if req.MaxOutputTokens > 0 {
		limit = min(limit, req.MaxOutputTokens)
	}
	// An extractive summary cannot follow free-form instructions; it carries
	// them at the top, so the model that continues sees what the user asked
	// the summary to focus on.
	if instructions == "" {
		instructions = clip(f.priorFocus, maxInstructionChars) // a later compaction keeps the focus
	}
	head := ""
	if instructions != "" {
		head = "## " + secFocus + "\n" + instructions + "\n\n"
	}
	text := head + f.render(max(0, limit*4-len(head)))

	est := history.NewEstimator(history.Approx)
	in := est.Prefix(req.System, req.Tools)
	for _, m := range req.Messages {
		in += est.Message(&m) // m is a copy: the request's messages keep their caches
	}
	return &providers.Response{
		Message:    history.NewText(history.Assistant, text),
		Usage:      history.Usage{InputTokens: in, OutputTokens: est.Text(text)},
		StopReason: "end_turn",
	}, nil
}

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

// maxInstructionChars bounds the custom instructions carried into a summary.
const maxInstructionChars = 600

var sectionOrder = []string{secGoal, secRestrict, secDoing, secLast, secChecks, secPending, secDecisions, secFiles, secErrors, secNext}

// Item limits per section (before any further trimming for the output bound).
const (
	maxRestrictions = 12
	maxChecks       = 14
	maxPending      = 8
	maxDecisions    = 8
	maxFiles        = 40
	maxErrors       = 8
	maxNext         = 6
	sentenceChars   = 240
	goalChars       = 800
	commandChars    = 200
)

// facts is what the summary is built from.
type facts struct {
	goal         string
	restrictions list
	doing        []string
	last         []string
	checks       []check
	pending      list
	decisions    list
	files        []file
	errors       list
	next         list
	interrupted  []*call
	prior        map[string][]string // sections of earlier summaries, merged in order
	priorFocus   string              // the focus an earlier summary carried
	priorGoal    string
}

type check struct {
	command string
	status  string // completed, failed, running, not run, ran
	detail  string // "exit 0", "interrupted, no result", ...
	times   int
}

type file struct {
	path    string
	actions [5]bool // read, searched, modified, created, deleted
}

var actionNames = [5]string{"read", "searched", "modified", "created", "deleted"}

const (
	actRead = iota
	actSearch
	actModify
	actCreate
	actDelete
)

// list is an ordered set of strings, deduplicated case-insensitively.
type list struct {
	items []string
	seen  map[string]bool
}

func (l *list) add(s string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return
	}
	k := strings.ToLower(s)
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	if l.seen[k] {
		return
	}
	l.seen[k] = true
	l.items = append(l.items, s)
}

// last returns the newest n items.
func (l *list) last(n int) []string {
	if len(l.items) <= n {
		return l.items
	}
	return l.items[len(l.items)-n:]
}

const summaryPrefix = "Previous conversation summary:\n"

// call is a tool call with what was learned about it.
type call struct {
	tc      history.ToolCall
	name    string // lower-case tool name
	args    map[string]any
	command string
	result  *history.Message
}

func extract(ctx context.Context, msgs []history.Message) (*facts, error) {
	f := &facts{prior: map[string][]string{}}
	pairing := history.Pair(msgs)
	var (
		lastUser, lastAssistantText string
		lastCall                    *call
		lastCallIdx                 = -1
		lastTextIdx                 = -1
		lastAssistantIdx            = -1
		lastUserIdx                 = -1
		recentAssistant             []string
		checkIdx                    = map[string]int{}
	)
	for i := range msgs {
		if i%512 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		m := &msgs[i]
		text := m.Text()
		if isPriorSummary(text) {
			f.mergePrior(text)
			continue
		}
		switch m.Role {
		case history.User:
			if strings.TrimSpace(text) == "" {
				continue
			}
			if f.goal == "" {
				f.goal = clip(text, goalChars)
			}
			for _, s := range sentences(text) {
				if restrictionRE.MatchString(s) {
					f.restrictions.add(clip(s, sentenceChars))
				}
			}
			lastUser, lastUserIdx = text, i
		case history.Assistant:
			lastAssistantIdx = i
			if t := strings.TrimSpace(text); t != "" {
				lastAssistantText, lastTextIdx = t, i
				recentAssistant = append(recentAssistant, t)
				if len(recentAssistant) > 3 {
					recentAssistant = recentAssistant[1:]
				}
				for _, s := range sentences(t) {
					if decisionRE.MatchString(s) {
						f.decisions.add(clip(s, sentenceChars))
					}
				}
			}
			if !m.HasToolCalls() {
				continue
			}
			b := pairing.Batches[pairing.BatchOf[i]]
			for c, tc := range m.ToolCalls {
				cl := newCall(tc)
				if r := b.Results[c]; r >= 0 {
					cl.result = &msgs[r]
				}
				f.noteFiles(cl)
				f.noteCall(cl, checkIdx)
				lastCall, lastCallIdx = cl, i
			}
		case history.Tool:
			if pairing.BatchOf[i] >= 0 {
				continue // handled with its call
			}
			f.noteErrors(text)
		}
	}
	if f.priorGoal != "" {
		f.goal = f.priorGoal
	}
	// What was just being done.
	if lastUser != "" {
		f.doing = append(f.doing, "Latest user request: "+clip(lastUser, 300))
	}
	switch {
	case lastCall != nil && lastCallIdx >= lastTextIdx:
		f.doing = append(f.doing, "Latest assistant step: "+describeCall(lastCall))
	case lastAssistantText != "":
		f.doing = append(f.doing, "Latest assistant step: "+clip(lastAssistantText, 300))
	}
	// Last action and result.
	if lastCall != nil {
		f.last = append(f.last, "Action: "+describeCall(lastCall))
		f.last = append(f.last, "Result: "+describeResult(lastCall))
		if lastTextIdx > lastCallIdx {
			f.last = append(f.last, "Assistant then replied: "+clip(lastAssistantText, 240))
		}
	} else if lastAssistantText != "" {
		f.last = append(f.last, "Assistant replied: "+clip(lastAssistantText, 300))
	}
	// An assistant question nobody answered is an open approval.
	if lastTextIdx >= 0 && lastTextIdx == lastAssistantIdx && lastTextIdx > lastUserIdx && strings.HasSuffix(strings.TrimSpace(lastAssistantText), "?") {
		ss := sentences(lastAssistantText)
		f.pending.add("Awaiting the user's answer: " + clip(ss[len(ss)-1], sentenceChars))
	}
	f.deriveNext(recentAssistant, lastUser)
	return f, nil
}

func isPriorSummary(text string) bool {
	return strings.HasPrefix(text, summaryPrefix) || strings.Contains(text, "<summary_content>")
}

// mergePrior reads the "## Section" blocks of an earlier summary.
func (f *facts) mergePrior(text string) {
	if i := strings.Index(text, "<summary_content>"); i >= 0 {
		text = text[i+len("<summary_content>"):]
		if j := strings.Index(text, "</summary_content>"); j >= 0 {
			text = text[:j]
		}
	}
	text = strings.TrimPrefix(text, summaryPrefix)
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
		if sec == secFocus && t != "" {
			f.priorFocus = strings.TrimSpace(f.priorFocus + " " + t)
			continue
		}
		if sec == "" || t == "" || strings.EqualFold(t, "none") {
			continue
		}
		if sec == secGoal {
			if f.priorGoal == "" {
				f.priorGoal = clip(t, goalChars)
			}
			continue
		}
		t = strings.TrimSpace(strings.TrimLeft(t, "-*0123456789.) "))
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

var (
	restrictionRE = regexp.MustCompile(`(?i)\b(must|mustn't|never|don't|do not|always|only|avoid|without|should|shouldn't|cannot|can't|make sure|no need to|prefer|keep)\b`)
	decisionRE    = regexp.MustCompile(`(?i)\b(decided|decision|i'll use|we'll use|i will use|instead|chose|choosing|going with|switch(ed|ing)? to|rather than|because)\b`)
	nextRE        = regexp.MustCompile(`(?i)\b(next|todo|remaining|still need|then i|we need to|needs to be|will now)\b`)
	errorLineRE   = regexp.MustCompile(`(?i)\b(error|errors|failed|failure|fail|panic|panicked|traceback|exception|fatal|undefined|cannot|no such file|not found|permission denied|syntax error)\b`)
	// diffLineRE matches a removed or added line of a diff ("-func f() error {"),
	// not a test runner's "--- FAIL:".
	diffLineRE   = regexp.MustCompile(`^[-+]([^-+]|$)`)
	errorStartRE = regexp.MustCompile(`(?i)^\W*(error|failed|failure|fatal|exception|panic)\b`)
	exitRE       = regexp.MustCompile(`(?i)\b(?:exit(?:ed with)?[ _]?(?:code|status)|returncode|return code|exitcode)["']?\s*[:=]?\s*(-?\d{1,3})\b`)
	sessionRE    = regexp.MustCompile(`(?i)\b(session|process|job|pid|shell)[ _-]?(?:id)?\s*[:=#]\s*([A-Za-z0-9_.:-]+)`)
	runningRE    = regexp.MustCompile(`(?i)\b(still running|running in (the )?background|started in (the )?background|in progress)\b`)
)

// commandTools are substrings of tool names that run commands.
var commandTools = []string{"bash", "shell", "exec", "run", "terminal", "command", "cmd", "powershell", "pty"}

var (
	pathKeys  = []string{"path", "file_path", "filepath", "filePath", "filename", "file", "target_file", "notebook_path", "source", "destination"}
	pathLists = []string{"paths", "files", "file_paths"}
	cmdKeys   = []string{"command", "cmd", "script", "commandLine", "command_line"}
)

func newCall(tc history.ToolCall) *call {
	c := &call{tc: tc, name: strings.ToLower(tc.Name)}
	if strings.TrimSpace(tc.Arguments) != "" {
		var v any
		if json.Unmarshal([]byte(tc.Arguments), &v) == nil {
			c.args, _ = v.(map[string]any)
		}
	}
	if isCommandTool(c.name) {
		for _, k := range cmdKeys {
			if s := stringish(c.args[k]); s != "" {
				c.command = s
				break
			}
		}
		if c.command == "" && strings.TrimSpace(tc.Input) != "" {
			c.command = tc.Input
		}
		c.command = clip(c.command, commandChars)
	}
	return c
}

func isCommandTool(name string) bool {
	for _, s := range commandTools {
		if strings.Contains(name, s) {
			return true
		}
	}
	return false
}

// stringish returns a string argument, or a list of strings joined by spaces.
func stringish(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		var parts []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, " ")
	}
	return ""
}

func (f *facts) noteCall(c *call, checkIdx map[string]int) {
	res := ""
	if c.result != nil {
		res = c.result.Text()
	}
	interrupted := c.result == nil || strings.HasPrefix(res, history.InterruptedResult) || strings.HasPrefix(strings.ToLower(res), "canceled: tool execution was interrupted")
	if interrupted {
		f.interrupted = append(f.interrupted, c)
		f.pending.add(fmt.Sprintf("Interrupted call %s: %s (no result)", c.tc.ID, describeCall(c)))
	} else if c.command != "" {
		f.noteErrors(outputText(res))
	} else if errorStartRE.MatchString(strings.TrimSpace(res)) {
		f.errors.add(clip(firstLine(res), sentenceChars))
	}
	if c.command == "" {
		return
	}
	ch := check{command: c.command}
	switch {
	case interrupted:
		ch.status, ch.detail = "not run", "interrupted, no result"
	default:
		if code, ok := exitCode(res); ok {
			ch.detail = "exit " + strconv.Itoa(code)
			ch.status = "completed"
			if code != 0 {
				ch.status = "failed"
			}
		} else if runningRE.MatchString(res) {
			ch.status, ch.detail = "running", "no exit code yet"
			if m := sessionRE.FindStringSubmatch(res); m != nil {
				id := strings.TrimRight(m[2], ".,;:")
				ch.detail = strings.ToLower(m[1]) + " " + id
				f.pending.add(fmt.Sprintf("Running %s %s from `%s`: poll or stop it with %s", strings.ToLower(m[1]), id, c.command, c.tc.Name))
			} else {
				f.pending.add(fmt.Sprintf("Running `%s` (call %s): check its output with %s", c.command, c.tc.ID, c.tc.Name))
			}
		} else {
			ch.status, ch.detail = "ran", "exit code not reported"
		}
	}
	// Repeated runs of one command collapse into its latest outcome.
	if i, ok := checkIdx[c.command]; ok {
		prev := f.checks[i]
		f.checks = append(f.checks[:i], f.checks[i+1:]...)
		for k, v := range checkIdx {
			if v > i {
				checkIdx[k] = v - 1
			}
		}
		ch.times = prev.times + 1
	} else {
		ch.times = 1
	}
	checkIdx[c.command] = len(f.checks)
	f.checks = append(f.checks, ch)
}

// exitCode finds the exit code a tool result reports: a JSON field
// (exit_code, exitCode, returncode, exit_status) or text such as "exit code 1",
// "Exit code: 2", "exited with code 0", "exit status 1". The last mention wins.
func exitCode(res string) (int, bool) {
	t := strings.TrimSpace(res)
	if strings.HasPrefix(t, "{") {
		var v map[string]any
		if json.Unmarshal([]byte(t), &v) == nil {
			for _, k := range []string{"exit_code", "exitCode", "returncode", "exit_status", "exitStatus", "status_code"} {
				if n, ok := v[k].(float64); ok {
					return int(n), true
				}
			}
		}
	}
	all := exitRE.FindAllStringSubmatch(res, -1)
	if len(all) == 0 {
		return 0, false
	}
	n, err := strconv.Atoi(all[len(all)-1][1])
	return n, err == nil
}

// noteErrors records the first error line of a command's output, with the
// indented line that follows it (test runners put the detail there).
func (f *facts) noteErrors(res string) {
	if line := errorLine(res); line != "" {
		f.errors.add(line)
	}
}

func errorLine(res string) string {
	lines := strings.Split(res, "\n")
	for i, line := range lines {
		if !errorLineRE.MatchString(line) || strings.HasPrefix(line, history.InterruptedResult) || diffLineRE.MatchString(line) {
			continue
		}
		out := strings.TrimSpace(line)
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], " ") && strings.TrimSpace(lines[i+1]) != "" {
			out += " / " + strings.TrimSpace(lines[i+1])
		}
		return clip(out, sentenceChars)
	}
	return ""
}

// outputText returns the text of a command result: for a JSON object, its
// output, stdout, stderr and error strings; otherwise res itself.
func outputText(res string) string {
	t := strings.TrimSpace(res)
	if !strings.HasPrefix(t, "{") {
		return res
	}
	var v map[string]any
	if json.Unmarshal([]byte(t), &v) != nil {
		return res
	}
	var parts []string
	known := false
	for _, k := range []string{"output", "stdout", "stderr", "error", "message"} {
		if s, ok := v[k].(string); ok {
			known = true
			if strings.TrimSpace(s) != "" {
				parts = append(parts, s)
			}
		}
	}
	if !known {
		return res
	}
	return strings.Join(parts, "\n")
}

func firstLine(s string) string {
	if ls := nonEmptyLines(s); len(ls) > 0 {
		return ls[0]
	}
	return ""
}

func (f *facts) noteFiles(c *call) {
	act := fileAction(c)
	for _, k := range pathKeys {
		if s, ok := c.args[k].(string); ok && looksLikePath(s) {
			f.touch(s, act)
		}
	}
	for _, k := range pathLists {
		if xs, ok := c.args[k].([]any); ok {
			for _, x := range xs {
				if s, ok := x.(string); ok && looksLikePath(s) {
					f.touch(s, act)
				}
			}
		}
	}
	patch := c.tc.Input
	for _, k := range []string{"input", "patch", "diff"} {
		if s, ok := c.args[k].(string); ok && patch == "" {
			patch = s
		}
	}
	if strings.Contains(patch, "*** ") || strings.Contains(patch, "+++ ") {
		for _, line := range strings.Split(patch, "\n") {
			switch {
			case strings.HasPrefix(line, "*** Update File: "):
				f.touch(strings.TrimPrefix(line, "*** Update File: "), actModify)
			case strings.HasPrefix(line, "*** Add File: "):
				f.touch(strings.TrimPrefix(line, "*** Add File: "), actCreate)
			case strings.HasPrefix(line, "*** Delete File: "):
				f.touch(strings.TrimPrefix(line, "*** Delete File: "), actDelete)
			case strings.HasPrefix(line, "+++ b/"):
				f.touch(strings.TrimPrefix(line, "+++ b/"), actModify)
			}
		}
	}
}

func looksLikePath(s string) bool {
	s = strings.TrimSpace(s)
	return s != "" && len(s) < 400 && !strings.ContainsAny(s, "\n\t")
}

// fileAction classifies a tool call by its name (and, for editor tools with
// a "command" argument, by that command).
func fileAction(c *call) int {
	name := c.name
	if sub, ok := c.args["command"].(string); ok && strings.Contains(name, "edit") {
		switch sub {
		case "view":
			return actRead
		case "create":
			return actCreate
		case "str_replace", "insert", "undo_edit":
			return actModify
		}
	}
	switch {
	case containsAny(name, "delete", "remove", "unlink"):
		return actDelete
	case containsAny(name, "create", "write", "new_file", "add_file"):
		return actCreate
	case containsAny(name, "edit", "replace", "patch", "apply", "insert", "update", "modify", "rename", "move"):
		return actModify
	case containsAny(name, "grep", "search", "find", "glob", "list", "ls"):
		return actSearch
	}
	return actRead
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

func (f *facts) hasFile(path string) bool {
	for _, fl := range f.files {
		if fl.path == path {
			return true
		}
	}
	return false
}

// pathOf returns the backquoted path that starts a file line, or "".
func pathOf(line string) string {
	if !strings.HasPrefix(line, "`") {
		return ""
	}
	if i := strings.Index(line[1:], "`"); i >= 0 {
		return line[1 : 1+i]
	}
	return ""
}

func (f *facts) touch(path string, act int) {
	path = strings.TrimSpace(path)
	if path == "" {
		return
	}
	for i := range f.files {
		if f.files[i].path == path {
			f.files[i].actions[act] = true
			return
		}
	}
	var fl file
	fl.path = path
	fl.actions[act] = true
	f.files = append(f.files, fl)
}

func (f *facts) deriveNext(recentAssistant []string, lastUser string) {
	for _, c := range f.interrupted {
		f.next.add(fmt.Sprintf("Re-run or verify the interrupted call %s (%s).", c.tc.ID, c.tc.Name))
	}
	for i, c := range f.checks {
		switch c.status {
		case "failed":
			if passedLater(f.checks[i+1:], c.command) {
				continue // a later run that covers it passed
			}
			f.next.add(fmt.Sprintf("Fix the failure of `%s` (%s) and re-run it.", c.command, c.detail))
		case "running":
			f.next.add(fmt.Sprintf("Poll `%s` (%s) until it finishes and record its exit code.", c.command, c.detail))
		}
	}
	if n := len(recentAssistant); n > 0 {
		for _, s := range sentences(recentAssistant[n-1]) {
			if nextRE.MatchString(s) {
				f.next.add(clip(s, sentenceChars))
			}
		}
	}
	if len(f.next.items) == 0 && lastUser != "" {
		f.next.add("Continue with the latest user request: " + clip(lastUser, 200))
	}
}

// passedLater reports whether one of the later checks completed with exit 0
// and covers failed: every word of failed (flags aside) appears in it, as in
// `go test ./pkg/` failing and `gofmt -l ./pkg && go test -v ./pkg/` passing.
func passedLater(later []check, failed string) bool {
	want := commandWords(failed)
	if len(want) == 0 {
		return false
	}
	for _, c := range later {
		if c.status != "completed" || c.detail != "exit 0" {
			continue
		}
		have := map[string]bool{}
		for _, w := range commandWords(c.command) {
			have[w] = true
		}
		covered := true
		for _, w := range want {
			if !have[w] {
				covered = false
				break
			}
		}
		if covered {
			return true
		}
	}
	return false
}

// commandWords returns the words of a shell command line without flags and
// shell operators.
func commandWords(cmd string) []string {
	var out []string
	for _, w := range strings.Fields(cmd) {
		switch {
		case w == "&&" || w == "||" || w == "|" || w == ";" || strings.HasPrefix(w, "-"):
			continue
		}
		out = append(out, strings.TrimRight(w, ";"))
	}
	return out
}

func describeCall(c *call) string {
	switch {
	case c.command != "":
		return fmt.Sprintf("%s `%s`", c.tc.Name, c.command)
	case c.tc.Arguments != "":
		return fmt.Sprintf("%s %s", c.tc.Name, clip(c.tc.Arguments, 160))
	case c.tc.Input != "":
		return fmt.Sprintf("%s %s", c.tc.Name, clip(c.tc.Input, 160))
	}
	return c.tc.Name
}

func describeResult(c *call) string {
	if c.result == nil {
		return "no result (interrupted)"
	}
	res := c.result.Text()
	if strings.HasPrefix(res, history.InterruptedResult) {
		return "no result (interrupted)"
	}
	var parts []string
	if code, ok := exitCode(res); ok {
		parts = append(parts, "exit "+strconv.Itoa(code))
	}
	out := outputText(res)
	if e := errorLine(out); e != "" {
		return strings.Join(append(parts, e), "; ")
	}
	lines := nonEmptyLines(out)
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

func nonEmptyLines(s string) []string {
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
			if (c == '.' || c == '!' || c == '?') && (i+1 == len(line) || line[i+1] == ' ') {
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

// clip collapses whitespace and cuts s to n bytes on a rune boundary.
func clip(s string, n int) string {
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

// render writes the sections, trimming list sections until the text fits
// limit bytes.
func (f *facts) render(limit int) string {
	caps := map[string]int{
		secRestrict: maxRestrictions, secChecks: maxChecks, secPending: maxPending, secDecisions: maxDecisions,
		secFiles: maxFiles, secErrors: maxErrors, secNext: maxNext,
	}
	// Least important first.
	shrinkOrder := []string{secErrors, secDecisions, secFiles, secChecks, secRestrict, secPending, secNext}
	for range 8 {
		out := f.renderWith(caps)
		if len(out) <= limit {
			return out
		}
		for _, s := range shrinkOrder {
			caps[s] /= 2
		}
	}
	out := f.renderWith(caps)
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
	return out
}

func (f *facts) renderWith(caps map[string]int) string {
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
	bullets := func(xs []string) []string {
		out := make([]string, len(xs))
		for i, x := range xs {
			out[i] = "- " + x
		}
		return out
	}
	merged := func(sec string, l list, n int) []string {
		var all list
		for _, p := range f.prior[sec] {
			all.add(p)
		}
		for _, x := range l.items {
			all.add(x)
		}
		items := all.last(n)
		if omitted := len(all.items) - len(items); omitted > 0 {
			return append([]string{fmt.Sprintf("(%d earlier omitted)", omitted)}, items...)
		}
		return items
	}

	goal := f.goal
	var goalLines []string
	if goal != "" {
		goalLines = []string{goal}
	}
	section(secGoal, goalLines)
	section(secRestrict, bullets(merged(secRestrict, f.restrictions, caps[secRestrict])))
	doing := f.doing
	if len(doing) == 0 {
		doing = f.prior[secDoing]
	}
	section(secDoing, bullets(doing))
	last := f.last
	if len(last) == 0 {
		last = f.prior[secLast]
	}
	section(secLast, bullets(last))

	var checks list
	for _, c := range f.checks {
		s := fmt.Sprintf("%s: `%s` (%s)", c.status, c.command, c.detail)
		if c.times > 1 {
			s += fmt.Sprintf(", run %d times", c.times)
		}
		checks.add(s)
	}
	section(secChecks, bullets(merged(secChecks, checks, caps[secChecks])))
	section(secPending, bullets(merged(secPending, f.pending, caps[secPending])))
	section(secDecisions, bullets(merged(secDecisions, f.decisions, caps[secDecisions])))

	// Changed files first, then files only read or searched.
	var files list
	for pass := 0; pass < 2; pass++ {
		for _, fl := range f.files {
			changed := fl.actions[actModify] || fl.actions[actCreate] || fl.actions[actDelete]
			if changed != (pass == 0) {
				continue
			}
			var acts []string
			for a, on := range fl.actions {
				if on {
					acts = append(acts, actionNames[a])
				}
			}
			files.add(fmt.Sprintf("`%s`: %s", fl.path, strings.Join(acts, ", ")))
		}
	}
	// Earlier summaries' files come first, unless a newer line names the same path.
	var fileAll list
	for _, p := range f.prior[secFiles] {
		if !f.hasFile(pathOf(p)) {
			fileAll.add(p)
		}
	}
	for _, x := range files.items {
		fileAll.add(x)
	}
	fileLines := fileAll.items
	if n := caps[secFiles]; len(fileLines) > n {
		fileLines = append(fileLines[:n:n], fmt.Sprintf("(%d more files)", len(fileLines)-n))
	}
	section(secFiles, bullets(fileLines))
	section(secErrors, bullets(merged(secErrors, f.errors, caps[secErrors])))

	next := f.next.items
	if len(next) == 0 {
		next = f.prior[secNext]
	}
	if len(next) > caps[secNext] {
		next = next[:caps[secNext]]
	}
	numbered := make([]string, len(next))
	for i, s := range next {
		numbered[i] = fmt.Sprintf("%d. %s", i+1, s)
	}
	section(secNext, numbered)
	return strings.TrimRight(b.String(), "\n")
}
