package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/vtcode/vtcode-ls/providers"
)

// RetryPolicy bounds the retries of a provider call. Only failures that are
// safe to repeat are retried: HTTP 408, 409, 429 (not quota), 5xx except 501,
// 529, and connection failures before the request was sent (refused, DNS).
// A reset or cut connection after the request went out, a timeout, and every
// other 4xx are returned at once. A provider's x-should-retry header
// overrides the status rule.
type RetryPolicy struct {
	// MaxAttempts is the number of attempts including the first; 0 means 3,
	// 1 disables retries.
	MaxAttempts int
	// BaseDelay is the first backoff; it doubles per attempt, with ±20 %
	// jitter. 0 means 500ms.
	BaseDelay time.Duration
	// MaxDelay caps one backoff; 0 means 8s.
	MaxDelay time.Duration
	// MaxRetryAfter is the longest retry-after the policy waits for; a
	// provider asking for a longer wait gets no retry and the error carries
	// RetryAfter. 0 means 60s.
	MaxRetryAfter time.Duration
	// Sleep waits d or until ctx is done. nil uses a timer; tests inject a
	// function that records d and returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
}

// DefaultRetryPolicy returns the policy used when a client's RetryPolicy is
// the zero value: 3 attempts, 500ms doubling backoff capped at 8s, retry-after
// honoured up to 60s.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxAttempts: 3, BaseDelay: 500 * time.Millisecond, MaxDelay: 8 * time.Second, MaxRetryAfter: 60 * time.Second}
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	d := DefaultRetryPolicy()
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = d.MaxAttempts
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = d.BaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = d.MaxDelay
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = d.MaxRetryAfter
	}
	if p.Sleep == nil {
		p.Sleep = sleepCtx
	}
	return p
}

func (p RetryPolicy) backoff(retry int) time.Duration {
	d := p.BaseDelay
	for i := 1; i < retry && d < p.MaxDelay; i++ {
		d *= 2
	}
	d = time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
	return min(d, p.MaxDelay)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// DefaultTimeout bounds one provider call (headers and body) when a client is
// given no *http.Client of its own. Summaries of long histories take minutes.
const DefaultTimeout = 10 * time.Minute

// MaxResponseBytes bounds a response body read by [Caller.ReadBody].
const MaxResponseBytes = 64 << 20

// maxErrorBody bounds the error body read before classification.
const maxErrorBody = 64 << 10

// Caller performs the HTTP exchanges of a vendor client: it posts JSON,
// retries what is safe to retry, classifies every failure into an *Error,
// strips the API key from error text, and logs each attempt without bodies
// or credentials. Vendor packages build one per client.
//
// Every HTTP client it uses follows redirects only within the origin of the
// request ([SameOriginRedirects]), so credentials never reach another host.
type Caller struct {
	Provider   string       // route name, for errors and logs
	APIKey     string       // the credential to redact from every error; never logged
	HTTPClient *http.Client // nil = a client with DefaultTimeout
	Logger     *slog.Logger // nil = discard
	Retry      RetryPolicy  // zero = DefaultRetryPolicy
	// Secrets are further credentials to redact from errors and output (see
	// [Credentials]: user info of the base URL, credential headers).
	Secrets []string
}

// Call is one POST of a JSON body.
type Call struct {
	Model  string      // for errors and logs
	URL    string      // full endpoint URL
	Header http.Header // request headers (auth, version, beta); Content-Type is set
	Body   []byte      // JSON body, re-sent unchanged on every attempt
}

// StreamTimeout bounds one streamed provider call when a client is given no
// *http.Client of its own: a stream is how answers expected to take over
// ten minutes are served (an hour per 128,000 output tokens at worst).
const StreamTimeout = time.Hour

var (
	defaultHTTPClient   = &http.Client{Timeout: DefaultTimeout, CheckRedirect: SameOriginRedirects(nil)}
	streamingHTTPClient = &http.Client{Timeout: StreamTimeout, CheckRedirect: SameOriginRedirects(nil)}
)

// client returns the HTTP client of a call: the caller's own (with the
// redirect guard), else the default one, whose timeout depends on whether
// the call asks for a stream.
func (c *Caller) client(call Call) *http.Client {
	if c.HTTPClient != nil {
		return guarded(c.HTTPClient)
	}
	if call.Header.Get("Accept") == "text/event-stream" {
		return streamingHTTPClient
	}
	return defaultHTTPClient
}

func (c *Caller) logger() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// Post sends call, retrying per the policy, and returns the first response
// with a 2xx status; the caller reads and closes its body. A failure is an
// *Error (after the last attempt), or ctx.Err() when ctx is cancelled.
func (c *Caller) Post(ctx context.Context, call Call) (*http.Response, error) {
	p := c.Retry.withDefaults()
	log := c.logger()
	for attempt := 1; ; attempt++ {
		start := time.Now()
		resp, retryable, err := c.once(ctx, call)
		if err == nil {
			log.Debug("provider call", "provider", c.Provider, "model", call.Model, "url", safeURL(call.URL, c.secrets()...),
				"status", resp.StatusCode, "attempt", attempt, "elapsed", time.Since(start).Round(time.Millisecond))
			return resp, nil
		}
		var pe *providers.Error
		if !errors.As(err, &pe) {
			return nil, err // cancellation
		}
		log.Debug("provider call failed", "provider", c.Provider, "model", call.Model, "url", safeURL(call.URL, c.secrets()...),
			"status", pe.Status, "kind", string(pe.Kind), "attempt", attempt, "elapsed", time.Since(start).Round(time.Millisecond))
		if !retryable || attempt >= p.MaxAttempts {
			return nil, err
		}
		wait := p.backoff(attempt)
		if pe.RetryAfter > 0 {
			if pe.RetryAfter > p.MaxRetryAfter {
				log.Warn("provider asks for a longer wait than allowed; not retrying", "provider", c.Provider,
					"model", call.Model, "kind", string(pe.Kind), "retryAfter", pe.RetryAfter)
				return nil, err
			}
			wait = pe.RetryAfter
		}
		log.Warn("provider call failed; retrying", "provider", c.Provider, "model", call.Model, "kind", string(pe.Kind),
			"status", pe.Status, "attempt", attempt, "wait", wait, "error", pe.Message)
		if serr := p.Sleep(ctx, wait); serr != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, serr
		}
	}
}

