package transcript_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/transcript"
)

func asUnknown(err error, target **transcript.UnknownFormatError) bool { return errors.As(err, target) }

func parse(t *testing.T, src string) *transcript.Transcript {
	t.Helper()
	tr, err := transcript.Parse(strings.NewReader(src), "test")
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// summary renders messages compactly for comparison.
func summary(msgs []history.Message) []string {
	var out []string
	for _, m := range msgs {
		s := string(m.Role)
		if m.ID != "" {
			s += "#" + m.ID
		}
		if !m.Content.IsAbsent() {
			s += " " + m.Text()
		}
		for _, tc := range m.ToolCalls {
			s += " call(" + tc.ID + " " + tc.Name + " " + tc.Arguments + tc.Input + ")"
		}
		if m.ToolCallID != "" {
			s += " result(" + m.ToolCallID + " " + m.ToolName + ")"
		}
		if m.Reasoning != "" {
			s += " reasoning(" + m.Reasoning + ")"
		}
		if len(m.ReasoningDetails) > 0 {
			s += " details"
		}
		out = append(out, s)
	}
	return out
}

func TestUnknownFormatListsFormats(t *testing.T) {
	for name, src := range map[string]string{
		"text":        "hello, this is not a transcript\n",
		"json object": `{"a": 1,` + "\n" + `"b": 2}`,
		"jsonl":       `{"kind":"x"}` + "\n" + `{"kind":"y"}`,
		"array":       `[1, 2, 3]`,
		"empty":       "  \n",
		"markdown":    "# Notes\n\nsome text\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := transcript.Parse(strings.NewReader(src), "in.txt")
			var uf *transcript.UnknownFormatError
			if !errors.As(err, &uf) {
				t.Fatalf("err = %v, want *UnknownFormatError", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "in.txt: unknown transcript format") {
				t.Errorf("error %q does not name the file", msg)
			}
			for _, f := range transcript.Formats() {
				if !strings.Contains(msg, f) {
					t.Errorf("error does not list format %q: %s", f, msg)
				}
			}
		})
	}
}

