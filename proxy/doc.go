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
//	/p/<provider>/…                    the same, to another configured provider
//	/w/<id>/…                          any of the above, for the workspace id names (Workspaces)
//	GET  /vtcode-ls/stats              the proxy's counters (JSON)
//	anything else                      passed through untouched
//
// The upstream of a provider is its [providers.<name>] base_url, else the
// official endpoint. Both base-URL conventions work: a base URL with a path
// (https://api.openai.com/v1) replaces the request's /v1, one without
// (https://api.anthropic.com) takes the whole path. Requests without
// /p/<provider> go to "anthropic" (messages), "openai" (responses, chat) or
// "gemini" (the Gemini API's paths, whose official base has no version:
// https://generativelanguage.googleapis.com).
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
// streams back byte for byte as it arrives (a flush per chunk read); the
// proxy reads a copy of the stream to record the assistant message and its
// usage (session.Manager.ProxyRecord). A failed answer (a non-2xx status, a
// cut stream) is passed on exactly (status, headers such as retry-after,
// body) and records nothing.
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
// session error), the original body is forwarded unchanged and the editor
// gets one window/logMessage. A request relying on state kept by the
// provider (previous_response_id, conversation) is forwarded untouched and
// counted as "stateful" in the stats.
//
// # Security
//
// The proxy listens on loopback only unless an explicit other address and
// allow-remote are given (the command-line flag, the user configuration or
// the editor's settings: a workspace file cannot open it to other hosts).
// The agent's credentials go only to a provider's official endpoint, a
// loopback address, or a base_url the user's own configuration sets: a
// workspace file (which comes with the repository) that points a provider
// elsewhere gets a 502 instead. It forwards the agent's credentials verbatim and
// stores, logs or echoes none of them (no header reaches a log, a stats
// record or an error). With a shared secret configured, every request must
// carry it in X-Vtcode-Proxy-Secret, which is removed before forwarding.
//
// Under [proxy] summarizer = "agent" (user file only) a request that
// carries a credential also hands the session a client of its own upstream,
// headers and model (summarizer.go), with which the engine writes a summary
// that request makes it write; the client lives for that request only.
package proxy
