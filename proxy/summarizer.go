package proxy

import (
	"cmp"
	"net/http"
	neturl "net/url"
	"strings"

	"github.com/vtcode/vtcode-ls/config"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/anthropic"
	"github.com/vtcode/vtcode-ls/providers/chatcompat"
	"github.com/vtcode/vtcode-ls/providers/httpapi"
	"github.com/vtcode/vtcode-ls/providers/openai"
)

// notCarried are the request headers a summary request made for the served
// request does not copy: they describe that request's body and connection,
// not who is asking.
var notCarried = []string{"Content-Length", "Content-Type", "Content-Encoding", "Accept", "Accept-Encoding", "Host", "Anthropic-Beta", SecretHeader}

// summarizerFor returns the model client of the served request r under
// [proxy] summarizer = "agent": the same upstream (target, less the
// operation path), the same headers (its credentials included) and the same
// model, with one attempt and no retry. It is built per request and handed
// to the session with that request only; nothing keeps it. It is nil when
// the request carries no credential, when the workspace's [proxy]
// summarizer is not "agent", or for an endpoint without a summary request.
func (s *Server) summarizerFor(r *http.Request, target *neturl.URL, provider string, ep endpoint, model string) providers.Generator {
	cfg, err := s.o.Manager.WorkspaceConfig(s.o.Workspace)
	if err != nil || cfg.Proxy.Summarizer != config.ProxySummarizerAgent || model == "" {
		return nil
	}
	h := r.Header.Clone()
	removeHop(h)
	for _, k := range notCarried {
		h.Del(k)
	}
	if len(httpapi.Credentials("", "", h)) == 0 {
		return nil // a request without credentials never causes an engine request
	}
	op := map[endpoint]string{messages: "/messages", responses: "/responses", chat: "/chat/completions"}[ep]
	if op == "" || !strings.HasSuffix(target.Path, op) {
		return nil
	}
	base := *target
	base.Path, base.RawPath, base.RawQuery, base.Fragment = strings.TrimSuffix(target.Path, op), "", "", ""
	e := httpapi.Endpoint{
		Provider: provider, BaseURL: base.String(), Model: model, Header: h,
		Logger: s.logger, Retry: httpapi.RetryPolicy{MaxAttempts: 1},
	}
	var g providers.Generator
	switch ep {
	case messages:
		e.Provider = cmp.Or(provider, "anthropic")
		g, err = anthropic.New(anthropic.Config{Endpoint: e})
	case responses:
		e.Provider = cmp.Or(provider, "openai")
		g, err = openai.New(openai.Config{Endpoint: e})
	default:
		e.Provider = cmp.Or(provider, "openai")
		g, err = chatcompat.New(chatcompat.Config{Endpoint: e})
	}
	if err != nil {
		s.logger.Debug("proxy: no summarizer for the served request", "endpoint", ep.String(), "reason", providers.Bound(err.Error(), 200))
		return nil
	}
	return g
}
