package transcript_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/transcript"
)

// transcriptsDir locates the published sessions of ../shared/transcripts
// (relative to the repository root), or $VTCODE_TRANSCRIPTS. They are never
// copied into the repository; a missing directory fails the test.
func transcriptsDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("VTCODE_TRANSCRIPTS"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("cannot find the repository root (go.mod) above the test directory")
		}
		dir = parent
	}
	d := filepath.Join(dir, "..", "shared", "transcripts")
	if _, err := os.Stat(d); err != nil {
		t.Fatalf("real transcripts not found at %s (a copy of shared/ must sit beside the repository, or set VTCODE_TRANSCRIPTS): %v", d, err)
	}
	return d
}

type counts struct {
	roles               map[history.Role]int
	calls, results      int
	orphans, unanswered int
	reasoningDetails    int
	firstUser, lastRole string
	texts               []string
	toolNames           map[string]int
	synthetic, withIDs  int
}

func count(msgs []history.Message) counts {
	c := counts{roles: map[history.Role]int{}, toolNames: map[string]int{}}
	p := history.Pair(msgs)
	for i := range msgs {
		m := &msgs[i]
		c.roles[m.Role]++
		c.calls += len(m.ToolCalls)
		c.reasoningDetails += len(m.ReasoningDetails)
		if m.ID != "" {
			c.withIDs++
		}
		for _, tc := range m.ToolCalls {
			c.toolNames[tc.Name]++
			if strings.HasPrefix(tc.ID, "call_") && !strings.ContainsAny(tc.ID[5:], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
				c.synthetic++
			}
		}
		if m.Role == history.Tool {
			c.results++
			if p.BatchOf[i] < 0 {
				c.orphans++
			}
		}
		if m.Role == history.User && c.firstUser == "" {
			c.firstUser = m.Text()
		}
		c.texts = append(c.texts, m.Text())
		c.lastRole = string(m.Role)
	}
	for _, b := range p.Batches {
		for _, r := range b.Results {
			if r < 0 {
				c.unanswered++
			}
		}
	}
	return c
}

func (c counts) anyText(prefix string) bool {
	for _, t := range c.texts {
		if strings.HasPrefix(t, prefix) {
			return true
		}
	}
	return false
}

func (c counts) anyContains(sub string) bool {
	for _, t := range c.texts {
		if strings.Contains(t, sub) {
			return true
		}
	}
	return false
}

