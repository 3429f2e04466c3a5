package compaction

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
	"pgregory.net/rapid"
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
		got := selectLines(approx, s, n, nil)
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
	if got := selectLines(approx, "short", 10, nil); got != "short" {
		t.Errorf("short text changed: %q", got)
	}
}

func TestBoundArgsKeepsShortFields(t *testing.T) {
	patch := "*** Begin Patch\n*** Update File: internal/server/handler.go\n" + strings.Repeat("+\tlog.Println(\"x\")\n", 2000) + "*** End Patch"
	args := fmt.Sprintf(`{"command":"apply_patch","input":%q,"workdir":"/repo"}`, patch)
	got := boundArgs(approx, args, 100, nil)
	if approx.Text(got) > 108 {
		t.Errorf("%d tokens", approx.Text(got))
	}
	for _, want := range []string{`"command":"apply_patch"`, `"workdir":"/repo"`, "internal/server/handler.go", "End Patch"} {
		if !strings.Contains(got, want) {
			t.Errorf("lost %q: %s", want, got)
		}
	}
	if boundArgs(approx, `not json `+strings.Repeat("x", 4000), 50, nil) != "{}" {
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
		fork, n, err := selectFork(context.Background(), approx, msgs, allowance)
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

// TestPreviewKeepsEvidenceAmongNoise: a failing build whose output is
// hundreds of distinct warnings with one real error in the middle keeps,
// in a small preview, the error the evidence record names and the exit code.
func TestPreviewKeepsEvidenceAmongNoise(t *testing.T) {
	var b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&b, "warning: flag -old%d is deprecated\n", i)
		if i == 150 {
			b.WriteString("pkg/a.go:3:1: undefined: Foo\n")
		}
	}
	b.WriteString("exit status 2")
	msgs := []history.Message{
		history.NewText(history.User, "build it"),
		{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"go build ./..."}`}}},
		history.NewToolResult("c1", "bash", b.String()),
	}
	for i := range 6 {
		id := fmt.Sprintf("r%d", i)
		msgs = append(msgs,
			history.Message{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: id, Name: "read_file", Arguments: fmt.Sprintf(`{"path":"docs/%d.md"}`, i)}}},
			history.NewToolResult(id, "read_file", strings.Repeat("plain prose line\n", 300)))
	}
	fork, _, err := selectFork(context.Background(), approx, msgs, 1200)
	if err != nil {
		t.Fatal(err)
	}
	var result *history.Message
	for i := range fork {
		if fork[i].ToolCallID == "c1" {
			result = &fork[i]
		}
	}
	if result == nil {
		t.Fatal("the failing build is not in the fork")
	}
	if result.Text() == msgs[2].Text() {
		t.Fatal("the build output was not previewed; the test needs a smaller allowance")
	}
	if !strings.Contains(result.Text(), "pkg/a.go:3:1: undefined: Foo") || !exitShown(result.Text(), 2) {
		t.Errorf("preview lacks the error or the exit code:\n%s", result.Text())
	}
}

// TestHintNoteStatesWhatTheCutHides: when a preview is too small for the
// lines themselves, a bracketed note still states the exit code, the error
// and a command too long to stay whole in its call.
func TestHintNoteStatesWhatTheCutHides(t *testing.T) {
	long := "make test ARGS='" + strings.Repeat("-v ", 100) + "'"
	h := &hint{command: long, exit: 2, hasExit: true, errors: []string{"E   assert 1 == 2"}}
	out := strings.Repeat("collected item\n", 500) + "E   assert 1 == 2\n" + strings.Repeat("more output\n", 500) + "Process exited with code 2"
	m := evidencePreview(approx, history.NewToolResult("c9", "bash", out), h, 90)
	if approx.Message(&m) > 90 || m.ToolCallID != "c9" {
		t.Fatalf("preview = %d tokens, id %q", approx.Message(&m), m.ToolCallID)
	}
	text := m.Text()
	for _, want := range []string{"command `make test ARGS=", "assert 1 == 2"} {
		if !strings.Contains(text, want) {
			t.Errorf("preview lacks %q:\n%s", want, text)
		}
	}
	if !exitShown(text, 2) {
		t.Errorf("exit code not shown:\n%s", text)
	}
}

// TestForkKeepsEveryUserRequest: when not even previews of every older
// message fit, what the user typed is previewed before the agent's replies.
func TestForkKeepsEveryUserRequest(t *testing.T) {
	var msgs []history.Message
	for i := range 40 {
		msgs = append(msgs,
			history.NewText(history.User, fmt.Sprintf("request %02d: never touch vendor/ ", i)+strings.Repeat("context ", 200)),
			msg(history.Assistant, fmt.Sprintf("a%02d", i), 3000))
	}
	fork, n, err := selectFork(context.Background(), approx, msgs, 6000)
	if err != nil {
		t.Fatal(err)
	}
	if n > 6000 {
		t.Errorf("fork = %d tokens", n)
	}
	text := forkText(fork)
	for i := range 40 {
		if !strings.Contains(text, fmt.Sprintf("request %02d: never touch vendor/", i)) {
			t.Errorf("request %02d is missing from the fork", i)
		}
	}
	if err := history.CheckPairing(fork); err != nil {
		t.Error(err)
	}
}

