package compaction

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/vtcode/vtcode-ls/evidence"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
)

// recordTokens bounds the record summary a model summarizer receives and
// that a model's summary is checked against (and a sixteenth of the window,
// at least minWholeSummary).
const recordTokens = 2048

// recordHeader introduces the record in a model's summary request.
const recordHeader = "The record of this session, read from its tool calls and results (exit codes, files changed, commits, the plan, the work in progress). Your summary must not contradict it; a claim it does not support must say how it knows:\n"

// checksModel reports whether a model's summary is to be checked by the
// record: a record writer is set and the client is not itself a whole-
// history summarizer (the record's writer).
func (r *run) checksModel() bool {
	if r.opts.Record == nil {
		return false
	}
	_, whole := r.opts.Client.(providers.Summarizer)
	return !whole
}

// recordOf returns the record writer's summary of work, "" when it fails
// (the model's summary is then used as it is).
func (r *run) recordOf(ctx context.Context, work []history.Message) string {
	limit := recordTokens
	if r.opts.Capacity > 0 {
		limit = min(limit, max(minWholeSummary, r.opts.Capacity/16)) // what a small window can spare
	}
	resp, err := r.opts.Record.Summarize(ctx, &providers.SummaryRequest{Messages: work, MaxOutputTokens: limit})
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("record summary failed; the model's summary is not checked", "err", err)
		}
		return ""
	}
	return strings.TrimSpace(resp.Message.Text())
}

// withRecord gives the summary request the record, as part of its
// instructions.
func (r *run) withRecord(record string) {
	if record == "" {
		return
	}
	instr := strings.TrimSpace(r.opts.Instructions + "\n\n" + recordHeader + record)
	r.request = history.NewText(history.User, requestText(r.opts.Prompt, instr))
	r.instr = r.est.Message(&r.request)
}

// recordSections are the sections of the record whose lines a model's
// summary must hold; what it left out is appended verbatim.
var recordSections = []string{"Work in progress", "Goal", "Constraints and user restrictions", "Checks", "Files read or changed", "Errors seen", "Next steps", "Project instructions (verbatim)"}

var tickRE = regexp.MustCompile("`([^`\n]+)`")

// checked returns a model's summary checked by the record: lines the
// record contradicts (see evidence.Contradictions) are taken out and listed
// as corrected, and the record's lines the summary left out (a line whose
// backquoted commands and paths, or whose text, the summary does not hold)
// are appended under their sections.
func checked(ctx context.Context, summary, record string, work []history.Message) (string, error) {
	rec, err := evidence.Extract(ctx, work)
	if err != nil {
		return "", err
	}
	var kept, corrected []string
	heading := ""
	for _, line := range strings.Split(summary, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "#") {
			heading = t
			kept = append(kept, line)
			continue
		}
		if t == "" || strings.EqualFold(t, "none") {
			kept = append(kept, line)
			continue
		}
		if c := evidence.Contradictions(heading+"\n"+line, rec); len(c) > 0 {
			corrected = append(corrected, c...)
			continue
		}
		kept = append(kept, line)
	}
	out := strings.TrimRight(strings.Join(kept, "\n"), "\n")
	if len(corrected) > 0 {
		out += "\n\n## Corrected from the record\n"
		for _, c := range corrected {
			out += "- A claim was removed: it " + c + ".\n"
		}
		out = strings.TrimRight(out, "\n")
	}
	if record == "" {
		return out, nil
	}
	for _, sec := range recordSections {
		body := sectionBody(record, sec)
		var missing []string
		for _, l := range body {
			if missingFrom(out, l) {
				missing = append(missing, l)
			}
		}
		if len(missing) > 0 {
			out += fmt.Sprintf("\n\n## %s (from the record)\n%s", sec, strings.Join(missing, "\n"))
		}
	}
	return out, nil
}

// sectionBody returns the lines of a "## title" section of text (a
// delimited block of project instructions whole), nil when none.
func sectionBody(text, title string) []string {
	i := strings.Index(text, "## "+title+"\n")
	if i < 0 {
		return nil
	}
	rest := text[i+len(title)+4:]
	if title != "Project instructions (verbatim)" {
		if j := strings.Index(rest, "\n## "); j >= 0 {
			rest = rest[:j]
		}
	} else if j := strings.LastIndex(rest, "</project-instructions>"); j >= 0 {
		return []string{strings.TrimSpace(rest[:j+len("</project-instructions>")])}
	}
	var out []string
	for _, l := range strings.Split(strings.TrimRight(rest, "\n"), "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.EqualFold(t, "none") {
			out = append(out, l)
		}
	}
	return out
}

// missingFrom reports whether text lacks what a record line says: one of
// its backquoted strings, or, when it has none, the line itself.
func missingFrom(text, line string) bool {
	ticks := tickRE.FindAllStringSubmatch(line, -1)
	if len(ticks) == 0 {
		t := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "-*0123456789. "))
		return t != "" && !strings.Contains(text, t)
	}
	for _, m := range ticks {
		if !strings.Contains(text, m[1]) {
			return true
		}
	}
	return false
}
