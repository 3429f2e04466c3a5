package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/vtcode/vtcode-ls/config"
	"github.com/vtcode/vtcode-ls/session"
)

// MaxErrorText bounds the message of every error the server sends (and of
// window/showMessage and window/logMessage texts).
const MaxErrorText = 1024

// A wireError is a protocol-level error that carries its JSON-RPC code:
// lifecycle violations, unknown methods and the like.
type wireError struct {
	code int64
	msg  string
}

func (e *wireError) Error() string { return e.msg }

func errorf(code int64, format string, args ...any) error {
	return &wireError{code: code, msg: fmt.Sprintf(format, args...)}
}

// toWire maps an error to the JSON-RPC error the client receives. It is the
// one place where error codes are chosen:
//
//	-32700 parse error          (framing; see stream)
//	-32600 invalid request      lifecycle violations, bad ids
//	-32601 method not found
//	-32602 invalid params       *session.ParamError, *config.FieldError, invalid ids
//	-32002 server not initialized
//	-32800 request cancelled    context.Canceled
//	-32803 request failed       *session.FailedError, with data
//	-32001 unknown session      session.ErrUnknownSession
//	-32004 session busy         session.ErrBusy (the message names the owner's pid)
//	-32603 internal error       anything else
//
// Every message is bounded by MaxErrorText.
func toWire(err error) *jsonrpc2.Error {
	var (
		we   *wireError
		pe   *session.ParamError
		fe   *config.FieldError
		fail *session.FailedError
	)
	e := &jsonrpc2.Error{Code: jsonrpc2.CodeInternalError, Message: err.Error()}
	switch {
	case errors.As(err, &we):
		e.Code, e.Message = we.code, we.msg
	case errors.Is(err, context.Canceled):
		e.Code, e.Message = CodeRequestCancelled, "request cancelled"
	case errors.As(err, &pe):
		e.Code, e.Message = jsonrpc2.CodeInvalidParams, pe.Error()
	case errors.As(err, &fe):
		e.Code, e.Message = jsonrpc2.CodeInvalidParams, fe.Error()
	case errors.Is(err, session.ErrInvalidID):
		e.Code = jsonrpc2.CodeInvalidParams
	case errors.Is(err, session.ErrUnknownSession):
		e.Code = CodeUnknownSession
	case errors.Is(err, session.ErrBusy):
		e.Code = CodeSessionBusy
	case errors.As(err, &fail):
		e.Code, e.Message = CodeRequestFailed, fail.Error()
		data := *fail
		data.RootCause = bound(data.RootCause)
		if b, err := json.Marshal(data); err == nil {
			raw := json.RawMessage(b)
			e.Data = &raw
		}
	case errors.Is(err, context.DeadlineExceeded):
		e.Code, e.Message = CodeRequestFailed, "request failed: timed out"
	}
	e.Message = bound(e.Message)
	return e
}

// bound cuts s to at most MaxErrorText bytes on a UTF-8 boundary, marking
// a cut with "…".
func bound(s string) string {
	if len(s) <= MaxErrorText {
		return s
	}
	cut := MaxErrorText - len("…")
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