// once performs one attempt. It returns the response on 2xx, or an error and
// whether repeating the call is safe.
func (c *Caller) once(ctx context.Context, call Call) (*http.Response, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, call.URL, bytes.NewReader(call.Body))
	if err != nil {
		e := &providers.Error{Provider: c.Provider, Model: call.Model, Kind: providers.KindRejected,
			Message: "invalid endpoint URL: " + safeURL(call.URL, c.secrets()...)}
		return nil, false, redactError(e, c.secrets()...)
	}
	for k, vs := range call.Header {
		req.Header[k] = append([]string(nil), vs...)
	}
	req.Header.Set("Content-Type", "application/json")
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	resp, err := c.client(call).Do(req)
	if err != nil {
		cerr := ClassifyTransport(ctx, c.Provider, call.Model, err)
		var pe *providers.Error
		if errors.As(cerr, &pe) {
			redactError(pe, c.secrets()...)
		}
		return nil, isDialError(err) && ctx.Err() == nil, cerr
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, false, nil
	}
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	if rerr != nil && ctx.Err() != nil {
		return nil, false, ctx.Err()
	}
	e := classify(c.Provider, call.Model, resp.StatusCode, body, resp.Header, c.secrets())
	return nil, shouldRetry(e, resp.Header), e
}

func shouldRetry(e *providers.Error, h http.Header) bool {
	switch strings.ToLower(h.Get("X-Should-Retry")) {
	case "true":
		return e.Kind != providers.KindQuota && e.Kind != providers.KindAuth && e.Kind != providers.KindCapacity
	case "false":
		return false
	}
	switch {
	case e.Kind == providers.KindQuota, e.Kind == providers.KindAuth, e.Kind == providers.KindCapacity:
		return false
	case e.Status == 408, e.Status == 409, e.Status == 429:
		return true
	case e.Status >= 500 && e.Status != 501:
		return true
	}
	return false
}

// safeURL is u without query, fragment and user info, with secrets removed,
// for logs and messages.
func safeURL(u string, secrets ...string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(invalid URL)"
	}
	p.RawQuery, p.Fragment, p.User = "", "", nil
	return Redact(p.String(), secrets...)
}

// ReadBody reads a successful response body (at most MaxResponseBytes) and
// closes it. A failure while reading is classified like a transport failure
// (a cut connection is KindNetwork), or is ctx.Err() when ctx is cancelled.
func (c *Caller) ReadBody(ctx context.Context, model string, resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return nil, c.StreamError(ctx, model, err)
	}
	if len(body) > MaxResponseBytes {
		return nil, c.Fail(model, providers.KindMalformed, fmt.Sprintf("response larger than %d bytes", MaxResponseBytes))
	}
	return body, nil
}

// ReadJSON reads a successful response body like ReadBody and decodes it
// into v; a body that does not decode is a KindMalformed error. It returns
// the body, for classifying an error object that a successful answer
// carries.
func (c *Caller) ReadJSON(ctx context.Context, model string, resp *http.Response, v any) ([]byte, error) {
	data, err := c.ReadBody(ctx, model, resp)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return nil, c.Malformed(model, err)
	}
	return data, nil
}

// StreamError classifies an error met while reading a response body or
// stream; *Error values pass through (redacted), cancellation is ctx.Err().
func (c *Caller) StreamError(ctx context.Context, model string, err error) error {
	if err == nil {
		return nil
	}
	var pe *providers.Error
	if errors.As(err, &pe) {
		redactError(pe, c.secrets()...)
		return err
	}
	cerr := ClassifyTransport(ctx, c.Provider, model, err)
	if errors.As(cerr, &pe) {
		redactError(pe, c.secrets()...)
	}
	return cerr
}

// Classify is [Classify] for this caller's provider, with the credentials
// redacted before the message is bounded.
func (c *Caller) Classify(model string, status int, body []byte, hdr http.Header) *providers.Error {
	return classify(c.Provider, model, status, body, hdr, c.secrets())
}

// Malformed is [Malformed] for this caller's provider.
func (c *Caller) Malformed(model string, err error) *providers.Error {
	return redactError(Malformed(c.Provider, model, err), c.secrets()...)
}

// Fail returns an *Error of the given kind with a redacted, bounded message.
func (c *Caller) Fail(model string, kind providers.Kind, msg string) *providers.Error {
	return redactError(&providers.Error{Provider: c.Provider, Model: model, Kind: kind, Message: msg}, c.secrets()...)
}

// IsEventStream reports whether resp carries a text/event-stream body.
func IsEventStream(resp *http.Response) bool {
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return err == nil && mt == "text/event-stream"
}
