package httpapi

import (
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/vtcode/vtcode-ls/providers"
)

// Endpoint is the configuration every vendor client shares: which route it
// serves, where and with which key it reaches it, and how it calls it. The
// Config types of providers/openai, providers/anthropic and
// providers/chatcompat embed it; each says which route names it serves, what
// an empty Provider or BaseURL means there, and how it sends the key.
type Endpoint struct {
	// Provider is the route name (see KnownProviders); the client
	// canonicalizes it with CanonicalProvider.
	Provider string
	// BaseURL is the API base including its version segment; "" means the
	// route's official endpoint (DefaultBaseURL). A route without one
	// (openresponses, unknown providers) needs it set.
	BaseURL string
	// APIKey is the credential, read by the caller from the environment
	// variable named in the configuration. It is never logged and is
	// redacted from every error; empty sends no credential.
	APIKey string
	// Model is used when a request leaves Model empty.
	Model string
	// Stream asks for a server-sent event stream on generation, for servers
	// that only stream. A streamed answer is consumed transparently either
	// way.
	Stream bool
	// Header holds extra headers sent with every request.
	Header http.Header
	// HTTPClient is the HTTP client; nil uses one with DefaultTimeout
	// (StreamTimeout for a streamed call). Whichever it is, redirects are
	// followed only within the request's origin ([SameOriginRedirects]).
	HTTPClient *http.Client
	// Logger receives one debug line per attempt and a warning per retry;
	// nil discards. Lines never hold keys or bodies.
	Logger *slog.Logger
	// Retry bounds retries; the zero value is DefaultRetryPolicy().
	Retry RetryPolicy
}

// Resolve is the shared part of a vendor client's constructor. It returns
// the base URL, BaseURL(table, e.BaseURL), and the Caller that performs the
// exchanges of e (its Provider, APIKey, HTTPClient, Logger and Retry). table
// is the provider-table entry whose default base URL applies: normally
// e.Provider, already canonical; a vendor whose routes all share one
// default names that entry. The error is BaseURL's.
func (e *Endpoint) Resolve(table string) (base string, caller *Caller, err error) {
	base, err = BaseURL(table, e.BaseURL)
	if err != nil {
		return "", nil, err
	}
	return base, &Caller{
		Provider:   e.Provider,
		APIKey:     e.APIKey,
		HTTPClient: e.HTTPClient,
		Logger:     e.Logger,
		Retry:      e.Retry,
		Secrets:    Credentials(e.APIKey, base, e.Header),
	}, nil
}

// Route returns the route of e: provider, default model and configured base
// URL.
func (e *Endpoint) Route() providers.Route {
	return providers.Route{Provider: e.Provider, Model: e.Model, BaseURL: e.BaseURL}
}

// RequestHeader returns the headers a request to e starts from: a copy of
// e.Header with canonical keys, leaving out the names in omit (compared
// without regard to case), and Accept: text/event-stream when stream is
// set. It holds no credential: each vendor sends APIKey its own way.
func (e *Endpoint) RequestHeader(stream bool, omit ...string) http.Header {
	h := http.Header{}
	for k, vs := range e.Header {
		if slices.ContainsFunc(omit, func(o string) bool { return strings.EqualFold(k, o) }) {
			continue
		}
		h[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	if stream {
		h.Set("Accept", "text/event-stream")
	}
	return h
}
