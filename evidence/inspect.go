package evidence

import (
	"regexp"
	"strings"
)

// inspectionTools are commands that only read the workspace or print (rm
// and touch change files, so they are not among them): a run that passed says nothing a
// colleague must re-check, and what it printed is file content, not errors.
var inspectionTools = map[string]bool{
	"ls": true, "cat": true, "head": true, "tail": true, "nl": true, "grep": true, "egrep": true, "rg": true,
	"ag": true, "find": true, "fd": true, "wc": true, "tree": true, "pwd": true, "echo": true, "which": true,
	"file": true, "stat": true, "du": true, "sort": true, "uniq": true, "cut": true, "awk": true, "less": true,
	"diff": true, "printf": true, "true": true, "cd": true, "mkdir": true, "tr": true, "basename": true, "dirname": true,
	"date": true, "env": true, "type": true, "jq": true, "column": true, "realpath": true, "readlink": true,
}

// IsInspection reports whether every command of a shell line (split at
// pipes, && , || and ;) only reads or prints: one of [inspectionTools], sed
// without -i, or git diff/status/log/show/grep/blame; none writes a file
// through a redirection.
func IsInspection(cmd string) bool {
	segs, ok := shellSegments(Normalize(cmd))
	if !ok {
		return false
	}
	for _, seg := range segs {
		w := strings.Fields(seg)
		if len(w) == 0 {
			continue
		}
		switch {
		case inspectionTools[w[0]]:
		case w[0] == "sed":
			for _, a := range w[1:] {
				if strings.HasPrefix(a, "-i") || a == "--in-place" {
					return false
				}
			}
		case w[0] == "git" && len(w) > 1 && gitReadRE.MatchString(w[1]):
		default:
			return false
		}
	}
	return true
}

var gitReadRE = regexp.MustCompile(`^(diff|status|log|show|grep|blame|branch|ls-files|rev-parse|remote|check-ignore|shortlog|describe|reflog)$`)

// shellSegments splits a shell line at |, ||, && and ; outside quotes. It
// reports false when, outside quotes, the line redirects (< >), substitutes
// ($, backquotes) or has a newline: a line that may write or run more than
// its words say.
func shellSegments(s string) ([]string, bool) {
	var segs []string
	var quote byte
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' {
				i++
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '\\':
			i++
		case c == '<' || c == '>' || c == '$' || c == '`' || c == '\n':
			return nil, false
		case c == '|' || c == ';' || c == '&':
			segs = append(segs, s[start:i])
			if i+1 < len(s) && (s[i+1] == '|' || s[i+1] == '&') {
				i++
			}
			start = i + 1
		}
	}
	if quote != 0 {
		return nil, false
	}
	return append(segs, s[start:]), true
}

// readToolRE matches the names of tools that read or search files.
var readToolRE = regexp.MustCompile(`(?i)^(read|read_?file|read_?many_?files|view|view_?file|open|open_?file|cat|grep|search|search_?files|file_?search|codebase_?search|grep_?search|glob|find|find_?files|ls|list|list_?dir|list_?directory|list_?files|rg)$`)

// readsOnly reports whether an action only read or searched: a read or
// search tool, or a shell inspection ([IsInspection]). What such an action
// printed is the content of files, whose error-like lines are not errors
// the run met.
func readsOnly(a *Action) bool {
	if a.Command != "" {
		return IsInspection(a.Command)
	}
	if !readToolRE.MatchString(a.Tool) {
		return false
	}
	op, changes := toolOp(a)
	return op == "" && len(changes) == 0
}
