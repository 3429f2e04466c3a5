package proxy

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers/proxywire"
)

func TestSessionKey(t *testing.T) {
	hint := &proxywire.WireRequest{SessionHint: "s-1"}
	none := &proxywire.WireRequest{}
	for _, c := range []struct {
		ep   endpoint
		h    http.Header
		wr   *proxywire.WireRequest
		want string
	}{
		{messages, http.Header{"X-Claude-Code-Session-Id": {"s-1"}}, none, "claude\x00s-1"},
		{messages, http.Header{}, hint, "claude\x00s-1"}, // metadata.user_id: the header's twin
		{responses, http.Header{"Session-Id": {"th"}, "Thread-Id": {"th"}}, hint, "codex\x00th"},
		{responses, http.Header{}, &proxywire.WireRequest{SessionHint: "th"}, "codex\x00th"}, // prompt_cache_key
		{chat, http.Header{"X-Session-Id": {"ses_1"}}, none, "opencode\x00ses_1"},
		{chat, http.Header{}, none, ""}, // a fingerprint, in the session
	} {
		if got := sessionKey(c.ep, c.h, c.wr); got != c.want {
			t.Errorf("%v %v %q: got %q, want %q", c.ep, c.h, c.wr.SessionHint, got, c.want)
		}
	}
}

func TestAgentCompactionMarkers(t *testing.T) {
	user := func(s string) []history.Message {
		return []history.Message{history.NewText(history.User, "task"), history.NewText(history.Assistant, "ok"), history.NewText(history.User, s)}
	}
	for _, c := range []struct {
		ep   endpoint
		h    http.Header
		wr   *proxywire.WireRequest
		want bool
	}{
		{messages, nil, &proxywire.WireRequest{Messages: user("CRITICAL: Respond with TEXT ONLY. Do NOT call any tools. Your task is to create a detailed summary of the conversation so far")}, true},
		{messages, nil, &proxywire.WireRequest{Messages: user("Summarize the README for me")}, false},
		{responses, nil, &proxywire.WireRequest{Messages: user("You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary")}, true},
		{responses, http.Header{"X-Codex-Turn-Metadata": {`{"request_kind":"compaction"}`}}, &proxywire.WireRequest{Messages: user("x")}, true},
		{responses, http.Header{"X-Codex-Turn-Metadata": {`{"request_kind":"turn"}`}}, &proxywire.WireRequest{Messages: user("x")}, false},
		{chat, nil, &proxywire.WireRequest{System: "You are a context summarization agent.", Messages: user("Here is the conversation so far")}, true},
		{chat, nil, &proxywire.WireRequest{System: "You are a context summarization agent.", Tools: []json.RawMessage{[]byte(`{}`)}, Messages: user("x")}, false},
		{chat, nil, &proxywire.WireRequest{Messages: user("You are the component that summarizes a conversation when its context window is about to overflow")}, true},
		{chat, nil, &proxywire.WireRequest{Messages: user("then summarize")}, false},
	} {
		if got := isAgentCompaction(c.ep, c.h, c.wr); got != c.want {
			t.Errorf("%v %q %q: got %v", c.ep, c.wr.System, lastUserText(c.wr.Messages), got)
		}
	}
}
