package evidence

import (
	"context"
	"regexp"
	"strings"
)

var (
	// panicRE: a Go (or Rust) panic line.
	panicRE = regexp.MustCompile(`^(panic: .+|thread '.*' panicked at .+|fatal error: .+)$`)
	// tracebackRE opens a Python traceback; its last unindented line is the error.
	tracebackRE = regexp.MustCompile(`^Traceback \(most recent call last\):`)
	// pytestERE: pytest's "E   KeyError: 'model'" detail line.
	pytestERE = regexp.MustCompile(`^E\s{2,}([A-Za-z_][\w.]*(?:Error|Exception|Failure|Exit)\b.*)$`)
	pyErrorRE = regexp.MustCompile(`^([A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning|Failure)|KeyError|StopIteration|AssertionError)\b(:.*)?$`)
	// diagRE: a compiler or linter diagnostic "file:line[:col]: message".
	diagRE = regexp.MustCompile(`^\S+\.\w+:\d+(:\d+)?:\s*(error|fatal|undefined|cannot|E\d+|[A-Z]{1,4}\d{2,4}|syntax error|\S+ error)\b.*`)
	// lintCodeRE: a linter code first ("SIM115 Use a context manager…",
	// "E999 SyntaxError: …", "- E999 SyntaxError: …").
	// lintBulletRE: a linter code listed as a bullet ("- E999 SyntaxError: …"),
	// not a removed line of a diff.
	lintBulletRE = regexp.MustCompile(`^- [A-Z]{1,4}\d{2,4} [A-Z]\w*`)
	lintCodeRE   = regexp.MustCompile(`^(?:- )?[A-Z]{1,4}\d{2,4}\s+\S.*`)
	// prefixErrorRE: a line that starts with an error word
	// ("error: …", "fatal: …", "E: …", "ERROR: …", "Error: …").
	// makeErrorRE: make's report of a failed recipe ("make: *** [lint] Error 1").
	makeErrorRE   = regexp.MustCompile(`^g?make(\[\d+\])?: \*\*\* .*\bError \d+`)
	prefixErrorRE = regexp.MustCompile(`^(?:\w[\w.-]*: )?(?:error|fatal|E|ERROR|Error|FATAL|FAILED|FAIL|--- FAIL|npm ERR!|Exception|Failure|CRITICAL)(?:\[[^\]]*\])?[:!]\s*\S.*`)
	// notFoundRE: a shell reporting a missing command or file.
	notFoundRE = regexp.MustCompile(`(?i)(command not found|no such file or directory|permission denied|not recognized as an internal or external command|unable to locate package|could not find|cannot find)`)
	// testFailLineRE: a test runner's failing test or summary line.
	testFailLineRE = regexp.MustCompile(`^(FAILED \S+.*|--- FAIL: \S+.*|FAIL\s+\S+|.*\b\d+ failed\b.*|ERROR \S+::\S+.*)$`)
)

// caughtErrorRE finds an exception a log line prints in parentheses.
var caughtErrorRE = regexp.MustCompile(`\(([A-Z][A-Za-z0-9]*(?:Error|Exception): [^()]*[A-Za-z][^()]*)\)`)

var (
	// fieldLabelRE matches the field label a harness prints before a
	// command's output ("Output: ", "Stderr: ").
	fieldLabelRE = regexp.MustCompile(`^(?i:output|stdout|stderr|result):\s+`)
	// emptyValueRE matches an error field without a value.
	emptyValueRE = regexp.MustCompile(`(?i)^(error|errors|stderr|exception)s?:\s*(\(?(none|null|nil|empty|n/a)\)?|-|0|)\s*$`)
)

// errorLines returns the error lines of a text, in order: panics, the last
// line of each Python traceback, diagnostics, lines that start with an error
// word, missing commands and files, failing tests. Only the head and the tail
// of a huge text are read.
func errorLines(text string) []string {
	var out []string
	for _, e := range classifiedErrors(context.Background(), text) {
		out = append(out, e.text)
	}
	return out
}

type errLine struct{ text, kind string }

