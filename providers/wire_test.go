package providers

import (
	"encoding/json"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
)

func TestImageURL(t *testing.T) {
	for raw, want := range map[string]string{
		`{"type":"image_url","image_url":{"url":"https://x/a.png","detail":"low"}}`:         "https://x/a.png",
		`{"type":"image_url","image_url":"https://x/s.png"}`:                                "https://x/s.png",
		`{"type":"input_image","image_url":"data:image/png;base64,AA=="}`:                   "data:image/png;base64,AA==",
		`{"type":"image","source":{"type":"base64","media_type":"image/webp","data":"BB"}}`: "data:image/webp;base64,BB",
		`{"type":"image","source":{"type":"url","url":"https://x/u.png"}}`:                  "https://x/u.png",
		`{"type":"image","data":"CC","mime_type":"image/jpeg"}`:                             "data:image/jpeg;base64,CC",
		`{"type":"image","data":"DD"}`:                                                      "data:image/png;base64,DD",
		`{"type":"file","file_data":"data:application/pdf;base64,EE"}`:                      "",
		`{"type":"input_image","file_id":"file-1"}`:                                         "",
	} {
		var p history.Part
		if err := json.Unmarshal([]byte(raw), &p); err != nil {
			t.Fatal(err)
		}
		got, ok := ImageURL(p)
		if got != want || ok != (want != "") {
			t.Errorf("%s: %q %v, want %q", raw, got, ok, want)
		}
	}
	if _, ok := ImageURL(history.TextPart("x")); ok {
		t.Error("text part has an image URL")
	}
}

func TestParseTool(t *testing.T) {
	for raw, form := range map[string]Wire{
		`{"type":"function","function":{"name":"a","parameters":{}}}`: WireChat,
		`{"type":"function","name":"a","parameters":{}}`:              WireResponses,
		`{"name":"a","input_schema":{"type":"object"}}`:               WireAnthropic,
		`{"type":"web_search"}`:                                       "",
		`[1]`:                                                         "",
	} {
		tool, got, ok := ParseTool(json.RawMessage(raw))
		if got != form || ok != (form != "") || (ok && tool.Name != "a") {
			t.Errorf("ParseTool(%s) = %+v %q %v", raw, tool, got, ok)
		}
	}
	if obj, typ, ok := DetailObject(json.RawMessage(`"{\"type\":\"reasoning\", \"id\":\"rs\"}"`)); !ok || typ != "reasoning" || string(obj) != `{"type":"reasoning","id":"rs"}` {
		t.Errorf("DetailObject = %s %q %v", obj, typ, ok)
	}
	if _, _, ok := DetailObject(json.RawMessage(`42`)); ok {
		t.Error("number accepted as a detail object")
	}
}

// CompactionOf gives one answer per shape, the same for an entry stored as a
// JSON string holding the object; session, compaction and both vendor
// clients ask it.
func TestCompactionOf(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want Compaction
	}{
		{`{"type":"compaction","content":"Summary so far.","signature":"s"}`, AnthropicCompaction},
		{` {"type": "compaction", "content": {"text":"x"}} `, AnthropicCompaction},
		{`{"type":"compaction","content":null}`, FailedCompaction},
		{`{"type":"compaction","encrypted_content":"gAAA"}`, OpenAICompaction},
		{`{"type":"compaction_summary","encrypted_content":"gAAA"}`, OpenAICompaction},
		{`{"type":"thinking","thinking":"compaction is near","signature":"s"}`, NotCompaction},
		{`{"type":"reasoning.text","text":"no"}`, NotCompaction},
		{`"compaction"`, NotCompaction},
		{`[{"type":"compaction","content":"x"}]`, NotCompaction},
		{`{"type":"compaction",`, NotCompaction},
		{``, NotCompaction},
	} {
		if got := CompactionOf(json.RawMessage(tc.raw)); got != tc.want {
			t.Errorf("CompactionOf(%s) = %d, want %d", tc.raw, got, tc.want)
		}
		if tc.raw == "" || tc.raw[0] != '{' && tc.raw[0] != ' ' {
			continue
		}
		wrapped, err := json.Marshal(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := CompactionOf(wrapped); got != tc.want {
			t.Errorf("CompactionOf(%s), string-wrapped = %d, want %d as unwrapped", tc.raw, got, tc.want)
		}
	}
}
