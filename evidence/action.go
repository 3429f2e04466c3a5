package evidence

import (
	"encoding/json"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Bounds of the strings a Record holds.
const (
	commandChars = 240
	errorChars   = 240
	detailChars  = 200
)

// commandTools are substrings of the names of tools that run shell commands.
var commandTools = []string{"bash", "shell", "exec", "terminal", "command", "cmd", "powershell", "pty", "run_in", "run_command", "run_shell", "console"}

// cmdKeys are the argument names a shell tool takes its command line in.
var cmdKeys = []string{"command", "cmd", "script", "commandLine", "command_line", "code"}

func isCommandTool(name string) bool {
	n := strings.ToLower(name)
	if strings.Contains(n, "edit") || strings.Contains(n, "write") {
		return false
	}
	for _, s := range commandTools {
		if strings.Contains(n, s) {
			return true
		}
	}
	return n == "run" || n == "sh"
}

// commandOf returns the shell command line an action runs, "" for none.
func commandOf(a *Action) string {
	if !isCommandTool(a.Tool) {
		return ""
	}
	for _, k := range cmdKeys {
		switch v := a.Args[k].(type) {
		case string:
			if strings.TrimSpace(v) != "" {
				return strings.TrimSpace(v)
			}
		case []any:
			var parts []string
			for _, e := range v {
				if s, ok := e.(string); ok {
					parts = append(parts, s)
				}
			}
			// ["bash", "-lc", "cmd"] runs cmd.
			if len(parts) == 3 && isShell(parts[0]) && strings.HasPrefix(parts[1], "-") && strings.Contains(parts[1], "c") {
				return strings.TrimSpace(parts[2])
			}
			if len(parts) > 0 {
				return strings.Join(parts, " ")
			}
		}
	}
	if strings.TrimSpace(a.Input) != "" {
		return strings.TrimSpace(a.Input)
	}
	return ""
}

func isShell(s string) bool {
	switch s[strings.LastIndex(s, "/")+1:] {
	case "bash", "sh", "zsh", "dash", "fish", "pwsh", "powershell":
		return true
	}
	return false
}

// shellFences are the info strings of fenced blocks that hold a command.
var shellFences = map[string]bool{"": true, "bash": true, "sh": true, "shell": true, "console": true, "zsh": true}

// fences returns the contents of the command blocks of text.
func fences(text string) []string {
	var out []string
	text = TailBytes(text, maxScan) // an action block ends a response
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, "```") {
			continue
		}
		info := strings.ToLower(strings.TrimSpace(strings.TrimLeft(l, "`")))
		j := i + 1
		for j < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[j]), "```") {
			j++
		}
		if shellFences[info] && j < len(lines) {
			body := strings.TrimSpace(strings.Join(lines[i+1:j], "\n"))
			if body != "" {
				out = append(out, body)
			}
		}
		i = j
	}
	return out
}

// actionBlocks counts the command blocks of text.
func actionBlocks(text string) int { return len(fences(text)) }

// textAction returns the command of an assistant message that acts through
// exactly one fenced block.
func textAction(text string) (string, bool) {
	f := fences(text)
	if len(f) != 1 {
		return "", false
	}
	return f[0], true
}

var (
	returnCodeRE = regexp.MustCompile(`(?i)<(?:returncode|exit_code|exitcode|exit-code|return_code)>\s*(-?\d{1,3})\s*</`)
	// leadExitRE: a first line such as "Exit code 127" or "Exit code: 2".
	leadExitRE = regexp.MustCompile(`(?i)^\s*(?:exit(?:ed)?[ _-]?(?:code|status)|return[ _-]?code|returncode)\s*[:=]?\s*(-?\d{1,3})\s*$`)
	// tailExitRE: a last line such as "[exit code: 1]", "[The command
	// completed with exit code 2.]", "Process exited with code 0",
	// "exit status 1", "Exit code: 0".
	tailExitRE = regexp.MustCompile(`(?i)^\W*(?:.{0,40}\b)?(?:exit(?:ed)?(?: with)?[ _-]?(?:code|status)|return[ _-]?code|returncode)\s*[:=]?\s*(-?\d{1,3})\b\W*$`)
	// anyExitRE finds an exit code mentioned anywhere.
	anyExitRE = regexp.MustCompile(`(?i)\b(?:exit(?:ed)?(?: with)?[ _-]?(?:code|status)|return[ _-]?code|returncode)["']?\s*[:=]?\s*(-?\d{1,3})\b`)
)

