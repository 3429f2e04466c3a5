package proxy

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers/proxywire"
)

// sessionKey is the agent's own session identity, from what agents send:
// Claude Code's x-claude-code-session-id header or the session_id in its
// metadata.user_id, Codex's session-id / thread-id headers or its
// prompt_cache_key, opencode's x-session-id. "" when the request carries
// none: the session then falls back to a fingerprint of the system prompt
// and first user message. Keys are namespaced by the agent family, so that
// the header and body forms of one agent agree.
func sessionKey(ep endpoint, h http.Header, wr *proxywire.WireRequest) string {
	if v := h.Get("x-claude-code-session-id"); v != "" {
		return "claude\x00" + v
	}
	for _, k := range []string{"session-id", "thread-id"} {
		if v := h.Get(k); v != "" {
			return "codex\x00" + v
		}
	}
	if v := h.Get("x-session-id"); v != "" {
		return "opencode\x00" + v
	}
	switch {
	case ep.isGemini():
		return geminiKey(ep, h, wr)
	case wr.SessionHint == "":
		return ""
	case ep == messages || ep == countTokens: // metadata.user_id
		return "claude\x00" + wr.SessionHint
	}
	return "codex\x00" + wr.SessionHint // prompt_cache_key
}

// Markers of the agents' own compaction requests. Each agent asks its
// model for a summary with a fixed instruction; the proxy recognizes the
// instruction so that it neither records the summarization turn as part
// of the conversation nor mistakes the window the agent starts afterwards
// for a rewind.
var compactionMarkers = []struct {
	ep        endpoint
	all       []string // every one must occur (case-insensitive) in the last user text
	inSystem  bool     // look in the system prompt instead, and require no tools
	agentName string
}{
	// Claude Code appends this to the last user message.
	{messages, []string{"critical: respond with text only", "summary"}, false, "claude-code"},
	// Codex CLI adds this user item (request_kind "compaction" as well).
	{responses, []string{"context checkpoint compaction"}, false, "codex"},
	// opencode's summarization agent: its own system prompt, no tools.
	{chat, []string{"summarization agent"}, true, "opencode"},
	// qwen-code's summarizer prompt, inside the conversation or as system.
	{chat, []string{"summarizes a conversation when its context window"}, false, "qwen-code"},
	{chat, []string{"summarizes a conversation when its context window"}, true, "qwen-code"},
	// Gemini CLI's chat compression (/compress, or its automatic one): a
	// summary request and a verification request, both with its
	// compression system prompt and no tools.
	{geminiGenerate, []string{"distilling chat history into a structured xml <state_snapshot>"}, true, "gemini-cli"},
	{geminiStream, []string{"distilling chat history into a structured xml <state_snapshot>"}, true, "gemini-cli"},
}

// isAgentCompaction reports whether a request is the agent's own
// compaction (summarization) request.
func isAgentCompaction(ep endpoint, h http.Header, wr *proxywire.WireRequest) bool {
	if ep == responses {
		var meta struct {
			RequestKind string `json:"request_kind"`
		}
		if json.Unmarshal([]byte(h.Get("x-codex-turn-metadata")), &meta) == nil && meta.RequestKind == "compaction" {
			return true
		}
	}
	last := strings.ToLower(lastUserText(wr.Messages))
	system := strings.ToLower(wr.System)
	for _, m := range compactionMarkers {
		if m.ep != ep {
			continue
		}
		text := last
		if m.inSystem {
			if len(wr.Tools) > 0 {
				continue
			}
			text = system
		}
		all := true
		for _, s := range m.all {
			all = all && strings.Contains(text, s)
		}
		if all {
			return true
		}
	}
	return false
}

// lastUserText is the text of the last user message.
func lastUserText(msgs []history.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == history.User {
			return msgs[i].Text()
		}
		if msgs[i].Role == history.Assistant {
			return ""
		}
	}
	return ""
}
