package config

import (
	"encoding/json"
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
}

// ProxyFromJSON reads the "proxy" member of an initializationOptions object
// ({"proxy": {"listen": "127.0.0.1:8787", "allowRemote": false,
// "secretEnv": "NAME", "summarizer": "agent"}}) over base. ok is false when there is none. Other
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
		default:
			return base, false, &FieldError{Path: "proxy." + m.key, Msg: "unknown field"}
		}
	}
	return p, true, nil
}
