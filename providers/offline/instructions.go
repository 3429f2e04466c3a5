package offline

import (
	"regexp"
	"strconv"
	"strings"

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

// instructionsRE matches one carried block of an earlier summary.
var instructionsRE = regexp.MustCompile(`(?s)<project-instructions source=("(?:[^"\\]|\\.)*")>\n(.*?)\n</project-instructions>\n?`)

// renderInstructions writes each instruction in a block that a later
// compaction reads back whole, whatever headings its text holds.
func renderInstructions(ins []evidence.Instruction) string {
	var b strings.Builder
	for _, in := range ins {
		b.WriteString("<project-instructions source=" + strconv.Quote(in.Source) + ">\n")
		b.WriteString(strings.ReplaceAll(in.Text, "</project-instructions>", "</project-instructions >"))
		b.WriteString("\n</project-instructions>\n")
	}
	return b.String()
}

// mergePriorInstructions takes the carried blocks out of an earlier
// summary's text and keeps them, so that their lines are not read as the
// summary's own.
func (f *facts) mergePriorInstructions(text string) string {
	if !strings.Contains(text, "<project-instructions ") {
		return text
	}
	for _, m := range instructionsRE.FindAllStringSubmatch(text, -1) {
		src, err := strconv.Unquote(m[1])
		if err != nil {
			continue
		}
		f.addInstruction(evidence.Instruction{Source: src, Text: strings.ReplaceAll(m[2], "</project-instructions >", "</project-instructions>")})
	}
	return instructionsRE.ReplaceAllString(text, "")
}