func TestProtocolMessagesRoundTrip(t *testing.T) {
	src := `{"id":"u1","role":"user","content":"fix the test","x-client":{"k":1}}
{"role":"assistant","content":null,"toolCalls":[{"id":"c1","name":"read_file","arguments":"{\"path\":\"a.go\"}"}]}
{"role":"tool","content":[{"type":"text","text":"package a"},{"type":"image","data":"…"}],"toolCallId":"c1","toolName":"read_file"}
`
	tr := parse(t, src)
	if tr.Format != transcript.FormatMessages || len(tr.Messages) != 3 || tr.Skipped != 0 {
		t.Fatalf("format %s, %d messages, %d skipped", tr.Format, len(tr.Messages), tr.Skipped)
	}
	var out []string
	for _, m := range tr.Messages {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	want := strings.Split(strings.TrimSpace(src), "\n")
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestPlainRoleLinesAreMessages(t *testing.T) {
	tr := parse(t, `{"role":"user","content":"hi"}`+"\n"+`{"role":"assistant","content":"hello"}`+"\n")
	if tr.Format != transcript.FormatMessages || len(tr.Messages) != 2 {
		t.Fatalf("got %s with %d messages", tr.Format, len(tr.Messages))
	}
}

func TestChatJSONL(t *testing.T) {
	tr := parse(t, `{"role":"developer","content":"be brief"}`+"\n"+`{"role":"user","content":"hi"}`+"\n"+`{"role":"assistant","content":"hello"}`)
	if tr.Format != transcript.FormatChat || len(tr.Messages) != 3 || tr.Messages[0].Role != history.System {
		t.Fatalf("got %s with %v", tr.Format, summary(tr.Messages))
	}
}

func TestTornLastLine(t *testing.T) {
	tr := parse(t, `{"role":"user","content":"hi"}`+"\n"+`{"role":"assistant","content":"hel`)
	if len(tr.Messages) != 1 || tr.SkippedByKind["torn-line"] != 1 {
		t.Fatalf("messages %d, skipped %v", len(tr.Messages), tr.SkippedByKind)
	}
	_, err := transcript.Parse(strings.NewReader(`{"role":"user","content":"hi"}`+"\nnot json\n"+`{"role":"user","content":"x"}`), "bad.jsonl")
	if err == nil || !strings.Contains(err.Error(), "bad.jsonl:2") {
		t.Fatalf("err = %v, want the line number of the broken record", err)
	}
}

func TestChatCompletions(t *testing.T) {
	src := `{"model":"gpt-4.1","messages":[
	 {"role":"developer","content":"be brief"},
	 {"role":"user","content":[{"type":"text","text":"list files"}]},
	 {"role":"assistant","content":null,"tool_calls":[
	   {"id":"call_abc","type":"function","function":{"name":"ls","arguments":"{}"}},
	   {"type":"function","function":{"name":"pwd","arguments":{"x":1}}}]},
	 {"role":"tool","tool_call_id":"call_abc","content":"a.go"},
	 {"role":"tool","content":"/src"},
	 {"role":"assistant","content":"a.go in /src","reasoning_content":"easy"}]}`
	tr := parse(t, src)
	want := []string{
		"system be brief",
		"user list files",
		"assistant  call(call_abc ls {}) call(call_1 pwd {\"x\":1})", // null content is kept
		"tool a.go result(call_abc ls)",
		"tool /src result(call_1 pwd)",
		"assistant a.go in /src reasoning(easy)",
	}
	if tr.Format != transcript.FormatChat {
		t.Errorf("format = %s", tr.Format)
	}
	if diff := cmp.Diff(want, summary(tr.Messages)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// A top-level array is the same format.
	arr := parse(t, `[{"role":"user","content":"hi"},{"role":"assistant","content":"yo","tool_calls":[]}]`)
	if arr.Format != transcript.FormatChat || len(arr.Messages) != 2 {
		t.Errorf("array: %s with %d messages", arr.Format, len(arr.Messages))
	}
}

func TestClaudeCodeMergesSplitResponses(t *testing.T) {
	lines := []string{
		`{"type":"summary","summary":"old","leafUuid":"x"}`,
		`{"type":"user","uuid":"u1","sessionId":"s","message":{"role":"user","content":"why?"}}`,
		`{"type":"assistant","uuid":"a1","sessionId":"s","message":{"id":"msg_1","role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"sig"}]}}`,
		`{"type":"assistant","uuid":"a2","sessionId":"s","message":{"id":"msg_1","role":"assistant","content":[{"type":"text","text":"Checking."}]}}`,
		`{"type":"assistant","uuid":"a3","sessionId":"s","message":{"id":"msg_1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"git status"}}]}}`,
		`{"type":"user","uuid":"u2","sessionId":"s","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"fatal: bad index","is_error":true}]}}`,
		`{"type":"assistant","uuid":"a4","sessionId":"s","message":{"id":"msg_1","role":"assistant","content":[{"type":"tool_use","id":"t2","name":"Read","input":{"file_path":"/x"}}]}}`,
		`{"type":"progress","uuid":"p1","sessionId":"s","data":{"type":"bash_progress"}}`,
		`{"type":"user","uuid":"u3","sessionId":"s","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"line 1"}]},{"type":"text","text":"also check the hooks"}]}}`,
		`{"type":"system","subtype":"compact_boundary","uuid":"b","sessionId":"s","content":"Conversation compacted"}`,
		`{"type":"assistant","uuid":"a5","isSidechain":true,"sessionId":"s","message":{"id":"msg_9","role":"assistant","content":"sub-agent"}}`,
		`{"type":"assistant","uuid":"a6","sessionId":"s","message":{"id":"msg_2","role":"assistant","content":[{"type":"text","text":"Done."}]}}`,
	}
	tr := parse(t, strings.Join(lines, "\n"))
	want := []string{
		"user#u1 why?",
		`assistant#msg_1 Checking. call(t1 Bash {"command":"git status"}) call(t2 Read {"file_path":"/x"}) reasoning(hmm) details`,
		"tool#u2 fatal: bad index result(t1 Bash)",
		"tool#u3 line 1 result(t2 Read)",
		"user also check the hooks",
		"assistant#msg_2 Done.",
	}
	if diff := cmp.Diff(want, summary(tr.Messages)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if string(tr.Messages[2].Extra["isError"]) != "true" {
		t.Error("is_error not kept")
	}
	wantSkipped := map[string]int{"summary": 1, "progress": 1, "system/compact_boundary": 1, "sidechain": 1}
	if diff := cmp.Diff(wantSkipped, tr.SkippedByKind); diff != "" || tr.Skipped != 4 {
		t.Errorf("skipped %d (-want +got):\n%s", tr.Skipped, diff)
	}
}

func TestCodexRollout(t *testing.T) {
	lines := []string{
		`{"type":"session_meta","payload":{"id":"s","cli_version":"0.58.0"}}`,
		`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"fix it"}]}}`,
		`{"type":"turn_context","payload":{"model":"gpt-5"}}`,
		`{"type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"**Plan**"}],"encrypted_content":"gAAA"}}`,
		`{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c1"}}`,
		`{"type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch","call_id":"c2"}}`,
		`{"type":"event_msg","payload":{"type":"token_count","info":null}}`,
		`{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"{\"output\":\"a.go\",\"metadata\":{\"exit_code\":0}}"}}`,
		`{"type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"c2","output":"Success"}}`,
		`{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Fixed."}]}}`,
	}
	tr := parse(t, strings.Join(lines, "\n"))
	want := []string{
		"user fix it",
		`assistant call(c1 shell {"command":["ls"]}) call(c2 apply_patch *** Begin Patch) reasoning(**Plan**) details`,
		`tool {"output":"a.go","metadata":{"exit_code":0}} result(c1 shell)`,
		"tool Success result(c2 apply_patch)",
		"assistant Fixed.",
	}
	if tr.Format != transcript.FormatCodex {
		t.Errorf("format = %s", tr.Format)
	}
	if diff := cmp.Diff(want, summary(tr.Messages)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if tr.Skipped != 3 || tr.SkippedByKind["event_msg/token_count"] != 1 {
		t.Errorf("skipped = %v", tr.SkippedByKind)
	}
}

func TestSWEAgentTrajectoryOnly(t *testing.T) {
	src := `{"trajectory":[
	  {"thought":"look","action":"ls","observation":"a.py","response":"Let me look.\n` + "```\\nls\\n```" + `","state":"{}"},
	  {"thought":"done","action":"submit","observation":"diff","response":"Submitting."}],
	 "history":[], "info":{"exit_status":"submitted"}}`
	tr := parse(t, src)
	want := []string{
		"assistant Let me look.\n```\nls\n``` call(call_1 bash ls)",
		"tool a.py result(call_1 bash)",
		"assistant Submitting. call(call_2 bash submit)",
		"tool diff result(call_2 bash)",
	}
	if tr.Format != transcript.FormatSWEAgent {
		t.Errorf("format = %s", tr.Format)
	}
	if diff := cmp.Diff(want, summary(tr.Messages)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSWEAgentToolCallingHistory(t *testing.T) {
	src := `{"history":[
	  {"role":"system","content":"sys","agent":"main","message_type":"system_prompt"},
	  {"role":"user","content":[{"type":"text","text":"issue"}],"agent":"main"},
	  {"role":"assistant","content":"look","thought":"look","action":"ls","tool_calls":[{"id":"call_x","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]},
	  {"role":"tool","content":[{"type":"text","text":"a.py"}],"tool_call_ids":["call_x"]}],
	 "trajectory":[], "info":{}}`
	tr := parse(t, src)
	want := []string{"system sys", "user issue", `assistant look call(call_x bash {"command":"ls"})`, "tool a.py result(call_x bash)"}
	if diff := cmp.Diff(want, summary(tr.Messages)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// mini-swe-agent's commands are bash blocks in the assistant's text and
// their output the next user message: each pair is a call and its result.
// A message with no block or two of them ran nothing (the agent answered
// with a format reminder), and so does a block the session ends on.
func TestMiniSWEAgentTextActions(t *testing.T) {
	block := func(cmd string) string { return "```bash\\n" + cmd + "\\n```" }
	tr := parse(t, `{"info":{"mini_version":"1.15.0","exit_status":"Submitted","submission":"diff --git a/a.py b/a.py\n+fix\n"},"trajectory_format":"mini-swe-agent-1","messages":[
	  {"role":"system","content":"s"},{"role":"user","content":"task"},
	  {"role":"assistant","content":"THOUGHT: look\n`+block("ls -F")+`"},
	  {"role":"user","content":"<returncode>0</returncode>\n<output>\na.py\n</output>"},
	  {"role":"assistant","content":"THOUGHT: two\n`+block("ls")+block("pwd")+`"},
	  {"role":"user","content":"Please always provide EXACTLY ONE action in triple backticks."},
	  {"role":"assistant","content":"THOUGHT: test\n`+block("pytest -q")+`"},
	  {"role":"user","content":"<returncode>1</returncode>\n<output>\n1 failed\n</output>"},
	  {"role":"assistant","content":"THOUGHT: diff\n`+block("git diff")+`"},
	  {"role":"user","content":"diff --git a/a.py b/a.py"},
	  {"role":"assistant","content":"THOUGHT: done\n`+block("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff --cached")+`"},
	  {"role":"user","content":"diff --git a/a.py b/a.py\n+fix"}]}`)
	var got []string
	for _, m := range tr.Messages {
		line := string(m.Role)
		for _, c := range m.ToolCalls {
			line += " call(" + c.Name + " " + c.Input + ")"
		}
		if m.Role == history.Tool {
			line += " result(" + m.ToolName + "): " + m.Text()
		}
		got = append(got, line)
	}
	want := []string{"system", "user", "assistant call(bash ls -F)", "tool result(bash): <returncode>0</returncode>\n<output>\na.py\n</output>",
		"assistant", "user", "assistant call(bash pytest -q)", "tool result(bash): <returncode>1</returncode>\n<output>\n1 failed\n</output>",
		// Output without a return code is the command's only when it is
		// the submission the run ended with.
		"assistant", "user",
		"assistant call(bash echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff --cached)", "tool result(bash): diff --git a/a.py b/a.py\n+fix"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestMiniSWEAgent(t *testing.T) {
	tr := parse(t, `{"info":{"mini_version":"1.15.0"},"messages":[{"role":"system","content":"s"},{"role":"user","content":"task"},{"role":"assistant","content":"THOUGHT: x\n`+"```bash\\nls\\n```"+`"}],"trajectory_format":"mini-swe-agent-1"}`)
	if tr.Format != transcript.FormatMiniSWEAgent || len(tr.Messages) != 3 {
		t.Fatalf("%s with %d messages", tr.Format, len(tr.Messages))
	}
}

func TestOpenHandsEvents(t *testing.T) {
	// Events recorded without function calling: calls are synthesized and
	// paired through "cause".
	src := `[
	 {"id":0,"source":"agent","action":"system","args":{"content":"You are OpenHands agent."}},
	 {"id":1,"source":"user","action":"message","args":{"content":"fix the build"}},
	 {"id":2,"source":"user","action":"recall","args":{"query":"fix the build"}},
	 {"id":3,"source":"environment","observation":"recall","content":"Added workspace context","cause":2},
	 {"id":4,"source":"agent","action":"run","args":{"command":"make","thought":"Build first."}},
	 {"id":5,"source":"agent","observation":"run","content":"error: x","cause":4,"extras":{"metadata":{"exit_code":2,"suffix":"\n[The command completed with exit code 2.]"}}},
	 {"id":6,"source":"agent","observation":"agent_state_changed","content":"","extras":{"agent_state":"running"}},
	 {"id":7,"source":"agent","observation":"error","content":"Parameter 'command' is expected"},
	 {"id":8,"source":"agent","action":"message","args":{"content":"Fixed it."}}
	]`
	tr := parse(t, src)
	want := []string{
		"system You are OpenHands agent.",
		"user fix the build",
		`assistant Build first. call(call_1 run {"command":"make"})`,
		"tool error: x\n[The command completed with exit code 2.] result(call_1 run)",
		"user Parameter 'command' is expected",
		"assistant Fixed it.",
	}
	if tr.Format != transcript.FormatOpenHands {
		t.Errorf("format = %s", tr.Format)
	}
	if diff := cmp.Diff(want, summary(tr.Messages)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if tr.Skipped != 3 {
		t.Errorf("skipped = %v, want recall ×2 and agent_state_changed", tr.SkippedByKind)
	}
}

func TestOpenHandsParallelCalls(t *testing.T) {
	resp := `{"id":"gen-1","choices":[{"message":{"role":"assistant","content":"Two reads.","tool_calls":[` +
		`{"id":"toolu_1","type":"function","function":{"name":"str_replace_editor","arguments":"{\"command\":\"view\",\"path\":\"/a\"}"}},` +
		`{"id":"toolu_2","type":"function","function":{"name":"str_replace_editor","arguments":"{\"command\":\"view\",\"path\":\"/b\"}"}}]}}]}`
	meta := func(id string) string {
		return `{"function_name":"str_replace_editor","tool_call_id":"` + id + `","model_response":` + resp + `,"total_calls_in_response":2}`
	}
	lines := []string{
		`{"id":1,"source":"user","action":"message","args":{"content":"read both"}}`,
		`{"id":2,"source":"agent","action":"read","args":{"path":"/a"},"tool_call_metadata":` + meta("toolu_1") + `}`,
		`{"id":3,"source":"agent","action":"read","args":{"path":"/b"},"tool_call_metadata":` + meta("toolu_2") + `}`,
		`{"id":4,"source":"agent","observation":"read","content":"A","cause":2,"tool_call_metadata":` + meta("toolu_1") + `}`,
		`{"id":5,"source":"agent","observation":"read","content":"B","cause":3,"tool_call_metadata":` + meta("toolu_2") + `}`,
	}
	tr := parse(t, strings.Join(lines, "\n"))
	want := []string{
		"user read both",
		`assistant Two reads. call(toolu_1 str_replace_editor {"command":"view","path":"/a"}) call(toolu_2 str_replace_editor {"command":"view","path":"/b"})`,
		"tool A result(toolu_1 str_replace_editor)",
		"tool B result(toolu_2 str_replace_editor)",
	}
	if diff := cmp.Diff(want, summary(tr.Messages)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestAider(t *testing.T) {
	src := "# aider chat started at 2024-08-14 09:50:32\n\n" +
		"> Aider v0.50.2-dev  \n> Added a.py to the chat.  \n\n" +
		"#### /ask what does a.py do?  \n\n" +
		"####  what does a.py do?  \n\n" +
		"It prints hello.\n\n```python\n#### not a prompt\nprint('hello')\n```\n\n" +
		"> Tokens: 100 sent, 10 received.  \n\n" +
		"#### /run pytest  \n" +
		"> ===== test session starts =====\nFAILED test_a.py::test_x\n> Add the output to the chat?\n(y/n/instructions) y  \n" +
		"> ===== test session starts =====  \n> FAILED test_a.py::test_x  \n\n" +
		"Fix the test.\n\n> Tokens: 1 sent\n"
	tr := parse(t, src)
	want := []string{
		"user what does a.py do?",
		"assistant It prints hello.\n\n```python\n#### not a prompt\nprint('hello')\n```",
		"user I ran this command:\n\npytest\n\nAnd got this output:\n\n===== test session starts =====\nFAILED test_a.py::test_x",
		"assistant Fix the test.",
	}
	if tr.Format != transcript.FormatAider {
		t.Errorf("format = %s", tr.Format)
	}
	if diff := cmp.Diff(want, summary(tr.Messages)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if tr.SkippedByKind["command"] != 2 {
		t.Errorf("skipped = %v", tr.SkippedByKind)
	}
}

func TestNoConversationIsAnError(t *testing.T) {
	_, err := transcript.Parse(strings.NewReader(`{"type":"summary","summary":"x","leafUuid":"y"}`+"\n"), "s.jsonl")
	if err == nil || !strings.Contains(err.Error(), "no conversation messages") {
		t.Fatalf("err = %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"role":"user","content":"hi"}`))
	f.Add([]byte(`{"type":"user","uuid":"u","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"x"}]}}`))
	f.Add([]byte(`{"type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":{"content":"x"}}}`))
	f.Add([]byte(`[{"id":1,"source":"agent","observation":"run","cause":1}]`))
	f.Add([]byte("# aider chat started at x\n#### /run\n> Add the output to the chat?\n"))
	f.Add([]byte(`[{"role":"model","parts":[{"functionCall":{"name":"ls","args":{}}}]},{"role":"user","parts":[{"functionResponse":{"name":"ls","response":{"output":"a"}}}]}]`))
	f.Add([]byte(`{"sessionId":"s","projectHash":"h"}` + "\n" + `{"id":"g","type":"gemini","content":"","toolCalls":[{"id":"t","name":"x","args":{},"result":[{"functionResponse":{"response":{"error":"e"}}}]}]}` + "\n" + `{"$rewindTo":"g"}`))
	f.Add([]byte(`{"type":"session","id":"s","cwd":"/"}` + "\n" + `{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"bash","arguments":{}}]}}` + "\n" + `{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"toolResult","toolCallId":"c","content":[{"type":"text","text":"x"}]}}`))
	f.Add([]byte(`[{"kind":"ActionEvent","id":"a","source":"agent","tool_call_id":"c","tool_name":"terminal","llm_response_id":"r"},{"kind":"ObservationEvent","id":"o","source":"environment","tool_call_id":"c","observation":{"content":[{"type":"text","text":"x"}],"metadata":{"exit_code":2}}}]`))
	f.Add([]byte(`{"info":{"id":"ses_1","directory":"/w"},"messages":[{"info":{"id":"m","role":"assistant","error":{"name":"E"}},"parts":[{"type":"step-start"},{"type":"tool","callID":"c","tool":"bash","state":{"status":"completed","input":{},"output":"x","metadata":{"exit":2}}},{"type":"tool","callID":"c","tool":"bash","state":{"status":"running"}}]}]}`))
	f.Add([]byte(`{"type":"assistant.message","id":"e1","data":{"messageId":"m","toolRequests":[{"toolCallId":"c","name":"bash","arguments":"{}"}]}}` + "\n" + `{"type":"tool.execution_complete","id":"e2","data":{"toolCallId":"c","success":false,"error":{"message":"x"}}}` + "\n" + `{"type":"session.compaction_complete","id":"e3","data":{"success":true,"summaryContent":"s"}}`))
	f.Add([]byte(`{"type":"queue-operation","operation":"enqueue","content":"stop"}` + "\n" + `{"type":"queue-operation","operation":"remove"}` + "\n" + `{"type":"user","uuid":"u","message":{"role":"user","content":"hi"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := transcript.Parse(strings.NewReader(string(data)), "fuzz")
		if err != nil {
			return
		}
		if len(tr.Messages) == 0 || tr.Format == "" {
			t.Fatalf("success without messages or format: %+v", tr)
		}
		for _, m := range tr.Messages {
			if _, err := json.Marshal(m); err != nil {
				t.Fatal(err)
			}
		}
	})
}
