package gemini_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers/gemini"
	"github.com/vtcode/vtcode-ls/providers/proxywire"
)

// A request as Gemini CLI 0.61 sends it (shape recorded offline): the
// session context, a model turn with a thought-signed call (the id is the
// one the CLI made up), the result, a second turn with two parallel calls,
// their results, and the pretty-printed bytes an agent may send.
const cliRequest = `{"contents":[
 {"role":"user","parts":[{"text":"<session_context>\nThis is the Gemini CLI.\n</session_context>"},{"text":"Read a.go and b.go."}]},
 {"role":"model","parts":[{"text":"Reading a.go."},{"functionCall":{"id":"read_file_1796157216686_0","args":{"file_path":"/w/a.go"},"name":"read_file"},"thoughtSignature":"c2lnLTEtYWJj"}]},
 {"role":"user","parts":[{"functionResponse":{"id":"read_file_1796157216686_0","name":"read_file","response":{"output":"package a\n// a long file\n"}}}]},
 {"role":"model","parts":[{"functionCall":{"args":{"file_path":"/w/b.go"},"name":"read_file"},"thoughtSignature":"c2lnLTItZGVm"},{"functionCall":{"args":{"command":"ls"},"name":"run_shell_command"}}]},
 {"role":"user","parts":[{"functionResponse":{"name":"read_file","response":{"output":"package b\n"}}},{"functionResponse":{"name":"run_shell_command","response":{"output":"a.go\nb.go\n"}}}]}
],
 "systemInstruction":{"role":"user","parts":[{"text":"You are Gemini CLI."}]},
 "tools":[{"functionDeclarations":[{"name":"read_file"},{"name":"run_shell_command"}]},{"googleSearch":{}}],
 "generationConfig":{"temperature":1,"thinkingConfig":{"includeThoughts":true}}}`