// classifiedErrors returns the error lines of a text with their kinds. It
// stops early, with what it found, when ctx ends.
func classifiedErrors(ctx context.Context, text string) []errLine {
	var out []errLine
	scan := func(s string) {
		lines := strings.Split(s, "\n")
		inTrace, frame := false, ""
		for i := 0; i < len(lines); i++ {
			if i%2048 == 2047 && ctx.Err() != nil {
				return
			}
			raw := strings.TrimRight(lines[i], "\r ")
			l := strings.TrimSpace(raw)
			if l == "" {
				continue
			}
			if tracebackRE.MatchString(l) {
				inTrace, frame = true, ""
				continue
			}
			if inTrace {
				if strings.HasPrefix(l, "File \"") {
					frame = l
				}
				if raw != "" && raw[0] != ' ' && raw[0] != '\t' && pyErrorRE.MatchString(l) {
					if frame != "" {
						l += " (raised at " + strings.TrimSuffix(frame, ",") + ")"
					}
					out = append(out, errLine{l, ErrException})
					inTrace = false
				}
				continue
			}
			if isDiffLine(raw) && !lintBulletRE.MatchString(raw) {
				continue
			}
			if l[0] == '{' || l[0] == '[' && strings.HasSuffix(l, "]") && strings.Contains(l, "\"") {
				continue // a JSON document, not a message
			}
			l = fieldLabelRE.ReplaceAllString(l, "")
			if emptyValueRE.MatchString(l) {
				continue // "Error: (none)": a harness field with no value
			}
			if m := pytestERE.FindStringSubmatch(l); m != nil {
				out = append(out, errLine{m[1], ErrException})
				continue
			}
			kind := ""
			switch {
			case panicRE.MatchString(l):
				kind = ErrPanic
			case pyErrorRE.MatchString(l) && strings.Contains(l, ":"):
				kind = ErrException
			case diagRE.MatchString(l), lintCodeRE.MatchString(l) && hasLintShape(l):
				kind = ErrDiagnostic
			case notFoundRE.MatchString(l) && len(l) < 300:
				kind = ErrNotFound
			case testFailLineRE.MatchString(l):
				kind = ErrTest
			case prefixErrorRE.MatchString(l), makeErrorRE.MatchString(l):
				kind = ErrOther
			}
			if kind == "" {
				// Rule "caught exception" (scripts that catch an exception
				// and print it in a log line, "! NO_2: no price (HTTPError:
				// 429 Client Error: …)"): the exception in parentheses.
				if m := caughtErrorRE.FindStringSubmatch(l); m != nil {
					out = append(out, errLine{m[1], ErrException})
				}
				continue
			}
			// A bare label ("ERROR:") takes the line that follows.
			if strings.HasSuffix(l, ":") && len(strings.Fields(l)) <= 2 {
				for j := i + 1; j < len(lines); j++ {
					if n := strings.TrimSpace(lines[j]); n != "" {
						l += " " + n
						i = j
						break
					}
				}
			}
			// Test runners put the detail on the indented line that follows.
			if i+1 < len(lines) && (kind == ErrTest || kind == ErrOther || kind == ErrDiagnostic) {
				if n := lines[i+1]; len(n) > 1 && (n[0] == ' ' || n[0] == '\t') && strings.TrimSpace(n) != "" && !isDiffLine(n) {
					l += " / " + strings.TrimSpace(n)
					i++
				}
			}
			out = append(out, errLine{strings.Trim(l, "= "), kind})
		}
	}
	if len(text) > 2*maxScan {
		scan(HeadBytes(text, maxScan))
		scan(TailBytes(text, maxScan))
	} else {
		scan(text)
	}
	return out
}

// crashed reports whether a command's output ends in an uncaught exception
// (a traceback's last line) or a panic.
func crashed(ctx context.Context, out string) bool {
	t := TailBytes(out, 64<<10)
	if !strings.Contains(t, "Traceback (most recent call last)") && !strings.Contains(t, "panic: ") && !strings.Contains(t, "panicked at") {
		return false
	}
	for _, e := range classifiedErrors(ctx, t) {
		if e.kind == ErrPanic || e.kind == ErrException {
			return true
		}
	}
	return false
}

// hasLintShape keeps "SIM115 Use a context manager" and drops prose that
// merely starts with a capitalised code-like word ("ABC123 is the id").
func hasLintShape(l string) bool {
	f := strings.Fields(strings.TrimPrefix(l, "- "))
	if len(f) < 3 {
		return false
	}
	w := f[1]
	return w != "is" && w != "was" && w != "and" && (w[0] >= 'A' && w[0] <= 'Z')
}

// isDiffLine reports whether a line is a removed or added line of a diff,
// not a test runner's "--- FAIL:".
func isDiffLine(l string) bool {
	if len(l) == 0 || (l[0] != '-' && l[0] != '+') {
		return false
	}
	return len(l) == 1 || (l[1] != '-' && l[1] != '+')
}

// errorsIn records the error lines of a text at message i.
func (x *extractor) errorsIn(i int, text string, fromUser bool) {
	if text == "" {
		return
	}
	for _, e := range classifiedErrors(x.ctx, text) {
		x.addError(i, clip(e.text, errorChars), fromUser, e.kind)
	}
}

func (x *extractor) addError(i int, text string, fromUser bool, kind string) {
	if text == "" {
		return
	}
	k := errorKey(text)
	if j, ok := x.errIdx[k]; ok {
		e := &x.r.Errors[j]
		e.Last, e.Count = i, e.Count+1
		return
	}
	x.errIdx[k] = len(x.r.Errors)
	x.r.Errors = append(x.r.Errors, Error{Text: text, First: i, Last: i, Count: 1, FromUser: fromUser, Kind: kind})
}

// errorKey identifies an error regardless of case and of the timing a test
// runner appends ("in 0.23s").
//
// The code an error quotes in backquotes is dropped too, so the same
// refusal of different edits is one error.
//
// So is a URL: the same refusal of different requests (a rate limit on
// every endpoint) is one error.
func errorKey(s string) string {
	return strings.ToLower(urlRE.ReplaceAllString(quotedRE.ReplaceAllString(timingRE.ReplaceAllString(s, ""), "`…`"), "<url>"))
}

var urlRE = regexp.MustCompile(`\bhttps?://\S+`)

var quotedRE = regexp.MustCompile("`[^`]*(`|$)")

var timingRE = regexp.MustCompile(`\b(in )?\d+(\.\d+)?m?s\b`)