// TestRealTranscripts converts every published session and checks what is
// known about each from its source (SOURCES.md and the files themselves).
func TestRealTranscripts(t *testing.T) {
	dir := transcriptsDir(t)
	tests := []struct {
		file      string
		format    string
		messages  int
		calls     int // tool calls (= answered results + unanswered)
		results   int
		skipped   map[string]int // exact counts of some skipped kinds
		firstUser string         // prefix
		// textActions: the agent writes its commands in text, so every
		// call id is synthesized.
		textActions bool
		check       func(t *testing.T, tr *transcript.Transcript, c counts)
	}{
		{
			file: "claude-code-claude-code-log-combined-link.jsonl", format: transcript.FormatClaudeCode,
			calls: 101, results: 101,
			skipped:   map[string]int{"summary": 6, "system": 54},
			firstUser: "Hey Claude, please have a look at the git diff of claude_code_log/renderer.py",
			check: func(t *testing.T, tr *transcript.Transcript, c counts) {
				// 177 assistant records are 76 text + 101 tool_use blocks of 105 responses.
				if c.roles[history.Assistant] != 105 {
					t.Errorf("assistant messages = %d, want 105 (split records merged by message id)", c.roles[history.Assistant])
				}
				if c.toolNames["Bash"] != 45 || c.toolNames["Edit"] != 29 || c.toolNames["Read"] != 15 {
					t.Errorf("tool names = %v, want Bash 45, Edit 29, Read 15", c.toolNames)
				}
				errs := 0
				for _, m := range tr.Messages {
					if string(m.Extra["isError"]) == "true" {
						errs++
					}
				}
				if errs != 21 {
					t.Errorf("results marked isError = %d, want 21", errs)
				}
			},
		},
		{
			file: "claude-code-entire-git-index-corruption.jsonl", format: transcript.FormatClaudeCode,
			calls: 196, results: 196,
			skipped:   map[string]int{"progress": 256, "file-history-snapshot": 35, "system/compact_boundary": 1, "system/stop_hook_summary": 29, "queue-operation": 4},
			firstUser: "our git status has broken, why?",
			check: func(t *testing.T, tr *transcript.Transcript, c counts) {
				if !c.anyText("This session is being continued from a previous conversation") {
					t.Error("Claude Code's own compaction summary (isCompactSummary) is missing")
				}
				if c.reasoningDetails != 28 {
					t.Errorf("thinking blocks kept in reasoningDetails = %d, want 28", c.reasoningDetails)
				}
				for _, m := range tr.Messages {
					for _, d := range m.ReasoningDetails {
						if !strings.Contains(string(d), `"signature"`) {
							t.Fatalf("thinking block lost its signature: %.120s", d)
						}
					}
				}
				// "Sibling tool call errored" results are real results of parallel calls.
				if !c.anyText("<tool_use_error>Sibling tool call errored</tool_use_error>") {
					t.Error("missing a sibling-error tool result")
				}
			},
		},
		{
			file: "claude-code-deep-manifest-tar-support.jsonl", format: transcript.FormatClaudeCode,
			calls: 108, results: 108,
			skipped:   map[string]int{"file-history-snapshot": 15, "summary": 2},
			firstUser: "Caveat: The messages below were generated by the user while running local commands.",
			check: func(t *testing.T, tr *transcript.Transcript, c counts) {
				if c.toolNames["TodoWrite"] != 14 || c.toolNames["ExitPlanMode"] != 3 || c.toolNames["AskUserQuestion"] != 2 {
					t.Errorf("tool names = %v, want TodoWrite 14, ExitPlanMode 3, AskUserQuestion 2", c.toolNames)
				}
				if !c.anyText("New feature: we support .zip, but I've seen an archive that contains embedded tar.gz.") {
					t.Error("missing the tar feature request")
				}
			},
		},
		{
			file: "codex-rollout-chatbot-ui-lmstudio.jsonl", format: transcript.FormatCodex,
			messages: 80, calls: 39, results: 39,
			skipped:   map[string]int{"session_meta": 1, "turn_context": 40, "event_msg/token_count": 79, "response_item/ghost_snapshot": 1},
			firstUser: "<environment_context>",
			check: func(t *testing.T, tr *transcript.Transcript, c counts) {
				if c.toolNames["shell"] != 37 || c.toolNames["update_plan"] != 2 {
					t.Errorf("tool names = %v, want shell 37, update_plan 2", c.toolNames)
				}
				if c.reasoningDetails != 38 {
					t.Errorf("reasoning items = %d, want 38", c.reasoningDetails)
				}
				if !c.anyText("finish up the users work by rigging up the chatbot-ui to use lmstudio") {
					t.Error("missing the task prompt")
				}
				// The session stops mid-task: it ends on a tool result, with no final answer.
				if c.lastRole != string(history.Tool) {
					t.Errorf("last message role = %s, want tool (the session stops mid-task)", c.lastRole)
				}
			},
		},
		{
			file: "mini-swe-agent-pytest-7490.traj.json", format: transcript.FormatMiniSWEAgent,
			messages: 196, calls: 94, results: 94, textActions: true,
			firstUser: "<pr_description>",
			check: func(t *testing.T, tr *transcript.Transcript, c counts) {
				// 93 bash blocks answered by their <returncode> output, and
				// the submit command answered by the patch it printed; the
				// task and the format reminders stay user messages.
				if c.roles[history.Assistant] != 97 || c.roles[history.System] != 1 || c.roles[history.User] != 4 || c.roles[history.Tool] != 94 {
					t.Errorf("roles = %v, want assistant 97, system 1, user 4, tool 94", c.roles)
				}
				if c.toolNames["bash"] != 94 {
					t.Errorf("tool names = %v, want 94 bash calls", c.toolNames)
				}
				last := tr.Messages[len(tr.Messages)-1]
				if last.Role != history.Tool || !strings.HasPrefix(last.Text(), "diff --git a/src/_pytest/skipping.py") {
					t.Errorf("last message = %s %.40q, want the submitted patch as the submit command's result", last.Role, last.Text())
				}
				if !c.anyText("<returncode>0</returncode>") {
					t.Error("missing observations with return codes")
				}
			},
		},
		{
			file: "swe-agent-pydicom-1458.traj", format: transcript.FormatSWEAgent,
			messages: 26, calls: 11, results: 11, textActions: true,
			firstUser: "Here is a demonstration of how to correctly accomplish this task.",
			check: func(t *testing.T, tr *transcript.Transcript, c counts) {
				if c.roles[history.Assistant] != 12 {
					t.Errorf("assistant messages = %d, want 12 (one per step)", c.roles[history.Assistant])
				}
				if !c.anyText("SETTING: You are an autonomous programmer") {
					t.Error("missing the system prompt")
				}
			},
		},
		{
			file: "openhands-multi-swe-bench-ponyc.jsonl", format: transcript.FormatOpenHands,
			calls: 105, results: 103,
			skipped:   map[string]int{"action/recall": 3, "observation/recall": 3},
			firstUser: "<uploaded_files>\n/workspace/ponylang__ponyc__0.1\n</uploaded_files>",
			check: func(t *testing.T, tr *transcript.Transcript, c counts) {
				if tr.Conversations != 3 {
					t.Errorf("conversations = %d, want 3 instances", tr.Conversations)
				}
				if c.roles[history.System] != 3 {
					t.Errorf("system messages = %d, want 3", c.roles[history.System])
				}
				// The two finish calls have no observation.
				if c.unanswered != 2 || c.toolNames["finish"] != 2 {
					t.Errorf("unanswered calls = %d, finish calls = %d; want 2 and 2", c.unanswered, c.toolNames["finish"])
				}
				if !c.anyContains("[The command completed with exit code 2.]") {
					t.Error("run observations lost their exit codes")
				}
				if c.toolNames["execute_bash"] != 49 {
					t.Errorf("execute_bash calls = %d, want 49", c.toolNames["execute_bash"])
				}
			},
		},
		{
			file: "aider-chat-history-yaml-config.md", format: transcript.FormatAider,
			firstUser: "are there tests to check which .aider.conf.yml files are being loaded?",
			skipped:   map[string]int{"session-header": 1},
			check: func(t *testing.T, tr *transcript.Transcript, c counts) {
				if c.roles[history.User] < 5 || c.roles[history.Assistant] < 5 {
					t.Errorf("roles = %v, want several user prompts and replies", c.roles)
				}
				if !c.anyContains("FAILED tests/basic/test_main.py::TestMain::test_yaml_config_file_loading") {
					t.Error("the /run pytest output added to the chat is missing")
				}
				if tr.SkippedByKind["command"] == 0 || tr.SkippedByKind["ui-output"] == 0 {
					t.Errorf("skipped = %v, want commands and UI output counted", tr.SkippedByKind)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			tr, err := transcript.Load(filepath.Join(dir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if tr.Format != tc.format {
				t.Errorf("format = %q, want %q", tr.Format, tc.format)
			}
			c := count(tr.Messages)
			if len(tr.Messages) == 0 || (tc.messages > 0 && len(tr.Messages) != tc.messages) {
				t.Errorf("messages = %d, want %d (> 0)", len(tr.Messages), tc.messages)
			}
			if c.calls != tc.calls || c.results != tc.results {
				t.Errorf("calls/results = %d/%d, want %d/%d", c.calls, c.results, tc.calls, tc.results)
			}
			if c.orphans != 0 {
				t.Errorf("%d tool results answer no call", c.orphans)
			}
			if c.calls-c.unanswered != c.results {
				t.Errorf("answered calls = %d, results = %d: pairing broken", c.calls-c.unanswered, c.results)
			}
			if tc.textActions && c.synthetic != c.calls {
				t.Errorf("%d of %d call ids synthesized, want all: the commands were text", c.synthetic, c.calls)
			}
			if !tc.textActions && c.synthetic != 0 {
				t.Errorf("%d synthesized call ids, want 0: every source call has an id", c.synthetic)
			}
			if !strings.HasPrefix(c.firstUser, tc.firstUser) {
				t.Errorf("first user message = %.100q, want prefix %q", c.firstUser, tc.firstUser)
			}
			for kind, n := range tc.skipped {
				if tr.SkippedByKind[kind] != n {
					t.Errorf("skipped %q = %d, want %d (all: %v)", kind, tr.SkippedByKind[kind], n, tr.SkippedByKind)
				}
			}
			sum := 0
			for _, n := range tr.SkippedByKind {
				sum += n
			}
			if sum != tr.Skipped {
				t.Errorf("Skipped = %d, but kinds sum to %d", tr.Skipped, sum)
			}
			if len(tc.skipped) > 0 && tr.Skipped == 0 {
				t.Error("no records skipped, but the file has non-conversation records")
			}
			for i, m := range tr.Messages {
				if !m.Role.Valid() {
					t.Fatalf("message %d: invalid role %q", i, m.Role)
				}
				if m.Role == history.Tool && m.ToolCallID == "" {
					t.Fatalf("message %d: tool message without a call id", i)
				}
			}
			if tc.check != nil {
				tc.check(t, tr, c)
			}
			// The conversion is deterministic.
			again, err := transcript.Load(filepath.Join(dir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			for i := range tr.Messages {
				if !history.Equal(tr.Messages[i], again.Messages[i]) {
					t.Fatalf("message %d differs between two loads", i)
				}
			}
		})
	}
}

// TestRealCompanionIsNotATranscript: the Entire metadata file beside a
// session is JSON but no conversation; it must be refused, not guessed.
func TestRealCompanionIsNotATranscript(t *testing.T) {
	dir := transcriptsDir(t)
	_, err := transcript.Load(filepath.Join(dir, "claude-code-entire-git-index-corruption.metadata.json"))
	var uf *transcript.UnknownFormatError
	if err == nil || !asUnknown(err, &uf) {
		t.Fatalf("err = %v, want an UnknownFormatError", err)
	}
	if !strings.Contains(err.Error(), `"checkpoint_id"`) {
		t.Errorf("error %q does not say what the content looked like", err)
	}
}