func decode(t *testing.T, body string) *proxywire.WireRequest {
	t.Helper()
	wr, err := gemini.DecodeRequest([]byte(body), "gemini-3.1-pro-preview", true, proxywire.NewDecodeCache(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	return wr
}

func TestDecodeCLIRequest(t *testing.T) {
	wr := decode(t, cliRequest)
	if wr.Model != "gemini-3.1-pro-preview" || !wr.Stream || wr.System != "You are Gemini CLI." || len(wr.Tools) != 3 {
		t.Errorf("model %q stream %v system %q tools %d", wr.Model, wr.Stream, wr.System, len(wr.Tools))
	}
	roles := ""
	for _, m := range wr.Messages {
		roles += string(m.Role)[:1]
	}
	if roles != "uatatt" {
		t.Fatalf("roles %q, want user, assistant, tool, assistant, tool, tool", roles)
	}
	m := wr.Messages
	if m[1].Text() != "Reading a.go." || len(m[1].ToolCalls) != 1 || m[1].ToolCalls[0].ThoughtSignature != "c2lnLTEtYWJj" ||
		m[1].ToolCalls[0].Arguments != `{"file_path":"/w/a.go"}` {
		t.Errorf("first model turn: %+v", m[1])
	}
	if m[2].ToolCallID != m[1].ToolCalls[0].ID || m[2].ToolName != "read_file" || m[2].Text() != "package a\n// a long file\n" {
		t.Errorf("first result %+v does not answer call %s", m[2], m[1].ToolCalls[0].ID)
	}
	if len(m[3].ToolCalls) != 2 || m[4].ToolCallID != m[3].ToolCalls[0].ID || m[5].ToolCallID != m[3].ToolCalls[1].ID ||
		m[3].ToolCalls[0].ID == m[3].ToolCalls[1].ID {
		t.Errorf("parallel calls and results not paired: %+v / %s %s", m[3].ToolCalls, m[4].ToolCallID, m[5].ToolCallID)
	}
	if err := history.CheckPairing(wr.Messages); err != nil {
		t.Errorf("the decoded conversation is not well paired: %v", err)
	}
}

func TestEncodeKeepsBytes(t *testing.T) {
	wr := decode(t, cliRequest)
	out, changed, err := wr.Encode(wr.Messages)
	if err != nil || changed || !bytes.Equal(out, []byte(cliRequest)) {
		t.Fatalf("unchanged projection: changed %v err %v", changed, err)
	}
	// Clear the first result: everything before its content is the same,
	// every signature is still there, the rest of the body too.
	proj := append([]history.Message(nil), wr.Messages...)
	proj[2] = proj[2].WithContent(history.Text("[tool result cleared]"))
	out, changed, err = wr.Encode(proj)
	if err != nil || !changed || !json.Valid(out) {
		t.Fatalf("cleared projection: changed %v err %v valid %v", changed, err, json.Valid(out))
	}
	at := strings.Index(cliRequest, `{"role":"user","parts":[{"functionResponse":{"id":"read_file_1796`)
	if !bytes.HasPrefix(out, []byte(cliRequest[:at])) {
		t.Error("bytes before the changed content differ")
	}
	if !bytes.Contains(out, []byte(`{"functionResponse":{"id":"read_file_1796157216686_0","name":"read_file","response":{"output":"[tool result cleared]"}}}`)) {
		t.Errorf("the cleared result lost its id or name: %s", out)
	}
	// The later contents are copied as they came (the separators between
	// contents are the encoder's).
	lines := strings.Split(cliRequest, "\n")
	for _, later := range lines[4:6] {
		if !bytes.Contains(out, []byte(strings.TrimSuffix(strings.TrimPrefix(later, " "), ","))) {
			t.Errorf("a later content changed: %s", later)
		}
	}
	if rest := cliRequest[strings.Index(cliRequest, "\n],")+1:]; !bytes.HasSuffix(out, []byte(rest)) {
		t.Error("the members after contents changed")
	}
	if bytes.Count(out, []byte("thoughtSignature")) != 2 || !bytes.Contains(out, []byte(`"thoughtSignature":"c2lnLTEtYWJj"`)) {
		t.Error("a thoughtSignature was lost")
	}
	again := decode(t, string(out))
	if again.Messages[2].Text() != "[tool result cleared]" || again.Messages[2].ToolCallID != wr.Messages[2].ToolCallID {
		t.Errorf("re-decoded: %+v", again.Messages[2])
	}
}

func TestEncodeSummary(t *testing.T) {
	wr := decode(t, cliRequest)
	// A summary replaces the first two turns; the last turn stays.
	proj := append([]history.Message{wr.Messages[0], history.NewText(history.System, "Previous conversation summary: read a.go.")}, wr.Messages[3:]...)
	out, _, err := wr.Encode(proj)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Contents []struct {
			Role  string            `json:"role"`
			Parts []json.RawMessage `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Contents) != 4 || v.Contents[1].Role != "user" || !bytes.Contains(v.Contents[1].Parts[0], []byte("Previous conversation summary")) ||
		v.Contents[2].Role != "model" || !bytes.Contains(out, []byte(`"thoughtSignature":"c2lnLTItZGVm"`)) {
		t.Errorf("summary projection: %s", out)
	}
}

// sse is an answer to the first model turn as the API streams it: a
// thought, the text in pieces, the call with its signature, the usage.
const sse = "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"Planning.\",\"thought\":true}]},\"index\":0}]}\r\n\r\n" +
	"data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"Reading \"}]},\"index\":0}]}\r\n\r\n" +
	"data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"a.go.\"}]},\"index\":0}]}\r\n\r\n" +
	"data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"name\":\"read_file\",\"args\":{\"file_path\":\"/w/a.go\"}},\"thoughtSignature\":\"c2lnLTEtYWJj\"}]},\"finishReason\":\"STOP\",\"index\":0}]," +
	"\"usageMetadata\":{\"promptTokenCount\":1200,\"candidatesTokenCount\":30,\"cachedContentTokenCount\":1000,\"thoughtsTokenCount\":12,\"totalTokenCount\":1242}}\r\n\r\n"

// TestRecordedEqualsReplayed: the message recorded from the stream is the
// one the agent sends back in its next request (with the id it made up and
// without the thought), which is how the session sees an extension.
func TestRecordedEqualsReplayed(t *testing.T) {
	rec := gemini.Recorder()
	for _, piece := range []string{sse[:50], sse[50:200], sse[200:]} {
		rec.Write([]byte(piece))
	}
	res, err := rec.Close()
	if err != nil {
		t.Fatal(err)
	}
	replayed := decode(t, cliRequest).Messages[1]
	if history.MessageKey(&res.Message) != history.MessageKey(&replayed) || res.Message.Text() != "Reading a.go." ||
		res.Message.ToolCalls[0].ThoughtSignature != "c2lnLTEtYWJj" || res.Message.Reasoning != "Planning." {
		t.Errorf("recorded %+v, replayed %+v", res.Message, replayed)
	}
	if res.Usage == nil || res.Usage.InputTokens != 1200 || res.Usage.CacheReadTokens != 1000 || res.Usage.OutputTokens != 42 || res.StopReason != "STOP" {
		t.Errorf("usage %+v stop %q", res.Usage, res.StopReason)
	}
	// The same answer as one JSON body, and as the JSON array of chunks.
	var chunks []json.RawMessage
	for _, line := range strings.Split(sse, "\r\n\r\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			chunks = append(chunks, json.RawMessage(d))
		}
	}
	arr, _ := json.Marshal(chunks)
	for _, body := range [][]byte{arr, chunks[3]} {
		r, err := gemini.Record(body)
		if err != nil || len(r.Message.ToolCalls) != 1 || r.Message.ToolCalls[0].ID != res.Message.ToolCalls[0].ID {
			t.Errorf("Record(%.80s): %+v %v", body, r.Message, err)
		}
	}
}

func TestIncompleteOrFailedStream(t *testing.T) {
	rec := gemini.Recorder()
	rec.Write([]byte(sse[:strings.Index(sse, "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"functionCall\"")]))
	if _, err := rec.Close(); !errors.Is(err, proxywire.ErrIncomplete) {
		t.Errorf("a stream cut before its finishReason: %v, want ErrIncomplete", err)
	}
	rec = gemini.Recorder()
	rec.Write([]byte("data: {\"error\":{\"code\":503,\"message\":\"overloaded\"}}\n\n"))
	if _, err := rec.Close(); err == nil {
		t.Error("an error event was recorded as an answer")
	}
}

func TestMalformedBodiesAreErrors(t *testing.T) {
	for _, body := range []string{``, `[]`, `{"contents":[{"role":"user","parts":[{"text":"x"}]}`, `{"contents":{}}`,
		`{"contents":[{"role":"user","parts":["x"]}]}`, `{"contents":[{"role":"tool","parts":[]}]}`, `{"systemInstruction":[1],"contents":[]}`} {
		if _, err := gemini.DecodeRequest([]byte(body), "m", false, nil); err == nil {
			t.Errorf("%q decoded without an error", body)
		}
	}
}

// TestCountTokensNested: a countTokens body whose contents are those of a
// generateContentRequest is decoded, and encoded with the outer bytes kept.
func TestCountTokensNested(t *testing.T) {
	body := `{"generateContentRequest": {"model":"models/gemini-x","contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"functionCall":{"name":"f","args":{}}}]},{"role":"user","parts":[{"functionResponse":{"name":"f","response":{"output":"big"}}}]}]}}`
	wr, err := gemini.DecodeRequest([]byte(body), "", false, nil)
	if err != nil || wr.Model != "gemini-x" || len(wr.Messages) != 3 {
		t.Fatalf("%v %+v", err, wr)
	}
	proj := append([]history.Message(nil), wr.Messages...)
	proj[2] = proj[2].WithContent(history.Text("cleared"))
	out, changed, err := wr.Encode(proj)
	want := strings.Replace(body, `{"output":"big"}`, `{"output":"cleared"}`, 1)
	if err != nil || !changed || string(out) != want {
		t.Errorf("nested encode:\n got %s\nwant %s (%v)", out, want, err)
	}
}

// TestMediaPartBesideAResult: Gemini CLI sends an image read by a tool as
// an inlineData part after the function response, in the same content;
// clearing the result keeps the image part's bytes and the content whole.
func TestMediaPartBesideAResult(t *testing.T) {
	body := `{"contents":[{"role":"user","parts":[{"text":"look"}]},` +
		`{"role":"model","parts":[{"functionCall":{"name":"read_file","args":{"file_path":"a.png"}},"thoughtSignature":"c2ln"}]},` +
		`{"role":"user","parts":[{"functionResponse":{"name":"read_file","response":{"output":"Binary content provided (1 item)."}}},{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}}]}]}`
	wr := decode(t, body)
	if len(wr.Messages) != 4 || wr.Messages[2].Role != history.Tool || wr.Messages[3].Role != history.User ||
		!wr.Messages[3].Content.PartList()[0].IsMedia() {
		t.Fatalf("messages %+v", wr.Messages)
	}
	proj := append([]history.Message(nil), wr.Messages...)
	proj[2] = proj[2].WithContent(history.Text("[cleared]"))
	out, _, err := wr.Encode(proj)
	want := strings.Replace(body, "Binary content provided (1 item).", "[cleared]", 1)
	if err != nil || string(out) != want {
		t.Errorf("got  %s\nwant %s (%v)", out, want, err)
	}
}
