package proxy

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	neturl "net/url"
	"strings"
	"time"

	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/anthropic"
	"github.com/vtcode/vtcode-ls/providers/chatcompat"
	"github.com/vtcode/vtcode-ls/providers/openai"
	"github.com/vtcode/vtcode-ls/session"
)

// SecretHeader carries the shared secret when one is configured. It is
// checked and removed; it never reaches the upstream.
const SecretHeader = "X-Vtcode-Proxy-Secret"

// StatsPath answers GET with the proxy's statistics (JSON, see [Stats]).
const StatsPath = "/vtcode-ls/stats"

// DefaultListen is the address the proxy listens on by default.
const DefaultListen = "127.0.0.1:8787"

// maxBody bounds a request body the engine reads.
const maxBody = 256 << 20

// Options configure a [Server].
type Options struct {
	// Manager owns the sessions; required.
	Manager *session.Manager
	// Workspace is the workspace proxied sessions belong to; empty means
	// the Manager's first.
	Workspace string
	// Logger receives diagnostics; nil discards them. Headers and bodies
	// are never logged.
	Logger *slog.Logger
	// Secret, when not empty, must be sent in [SecretHeader] by every
	// request.
	Secret string
	// Client sends the upstream requests; nil uses a transport that keeps
	// the bytes as they are (no transparent compression).
	Client *http.Client
	// Clock returns the current time; nil means time.Now.
	Clock func() time.Time
	// AfterRequest, when set, is called when a request is done: answered,
	// its answer recorded and counted in the stats (a test hook).
	AfterRequest func()
}

// Server is the proxy: an http.Handler speaking the providers' APIs.
type Server struct {
	o      Options
	logger *slog.Logger
	client *http.Client
	now    func() time.Time
	stats  statsBook
	cache  *providers.DecodeCache // decoded messages, by their bytes
}

// cacheBytes bounds the bytes of conversation elements whose decoding the
// proxy keeps (agents resend every message with every request).
const cacheBytes = 64 << 20

// New returns a proxy server.
func New(o Options) *Server {
	s := &Server{o: o, logger: o.Logger, client: o.Client, now: o.Clock, cache: providers.NewDecodeCache(cacheBytes)}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.client == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DisableCompression = true
		t.MaxIdleConnsPerHost = 32
		s.client = &http.Client{Transport: t}
	}
	return s
}

// CheckListen checks a listen address: a loopback host unless allowRemote,
// and always an explicit host.
func CheckListen(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if host == "" {
		return fmt.Errorf("listen address %q names no host: use 127.0.0.1:PORT (or an explicit address with --allow-remote)", addr)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	if !allowRemote {
		return fmt.Errorf("listen address %q is not a loopback address: pass --allow-remote (allow_remote = true) to accept other hosts", addr)
	}
	return nil
}

// endpoint is what a request path asks for.
type endpoint int

const (
	passThrough endpoint = iota
	messages
	countTokens
	responses
	chat
	geminiGenerate
	geminiStream
	geminiCount
)

func (e endpoint) String() string {
	return [...]string{"pass-through", "messages", "count_tokens", "responses", "chat/completions", "generateContent", "streamGenerateContent", "countTokens"}[e]
}

// route splits a request path into the provider it selects ("" for the
// default of the endpoint), the path to forward, and the endpoint.
func route(path string) (provider, rest string, ep endpoint) {
	rest = path
	if p, ok := strings.CutPrefix(path, "/p/"); ok {
		name, tail, _ := strings.Cut(p, "/")
		provider, rest = name, "/"+tail
	}
	trimmed := strings.TrimSuffix(rest, "/")
	switch {
	case trimmed == "/v1/messages" || trimmed == "/messages":
		ep = messages
	case trimmed == "/v1/messages/count_tokens" || trimmed == "/messages/count_tokens":
		ep = countTokens
	case trimmed == "/v1/responses" || trimmed == "/responses":
		ep = responses
	case trimmed == "/v1/chat/completions" || trimmed == "/chat/completions":
		ep = chat
	default:
		ep, _ = geminiRoute(trimmed)
	}
	return provider, rest, ep
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.o.AfterRequest != nil {
		defer s.o.AfterRequest()
	}
	if s.o.Secret != "" {
		got := r.Header.Get(SecretHeader)
		if subtle.ConstantTimeCompare([]byte(got), []byte(s.o.Secret)) != 1 {
			writeError(w, http.StatusUnauthorized, "vtcode-ls proxy: missing or wrong "+SecretHeader+" header")
			return
		}
	}
	if r.URL.Path == StatsPath && r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.Stats())
		return
	}
	if isUpgrade(r) {
		s.refuseUpgrade(w, r) // websocket.go
		return
	}
	provider, rest, ep := route(r.URL.Path)
	if provider == "" {
		provider = defaultProvider(ep, r)
	}
	target, err := s.upstream(provider, rest, r.URL.RawQuery)
	if err != nil {
		writeError(w, http.StatusBadGateway, "vtcode-ls proxy: "+err.Error())
		return
	}
	if ep == passThrough || r.Method != http.MethodPost {
		s.forward(w, r, target, r.Body, r.ContentLength, nil, &record{Path: r.URL.Path, Endpoint: ep.String(), Disposition: "pass-through"})
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, "vtcode-ls proxy: reading the request body: "+err.Error())
		return
	}
	rec := &record{Path: r.URL.Path, Endpoint: ep.String(), BytesIn: len(body)}
	if len(body) > maxBody {
		s.failOpen(w, r, target, body, rec, ep, "the body exceeds the engine's size limit")
		return
	}
	s.engine(w, r, target, body, provider, ep, rec)
}

