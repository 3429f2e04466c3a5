package httpapi

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/vtcode/vtcode-ls/providers/catalog"
)

// BaseURL returns the base URL a client uses: the configured one, else the
// provider's default. It fails when there is none or it is not an absolute
// http(s) URL.
func BaseURL(provider, configured string) (string, error) {
	base := strings.TrimSpace(configured)
	if base == "" {
		base = catalog.DefaultBaseURL(provider)
	}
	if base == "" {
		return "", fmt.Errorf("provider %q needs a base_url", provider)
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("provider %q: base_url must be an absolute http(s) URL", provider)
	}
	return strings.TrimRight(base, "/"), nil
}

// APIURL returns the URL of an API path on a base URL: the one rule every
// upstream URL is built by, the engine's own clients and the proxy's
// forwarding alike. path is the path as the API documents it, with its
// version ("/v1/messages", "/v1/responses/compact", "/v1/chat/completions");
// query ("" for none) follows the base URL's own query. Both conventions of
// a base URL work:
//
//	https://api.anthropic.com        + /v1/messages → https://api.anthropic.com/v1/messages
//	https://api.anthropic.com/v1     + /v1/messages → https://api.anthropic.com/v1/messages
//	https://api.openai.com/v1        + /v1/responses → https://api.openai.com/v1/responses
//	https://openrouter.ai/api/v1     + /v1/chat/completions → https://openrouter.ai/api/v1/chat/completions
//	…/v1beta/openai                  + /v1/chat/completions → …/v1beta/openai/chat/completions
//
// A base URL without a path takes the whole path; one with a path stands
// for the path's leading /v1 (a gateway that wants …/anthropic/v1/messages
// is configured as …/anthropic/v1). It fails when base is not an absolute
// http(s) URL.
func APIURL(base, path, query string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("base_url must be an absolute http(s) URL")
	}
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	basePath := strings.TrimRight(u.Path, "/")
	if basePath != "" {
		if p, ok := strings.CutPrefix(path, "/v1/"); ok {
			path = "/" + p
		} else if path == "/v1" {
			path = ""
		}
	}
	out := *u
	out.Path = basePath + path
	out.RawPath = ""
	out.Fragment, out.RawFragment = "", ""
	switch {
	case out.RawQuery == "":
		out.RawQuery = query
	case query != "":
		out.RawQuery += "&" + query
	}
	return &out, nil
}

// JoinURL is [APIURL] as a string, for a base URL already checked (the
// vendor clients check theirs when they are built); "" when base is not an
// absolute http(s) URL.
func JoinURL(base, path string) string {
	q := ""
	if i := strings.IndexByte(base, '?'); i >= 0 {
		base, q = base[:i], base[i+1:]
	}
	u, err := APIURL(base, path, q)
	if err != nil {
		return ""
	}
	return u.String()
}
