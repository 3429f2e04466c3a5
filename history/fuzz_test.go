package history

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// FuzzMessageJSON decodes arbitrary bytes as a message: decoding never panics,
// and a decoded message re-encodes to valid JSON that decodes to the same
// message and re-encodes to the same bytes, with the same estimates.
func FuzzMessageJSON(f *testing.F) {
	for _, s := range canonicalMessages {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"role":"user","content":"\xff\xfe invalid utf-8"}`))
	f.Add([]byte(`{"role":"user","x":"\xff"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m Message
		if err := json.Unmarshal(data, &m); err != nil {
			return
		}
		b1, err := m.MarshalJSON()
		if err != nil || !json.Valid(b1) {
			t.Fatalf("encoded invalid JSON %q (err %v)", b1, err)
		}
		var m2 Message
		if err := json.Unmarshal(b1, &m2); err != nil {
			t.Fatalf("re-decode %s: %v", b1, err)
		}
		b2, _ := m2.MarshalJSON()
		if !bytes.Equal(b1, b2) {
			t.Fatalf("unstable encoding\n 1: %s\n 2: %s", b1, b2)
		}
		if _, err := json.Marshal(m); err != nil {
			t.Fatalf("json.Marshal: %v", err)
		}
		a := NewEstimator(Approx)
		if x, y := a.Message(&m), a.Message(&m2); x != y || x < MessageOverhead {
			t.Fatalf("approx estimates %d and %d", x, y)
		}
		if len(data) < 4096 {
			o := NewEstimator(O200k)
			if x, y := o.Message(&m), o.Message(&m2); x != y {
				t.Fatalf("o200k estimates %d and %d", x, y)
			}
		}
		_ = m.Text()
		_ = m.HasToolCalls()
	})
}

// historyFromBytes turns arbitrary bytes into a history: a JSON message list
// when data is one, otherwise one message per byte, with few distinct call
// ids so that reuse, reordering and orphans are common.
func historyFromBytes(data []byte) []Message {
	var msgs []Message
	if json.Unmarshal(data, &msgs) == nil {
		return msgs
	}
	msgs = nil
	for i, b := range data {
		id := fmt.Sprintf("call_%d", (b>>4)&3)
		switch b & 7 {
		case 0:
			msgs = append(msgs, NewText(User, fmt.Sprintf("u%d", i)))
		case 1:
			msgs = append(msgs, NewText(System, fmt.Sprintf("s%d", i)))
		case 2:
			msgs = append(msgs, NewText(Assistant, fmt.Sprintf("a%d", i)))
		case 3, 4:
			m := Message{Role: Assistant}
			for c := range int(b>>6) + 1 {
				m.ToolCalls = append(m.ToolCalls, ToolCall{ID: fmt.Sprintf("call_%d", (int(b>>4)+c)&3), Name: "t"})
			}
			msgs = append(msgs, m)
		default:
			msgs = append(msgs, NewToolResult(id, "t", fmt.Sprintf("r%d", i)))
		}
	}
	return msgs
}

// FuzzNormalize: Normalize never panics, never modifies its input, returns a
// list that passes CheckPairing, and is idempotent.
func FuzzNormalize(f *testing.F) {
	f.Add([]byte{3, 5, 0, 0x13, 0x15, 0x25, 1, 0xc3, 5, 5, 0x15})
	f.Add([]byte(`[{"role":"assistant","toolCalls":[{"id":"a","name":"t"},{"id":"a","name":"t"}]},{"role":"system","content":"s"},{"role":"tool","toolCallId":"a"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		in := historyFromBytes(data)
		before, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		out, changed := Normalize(in)
		if err := CheckPairing(out); err != nil {
			t.Fatalf("not normalized: %v", err)
		}
		if changed == Normalized(in) {
			t.Fatalf("changed = %v for valid = %v", changed, Normalized(in))
		}
		if !changed && len(in) > 0 && &out[0] != &in[0] {
			t.Fatal("fast path copied")
		}
		after, _ := json.Marshal(in)
		if !bytes.Equal(before, after) {
			t.Fatal("input modified")
		}
		again, changed := Normalize(out)
		if changed || len(again) != len(out) {
			t.Fatal("not idempotent")
		}
		// Every call is answered once and no message but orphans is lost.
		calls, results, orphans := 0, 0, 0
		p := Pair(in)
		for i, m := range in {
			if m.Role == Tool && p.BatchOf[i] < 0 {
				orphans++
			}
		}
		for _, m := range out {
			calls += len(m.ToolCalls) * btoi(m.Role == Assistant)
			results += btoi(m.Role == Tool)
		}
		if calls != results {
			t.Fatalf("%d calls, %d results", calls, results)
		}
		nonTool := func(ms []Message) int {
			n := 0
			for _, m := range ms {
				n += btoi(m.Role != Tool)
			}
			return n
		}
		if nonTool(in) != nonTool(out) {
			t.Fatal("a non-tool message was lost or added")
		}
		if len(out) > len(in)-orphans+calls {
			t.Fatal("too many messages")
		}
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
