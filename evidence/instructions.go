package evidence

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
)

// Instruction is the text of a project instruction file (CLAUDE.md,
// AGENTS.md, GEMINI.md, QWEN.md, …) that a harness put in the user's turn,
// verbatim.
type Instruction struct {
	Source string // the file as the harness names it
	Text   string
}

// maxInstructionBytes bounds one instruction's text: what is longer is
// carried from its start, cut on a line.
const maxInstructionBytes = 16 << 10

var (
	// Claude Code: "Contents of /repo/CLAUDE.md (project instructions,
	// checked into the codebase):" then the file, up to the next file or
	// the reminder's closing advice.
	claudeMdRE = regexp.MustCompile(`(?m)^Contents of (\S+) \(([^)\n]*instructions[^)\n]*)\):[ \t]*\n`)
	claudeEnd  = []string{"\nContents of ", "</system-reminder>", "\n      IMPORTANT: this context may or may not be relevant", "\nIMPORTANT: this context may or may not be relevant"}
	// Codex: "# AGENTS.md instructions for DIR" then <INSTRUCTIONS>…</INSTRUCTIONS>.
	codexInstrRE = regexp.MustCompile(`(?s)^#\s*(\S+\.md) instructions for (\S+)\s*<INSTRUCTIONS>\n?(.*?)\n?</INSTRUCTIONS>`)
	// Older Codex: <user_instructions>…</user_instructions>.
	userInstrRE = regexp.MustCompile(`(?s)<user_instructions>\n?(.*?)\n?</user_instructions>`)
	// Gemini CLI, Qwen Code: "--- Context from: GEMINI.md ---" … "--- End
	// of Context from: GEMINI.md ---".
	contextFromRE = regexp.MustCompile(`(?m)^--- Context from: (.+?) ---[ \t]*\n`)
	// opencode: "Instructions from: /repo/AGENTS.md" then the file.
	instrFromRE = regexp.MustCompile(`(?m)^Instructions from: (\S+)[ \t]*\n`)
)

// ProjectInstructions returns, in first-seen order and each once, the
// project instructions harnesses injected into user-role messages (in a
// message the user typed, only in the harness blocks before the typed
// words); origins are [Record.Origins].
func ProjectInstructions(msgs []history.Message, origins []Origin) []Instruction {
	var out []Instruction
	seen := map[string]bool{}
	add := func(src, text string) {
		text = strings.Trim(text, "\n")
		if strings.TrimSpace(text) == "" {
			return
		}
		if len(text) > maxInstructionBytes {
			text = HeadBytes(text, maxInstructionBytes)
			if i := strings.LastIndexByte(text, '\n'); i > 0 {
				text = text[:i]
			}
			text += "\n[… cut at 16 KiB]"
		}
		k := src + "\x00" + text
		if !seen[k] {
			seen[k] = true
			out = append(out, Instruction{Source: src, Text: text})
		}
	}
	for i := range msgs {
		if msgs[i].Role != history.User || i < len(origins) && (origins[i] == OriginSummary || origins[i] == OriginDelegated) {
			continue
		}
		t := HeadBytes(msgs[i].Text(), 256<<10)
		if i < len(origins) && origins[i] == OriginTyped {
			// Only the harness blocks before the words typed.
			rest := WithoutHarnessBlocks(t)
			if j := strings.LastIndex(t, rest); rest != "" && j >= 0 {
				t = t[:j]
			}
		}
		if !strings.Contains(t, "Contents of ") && !strings.Contains(t, "INSTRUCTIONS>") && !strings.Contains(t, "user_instructions>") &&
			!strings.Contains(t, "--- Context from: ") && !strings.Contains(t, "Instructions from: ") {
			continue
		}
		for _, loc := range claudeMdRE.FindAllStringSubmatchIndex(t, -1) {
			rest := t[loc[1]:]
			end := len(rest)
			for _, e := range claudeEnd {
				if j := strings.Index(rest, e); j >= 0 && j < end {
					end = j
				}
			}
			add(t[loc[2]:loc[3]], rest[:end])
		}
		if m := codexInstrRE.FindStringSubmatch(strings.TrimSpace(t)); m != nil {
			add(m[1]+" ("+m[2]+")", m[3])
		}
		for _, m := range userInstrRE.FindAllStringSubmatch(t, -1) {
			add("user_instructions", m[1])
		}
		for _, loc := range contextFromRE.FindAllStringSubmatchIndex(t, -1) {
			src := t[loc[2]:loc[3]]
			rest := t[loc[1]:]
			if j := strings.Index(rest, "--- End of Context from: "+src+" ---"); j >= 0 {
				rest = rest[:j]
			}
			add(src, rest)
		}
		locs := instrFromRE.FindAllStringSubmatchIndex(t, -1)
		for n, loc := range locs {
			end := len(t)
			if n+1 < len(locs) {
				end = locs[n+1][0]
			}
			add(t[loc[2]:loc[3]], t[loc[1]:end])
		}
	}
	return out
}

// PinSource is the source of the text a user pinned with compaction.pin.
const PinSource = "[compaction] pin"

// blockRE matches one carried block (see [FormatInstructions]).
var blockRE = regexp.MustCompile(`(?s)<project-instructions source=("(?:[^"\\]|\\.)*")>\n(.*?)\n</project-instructions>\n?`)

// FormatInstructions writes each instruction in a delimited block that a
// later compaction reads back whole ([ParseInstructions]), whatever
// headings its text holds.
func FormatInstructions(ins []Instruction) string {
	var b strings.Builder
	for _, in := range ins {
		b.WriteString("<project-instructions source=" + strconv.Quote(in.Source) + ">\n")
		b.WriteString(strings.ReplaceAll(in.Text, "</project-instructions>", "</project-instructions >"))
		b.WriteString("\n</project-instructions>\n")
	}
	return b.String()
}

// ParseInstructions returns the blocks [FormatInstructions] wrote in text,
// and text without them.
func ParseInstructions(text string) (ins []Instruction, rest string) {
	if !strings.Contains(text, "<project-instructions ") {
		return nil, text
	}
	for _, m := range blockRE.FindAllStringSubmatch(text, -1) {
		src, err := strconv.Unquote(m[1])
		if err != nil {
			continue
		}
		ins = append(ins, Instruction{Source: src, Text: strings.ReplaceAll(m[2], "</project-instructions >", "</project-instructions>")})
	}
	return ins, blockRE.ReplaceAllString(text, "")
}
