package evidence

import (
	"regexp"
	"slices"
	"strings"
)

// Command is one distinct simple command the session ran inside a longer
// command line (a chain joined by &&, ;, || or |, or a script of several
// lines), as the record spells it (whitespace collapsed).
type Command struct {
	Text string
	// Check is the index in Record.Checks of the last line it ran in; that
	// line's outcome is the only one the record shows for it.
	Check int
	Runs  int // how many lines ran it
}

// notCommandWords are the first words of segments that run nothing worth
// listing: shell keywords and builtins that set up or print.
var notCommandWords = map[string]bool{
	"cd": true, "echo": true, "printf": true, "true": true, "false": true, "sleep": true, "set": true,
	"export": true, "source": true, ".": true, "for": true, "do": true, "done": true, "if": true,
	"then": true, "else": true, "elif": true, "fi": true, "while": true, "until": true, "case": true,
	"esac": true, "{": true, "}": true, "wait": true, "exit": true, "return": true, "local": true,
	"unset": true, "shift": true, "trap": true, "pushd": true, "popd": true, "[": true, "[[": true, "test": true,
}

// quietRedirectRE matches the redirections that only silence or merge a
// command's output ("2>&1", "2>/dev/null", ">/dev/null"): they make no
// inspection a change.
var quietRedirectRE = regexp.MustCompile(`\s*\d?>>?\s*(?:&\d|/dev/null)`)

// assignmentRE matches a segment that only assigns shell variables.
var assignmentRE = regexp.MustCompile(`^(?:[A-Za-z_]\w*=\S*\s*)+$`)

// Commands returns, in the order of their last run, the distinct simple
// commands that ran inside command lines longer than short bytes (0: any
// length) or of several lines: rule "commands in chains
// and scripts" (every shell harness; Claude Code's multi-line Bash scripts
// that start with `cd DIR`, Codex's `a && b && git push`). A line's
// segments are split at &&, ||, ;, | and newlines outside quotes, heredoc
// bodies dropped; segments that only inspect (see [IsInspection], output
// silenced or not), shell keywords and builtins, variable assignments and
// heredoc terminators are not listed, nor a command that also ran as a
// line of its own (that line is a check, with its own last run).
func (r *Record) Commands(short int) []Command {
	var out []Command
	seq := map[string]int{} // text → the step of its last run
	at := map[string]int{}  // text → index in out
	step := 0
	standalone := map[string]bool{}
	for _, c := range r.Checks {
		standalone[commandKey(c.Normalized)] = true
	}
	for ci, c := range r.Checks {
		if one := strings.TrimSpace(c.Command); short > 0 && len(one) <= short && !strings.Contains(one, "\n") {
			continue // a short line is named whole where its check is
		}
		segs := significantSegments(c.Command)
		if len(segs) == 0 || len(segs) == 1 && Normalize(segs[0]) == c.Normalized {
			continue
		}
		for _, s := range segs {
			k := commandKey(s)
			if standalone[k] {
				continue // a check of its own: the checks list it with its last run
			}
			step++
			if i, ok := at[k]; ok {
				out[i].Text, out[i].Check, out[i].Runs = s, ci, out[i].Runs+1
			} else {
				at[k] = len(out)
				out = append(out, Command{Text: s, Check: ci, Runs: 1})
			}
			seq[k] = step
		}
	}
	slices.SortStableFunc(out, func(a, b Command) int { return seq[commandKey(a.Text)] - seq[commandKey(b.Text)] })
	return out
}

// commandKey identifies a simple command whatever output it silences.
func commandKey(s string) string { return strings.TrimSpace(quietRedirectRE.ReplaceAllString(s, "")) }

// significantSegments returns the simple commands of a line worth listing,
// each once, whitespace collapsed.
func significantSegments(cmd string) []string {
	body := stripSpans(HeadBytes(cmd, 64<<10), heredocSpans(cmd))
	var out []string
	for _, seg := range segments(body) {
		s := strings.Join(strings.Fields(seg), " ")
		w := strings.Fields(s)
		if len(w) == 0 || strings.HasPrefix(w[0], "#") || notCommandWords[w[0]] || assignmentRE.MatchString(s) {
			continue
		}
		if len(w) == 1 && strings.ToUpper(w[0]) == w[0] && hasLetter(w[0]) {
			continue // a heredoc's terminator
		}
		if IsInspection(commandKey(strings.TrimPrefix(s, "time "))) || containsString(out, s) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// commitCmdRE finds a git commit in a command line.
var commitCmdRE = regexp.MustCompile(`\bgit\s+(?:-C\s+\S+\s+)?commit\b`)

// CommitSubject returns the first line of the message a command line's git
// commit writes: -m 'msg', -m "$(cat <<'EOF' … EOF)", or -F - with a
// heredoc (its body as heredocSpans finds it); "" when the line commits
// nothing or its message is not in it.
func CommitSubject(cmd string) string {
	loc := commitCmdRE.FindStringIndex(cmd)
	if loc == nil {
		return ""
	}
	rest := cmd[loc[1]:]
	line, _, _ := strings.Cut(rest, "\n")
	if m := commitMessageRE.FindStringIndex(cmd[loc[0]:]); m != nil {
		s := cmd[loc[0]+m[1]:]
		if h := messageHeredocRE.FindStringSubmatch(s); h != nil {
			return firstLine(s[len(h[0]):])
		}
		w := s[:shellWordEnd(s)]
		return firstLine(strings.Trim(w, `"'`))
	}
	if strings.Contains(line, "-F -") || strings.Contains(line, "--file=-") || strings.Contains(line, "--file -") {
		if h := heredocSpans(rest); len(h) > 0 {
			return firstLine(rest[h[0][0]:h[0][1]])
		}
	}
	return ""
}
