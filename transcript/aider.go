package transcript

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
)

// aider's .aider.chat.history.md: "# aider chat started at …" starts a
// session; "#### " lines are user input; "> " lines are tool and UI output;
// plain text is the model's reply. Slash commands are not sent to the model
// and are skipped, except that the output of a /run the user added to the chat
// becomes a user message, as aider does.

const aiderHeader = "# aider chat started at "

var aiderAnswer = regexp.MustCompile(`^\(y/n/instructions\)\s*(.*)$`)

func isAider(data []byte) bool {
	first, _, _ := bytes.Cut(data, []byte("\n"))
	return strings.HasPrefix(string(first), aiderHeader)
}

type aiderConv struct {
	b     *builder
	lines []string
	i     int
	asst  []string // assistant lines being collected
	user  []string // user lines being collected
}

func parseAider(data []byte) (*Transcript, error) {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	c := &aiderConv{b: newBuilder(FormatAider), lines: strings.Split(text, "\n")}
	fence := false
	afterOutput := false // the last non-blank line was UI output
	for c.i = 0; c.i < len(c.lines); c.i++ {
		l := c.lines[c.i]
		prevBlank := c.i > 0 && strings.TrimSpace(c.lines[c.i-1]) == ""
		if fence && ((prevBlank && strings.HasPrefix(l, "#### ")) || strings.HasPrefix(l, aiderHeader) || strings.HasPrefix(l, "> Tokens:")) {
			fence = false // the reply was cut off inside a code block
		}
		if fence {
			c.flushUser()
			c.asst = append(c.asst, l)
			if isFence(l) {
				fence = false
			}
			continue
		}
		switch {
		case strings.HasPrefix(l, aiderHeader):
			c.flush()
			afterOutput = false
			c.b.t.Conversations++
			c.b.skip("session-header")
		case strings.HasPrefix(l, "####"):
			c.flushAssistant()
			afterOutput = false
			input := strings.TrimRight(strings.TrimPrefix(strings.TrimPrefix(l, "####"), " "), " ")
			if strings.HasPrefix(input, "/") && len(c.user) == 0 {
				c.command(input)
				continue
			}
			c.user = append(c.user, strings.TrimPrefix(input, " "))
		case strings.HasPrefix(l, ">"):
			c.flush()
			c.skipOutput()
			afterOutput = true
			continue
		case strings.TrimSpace(l) == "" && len(c.asst) == 0:
			c.flushUser()
		case len(c.asst) == 0 && afterOutput && c.outputContinues():
			c.b.skip("ui-output")
		default:
			afterOutput = false
			c.flushUser()
			c.asst = append(c.asst, l)
			if isFence(l) {
				fence = true
			}
		}
	}
	c.flush()
	return c.b.done(), nil
}

func isFence(l string) bool {
	t := strings.TrimSpace(l)
	return strings.HasPrefix(t, "```") || strings.HasPrefix(t, "<source>") || strings.HasPrefix(t, "</source>")
}

func (c *aiderConv) flush() {
	c.flushUser()
	c.flushAssistant()
}

func (c *aiderConv) flushUser() {
	if len(c.user) == 0 {
		return
	}
	c.b.add(history.NewText(history.User, strings.Join(c.user, "\n")))
	c.user = nil
}

func (c *aiderConv) flushAssistant() {
	text := strings.TrimSpace(strings.Join(c.asst, "\n"))
	c.asst = nil
	if text != "" {
		c.b.add(history.NewText(history.Assistant, text))
	}
}

// aiderReport matches the UI lines that say what aider did to the
// repository after a reply: the files it edited and the commits it made.
var aiderReport = regexp.MustCompile(`^>\s*(Applied edit to \S+|Commit [0-9a-f]{7,40} \S.*)$`)

