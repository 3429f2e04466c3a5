package proxy

import (
	"bytes"
	"cmp"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	neturl "net/url"
	"strings"
	"sync"
	"time"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/anthropic"
	"github.com/vtcode/vtcode-ls/providers/catalog"
	"github.com/vtcode/vtcode-ls/providers/chatcompat"
	"github.com/vtcode/vtcode-ls/providers/httpapi"
	"github.com/vtcode/vtcode-ls/providers/openai"
	"github.com/vtcode/vtcode-ls/providers/proxywire"
	"github.com/vtcode/vtcode-ls/session"
)

// SecretHeader carries the shared secret when one is configured. It is
// checked and removed; it never reaches the upstream.
const SecretHeader = "X-Vtcode-Proxy-Secret"

// StatsPath answers GET with the proxy's statistics (JSON, see [Stats]).
const StatsPath = "/vtcode-ls/stats"

// DefaultListen is the address the proxy listens on by default.
const DefaultListen = "127.0.0.1:8787"

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

	// Listen is the address the proxy listens on, as configured: a request
	// must name it (or a loopback name or address) in its Host.
	Listen string
	// AllowedOrigins are the browser origins whose requests are served
	// (config.Proxy.AllowedOrigins); a request with any other Origin is
	// refused.
	AllowedOrigins []string
	// MaxConcurrent bounds the requests the engine works on at once; 0
	// means DefaultMaxConcurrent(). QueueWait is the longest a request
	// waits for a slot before a 503; 0 means DefaultQueueWait.
	MaxConcurrent int
	QueueWait     time.Duration
	// BodyReadTimeout is the longest wait for the next bytes of a request
	// body, BodyTimeout the longest a body may take; 0 means the defaults.
	BodyReadTimeout, BodyTimeout time.Duration
}

// Server is the proxy: an http.Handler speaking the providers' APIs.
type Server struct {
	o          Options
	logger     *slog.Logger
	client     *http.Client
	now        func() time.Time
	stats      statsBook
	cache      *proxywire.DecodeCache // decoded messages, by their bytes
	ests       sync.Map               // history.Tokenizer → *history.Estimator of the decoded messages
	listenHost string
	gate       gate
	queueWait  time.Duration
	bodyIdle   time.Duration
	bodyTotal  time.Duration
	verified   verifiedSet
	records    *recordQueue
	unsaved    sync.Map // what (see recorded) → struct{}: told the user it is not being saved
}

// cacheBytes bounds the bytes of conversation elements whose decoding the
// proxy keeps (agents resend every message with every request).
const cacheBytes = 64 << 20

