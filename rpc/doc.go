// Package rpc serves the vtcode-ls protocol: JSON-RPC 2.0 over a byte
// stream with LSP framing, the LSP lifecycle, work-done progress,
// cancellation, and the vtcode/* methods that drive a [session.Manager].
// [Serve] runs one connection; cmd/vtcode-ls runs it on stdin and stdout.
//
// This comment is the protocol document for editor and agent authors. The
// golden transcripts in rpc/testdata (one scenario per file: what the editor
// sends, what the server answers) show every rule below on the wire, and
// are checked by the tests.
//
// # Framing
//
// Each message is a frame: a header block, an empty line, and a body of
// UTF-8 JSON, exactly as in the LSP base protocol:
//
//	Content-Length: 44\r\n
//	\r\n
//	{"jsonrpc":"2.0","id":1,"method":"shutdown"}
//
// Header lines end in \r\n. Content-Length (a decimal byte count of the
// body) is required; header names are case-insensitive; other headers
// (Content-Type) are accepted and ignored. The server writes
// "Content-Length: N\r\n\r\n" followed by the body, and nothing else:
// stdout carries frames only, logs go to stderr or to --log-file.
//
// Frames the server cannot use are answered and skipped; the connection goes
// on:
//
//   - A body larger than --max-message-bytes (default 64 MiB) gets a parse
//     error (-32700) at once, with the request's id when it appears in the
//     first bytes of the body (LSP clients put "id" before "params"), and the
//     body is read and dropped. A body that never arrives in full (a
//     Content-Length of 10^18) consumes the input to its end.
//   - A body that is not JSON, or not UTF-8, gets -32700 with a null id.
//   - A JSON value that is not a request or response object gets -32600
//     (invalid request), with the id when it can be read: an array (batches
//     are not supported), a missing or wrong "jsonrpc":"2.0", an id that is
//     neither a string nor a non-negative integer, a method that is not a
//     string, params that are neither an object nor an array (nor null).
//   - A response to no request of the server is ignored.
//
// A malformed header (a line not ending in \r\n, a line that is not
// "Name: value", a Content-Length that is not a byte count, two different
// Content-Lengths, none at all, an overlong header) cannot be skipped: the
// server ends the connection cleanly (requests in flight are cancelled and
// answered first), logs one line, and exits with code 1. No byte sequence
// makes the server panic.
//
// # Flow control
//
// The server reads requests only as fast as the client reads its answers:
// while more than 32 MiB or 1,024 frames wait to be written, or 1,024
// requests are read and not yet answered, it stops handing requests to the
// sessions (a finished request then waits to queue its answer, so its
// session waits too) and reads at most 16 MiB of frames ahead. Answers to
// the server's own requests and cancellations are still handled; a
// $/cancelRequest for a request still waiting there gets it answered -32800
// when its turn comes. A client that never reads never grows the server
// without bound.
//
// Nor does it keep the server alive: exit read while the server waits for
// the client ends the connection at once, and the end of input does after
// 5 s; then, as after a signal, what the client has not read is given up
// to 5 s to be written and the rest is dropped, and the process exits
// (code 1 unless shutdown was handled before). Requests still waiting in
// the read-ahead then get no answer.
//
// # Lifecycle
//
// The LSP lifecycle: initialize → initialized → … → shutdown → exit.
//
//   - Before initialize, every request (whatever its method) gets -32002
//     (ServerNotInitialized); notifications are dropped, except exit.
//   - initialize may be sent once (again: -32600). The params read are
//     workspaceFolders (else rootUri, else rootPath): each folder becomes a
//     workspace; initializationOptions, a partial policy (the shape of
//     vtcode/setPolicy's policy) applied to every workspace, rejected with
//     -32602 naming the field (the client may send initialize again); and
//     capabilities.window.workDoneProgress. A folder that cannot be added is
//     reported with window/showMessage and skipped. The result is shown
//     below.
//   - initialized is accepted and changes nothing (requests are served from
//     the initialize response on).
//   - workspace/didChangeWorkspaceFolders adds the added folders (removal is
//     ignored: sessions of a removed folder stay open until closed).
//   - shutdown is answered once every vtcode/* request in flight has been
//     answered. After it, every request gets -32600 (InvalidRequest).
//   - exit ends the process: code 0 after shutdown, 1 otherwise. The end of
//     the input ends it too (code 0 after shutdown, 1 otherwise). Requests
//     still in flight when exit or the end of input arrives are cancelled
//     (send exit after the shutdown response to let them finish), and
//     sessions are closed, their locks released, in every case.
//
// Through the shared daemon (vtcode-ls with no arguments) the lifecycle is
// the same, per connection: exit and the end of input end the connection
// and the forwarder's process with the same codes, but the sessions stay
// open in the daemon for its other clients (their locks are the
// daemon's). The connection sees only its workspaces: an omitted
// workspace is its first folder, vtcode/listSessions without one lists
// its folders, and notifications of other workspaces are not sent. A
// daemon that dies ends the connection (the input ends); the next
// connection starts a new daemon, and openSession resumes the sessions
// with every acknowledged event. The daemon's proxy is the user
// configuration's: initializationOptions.proxy does not move it, and a
// client whose proxy.listen differs from what the daemon serves gets one
// window/showMessage warning (type 2) naming the daemon's proxy address.
//
// The initialize result advertises the vtcode protocol:
//
//	{"capabilities":{"experimental":{"vtcode":{"protocolVersion":1,
//	  "methods":["vtcode/appendMessages", ...every vtcode/* method...],
//	  "notifications":["vtcode/compactBoundary","vtcode/compactionProposed",
//	                   "vtcode/tokenPressure"]}}},
//	 "serverInfo":{"name":"vtcode-ls","version":"..."}}
//
// # Sessions and ordering
//
// A workspace holds sessions; a session is one agent conversation with a
// durable history. Requests that name a session (a sessionId) are run one at
// a time per session, in the order they arrived; requests for different
// sessions run concurrently, and the server keeps reading while any of them
// runs. A client may therefore pipeline: appendMessages then prepareRequest
// for one session, sent back to back, are applied in that order.
// Requests without a sessionId (listSessions, compactPrompt, openSession
// without an id, workspace-level getPolicy and setPolicy) are ordered among
// themselves the same way, but not with session requests: wait for the
// response of a workspace-level change before relying on it in a session.
//
// One exception keeps status displays live: vtcode/projectionStats sent
// while its session is compacting, or waiting behind a request of its
// session that starts compacting, is answered as soon as the compaction
// begins, with the last stats in state "compacting", instead of waiting for
// the compaction to end.
//
// The notifications a request causes (progress, pressure, boundaries) are
// sent before its response.
//
// # Methods
//
// Params and results are JSON objects with camelCase fields; "?" marks an
// optional field. Token counts a client passes (prefixTokens,
// reservedOutputTokens, contextWindow, the usage counts) are integers from 0
// to 10^9; a larger one gets -32602 naming it.
//
// One call carries at most 50,000 messages (appendMessages, prepareRequest);
// a message at most 1,024 tool calls and 32 MiB of text (its content, tool
// calls, reasoning and other fields), as do systemPrompt and tools together.
// Past a limit the call gets -32602 naming the field
// ("messages[3].toolCalls: at most 1024 tool calls per message, got 5000")
// and nothing of it is applied. Every cost of a call is linear in what it
// carries; the limits bound the constant (session.Limits sets them). Messages have the shape of docs/design.md §2 (role, content,
// toolCalls, toolCallId, toolName, reasoning, reasoningDetails, and any
// other field, kept verbatim). Unknown fields in params are ignored, so
// that newer clients work with older servers; unknown fields in a policy are
// rejected. A workspace is a folder path or a file:// URI; omitted, it is
// the first workspace folder.
//
// vtcode/openSession opens a session, resuming a stored one by id, or
// creates one (with the given id, or a generated one). A route (provider,
// model, contextWindow) given to an open session replaces its route.
//
//	params: {workspace?, sessionId?, provider?, model?, contextWindow?}
//	result: {sessionId, resumed, messages, policy}
//
// vtcode/closeSession closes a session (after the requests queued before
// it) and releases its lock on the store.
//
//	params: {sessionId}
//	result: null
//
// vtcode/listSessions lists the stored sessions of a workspace, or of all.
//
//	params: {workspace?}
//	result: [{sessionId, workspace, messages, updatedAt, active?}]
//
// Each workspace's sessions come most recently updated first. active: true
// marks the one session of the listing a client follows until the user
// picks one (the most recently updated; then it follows the sessions that
// vtcode/tokenPressure names), so that no client compares dates itself.
//
// vtcode/appendMessages appends messages to the session history (durably:
// fsynced before the response).
//
//	params: {sessionId, messages}
//	result: {messages, historyTokens}     // history length and estimate
//
// vtcode/history reads the live history (default: all of it): limit
// messages from offset; a limit of 0 or one reaching past the end reads to
// the end.
//
//	params: {sessionId, offset?, limit?}
//	result: {messages, total}
//
// vtcode/prepareRequest runs the request pipeline: it appends the turn's new
// messages, repairs pairing, clears old tool results, compacts automatically
// when the projection crosses the compaction threshold (with progress, see
// below), trims as a last resort, and returns the projection to send to the
// model. The history is never cleared; only compaction replaces it.
//
//	params: {sessionId, messages?, systemPrompt?, tools?, prefixTokens?,
//	         reservedOutputTokens?, nativeContextEdits?, workDoneToken?}
//	result: {messages, stats, contextManagement?, compaction?, trimmed}
//
// On an Anthropic route with nativeContextEdits, contextManagement is the
// edit ladder to send as context_management. The request then needs the
// anthropic-beta values of what it carries: context-management-2025-06-27
// for clear_* edits, and compact-2026-01-12 for a compact_* edit or for
// any compaction block among the messages (the block exists only in that
// beta, so a request replaying one needs it even without an edit). Send
// only the newest compaction block, as the first block of the conversation:
// the API refuses a misplaced or a second one (after a provider compaction
// the history already starts at its block).
//
// vtcode/recordResponse records the model's answer and the provider's usage.
//
//	params: {sessionId, message, usage?, stopReason?}
//	result: {messages, stats}
//
// vtcode/compact compacts the history now (with progress). A history that
// cannot get smaller is left alone ("Conversation is already compact.").
//
//	params: {sessionId, instructions?, strategy? ("auto"|"local"|"native"),
//	         workDoneToken?}
//	result: {mode, strategy, trigger, elapsedMs, originalMessageCount,
//	         compactedMessageCount, originalTokens, compactedTokens,
//	         artifactId, message}
//
// vtcode/projectionStats returns the stats of the session's projection.
//
//	params: {sessionId}
//	result: {sessionId, messages, projectedMessages, originalTokens,
//	         projectedTokens, prefixTokens, clearedResults, protectedResults,
//	         protectedBatches, clearedInputs, localTrigger, historyBudget,
//	         capacity, reservedOutput, compactionThreshold, pressure, state,
//	         lastReportedInputTokens?, lastRequestEstimate?,
//	         reportedDifference?, strategy, compactions,
//	         lastCompaction?, cache?, reuse?, receipt?, display}
//
// messages counts the history as the request sends it (the messages of the
// request included; a call still waiting for its result counts the
// placeholder result it is sent with), projectedMessages those of it the
// request sends (fewer when the window trims the oldest). state is "ok",
// "warn", "compacting" or "critical"; pressure is
// (projectedTokens + prefixTokens) / (capacity − reservedOutput), and a
// pressure over 1 (the request cannot fit, as when the prefix alone is
// larger than the window) is always "critical". display is the gauge as an
// editor shows it, formatted by the server so that every client shows the
// same text: {percent: "62%", used: "78.1k", window: "128k", text: "62% ·
// 78.1k/128k"}, where used is prefixTokens + projectedTokens (the tokens
// the request holds, as the pressure counts them); without a capacity
// percent and window are "" and text is used alone ("78.1k"). After a
// vtcode/recordResponse with usage, lastReportedInputTokens is the
// provider's input count, lastRequestEstimate the local estimate of the
// request it answered (projectedTokens + prefixTokens of the last
// prepareRequest) and reportedDifference the first minus the second. With
// Anthropic usage iterations (usage.iterations, in Anthropic's snake_case
// or this protocol's camelCase names), lastReportedInputTokens and
// cache.lastHitRate are those of the last message iteration (the context
// the model saw when it answered), while cache.cumulativeInputTokens and
// cache.cumulativeCacheReadTokens add every billed iteration (message,
// fallback_message, advisor_message, compaction).
//
// vtcode/setPolicy changes the policy of a session or (without sessionId)
// the default of a workspace, and returns the effective policy. The policy
// is partial:
//
//	params: {sessionId?, workspace?, policy: {
//	  autoCompaction?: {enabled, thresholdTokens, thresholdRatio, compactOnModelSwitch,
//	                    mode ("auto"|"ask")},
//	  toolResultClearing?: {enabled, triggerTokens, keepToolUses,
//	                        keepRecentToolBatches, clearToolInputs,
//	                        clearAtLeastTokens, cacheAware},
//	  context?: {maxContextTokens, reservedOutputTokens, trimToPercent,
//	             preserveRecentTurns, tokenizer, stayBelowPriceTier},
//	  routePolicy?: {thresholdRatio, retainRatio, maxOverflowRetries}}}
//	result: the effective policy (every field)
//
// context.stayBelowPriceTier (default true) keeps every request under the
// model's long-context price tier when its window is larger: capacity is
// then the tier's threshold plus the reserved output, so clearing and
// compaction keep the prompt under it (the receipt's withoutTierRequests
// counts the requests that would have paid the tier).
//
// A bad value or unknown key fails with -32602 naming the field
// ("policy.toolResultClearing.keepToolUses: must be >= 0") and nothing of
// the call is applied.
//
// vtcode/getPolicy returns the effective policy of a session, or the
// default of a workspace.
//
//	params: {sessionId?, workspace?}
//	result: the effective policy
//
// vtcode/listArtifacts lists the stored pre-compaction histories.
//
//	params: {sessionId}
//	result: [{artifactId, createdAt, messages, trigger, mode}]
//
// vtcode/restore makes an artifact's history the live history (recorded as
// an event; the history it replaces is kept as another artifact).
//
//	params: {sessionId, artifactId}
//	result: {messages, backupArtifactId?}
//
// vtcode/switchModel moves the session to another route. When the history
// does not fit the new route's threshold (and compactOnModelSwitch is on) it
// is compacted first, with the new route and progress; a failed compaction
// never blocks the switch (the message says so).
//
//	params: {sessionId, provider, model, contextWindow?, workDoneToken?}
//	result: {compaction?, message}
//
// vtcode/compactPrompt reads or changes the workspace's summary prompt.
//
//	params: {workspace?, action: "get"|"set"|"reset", prompt?}
//	result: {prompt, isDefault}
//
// vtcode/compact previews and commits (servers that list
// vtcode/contextMap support them; older ones ignore the fields and compact
// at once). With preview: true the compaction runs as a manual one would,
// with progress ("Previewing compaction..."), and commits nothing: no
// artifact, no event, the history unchanged.
//
//	params: {sessionId, preview: true, instructions?, strategy?, workDoneToken?}
//	result: {previewId, summary, editable, messages, mode, strategy,
//	         originalMessageCount, compactedMessageCount, originalTokens,
//	         compactedTokens, elapsedMs, message}
//
// messages is the history the commit would swap in (the summary message,
// the retained user messages, the verbatim tail); summary is the summary
// message's text without its "Previous conversation summary:" heading, and
// editable is false when there is none (an opaque provider-native
// compaction). An already compact history gives previewId "" and mode
// "none". A session keeps its newest preview in memory until it is
// committed, a newer preview replaces it, or the session closes. Committing
// it:
//
//	params: {sessionId, previewId, summary?}
//	result: the vtcode/compact result (trigger "manual", with its artifactId)
//
// commits exactly the previewed history, with summary (when given) in place
// of the summary text, followed by vtcode/compactBoundary as for any
// compaction. When the history changed since the preview (messages
// appended, a response recorded, a compaction or a restore) it fails with
// -32801 (content modified: "preview …: the history changed since the
// preview (40 messages then, 41 now); preview again") and changes nothing.
// An unknown or replaced previewId, previewId with preview: true, summary
// without previewId, an empty summary, or one that makes the history no
// smaller than before (or larger than the window) are -32602.
//
// vtcode/contextMap returns what the next request of a session would hold,
// by category, and how the session got there (testdata/context_map.txtar).
//
//	params: {sessionId}
//	result: {sessionId, capacity, reservedOutput, compactionThreshold,
//	         usedTokens, pressure, state, display, messages, projectedMessages,
//	         categories: [{category, tokens, messages}],
//	         turns: [{turn, tokens, capacity, pressure, state, messages,
//	                  trimmed?, clearedResults?, clearedTokens?,
//	                  largeClear?, compaction?}],
//	         compactions: [{turn, trigger, mode, originalTokens,
//	                        compactedTokens, artifactId}],
//	         cleared: [{tool, callId, originalTokens, stubTokens, turn,
//	                    pending?}],
//	         artifacts: [as vtcode/listArtifacts], receipt?}
//
// categories are always these nine, in window order: prefix (the last
// request's system prompt and tool schemas, and system messages of the
// history), user, assistant (text and reasoning), toolCalls (the calls of
// assistant messages), toolResults (sent in full), clearedStubs, summary
// (the compaction summary message), free and reservedOutput. With a known
// capacity they add up to it; free is 0 when the request overflows; without
// a capacity free and reservedOutput are 0. usedTokens is prefix + the
// projection, as in the stats. turns has one entry per prepared request
// (turn counts them from 1) with its estimate and state, how many results
// it was the first to send cleared and the tokens that freed (largeClear:
// at least a tenth of capacity − reservedOutput, or 4,096 tokens without a
// capacity), and the trigger of a compaction that took effect for it.
// compactions[].turn is that request: the one whose preparation compacted,
// or the next one after a manual or model-switch compaction. cleared lists
// the results the next request carries as stubs, in history order, with
// the first turn that sent each stub; pending marks one no request has sent
// cleared yet (turn is then the next request's). The turns survive a
// restart of the daemon: they are recorded in the session's event log,
// with the request's prefix tokens and reserved output, which a resumed
// session's stats and map then use until the next prepareRequest.
// # Prompt cache: cleared horizon, reuse and cost
//
// Providers bill a cached prompt prefix at a fraction of the price, and a
// changed byte invalidates the cache from there on. Above the protected
// floor of docs/design.md §7 (evidence window, keepToolUses, keepRecentToolBatches, small
// results), old tool results are cleared in steps: a result is cleared only
// before the session's cleared horizon, which moves forward (clearing
// everything above the floor at once) when that removes at least
// toolResultClearing.clearAtLeastTokens tokens and pays for the cache it
// breaks (the tokens it removes, read at the route's cache-read price on
// each request, repay rewriting the rest of the request at the write price,
// less the newest messages it writes anyway, within a quarter of the
// requests the session has made so far, since a step
// that is not repaid by the time the session ends would make it dearer
// than sending everything, and within half the requests the session takes
// to grow as many clearable tokens again at its mean growth, since the next
// step would clear them then), when the route's cache has expired (cacheAware: the previous
// request is older than the route's TTL), or when holding back would leave
// the request at the compaction threshold. Between steps each request
// starts with the previous request and its answer, byte for byte. The
// horizon is stored as a session event, so a restarted daemon projects the
// same bytes. clearAtLeastTokens 0 with cacheAware false is exactly docs/design.md §7: every
// request clears everything above the floor. With cacheAware, a request
// whose cache has expired and whose pressure is past the soft threshold
// (90 % of the compaction threshold) compacts now: the prefix is written
// again anyway. On Anthropic routes the clear_tool_uses_20250919 edit
// carries clear_at_least with the same value.
//
// Stats (prepareRequest's, recordResponse's and projectionStats') carry
// reuse, the prediction for the request (for projectionStats: the next one):
//
//	reuse: {reusedTokens, requestTokens, ratio, reusedMessages, costUnits,
//	        cacheCold, clearedHorizon, heldTokens,
//	        pricing: {read, write, ttlSeconds},
//	        lastResponse?: {predictedReadTokens, cacheReadTokens,
//	                        cacheWriteTokens, difference}}
//
// reusedTokens is the estimate of the leading part of the request (prefix,
// then messages) identical to the previous request and its answer, 0 when
// the cache is cold; costUnits is reusedTokens × read + the rest × write, in
// uncached input tokens, under the route's pricing (built in per provider
// and model; [[models]] cache_read_multiplier, cache_write_multiplier and
// cache_ttl_seconds override it). heldTokens is what clearing keeps back for
// the cache. lastResponse compares the cache counts of the last
// recordResponse with the reuse predicted for the request it answered.
// recordResponse's usage may use this protocol's names (inputTokens,
// outputTokens, cacheReadTokens, cacheCreationTokens) or the provider's:
// Anthropic's input_tokens, output_tokens, cache_read_input_tokens and
// cache_creation_input_tokens; OpenAI's input_tokens or prompt_tokens,
// output_tokens or completion_tokens, input_tokens_details.cached_tokens or
// prompt_tokens_details.cached_tokens, and cache_write_tokens.
//
// Stats and the context map carry the session's receipt once an answer
// with usage was recorded: what the provider billed, from its own usage of
// every answer, and an estimate of the same requests without vtcode-ls.
//
//	receipt: {requests, tokens, paidUsd?, withoutTokens, withoutUsd?,
//	          savedUsd?, withoutIsEstimate: true, tierRequests?,
//	          withoutTierRequests?, compactions?: [{trigger, mode,
//	          originalTokens, compactedTokens, model?, tokens, usd?,
//	          calls?}], unused?: {calls, tokens, usd?}, unpriced?,
//	          pricesAsOf?}
//	tokens:  {input, cacheRead, cacheWrite5m, cacheWrite1h, output,
//	          reasoning?}
//
// tokens are disjoint (input is the uncached part) and add every
// summarizer call vtcode-ls made; requests counts the answers. A
// summarizer call (the model writer, a native compaction, the agent's
// model in proxy mode) is billed once, when it answers, whatever becomes
// of it: a compaction's tokens, usd and calls are the calls whose outcome
// it committed (its own, the pass-1 note it used, or the preview it
// applied); unused are the others (previews never applied or replaced,
// pass-1 notes discarded or not used yet, compactions that failed or
// changed nothing after a call answered). A call that failed without an
// answer is not billed. A bill is written to the session log when the
// compaction or preview that made the call ends (a pass 1 runs in the
// background: in the session's next turn), and at the latest when the
// session closes; a crash in between loses those bills, nothing else. A
// compaction of an older log has no calls and only its committed cost.
// Costs are US dollars under the model's list price (built in, dated pricesAsOf, or
// [[models]] input_price, cache_read_price, cache_write_price,
// cache_write_1h_price, output_price); with a model whose price is unknown
// (named in unpriced) the receipt has tokens and no cost. The estimate
// without vtcode-ls is the agent's whole request each time (the history
// before clearing and compaction, at most the window, scaled by the
// provider's count over the local estimate), with the agent's own cache
// breakpoints (the previous request read from the cache within the route's
// TTL). tierRequests counts the requests billed at a long-context tier,
// withoutTierRequests those that would have been. recordResponse's usage
// also reads the 1-hour part of the cache writes (cacheCreation1hTokens, or
// Anthropic's cache_creation.ephemeral_1h_input_tokens) and the reasoning
// part of the output (reasoningTokens, or OpenAI's
// output_tokens_details.reasoning_tokens).
//
// # Projection deltas
//
// A client that sets capabilities.experimental.vtcode.projectionDelta: true
// in initialize (the server advertises projectionDelta: true) gets every
// prepareRequest result with a revision, and may send baseRevision, the
// revision of the last projection it received for that session:
//
//	params: {..., baseRevision?}
//	result: {revision, messages, stats, ...}                    (whole)
//	result: {revision, delta: {baseRevision, keep, messages}, stats, ...}
//
// A delta says: keep the first delta.keep messages of the projection named
// baseRevision, then append delta.messages; that is the projection named
// revision. The server answers with a delta only when baseRevision is the
// last revision it sent to this connection for the session and the session
// prepared nothing since (for another client); otherwise, and without
// baseRevision, the result carries the whole projection. Revisions are
// opaque strings, unique per session and daemon process; a restarted
// daemon sends the whole projection first. A client without the capability
// gets the results above without revision. testdata/projection_delta.txtar
// is the exchange.
//
// # Notifications from the server
//
// vtcode/tokenPressure follows every append, prepare, response, compaction,
// restore, model switch and policy change:
//
//	{sessionId, workspace, projectedTokens, originalTokens, capacity,
//	 pressure, state, display}
//
// display is that of the stats (vtcode/projectionStats). It is coalesced
// per session: at most one per 100 ms; the first goes out at once and the
// last value of a burst always arrives, at the latest before the response
// that leaves the session with no request in flight (so a client that waits
// for each response sees the pressure its request caused first; pipelined
// requests stay coalesced).
//
// vtcode/compactBoundary follows each successful compaction:
//
//	{sessionId, workspace, trigger, mode, strategy, originalMessageCount,
//	 compactedMessageCount, originalTokens, compactedTokens, artifactId,
//	 elapsedMs}
//
// With autoCompaction.mode "ask" (agent.harness.auto_compaction_mode), a
// request past the soft threshold (90 % of the compaction threshold) is
// not compacted: the session prepares the compaction in the background
// (pass 1) and proposes it once (testdata/compaction_proposed.txtar):
//
//	vtcode/compactionProposed: {sessionId, workspace, usedTokens, threshold,
//	                            limit, message}
//
// Until the user answers, requests go on with clearing only, past the
// threshold. The answers: vtcode/compact (compact now; the pass-1 note
// makes it one summary call), vtcode/compact with preview then previewId
// (review and edit first), or
//
//	vtcode/declineCompaction  params: {sessionId}  result: stats
//
// (not now: the proposal is made again once the request has grown by the
// gap between the soft threshold and the threshold). A request over limit
// (capacity − reservedOutput: it would not fit) compacts anyway, followed
// by a window/showMessage warning that says so; a request is never sent
// over budget and a proxied agent is never blocked waiting for an answer.
//
// window/logMessage and window/showMessage report failures (a compaction
// that fell back or failed, a configuration file that does not parse, with
// the file and line of every problem, separated by "; "). Their texts are at
// most 1 KiB and never contain a secret.
//
// # Trust: workspace files and editor settings
//
// A workspace configuration file (vtcode.toml, .vtcode/config.toml) comes
// with the repository and is untrusted. The keys that pick a host or a
// secret — base_url and api_key_env of every [providers.<name>] table — are
// read only from the user's file (~/.config/vtcode/vtcode.toml, or under
// $XDG_CONFIG_HOME). In a workspace file each is ignored and reported with
// window/showMessage (type 2, warning), one message per key:
//
//	vtcode-ls: /ws/vtcode.toml:4: providers.openai.base_url: ignored: a
//	workspace file may not set an endpoint (set it in the user
//	configuration /home/me/.config/vtcode/vtcode.toml)
//
// and the rest of the file applies (so a workspace chooses among the
// providers the user configured, or the built-in ones at their official
// endpoints). A workspace storage.dir that is absolute, starts with "~/" or
// leaves the workspace ("../") is ignored and reported the same way. The
// same messages follow each reload of the file.
//
// initializationOptions come from the editor's settings: the Neovim
// plugin's setup{policy = …} in the user's own Lua configuration
// (user-level); the VS Code extension sends none (its vtcode.* settings
// configure the client, not the server), and a VS Code setting could be
// workspace-level (.vscode/settings.json is a repository file too). So they
// carry only a partial policy (see vtcode/setPolicy) and any other key is
// rejected with -32602: no editor setting names an endpoint or a
// credential, and the policy cannot send anything anywhere. Provider requests follow redirects only within their origin
// (scheme, host, port); a redirect elsewhere fails the call (-32803 when a
// compaction has no other way), and its credentials never leave.
//
// # Progress
//
// Compactions report LSP work-done progress ($/progress). The token is the
// request's workDoneToken when it has one (a string or an integer; used for
// one progress). Otherwise, when the client advertised
// capabilities.window.workDoneProgress, the server creates one
// ("vtcode-1", "vtcode-2", ...) with a window/workDoneProgress/create
// request before the compaction starts, and waits for the answer; a client
// that refuses it gets no progress for that work. Without either, no
// progress is sent. The sequence is
//
//	{"kind":"begin","title":"Compacting context...","cancellable":true}
//	{"kind":"report","cancellable":true,"message":"Summarizing 120 messages (local)","percentage":20}
//	{"kind":"end","message":"Context compacted · 1.4s (120 -> 14 messages, local). The next request may reuse less of the provider's prompt cache."}
//
// or an end message "Compaction failed: <bounded cause>" or "Compaction
// cancelled.". Every begun progress ends, before the request's response.
//
// # Cancellation
//
// $/cancelRequest {id} cancels a request in flight, running or still
// waiting for its turn in its session. A cancelled request is answered with
// -32800 (RequestCancelled) and leaves all state exactly as before it: a
// compaction in progress is abandoned, nothing is swapped in, nothing
// half-written is kept on disk. A request whose work completed before the
// cancel arrived answers normally (its effects happened). A cancel for an
// unknown or finished request is ignored. window/workDoneProgress/cancel
// {token} cancels the request that reports on the token, like
// $/cancelRequest.
//
// # Persistence
//
// Each workspace stores its sessions in <workspace>/.vtcode/sessions, or in
// storage.dir. A storage.dir set by the workspace's own vtcode.toml must name
// a folder inside the workspace (only the user's configuration may put it
// elsewhere; one that leaves it is ignored with a warning, see Trust), and no
// folder of the store's path inside the workspace may be a symbolic link:
// otherwise openSession fails with -32603 naming the problem.
// Every file is resolved inside the store; a link swapped in later is
// refused, never followed out of it.
//
// An error reply means nothing changed. Every request that changes a session
// commits in one durable append of its event log (fsynced before the reply):
// appendMessages, prepareRequest (its messages, or its messages with the
// compaction boundary of an automatic compaction), recordResponse (the
// response, or the response with the boundary of a provider compaction
// block), compact, restore, switchModel, setPolicy. So a client may retry a
// request that got an error (or no reply, after a crash) without storing its
// messages twice: either the first attempt committed everything (check with
// vtcode/history after a lost reply) or nothing.
//
// A compaction whose outcome cannot be stored (a full or read-only disk) is a
// failed compaction, as a provider failure is: vtcode/compact answers -32803
// with kind "storage"; prepareRequest and recordResponse still store the
// request's messages or the response and answer with the projection of the
// full history (prepareRequest reports the compaction with its error and
// state "critical" when over the threshold); only when even that cannot be
// written is the reply an error. A failed compaction leaves no file behind.
//
// The history is self-sufficient: the boundary of a compaction and a restore
// each carry the whole live history after them, so a deleted or damaged
// artifact loses only its own pre-compaction record, never an acknowledged
// message. Each event that references an artifact records its message count,
// size and SHA-256: listArtifacts lists only the artifacts whose file has its
// recorded size, with the recorded counts; restore checks the whole file
// and refuses a damaged one with -32602 ("artifactId: artifact ... is
// damaged: ...; nothing was restored"), changing nothing. An artifact found
// unusable when a session opens is reported with a window/logMessage.
// Resuming decodes only the history after the last boundary or restore.
//
// storage.keep_artifacts (default 20; 0 keeps all) bounds the artifacts of a
// session: after each compaction or restore the oldest beyond it are
// deleted. Artifact files no event references (from a compaction killed
// before its boundary) are deleted when the session is opened.
//
// Each line of the event log carries a sequence number and a checksum. A
// line without its newline at the end of the log is a write that a crash
// interrupted, never acknowledged: it is dropped (logged). Anything else
// that is not a valid next event (a corrupt line anywhere, an invalid
// complete last line, a duplicated, reordered or missing event) is damage a
// crash cannot produce: the session opens with the valid events before that
// line, the whole damaged log is first saved as
// <session>/@damaged-N-events.jsonl (N: the first free number), and a
// window/showMessage warning names the line, the number of events kept and
// lines dropped, and the saved copy. To recover events after the damage,
// close the session, repair the saved copy by hand and move it back over
// events.jsonl.
//
// A session is owned by one process at a time (an exclusive lock on
// <session>/lock, released by the system when the owner exits or dies, so a
// stale lock is taken over by the next open). -32004 names the process that
// holds the lock (on Linux from /proc/locks, elsewhere the recorded pid if
// that process is alive), or no pid when it is unknown.
// # Proxy mode
//
// Agents that keep their own conversation and talk to a provider's API
// directly (Claude Code, Codex CLI, opencode, qwen-code, …) get the engine
// through the proxy (package proxy): point the agent's base URL at it. When
// the workspace configuration has [proxy] listen (or initializationOptions
// carries {"proxy": {"listen": "127.0.0.1:8787", "allowRemote"?: false,
// "secretEnv"?: "NAME"}}, which is not part of the policy), the daemon runs
// the proxy in-process after initialize and reports
//
//	window/logMessage {"type":3,"message":"vtcode-ls proxy listening on http://127.0.0.1:8787"}
//
// (the same line goes to stderr; "127.0.0.1:0" picks a free port). The
// settings are read once, after initialize: changing them takes a restart of
// the daemon. A proxy that cannot start (the port is taken, say) says why in
// a window/logMessage of type 1; the daemon works on without it. The proxied
// sessions are sessions of the first workspace like any other: they appear
// in vtcode/listSessions (ids "proxy-…"), vtcode/tokenPressure and
// vtcode/compactBoundary are sent for them, a compaction they trigger
// reports $/progress on a server-created token (so the client must
// advertise capabilities.window.workDoneProgress to see it), and
// vtcode/compact, vtcode/projectionStats, vtcode/history and vtcode/restore
// act on them. A proxied session without an API key of the daemon's own
// summarizes offline: the agent's credentials are only ever forwarded,
// unless the user configuration sets [proxy] summarizer = "agent"; then the
// summary a request makes the engine write goes to that request's upstream
// with that request's credentials and model, for that one call.
//
// How the proxy maps the agent's requests onto a session:
//
//   - Each request carries the whole conversation; the session appends what
//     is new, with the answer once it arrived. A failed request (an upstream
//     error, a cut stream) records nothing, unless it triggered a compaction,
//     which then also recorded its messages (the agent's retry maps onto
//     them).
//   - After the engine compacted, the agent keeps sending its full history;
//     the compacted prefix is mapped onto the summary, so the upstream sees
//     summary + recent messages.
//   - A request that diverges from the conversation (a rewind, an edit) is
//     recorded as a new session (a branch, id "proxy-…-b…"); the stored
//     session is left as it was.
//   - The agent's own compaction requests (Claude Code's "CRITICAL: Respond
//     with TEXT ONLY … summary" turn, Codex's CONTEXT CHECKPOINT COMPACTION
//     item or request_kind "compaction", opencode's summarization agent,
//     qwen-code's summarizer prompt) are projected but not recorded; the
//     fresh window the agent starts next is recorded in the same session as
//     a vtcode/compactBoundary with trigger, mode and strategy "agent"
//     (the previous history is kept as its artifact).
//   - A restart changes none of this: the alignment with a compacted or
//     branched history is stored with the session, so after a restart the
//     agent's next request still goes out as summary + recent messages and
//     extends the branch it was in (no new boundary, no second compaction).
//   - A request that fails in the engine is forwarded unchanged, with one
//     window/logMessage of type 2 "vtcode-ls proxy: could not process a …
//     request (…); forwarded it unchanged".
//   - A request without credentials, or whose key the upstream has not yet
//     accepted, creates no session: it is forwarded as it came, and a new
//     conversation shows up once an answer (2xx) shows its key good.
//   - Answers are recorded after the agent has them; when one cannot be
//     (a full disk), one window/showMessage of type 2 "vtcode-ls proxy:
//     session … is not being saved (…)" until the session is saved again.
//
// A workspace file may set [proxy] listen, but not allow_remote or
// allowed_origins (only the user configuration and initializationOptions
// may: "proxy": {"allowedOrigins": [...]}), and a base_url that only a
// workspace file names is not used for the agent's credentials.
// package proxy's documentation has the endpoints, the session identity
// headers and the security rules.
//
// # Errors
//
// Error responses carry a code, a message of at most 1 KiB that never
// contains a secret, and, for -32803, data:
//
//	-32700  parse error: the body is not JSON or not UTF-8, or is too large
//	-32600  invalid request: not a request object; initialize twice; a
//	        notification method with an id; an id already in flight; any
//	        request after shutdown
//	-32601  method not found
//	-32602  invalid params; the message starts with the field path:
//	        "sessionId: must be a string", "messages[3].role: must be
//	        system, user, assistant or tool, got \"bot\"",
//	        "policy.context.trimToPercent: must be <= 100", an invalid
//	        session or artifact id
//	-32002  server not initialized
//	-32800  request cancelled
//	-32803  request failed: a provider or compaction failure, with
//	        data {kind, provider, model, inputTokens, budget, rootCause};
//	        kind "storage" when the outcome could not be stored
//	        (see Persistence)
//	-32001  unknown session: the id is valid but no session is open with it
//	        (open it with vtcode/openSession)
//	-32004  session busy: another process owns it; the message names
//	        that process's pid when it is known (see Persistence)
//	-32801  content modified: a compaction preview committed after the
//	        history changed (preview again)
//	-32603  internal error
//
// # A worked exchange
//
// Editor frames are marked "→", server frames "←" (headers omitted):
//
//	→ {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":42,
//	     "rootUri":"file:///home/me/project","capabilities":{"window":{"workDoneProgress":true}}}}
//	← {"jsonrpc":"2.0","id":1,"result":{"capabilities":{"experimental":{"vtcode":{"protocolVersion":1,...}}},
//	     "serverInfo":{"name":"vtcode-ls","version":"v0.1.0"}}}
//	→ {"jsonrpc":"2.0","method":"initialized","params":{}}
//	→ {"jsonrpc":"2.0","id":2,"method":"vtcode/openSession",
//	     "params":{"provider":"anthropic","model":"claude-sonnet-4-6"}}
//	← {"jsonrpc":"2.0","method":"vtcode/tokenPressure","params":{"sessionId":"20261130T101500.000Z-9f2c1a7e",...,"state":"ok"}}
//	← {"jsonrpc":"2.0","id":2,"result":{"sessionId":"20261130T101500.000Z-9f2c1a7e","resumed":false,"messages":0,"policy":{...}}}
//	→ {"jsonrpc":"2.0","id":3,"method":"vtcode/prepareRequest","params":{
//	     "sessionId":"20261130T101500.000Z-9f2c1a7e","systemPrompt":"You are a coding agent.",
//	     "messages":[{"role":"user","content":"Fix the failing test."}]}}
//	← {"jsonrpc":"2.0","method":"vtcode/tokenPressure","params":{...}}
//	← {"jsonrpc":"2.0","id":3,"result":{"messages":[...],"stats":{...},"trimmed":false}}
//	   (the agent sends the projection to the model, runs tools...)
//	→ {"jsonrpc":"2.0","id":4,"method":"vtcode/recordResponse","params":{
//	     "sessionId":"20261130T101500.000Z-9f2c1a7e","message":{"role":"assistant","content":"...",
//	     "toolCalls":[...]},"usage":{"inputTokens":5400,"outputTokens":120}}}
//	← {"jsonrpc":"2.0","method":"vtcode/tokenPressure","params":{...}}
//	← {"jsonrpc":"2.0","id":4,"result":{"messages":3,"stats":{...}}}
//	   (many turns later, a prepareRequest crosses the threshold:)
//	→ {"jsonrpc":"2.0","id":40,"method":"vtcode/prepareRequest","params":{...}}
//	← {"jsonrpc":"2.0","id":0,"method":"window/workDoneProgress/create","params":{"token":"vtcode-1"}}
//	→ {"jsonrpc":"2.0","id":0,"result":null}
//	← {"jsonrpc":"2.0","method":"$/progress","params":{"token":"vtcode-1","value":{"kind":"begin","title":"Compacting context...","cancellable":true}}}
//	← {"jsonrpc":"2.0","method":"$/progress","params":{"token":"vtcode-1","value":{"kind":"report",...}}}
//	← {"jsonrpc":"2.0","method":"vtcode/compactBoundary","params":{...,"trigger":"auto","mode":"local",...}}
//	← {"jsonrpc":"2.0","method":"$/progress","params":{"token":"vtcode-1","value":{"kind":"end","message":"Context compacted · 2.3s (212 -> 19 messages, local). ..."}}}
//	← {"jsonrpc":"2.0","method":"vtcode/tokenPressure","params":{...,"state":"ok"}}
//	← {"jsonrpc":"2.0","id":40,"result":{"messages":[...],"stats":{...},"compaction":{...},"trimmed":false}}
//	→ {"jsonrpc":"2.0","id":41,"method":"shutdown"}
//	← {"jsonrpc":"2.0","id":41,"result":null}
//	→ {"jsonrpc":"2.0","method":"exit"}
//
// # Using the package
//
// [Serve] runs a connection until exit; [Options] sets the logger, the
// version, the frame limit and the session options. Package rpctest drives
// a server from Go tests: a fake editor with awaitable expectations, and the
// golden transcript runner.
package rpc