// report keeps the edit and commit lines of the UI output block c.lines[from:to]
// as a user-role message flagged isMeta (aider wrote it, not the user), merged
// with a report just before it, so that what changed survives the import.
func (c *aiderConv) report(from, to int) {
	var lines []string
	for _, l := range c.lines[from:to] {
		if m := aiderReport.FindStringSubmatch(strings.TrimRight(l, " ")); m != nil {
			lines = append(lines, m[1])
		}
	}
	if len(lines) == 0 {
		return
	}
	msgs := c.b.t.Messages
	if n := len(msgs); n > 0 && msgs[n-1].Role == history.User && string(msgs[n-1].Extra["isMeta"]) == "true" {
		msgs[n-1].Content = history.Text(msgs[n-1].Text() + "\n" + strings.Join(lines, "\n"))
		return
	}
	m := history.NewText(history.User, strings.Join(lines, "\n"))
	m.Extra = map[string]json.RawMessage{"isMeta": json.RawMessage("true")}
	c.b.add(m)
}

// skipOutput skips a block of "> " lines starting at c.i, with the
// unquoted continuation lines of multi-line output (a commit message).
func (c *aiderConv) skipOutput() {
	start := c.i
	defer func() { c.report(start, c.i+1) }()
	for c.i+1 < len(c.lines) {
		next := c.lines[c.i+1]
		if strings.TrimSpace(next) == "" || strings.HasPrefix(next, "####") || strings.HasPrefix(next, aiderHeader) {
			break
		}
		c.i++
	}
	c.b.skip("ui-output")
}

// outputContinues reports whether the text at c.i continues the UI output
// before it: plain lines followed by more UI output (not the token report that
// ends a reply) belong to a multi-line UI message, such as a commit message.
// It skips them.
func (c *aiderConv) outputContinues() bool {
	for j := c.i; j < len(c.lines); j++ {
		l := c.lines[j]
		switch {
		case strings.HasPrefix(l, "####"), strings.HasPrefix(l, aiderHeader), strings.HasPrefix(l, "> Tokens:"), isFence(l):
			return false
		case strings.HasPrefix(l, ">"):
			c.i = j - 1
			return true
		}
	}
	return false
}

// command handles a slash command at c.i. For /run, the lines up to the
// "Add the output to the chat?" prompt are the live output; when the user
// answered yes, the quoted copy that follows is what aider added to the chat.
func (c *aiderConv) command(input string) {
	c.b.skip("command")
	cmd, args, _ := strings.Cut(input, " ")
	if cmd != "/run" && cmd != "/test" {
		return
	}
	j := c.i + 1
	for ; j < len(c.lines); j++ {
		l := c.lines[j]
		if strings.HasPrefix(l, "####") || strings.HasPrefix(l, aiderHeader) {
			c.i = j - 1
			c.b.skip("ui-output")
			return
		}
		if strings.HasPrefix(l, "> Add the output to the chat?") {
			break
		}
	}
	if j >= len(c.lines) {
		c.i = j
		c.b.skip("ui-output")
		return
	}
	c.b.skip("ui-output")
	j++
	answer := ""
	if j < len(c.lines) {
		if m := aiderAnswer.FindStringSubmatch(strings.TrimSpace(c.lines[j])); m != nil {
			answer = strings.TrimSpace(m[1])
			j++
		}
	}
	var out []string
	for ; j < len(c.lines) && strings.HasPrefix(c.lines[j], ">"); j++ {
		l := strings.TrimPrefix(c.lines[j], ">")
		out = append(out, strings.TrimSuffix(strings.TrimPrefix(l, " "), "  "))
	}
	c.i = j - 1
	if answer == "" || strings.HasPrefix(strings.ToLower(answer), "n") {
		return
	}
	msg := "I ran this command:\n\n" + strings.TrimSpace(args) + "\n\nAnd got this output:\n\n" + strings.TrimRight(strings.Join(out, "\n"), "\n")
	if !strings.HasPrefix(strings.ToLower(answer), "y") {
		msg += "\n\n" + answer
	}
	c.b.add(history.NewText(history.User, msg))
}
