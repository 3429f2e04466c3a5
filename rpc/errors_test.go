package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/vtcode/vtcode-ls/config"
	"github.com/vtcode/vtcode-ls/session"
)

func TestToWire(t *testing.T) {
	failed := &session.FailedError{Kind: "rejected", Provider: "openai", Model: "gpt", InputTokens: 10, Budget: 5, RootCause: strings.Repeat("é", 2000)}
	for _, tc := range []struct {
		err  error
		code int64
		msg  string
	}{
		{errorf(jsonrpc2.CodeMethodNotFound, "method not found: x"), jsonrpc2.CodeMethodNotFound, "method not found: x"},
		{fmt.Errorf("compacting: %w", context.Canceled), CodeRequestCancelled, "request cancelled"},
		{&session.ParamError{Path: "messages[2].role", Msg: "bad"}, jsonrpc2.CodeInvalidParams, "messages[2].role: bad"},
		{fmt.Errorf("set policy: %w", &config.FieldError{Path: "policy.context.trimToPercent", Msg: "must be <= 100"}), jsonrpc2.CodeInvalidParams, "policy.context.trimToPercent: must be <= 100"},
		{fmt.Errorf("open %w", session.ErrInvalidID), jsonrpc2.CodeInvalidParams, ""},
		{fmt.Errorf("%w %q", session.ErrUnknownSession, "s9"), CodeUnknownSession, `unknown session "s9"`},
		{fmt.Errorf("open: %w", &session.BusyError{ID: "s1", PID: 4242}), CodeSessionBusy, "4242"},
		{failed, CodeRequestFailed, "compaction failed: "},
		{context.DeadlineExceeded, CodeRequestFailed, "timed out"},
		{errors.New(strings.Repeat("x", 5000)), jsonrpc2.CodeInternalError, "xxx"},
	} {
		e := toWire(tc.err)
		if e.Code != tc.code || !strings.Contains(e.Message, tc.msg) {
			t.Errorf("toWire(%v) = %d %q, want %d containing %q", tc.err, e.Code, e.Message, tc.code, tc.msg)
		}
		if len(e.Message) > MaxErrorText {
			t.Errorf("toWire(%.40v): message of %d bytes", tc.err, len(e.Message))
		}
	}
	e := toWire(failed)
	if e.Data == nil {
		t.Fatal("request failed without data")
	}
	var data map[string]any
	if err := json.Unmarshal(*e.Data, &data); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"kind", "provider", "model", "inputTokens", "budget", "rootCause"} {
		if _, ok := data[k]; !ok {
			t.Errorf("data lacks %s: %s", k, *e.Data)
		}
	}
	if rc, _ := data["rootCause"].(string); len(rc) > MaxErrorText {
		t.Errorf("rootCause of %d bytes", len(rc))
	}
}

func TestBound(t *testing.T) {
	s := strings.Repeat("日本", 400) // 2,400 bytes
	b := bound(s)
	if len(b) > MaxErrorText || !strings.HasSuffix(b, "…") || !strings.HasPrefix(s, strings.TrimSuffix(b, "…")) {
		t.Errorf("bound gave %d bytes: %q", len(b), b[len(b)-10:])
	}
	if bound("short") != "short" {
		t.Error("bound changed a short string")
	}
}
