package compaction

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
)

func TestSelectLinesKeepsEvidence(t *testing.T) {
	var b strings.Builder
	b.WriteString("$ make build\n")
	for i := range 400 {
		fmt.Fprintf(&b, "compiling module %d of 400 ... done\n", i)
		if i == 150 {
			b.WriteString("pkg/store/store.go:88:12: undefined: openRoot\n")
		}
		if i == 300 {
			b.WriteString("pkg/store/store.go:88:12: undefined: openRoot\n") // a repeat
			b.WriteString("panic: runtime error: index out of range [3] with length 3\n")
		}
	}
	b.WriteString("make: *** [build] Error 2\nProcess exited with code 2")
	s := b.String()
	for _, n := range []int{100, 200, 400} {
		got := selectLines(approx, s, n)
		if approx.Text(got) > n {
			t.Errorf("n=%d: %d tokens", n, approx.Text(got))
		}
		for _, want := range []string{"$ make build", "Process exited with code 2", "undefined: openRoot", "panic: runtime error", "Error 2"} {
			if !strings.Contains(got, want) {
				t.Errorf("n=%d: lost %q:\n%s", n, want, got)
			}
		}
		if strings.Count(got, "undefined: openRoot") != 1 {
			t.Errorf("n=%d: a repeated error line is kept twice", n)
		}
		if !strings.Contains(got, "lines omitted") {
			t.Errorf("n=%d: no gap marker", n)
		}
	}
	if got := selectLines(approx, "short", 10); got != "short" {
		t.Errorf("short text changed: %q", got)
	}
}

func TestBoundArgsKeepsShortFields(t *testing.T) {
	patch := "*** Begin Patch\n*** Update File: internal/server/handler.go\n" + strings.Repeat("+\tlog.Println(\"x\")\n", 2000) + "*** End Patch"
	args := fmt.Sprintf(`{"command":"apply_patch","input":%q,"workdir":"/repo"}`, patch)
	got := boundArgs(approx, args, 100)
	if approx.Text(got) > 108 {
		t.Errorf("%d tokens", approx.Text(got))
	}
	for _, want := range []string{`"command":"apply_patch"`, `"workdir":"/repo"`, "internal/server/handler.go", "End Patch"} {
		if !strings.Contains(got, want) {
			t.Errorf("lost %q: %s", want, got)
		}
	}
	if boundArgs(approx, `not json `+strings.Repeat("x", 4000), 50) != "{}" {
		t.Error("invalid arguments not replaced by {}")
	}
}

// TestForkPreviewsCarryEvidence: older batches that only fit as previews
// still show every check with its command and exit code, every edited path
// and every distinct error.
func TestForkPreviewsCarryEvidence(t *testing.T) {
	msgs := []history.Message{history.NewText(history.User, "make the build green")}
	noise := strings.Repeat("downloading dependency ... ok\n", 400)
	type check struct{ cmd, err, exit string }
	var checks []check
	var edits []string
	for i := range 30 {
		id := fmt.Sprintf("c%02d", i)
		switch i % 3 {
		case 0:
			c := check{fmt.Sprintf("go build ./pkg%02d/...", i), fmt.Sprintf("pkg%02d/x.go:%d:2: undefined: thing%d", i, i+1, i), fmt.Sprintf("exit status %d", 1+i%2)}
			checks = append(checks, c)
			msgs = append(msgs,
				history.Message{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: id, Name: "bash", Arguments: fmt.Sprintf(`{"command":%q}`, c.cmd)}}},
				history.NewToolResult(id, "bash", noise+c.err+"\n"+noise+c.exit))
		case 1:
			p := fmt.Sprintf("pkg%02d/fixed.go", i)
			edits = append(edits, p)
			msgs = append(msgs,
				history.Message{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: id, Name: "write_file", Arguments: fmt.Sprintf(`{"path":%q,"content":%q}`, p, strings.Repeat("package x\n", 600))}}},
				history.NewToolResult(id, "write_file", "wrote "+p))
		default:
			msgs = append(msgs,
				history.Message{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: id, Name: "read_file", Arguments: fmt.Sprintf(`{"path":"docs/%02d.md"}`, i)}}},
				history.NewToolResult(id, "read_file", noise))
		}
	}
	total := approx.Messages(msgs)
	for _, allowance := range []int{total / 6, total / 3} {
		fork, n, err := selectFork(approx, msgs, allowance)
		if err != nil {
			t.Fatal(err)
		}
		if n > allowance {
			t.Errorf("allowance %d: fork %d tokens", allowance, n)
		}
		text := forkText(fork)
		for _, c := range checks {
			for _, want := range []string{c.cmd, c.err, c.exit} {
				if !strings.Contains(text, want) {
					t.Errorf("allowance %d: fork lacks %q", allowance, want)
				}
			}
		}
		for _, p := range edits {
			if !strings.Contains(text, p) {
				t.Errorf("allowance %d: fork lacks edited path %q", allowance, p)
			}
		}
		if err := history.CheckPairing(fork); err != nil {
			t.Error(err)
		}
	}
}
