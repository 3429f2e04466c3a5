package evidence

import (
	"context"
	"regexp"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
)

// Classify returns the origin of every message of msgs (see [Origin]).
func Classify(ctx context.Context, msgs []history.Message) ([]Origin, error) {
	return classify(ctx, msgs)
}

// harnessTags are the tags in which agent harnesses wrap the context they add
// to a user-role message: reminders, notifications, slash-command echoes and
// their output, environment and instruction blocks, hook output.
var harnessTags = map[string]bool{
	"system-reminder": true, "system_reminder": true, "task-notification": true, "task_notification": true,
	"command-name": true, "command-message": true, "command-args": true, "command-contents": true,
	"local-command-stdout": true, "local-command-stderr": true, "local-command-caveat": true,
	"bash-input": true, "bash-stdout": true, "bash-stderr": true,
	"user-prompt-submit-hook": true, "hook-output": true,
	"environment_context": true, "environment-context": true, "user_instructions": true, "user-instructions": true,
	"turn_aborted": true, "turn-aborted": true, "user_shell_command": true,
	"ide_opened_file": true, "ide_selection": true, "ide-opened-file": true, "ide-selection": true,
	"context": true, "system": true, "instructions": true, "environment": true,
}

var (
	// tagBlockRE matches a leading <tag>…</tag> block (or a lone <tag/>).
	tagOpenRE = regexp.MustCompile(`^<([A-Za-z][A-Za-z0-9_-]*)(\s[^>]*)?>`)
	// flagKeys are message fields importers set on injected messages.
	metaKeys = []string{"isMeta", "isCompactSummary", "isVisibleInTranscriptOnly", "isSynthetic"}
)

// classify assigns origins. A user-role message is:
//   - summary: flagged as a continuation summary by its importer, or a
//     "Previous conversation summary:" / <summary_content> carrier;
//   - injected: flagged as meta, or made only of harness tag blocks, or a
//     caveat that precedes such blocks;
//   - observation / harness: in a session whose agent acts through fenced
//     command blocks, the message after such an action is its observation,
//     and the message after a response with no or several actions is the
//     harness's format complaint;
//   - harness: the reply to an assistant turn without tool calls in a
//     tool-calling session, when it holds no request of its own but names
//     the missing tool call;
//   - typed otherwise.
func classify(ctx context.Context, msgs []history.Message) ([]Origin, error) {
	out := make([]Origin, len(msgs))
	textAgent, err := isTextActionSession(ctx, msgs)
	if err != nil {
		return nil, err
	}
	for i := range msgs {
		if i%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		m := &msgs[i]
		switch m.Role {
		case history.Assistant:
			out[i] = OriginAgent
			continue
		case history.Tool:
			out[i] = OriginTool
			continue
		case history.System:
			out[i] = OriginSystem
			continue
		}
		text := m.Text()
		switch {
		case hasFlag(m, "isCompactSummary") || IsSummary(text):
			out[i] = OriginSummary
		case hasAnyFlag(m) || isHarnessBlock(text) || isStatusLine(text) || isInstructionFile(text):
			out[i] = OriginInjected
		case isDelegated(msgs, i, text):
			out[i] = OriginDelegated
		case textAgent && i > 0 && afterAgent(msgs, out, i):
			prev := prevAgent(msgs, i)
			if n := actionBlocks(msgs[prev].Text()); n == 1 {
				out[i] = OriginObservation
			} else {
				out[i] = OriginHarness
			}
		case isToolNag(msgs, out, i, text):
			out[i] = OriginHarness
		case isUserRun(text):
			out[i] = OriginObservation // a command the user ran, with its output
		default:
			out[i] = OriginTyped
		}
	}
	// A caveat line right before injected command blocks belongs to them.
	for i := 0; i+1 < len(msgs); i++ {
		if out[i] == OriginTyped && out[i+1] == OriginInjected && isCaveat(msgs[i].Text()) {
			out[i] = OriginInjected
		}
	}
	return out, nil
}

func hasFlag(m *history.Message, k string) bool {
	v, ok := m.Extra[k]
	return ok && string(v) == "true"
}

func hasAnyFlag(m *history.Message) bool {
	for _, k := range metaKeys {
		if hasFlag(m, k) {
			return true
		}
	}
	return false
}

// SummaryHeading opens the summary message compaction writes (package
// compaction writes it; this is its one definition). The engine knows its
// own summary by position (the compaction boundary records its index); the
// heading is what a record an agent wrote shows of it: our summary sent
// back through a proxy, or re-imported.
const SummaryHeading = "Previous conversation summary:"

// HasSummaryHeading reports whether text, leading white space aside, starts
// with [SummaryHeading].
func HasSummaryHeading(text string) bool {
	return strings.HasPrefix(strings.TrimSpace(text), SummaryHeading)
}

// IsSummary reports whether text is the summary note of an earlier
// compaction: this project's summary message, or the message that carries an
// earlier note in <summary_content> into a second summary pass.
func IsSummary(text string) bool {
	t := strings.TrimSpace(text)
	return HasSummaryHeading(t) || strings.HasPrefix(t, "<summary>") || strings.Contains(HeadBytes(t, 4096), "<summary_content>")
}

// isHarnessBlock reports whether text is made only of harness tag blocks
// (and whitespace between them).
func isHarnessBlock(text string) bool {
	rest, blocks := leadingHarnessBlocks(text)
	return blocks > 0 && rest == ""
}

