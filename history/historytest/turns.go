package historytest

import (
	"fmt"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
)

// Turns is a small conversation of n tool-using turns, each a user request,
// an assistant message with one run_command call, its result of about size
// bytes and the assistant's closing text: enough to compact, for the tests
// of the transports.
func Turns(n, size int) []history.Message {
	var msgs []history.Message
	for i := range n {
		id := fmt.Sprintf("call_%d", i)
		msgs = append(msgs,
			history.NewText(history.User, fmt.Sprintf("Step %d: run the tests of p%d.", i, i)),
			history.Message{Role: history.Assistant, Content: history.Text("Running them."),
				ToolCalls: []history.ToolCall{{ID: id, Name: "run_command", Arguments: fmt.Sprintf(`{"cmd":"go test ./p%d"}`, i)}}},
			history.NewToolResult(id, "run_command", strings.Repeat(fmt.Sprintf("--- FAIL: TestCase%d\n", i), size/20)),
			history.NewText(history.Assistant, fmt.Sprintf("Fixed p%d.", i)),
		)
	}
	return msgs
}