// TestForkPinsTheTypedGoal: the goal pinned whole in a bounded fork is the
// first message the user typed, not harness text injected before it.
func TestForkPinsTheTypedGoal(t *testing.T) {
	goal := "Fix the CSV parser so quoted fields keep their commas. " + strings.Repeat("Details of the bug report. ", 80)
	msgs := []history.Message{
		history.NewText(history.User, "<system-reminder>\nAs you answer the user's questions, you can use the following context: today is Monday.\n</system-reminder>"),
		history.NewText(history.User, goal),
	}
	msgs = append(msgs, conv(30, 29, 971)...)
	fork, _, err := selectFork(context.Background(), approx, msgs, 8000)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(fork, func(m history.Message) bool { return m.Text() == goal }) {
		t.Error("the typed goal is not in the fork whole")
	}
}

// TestSelectForkProperties: for random histories and allowances, a fork is
// within the allowance, keeps pairing valid, keeps the original order and
// ids, never grows a message, and keeps the newest message (whole or
// previewed) whenever it succeeds.
func TestSelectForkProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var msgs []history.Message
		n := rapid.IntRange(1, 40).Draw(rt, "units")
		for i := range n {
			switch rapid.IntRange(0, 3).Draw(rt, fmt.Sprint("kind", i)) {
			case 0:
				msgs = append(msgs, msg(history.User, fmt.Sprintf("u%d", i), rapid.IntRange(6, 2000).Draw(rt, fmt.Sprint("ut", i))))
			case 1:
				msgs = append(msgs, msg(history.Assistant, fmt.Sprintf("a%d", i), rapid.IntRange(6, 2000).Draw(rt, fmt.Sprint("at", i))))
			default:
				calls := rapid.IntRange(1, 3).Draw(rt, fmt.Sprint("calls", i))
				m := history.Message{Role: history.Assistant}
				for c := range calls {
					m.ToolCalls = append(m.ToolCalls, history.ToolCall{ID: fmt.Sprintf("c%d_%d", i, c), Name: "bash", Arguments: fmt.Sprintf(`{"command":"go test ./p%d/..."}`, c)})
				}
				msgs = append(msgs, m)
				for c := range calls {
					out := strings.Repeat("ok line\n", rapid.IntRange(0, 3000).Draw(rt, fmt.Sprint("out", i, c))) + fmt.Sprintf("exit status %d", c)
					msgs = append(msgs, history.NewToolResult(fmt.Sprintf("c%d_%d", i, c), "bash", out))
				}
			}
		}
		allowance := rapid.IntRange(0, approx.Messages(msgs)+100).Draw(rt, "allowance")
		fork, tokens, err := selectFork(context.Background(), approx, msgs, allowance)
		if err != nil {
			var be *budgetError
			if !errors.As(err, &be) {
				rt.Fatalf("unexpected error %v", err)
			}
			return
		}
		if tokens > allowance || tokens != approx.Messages(fork) {
			rt.Fatalf("fork %d tokens (counted %d), allowance %d", approx.Messages(fork), tokens, allowance)
		}
		if err := history.CheckPairing(fork); err != nil {
			rt.Fatalf("pairing: %v", err)
		}
		j := 0
		for _, f := range fork {
			for j < len(msgs) && !sameMessage(msgs[j], f) {
				j++
			}
			if j == len(msgs) {
				rt.Fatalf("fork message %s %.20q is not in the history, in order", f.Role, f.Text())
			}
			if approx.Message(&f) > approx.Message(&msgs[j]) {
				rt.Fatalf("message %d grew", j)
			}
			j++
		}
		if last := fork[len(fork)-1]; last.Role != msgs[len(msgs)-1].Role || last.ToolCallID != msgs[len(msgs)-1].ToolCallID {
			rt.Fatalf("newest message missing")
		}
	})
}

// sameMessage reports whether f is m or a preview of it: the same role and
// ids, or, for plain text, the same leading label.
func sameMessage(m, f history.Message) bool {
	switch {
	case m.Role != f.Role || m.ToolCallID != f.ToolCallID || len(m.ToolCalls) != len(f.ToolCalls):
		return false
	case m.Role == history.Tool:
		return true
	case len(m.ToolCalls) > 0:
		return m.ToolCalls[0].ID == f.ToolCalls[0].ID
	}
	label := firstWord(m.Text())
	return f.Text() == "" || f.Text() == label || strings.HasPrefix(f.Text(), label+" ") // cut to nothing, or its head kept
}

func firstWord(s string) string {
	if i := strings.IndexAny(s, " \n"); i >= 0 {
		return s[:i]
	}
	return s
}
