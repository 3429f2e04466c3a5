package summary

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/evidence"
	"github.com/vtcode/vtcode-ls/history"
)

// TestHarnessInstructionsAreNotTheGoal: in a Codex rollout the goal is the
// user's first request, not the AGENTS.md block before it, whose rules are
// not the user's restrictions; a restriction stated mid-session is kept,
// "keep going: check X next" is not one.
func TestHarnessInstructionsAreNotTheGoal(t *testing.T) {
	msgs := join(
		[]history.Message{
			userMsg("# AGENTS.md instructions for /home/u/app\n\n<INSTRUCTIONS>\n# Repository Guidelines\n- Always use pnpm, never npm.\n</INSTRUCTIONS>"),
			userMsg("<environment_context>\n  <cwd>/home/u/app</cwd>\n</environment_context>"),
			userMsg("Remember the last opened tab across reloads."),
		},
		shell("c1", "rg -n tab src/", "src/tabs.ts:3: export const tabs = []"),
		[]history.Message{userMsg("The app must not keep anything in localStorage; session memory only.")},
		shell("c2", "git checkout -- src/tabs.ts", ""),
		[]history.Message{userMsg("Keep going: check src/state.ts next.")},
	)
	got := whole(t, msgs, 0, "")
	if g := section(got, "Goal"); !strings.HasPrefix(g, "Remember the last opened tab across reloads.") {
		t.Errorf("goal is not the first request:\n%s", g)
	}
	r := section(got, "Constraints and user restrictions")
	if !strings.Contains(r, "The app must not keep anything in localStorage; session memory only.") {
		t.Errorf("the mid-session restriction is lost:\n%s", r)
	}
	for _, bad := range []string{"pnpm", "Keep going"} {
		if strings.Contains(r, bad) {
			t.Errorf("restrictions hold %q:\n%s", bad, r)
		}
	}
}

// TestServerIsNotPolledToTheEnd: a dev server, or a command the user asked
// to keep running, is pending but no next step waits for it to finish; a
// background test run is polled.
func TestServerIsNotPolledToTheEnd(t *testing.T) {
	bg := func(id, cmd, bgID string) []history.Message {
		return tool(id, "Bash", map[string]string{"command": cmd, "run_in_background": "true"}, "Command running in background with ID: "+bgID)
	}
	got := whole(t, join([]history.Message{userMsg("Start the dev server and run the e2e suite.")},
		bg("c1", "pnpm dev", "bash_1"), bg("c2", "pytest tests/e2e", "bash_2")), 0, "")
	next := section(got, "Next steps")
	if strings.Contains(next, "Poll `pnpm dev`") || !strings.Contains(next, "Poll `pytest tests/e2e`") {
		t.Errorf("next steps:\n%s", next)
	}
	if !strings.Contains(section(got, "Pending sessions and approvals"), "(a server, not meant to finish)") {
		t.Errorf("pending:\n%s", section(got, "Pending sessions and approvals"))
	}
	got = whole(t, join([]history.Message{userMsg("Run the watcher and keep it running while we work.")},
		bg("c1", "cargo watch -x check", "bash_1")), 0, "")
	if strings.Contains(section(got, "Next steps"), "Poll") {
		t.Errorf("a process the user asked to keep running is polled:\n%s", got)
	}
}

// TestChecksNeverNoneBesideACommand: a session whose only commands write
// files does not say "Checks: none" while it names them elsewhere.
func TestChecksNeverNoneBesideACommand(t *testing.T) {
	got := whole(t, join([]history.Message{userMsg("Write the config.")},
		shell("c1", "cat > config.toml <<'EOF'\n[server]\nport = 8080\nEOF", "")), 0, "")
	if strings.TrimSpace(section(got, "Checks")) == "none" {
		t.Errorf("Checks: none beside a command:\n%s", got)
	}
}