// jsonExitKeys are the JSON fields harnesses report an exit code in.
var jsonExitKeys = []string{"exit_code", "exitCode", "returncode", "return_code", "exit_status", "exitStatus", "status_code"}

// jsonOutputKeys are the JSON fields that hold a command's output.
var jsonOutputKeys = []string{"output", "stdout", "stderr", "error", "message", "content", "result"}

// resultOf returns the output text of a tool result and the exit code it
// reports, in whichever format the harness printed it.
func resultOf(raw string) (out string, exit int, ok bool) {
	t := strings.TrimSpace(raw)
	out = raw
	if strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}") {
		var v map[string]any
		if json.Unmarshal([]byte(t), &v) == nil {
			if code, found := jsonExit(v, 0); found {
				exit, ok = code, true
			}
			var parts []string
			known := false
			for _, k := range jsonOutputKeys {
				if s, isStr := v[k].(string); isStr {
					known = true
					if strings.TrimSpace(s) != "" {
						parts = append(parts, s)
					}
				}
			}
			if known {
				out = strings.Join(parts, "\n")
			}
			if ok {
				return out, exit, true
			}
		}
	}
	code, found := textExit(out)
	return withoutExecHeader(unwrapTags(out)), code, found
}

// withoutExecHeader returns a command's output without the header a harness
// puts before it (Codex's exec_command: "Chunk ID: …", "Wall time: …",
// "Process exited with code N", "Original token count: …", "Output:"), once
// its exit code is read; a line that says the process is still running
// stays. Output without such a header is returned as it is.
func withoutExecHeader(out string) string {
	rest := out
	var keep []string
	for n := 0; n < 8; n++ {
		line, after, found := strings.Cut(rest, "\n")
		t := strings.TrimSpace(line)
		switch {
		case strings.EqualFold(t, "output:"):
			if !found {
				after = ""
			}
			if len(keep) > 0 {
				return strings.Join(keep, "\n") + "\n" + after
			}
			return after
		case harnessHeaderRE.MatchString(t) || tailExitRE.MatchString(t):
		case strings.HasPrefix(t, "Process running with session ID"):
			keep = append(keep, t)
		default:
			return out
		}
		if !found {
			return out
		}
		rest = after
	}
	return out
}

// tagLineRE matches a line that is only a harness tag ("<output>",
// "</output>", "<returncode>0</returncode>").
var tagLineRE = regexp.MustCompile(`^\s*(</?[A-Za-z][\w-]*>|<([A-Za-z][\w-]*)>[^<\n]{0,20}</[A-Za-z][\w-]*>)\s*$`)

// unwrapTags drops the lines of an observation that are only harness tags,
// so what remains is the command's output.
func unwrapTags(s string) string {
	if !strings.HasPrefix(strings.TrimSpace(s), "<") {
		return s
	}
	head := HeadBytes(s, 4096)
	lines := strings.SplitAfter(head, "\n")
	var b strings.Builder
	for _, l := range lines {
		if !tagLineRE.MatchString(strings.TrimRight(l, "\r\n")) {
			b.WriteString(l)
		}
	}
	rest := s[len(head):]
	if i := strings.LastIndex(rest, "\n"); i >= 0 && tagLineRE.MatchString(rest[i+1:]) {
		rest = rest[:i+1]
	}
	return strings.TrimRight(b.String()+rest, "\n")
}

// jsonExit finds an exit-code field in v or in its nested objects
// (metadata.exit_code).
func jsonExit(v map[string]any, depth int) (int, bool) {
	for _, k := range jsonExitKeys {
		if n, ok := v[k].(float64); ok {
			return int(n), true
		}
	}
	if depth >= 2 {
		return 0, false
	}
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if o, ok := v[k].(map[string]any); ok {
			if n, found := jsonExit(o, depth+1); found {
				return n, true
			}
		}
	}
	return 0, false
}

