// Package session is the application core of vtcode-ls: it owns the agent
// sessions of each workspace and decides when to clear and when to compact.
//
// A [Manager] (one per process) holds workspaces, one per root folder, and
// each workspace holds its sessions. A session is one agent conversation: its
// durable history (an append-only event log in the workspace store), its
// route (provider, model, context window), its policy overrides and its
// cache/usage statistics. Every method of the Manager mirrors one vtcode/*
// method of the protocol (docs/design.md §10); its parameter and result structs carry
// the JSON names of those methods, so the JSON-RPC transport can decode
// params into them and encode results as they are. The package knows nothing
// about a transport: no progress tokens (progress is a [Progress] the caller
// passes), no request ids, no framing. It is driven from plain Go tests
// exactly as the rpc package (JSON-RPC on stdio) and the HTTP proxy drive it.
//
// # Ordering
//
// The Manager is the one owner of the order of calls, for every transport.
// Calls for one session run one at a time, in the order in which they enter
// the session's queue: the call that enters first runs first (a FIFO of
// tickets, fair under contention). The calls that name no session
// (ListSessions, CompactPrompt, OpenSession without an id, workspace-level
// GetPolicy and SetPolicy) share a workspace queue the same way. Calls for
// different sessions run concurrently.
//
// A call enters its queue when it is made. A transport that runs requests on
// goroutines but must keep their arrival order takes a [Ticket] per request
// with [Manager.Reserve] as it reads them, passes it to the call (the
// [Place] its params embed, or the ticket argument of a call that takes only
// a session id), and releases it once the response is delivered: the next request of the
// session then sees everything the previous one did, and its notifications
// follow that response. A call queued behind the OpenSession of its session
// finds the session open.
//
// One documented exception: [Manager.ProjectionStats] called while a
// compaction of the same session runs (or begins while it waits) does not
// wait: it returns the last computed stats with state "compacting".
//
// # Atomicity and cancellation
//
// Every mutation is first written as an event to the session log (fsynced
// before the call returns) and then applied in memory by the same code that
// replays the log when a session is resumed, so a resumed session has exactly
// the live history it had. Events: "messages" (appendMessages and the
// messages of prepareRequest), "response" (recordResponse, with usage),
// "compact_boundary" (the docs/design.md §8.8 fields, the new live history, the ref of the
// artifact, the index of the engine's summary message in the new history,
// and the route or response committed with it), "restore" (with the
// restored history and its summary's index), "policy" (a session override
// patch) and "model_switch", and "bill" (a summarizer call's bill,
// receipt.go). Boundaries and restores are checkpoints: a resume decodes
// only the messages after the last one.
//
// Each request commits in one append, so an error means nothing changed and
// a retry stores nothing twice. Requests that can compact (prepareRequest,
// compact, switchModel, recordResponse with a compaction block) compute
// first and commit at the end: the artifact, then one boundary event holding
// everything the request commits, then the swap. A context cancelled at any
// point before the commit, or a store that cannot take it, leaves history,
// events and stats as before and removes the artifact (but for the bills
// of the summarizer calls that answered: the provider billed them); in particular the
// messages of a cancelled prepareRequest are not appended and a cancelled
// switchModel does not switch. A compaction that cannot be stored is a
// *FailedError of kind [KindStorage]; prepareRequest, switchModel and
// recordResponse then commit without it, as after a provider failure.
//
// # Decisions where the protocol is silent
//
//   - A compaction that changes nothing (vtcode/compact on a compact
//     history) is a result, not an error: mode "none", artifactId "" and
//     message "Conversation is already compact.".
//   - An automatic compaction that fails or does nothing inside
//     prepareRequest is reported in the result's compaction field (error and
//     message) and logged; the request continues with the existing
//     projection, and the state is "critical" while the pressure stays over
//     the threshold. The next prepareRequest over the threshold tries again.
//   - Stats state is "critical" also whenever the last rung trimmed.
//   - Restore first stores the live history it replaces as an artifact
//     (trigger "restore", returned as backupArtifactId), so a restore can be
//     undone.
//   - Session overrides (setPolicy with a sessionId) are events and survive
//     a restart; workspace defaults (setPolicy without one) live as long as
//     the process, like initializationOptions, and apply to every session on
//     the keys it did not override.
//   - Provider usage is normalized to the total prompt size: Anthropic-format
//     routes and MiniMax report input exclusive of cached tokens, so their
//     cacheRead and cacheCreation are added (also when usage carries
//     iterations, or when the cached part exceeds the reported input). With
//     Anthropic usage iterations the last reported input and the hit rate
//     are the last message iteration's (the context after the response);
//     the cumulative counts add every billed iteration. The hit rate is
//     cacheRead / input; a response after the first with a hit rate under
//     0.5 extends the low-reuse streak.
//   - Sessions must be opened (openSession) before use; other methods answer
//     [ErrUnknownSession] for ids that are not open in this process.
//   - Messages passed to the Manager are kept as they are (not copied deeply);
//     callers must not modify them afterwards.
//   - What one call may carry is bounded ([Limits]: messages per call, tool
//     calls and bytes per message, system prompt and tools), and so is every
//     token count a caller passes ([MaxTokenCount]): past a bound the call is
//     a *ParamError naming the field and nothing of it is applied. Pressure
//     over 1 is always "critical".
//
// # Proxied agents
//
// A transport whose agents keep their own conversation and resend it whole
// with every request (package proxy) uses [Manager.ProxyPrepare],
// [Manager.ProxyRecord] and [Manager.ProxyAbort] instead of prepareRequest
// and recordResponse: the session keeps a digest of each agent message and
// maps the agent's history onto its own (summary included), records branches
// as new sessions and the agent's own compactions as boundaries of trigger
// "agent". mirror.go and proxy.go have the rules. A proxied session without a client of the
// daemon's own summarizes offline: the agent's credentials are never used
// for the engine's requests, except through [ProxyRequest].Summarizer under
// [proxy] summarizer = "agent" (writer.go).
package session
