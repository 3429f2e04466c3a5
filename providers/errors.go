package providers

import (
	"errors"
	"fmt"
	"time"
)

// Kind classifies a provider failure.
type Kind string

// The failure kinds.
const (
	KindCapacity  Kind = "capacity"   // the input does not fit the model's context window
	KindAuth      Kind = "auth"       // missing or rejected credentials
	KindQuota     Kind = "quota"      // credits or quota exhausted
	KindRateLimit Kind = "rate_limit" // 429; RetryAfter may be set
	KindServer    Kind = "server"     // 5xx
	KindTimeout   Kind = "timeout"    // no answer in time
	KindNetwork   Kind = "network"    // connection refused, reset, ...
	KindMalformed Kind = "malformed"  // a body that does not parse
	KindRejected  Kind = "rejected"   // any other 4xx (bad request, unsupported feature)
	KindEmpty     Kind = "empty"      // a well-formed answer with nothing in it
)

// MaxErrorText bounds the text of every provider error.
const MaxErrorText = 1024

// Error is a classified provider failure. Its text is bounded and never
// contains a credential.
type Error struct {
	Kind        Kind
	Provider    string
	Model       string
	Status      int           // HTTP status, 0 when none
	Message     string        // bounded root cause from the provider
	RetryAfter  time.Duration // from retry-after, for rate limits
	InputTokens int           // the request's input size when known
	Err         error         // underlying error, if any
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s %s: %s", e.Provider, e.Model, e.Kind)
	if e.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return Bound(s, MaxErrorText)
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the kind of the first *Error in err's chain, or "".
func KindOf(err error) Kind {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Kind
	}
	return ""
}

// IsCapacity reports whether err is a context-capacity rejection.
func IsCapacity(err error) bool { return KindOf(err) == KindCapacity }

// Bound cuts s to at most n bytes on a UTF-8 boundary, marking the cut with "…".
func Bound(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
