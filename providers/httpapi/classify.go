package httpapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vtcode/vtcode-ls/providers"
)

// maxMessage bounds the provider message kept in an Error.
const maxMessage = 700

// Classify turns a failed provider answer into an *Error: an HTTP status with
// its body and headers, or (status 0) an error object met inside a 200
// response or a stream (an SSE "error" event, a Responses "response.failed").
//
// It recognizes the providers' real shapes: {"error":{"message","type","code"}}
// (OpenAI, Anthropic, OpenRouter, DeepSeek, llama.cpp), Gemini's
// [{"error":{...}}], Ollama's {"error":"..."}, MiniMax's base_resp, and
// OpenRouter's metadata.raw upstream error. The order of the checks:
//
//   - capacity: context_length_exceeded, "maximum context length", "prompt is
//     too long", "input length and `max_tokens` exceed context limit", "exceeds
//     the context window", Gemini's "input token count ... exceeds the maximum
//     number of tokens", xAI's "maximum prompt length", llama.cpp's
//     exceed_context_size_error, HTTP 413, ... (never for 429 or 5xx); the
//     input size is parsed from the message when it states one;
//   - quota: insufficient_quota, HTTP 402, "credit balance is too low",
//     "insufficient balance", "exceeded your current quota";
//   - auth: HTTP 401/403, authentication_error, permission_error;
//   - rate limit: HTTP 429, rate_limit_error, with RetryAfter from
//     retry-after-ms, retry-after (seconds or HTTP date);
//   - timeout: HTTP 408 and 504;
//   - server: other 5xx, 529, overloaded_error, api_error;
//   - rejected: any other 4xx, or an error object of unknown type.
//
// The message is redacted (see [Redact]: well-known key shapes) and then
// bounded; a caller holding a credential uses [Caller.Classify], which
// removes the credential before bounding, so no part of it survives a cut.
func Classify(provider, model string, status int, body []byte, hdr http.Header) *providers.Error {
	return classify(provider, model, status, body, hdr, nil)
}

// classify is Classify removing secrets (and every key-shaped string) from
// the message before it is bounded.
func classify(provider, model string, status int, body []byte, hdr http.Header, secrets []string) *providers.Error {
	d := errorDetails(body)
	e := &providers.Error{Provider: provider, Model: model, Status: status}
	msg := d.message
	if msg == "" {
		msg = snippet([]byte(Redact(string(body), secrets...)))
	}
	if msg == "" && status != 0 {
		msg = http.StatusText(status)
	}
	e.Message = providers.Bound(Redact(msg, secrets...), maxMessage)
	text := strings.ToLower(msg + " " + d.code + " " + d.typ)
	e.RetryAfter = retryAfter(hdr, time.Now())
	st := status
	if n, err := strconv.Atoi(d.code); st == 0 && err == nil && n >= 400 && n < 600 {
		st = n // an error object inside a 200 answer or a stream carries its status as code
	}
	switch {
	case st != 429 && st < 500 && isCapacity(st, text):
		e.Kind = providers.KindCapacity
		e.InputTokens = inputTokens(msg + " " + string(body))
	case isQuota(st, text):
		e.Kind = providers.KindQuota
	case st == 401 || st == 403 || st < 500 && (d.typ == "authentication_error" ||
		d.typ == "permission_error" || d.code == "invalid_api_key"):
		e.Kind = providers.KindAuth
	case st == 429 || st < 500 && (d.typ == "rate_limit_error" || d.code == "rate_limit_exceeded"):
		e.Kind = providers.KindRateLimit
	case st == 408 || st == 504 || d.typ == "timeout_error":
		e.Kind = providers.KindTimeout
	case st >= 500 || d.typ == "overloaded_error" || d.typ == "api_error" || d.typ == "server_error" ||
		d.code == "server_error" || strings.Contains(text, "overloaded"):
		e.Kind = providers.KindServer
	default:
		e.Kind = providers.KindRejected
	}
	return e
}

type details struct{ message, typ, code string }