// New returns a proxy server.
func New(o Options) *Server {
	s := &Server{o: o, logger: o.Logger, client: o.Client, now: o.Clock, cache: proxywire.NewDecodeCache(cacheBytes),
		queueWait: cmp.Or(o.QueueWait, DefaultQueueWait), bodyIdle: cmp.Or(o.BodyReadTimeout, DefaultBodyReadTimeout),
		bodyTotal: cmp.Or(o.BodyTimeout, DefaultBodyTimeout), records: newRecordQueue()}
	s.gate = make(gate, cmp.Or(o.MaxConcurrent, DefaultMaxConcurrent()))
	if h, _, err := net.SplitHostPort(o.Listen); err == nil {
		s.listenHost = strings.Trim(h, "[]")
	}
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

// Close waits until the answers already passed on are recorded. The
// http.Server in front must be shut down first.
func (s *Server) Close() { s.records.wait() }

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
	st := &requestState{}
	defer func() {
		if !st.handedOff && s.o.AfterRequest != nil {
			s.o.AfterRequest()
		}
	}()
	if ref := s.checkBrowser(r); ref != nil {
		writeError(w, ref.status, ref.msg)
		return
	}
	secret := false
	if s.o.Secret != "" {
		got := r.Header.Get(SecretHeader)
		if subtle.ConstantTimeCompare([]byte(got), []byte(s.o.Secret)) != 1 {
			writeError(w, http.StatusUnauthorized, "vtcode-ls proxy: missing or wrong "+SecretHeader+" header")
			return
		}
		secret = true
	}
	path, ref := cleanPath(r.URL)
	if ref != nil {
		writeError(w, ref.status, ref.msg)
		return
	}
	if path == StatsPath && r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.Stats())
		return
	}
	if isUpgrade(r) {
		s.refuseUpgrade(w, r) // websocket.go
		return
	}
	provider, rest, ep := route(path)
	named := provider != ""
	if !named {
		provider = defaultProvider(ep, r)
	}
	target, err := s.upstream(provider, named, rest, r.URL.RawQuery)
	if err != nil {
		var ref *refusal
		if errors.As(err, &ref) {
			writeError(w, ref.status, ref.msg)
			return
		}
		writeError(w, http.StatusBadGateway, "vtcode-ls proxy: "+err.Error())
		return
	}
	api := ep != passThrough && r.Method == http.MethodPost
	limit := int64(MaxPassThroughBody)
	if api {
		limit = MaxAPIBody
		if !isJSON(r.Header.Get("Content-Type")) {
			writeError(w, http.StatusUnsupportedMediaType, "vtcode-ls proxy: the "+ep.String()+" endpoint takes Content-Type application/json")
			return
		}
	}
	if r.ContentLength > limit {
		ref := bodyRefusal(&http.MaxBytesError{Limit: limit}, limit)
		writeError(w, ref.status, ref.msg)
		return
	}
	cred, hasCred := credentialOf(r.Header, target)
	if !api || !hasCred && !secret {
		// Passed on as it comes, streamed. A request without credentials
		// (and without the shared secret) never reaches the engine: it must
		// not make the engine create a session or spend a key of its own.
		rec := &record{Path: r.URL.Path, Endpoint: ep.String(), Disposition: "pass-through"}
		if api {
			rec.Disposition = "unauthenticated"
		}
		s.forward(w, r, target, s.newBodyReader(w, r, limit), r.ContentLength, nil, rec)
		return
	}
	if !s.gate.enter(r.Context(), s.queueWait) {
		if r.Context().Err() != nil {
			return
		}
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, "vtcode-ls proxy: too many requests at once; retry")
		return
	}
	inGate := true
	leave := func() {
		if inGate {
			inGate = false
			s.gate.leave()
		}
	}
	defer leave()
	body, err := readBody(s.newBodyReader(w, r, limit), r.ContentLength)
	if err != nil {
		ref := bodyRefusal(err, limit)
		writeError(w, ref.status, ref.msg)
		return
	}
	rec := &record{Path: r.URL.Path, Endpoint: ep.String(), BytesIn: len(body)}
	s.engine(w, r, target, body, provider, ep, rec, !secret && !s.verified.has(cred), st, leave)
}

