package evidence

import (
	"regexp"
	"strings"
)

// inspectionTools are commands that only read the workspace or print (and
// the housekeeping of scratch files): a run that passed says nothing a
// colleague must re-check, and what it printed is file content, not errors.
var inspectionTools = map[string]bool{
	"ls": true, "cat": true, "head": true, "tail": true, "nl": true, "grep": true, "egrep": true, "rg": true,
	"ag": true, "find": true, "fd": true, "wc": true, "tree": true, "pwd": true, "echo": true, "which": true,
	"file": true, "stat": true, "du": true, "sort": true, "uniq": true, "cut": true, "awk": true, "less": true,
	"diff": true, "printf": true, "true": true, "cd": true, "rm": true, "mkdir": true, "touch": true,
}

// IsInspection reports whether every command of a shell line (split at
// pipes, && , || and ;) only reads or prints: one of [inspectionTools], sed
// without -i, or git diff/status/log/show/grep/blame; none writes a file
// through a redirection.
func IsInspection(cmd string) bool {
	n := Normalize(cmd)
	if strings.ContainsAny(n, "<>`$") || strings.Contains(n, "<<") {
		return false
	}
	for _, seg := range shellSegmentRE.Split(n, -1) {
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

var (
	shellSegmentRE = regexp.MustCompile(`\|\||&&|[|;]`)
	gitReadRE      = regexp.MustCompile(`^(diff|status|log|show|grep|blame|branch|ls-files|rev-parse)$`)
)

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