// textExit finds the exit code a text result reports: a <returncode> tag, a
// first line "Exit code N", a header line "Process exited with code N", a
// last line "[exit code: N]", else the last mention anywhere. The harness's
// code for the command ("exit code", "exited with code", "returncode") wins
// over an "exit status N" in the output, which a program the command ran
// printed (go test's test binary, make's recipe).
func textExit(s string) (int, bool) {
	head, tail := s, s
	if len(s) > 2*maxScan {
		head, tail = s[:maxScan], s[len(s)-maxScan:]
	}
	if m := returnCodeRE.FindStringSubmatch(head); m != nil {
		return atoi(m[1])
	}
	status, hasStatus := 0, false // the first "exit status N" seen, deferred
	defer1 := func(code string) {
		if !hasStatus {
			status, hasStatus = atoiOr(code), true
		}
	}
	if l := firstLine(head); l != "" {
		if m := leadExitRE.FindStringSubmatch(l); m != nil {
			if !isStatusForm(l) {
				return atoi(m[1])
			}
			defer1(m[1])
		}
	}
	// A header line of the harness ("Process exited with code 0" between
	// "Wall time:" and "Output:").
	for n, l := range strings.SplitN(HeadBytes(head, 2048), "\n", 9) {
		if n == 8 {
			break
		}
		if m := tailExitRE.FindStringSubmatch(strings.TrimSpace(l)); m != nil && !strings.Contains(l, "`") {
			if !isStatusForm(l) {
				return atoi(m[1])
			}
			defer1(m[1])
		}
	}
	if l := lastLine(tail); l != "" {
		if m := tailExitRE.FindStringSubmatch(l); m != nil && !isStatusForm(l) {
			return atoi(m[1])
		}
	}
	all := anyExitRE.FindAllStringSubmatch(tail, -1)
	for i := len(all) - 1; i >= 0; i-- {
		if !isStatusForm(all[i][0]) {
			return atoi(all[i][1])
		}
	}
	if l := lastLine(tail); l != "" {
		if m := tailExitRE.FindStringSubmatch(l); m != nil {
			return atoi(m[1])
		}
	}
	if hasStatus {
		return status, true
	}
	if len(all) > 0 {
		return atoi(all[len(all)-1][1])
	}
	return trailerExit(tail)
}

// pgidLineRE is the last line of Gemini CLI's run_shell_command result.
var (
	pgidLineRE     = regexp.MustCompile(`^Process Group PGID: (\d+|\(none\))$`)
	trailerFieldRE = regexp.MustCompile(`^(Error|Exit Code|Signal|Background PIDs): `)
)

// trailerExit reads the trailer a shell tool writes after the output when
// it ends with "Process Group PGID: N" (Gemini CLI): the lines above it
// carry "Exit Code: N" and "Signal: N" only when the command exited non-zero
// or was killed, so a trailer with neither is exit 0.
func trailerExit(tail string) (int, bool) {
	lines := nonEmptyLines(TailBytes(tail, 2048))
	if len(lines) == 0 || !pgidLineRE.MatchString(strings.TrimSpace(lines[len(lines)-1])) {
		return 0, false
	}
	for i := len(lines) - 2; i >= 0 && i >= len(lines)-5; i-- {
		l := strings.TrimSpace(lines[i])
		m := trailerFieldRE.FindStringSubmatch(l)
		if m == nil {
			break
		}
		if m[1] == "Exit Code" || m[1] == "Signal" {
			return 0, false // read above, or a form this rule does not know
		}
	}
	return 0, true
}

// statusFormRE matches "exit status N", the form programs print (Go's
// os/exec, make), as opposed to the harness's "exit code N".
var statusFormRE = regexp.MustCompile(`(?i)\bexit(?:ed)?(?: with)?[ _-]?status\b`)

func isStatusForm(s string) bool { return statusFormRE.MatchString(s) }

