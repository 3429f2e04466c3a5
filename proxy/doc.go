// Package proxy is vtcode-ls's second transport: a local HTTP proxy that
// speaks the providers' own APIs, so that an existing coding agent (Claude
// Code, Codex CLI, opencode, qwen-code, Gemini CLI, …) pointed at it with its usual
// base-URL setting gets pairing repair, tool-result clearing and compaction
// on every request, and its sessions show up in the editors.
//
// # Endpoints
//
//	POST /v1/messages[?beta=true]      Anthropic Messages, SSE or JSON
//	POST /v1/messages/count_tokens     counts the request as it will be forwarded
//	POST /v1/responses                 OpenAI Responses, stateless input
//	POST /v1/chat/completions          OpenAI chat completions
//	POST /v1beta/models/{m}:generateContent, :streamGenerateContent[?alt=sse], :countTokens
//	                                   the Gemini API (gemini.go), provider "gemini"
//	GET with Upgrade: websocket        refused with 426 (websocket.go)
//	/p/<provider>/…                    the same, to a provider of the user's configuration
//	/w/<id>/…                          any of the above, for the workspace id names (Workspaces)
//	GET  /vtcode-ls/stats              the proxy's counters (JSON)
//	anything else                      passed through untouched
//
// The upstream of a provider is its [providers.<name>] base_url, else the
// official endpoint; the URL is built by httpapi.APIURL, the rule the
// engine's own clients use too. Both base-URL conventions work: a base URL
// with a path (https://api.openai.com/v1) replaces the request's /v1, one
// without (https://api.anthropic.com) takes the whole path. Requests
// without /p/<provider> go to "anthropic" (messages), "openai" (responses,
// chat) or "gemini" (the Gemini API's paths, whose official base has no
// version: https://generativelanguage.googleapis.com); /p/<provider>
// reaches only a provider the user's configuration names (and those three).
//
// # A request
//
// The body is decoded by the vendor package of its wire format
// (providers/anthropic, providers/openai, providers/chatcompat,
// providers/gemini) into
// history messages, handed to session.Manager.ProxyPrepare, and the
// projection it returns is encoded back into the agent's own body: every
// message (and content block) the engine did not change is copied byte for
// byte, so the body is identical up to the first changed message and the
// agent's cache_control breakpoints stay on the same messages. The answer
// streams back byte for byte as it arrives: the headers as soon as the
// upstream sends them, then a flush per chunk read. The proxy reads a copy
// of the stream to record the assistant message and its usage
// (session.Manager.ProxyRecord), after the agent has the answer's end: the
// recordings of a session run in order, in the background, so neither the
// disk nor a compaction holding the session delays the agent; a failure to
// record is shown to the user (window/showMessage) once until the session
// is saved again. An answer over 16 MiB is passed on but not recorded (the
// agent's next request carries it). A failed answer (a non-2xx status) is
// passed on exactly (status, headers such as retry-after, body) and records
// nothing; an upstream that cuts its answer is cut toward the agent too
// (the connection aborted, no final chunk), so the agent sees what a
// direct call shows.
//
// # Sessions
//
// The session is named by what the agent sends: x-claude-code-session-id or
// the session_id in metadata.user_id (Claude Code), session-id / thread-id
// or prompt_cache_key (Codex), x-session-id (opencode), the first user
// message up to its directory tree for Gemini CLI's requests with tools and
// its compression requests (it sends no id), else a fingerprint of the
// system prompt and the first user message. Proxied sessions are
// sessions of the workspace like any other (vtcode/listSessions,
// vtcode/tokenPressure, $/progress, vtcode/compactBoundary, vtcode/compact).
//
// Each request carries the whole conversation. The session keeps a digest
// of every agent message and how they line up with its live history, so:
//
//   - a request that extends the conversation appends its new messages
//     (with the answer, once it arrived); a tool result the agent cleared or
//     trimmed in place (qwen-code's microcompaction) is the same message, and
//     the agent's version is what goes upstream;
//   - after the engine compacted, the agent's full history keeps mapping
//     onto the summary: the compacted prefix is replaced by the summary, the
//     messages after it are the agent's own;
//   - a request that diverges (the user rewound or edited) is recorded as a
//     branch: a new session holding the shared part and the new messages,
//     the stored session untouched; the agent's key follows the branch;
//   - a request that is a prefix of what is recorded (a retry) records
//     nothing new;
//   - a request that shares nothing with the conversation but carries its
//     key (a subagent, a title request) is a thread of its own.
//
// All of it survives a restart: how the agent's messages line up with a
// compacted (or branched) live history is a session event, and a key the
// process has not seen yet considers its stored main session and branches,
// so the agent's next request extends the summary and the branch it was
// in, rather than being taken for a fresh window that would be compacted
// again.
//
// # The agents' own compaction
//
// Agents compact too. Their summarization requests are recognized by the
// instruction they carry (Claude Code's "CRITICAL: Respond with TEXT
// ONLY … summary" block, Codex's "CONTEXT CHECKPOINT COMPACTION" item or
// request_kind "compaction", the system prompt of opencode's summarization
// agent, qwen-code's summarizer prompt). Such a request is projected like
// any other, so the agent's summarizer reads the engine's compact view, but
// it is not recorded. The next request that diverges is the agent's fresh
// window (as is a request whose x-codex-window-id changed): the session
// records it as a compaction boundary of trigger and mode "agent", with the
// old live history kept as an artifact, and goes on from the new window.
// The engine's threshold is normally lower than the agent's, because the
// agent sees the usage of the smaller requests the proxy forwards; the
// agent's own compaction then happens only when the engine cannot keep the
// conversation small enough.
//
// # Failing open
//
// When the engine cannot handle a request (a shape it does not decode, a
// member named twice, a session error), the original body is forwarded
// unchanged and the editor gets one window/logMessage. A request relying on state kept by the
// provider (previous_response_id, conversation) is forwarded untouched and
// counted as "stateful" in the stats.
//
// # Security
//
// The proxy listens on loopback only unless an explicit other address and
// allow-remote are given (the command-line flag, the user configuration or
// the editor's settings: a workspace file cannot open it to other hosts).
// A web page in the user's browser can send requests to a loopback port,
// and read the answers after rebinding its DNS name to 127.0.0.1, so:
//
//   - a request whose Host is not a loopback name or address or the listen
//     host is answered 421 (the stats too);
//   - a request with an Origin header is answered 403 unless the origin is
//     one of [proxy] allowed_origins (user file or editor settings only),
//     as is a cross-site fetch (Sec-Fetch-Site);
//   - the API endpoints take only Content-Type application/json (415);
//   - paths with dot segments, empty segments or encoded separators are
//     answered 400, so what is forwarded is the path the route was chosen
//     by; /p/<provider> names only providers of the user's configuration
//     (404 otherwise), so ollama's and llama.cpp's default loopback ports are
//     closed unless the user names them.
//
// The engine works only for requests that carry credentials (x-api-key,
// Authorization, x-goog-api-key, api-key) or the shared secret: any other
// request is forwarded as it came and creates no session. A key the
// upstream has not yet accepted in this process (no 2xx seen for it) is
// projected only onto a session that exists, without compacting
// (session.ProxyRequest.Unverified); a new conversation goes as it came, and
// is taken up once its answer shows the key good. So a request the upstream
// answers 401 or 403 writes nothing to the store and costs no model call of
// the engine's own key. Accepted keys are remembered as digests, in memory.
//
// The agent's credentials go only to a provider's official endpoint (not a
// loopback one) or a base_url (or provider) of the user's own
// configuration: a workspace file (which comes with the repository) that
// points a provider elsewhere gets a 502 instead. It forwards the agent's
// credentials verbatim and stores, logs or echoes none of them (no header
// reaches a log, a stats record or an error). With a shared secret
// configured, every request must carry it in X-Vtcode-Proxy-Secret, which is
// removed before forwarding.
//
// Under [proxy] summarizer = "agent" (user file only) a request that
// carries a credential also hands the session a client of its own upstream,
// headers and model (summarizer.go), with which the engine writes a summary
// that request makes it write; the client lives for that request only.
//
// # Bounds
//
// An API endpoint's body may be 33 MiB ([MaxAPIBody]: the APIs' 32 MB and
// a margin), any other path's 512 MiB, streamed; a larger body is answered
// 413 and nothing of it is forwarded. Each read of a body must bring bytes
// within 30 s and the whole body must come within 2 minutes (408
// otherwise). At most [DefaultMaxConcurrent] requests are in the engine at
// once (reading, decoding, projecting; not the forwarding): the next ones
// wait up to 30 s, then get 503 with Retry-After. [NewHTTPServer] bounds
// headers (10 s, 256 KiB) and idle keep-alive connections (2 minutes).
package proxy
