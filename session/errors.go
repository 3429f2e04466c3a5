package session

import (
	"errors"
	"fmt"

	"github.com/vtcode/vtcode-ls/store"
)

// ErrUnknownSession is returned (wrapped, naming the id) for a session id that
// is not open in this process.
var ErrUnknownSession = errors.New("unknown session")

// ErrBusy is matched (errors.Is) by the error of a call on a session that
// another process owns; the error is a *BusyError naming that process.
var ErrBusy = store.ErrBusy

// BusyError reports a session owned by another process.
type BusyError = store.BusyError

// ErrInvalidID is matched by the error of an invalid session or artifact id
// that was not reported as a *ParamError.
var ErrInvalidID = store.ErrInvalidID

// ParamError reports an invalid parameter. Path names the offending field in
// the wire shape, e.g. "sessionId" or "messages[3].role".
type ParamError struct {
	Path string
	Msg  string
}

func (e *ParamError) Error() string { return e.Path + ": " + e.Msg }

func paramErr(path, format string, args ...any) error {
	return &ParamError{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// FailedError reports a failed compaction: a provider rejection, a summary
// budget that cannot be met, an empty summary. Its fields are the error data
// of the protocol; RootCause is bounded and never carries a secret.
type FailedError struct {
	Kind        string `json:"kind"`
	Provider    string `json:"provider"`
	Model       string `json:"model"`
	InputTokens int    `json:"inputTokens"`
	Budget      int    `json:"budget"`
	RootCause   string `json:"rootCause"`

	err error // the underlying error, for errors.Is/As
}

func (e *FailedError) Error() string { return "compaction failed: " + e.RootCause }

// Unwrap returns the underlying error.
func (e *FailedError) Unwrap() error { return e.err }
