package transcript_test

import (
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/transcript"
)

// TestAgentCompactions: the agent's own compactions are found with the
// prefix each summarized: a Codex rollout's compacted items (the
// replacement history of a newer CLI, kept out of the conversation, and an
// older CLI's summary message, which is in it) and Claude Code's compact
// summary; a record without one has none.
func TestAgentCompactions(t *testing.T) {
	codex := strings.Join([]string{
		`{"type":"session_meta","payload":{"id":"s","cli_version":"0.142.0"}}`,
		`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"add a --dry-run flag"}]}}`,
		`{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"go test ./...\"}","call_id":"c1"}}`,
		`{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"ok"}}`,
		`{"type":"compacted","payload":{"message":"","replacement_history":[{"type":"message","role":"user","content":[{"type":"input_text","text":"add a --dry-run flag"}]},{"type":"message","role":"developer","content":[{"type":"input_text","text":"<permissions instructions>"}]}]}}`,
		`{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Continuing."}]}}`,
		`{"type":"compacted","payload":{"message":"Summary: the flag is added, tests pass."}}`,
		`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"now commit"}]}}`,
	}, "\n")
	tr := parse(t, codex)
	got := tr.AgentCompactions()
	if len(got) != 2 {
		t.Fatalf("%d compactions, want 2", len(got))
	}
	if c := got[0]; c.At != 3 || len(c.Summary) != 2 || c.Summary[0].Text() != "add a --dry-run flag" || c.Summary[1].Text() != "<permissions instructions>" {
		t.Errorf("first = at %d, %+v; want the 3 messages before it and the replacement history", c.At, c.Summary)
	}
	if len(tr.Messages) != 6 || tr.Messages[3].Text() != "Continuing." {
		t.Errorf("the replacement history entered the conversation: %d messages", len(tr.Messages))
	}
	if c := got[1]; c.At != 4 || tr.Messages[c.At].Text() != "Summary: the flag is added, tests pass." || len(c.Summary) != 1 || c.Summary[0].Text() != tr.Messages[4].Text() {
		t.Errorf("second = at %d, %+v; want the summary message at 4", c.At, c.Summary)
	}

	claude := strings.Join([]string{
		`{"type":"user","uuid":"u1","sessionId":"s","message":{"role":"user","content":"why?"}}`,
		`{"type":"assistant","uuid":"a1","sessionId":"s","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"Checking."}]}}`,
		`{"type":"system","subtype":"compact_boundary","uuid":"b","sessionId":"s","content":"Conversation compacted"}`,
		`{"type":"user","uuid":"u2","sessionId":"s","isCompactSummary":true,"message":{"role":"user","content":"This session is being continued. Summary: checked."}}`,
		`{"type":"assistant","uuid":"a2","sessionId":"s","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"Done."}]}}`,
	}, "\n")
	tr = parse(t, claude)
	if got := tr.AgentCompactions(); len(got) != 1 || got[0].At != 2 || got[0].Summary[0].Text() != "This session is being continued. Summary: checked." {
		t.Errorf("claude compactions = %+v, want the summary at 2", got)
	}
	tr = parse(t, `{"type":"user","uuid":"u1","sessionId":"s","message":{"role":"user","content":"why?"}}`)
	if got := tr.AgentCompactions(); len(got) != 0 {
		t.Errorf("a record without compaction has %+v", got)
	}
	var zero transcript.Transcript
	if got := zero.AgentCompactions(); len(got) != 0 {
		t.Errorf("zero transcript has %+v", got)
	}
}
