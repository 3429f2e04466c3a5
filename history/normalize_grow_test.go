package history

import (
	"encoding/json"
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// genPaired draws a list of user messages, assistant messages with calls
// (ids sometimes reused), and results in order, out of order, missing,
// duplicated or orphaned.
func genPaired(t *rapid.T) []Message {
	var msgs []Message
	for range rapid.IntRange(0, 12).Draw(t, "events") {
		switch rapid.IntRange(0, 4).Draw(t, "event") {
		case 0:
			msgs = append(msgs, NewText(User, "u"))
		case 1:
			msgs = append(msgs, NewToolResult(rapid.SampledFrom([]string{"a", "b", "z"}).Draw(t, "orphan"), "run", "o"))
		default:
			k := rapid.IntRange(1, 3).Draw(t, "calls")
			a := Message{Role: Assistant}
			for c := range k {
				id := fmt.Sprintf("c%d_%d", len(msgs), c)
				if rapid.IntRange(0, 4).Draw(t, "reuse") == 0 {
					id = rapid.SampledFrom([]string{"a", "b"}).Draw(t, "id")
				}
				a.ToolCalls = append(a.ToolCalls, ToolCall{ID: id, Name: "run"})
			}
			msgs = append(msgs, a)
			for _, c := range rapid.Permutation(a.ToolCalls).Draw(t, "order") {
				if rapid.IntRange(0, 3).Draw(t, "answered") > 0 {
					msgs = append(msgs, NewToolResult(c.ID, c.Name, "r"))
				}
			}
		}
	}
	return msgs
}

func encodeAll(t *rapid.T, msgs []Message) string {
	b, err := json.Marshal(msgs)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(b)
}

// NormalizeGrow returns what Normalize returns, never changes the messages
// it was given, and extends the list in place only past its end.
func TestPropertyNormalizeGrow(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		msgs := genPaired(t)
		spare := rapid.IntRange(0, 4).Draw(t, "spare")
		in := append(make([]Message, 0, len(msgs)+spare), msgs...)
		before := encodeAll(t, in)
		want, wantChanged := Normalize(msgs)
		got, changed := NormalizeGrow(in)
		if len(got)+len(want) > 0 && encodeAll(t, got) != encodeAll(t, want) || changed != wantChanged {
			t.Fatalf("NormalizeGrow differs from Normalize:\n got %s\nwant %s", encodeAll(t, got), encodeAll(t, want))
		}
		if encodeAll(t, in) != before {
			t.Fatalf("the input changed")
		}
	})
}

// A history that grew by an assistant message whose calls are unanswered is
// repaired by appending: the result shares the input's array.
func TestNormalizeGrowAppends(t *testing.T) {
	msgs := make([]Message, 0, 16)
	msgs = append(msgs, NewText(User, "go"),
		Message{Role: Assistant, ToolCalls: []ToolCall{{ID: "1", Name: "run"}}}, NewToolResult("1", "run", "ok"),
		Message{Role: Assistant, ToolCalls: []ToolCall{{ID: "2", Name: "run"}, {ID: "3", Name: "grep"}}}, NewToolResult("2", "run", "ok"))
	got, changed := NormalizeGrow(msgs)
	if !changed || len(got) != 6 || &got[0] != &msgs[0] {
		t.Fatalf("got %d messages (changed %v, shared %v), want 6 sharing the input's array", len(got), changed, len(got) > 0 && &got[0] == &msgs[0])
	}
	if r := got[5]; r.ToolCallID != "3" || r.Text() != InterruptedResult {
		t.Fatalf("last message %+v, want the placeholder result of call 3", r)
	}
}
