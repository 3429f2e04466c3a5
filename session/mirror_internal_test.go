package session

import (
	"slices"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
)

func digests(msgs ...history.Message) []string {
	keys := make([]string, len(msgs))
	for i := range msgs {
		keys[i] = history.MessageKey(&msgs[i])
	}
	return keys
}

// The mirror's reading of a request, one row per disposition, with the
// spelling the proxy's stats show.
func TestMirrorClassify(t *testing.T) {
	u1, a1 := history.NewText(history.User, "fix the failing test"), history.NewText(history.Assistant, "Looking.")
	u2, edit := history.NewText(history.User, "now run it"), history.NewText(history.User, "run it twice")
	summary := "The user asked to fix the failing test in a_test.go; the assistant found the cause."
	recorded := digests(u1, a1, u2)
	cases := []struct {
		name string
		px   mirror
		r    ProxyRequest
		want string
		c    int
	}{
		{"a first request", mirror{}, ProxyRequest{Messages: []history.Message{u1}}, "append", 0},
		{"the next turn", mirror{keys: recorded}, ProxyRequest{Messages: []history.Message{u1, a1, u2, history.NewText(history.Assistant, "Ran.")}}, "append", 3},
		{"a retry of an earlier request", mirror{keys: recorded}, ProxyRequest{Messages: []history.Message{u1, a1}}, "replay", 2},
		{"an edit of the last message", mirror{keys: recorded}, ProxyRequest{Messages: []history.Message{u1, a1, edit}}, "branch", 2},
		{"a token count", mirror{keys: recorded}, ProxyRequest{Kind: ProxyCount, Messages: []history.Message{u1}}, "count", 1},
		{"the agent's compaction request", mirror{keys: recorded}, ProxyRequest{Kind: ProxyAgentCompaction, Messages: []history.Message{u1, a1, u2}}, "side", 3},
		{"after the agent's compaction answer", mirror{keys: recorded, awaiting: true}, ProxyRequest{Messages: []history.Message{history.NewText(history.User, summary)}}, "window", 0},
		{"another window id", mirror{keys: recorded, window: "w1"}, ProxyRequest{WindowID: "w2", Messages: []history.Message{u1, edit}}, "window", 1},
		{"a resumed session compacted without a record", mirror{unmapped: true}, ProxyRequest{Messages: []history.Message{u1}}, "window", 0},
		{"a window carrying a recent compaction answer", mirror{keys: recorded, summaries: []string{summary}},
			ProxyRequest{Messages: []history.Message{history.NewText(history.User, "<summary>\n"+summary+"\n</summary>")}}, "window", 0},
		{"a conversation sharing nothing", mirror{keys: recorded, summaries: []string{summary}}, ProxyRequest{Messages: []history.Message{edit}}, "branch", 0},
	}
	for _, tc := range cases {
		d, c := tc.px.classify(tc.r, digests(tc.r.Messages...))
		if d.String() != tc.want || c != tc.c {
			t.Errorf("%s: %s sharing %d, want %s sharing %d", tc.name, d, c, tc.want, tc.c)
		}
	}
}

// After a compaction made while the agent's last call had no result, the
// live history is a summary, the call, a placeholder result and the
// agent's real one: the mirror maps the agent's messages onto it (the
// placeholder stands for none of them), and a restarted daemon reads the
// same alignment back from its record.
func TestMirrorAlignSurvivesARestart(t *testing.T) {
	u1, a1 := history.NewText(history.User, "fix the failing test"), history.NewText(history.Assistant, "Looking.")
	call := history.Message{Role: history.Assistant, ToolCalls: []history.ToolCall{{ID: "c1", Name: "read", Arguments: `{"path":"a_test.go"}`}}}
	result := history.NewToolResult("c1", "read", "package a")
	live := []history.Message{history.NewText(history.User, "Summary: the user asked to fix a test."), call,
		history.NewToolResult("c1", "read", history.InterruptedResult), result}
	px := mirror{init: true, keys: digests(u1, a1, call, result)}
	if px.current(live, 1) {
		t.Fatal("a compacted history taken as one for one")
	}
	px.align(live, 1)
	if px.covered != 2 || px.head != 1 || px.extra != 1 {
		t.Fatalf("aligned: covered %d, head %d, extra %d; want 2, 1, 1", px.covered, px.head, px.extra)
	}
	if got := px.liveIndex(live, 2, px.keys[2]); got != 1 {
		t.Errorf("the agent's call maps onto live message %d, want 1", got)
	}
	d, ok := px.saved(1)
	if !ok {
		t.Fatal("a compacted alignment is not recorded")
	}
	var again mirror
	if !again.load(live, 1, &d) {
		t.Fatal("the record does not fit the history it was made for")
	}
	if !slices.Equal(again.keys, px.keys) || again.covered != px.covered || again.head != px.head || again.extra != px.extra {
		t.Errorf("after a restart: keys %d, covered %d, head %d, extra %d; want %d, %d, %d, %d",
			len(again.keys), again.covered, again.head, again.extra, len(px.keys), px.covered, px.head, px.extra)
	}
	if d, _ := again.classify(ProxyRequest{Messages: []history.Message{u1, a1, call, result, history.NewText(history.Assistant, "Fixed.")}}, digests(u1, a1, call, result, history.NewText(history.Assistant, "Fixed."))); d != ProxyAppend {
		t.Errorf("the agent's next request after a restart is %s, want append", d)
	}
	var bad mirror
	short := mirrorData{Covered: 3, Head: 1, Prefix: d.Prefix}
	if bad.load(live, 1, &short) || !bad.unmapped {
		t.Error("a record that does not fit the history was taken")
	}
}
