package summary

import (
	"fmt"

	"github.com/vtcode/vtcode-ls/evidence"
)

// Sections of what the session did that no other section holds whole:
// every commit with its subject, and the simple commands that ran inside
// chains and scripts (the Checks section names each line by its start).
const (
	secCommits  = "Commits (oldest first)"
	secCommands = "Commands run inside chains and scripts (latest last)"
)

// Bounds of the commands list: the latest commands are shown whole (up to
// wholeCommandChars), older ones clipped to olderCommandChars.
const (
	wholeCommands     = 12
	wholeCommandChars = 400
	olderCommandChars = 100
)

// noteCommits lists every commit of the record, oldest first, with its
// subject; the latest ranks first when the list must shrink.
func (f *facts) noteCommits(rec *evidence.Record) {
	n := len(rec.Final.Commits)
	for i, c := range rec.Final.Commits {
		line := c.Ref
		if c.Message != "" {
			line += " " + clip(c.Message, 120)
		}
		if i == n-1 && c.Stat != "" {
			line += " (" + c.Stat + ")"
		}
		f.commits = append(f.commits, entry{text: line, prio: i, order: c.Index, short: c.Ref})
	}
}

// noteCommands lists the distinct simple commands of the record's chains
// and scripts (see [evidence.Record.Commands]) with the outcome of the line
// each last ran in; the latest rank first when the list must shrink.
func (f *facts) noteCommands(rec *evidence.Record) {
	cmds := rec.Commands(commandChars) // a line the checks show whole is not split
	for i, c := range cmds {
		width := olderCommandChars
		if len(cmds)-i <= wholeCommands {
			width = wholeCommandChars
		}
		line := "`" + clip(c.Text, width) + "` (" + lineOutcome(rec.Checks[c.Check]) + ")"
		if c.Runs > 1 {
			line += fmt.Sprintf(", in %d lines", c.Runs)
		}
		f.commands = append(f.commands, entry{text: line, prio: i, order: i})
	}
}

// lineOutcome says how the line a command last ran in ended, in words of
// the line, not of the command (one of its other parts may have failed).
func lineOutcome(c evidence.Check) string {
	switch {
	case c.HasExit:
		return fmt.Sprintf("line exited %d", c.Exit)
	case c.Outcome == evidence.Unknown:
		return "line reported no outcome"
	case c.Outcome == evidence.Running:
		return "line still running"
	case c.Outcome == evidence.Interrupted, c.Outcome == evidence.NotRun:
		return "line did not finish"
	}
	return "line " + statusWord(c.Outcome)
}