// TestRelativePathsAreTheSessionCwds: Codex runs each command in its
// workdir; a file patched by a relative path is that folder's, not the one
// of the reference files the agent only read.
func TestRelativePathsAreTheSessionCwds(t *testing.T) {
	codex := func(id, cmd, out string) []history.Message {
		return jsonCall(id, "shell", map[string]any{"command": []string{"bash", "-lc", cmd}, "workdir": "/home/u/app"}, `{"output":`+strconvQuote(out)+`,"metadata":{"exit_code":0,"duration_seconds":0.1}}`)
	}
	got := whole(t, join([]history.Message{userMsg("Port the retry helper from the reference repo.")},
		codex("c1", "sed -n 1,40p /opt/ref/lib/retry.ts", "export function retry() {}"),
		codex("c2", "sed -n 1,40p /opt/ref/lib/backoff.ts", "export function backoff() {}"),
		codex("c3", "apply_patch <<'PATCH'\n*** Begin Patch\n*** Add File: lib/retry.ts\n+export function retry() {}\n*** End Patch\nPATCH", "Success. Updated the following files:\nA lib/retry.ts"),
	), 0, "")
	files := section(got, "Files read or changed")
	if !strings.Contains(files, "`/home/u/app/lib/retry.ts`: created") && !(strings.Contains(files, "relative to `/home/u/app`") && strings.Contains(files, "`lib/retry.ts`: created")) {
		t.Errorf("the patched file is not the workdir's:\n%s", files)
	}
	if !strings.Contains(section(got, "Work in progress"), "/home/u/app/lib/retry.ts") && !strings.Contains(files, "relative to `/home/u/app`") {
		t.Errorf("uncommitted edit not placed in the workdir:\n%s", got)
	}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestProjectInstructionsSurviveEveryCompaction: what each harness injects
// from its instruction file is carried verbatim, once, through a first and
// a second compaction.
func TestProjectInstructionsSurviveEveryCompaction(t *testing.T) {
	rules := "# Rules\n\n## Build\n- Run `make check` before committing.\n- Never edit generated files under gen/."
	for _, tc := range []struct {
		name, source string
		first        []history.Message
	}{
		{"claude code", "/repo/CLAUDE.md", []history.Message{userMsg("<system-reminder>\nAs you answer the user's questions, you can use the following context:\n# claudeMd\nCodebase and user instructions are shown below.\n\nContents of /repo/CLAUDE.md (project instructions, checked into the codebase):\n\n" + rules + "\n\n      IMPORTANT: this context may or may not be relevant to your tasks.\n</system-reminder>\nFix the flaky parser test.")}},
		{"codex", "AGENTS.md (/repo)", []history.Message{userMsg("# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\n" + rules + "\n</INSTRUCTIONS>"), userMsg("Fix the flaky parser test.")}},
		{"gemini cli", "/repo/GEMINI.md", []history.Message{userMsg("--- Context from: /repo/GEMINI.md ---\n" + rules + "\n--- End of Context from: /repo/GEMINI.md ---"), userMsg("Fix the flaky parser test.")}},
		{"qwen code", "QWEN.md", []history.Message{userMsg("--- Context from: QWEN.md ---\n" + rules + "\n--- End of Context from: QWEN.md ---"), userMsg("Fix the flaky parser test.")}},
		{"opencode", "/repo/AGENTS.md", []history.Message{userMsg("Instructions from: /repo/AGENTS.md\n" + rules), userMsg("Fix the flaky parser test.")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			block := "<project-instructions source=" + strconvQuote(tc.source) + ">\n" + rules + "\n</project-instructions>"
			first := whole(t, join(tc.first, shell("c1", "go test ./parser/", "ok  \texample.com/m/parser\t0.01s")), 0, "")
			if !strings.Contains(first, block) {
				t.Fatalf("first summary lacks the instructions verbatim:\n%s", first)
			}
			second := whole(t, join([]history.Message{history.NewText(history.System, evidence.SummaryHeading+"\n"+first), userMsg("Now run the whole suite.")},
				shell("c2", "go test ./...", "ok  \texample.com/m/parser\t0.01s")), 0, "")
			if strings.Count(second, block) != 1 {
				t.Errorf("second summary holds the instructions %d times, want once verbatim:\n%s", strings.Count(second, block), second)
			}
			if strings.Contains(section(second, secRestrict), "make check") {
				t.Errorf("the carried instructions were read as the user's restrictions:\n%s", second)
			}
		})
	}
}

// TestLatestRequestIsTheNextStep: the user's last request, which the agent
// was working on without a reply yet, is a next step; failures of lint and
// tests that later runs of a broader target fixed are not.
func TestLatestRequestIsTheNextStep(t *testing.T) {
	got := whole(t, join(
		[]history.Message{userMsg("Add the settings page.")},
		// Claude Code flags a failed command's result; what it does not
		// flag passed.
		flaggedTool("c1", "Bash", map[string]string{"command": "npx eslint src/settings.tsx"}, "Exit code 1\n/src/settings.tsx\n  3:1  error  'x' is unused  no-unused-vars\n\n✖ 1 problem (1 error, 0 warnings)"),
		tool("c2", "Bash", map[string]string{"command": "npx eslint src/"}, ""),
		flaggedTool("c3", "Bash", map[string]string{"command": "pytest tests/test_settings.py::test_save"}, "Exit code 1\n=== 1 failed in 0.10s ==="),
		tool("c4", "Bash", map[string]string{"command": "pytest tests/"}, "=== 12 passed in 0.50s ==="),
		[]history.Message{history.NewText(history.Assistant, "The settings page is in.")},
		[]history.Message{userMsg("There are duplicate-key warnings in the console: deduplicate the entries in src/locales/en.json.")},
		tool("r1", "Read", map[string]string{"file_path": "src/locales/en.json"}, "{\"save\": \"Save\", \"save\": \"Save\"}"),
	), 0, "")
	next := section(got, "Next steps")
	if !strings.Contains(next, "The user's latest request, not yet answered: There are duplicate-key warnings") {
		t.Errorf("the latest request is not a next step:\n%s", next)
	}
	if strings.Contains(next, "Fix the failure") {
		t.Errorf("a fixed failure is a next step:\n%s", next)
	}
}

// flaggedTool is a tool call whose result the harness flagged as an error.
func flaggedTool(id, name string, args map[string]string, out string) []history.Message {
	m := tool(id, name, args, out)
	m[1].Extra = map[string]json.RawMessage{"isError": json.RawMessage("true")}
	return m
}
