package proxy

import (
	"net/http"
	"strings"
)

// Codex CLI configured with a top-level openai_base_url opens the Responses
// API as a WebSocket first (GET /v1/responses, Upgrade: websocket). The
// proxy speaks HTTP only: it refuses every upgrade at once with 426 Upgrade
// Required, the answer on which Codex falls back to POST /v1/responses
// right away (any other answer it retries, for seconds, before falling
// back). Nothing is forwarded: the request carries no conversation yet.
// The refusal is counted in the stats (endpoint "websocket", disposition
// "refused").

// isUpgrade reports whether a request asks to switch protocols.
func isUpgrade(r *http.Request) bool {
	if r.Header.Get("Upgrade") == "" {
		return false
	}
	for _, v := range r.Header.Values("Connection") {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), "upgrade") {
				return true
			}
		}
	}
	return false
}

// refuseUpgrade answers an upgrade request with 426 and says why.
func (s *Server) refuseUpgrade(w http.ResponseWriter, r *http.Request) {
	s.logger.Debug("proxy: refused a protocol upgrade", "path", r.URL.Path, "upgrade", r.Header.Get("Upgrade"))
	s.stats.add(record{Path: r.URL.Path, Endpoint: "websocket", Disposition: "refused", Status: http.StatusUpgradeRequired}, s.now())
	w.Header().Set("Connection", "close")
	writeError(w, http.StatusUpgradeRequired, "vtcode-ls proxy: WebSocket is not supported here; use HTTP (POST "+r.URL.Path+")")
}