// defaultProvider is the provider of a request that names none: the one
// whose API the endpoint belongs to.
func defaultProvider(ep endpoint, r *http.Request) string {
	switch ep {
	case messages, countTokens:
		return "anthropic"
	case responses, chat:
		return "openai"
	case geminiGenerate, geminiStream, geminiCount:
		return "gemini"
	}
	if looksGemini(r) {
		return "gemini"
	}
	if r.Header.Get("anthropic-version") != "" || r.Header.Get("x-api-key") != "" || strings.Contains(r.URL.Path, "/messages") {
		return "anthropic"
	}
	return "openai"
}

// upstream returns the URL to forward a request path to: the provider's
// configured base_url (or its official endpoint), with the path's /v1
// dropped when the base URL has a path of its own (the OpenAI convention,
// https://api.openai.com/v1) and kept when it has none (the Anthropic
// convention, https://api.anthropic.com).
func (s *Server) upstream(provider, path, query string) (*neturl.URL, error) {
	cfg, err := s.o.Manager.WorkspaceConfig(s.o.Workspace)
	if err != nil {
		return nil, err
	}
	name := providers.CanonicalProvider(provider)
	pc, ok := cfg.Providers[provider]
	if !ok {
		pc = cfg.Providers[name]
	}
	base := strings.TrimSpace(pc.BaseURL)
	if base == "" {
		base = providers.DefaultBaseURL(name)
		if name == "anthropic" {
			base = strings.TrimSuffix(base, "/v1")
		}
	}
	if gep, _ := geminiRoute(path); name == "gemini" && (gep != passThrough || looksGeminiPath(path)) {
		base, path = geminiUpstream(pc.BaseURL, path)
	}
	if base == "" {
		return nil, fmt.Errorf("provider %q has no base_url: set [providers.%s] base_url", provider, provider)
	}
	u, err := neturl.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("provider %q: base_url must be an absolute http(s) URL", provider)
	}
	if err := s.trustedUpstream(provider, name, base, u); err != nil {
		return nil, err
	}
	basePath := strings.TrimRight(u.Path, "/")
	if basePath != "" {
		if p, ok := strings.CutPrefix(path, "/v1/"); ok {
			path = "/" + p
		}
	}
	out := *u
	out.Path = basePath + path
	out.RawPath = ""
	out.RawQuery = joinQuery(u.RawQuery, query)
	return &out, nil
}

