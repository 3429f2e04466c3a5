package httpapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
)

// Credentials returns every form in which the credentials of an endpoint can
// show up in text: the API key, and for a base URL with user info
// ("https://user:password@host/v1") the password, "user:password" (plain and
// as written in the URL) and its base64 form, which is what an
// "Authorization: Basic" header carries. Values of extra headers whose name
// says they carry a credential (Authorization, *key*, *token*, *secret*,
// Cookie) are included, with a leading scheme word ("Bearer x") dropped.
// Strings shorter than four bytes are left out: they cannot be told from
// ordinary text.
func Credentials(apiKey, baseURL string, header http.Header) []string {
	var out []string
	add := func(s string) {
		s = strings.TrimSpace(s)
		if len(s) >= 4 && !containsString(out, s) {
			out = append(out, s)
		}
	}
	add(apiKey)
	if u, err := url.Parse(strings.TrimSpace(baseURL)); err == nil && u.User != nil {
		user := u.User.Username()
		if pass, ok := u.User.Password(); ok {
			add(pass)
			add(user + ":" + pass)
			add(url.UserPassword(user, pass).String())
			add(base64.StdEncoding.EncodeToString([]byte(user + ":" + pass)))
		} else {
			add(user)
		}
	}
	for k, vs := range header {
		name := strings.ToLower(k)
		if !(name == "authorization" || name == "proxy-authorization" || name == "cookie" ||
			strings.Contains(name, "key") || strings.Contains(name, "token") || strings.Contains(name, "secret")) {
			continue
		}
		for _, v := range vs {
			add(v)
			if _, rest, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
				add(rest)
			}
		}
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// redactKnown replaces every occurrence of each known secret, in plain and
// JSON-escaped form, by [REDACTED]. Unlike [Redact] it applies no pattern:
// it is meant for model output, where key-shaped text can be legitimate.
func redactKnown(s string, secrets []string) string {
	for _, k := range secrets {
		if len(k) < 4 {
			continue
		}
		s = strings.ReplaceAll(s, k, "[REDACTED]")
		if esc := jsonEscaped(k); esc != k {
			s = strings.ReplaceAll(s, esc, "[REDACTED]")
		}
	}
	return s
}

func jsonEscaped(s string) string {
	b, err := json.Marshal(s)
	if err != nil || len(b) < 2 {
		return s
	}
	return string(b[1 : len(b)-1])
}

func redactRaw(raw json.RawMessage, secrets []string) json.RawMessage {
	if raw == nil {
		return nil
	}
	s := redactKnown(string(raw), secrets)
	if s == string(raw) {
		return raw
	}
	return json.RawMessage(s)
}

// redactMessage removes the known secrets from every field of m that holds
// provider text.
func redactMessage(m *history.Message, secrets []string) {
	if parts := m.Content.PartList(); parts != nil {
		out := make([]history.Part, len(parts))
		for i, p := range parts {
			out[i] = history.Part{Type: p.Type, Text: redactKnown(p.Text, secrets), Raw: redactRaw(p.Raw, secrets)}
		}
		m.Content = history.Parts(out...)
	} else if m.Content.IsString() {
		m.Content = history.Text(redactKnown(m.Content.Text(), secrets))
	}
	m.Reasoning = redactKnown(m.Reasoning, secrets)
	if len(m.ToolCalls) > 0 {
		calls := make([]history.ToolCall, len(m.ToolCalls))
		for i, tc := range m.ToolCalls {
			tc.Arguments = redactKnown(tc.Arguments, secrets)
			tc.Input = redactKnown(tc.Input, secrets)
			calls[i] = tc
		}
		m.ToolCalls = calls
	}
	if len(m.ReasoningDetails) > 0 {
		details := make([]json.RawMessage, len(m.ReasoningDetails))
		for i, d := range m.ReasoningDetails {
			details[i] = redactRaw(d, secrets)
		}
		m.ReasoningDetails = details
	}
	m.Forget()
}

// RedactResponse removes the caller's credentials from everything a
// provider returned (text, reasoning, tool calls, opaque blocks): a provider
// that echoes the key in a summary must not get it stored. Vendor clients
// call it on every successful answer. It returns r.
func (c *Caller) RedactResponse(r *providers.Response) *providers.Response {
	secrets := c.secrets()
	if r == nil || len(secrets) == 0 {
		return r
	}
	redactMessage(&r.Message, secrets)
	r.Compaction = redactRaw(r.Compaction, secrets)
	if len(r.Message.ReasoningDetails) > 0 && r.Compaction != nil {
		// Keep Compaction identical to its ReasoningDetails copy.
		for _, d := range r.Message.ReasoningDetails {
			if bytes.Equal(d, r.Compaction) {
				r.Compaction = d
				break
			}
		}
	}
	return r
}

// RedactCompact is [Caller.RedactResponse] for a native compaction answer.
func (c *Caller) RedactCompact(r *providers.CompactResponse) *providers.CompactResponse {
	secrets := c.secrets()
	if r == nil || len(secrets) == 0 {
		return r
	}
	out := make([]history.Message, len(r.Output))
	for i := range r.Output {
		out[i] = r.Output[i]
		redactMessage(&out[i], secrets)
	}
	r.Output = out
	return r
}

// secrets is every credential of the caller.
func (c *Caller) secrets() []string {
	out := make([]string, 0, 1+len(c.Secrets))
	if len(c.APIKey) >= 4 {
		out = append(out, c.APIKey)
	}
	for _, s := range c.Secrets {
		if len(s) >= 4 && !containsString(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// ErrCrossOriginRedirect is the cause of a provider call that was
// redirected to another origin (scheme, host or port): the request carries
// credentials, so it is not followed.
var ErrCrossOriginRedirect = errors.New("the provider redirected the request to another origin; not followed, since the request carries credentials")

// SameOriginRedirects is the CheckRedirect of every provider HTTP client: it
// follows a redirect only to the origin (scheme, host and port) of the first
// request, at most 10 times, so credentials (Authorization, x-api-key, user
// info) never reach another host or port. next, when not nil, is consulted
// as well (a client's own policy).
func SameOriginRedirects(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if len(via) > 0 && !sameOrigin(via[0].URL, req.URL) {
			return ErrCrossOriginRedirect
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
}

func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}

// guarded returns hc with [SameOriginRedirects] installed (a shallow copy,
// so a client shared by the caller is not changed).
func guarded(hc *http.Client) *http.Client {
	c := *hc
	c.CheckRedirect = SameOriginRedirects(hc.CheckRedirect)
	return &c
}
