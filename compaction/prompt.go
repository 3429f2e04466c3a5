package compaction

import (
	_ "embed"
	"strings"

	"github.com/vtcode/vtcode-ls/evidence"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
)

// DefaultPrompt is the default summary prompt (docs/design.md §8.5): goal, constraints
// and user restrictions, what was just being done, last action and result,
// checks marked completed / running / failed / not run with exact commands and
// exit codes, pending session ids and polling actions, unresolved approvals,
// key decisions with reasons, files read or changed, errors, next steps. It
// says that model claims are not verification evidence and that repeated
// exploration is compressed first. A workspace may replace it
// ([Options.Prompt]).
//
// It is a variable only because it is embedded from prompt.md; do not assign
// to it.
//
//go:embed prompt.md
var DefaultPrompt string

// SummaryMessage is the system message that carries a local summary in a
// rebuilt history: [evidence.SummaryHeading], a new line, the summary.
func SummaryMessage(summary string) history.Message {
	return history.NewText(history.System, evidence.SummaryHeading+"\n"+summary)
}

// SummaryText is the summary a [SummaryMessage] carries, without its
// heading: read it at [Result.SummaryIndex] (or the index a session's
// boundary recorded).
func SummaryText(m *history.Message) string {
	return strings.TrimPrefix(m.Text(), evidence.SummaryHeading+"\n")
}

// IsSummaryMessage reports whether m reads as a summary message of this
// engine: a system message opening with [evidence.SummaryHeading]. It is for
// histories nobody marked: the input of [Compact] (an agent may send an
// earlier summary back) and a session log older than the boundary's
// summary index. Where a [Result] or a boundary records the index, the
// index decides.
func IsSummaryMessage(m *history.Message) bool {
	return m.Role == history.System && evidence.HasSummaryHeading(m.Text())
}

// instructionsHeader introduces caller-supplied instructions after the prompt.
const instructionsHeader = "\n\n" + providers.SummaryInstructions + "\n"

// carrierHeader and carrierFooter wrap an earlier note (two-pass pass 2 and
// the second band of hierarchical mode) in the user message that precedes the
// remaining messages.
const (
	carrierHeader = "The earlier part of this conversation was already summarized. Merge that summary with the messages that follow into one self-contained summary; keep every fact of it that still matters.\n<summary_content>\n"
	carrierFooter = "\n</summary_content>"
)

// requestText is the final user message of a summary request.
func requestText(prompt, instructions string) string {
	if strings.TrimSpace(prompt) == "" {
		prompt = DefaultPrompt
	}
	prompt = strings.TrimRight(prompt, "\n")
	if s := strings.TrimSpace(instructions); s != "" {
		prompt += instructionsHeader + s
	}
	return prompt
}

// withPins appends to summary, in the carrier blocks of package evidence,
// the pinned texts it does not already carry verbatim (an offline summary
// carries the earlier summary's blocks itself).
func withPins(summary string, pins []string) string {
	var add []evidence.Instruction
	for _, p := range pins {
		in := evidence.Instruction{Source: evidence.PinSource, Text: strings.Trim(p, "\n")}
		if strings.TrimSpace(in.Text) == "" || strings.Contains(summary, strings.TrimRight(evidence.FormatInstructions([]evidence.Instruction{in}), "\n")) {
			continue
		}
		add = append(add, in)
	}
	if len(add) == 0 {
		return summary
	}
	return strings.TrimRight(summary, "\n") + "\n\n## Pinned by the user (verbatim)\n" + strings.TrimRight(evidence.FormatInstructions(add), "\n")
}