// trustedUpstream checks that the agent's credentials may go to base: the
// provider's official endpoint, a loopback address, or a base_url the user's
// own configuration sets. A workspace file is untrusted input: it must not
// send a user's keys to a host of its choosing.
func (s *Server) trustedUpstream(provider, name, base string, u *neturl.URL) error {
	if providers.IsOfficialBaseURL(name, base) || isLoopback(u.Hostname()) {
		return nil
	}
	user, err := s.o.Manager.UserConfig()
	if err != nil {
		return err
	}
	for _, k := range []string{provider, name} {
		if pc, ok := user.Providers[k]; ok && strings.TrimRight(strings.TrimSpace(pc.BaseURL), "/") == strings.TrimRight(base, "/") {
			return nil
		}
	}
	return fmt.Errorf("provider %q points at %s, which only a workspace file names: the proxy forwards credentials only to the official endpoint, a loopback address or a base_url of your user configuration", provider, u.Host)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func joinQuery(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "&" + b
}

// decoded is a request decoded for the engine.
type decoded struct {
	wr       *providers.WireRequest
	recorder func() *providers.SSERecorder
	record   func([]byte) (providers.Recorded, error)
}

func decode(ep endpoint, path string, body []byte, cache *providers.DecodeCache) (*decoded, error) {
	switch ep {
	case geminiGenerate, geminiStream, geminiCount:
		return decodeGemini(ep, path, body, cache)
	case messages, countTokens:
		wr, err := anthropic.DecodeMessages(body, cache)
		return &decoded{wr, anthropic.MessagesRecorder, anthropic.RecordMessage}, err
	case responses:
		wr, err := openai.DecodeResponses(body, cache)
		return &decoded{wr, openai.ResponsesRecorder, openai.RecordResponse}, err
	case chat:
		wr, err := chatcompat.DecodeChat(body, cache)
		return &decoded{wr, chatcompat.ChatRecorder, chatcompat.RecordChat}, err
	}
	return nil, errors.New("no engine for this endpoint")
}

// engine runs a request through the session and forwards the projection.
func (s *Server) engine(w http.ResponseWriter, r *http.Request, target *neturl.URL, body []byte, provider string, ep endpoint, rec *record) {
	d, err := decode(ep, r.URL.Path, body, s.cache)
	if err != nil {
		s.failOpen(w, r, target, body, rec, ep, err.Error())
		return
	}
	if d.wr.Stateful {
		rec.Stateful, rec.Disposition = true, "stateful"
		s.forward(w, r, target, bytes.NewReader(body), int64(len(body)), nil, rec)
		return
	}
	kind := session.ProxyTurn
	switch {
	case ep == countTokens || ep == geminiCount:
		kind = session.ProxyCount
	case isAgentCompaction(ep, r.Header, d.wr):
		kind = session.ProxyAgentCompaction
		rec.AgentCompaction = true
	}
	preq := session.ProxyRequest{
		Workspace: s.o.Workspace, Key: sessionKey(ep, r.Header, d.wr), WindowID: r.Header.Get("x-codex-window-id"),
		Provider: providers.CanonicalProvider(provider), Model: d.wr.Model,
		System: d.wr.System, Tools: d.wr.Tools, Messages: d.wr.Messages, Kind: kind,
	}
	if kind == session.ProxyTurn {
		preq.Summarizer = s.summarizerFor(r, target, preq.Provider, ep, d.wr.Model)
	}
	plan, err := s.o.Manager.ProxyPrepare(r.Context(), preq, nil)
	if err != nil {
		if r.Context().Err() != nil {
			return // the agent went away
		}
		s.failOpen(w, r, target, body, rec, ep, err.Error())
		return
	}
	out, changed := body, false
	if !plan.Unchanged {
		out, changed, err = d.wr.Encode(plan.Messages)
	}
	if err != nil {
		s.o.Manager.ProxyAbort(plan.SessionID, plan.Turn)
		s.failOpen(w, r, target, body, rec, ep, err.Error())
		return
	}
	rec.SessionID, rec.Disposition, rec.Rewritten = plan.SessionID, plan.Disposition, changed
	rec.ClearedResults = plan.Stats.ClearedResults
	rec.Compacted = plan.Compaction != nil && plan.Compaction.ArtifactID != ""
	done := func(res *providers.Recorded, ok bool) {
		if !ok || res == nil {
			s.o.Manager.ProxyAbort(plan.SessionID, plan.Turn)
			return
		}
		err := s.o.Manager.ProxyRecord(context.WithoutCancel(r.Context()), plan.SessionID, plan.Turn,
			session.ProxyResponse{Message: res.Message, Usage: res.Usage, StopReason: res.StopReason})
		if err != nil {
			s.logger.Warn("proxy: recording the answer failed", "session", plan.SessionID, "err", err)
		} else if rc, err := s.o.Manager.Receipt(context.WithoutCancel(r.Context()), plan.SessionID); err == nil {
			s.stats.receipt(plan.SessionID, rc)
		}
	}
	s.forward(w, r, target, bytes.NewReader(out), int64(len(out)), &tee{d: d, done: done}, rec)
}

// failOpen forwards the original request unchanged and tells the editor
// once.
func (s *Server) failOpen(w http.ResponseWriter, r *http.Request, target *neturl.URL, body []byte, rec *record, ep endpoint, reason string) {
	rec.FailOpen, rec.Disposition = true, "fail-open"
	msg := fmt.Sprintf("vtcode-ls proxy: could not process a %s request (%s); forwarded it unchanged", ep, providers.Bound(reason, 300))
	s.logger.Warn("proxy: fail open", "endpoint", ep.String(), "reason", providers.Bound(reason, 300))
	s.o.Manager.LogMessage(session.LevelWarning, msg)
	s.forward(w, r, target, bytes.NewReader(body), int64(len(body)), nil, rec)
}

// writeError answers with a JSON error body.
func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": "proxy_error", "message": msg}})
	_, _ = w.Write(b)
}