// errorDetails extracts message, type and code from the common error shapes.
func errorDetails(body []byte) details {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return details{}
	}
	if body[0] == '[' { // Gemini wraps the error object in an array.
		var arr []json.RawMessage
		if json.Unmarshal(body, &arr) == nil && len(arr) > 0 {
			return errorDetails(arr[0])
		}
		return details{}
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return details{}
	}
	var d details
	if raw, ok := top["response"]; ok { // Responses "response.failed" event
		if inner := errorDetails(raw); inner.message != "" || inner.code != "" {
			return inner
		}
	}
	obj := top
	if raw, ok := top["error"]; ok {
		var s string
		if json.Unmarshal(raw, &s) == nil { // Ollama: {"error":"..."}
			d.message = s
			return d
		}
		var inner map[string]json.RawMessage
		if json.Unmarshal(raw, &inner) == nil && inner != nil {
			obj = inner
		}
	}
	d.message = jsonString(obj["message"])
	d.typ = jsonString(obj["type"])
	d.code = jsonString(obj["code"])
	if d.typ == "" {
		d.typ = strings.ToLower(jsonString(obj["status"])) // Gemini: "INVALID_ARGUMENT"
	}
	if d.message == "" {
		d.message = jsonString(top["message"])
	}
	if d.message == "" {
		d.message = jsonString(top["detail"])
	}
	if d.code == "" {
		d.code = jsonString(top["code"])
	}
	if raw, ok := top["base_resp"]; ok && d.message == "" { // MiniMax
		var br struct {
			Code int    `json:"status_code"`
			Msg  string `json:"status_msg"`
		}
		if json.Unmarshal(raw, &br) == nil {
			d.message, d.code = br.Msg, strconv.Itoa(br.Code)
		}
	}
	if raw, ok := obj["metadata"]; ok { // OpenRouter: the upstream error text
		var md struct {
			Raw      json.RawMessage `json:"raw"`
			Provider string          `json:"provider_name"`
		}
		if json.Unmarshal(raw, &md) == nil && len(md.Raw) > 0 {
			up := jsonString(md.Raw)
			if up == "" {
				up = string(md.Raw)
			}
			if inner := errorDetails([]byte(up)); inner.message != "" {
				up = inner.message
				if d.code == "" || d.code == "400" {
					d.code = inner.code
				}
			}
			if up != "" && !strings.Contains(d.message, up) {
				d.message = strings.TrimSpace(d.message + ": " + up)
			}
		}
	}
	return d
}

// jsonString returns a JSON string's value, a number's text, or "".
func jsonString(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

var (
	spaces   = regexp.MustCompile(`\s+`)
	htmlTags = regexp.MustCompile(`<[^>]*>`)
)

// snippet returns a short single-line excerpt of a non-JSON body (an HTML
// error page from a proxy, plain text).
func snippet(body []byte) string {
	s := strings.TrimSpace(string(body))
	if s == "" {
		return ""
	}
	s = htmlTags.ReplaceAllString(s, " ")
	s = strings.TrimSpace(spaces.ReplaceAllString(s, " "))
	return providers.Bound(s, 200)
}

var capacityPhrases = []string{
	"context_length_exceeded",
	"maximum context length",
	"context length exceeded",
	"exceeds the context window",
	"exceed the context window",
	"exceeds the maximum context",
	"context window exceeds limit",
	"exceeds context window",
	"prompt is too long",
	"exceed context limit",
	"maximum prompt length",
	"exceeds the maximum number of tokens",
	"exceeds the available context size",
	"exceed_context_size_error",
	"reduce the length of the messages",
	"input is too long",
	"too many input tokens",
	"prompt too long",
	"request_too_large",
	"too large for model with",
	"input tokens exceed",
	"context_window_exceeded",
	"model_context_window_exceeded",
}

func isCapacity(status int, text string) bool {
	if status == http.StatusRequestEntityTooLarge {
		return true
	}
	for _, p := range capacityPhrases {
		if strings.Contains(text, p) {
			return true
		}
	}
	return false
}

var quotaPhrases = []string{
	"insufficient_quota",
	"billing_hard_limit_reached",
	"credit balance is too low",
	"insufficient balance",
	"insufficient credits",
	"insufficient_balance",
	"exceeded your current quota",
	"payment required",
	"billing_not_active",
}

func isQuota(status int, text string) bool {
	if status == http.StatusPaymentRequired {
		return true
	}
	for _, p := range quotaPhrases {
		if strings.Contains(text, p) {
			return true
		}
	}
	return false
}

var tokenPatterns = []*regexp.Regexp{
	regexp.MustCompile(`(?i)prompt is too long: (\d+) tokens`),
	regexp.MustCompile(`(?i)exceed context limit: (\d+) \+`),
	regexp.MustCompile(`(?i)\((\d+) in the messages`),
	regexp.MustCompile(`(?i)resulted in (\d+) tokens`),
	regexp.MustCompile(`(?i)requested (?:about )?(\d+) tokens`),
	regexp.MustCompile(`(?i)input token count (?:\()?(\d+)`),
	regexp.MustCompile(`(?i)request contains (\d+) tokens`),
	regexp.MustCompile(`(?i)prompt contains (\d+) tokens`),
	regexp.MustCompile(`(?i)"n_prompt_tokens"\s*:\s*(\d+)`),
	regexp.MustCompile(`(?i)(\d+) input tokens`),
}

// inputTokens parses the input size out of a capacity message, or 0.
func inputTokens(msg string) int {
	for _, re := range tokenPatterns {
		if m := re.FindStringSubmatch(msg); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil {
				return n
			}
		}
	}
	return 0
}

