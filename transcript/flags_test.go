package transcript_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vtcode/vtcode-ls/history"
)

// TestAiderReportsEditsAndCommits: the UI lines that say which files aider
// edited and which commits it made survive the import, in a user-role
// message flagged isMeta (aider wrote them, not the user); other UI output
// is still skipped.
func TestAiderReportsEditsAndCommits(t *testing.T) {
	src := "# aider chat started at 2024-08-14 09:50:32\n\n" +
		"#### add a test  \n\n" +
		"tests/test_a.py\n```python\n<<<<<<< SEARCH\n=======\ndef test_a(): pass\n>>>>>>> REPLACE\n```\n\n" +
		"> Tokens: 100 sent, 10 received.  \n> Applied edit to tests/test_a.py  \n> Commit db22d29 feat: add test_a  \n\n" +
		"> Commit 81ed9c3 style: lint  \n> You can use /undo to undo and discard each aider commit.  \n\n" +
		"#### thanks  \n"
	tr := parse(t, src)
	want := []string{
		"user add a test",
		"assistant tests/test_a.py\n```python\n<<<<<<< SEARCH\n=======\ndef test_a(): pass\n>>>>>>> REPLACE\n```",
		"user Applied edit to tests/test_a.py\nCommit db22d29 feat: add test_a\nCommit 81ed9c3 style: lint",
		"user thanks",
	}
	if diff := cmp.Diff(want, summary(tr.Messages)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if m := tr.Messages[2]; string(m.Extra["isMeta"]) != "true" {
		t.Errorf("the report is not flagged isMeta: %v", m.Extra)
	}
}

// TestClaudeFlagsKept: Claude Code's isMeta and isCompactSummary record
// flags stay on the user message, so readers can tell the CLI's own
// messages from the user's.
func TestClaudeFlagsKept(t *testing.T) {
	src := `{"type":"user","uuid":"u1","sessionId":"s","isMeta":true,"message":{"role":"user","content":"Caveat: local commands follow."}}
{"type":"user","uuid":"u2","sessionId":"s","isCompactSummary":true,"message":{"role":"user","content":[{"type":"text","text":"This session is being continued."}]}}
{"type":"user","uuid":"u3","sessionId":"s","message":{"role":"user","content":"Fix it."}}
`
	tr := parse(t, src)
	var got []string
	for _, m := range tr.Messages {
		got = append(got, string(m.Extra["isMeta"])+"/"+string(m.Extra["isCompactSummary"]))
	}
	if diff := cmp.Diff([]string{"true/", "/true", "/"}, got); diff != "" {
		t.Errorf("flags (-want +got):\n%s", diff)
	}
	if tr.Messages[2].Role != history.User {
		t.Errorf("role = %s", tr.Messages[2].Role)
	}
}
