package summary

import (
	"github.com/vtcode/vtcode-ls/evidence"
	"github.com/vtcode/vtcode-ls/history"
)

// secInstructions carries the project instructions a harness injected
// (CLAUDE.md, AGENTS.md, GEMINI.md, …), verbatim, through every compaction.
const secInstructions = "Project instructions (verbatim)"

// noteInstructions adds the record's project instructions to those an
// earlier summary carried, each once.
func (f *facts) noteInstructions(msgs []history.Message, rec *evidence.Record) {
	for _, in := range evidence.ProjectInstructions(msgs, rec.Origins) {
		f.addInstruction(in)
	}
}

func (f *facts) addInstruction(in evidence.Instruction) {
	for _, have := range f.instructions {
		if have.Source == in.Source && have.Text == in.Text {
			return
		}
	}
	f.instructions = append(f.instructions, in)
}

// mergePriorInstructions takes the carried blocks out of an earlier
// summary's text and keeps them, so that their lines are not read as the
// summary's own.
func (f *facts) mergePriorInstructions(text string) string {
	ins, rest := evidence.ParseInstructions(text)
	for _, in := range ins {
		// Pinned text comes from the configuration each time (compaction
		// appends what is pinned now), not from the earlier summary.
		if in.Source != evidence.PinSource {
			f.addInstruction(in)
		}
	}
	return rest
}