// requestState is what ServeHTTP and the recording of its answer share.
type requestState struct {
	// handedOff: the recording of the answer calls Options.AfterRequest.
	handedOff bool
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

// upstream returns the URL to forward a request path to: the API path on
// the provider's configured base_url (or its official endpoint), built by
// httpapi.APIURL. A provider the path names (/p/<name>/) must be one of
// the user's configuration, but for the two the plain paths reach anyway:
// a provider whose default endpoint is a loopback port (ollama, llamacpp)
// would otherwise open whatever local service listens there.
func (s *Server) upstream(provider string, named bool, path, query string) (*neturl.URL, error) {
	cfg, err := s.o.Manager.WorkspaceConfig(s.o.Workspace)
	if err != nil {
		return nil, err
	}
	name := catalog.CanonicalProvider(provider)
	if named && name != "anthropic" && name != "openai" {
		user, err := s.o.Manager.UserConfig()
		if err != nil {
			return nil, err
		}
		if _, ok := user.Providers[provider]; !ok {
			if _, ok := user.Providers[name]; !ok {
				return nil, &refusal{http.StatusNotFound, fmt.Sprintf("vtcode-ls proxy: provider %q is not configured: add [providers.%s] to the user configuration to reach it through /p/%s/", provider, name, provider)}
			}
		}
	}
	pc, ok := cfg.Providers[provider]
	if !ok {
		pc = cfg.Providers[name]
	}
	base := strings.TrimSpace(pc.BaseURL)
	if base == "" {
		base = catalog.DefaultBaseURL(name)
	}
	if gep, _ := geminiRoute(path); name == "gemini" && (gep != passThrough || looksGeminiPath(path)) {
		base, path = geminiUpstream(pc.BaseURL, path)
	}
	if base == "" {
		return nil, fmt.Errorf("provider %q has no base_url: set [providers.%s] base_url", provider, provider)
	}
	u, err := httpapi.APIURL(base, path, query)
	if err != nil {
		return nil, fmt.Errorf("provider %q: %w", provider, err)
	}
	if err := s.trustedUpstream(provider, name, base, u); err != nil {
		return nil, err
	}
	return u, nil
}

// trustedUpstream checks that the agent's credentials may go to base: the
// provider's official endpoint when it is not a loopback port, or a
// base_url (or a provider) of the user's own configuration. A workspace
// file is untrusted input: it must not send a user's keys to a host of its
// choosing, nor to a local service.
func (s *Server) trustedUpstream(provider, name, base string, u *neturl.URL) error {
	if catalog.IsOfficialBaseURL(name, base) && !isLoopback(u.Hostname()) {
		return nil
	}
	user, err := s.o.Manager.UserConfig()
	if err != nil {
		return err
	}
	for _, k := range []string{provider, name} {
		pc, ok := user.Providers[k]
		if !ok {
			continue
		}
		ub := strings.TrimRight(strings.TrimSpace(pc.BaseURL), "/")
		if ub == strings.TrimRight(base, "/") || ub == "" && catalog.IsOfficialBaseURL(name, base) {
			return nil
		}
	}
	return fmt.Errorf("provider %q points at %s, which your user configuration does not name: the proxy forwards credentials only to an official endpoint or a base_url of your user configuration", provider, u.Host)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// decoded is a request decoded for the engine.
type decoded struct {
	wr       *proxywire.WireRequest
	recorder func() *proxywire.SSERecorder
	record   func([]byte) (history.Response, error)
}

func decode(ep endpoint, path string, body []byte, cache *proxywire.DecodeCache) (*decoded, error) {
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

// engine runs a request through the session and returns the body to
// forward and, for a request whose answer is recorded, its tee; nil out when
// the agent went away. leave is called once the engine's work is done,
// before anything is forwarded.
func (s *Server) engine(w http.ResponseWriter, r *http.Request, target *neturl.URL, body []byte, provider string, ep endpoint, rec *record, unverified bool, st *requestState, leave func()) {
	out, t, gone := s.prepare(r, target, body, provider, ep, rec, unverified, st)
	leave()
	if gone {
		return
	}
	s.forward(w, r, target, bytes.NewReader(out), int64(len(out)), t, rec)
}

// prepare decodes a request for the engine, has the session plan it and
// returns the body to forward and, for a request whose answer is recorded,
// its tee; gone when the agent went away meanwhile.
func (s *Server) prepare(r *http.Request, target *neturl.URL, body []byte, provider string, ep endpoint, rec *record, unverified bool, st *requestState) (out []byte, t *tee, gone bool) {
	// The session estimates the messages right after: decoded once, they
	// carry the estimates from then on. A request whose key the upstream
	// has not accepted yet is forwarded first and costs no tokenizing
	// before it is (the session finds the estimates of its elements in its
	// own history).
	cache := s.cache
	if !unverified {
		cache = cache.Estimating(s.estimator(s.o.Manager.Tokenizer(s.o.Workspace)))
	}
	d, err := decode(ep, r.URL.Path, body, cache)
	if err != nil {
		return s.failOpen(rec, ep, body, err.Error()), nil, false
	}
	if d.wr.Stateful {
		rec.Stateful, rec.Disposition = true, "stateful"
		return body, nil, false
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
		Provider: catalog.CanonicalProvider(provider), Model: d.wr.Model,
		System: d.wr.System, Tools: d.wr.Tools, Messages: d.wr.Messages, Kind: kind, Unverified: unverified,
	}
	if kind == session.ProxyTurn && !unverified {
		preq.Summarizer = s.summarizerFor(r, target, preq.Provider, ep, d.wr.Model)
	}
	plan, err := s.o.Manager.ProxyPrepare(r.Context(), preq, nil)
	ctx := context.WithoutCancel(r.Context())
	switch {
	case errors.Is(err, session.ErrProxyUnverified):
		// The upstream has not accepted this key yet: the request goes as
		// it came, and only an answer that shows the key is good (2xx)
		// makes the engine take the conversation up, after the agent has
		// its answer.
		rec.Disposition = "unverified"
		if kind == session.ProxyCount {
			return body, nil, false
		}
		return body, s.takeUpOnSuccess(ctx, preq, d, st), false
	case err != nil && r.Context().Err() != nil:
		return nil, nil, true // the agent went away
	case err != nil:
		return s.failOpen(rec, ep, body, err.Error()), nil, false
	}
	out, changed := body, false
	if !plan.Unchanged {
		out, changed, err = d.wr.Encode(plan.Messages)
	}
	if err != nil {
		s.o.Manager.ProxyAbort(plan.SessionID, plan.Turn)
		return s.failOpen(rec, ep, body, err.Error()), nil, false
	}
	rec.SessionID, rec.Disposition, rec.Rewritten = plan.SessionID, plan.Disposition.String(), changed
	rec.ClearedResults = plan.Stats.ClearedResults
	rec.Compacted = plan.Compaction != nil && plan.Compaction.ArtifactID != ""
	return out, s.recordAnswer(ctx, plan, d, st), false
}

// takeUpOnSuccess returns the tee of a request whose key the upstream has
// not accepted yet: only an answer that shows the key is good makes the
// engine take the conversation up (prepared and recorded then, after the
// agent has its answer).
func (s *Server) takeUpOnSuccess(ctx context.Context, preq session.ProxyRequest, d *decoded, st *requestState) *tee {
	preq.Unverified = false
	return &tee{d: d, done: func(a *answerCopy, complete bool) {
		if !a.usable(complete) {
			a.result(complete) // releases the copy
			return
		}
		st.handedOff = true
		s.records.add("unverified\x00"+preq.Key, func() {
			if s.o.AfterRequest != nil {
				defer s.o.AfterRequest()
			}
			res, ok := a.result(complete)
			if !ok || res == nil {
				return
			}
			plan, err := s.o.Manager.ProxyPrepare(ctx, preq, nil)
			if err != nil {
				s.recorded("a new conversation", err)
				return
			}
			err = s.o.Manager.ProxyRecord(ctx, plan.SessionID, plan.Turn, *res)
			s.recorded("session "+plan.SessionID, err)
		})
	}}
}

// recordAnswer returns the tee of a planned request: its answer is
// recorded after the agent has it, in order per session (a failed one
// aborts the turn), and the session's receipt goes to the stats.
func (s *Server) recordAnswer(ctx context.Context, plan *session.ProxyPlan, d *decoded, st *requestState) *tee {
	return &tee{d: d, done: func(a *answerCopy, complete bool) {
		st.handedOff = true
		s.records.add(plan.SessionID, func() {
			if s.o.AfterRequest != nil {
				defer s.o.AfterRequest()
			}
			res, ok := a.result(complete)
			if !ok || res == nil {
				s.o.Manager.ProxyAbort(plan.SessionID, plan.Turn)
				return
			}
			err := s.o.Manager.ProxyRecord(ctx, plan.SessionID, plan.Turn, *res)
			s.recorded("session "+plan.SessionID, err)
			if err == nil {
				if rc, err := s.o.Manager.Receipt(ctx, plan.SessionID); err == nil {
					s.stats.receipt(plan.SessionID, rc)
				}
			}
		})
	}}
}

// estimator returns the proxy's estimator for tokenizer t (the decode
// cache's, see proxywire.DecodeCache.Estimating).
func (s *Server) estimator(t history.Tokenizer) *history.Estimator {
	if e, ok := s.ests.Load(t); ok {
		return e.(*history.Estimator)
	}
	e, _ := s.ests.LoadOrStore(t, history.NewEstimator(t))
	return e.(*history.Estimator)
}

// recorded notes the outcome of recording an answer of what (a session, a
// new conversation): the first failure (a full disk, a lost store) is shown
// to the user, once until it is saved again; the proxy goes on forwarding.
func (s *Server) recorded(what string, err error) {
	if err == nil {
		s.unsaved.Delete(what)
		return
	}
	s.logger.Warn("proxy: recording the answer failed", "what", what, "err", err)
	if _, told := s.unsaved.LoadOrStore(what, struct{}{}); !told {
		s.o.Manager.ShowMessage(session.LevelWarning, fmt.Sprintf("vtcode-ls proxy: %s is not being saved (%s); the agent's requests are still forwarded",
			what, providers.Bound(err.Error(), 300)))
	}
}

// failOpen returns the original request body, to forward unchanged, and
// tells the editor once.
func (s *Server) failOpen(rec *record, ep endpoint, body []byte, reason string) []byte {
	rec.FailOpen, rec.Disposition = true, "fail-open"
	msg := fmt.Sprintf("vtcode-ls proxy: could not process a %s request (%s); forwarded it unchanged", ep, providers.Bound(reason, 300))
	s.logger.Warn("proxy: fail open", "endpoint", ep.String(), "reason", providers.Bound(reason, 300))
	s.o.Manager.LogMessage(session.LevelWarning, msg)
	return body
}

// writeError answers with a JSON error body.
func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": "proxy_error", "message": msg}})
	_, _ = w.Write(b)
}
