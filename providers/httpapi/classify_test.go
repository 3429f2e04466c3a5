package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/providers"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		hdr    http.Header
		kind   providers.Kind
		tokens int
		msg    string // substring of Message
	}{
		{"openai context_length_exceeded", 400,
			`{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`,
			nil, providers.KindCapacity, 0, "exceeds the context window"},
		{"openai legacy", 400,
			`{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
			nil, providers.KindCapacity, 130512, "maximum context length"},
		{"anthropic prompt too long", 400,
			`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"},"request_id":"req_1"}`,
			nil, providers.KindCapacity, 208310, "prompt is too long"},
		{"anthropic input plus max_tokens", 400,
			"{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try again\"}}",
			nil, providers.KindCapacity, 188240, "exceed context limit"},
		{"anthropic 413", 413,
			`{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes. The maximum request size is 32 MB."}}`,
			nil, providers.KindCapacity, 0, "maximum allowed"},
		{"gemini array", 400,
			`[{"error":{"code":400,"message":"The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).","status":"INVALID_ARGUMENT"}}]`,
			nil, providers.KindCapacity, 1196265, "input token count"},
		{"xai", 400,
			`{"code":"Client specified an invalid argument","error":"This model's maximum prompt length is 131072 but the request contains 150012 tokens."}`,
			nil, providers.KindCapacity, 150012, "maximum prompt length"},
		{"mistral", 400,
			`{"object":"error","message":"Prompt contains 40001 tokens and 0 draft tokens, too large for model with 32768 maximum context length","type":"invalid_request_error","param":null,"code":null}`,
			nil, providers.KindCapacity, 40001, "too large for model"},
		{"bedrock", 400, `{"message":"Input is too long for requested model."}`, nil, providers.KindCapacity, 0, "Input is too long"},
		{"minimax", 200, `{"base_resp":{"status_code":2013,"status_msg":"invalid params, context window exceeds limit"}}`, nil, providers.KindCapacity, 0, "context window exceeds limit"},
		{"stream failure", 0, `{"type":"response.failed","response":{"status":"failed","error":{"code":"context_length_exceeded","message":"Your input exceeds the context window of this model."}}}`,
			nil, providers.KindCapacity, 0, "context window"},
		{"rate limit 429 is never capacity", 429,
			`{"error":{"message":"Request too large for gpt-4o on tokens per min (TPM): Limit 30000, Requested 50000. The input or output tokens must be reduced in order to run successfully.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`,
			http.Header{"Retry-After": {"20"}}, providers.KindRateLimit, 0, "tokens per min"},
		{"insufficient quota", 429,
			`{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`,
			nil, providers.KindQuota, 0, "current quota"},
		{"anthropic credit", 400,
			`{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}`,
			nil, providers.KindQuota, 0, "credit balance"},
		{"402", 402, `{"error":{"message":"Insufficient credits","code":402}}`, nil, providers.KindQuota, 0, "Insufficient credits"},
		{"401", 401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, nil, providers.KindAuth, 0, "invalid x-api-key"},
		{"403", 403, `{"error":{"message":"Project does not have access to model gpt-5","type":"invalid_request_error","code":"model_not_found"}}`, nil, providers.KindAuth, 0, "does not have access"},
		{"408", 408, ``, nil, providers.KindTimeout, 0, "Request Timeout"},
		{"504 html", 504, `<html><body><h1>504 Gateway Time-out</h1></body></html>`, nil, providers.KindTimeout, 0, "504 Gateway Time-out"},
		{"529", 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, nil, providers.KindServer, 0, "Overloaded"},
		{"500", 500, `{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`, nil, providers.KindServer, 0, "server had an error"},
		{"stream overloaded", 0, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, nil, providers.KindServer, 0, "Overloaded"},
		{"error with status code", 0, `{"error":{"message":"Rate limit exceeded","code":429}}`, nil, providers.KindRateLimit, 0, "Rate limit"},
		{"ollama", 404, `{"error":"model \"llama9\" not found, try pulling it first"}`, nil, providers.KindRejected, 0, "not found"},
		{"bad request", 400, `{"error":{"message":"Unknown parameter: 'foo'.","type":"invalid_request_error","param":"foo","code":"unknown_parameter"}}`, nil, providers.KindRejected, 0, "Unknown parameter"},
		{"empty 400", 400, ``, nil, providers.KindRejected, 0, "Bad Request"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := Classify("p", "m", tc.status, []byte(tc.body), tc.hdr)
			if e.Kind != tc.kind {
				t.Errorf("kind = %q, want %q (%v)", e.Kind, tc.kind, e)
			}
			if e.InputTokens != tc.tokens {
				t.Errorf("input tokens = %d, want %d", e.InputTokens, tc.tokens)
			}
			if !strings.Contains(e.Message, tc.msg) {
				t.Errorf("message %q lacks %q", e.Message, tc.msg)
			}
			if e.Status != tc.status || e.Provider != "p" || e.Model != "m" {
				t.Errorf("error = %+v", e)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		h    http.Header
		want time.Duration
	}{
		{nil, 0},
		{http.Header{"Retry-After": {"7"}}, 7 * time.Second},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{http.Header{"Retry-After": {"-3"}}, 0},
		{http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After": {"7"}, "Retry-After-Ms": {"1250"}}, 1250 * time.Millisecond},
	}
	for i, tc := range cases {
		if got := retryAfter(tc.h, now); got != tc.want {
			t.Errorf("case %d: %v, want %v", i, got, tc.want)
		}
	}
}

func TestErrorTextIsBounded(t *testing.T) {
	long := strings.Repeat("é", 5000)
	e := Classify("openai", "gpt-5", 400, []byte(`{"error":{"message":"`+long+`"}}`), nil)
	if n := len(e.Error()); n > providers.MaxErrorText {
		t.Errorf("error text is %d bytes", n)
	}
	if n := len(e.Message); n > maxMessage {
		t.Errorf("message is %d bytes", n)
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestClassifyTransport(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	cases := []struct {
		err  error
		kind providers.Kind
		dial bool
	}{
		{context.DeadlineExceeded, providers.KindTimeout, false},
		{fmt.Errorf("read: %w", timeoutErr{}), providers.KindTimeout, false},
		{dial, providers.KindNetwork, true},
		{&net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, providers.KindNetwork, false},
		{io.ErrUnexpectedEOF, providers.KindNetwork, false},
		{errors.New("tls: handshake failure"), providers.KindNetwork, false},
	}
	for i, tc := range cases {
		err := ClassifyTransport(context.Background(), "p", "m", tc.err)
		if providers.KindOf(err) != tc.kind {
			t.Errorf("case %d: kind %q, want %q (%v)", i, providers.KindOf(err), tc.kind, err)
		}
		if !errors.Is(err, tc.err) {
			t.Errorf("case %d: %v does not wrap the cause", i, err)
		}
		if isDialError(tc.err) != tc.dial {
			t.Errorf("case %d: isDialError = %v", i, !tc.dial)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ClassifyTransport(ctx, "p", "m", errors.New("x")); !errors.Is(err, context.Canceled) || providers.KindOf(err) != "" {
		t.Errorf("cancelled: %v", err)
	}
}

func TestRedact(t *testing.T) {
	const key = "my-custom-secret-value"
	in := "key " + key + " openai sk-proj-abcdefghijklmnop1234 anthropic sk-ant-api03-xyzxyzxyzxyz " +
		"xai-ABCDEFGHIJKLMNOPQRSTUV gemini AIzaSyA1234567890abcdefghijklmnopqrstu " +
		"Authorization: Bearer abc.def.ghijklmnop url https://x/v1?key=zzz&alt=json"
	out := Redact(in, key, "")
	for _, secret := range []string{key, "sk-proj-abc", "sk-ant-api03", "xai-ABC", "AIzaSy", "abc.def.ghij", "key=zzz"} {
		if strings.Contains(out, secret) {
			t.Errorf("%q survives redaction: %s", secret, out)
		}
	}
	if !strings.Contains(out, "alt=json") || !strings.Contains(out, "openai") {
		t.Errorf("redaction removed too much: %s", out)
	}
}
