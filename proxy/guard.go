package proxy

import (
	"crypto/sha256"
	"mime"
	"net"
	"net/http"
	neturl "net/url"
	"strings"
	"sync"
)

// This file is the proxy's door: what a request must be before anything of
// it is forwarded or reaches the engine. A web page in the user's browser
// can send requests to a loopback port (and, through DNS rebinding, read the
// answers), so requests that come from a browser context are refused, and a
// request without credentials never makes the engine spend a key of its own.

// refusal is a request the proxy answers itself, with status and message.
type refusal struct {
	status int
	msg    string
}

func (r *refusal) Error() string { return r.msg }

// checkBrowser refuses what a browser sends and an agent does not: a Host
// that is not the proxy's (a rebound DNS name), an Origin header that is not
// allowed, and a cross-site fetch (Sec-Fetch-Site).
func (s *Server) checkBrowser(r *http.Request) *refusal {
	if !s.hostAllowed(r.Host) {
		return &refusal{http.StatusMisdirectedRequest, "vtcode-ls proxy: Host " + quoteBounded(r.Host) +
			" is not this proxy's address: use http://127.0.0.1:PORT or http://localhost:PORT"}
	}
	origin, hasOrigin := r.Header["Origin"]
	if hasOrigin {
		if len(origin) != 1 || !s.originAllowed(origin[0]) {
			return &refusal{http.StatusForbidden, "vtcode-ls proxy: requests from a web page (Origin " + quoteBounded(strings.Join(origin, ",")) +
				") are refused; allow an origin with [proxy] allowed_origins in the user configuration"}
		}
		return nil
	}
	switch strings.ToLower(r.Header.Get("Sec-Fetch-Site")) {
	case "cross-site", "same-site":
		return &refusal{http.StatusForbidden, "vtcode-ls proxy: requests from a web page are refused"}
	}
	return nil
}

// hostAllowed reports whether host (the request's Host) names this proxy:
// a loopback name or address, the listen address's host, or any IP address
// when the proxy listens on all of them. A DNS name other than localhost
// and the listen host is what a rebinding attack sends. An empty Host (an
// HTTP/1.0 client) cannot come from a browser.
func (s *Server) hostAllowed(host string) bool {
	if host == "" {
		return true
	}
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
	if isLoopback(h) {
		return true
	}
	lh := strings.ToLower(s.listenHost)
	if ip := net.ParseIP(h); ip != nil {
		lip := net.ParseIP(lh)
		return lip != nil && (lip.IsUnspecified() || lip.Equal(ip))
	}
	return lh != "" && h == lh
}

func (s *Server) originAllowed(origin string) bool {
	origin = strings.TrimRight(strings.TrimSpace(origin), "/")
	for _, o := range s.o.AllowedOrigins {
		if strings.EqualFold(o, origin) {
			return true
		}
	}
	return false
}

// isJSON reports whether a Content-Type is JSON (application/json,
// application/*+json), as the APIs require and agents send; a browser can
// send text/plain, a form or nothing without asking first.
func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")
}

// cleanPath returns the request's path when it is already normal: no "." or
// ".." segment, no empty segment (a double slash) but a trailing one, no
// encoded slash or backslash, no control character. What is forwarded is
// then exactly the path the route was chosen by.
func cleanPath(u *neturl.URL) (string, *refusal) {
	p := u.Path
	bad := func(why string) (string, *refusal) {
		return "", &refusal{http.StatusBadRequest, "vtcode-ls proxy: request path " + quoteBounded(u.EscapedPath()) + " " + why}
	}
	if !strings.HasPrefix(p, "/") {
		return bad("must be absolute")
	}
	raw := strings.ToLower(u.RawPath)
	if strings.Contains(raw, "%2f") || strings.Contains(raw, "%5c") || strings.ContainsRune(p, '\\') {
		return bad("has an encoded separator")
	}
	for i := 0; i < len(p); i++ {
		if p[i] < 0x20 || p[i] == 0x7f {
			return bad("has a control character")
		}
	}
	segs := strings.Split(p[1:], "/")
	for i, seg := range segs {
		switch {
		case seg == "." || seg == "..":
			return bad("has a dot segment")
		case seg == "" && i != len(segs)-1:
			return bad("has an empty segment")
		}
	}
	return p, nil
}

// quoteBounded quotes what a request sent for an error message, bounded.
func quoteBounded(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return `"` + strings.Map(func(r rune) rune {
		if r < 0x20 || r == '"' || r == 0x7f {
			return '?'
		}
		return r
	}, s) + `"`
}

// credentialHeaders are the headers the providers' APIs take a key in.
var credentialHeaders = []string{"X-Api-Key", "Authorization", "X-Goog-Api-Key", "Api-Key"}

// credential is the digest of a request's credentials toward one upstream;
// the zero value means the request carries none. The credentials
// themselves are never kept.
type credential [32]byte

func credentialOf(h http.Header, target *neturl.URL) (c credential, ok bool) {
	d := sha256.New()
	d.Write([]byte(strings.ToLower(target.Scheme + "://" + target.Host)))
	for _, k := range credentialHeaders {
		for _, v := range h.Values(k) {
			if v = strings.TrimSpace(v); v != "" && !strings.EqualFold(v, "bearer") {
				ok = true
			}
			d.Write([]byte{0})
			d.Write([]byte(k + ":" + v))
		}
	}
	d.Sum(c[:0])
	return c, ok
}

// maxVerified bounds the credentials the proxy remembers as accepted.
const maxVerified = 1024

// verifiedSet remembers, for this process only, the credentials an
// upstream accepted (answered 2xx). The engine works only for those: a
// request whose key the upstream has not accepted could be answered 401,
// and must not have made the engine compact (with a key of its own) or
// create a session first.
type verifiedSet struct {
	mu sync.Mutex
	m  map[credential]struct{}
}

func (v *verifiedSet) has(c credential) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	_, ok := v.m[c]
	return ok
}

// observe updates the set with an upstream's answer to c.
func (v *verifiedSet) observe(c credential, status int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	switch {
	case status >= 200 && status < 300:
		if v.m == nil || len(v.m) >= maxVerified {
			v.m = map[credential]struct{}{}
		}
		v.m[c] = struct{}{}
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		delete(v.m, c)
	}
}
