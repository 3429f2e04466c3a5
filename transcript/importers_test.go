package transcript_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/transcript"
)

func load(t *testing.T, name string) *transcript.Transcript {
	t.Helper()
	tr, err := transcript.Load("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func parseBytes(t *testing.T, data []byte) *transcript.Transcript {
	t.Helper()
	tr, err := transcript.Parse(strings.NewReader(string(data)), "test")
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// checkPaired asserts every call is answered right after its message.
func checkPaired(t *testing.T, msgs []history.Message) {
	t.Helper()
	if err := history.CheckPairing(msgs); err != nil {
		t.Error(err)
	}
}

func TestGeminiChatHistory(t *testing.T) {
	tr := load(t, "gemini-checkpoint.json")
	if tr.Format != transcript.FormatGemini {
		t.Fatalf("format = %s", tr.Format)
	}
	got := summary(tr.Messages)
	want := []string{
		"user The config loader ignores PORT; make TestLoadConfig pass without touching the tests.",
		`assistant I'll read the loader. call(read-1 read_file {"absolute_path":"/repo/config/loader.go"}) reasoning(Looking at the loader first.)`,
		"tool " + tr.Messages[2].Text() + " result(read-1 read_file)",
		`assistant call(call_1 replace {"file_path":"/repo/config/loader.go","old_string":"port := 0","new_string":"port := envInt(\"PORT\", 8080)"})`,
		"tool Successfully modified file: /repo/config/loader.go (1 replacements). result(call_1 replace)",
		`assistant call(shell-1 run_shell_command {"command":"go test ./config/...","description":"Run the config tests"})`,
		"tool " + tr.Messages[6].Text() + " result(shell-1 run_shell_command)",
		"assistant The test still fails: envInt is never called for an empty PORT. Next I will default it.",
		"user Go ahead, but do not change loader_test.go.",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(tr.Messages[2].Text(), "func parseField0(") || !strings.Contains(tr.Messages[6].Text(), "loader_test.go:31: port = 0, want 8080") || !strings.Contains(tr.Messages[6].Text(), "Exit Code: 1") {
		t.Error("tool outputs not carried whole")
	}
	if tr.Messages[1].ToolCalls[0].ThoughtSignature != "c2lnLTE=" {
		t.Error("thought signature of the call lost")
	}
	checkPaired(t, tr.Messages)

	// The same history wrapped as the CLI writes it now: {history: [...]}.
	data, err := os.ReadFile("testdata/gemini-checkpoint.json")
	if err != nil {
		t.Fatal(err)
	}
	wrapped := parseBytes(t, []byte(`{"history":`+string(data)+`,"authType":"oauth-personal"}`))
	if wrapped.Format != transcript.FormatGemini || cmp.Diff(got, summary(wrapped.Messages)) != "" {
		t.Errorf("wrapped checkpoint read as %s, %d messages", wrapped.Format, len(wrapped.Messages))
	}
}

func TestGeminiSessionRecording(t *testing.T) {
	want := []string{
		"user#m1 List the Go packages and run their tests.",
		`assistant#m2 call(run_shell_command-1 run_shell_command {"command":"go list ./..."}) reasoning(Plan: List packages, then test them.)`,
		"tool example.com/app\nexample.com/app/config result(run_shell_command-1 run_shell_command)",
		`assistant#m4 call(run_shell_command-2 run_shell_command {"command":"go test ./..."}) call(write_file-3 write_file {"file_path":"/repo/NOTES.md","content":"todo"})`,
		"tool Output: --- FAIL: TestLoadConfig (0.00s)\n    loader_test.go:31: port = 0, want 8080\nFAIL\nFAIL\texample.com/app/config\t0.004s\nExit Code: 1 result(run_shell_command-2 run_shell_command)",
		"tool Tool call cancelled by user.\n[status: cancelled] result(write_file-3 write_file)",
		"assistant#m5 config fails: port defaults to 0.",
	}
	for _, f := range []string{"gemini-session.json", "gemini-session.jsonl"} {
		t.Run(f, func(t *testing.T) {
			tr := load(t, f)
			if tr.Format != transcript.FormatGemini {
				t.Fatalf("format = %s", tr.Format)
			}
			if diff := cmp.Diff(want, summary(tr.Messages)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if tr.SkippedByKind["info"] != 1 {
				t.Errorf("skipped = %v, want the info record", tr.SkippedByKind)
			}
			checkPaired(t, tr.Messages)
		})
	}
	// The JSONL form: the rewound answer is gone, the rewritten record
	// replaced, the updates skipped.
	tr := load(t, "gemini-session.jsonl")
	for _, m := range tr.Messages {
		if strings.Contains(m.Text(), "rewound") || m.Text() == "Listing." {
			t.Errorf("rewound or superseded record kept: %q", m.Text())
		}
	}
	if tr.SkippedByKind["rewind"] != 1 || tr.SkippedByKind["metadata-update"] != 1 || tr.SkippedByKind["session-metadata"] != 1 {
		t.Errorf("skipped = %v", tr.SkippedByKind)
	}
}

func TestPiSession(t *testing.T) {
	tr := load(t, "pi-session.jsonl")
	if tr.Format != transcript.FormatPi {
		t.Fatalf("format = %s", tr.Format)
	}
	want := []string{
		"user Why does `make check` fail? Never push to main.",
		`assistant Running the check. call(toolu_01 bash {"command":"make check"}) reasoning(Run the check first.)`,
		"tool vet: internal/db/db.go:14:2: unreachable code\nmake: *** [check] Error 1\n\nCommand exited with code 2 result(toolu_01 bash)",
		"user Summary of an abandoned branch of this conversation:\nTried deleting the code; the user rejected it.",
		`assistant call(toolu_02 read {"path":"internal/db/db.go"}) call(toolu_03 edit {"path":"internal/db/db.go","oldText":"return nil\n\tlog.Print(x)","newText":"log.Print(x)\n\treturn nil"})`,
		"tool package db\n\nfunc Open() error {\n\treturn nil\n\tlog.Print(x)\n} result(toolu_02 read)",
		"tool Successfully replaced text in internal/db/db.go. result(toolu_03 edit)",
		"user The user ran `make check` (exit code 0):\nok",
		"user Remember: never push to main.",
		"assistant `make check` passes now (exit 0).",
	}
	if diff := cmp.Diff(want, summary(tr.Messages)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// The abandoned branch's reply is not on the path the session continued on.
	for kind, n := range map[string]int{"other-branch": 1, "compaction": 1, "session": 1, "model_change": 1, "label": 1} {
		if tr.SkippedByKind[kind] != n {
			t.Errorf("skipped %s = %d, want %d (%v)", kind, tr.SkippedByKind[kind], n, tr.SkippedByKind)
		}
	}
	checkPaired(t, tr.Messages)

	// A session written before entries had ids is read in file order.
	linear := `{"type":"session","id":"s0","timestamp":"2025-11-01T00:00:00Z","cwd":"/w"}
{"type":"message","timestamp":"2025-11-01T00:00:01Z","message":{"role":"user","content":"hi","timestamp":1}}
{"type":"message","timestamp":"2025-11-01T00:00:02Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"timestamp":2}}`
	if got := summary(parse(t, linear).Messages); cmp.Diff([]string{"user hi", "assistant hello"}, got) != "" {
		t.Errorf("linear session = %q", got)
	}
}

func TestOpenHandsV1Events(t *testing.T) {
	want := []string{
		"system You are OpenHands agent, a helpful AI assistant.",
		"user Fix the failing test in tests/test_parse.py.",
		`assistant Run the tests and look at the parser. call(call_a terminal {"command": "python -m pytest tests/test_parse.py -q"}) call(call_b file_editor {"command": "view", "path": "/workspace/src/parse.py"}) reasoning(tests first)`,
		"tool F\nE   AssertionError: assert parse('1,2') == [1, 2]\n1 failed in 0.03s\n[exit code 1] result(call_a terminal)",
		"tool Here's the result of running `cat -n` on /workspace/src/parse.py:\n     1\tdef parse(s):\n     2\t    return s.split(',') result(call_b file_editor)",
		`assistant Convert the fields to int. call(call_c file_editor {"command": "str_replace", "path": "/workspace/src/parse.py", "old_str": "return s.split(',')", "new_str": "return [int(x) for x in s.split(',')]"})`,
		"tool Action rejected: Keep the change minimal; strip spaces too. result(call_c file_editor)",
		"assistant call(call_d terminl {})",
		"tool Tool 'terminl' not found. Available: ['terminal', 'file_editor', 'finish'] result(call_d terminl)",
		"assistant The test fails with exit code 1; I need approval for a different edit.",
	}
	data, err := os.ReadFile("testdata/openhands-v1-events.json")
	if err != nil {
		t.Fatal(err)
	}
	var events []json.RawMessage
	if err := json.Unmarshal(data, &events); err != nil {
		t.Fatal(err)
	}
	var jsonl strings.Builder
	for _, e := range events {
		var c bytes.Buffer
		if err := json.Compact(&c, e); err != nil {
			t.Fatal(err)
		}
		jsonl.WriteString(c.String() + "\n")
	}
	eval := `{"instance_id":"demo__parse-1","history":` + string(data) + `,"test_result":{"git_patch":""}}`
	for name, src := range map[string]string{
		"array":             string(data),
		"jsonl":             jsonl.String(),
		"evaluation output": eval,
		"evaluation jsonl":  strings.ReplaceAll(eval, "\n", "") + "\n" + strings.ReplaceAll(eval, "\n", ""),
	} {
		t.Run(name, func(t *testing.T) {
			tr := parse(t, src)
			if tr.Format != transcript.FormatOpenHandsV1 {
				t.Fatalf("format = %s", tr.Format)
			}
			got := summary(tr.Messages)
			if name == "evaluation jsonl" {
				if tr.Conversations != 2 || len(got) != 2*len(want) {
					t.Fatalf("%d conversations, %d messages", tr.Conversations, len(got))
				}
				got = got[:len(want)]
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			n := 1
			if name == "evaluation jsonl" {
				n = 2
			}
			if tr.SkippedByKind["Condensation"] != n || tr.SkippedByKind["ConversationStateUpdateEvent"] != n {
				t.Errorf("skipped = %v", tr.SkippedByKind)
			}
			checkPaired(t, tr.Messages)
		})
	}
}

// TestMisreadIsAnError: content that matches a format but is mostly not
// converted (here a chat-shaped list whose messages keep their content in a
// field the chat reader does not know) is refused with what was dropped.
func TestMisreadIsAnError(t *testing.T) {
	var msgs []string
	for i := range 40 {
		msgs = append(msgs, `{"role":"user","blocks":[{"kind":"para","body":"`+strings.Repeat("word ", 40)+`"}]}`, `{"role":"bot","blocks":[{"kind":"para","body":"reply `+string(rune('a'+i%26))+`"}]}`)
	}
	src := "[" + strings.Join(msgs, ",") + "]"
	_, err := transcript.Parse(strings.NewReader(src), "chat.json")
	var me *transcript.MisreadError
	if !errors.As(err, &me) {
		t.Fatalf("err = %v, want a *MisreadError", err)
	}
	if me.Format != transcript.FormatChat || me.Total != len(src) || me.Converted*10 >= me.Total {
		t.Errorf("error = %+v", me)
	}
	for _, want := range []string{"chat.json: openai-chat:", "bytes converted", "dropped fields: blocks", "dropped roles: bot"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// TestGeminiSDKShapes: histories dumped by the Gemini SDKs, with string parts
// and snake_case part fields, read as the API's shape.
func TestGeminiSDKShapes(t *testing.T) {
	src := `[
 {"role":"user","parts":["List the files."]},
 {"role":"model","parts":[{"function_call":{"name":"ls","args":{"dir":"."}},"thought_signature":"c2ln"}]},
 {"role":"user","parts":[{"function_response":{"name":"ls","response":{"output":"a.go\nb.go"}}}]},
 {"role":"model","parts":["Two files: a.go and b.go."]}
]`
	tr := parse(t, src)
	if tr.Format != transcript.FormatGemini {
		t.Fatalf("format = %s", tr.Format)
	}
	want := []string{
		"user List the files.",
		`assistant call(call_1 ls {"dir":"."})`,
		"tool a.go\nb.go result(call_1 ls)",
		"assistant Two files: a.go and b.go.",
	}
	if diff := cmp.Diff(want, summary(tr.Messages)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if tr.Messages[1].ToolCalls[0].ThoughtSignature != "c2ln" {
		t.Error("snake_case thought signature lost")
	}
}

// TestGeminiRecordWithoutResult: a recorded call whose result was not kept
// is answered with what the CLI displayed, a structured display included.
func TestGeminiRecordWithoutResult(t *testing.T) {
	src := `{"sessionId":"s","projectHash":"h","startTime":"t","lastUpdated":"t","kind":"main"}
{"id":"u1","timestamp":"t","type":"user","content":[{"text":"fix the typo"}]}
{"id":"g1","timestamp":"t","type":"gemini","content":"","toolCalls":[{"id":"t1","name":"replace","args":{"file_path":"README.md"},"status":"success","timestamp":"t","resultDisplay":{"fileName":"README.md","fileDiff":"-teh\n+the"}}]}`
	tr := parse(t, src)
	if tr.Format != transcript.FormatGemini || len(tr.Messages) != 3 {
		t.Fatalf("format %s, %d messages", tr.Format, len(tr.Messages))
	}
	if got := tr.Messages[2].Text(); !strings.Contains(got, "README.md") || !strings.Contains(got, "+the") {
		t.Errorf("result = %q", got)
	}
	checkPaired(t, tr.Messages)
}

// TestOpenHandsV1ConversationDirectory: a persisted V1 conversation (a
// directory with base_state.json and events/event-<index>-<id>.json) reads
// like the same events in one list, in index order.
func TestOpenHandsV1ConversationDirectory(t *testing.T) {
	data, err := os.ReadFile("testdata/openhands-v1-events.json")
	if err != nil {
		t.Fatal(err)
	}
	var events []json.RawMessage
	if err := json.Unmarshal(data, &events); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "base_state.json"), []byte(`{"id":"c1","agent":{"kind":"Agent"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	evDir := filepath.Join(dir, "events")
	if err := os.Mkdir(evDir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Written in reverse so that only the index orders them; the last one
	// has a 6-digit index.
	for i := len(events) - 1; i >= 0; i-- {
		idx := fmt.Sprintf("%05d", i)
		if i == len(events)-1 {
			idx = "100000"
		}
		name := fmt.Sprintf("event-%s-%08x-aaaa-bbbb-cccc-000000000000.json", idx, i)
		if err := os.WriteFile(filepath.Join(evDir, name), events[i], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := transcript.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := parse(t, string(data))
	if got.Format != transcript.FormatOpenHandsV1 || cmp.Diff(summary(want.Messages), summary(got.Messages)) != "" {
		t.Errorf("directory read as %s:\n%s", got.Format, cmp.Diff(summary(want.Messages), summary(got.Messages)))
	}
	// A directory without event files is refused with the formats.
	var uf *transcript.UnknownFormatError
	if _, err := transcript.Load(t.TempDir()); !errors.As(err, &uf) {
		t.Errorf("empty directory: %v", err)
	}
}

// TestOpencodeExport: an `opencode export` session. Each model step of an
// assistant message becomes a message with its calls, followed by their
// results (a tool part holds both); the shell's exit code (metadata.exit)
// reaches the result text; a failed tool is a flagged error; text opencode
// wrote itself is kept apart and marked; a compaction's summary message is
// a user message marked as such; a call still running at export time has no
// result; duplicate call ids (a redacted export) get the part's own id.
func TestOpencodeExport(t *testing.T) {
	tr := load(t, "opencode-export.json")
	if tr.Format != transcript.FormatOpencode {
		t.Fatalf("format = %s", tr.Format)
	}
	todos := `{"todos":[{"content":"Reproduce the 500","status":"completed","priority":"high","id":"1"},{"content":"Validate the title in createTodo","status":"in_progress","priority":"high","id":"2"}]}`
	patch := `{"patchText":"*** Begin Patch\n*** Update File: src/routes.ts\n@@\n-  const todo = await store.create(body)\n+  if (!body.title) return res.status(400).json({error: 'title required'})\n+  const todo = await store.create(body)\n*** End Patch"}`
	want := []string{
		"user#msg_u1 The /todos endpoint returns 500 when the title is empty. Fix it; do not change the public API.",
		`user Called the Read tool with the following input: {"filePath":"/home/ana/todo-api/src/routes.ts"}`,
		`assistant#msg_a1 Running the tests. call(call_bash1 bash {"command":"npm test","description":"Runs the test suite"}) call(call_todo1 todowrite ` + todos + `) reasoning(Reproduce the failure first.)`,
		"tool FAIL src/routes.test.ts\n  x rejects empty title (5 ms)\nTests: 1 failed, 11 passed\n[exit code 1] result(call_bash1 bash)",
		"tool [\n  {\n    \"content\": \"Reproduce the 500\",\n    \"status\": \"completed\"\n  }\n] result(call_todo1 todowrite)",
		`assistant The validator is missing; patching createTodo. call(REDACTED apply_patch ` + patch + `) call(prt_a10 bash {"command":"npm run lint","description":"Lints"})`,
		"tool Success. Updated the following files:\nM src/routes.ts result(REDACTED apply_patch)",
		"tool Error: Tool execution aborted result(prt_a10 bash)",
		"assistant#msg_a2 [error: rate limited]",
		"user#msg_a3 Summary: empty titles now get a 400 in src/routes.ts; npm test failed before the patch and was not re-run.",
		"user#msg_u3 Run the tests again.",
		`assistant#msg_a4 call(call_bash2 bash {"command":"npm test","description":"Runs the test suite"})`,
	}
	if diff := cmp.Diff(want, summary(tr.Messages)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	flags := map[int]string{1: "isSynthetic", 7: "isError", 9: "isCompactSummary"}
	for i, m := range tr.Messages {
		for _, k := range []string{"isSynthetic", "isError", "isCompactSummary"} {
			if got := string(m.Extra[k]) == "true"; got != (flags[i] == k) {
				t.Errorf("message %d: %s = %v", i, k, got)
			}
		}
	}
	wantSkipped := map[string]int{"part/compaction": 1, "part/file": 1, "part/patch": 1, "part/step-finish": 3, "tool/running": 1}
	if diff := cmp.Diff(wantSkipped, tr.SkippedByKind); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	// Everything but the call still running is answered in place.
	checkPaired(t, tr.Messages[:len(tr.Messages)-1])
}

// TestCopilotEvents: a Copilot CLI events.jsonl. Requests become calls,
// completions their results in call order whatever order they finished in;
// a failed call is a flagged error; a sub-agent's own turns (events naming
// parentToolCallId) stay out, its caller gets its result; a call only the
// execution events name is still a call; the compaction summary is a user
// message marked as such; streaming deltas, hooks and bookkeeping are
// skipped, and an event kind the importer does not know is counted.
func TestCopilotEvents(t *testing.T) {
	tr := load(t, "copilot-events.jsonl")
	if tr.Format != transcript.FormatCopilot {
		t.Fatalf("format = %s", tr.Format)
	}
	want := []string{
		"user#e05 Why does npm test fail? Never push to main.",
		`assistant#m1 Looking at the test and the route. call(toolu_01view view {"path":"/home/ana/todo-api/src/routes.ts"}) call(toolu_02bash bash {"command":"npm test 2>&1 | tail -5","description":"Run tests"}) reasoning(Read the route, run the tests.)`,
		"tool 1. import express from 'express'\n2. export const router = express.Router() result(toolu_01view view)",
		"tool Tests: 1 failed, 11 passed\n<exited with exit code 1> result(toolu_02bash bash)",
		`assistant#m2 call(toolu_03task task {"agent_type":"explore","prompt":"Find where titles are validated"})`,
		"tool Titles are validated nowhere; src/validate.ts only checks ids. result(toolu_03task task)",
		`assistant#m4 call(toolu_05edit edit {"path":"/home/ana/todo-api/src/routes.ts","old_str":"store.create(body)","new_str":"validateTitle(body) && store.create(body)"})`,
		"tool Error: No match found for old_str result(toolu_05edit edit)",
		"user#e27 <overview>Fixing the 500 on empty titles in src/routes.ts; the edit did not apply.</overview>",
		`assistant call(toolu_06bash bash {"command":"git status --short"})`,
		"tool  M src/routes.ts\n<exited with exit code 0> result(toolu_06bash bash)",
		"assistant#m5 The edit did not apply: old_str did not match. I will re-read the file.",
	}
	if diff := cmp.Diff(want, summary(tr.Messages)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if string(tr.Messages[7].Extra["isError"]) != "true" || string(tr.Messages[8].Extra["isCompactSummary"]) != "true" {
		t.Errorf("flags: error %s, summary %s", tr.Messages[7].Extra["isError"], tr.Messages[8].Extra["isCompactSummary"])
	}
	for _, k := range []string{"subagent/assistant.message", "subagent/tool.execution_start", "subagent/tool.execution_complete", "ephemeral", "hook.start", "session.workspace_snapshot"} {
		if tr.SkippedByKind[k] != 1 {
			t.Errorf("skipped %s = %d, want 1 (%v)", k, tr.SkippedByKind[k], tr.SkippedByKind)
		}
	}
	checkPaired(t, tr.Messages)
}

// TestClaudeQueuedMessages: a message the user typed while the agent worked
// lives only in the CLI's queue records. Handed to the model mid-turn
// ("remove"), it is a user message after the running call's result; handed
// over as the next prompt ("dequeue") and recorded as a user record, it is
// not repeated; taken back to the input box ("popAll"), it never reached the
// model; slash commands, task notifications and background-task
// bookkeeping are not typed text.
func TestClaudeQueuedMessages(t *testing.T) {
	rec := func(typ, uuid, body string) string {
		return `{"type":"` + typ + `","uuid":"` + uuid + `","sessionId":"s1","cwd":"/w","message":` + body + `}`
	}
	queue := func(op, content string) string {
		s := `{"type":"queue-operation","operation":"` + op + `","timestamp":"t","sessionId":"s1"`
		if content != "" {
			b, _ := json.Marshal(content)
			s += `,"content":` + string(b)
		}
		return s + "}"
	}
	src := strings.Join([]string{
		rec("user", "u1", `{"role":"user","content":"Add a unique index on auth_methods."}`),
		rec("assistant", "a1", `{"id":"msg_1","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Edit","input":{"file_path":"/w/migrations/1700-Full.ts"}}]}`),
		queue("enqueue", "I already wiped staging; add a new migration instead of changing the initial one."),
		queue("enqueue", `{"task_id":"b1","description":"Run tests","task_type":"local_bash"}`),
		queue("enqueue", "/model"),
		queue("enqueue", "<task-notification>\n<task-id>b1</task-id>\n</task-notification>"),
		rec("user", "u2", `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"The file has been updated."}]}`),
		queue("remove", ""),
		rec("assistant", "a2", `{"id":"msg_2","role":"assistant","content":[{"type":"text","text":"Reverting; writing a separate migration."}]}`),
		queue("enqueue", "then run the tests"),
		queue("dequeue", ""),
		rec("user", "u3", `{"role":"user","content":"then run the tests"}`),
		queue("enqueue", "never mind"),
		queue("popAll", "never mind"),
		rec("assistant", "a3", `{"id":"msg_3","role":"assistant","content":[{"type":"text","text":"Running them."}]}`),
	}, "\n")
	tr := parse(t, src)
	want := []string{
		"user#u1 Add a unique index on auth_methods.",
		`assistant#msg_1 call(toolu_1 Edit {"file_path":"/w/migrations/1700-Full.ts"})`,
		"tool#u2 The file has been updated. result(toolu_1 Edit)",
		"user I already wiped staging; add a new migration instead of changing the initial one.",
		"assistant#msg_2 Reverting; writing a separate migration.",
		"user#u3 then run the tests",
		"assistant#msg_3 Running them.",
	}
	if diff := cmp.Diff(want, summary(tr.Messages)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if tr.SkippedByKind["queue-operation"] != 9 {
		t.Errorf("queue records skipped = %d, want all 9", tr.SkippedByKind["queue-operation"])
	}
	checkPaired(t, tr.Messages)
}

// TestCopilotStreamOutput: the JSON lines `copilot -p … --output-format json`
// prints have no ids or timestamps; they read the same, deltas skipped.
func TestCopilotStreamOutput(t *testing.T) {
	src := `{"type":"session.start","data":{"sessionId":"s1","selectedModel":"gpt-5.4"}}
{"type":"user.message","data":{"content":"list the files"}}
{"type":"assistant.message_delta","data":{"messageId":"m1","deltaContent":"Listing"}}
{"type":"assistant.message","data":{"messageId":"m1","content":"Listing.","toolRequests":[{"toolCallId":"c1","name":"bash","arguments":{"command":"ls"}}]}}
{"type":"tool.execution_complete","data":{"toolCallId":"c1","success":true,"result":{"content":"a.go\n<exited with exit code 0>"}}}
{"type":"assistant.message","data":{"messageId":"m2","content":"One file: a.go."}}`
	tr := parse(t, src)
	want := []string{
		"user list the files",
		`assistant#m1 Listing. call(c1 bash {"command":"ls"})`,
		"tool a.go\n<exited with exit code 0> result(c1 bash)",
		"assistant#m2 One file: a.go.",
	}
	if tr.Format != transcript.FormatCopilot {
		t.Fatalf("format = %s", tr.Format)
	}
	if diff := cmp.Diff(want, summary(tr.Messages)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if tr.SkippedByKind["assistant.message_delta"] != 1 || tr.SkippedByKind["session.start"] != 1 {
		t.Errorf("skipped = %v", tr.SkippedByKind)
	}
}

// TestOpencodeCompactionAgent: a compaction summary written by the
// compaction agent (without the summary flag) is still the summary.
func TestOpencodeCompactionAgent(t *testing.T) {
	src := `{"info":{"id":"ses_1","directory":"/w","title":"t"},"messages":[
{"info":{"id":"u1","role":"user"},"parts":[{"type":"text","text":"go on"}]},
{"info":{"id":"a1","role":"assistant","agent":"compaction","mode":"compaction"},"parts":[{"type":"step-start"},{"type":"text","text":"Summary: the tests pass; the README is not updated."},{"type":"step-finish"}]}]}`
	tr := parse(t, src)
	if got := summary(tr.Messages); len(got) != 2 || got[1] != "user#a1 Summary: the tests pass; the README is not updated." || string(tr.Messages[1].Extra["isCompactSummary"]) != "true" {
		t.Errorf("messages = %q, extra %v", got, tr.Messages[1].Extra)
	}
}
