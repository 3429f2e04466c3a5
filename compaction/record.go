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

// checked returns a model's summary checked by the record. A sentence the
// record contradicts (see evidence.Contradictions) is replaced by the
// record's line about the same command or path when the record has one it
// does not contradict, and taken out otherwise; the other sentences of its
// line stay; each is listed as corrected. Then the record's lines the
// model's own text left out (see [covered]) are appended verbatim under
// their sections: what the corrections and the appended lines say does not
// count as the model having said it. The result holds no claim the record
// contradicts.
func checked(ctx context.Context, summary, record string, work []history.Message) (string, error) {
	rec, err := evidence.Extract(ctx, work)
	if err != nil {
		return "", err
	}
	var recLines []recordLine
	for _, sec := range recordSections {
		for _, l := range sectionBody(record, sec) {
			recLines = append(recLines, recordLine{sec, l})
		}
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
		if t == "" || strings.EqualFold(t, "none") || len(evidence.Contradictions(heading+"\n"+line, rec)) == 0 {
			kept = append(kept, line)
			continue
		}
		lead, body := bulletOf(line)
		var parts []string
		for _, sn := range sentencesOf(body) {
			c := evidence.Contradictions(heading+"\n"+sn, rec)
			if len(c) == 0 {
				parts = append(parts, sn)
				continue
			}
			if rep := replacement(c, recLines, rec); rep != "" {
				parts = append(parts, rep)
				corrected = append(corrected, "A claim was removed: it "+c[0]+". The record's line stands in its place.")
			} else {
				corrected = append(corrected, "A claim was removed: it "+c[0]+".")
			}
		}
		fixed := strings.Join(parts, " ")
		if fixed != "" && len(evidence.Contradictions(heading+"\n"+lead+fixed, rec)) > 0 {
			// The claim spans sentences: the whole line goes.
			fixed = ""
			corrected = append(corrected, "A claim was removed: it "+evidence.Contradictions(heading+"\n"+line, rec)[0]+".")
		}
		if fixed != "" {
			kept = append(kept, lead+fixed)
		}
	}
	own := strings.TrimRight(strings.Join(kept, "\n"), "\n")
	out := own
	if len(corrected) > 0 {
		out += "\n\n## Corrected from the record\n- " + strings.Join(corrected, "\n- ")
	}
	if record != "" {
		for _, sec := range recordSections {
			var missing []string
			for _, l := range sectionBody(record, sec) {
				verbatim := sec == "Project instructions (verbatim)" // carried whole, never paraphrased
				if verbatim && !strings.Contains(own, l) || !verbatim && !metaLine(l) && !covered(l, own) {
					missing = append(missing, l)
				}
			}
			if len(missing) > 0 {
				out += fmt.Sprintf("\n\n## %s (from the record)\n%s", sec, strings.Join(missing, "\n"))
			}
		}
	}
	return strings.TrimSpace(dropContradicted(out, rec)), nil
}

// recordLine is one line of the record's summary, with its section.
type recordLine struct{ section, text string }

// replacement returns the record's line about the subject of the first of
// claims (the command or path it names; a path also by its trailing
// segments, as the record may show it relative), when one exists that the
// record does not contradict, preferring a line that gives an outcome (an
// exit code, passed, failed, modified, read); "" otherwise.
func replacement(claims []string, lines []recordLine, rec *evidence.Record) string {
	m := tickRE.FindStringSubmatch(claims[0])
	if m == nil {
		return ""
	}
	subject := m[1]
	names := func(l string) bool {
		for _, t := range tickRE.FindAllStringSubmatch(l, -1) {
			if t[1] == subject || strings.Contains(t[1], ".") && strings.HasSuffix(subject, "/"+t[1]) {
				return true
			}
		}
		return false
	}
	best, bestScore := "", 0
	for _, l := range lines {
		if !names(l.text) || len(evidence.Contradictions("## "+l.section+"\n"+l.text, rec)) > 0 {
			continue
		}
		score := 1
		if exitRE.MatchString(l.text) || outcomeRE.MatchString(l.text) {
			score = 2
		}
		if score > bestScore {
			_, body := bulletOf(l.text)
			best, bestScore = strings.TrimSpace(body), score
		}
	}
	return best
}

var outcomeRE = regexp.MustCompile(`(?i)\b(passed|failed|modified|created|deleted|read|rejected)\b`)

// metaLine reports whether a record line states no fact: "none", or a
// "(N more omitted)" marker.
func metaLine(l string) bool {
	t := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "- "))
	return strings.EqualFold(t, "none") || strings.HasPrefix(t, "(") && strings.HasSuffix(t, "omitted)")
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

var bulletRE = regexp.MustCompile(`^\s*(?:[-*•]|\d+[.)])\s+`)

// bulletOf splits a line into its list marker (with indentation) and text.
func bulletOf(line string) (lead, body string) {
	if loc := bulletRE.FindStringIndex(line); loc != nil {
		return line[:loc[1]], line[loc[1]:]
	}
	n := len(line) - len(strings.TrimLeft(line, " \t"))
	return line[:n], line[n:]
}

// sentencesOf splits text into sentences at ". ", "; ", "! " and "? "
// outside backquotes.
func sentencesOf(text string) []string {
	var out []string
	tick, start := false, 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '`':
			tick = !tick
		case '.', ';', '!', '?':
			if !tick && i+1 < len(text) && text[i+1] == ' ' {
				if s := strings.TrimSpace(text[start : i+1]); s != "" {
					out = append(out, s)
				}
				start = i + 1
			}
		}
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

var (
	exitRE = regexp.MustCompile(`(?i)\bexit(?: code| status)? -?\d+\b`)
	wordRE = regexp.MustCompile(`[\pL\pN_./-]{4,}`)
)

// covered reports whether text holds the fact of a ledger item: the item
// verbatim; or one line with all of its keys (backquoted strings and exit
// codes) and half of its other words of four letters or more ("Fix the
// failure of `x`" is not "`x` failed"); or, for an item without keys, three
// quarters of its words anywhere.
func covered(item, text string) bool {
	lower := strings.ToLower(text)
	li := strings.ToLower(strings.TrimSpace(item))
	if strings.Contains(lower, li) {
		return true
	}
	var keys []string
	for _, m := range tickRE.FindAllStringSubmatch(li, -1) {
		keys = append(keys, m[1])
	}
	keys = append(keys, exitRE.FindAllString(li, -1)...)
	words := wordRE.FindAllString(exitRE.ReplaceAllString(tickRE.ReplaceAllString(li, " "), " "), -1)
	if len(keys) == 0 {
		return share(words, lower)*4 >= len(words)*3
	}
	for _, line := range strings.Split(lower, "\n") {
		all := true
		for _, k := range keys {
			if !strings.Contains(line, k) {
				all = false
				break
			}
		}
		if all && share(words, line)*2 >= len(words) {
			return true
		}
	}
	return false
}

// share counts the words that text contains.
func share(words []string, text string) int {
	n := 0
	for _, w := range words {
		if strings.Contains(text, w) {
			n++
		}
	}
	return n
}

// dropContradicted removes every line that rec still contradicts (read
// under its heading): a last guard, so a checked summary holds no claim the
// record contradicts.
func dropContradicted(text string, rec *evidence.Record) string {
	if len(evidence.Contradictions(text, rec)) == 0 {
		return text
	}
	var out []string
	heading := ""
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "#") {
			heading = t
		} else if t != "" && len(evidence.Contradictions(heading+"\n"+line, rec)) > 0 {
			continue
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}
