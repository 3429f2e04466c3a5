package transcript

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestGeminiThroughChatReaderIsRefused: the Gemini chat history shape, read
// the way it was before the Gemini importer existed (as OpenAI chat
// messages), keeps the user's text and drops the model role and every part;
// the guard turns that into an error that says so instead of a transcript.
func TestGeminiThroughChatReaderIsRefused(t *testing.T) {
	data, err := os.ReadFile("testdata/gemini-checkpoint.json")
	if err != nil {
		t.Fatal(err)
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(data, &elems); err != nil {
		t.Fatal(err)
	}
	objs, ok := objects(elems)
	if !ok {
		t.Fatal("fixture is not a list of objects")
	}
	tr, err := convertChat(objs, FormatChat, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = checkCoverage(tr, len(data), "gemini-checkpoint.json")
	var me *MisreadError
	if !errors.As(err, &me) {
		t.Fatalf("err = %v, want a *MisreadError", err)
	}
	if me.Dropped["roles"]["model"] != 4 || me.Dropped["fields"]["parts"] == 0 {
		t.Errorf("dropped = %v, want 4 model messages and their parts", me.Dropped)
	}
	for _, want := range []string{"gemini-checkpoint.json: openai-chat: ", " of 8,488 bytes converted", "dropped fields: parts", "dropped roles: model"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	// The real route reads it as Gemini, whole.
	g, err := Parse(strings.NewReader(string(data)), "gemini-checkpoint.json")
	if err != nil || g.Format != FormatGemini || convertedBytes(g.Messages)*2 < len(data) {
		t.Fatalf("gemini route: %v, %+v", err, g)
	}
}

// TestCoverageGuardSparesSparseFormats: a file that converts little but
// drops nothing it does not know (records that are not conversation) is
// not an error, nor is a small file.
func TestCoverageGuardSparesSparseFormats(t *testing.T) {
	tr := &Transcript{Format: FormatClaudeCode}
	tr.skip("progress")
	if err := checkCoverage(tr, 1<<20, "x"); err != nil {
		t.Errorf("non-conversation records: %v", err)
	}
	tr.drop("roles", "bot")
	if err := checkCoverage(tr, guardMinBytes-1, "x"); err != nil {
		t.Errorf("small file: %v", err)
	}
	if err := checkCoverage(tr, guardMinBytes, "x"); err == nil {
		t.Error("an empty conversion of a 4 kB file with dropped roles is accepted")
	}
}
