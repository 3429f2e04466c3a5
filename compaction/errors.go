package compaction

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/vtcode/vtcode-ls/providers"

	"github.com/vtcode/vtcode-ls/history"
)

// ErrAlreadyCompact reports a compaction that would not reduce the history's
// estimate: nothing changes.
//
//lint:ignore ST1005 the text is the user-visible sentence of docs/design.md §8.8
var ErrAlreadyCompact = errors.New("Conversation is already compact.")

// errEmptySummary is the root cause of an empty summary.
var errEmptySummary = errors.New("provider returned an empty summary")

// Kinds of [Error].
const (
	KindBudget      = "budget"      // the summary input cannot fit the budget; no provider call was made
	KindProvider    = "provider"    // the provider call failed
	KindEmpty       = "empty"       // the provider returned an empty summary
	KindUnsupported = "unsupported" // native compaction was requested on a route without it
)

// Error is a compaction failure with its route diagnostics. Its text is
// bounded to [providers.MaxErrorText] bytes and credentials are redacted.
type Error struct {
	Kind            string // one of the Kind constants
	Provider, Model string
	InputTokens     int // the estimated input of the failing request (the minimum one, for budget errors)
	Budget          int // the summary budget in force; 0 when the window is unknown
	Err             error
}

func (e *Error) Error() string {
	var b strings.Builder
	switch e.Kind {
	case KindBudget:
		b.WriteString("summary input does not fit the compaction budget")
	case KindEmpty:
		b.WriteString("summary failed")
	case KindUnsupported:
		b.WriteString("native compaction unavailable")
	default:
		b.WriteString("summary request failed")
	}
	fmt.Fprintf(&b, " (provider %s, model %s, input %s tokens, budget ", orUnknown(e.Provider), orUnknown(e.Model), history.FormatCount(e.InputTokens))
	if e.Budget > 0 {
		b.WriteString(history.FormatCount(e.Budget) + " tokens)")
	} else {
		b.WriteString("unknown)")
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(redact(e.Err.Error()))
	}
	return providers.Bound(b.String(), providers.MaxErrorText)
}

func (e *Error) Unwrap() error { return e.Err }

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// secretPatterns match credential shapes that must never reach a user.
var secretPatterns = []*regexp.Regexp{
	regexp.MustCompile(`\b(sk|xai|gsk|pk)-[A-Za-z0-9_\-]{8,}`),
	regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{20,}`),
	regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/\-]{8,}=*`),
	regexp.MustCompile(`(?i)\b(api[_-]?key|x-api-key|authorization|access[_-]?token)(["']?\s*[:=]\s*["']?)[^\s"',;]+`),
}

// redact replaces credential-looking substrings with [redacted].
func redact(s string) string {
	for i, re := range secretPatterns {
		if i == len(secretPatterns)-1 {
			s = re.ReplaceAllString(s, "$1$2[redacted]")
			continue
		}
		s = re.ReplaceAllString(s, "[redacted]")
	}
	return s
}