// retryAfter reads retry-after-ms (milliseconds) or retry-after (seconds or an
// HTTP date) from h.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// ClassifyTransport turns an error of the HTTP exchange (no usable status)
// into an *Error: a deadline or timeout is KindTimeout, a refused, reset or
// cut connection KindNetwork. A cancelled ctx is not classified: ctx.Err() is
// returned as is, so callers can tell cancellation from failure.
func ClassifyTransport(ctx context.Context, provider, model string, err error) error {
	if err == nil {
		return nil
	}
	if ctx != nil && errors.Is(ctx.Err(), context.Canceled) {
		return ctx.Err()
	}
	var pe *providers.Error
	if errors.As(err, &pe) {
		return err
	}
	e := &providers.Error{Provider: provider, Model: model, Err: err}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		e.Kind = providers.KindTimeout
		e.Message = "no answer in time"
	case errors.Is(err, syscall.ECONNREFUSED):
		e.Kind, e.Message = providers.KindNetwork, "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		e.Kind, e.Message = providers.KindNetwork, "connection reset by peer"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		e.Kind, e.Message = providers.KindNetwork, "connection closed before the answer was complete"
	default:
		e.Kind = providers.KindNetwork
		e.Message = transportMessage(err)
	}
	return e
}

// transportMessage is the text of a transport error without the
// "Post \"url\":" prefix of *url.Error.
func transportMessage(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		err = ue.Err
	}
	return err.Error() // bounded by redactError, after redaction
}

// isDialError reports whether err happened before the request was sent
// (connection refused, DNS failure): such a call is always safe to retry.
func isDialError(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns) || errors.Is(err, syscall.ECONNREFUSED)
}

// Malformed returns a KindMalformed error for a response body that does not
// parse; the message names the parse error and never includes the body.
func Malformed(provider, model string, err error) *providers.Error {
	return &providers.Error{Provider: provider, Model: model, Kind: providers.KindMalformed,
		Message: providers.Bound(fmt.Sprintf("malformed response: %v", err), maxMessage), Err: err}
}

// Empty returns a KindEmpty error: a well-formed answer with nothing in it.
func Empty(provider, model, what string) *providers.Error {
	return &providers.Error{Provider: provider, Model: model, Kind: providers.KindEmpty, Message: what}
}

var secretPatterns = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{8,}[A-Za-z0-9_\-*]*`), "[REDACTED]"},
	{regexp.MustCompile(`\bxai-[A-Za-z0-9_\-]{16,}`), "[REDACTED]"},
	{regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{30,}`), "[REDACTED]"},
	{regexp.MustCompile(`\bgsk_[A-Za-z0-9]{16,}`), "[REDACTED]"},
	{regexp.MustCompile(`\bmg_[A-Za-z0-9_\-]{16,}`), "[REDACTED]"},
	{regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/\-]{8,}=*`), "Bearer [REDACTED]"},
	{regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s:@"']+:[^/\s@"']+@`), "${1}[REDACTED]@"},
	{regexp.MustCompile(`(?i)([?&](?:key|api_key|apikey|token)=)[^&\s"']+`), "${1}[REDACTED]"},
}

// Redact removes credentials from s: every occurrence of each secret of four
// bytes or more, and anything shaped like a well-known API key, bearer or
// basic credentials, user info in a URL or a key query parameter.
func Redact(s string, secrets ...string) string {
	for _, k := range secrets {
		if len(k) >= 4 {
			s = strings.ReplaceAll(s, k, "[REDACTED]")
		}
	}
	for _, p := range secretPatterns {
		s = p.re.ReplaceAllString(s, p.repl)
	}
	return basicAuth.ReplaceAllStringFunc(s, func(m string) string {
		if basicCredentials(m) {
			return "Basic [REDACTED]"
		}
		return m
	})
}

// basicAuth finds "Basic <token>"; basicCredentials tells credentials
// (base64 of "user:password") from ordinary words after "basic".
var basicAuth = regexp.MustCompile(`(?i)\bbasic\s+[A-Za-z0-9+/]{4,}={0,2}`)

func basicCredentials(m string) bool {
	fields := strings.Fields(m)
	if len(fields) != 2 {
		return false
	}
	raw, err := base64.StdEncoding.DecodeString(fields[1])
	return err == nil && bytes.IndexByte(raw, ':') > 0
}

// redactError applies Redact to an *Error's message and, when the cause's
// text holds a secret, replaces the cause by a redacted copy that still
// unwraps to the original's cause.
func redactError(e *providers.Error, secrets ...string) *providers.Error {
	e.Message = providers.Bound(Redact(e.Message, secrets...), maxMessage)
	if e.Err != nil {
		if t := e.Err.Error(); Redact(t, secrets...) != t {
			e.Err = &redacted{text: Redact(t, secrets...), cause: errors.Unwrap(e.Err)}
		}
	}
	return e
}

type redacted struct {
	text  string
	cause error
}

func (r *redacted) Error() string { return r.text }
func (r *redacted) Unwrap() error { return r.cause }