func atoiOr(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func atoi(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// echoStatusRE matches a command that prints $? at its end.
var echoStatusRE = regexp.MustCompile(`echo\s+["']?[^"'$;&|]*\$\?["']?\s*$`)

// echoedExit returns the status a command printed with `echo $?`: the number
// on the output's last line.
func echoedExit(command, output string) (int, bool) {
	if !echoStatusRE.MatchString(strings.TrimSpace(command)) {
		return 0, false
	}
	m := trailingNumRE.FindStringSubmatch(lastLine(output))
	if m == nil {
		return 0, false
	}
	return atoi(m[1])
}

var trailingNumRE = regexp.MustCompile(`(?:^|[^\w.])(-?\d{1,3})\W*$`)

var runningRE = regexp.MustCompile(`(?i)\b(still running|running in (the )?background|started in (the )?background|process running with session id|script running with cell id|command is still running)\b`)

func isRunning(out string) bool {
	return runningRE.MatchString(HeadBytes(out, 4096)) || runningRE.MatchString(TailBytes(out, 4096))
}

// A runner's own result line, by its grammar: the outcome of a command
// whose exit code the record does not show is read from these and from
// nothing else (never from words such as "error" or "fail" in its output).
// Each grammar names the counts it reads; a verdict line with a non-zero
// failure count fails the run, one with only passes passes it.
var (
	// go test: "ok  	pkg	0.01s", "FAIL	pkg	0.01s", "FAIL	pkg [build failed]",
	// "--- FAIL: TestX (0.00s)", a lone "FAIL" or "PASS".
	goOkRE   = regexp.MustCompile(`(?m)^ok\s+\S+\s+(?:\(cached\)|[\d.]+s|\[no test files\])`)
	goFailRE = regexp.MustCompile(`(?m)^(?:FAIL\s+\S+\s+(?:[\d.]+s|\[(?:build|setup) failed\])|--- FAIL: \S+|FAIL)\s*$`)
	goPassRE = regexp.MustCompile(`(?m)^PASS\s*$`)
	// pytest: "=== 1 failed, 37 passed in 0.52s ===", "68 passed in 4.22s".
	pytestRE = regexp.MustCompile(`(?m)^=*\s*((?:\d+ (?:failed|passed|errors?|skipped|deselected|xfailed|xpassed|warnings?|rerun)(?:, )?)+) in [\d.]+s\b`)
	// cargo test: "test result: ok. 5 passed; 0 failed; …".
	cargoRE = regexp.MustCompile(`(?m)^test result: (ok|FAILED)\. \d+ passed; (\d+) failed`)
	// jest: "Tests:       1 failed, 3 passed, 4 total"; vitest:
	// " Tests  1 failed | 3 passed (4)"; phpunit: "Tests: 5, Assertions: 9, Failures: 1".
	jestRE    = regexp.MustCompile(`(?m)^\s*Tests:\s+((?:\d+ \w+, )*\d+ total)\s*$`)
	vitestRE  = regexp.MustCompile(`(?m)^\s*Tests\s+((?:\d+ \w+(?: \| )?)+)\s*\(\d+\)\s*$`)
	phpunitRE = regexp.MustCompile(`(?m)^(?:OK \(\d+ tests?, \d+ assertions?\)|Tests: \d+, Assertions: \d+(?:, (Errors|Failures): (\d+))+)`)
	// node --test and TAP: "# fail 0", "ℹ fail 2"; bun: " 5 pass", " 0 fail";
	// mocha: "  3 passing (12ms)", "  1 failing".
	tapFailRE = regexp.MustCompile(`(?m)^(?:# |ℹ )fail (\d+)\s*$|^\s*(\d+) (?:fail|failing)\s*$`)
	tapPassRE = regexp.MustCompile(`(?m)^(?:# |ℹ )pass (\d+)\s*$|^\s*(\d+) (?:pass|passing(?: \(\S+\))?)\s*$`)
	// unittest: "Ran 5 tests in 0.01s" then "OK" or "FAILED (failures=1)".
	unittestRE = regexp.MustCompile(`(?m)^Ran \d+ tests? in [\d.]+s\s*\n+\s*(OK\b|FAILED \()`)
	// rspec: "12 examples, 1 failure".
	rspecRE = regexp.MustCompile(`(?m)^\d+ examples?, (\d+) failures?`)
	// make, gradle, maven: their own closing lines.
	makeFailRE  = regexp.MustCompile(`(?m)^(?:g?make(?:\[\d+\])?|ninja): \*\*\* .*Error \d+|^ninja: build stopped`)
	buildDoneRE = regexp.MustCompile(`(?m)^(?:\[INFO\] )?BUILD (SUCCESS(?:FUL)?|FAIL(?:ED|URE))\b`)
	// linters: ruff "All checks passed!", "Found 3 errors."; tsc and mypy
	// "Found 2 errors in 1 file."; mypy "Success: no issues found"; eslint
	// "✖ 4 problems (3 errors, 1 warning)"; golangci-lint "3 issues:" then
	// "* linter: 3", or "0 issues.".
	lintPassRE = regexp.MustCompile(`(?m)^(?:All checks passed!|Success: no issues found|0 issues\.)`)
	lintFailRE = regexp.MustCompile(`(?m)^(?:Found (\d+) errors?\b|✖ \d+ problems? \((\d+) errors?|(\d+) issues?:\s*\n\* \w)`)
	countRE    = regexp.MustCompile(`(\d+) (\w+)`)
)

// testVerdict reads a runner's own result lines (see above): Failed, Passed
// or "" when the output holds none.
func testVerdict(out string) Outcome {
	t := TailBytes(out, 8192)
	fail, pass := false, false
	counts := func(s string) {
		for _, m := range countRE.FindAllStringSubmatch(s, -1) {
			n, _ := strconv.Atoi(m[1])
			switch w := strings.ToLower(m[2]); {
			case strings.HasPrefix(w, "fail") || strings.HasPrefix(w, "error"):
				fail = fail || n > 0
			case strings.HasPrefix(w, "pass"):
				pass = pass || n > 0
			}
		}
	}
	nonZero := func(s string) bool { n, _ := strconv.Atoi(s); return n > 0 }
	if goFailRE.MatchString(t) {
		fail = true
	}
	if goOkRE.MatchString(t) || goPassRE.MatchString(t) {
		pass = true
	}
	for _, re := range []*regexp.Regexp{pytestRE, jestRE, vitestRE} {
		for _, m := range re.FindAllStringSubmatch(t, -1) {
			counts(m[1])
		}
	}
	for _, m := range cargoRE.FindAllStringSubmatch(t, -1) {
		fail = fail || m[1] == "FAILED" || nonZero(m[2])
		pass = pass || m[1] == "ok"
	}
	for _, m := range phpunitRE.FindAllStringSubmatch(t, -1) {
		if strings.HasPrefix(m[0], "OK") {
			pass = true
		} else if nonZero(m[2]) {
			fail = true
		} else {
			pass = true
		}
	}
	for _, m := range tapFailRE.FindAllStringSubmatch(t, -1) {
		fail = fail || nonZero(m[1]+m[2])
	}
	for _, m := range tapPassRE.FindAllStringSubmatch(t, -1) {
		pass = pass || nonZero(m[1]+m[2])
	}
	for _, m := range unittestRE.FindAllStringSubmatch(t, -1) {
		fail = fail || strings.HasPrefix(m[1], "FAILED")
		pass = pass || m[1] == "OK"
	}
	for _, m := range rspecRE.FindAllStringSubmatch(t, -1) {
		fail = fail || nonZero(m[1])
		pass = pass || !nonZero(m[1])
	}
	if makeFailRE.MatchString(t) {
		fail = true
	}
	for _, m := range buildDoneRE.FindAllStringSubmatch(t, -1) {
		fail = fail || strings.HasPrefix(m[1], "FAIL")
		pass = pass || strings.HasPrefix(m[1], "SUCCESS")
	}
	for _, m := range lintFailRE.FindAllStringSubmatch(t, -1) {
		fail = fail || nonZero(m[1]+m[2]+m[3])
	}
	if lintPassRE.MatchString(t) {
		pass = true
	}
	switch {
	case fail:
		return Failed
	case pass:
		return Passed
	}
	return ""
}

var (
	failCountRE = regexp.MustCompile(`(?i)\b[1-9]\d* (failed|errors?|failures?)\b`)
	failWordRE  = regexp.MustCompile(`(?i)\b(fail(ed|ure)?|error|not reached|below|required)\b`)
)

// summaryLineRE matches a test summary line ("3 failed, 5 passed in 0.2s").
var summaryLineRE = regexp.MustCompile(`(?i)\b\d+ (passed|failed|errors?|selected|deselected|skipped|tests?)\b`)

// detailOf returns a short line explaining an outcome: a test summary, else
// for a failure its first error line, else "".
func detailOf(out string, o Outcome) string {
	lines := nonEmptyLines(TailBytes(out, 8192))
	for i := len(lines) - 1; i >= 0 && i >= len(lines)-12; i-- {
		if summaryLineRE.MatchString(lines[i]) {
			sum := strings.Trim(lines[i], "= ")
			// A failed run whose summary shows no failure failed for
			// another reason (a coverage floor, a hook): say which.
			if o == Failed && !failCountRE.MatchString(sum) {
				for j := len(lines) - 1; j >= 0 && j >= len(lines)-40; j-- {
					if j != i && failWordRE.MatchString(lines[j]) && !summaryLineRE.MatchString(lines[j]) {
						return clip(sum, detailChars/2) + "; " + clip(lines[j], detailChars)
					}
				}
			}
			return clip(sum, detailChars)
		}
	}
	if o == Failed {
		if e := errorLines(out); len(e) > 0 {
			return clip(e[0], detailChars)
		}
		if l := firstLine(stripTags(out)); l != "" && !leadExitRE.MatchString(l) {
			return clip(l, detailChars)
		}
	}
	return ""
}

// editTools are substrings of the names of tools that change files.
var editTools = []string{"edit", "write", "replace", "patch", "apply", "insert", "create", "update", "modify", "delete", "remove", "rename", "move", "notebook"}

func isEditTool(name string) bool {
	n := strings.ToLower(name)
	for _, s := range editTools {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// isEdit reports whether an action is meant to change a file.
func isEdit(a *Action) bool {
	if a.Command != "" {
		return len(shellChanges(a.Command)) > 0 || isLineEdit(a.Command)
	}
	if sub, ok := a.Args["command"].(string); ok && sub == "view" {
		return false
	}
	return isEditTool(a.Tool)
}

// rejectRE matches the first line of a result that says an edit was not
// made.
var rejectRE = regexp.MustCompile(`(?i)(\berror\b|\berrors\b|\bfailed\b|\brejected\b|\bdenied\b|\binvalid\b|\bnot allowed\b|\bno replacement\b|\bno changes? (was|were)? ?(made|applied|performed)\b|\bdid not appear\b|\bnot found\b|\bdoes not exist\b|\bunable to\b|\bcannot\b|\bcan't\b|\bmultiple occurrences\b|\bfound \d+ matches\b|\bis expected to be\b)`)

// rejected reports whether an edit's result shows it had no effect.
func rejected(a *Action) bool {
	if a.Flagged {
		return true
	}
	if a.HasExit && a.Exit != 0 {
		return true
	}
	// A shell line that exited 0 made its writes: what it printed is the
	// output of the commands that ran with them ("cat > t.py <<EOF … EOF;
	// python3 t.py"), not a refusal.
	if a.Command != "" && a.HasExit {
		return false
	}
	l := firstLine(stripTags(a.Output))
	return rejectRE.MatchString(l)
}

var tagRE = regexp.MustCompile(`</?[A-Za-z][A-Za-z0-9_-]*>`)

func stripTags(s string) string { return tagRE.ReplaceAllString(HeadBytes(s, 4096), "") }

// HeadBytes returns at most the first n bytes of s, cut on a rune boundary.
func HeadBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// TailBytes returns at most the last n bytes of s, cut on a rune boundary.
func TailBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

func firstLine(s string) string {
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			return strings.TrimSpace(s)
		}
		if l := strings.TrimSpace(s[:i]); l != "" {
			return l
		}
		s = s[i+1:]
	}
	return ""
}

// firstMessage returns the first line of s, joined with the next one when
// it is a bare label ("ERROR:").
func firstMessage(s string) string {
	l := firstLine(s)
	if strings.HasSuffix(l, ":") && len(strings.Fields(l)) <= 2 {
		if i := strings.Index(s, l); i >= 0 {
			if n := firstLine(s[i+len(l):]); n != "" {
				l += " " + n
			}
		}
	}
	return l
}

func lastLine(s string) string {
	s = strings.TrimRight(s, " \t\r\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[i+1:])
	}
	return strings.TrimSpace(s)
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

// clip collapses whitespace and cuts s to n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) > 4*n {
		s = HeadBytes(s, 4*n)
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

// searchTools are the programs whose exit status 1 means "no match".
var searchTools = map[string]bool{"grep": true, "egrep": true, "fgrep": true, "rg": true, "ag": true, "ack": true, "zgrep": true}

// isSearch reports whether the exit status of a command line is a
// search's: its last simple command is grep, rg, ag or git grep.
func isSearch(cmd string) bool {
	seg := segments(cmd)
	if len(seg) == 0 {
		return false
	}
	w := shellWords(seg[len(seg)-1])
	if len(w) == 0 {
		return false
	}
	prog := w[0][strings.LastIndex(w[0], "/")+1:]
	return searchTools[prog] || prog == "git" && len(w) > 1 && w[1] == "grep"
}

// harnessHeaderRE matches a line a harness puts around a command's output
// (Codex's "Wall time: 0.1 seconds", "Output:", "Chunk ID: …").
var harnessHeaderRE = regexp.MustCompile(`(?i)^(wall time:.*|output:|chunk id:.*|original token count:.*|\(no output\)|<[a-z_-]+>|</[a-z_-]+>)$`)

// emptyOutput reports whether a result holds no output besides the lines
// that report its exit code and the harness's header lines.
func emptyOutput(out string) bool {
	for _, l := range nonEmptyLines(HeadBytes(out, 4096)) {
		if !leadExitRE.MatchString(l) && !tailExitRE.MatchString(l) && !harnessHeaderRE.MatchString(l) && !returnCodeRE.MatchString(l) {
			return false
		}
	}
	return len(out) <= 4096
}