// WithoutHarnessBlocks returns text without the harness tag blocks it starts
// with (an IDE's <ide_opened_file> note, a <system-reminder>): the words a
// user typed after the context their harness put before them.
func WithoutHarnessBlocks(text string) string {
	rest, _ := leadingHarnessBlocks(text)
	return rest
}

// leadingHarnessBlocks skips the harness tag blocks text starts with and
// returns the trimmed rest and how many it skipped; an unclosed harness tag
// takes the rest as its content.
func leadingHarnessBlocks(text string) (rest string, blocks int) {
	t := strings.TrimSpace(text)
	for t != "" {
		// A heading line that titles the block after it ("# AGENTS.md
		// instructions for /repo" before Codex's <INSTRUCTIONS>) is part of it.
		if strings.HasPrefix(t, "#") {
			if head, after, ok := strings.Cut(t, "\n"); ok && len(head) < 300 {
				after = strings.TrimSpace(after)
				if m := tagOpenRE.FindStringSubmatch(after); m != nil && harnessTags[strings.ToLower(m[1])] {
					t = after
				}
			}
		}
		m := tagOpenRE.FindStringSubmatch(t)
		if m == nil || !harnessTags[strings.ToLower(m[1])] {
			return t, blocks
		}
		end := strings.Index(t, "</"+m[1]+">")
		blocks++
		if end < 0 {
			return "", blocks
		}
		t = strings.TrimSpace(t[end+len("</"+m[1]+">"):])
	}
	return t, blocks
}

// isInstructionFile reports whether text is an instruction file a harness
// put in the user's turn by itself: Gemini CLI's and Qwen Code's "--- Context
// from: F ---" blocks, opencode's "Instructions from: F".
func isInstructionFile(text string) bool {
	t := strings.TrimSpace(HeadBytes(text, 4096))
	return contextFromRE.MatchString(t) && strings.HasPrefix(t, "--- Context from: ") || strings.HasPrefix(t, "Instructions from: ") && instrFromRE.MatchString(t)
}

// isStatusLine reports whether text is one bracketed status line that a
// harness writes in the user's turn ("[Request interrupted by user]").
func isStatusLine(text string) bool {
	t := strings.TrimSpace(text)
	return len(t) < 200 && !strings.Contains(t, "\n") && strings.HasPrefix(t, "[") && strings.HasSuffix(t, "]") && strings.Count(t, "[") == 1
}

// isDelegated reports whether the user-role message at i repeats the
// previous assistant message: one role of the agent handing its plan to
// another (an architect's instructions to its editor).
func isDelegated(msgs []history.Message, i int, text string) bool {
	if i == 0 || msgs[i-1].Role != history.Assistant {
		return false
	}
	t := strings.TrimSpace(text)
	prev := strings.TrimSpace(msgs[i-1].Text())
	return len(t) >= 200 && len(prev) >= 200 && (strings.Contains(prev, t) || strings.Contains(t, prev))
}

// isCaveat reports whether text is a one-paragraph notice that tells the
// model not to act on the messages that follow.
func isCaveat(text string) bool {
	t := strings.ToLower(strings.TrimSpace(text))
	return len(t) < 600 && !strings.Contains(t, "\n\n") && strings.HasPrefix(t, "caveat:")
}

// isTextActionSession reports whether the agent acts through fenced command
// blocks: the session has no tool calls, and most assistant messages hold
// exactly one such block.
func isTextActionSession(ctx context.Context, msgs []history.Message) (bool, error) {
	assistants, actions := 0, 0
	for i := range msgs {
		if i%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return false, err
			}
		}
		m := &msgs[i]
		if m.HasToolCalls() || m.Role == history.Tool {
			return false, nil
		}
		if m.Role != history.Assistant {
			continue
		}
		assistants++
		if actionBlocks(m.Text()) >= 1 {
			actions++
		}
	}
	return assistants >= 2 && actions*3 >= assistants*2, nil
}

func afterAgent(msgs []history.Message, out []Origin, i int) bool {
	p := prevAgent(msgs, i)
	return p >= 0 && p == i-1
}

func prevAgent(msgs []history.Message, i int) int {
	for j := i - 1; j >= 0; j-- {
		if msgs[j].Role == history.Assistant {
			return j
		}
		if msgs[j].Role == history.User {
			return -1
		}
	}
	return -1
}

// toolNagRE matches a harness message about a missing or malformed tool call.
var toolNagRE = regexp.MustCompile(`(?i)\b(no|missing|invalid|malformed|exactly one)\b[^.\n]{0,40}\b(tool[ _]?calls?|function[ _]?calls?|actions?)\b`)

func isUserRun(text string) bool {
	_, _, ok := userRun(text)
	return ok
}

// isToolNag reports whether the user-role message at i is a harness nag in a
// tool-calling session: it answers an assistant message without tool calls,
// is short, and names the missing tool call.
//
// A short message right after a tool result that says a tool parameter was
// wrong is the harness rejecting a malformed call.
func isToolNag(msgs []history.Message, out []Origin, i int, text string) bool {
	if i == 0 {
		return false
	}
	t := strings.TrimSpace(text)
	if len(t) >= 800 {
		return false
	}
	prev := &msgs[i-1]
	switch {
	case prev.Role == history.Assistant && !prev.HasToolCalls():
		return toolNagRE.MatchString(t)
	case prev.Role == history.Tool || prev.HasToolCalls():
		return badParamRE.MatchString(t)
	}
	return false
}

// badParamRE matches a harness's complaint about a tool call's parameters.
var badParamRE = regexp.MustCompile(`(?i)\b(parameter|argument|field)s?\b.{0,60}\b(is expected|expected to be|is required|are required|must be|is invalid|invalid value|unknown)\b`)
