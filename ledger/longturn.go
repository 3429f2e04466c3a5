package ledger

import (
	"fmt"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
)

// LongTurnName names the long-turn scenario ([LongTurn]) in the ledger.
const LongTurnName = "long-turn (1 request, 40 read_file batches, failing go test)"

// The long-turn scenario's strings that a summary must keep.
const (
	longTurnGoal     = "XDG_CONFIG_HOME"
	longTurnRule     = "do not change the public API"
	longTurnCheck    = "go test ./internal/config/..."
	longTurnFailure  = "TestLoadHonoursXDG"
	longTurnFirst    = "internal/config/loader.go"
	longTurnFollowUp = "run the whole suite before you stop"
)

// LongTurnFacts returns the facts of the long-turn scenario.
func LongTurnFacts() []string {
	return []string{longTurnGoal, longTurnRule, longTurnCheck, longTurnFailure, longTurnFirst, longTurnFollowUp}
}

// LongTurn returns the commonest long session shape: one user request, then
// 40 read_file batches of about 1,500 tokens each, a failing go test at the
// end, and a short user follow-up.
func LongTurn() []history.Message {
	msgs := []history.Message{
		history.NewText(history.System, "You are a coding agent working in a Go repository."),
		history.NewText(history.User, "The config loader ignores "+longTurnGoal+" when it is set. Find why and fix it; "+longTurnRule+"."),
	}
	for i := range 40 {
		path := fmt.Sprintf("internal/config/part%02d.go", i)
		if i == 0 {
			path = longTurnFirst
		}
		id := fmt.Sprintf("call_read_%02d", i)
		call := history.Message{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: id, Name: "read_file", Arguments: fmt.Sprintf(`{"path":%q}`, path)}}}
		if i%8 == 0 {
			call.Content = history.Text(fmt.Sprintf("Reading %s to see how the search path is built.", path))
		}
		msgs = append(msgs, call, history.NewToolResult(id, "read_file", fileBody(i)))
	}
	msgs = append(msgs,
		history.Message{Role: history.Assistant, Content: history.Text("Running the config tests."), ToolCalls: []history.ToolCall{{ID: "call_test", Name: "bash", Arguments: fmt.Sprintf(`{"command":%q}`, longTurnCheck)}}},
		history.NewToolResult("call_test", "bash", "--- FAIL: "+longTurnFailure+" (0.00s)\n    loader_test.go:42: config dir = \"/home/u/.config/app\", want \"/tmp/xdg/app\"\nFAIL\nFAIL\tgithub.com/acme/app/internal/config\t0.012s\nFAIL\nexit status 1"),
		history.NewText(history.Assistant, "The test fails: the loader builds the search path before it reads the environment."),
		history.NewText(history.User, "Keep going, and "+longTurnFollowUp+"."),
	)
	return msgs
}

// fileBody returns about 1,500 tokens of Go source for batch i.
func fileBody(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "package config\n\n// Part %d of the loader.\n", i)
	for j := range 52 {
		fmt.Fprintf(&b, "func part%02dStep%03d(dirs []string, env map[string]string) []string { return append(dirs, env[\"K%d\"]) }\n", i, j, j)
	}
	return b.String()
}
