package config

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// Proxy is the [proxy] table: the in-process HTTP proxy of an
// editor-started daemon (see package proxy).
type Proxy struct {
	// Listen is the address to listen on ("127.0.0.1:8787"); empty: no
	// proxy.
	Listen string
	// AllowRemote allows a listen address that is not loopback.
	AllowRemote bool
	// SecretEnv names the environment variable holding a shared secret the
	// proxy requires of every request; the secret itself is never part of
	// the configuration.
	SecretEnv string
	// AllowedOrigins are the browser origins ("https://app.example") whose
	// requests the proxy serves; every other request carrying an Origin
	// header is refused (a web page must not spend the user's key). Only
	// the user's file and the editor's settings set it; callers take it
	// from there, never from a workspace file.
	AllowedOrigins []string
	// Summarizer is who writes the summaries of proxied sessions:
	// "offline" (or "", the default: the record's own summary, or the
	// daemon's own model where it has a key) or "agent" (the
	// model of the request being served, with that request's credentials,
	// for that one call; its text is checked against the record). A user
	// file setting only: a workspace file may not spend the agent's key.
	Summarizer string
}

// Values of [Proxy.Summarizer]; "" is ProxySummarizerOffline.
const (
	ProxySummarizerOffline = "offline"
	ProxySummarizerAgent   = "agent"
)

var ruleProxySummarizer = rule{kind: 's', enum: []string{ProxySummarizerOffline, ProxySummarizerAgent}, what: `must be "offline" or "agent"`}

// decodeProxy applies the [proxy] table of raw to p.
func (d *decoder) decodeProxy(raw map[string]any, p *Proxy) {
	t := tableAt(raw, "proxy")
	if t == nil {
		return
	}
	key := []string{"proxy"}
	if s, ok := d.str(t, key, "listen", -1, ruleString); ok {
		p.Listen = strings.TrimSpace(*s)
	}
	if v, ok := d.value(t, key, "allow_remote", -1, ruleBool); ok {
		p.AllowRemote = v.(bool)
	}
	if s, ok := d.str(t, key, "secret_env", -1, ruleString); ok {
		p.SecretEnv = strings.TrimSpace(*s)
	}
	if s, ok := d.str(t, key, "summarizer", -1, ruleProxySummarizer); ok && d.allowed("proxy.summarizer", sub(key, "summarizer")) {
		p.Summarizer = *s
	}
	if v, ok := t["allowed_origins"]; ok && d.allowed("proxy.allowed_origins", sub(key, "allowed_origins")) {
		origins, msg := originList(v)
		if msg != "" {
			d.fail(sub(key, "allowed_origins"), -1, msg)
		} else {
			p.AllowedOrigins = origins
		}
	}
}

// originList converts an allowed_origins value: an array of origins
// ("scheme://host[:port]", compared case-insensitively), each trimmed.
func originList(v any) ([]string, string) {
	list, ok := v.([]any)
	if !ok {
		return nil, "must be an array of origins"
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, "must be an array of origins"
		}
		s = strings.TrimRight(strings.TrimSpace(s), "/")
		if u, err := url.Parse(s); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" {
			return nil, fmt.Sprintf("%q is not an origin (scheme://host[:port])", s)
		}
		out = append(out, s)
	}
	return out, ""
}

// ProxyFromJSON reads the "proxy" member of an initializationOptions object
// ({"proxy": {"listen": "127.0.0.1:8787", "allowRemote": false,
// "secretEnv": "NAME", "allowedOrigins": ["https://app.example"], "summarizer": "agent"}}) over base.
// ok is false when there is none. Other
// members are the policy's and are not read here.
func ProxyFromJSON(init json.RawMessage, base Proxy) (p Proxy, ok bool, err error) {
	var top map[string]json.RawMessage
	if json.Unmarshal(init, &top) != nil || top["proxy"] == nil || string(top["proxy"]) == "null" {
		return base, false, nil
	}
	return decodeProxyJSON(top["proxy"], base)
}

func decodeProxyJSON(raw json.RawMessage, base Proxy) (Proxy, bool, error) {
	members, err := objectMembers(raw)
	if err != nil {
		return base, false, &FieldError{Path: "proxy", Msg: "must be an object"}
	}
	p := base
	for _, m := range members {
		var v any
		if json.Unmarshal(m.value, &v) != nil {
			return base, false, &FieldError{Path: "proxy." + m.key, Msg: "invalid JSON"}
		}
		switch m.key {
		case "listen", "secretEnv":
			s, ok := v.(string)
			if !ok {
				return base, false, &FieldError{Path: "proxy." + m.key, Msg: "must be a string"}
			}
			if m.key == "listen" {
				p.Listen = strings.TrimSpace(s)
			} else {
				p.SecretEnv = strings.TrimSpace(s)
			}
		case "summarizer":
			s, ok := v.(string)
			if !ok || s != ProxySummarizerOffline && s != ProxySummarizerAgent {
				return base, false, &FieldError{Path: "proxy.summarizer", Msg: ruleProxySummarizer.what}
			}
			p.Summarizer = s
		case "allowRemote":
			b, ok := v.(bool)
			if !ok {
				return base, false, &FieldError{Path: "proxy.allowRemote", Msg: "must be a boolean"}
			}
			p.AllowRemote = b
		case "allowedOrigins":
			origins, msg := originList(v)
			if msg != "" {
				return base, false, &FieldError{Path: "proxy.allowedOrigins", Msg: msg}
			}
			p.AllowedOrigins = origins
		default:
			return base, false, &FieldError{Path: "proxy." + m.key, Msg: "unknown field"}
		}
	}
	return p, true, nil
}
