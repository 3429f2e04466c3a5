package history

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// build makes a history from a compact description:
//
//	user:TEXT  sys:TEXT  asst:TEXT  call:ID,ID,...  res:ID:TEXT
//
// Calls are named "t_<id>".
func build(spec ...string) []Message {
	var out []Message
	for _, s := range spec {
		kind, rest, _ := strings.Cut(s, ":")
		switch kind {
		case "user":
			out = append(out, NewText(User, rest))
		case "sys":
			out = append(out, NewText(System, rest))
		case "asst":
			out = append(out, NewText(Assistant, rest))
		case "call":
			m := Message{Role: Assistant}
			for _, id := range strings.Split(rest, ",") {
				m.ToolCalls = append(m.ToolCalls, ToolCall{ID: id, Name: "t_" + id, Arguments: `{}`})
			}
			out = append(out, m)
		case "res":
			id, text, _ := strings.Cut(rest, ":")
			out = append(out, NewToolResult(id, "t_"+id, text))
		default:
			panic("bad spec " + s)
		}
	}
	return out
}

// describe is the inverse of build; a synthetic result reads res:ID:<interrupted>.
func describe(msgs []Message) []string {
	var out []string
	for _, m := range msgs {
		switch {
		case m.HasToolCalls():
			var ids []string
			for _, tc := range m.ToolCalls {
				ids = append(ids, tc.ID)
			}
			out = append(out, "call:"+strings.Join(ids, ","))
		case m.Role == Tool:
			text := m.Text()
			if text == InterruptedResult {
				text = "<interrupted>"
			}
			out = append(out, "res:"+m.ToolCallID+":"+text)
		case m.Role == User:
			out = append(out, "user:"+m.Text())
		case m.Role == System:
			out = append(out, "sys:"+m.Text())
		default:
			out = append(out, "asst:"+m.Text())
		}
	}
	return out
}

func snapshot(t *testing.T, msgs []Message) string {
	t.Helper()
	b, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestNormalize(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []string
		want []string
	}{
		{
			name: "missing result gets a synthetic one after its batch",
			in:   []string{"user:go", "call:a,b", "res:a:A", "user:next"},
			want: []string{"user:go", "call:a,b", "res:a:A", "res:b:<interrupted>", "user:next"},
		},
		{
			name: "trailing call without results",
			in:   []string{"user:go", "call:a"},
			want: []string{"user:go", "call:a", "res:a:<interrupted>"},
		},
		{
			name: "orphan result dropped",
			in:   []string{"user:go", "res:x:X", "call:a", "res:a:A", "res:z:Z"},
			want: []string{"user:go", "call:a", "res:a:A"},
		},
		{
			name: "result before its call is an orphan",
			in:   []string{"res:a:early", "call:a", "res:a:A"},
			want: []string{"call:a", "res:a:A"},
		},
		{
			name: "results moved next to their call in call order",
			in:   []string{"call:a,b,c", "res:c:C", "res:a:A", "res:b:B"},
			want: []string{"call:a,b,c", "res:a:A", "res:b:B", "res:c:C"},
		},
		{
			name: "intervening system message moves after the results",
			in:   []string{"call:a,b", "res:a:A", "sys:reminder", "res:b:B", "user:u"},
			want: []string{"call:a,b", "res:a:A", "res:b:B", "sys:reminder", "user:u"},
		},
		{
			name: "results after a later batch",
			in:   []string{"call:a", "call:b", "res:b:B", "res:a:A"},
			want: []string{"call:a", "res:a:A", "call:b", "res:b:B"},
		},
		{
			name: "reused ids pair with the nearest earlier unanswered call",
			in: []string{
				"user:1", "call:call_0,call_1", "res:call_1:B1", "res:call_0:A1",
				"user:2", "call:call_0,call_1", "res:call_0:A2", "sys:s", "res:call_1:B2",
				"user:3", "call:call_0", "res:call_0:A3",
			},
			want: []string{
				"user:1", "call:call_0,call_1", "res:call_0:A1", "res:call_1:B1",
				"user:2", "call:call_0,call_1", "res:call_0:A2", "res:call_1:B2", "sys:s",
				"user:3", "call:call_0", "res:call_0:A3",
			},
		},
		{
			name: "reused id: a stale call stays interrupted, the newer one is answered",
			in:   []string{"call:call_0", "user:u", "call:call_0", "res:call_0:late"},
			want: []string{"call:call_0", "res:call_0:<interrupted>", "user:u", "call:call_0", "res:call_0:late"},
		},
		{
			name: "an id repeated inside one message is answered in call order",
			in:   []string{"call:x,y,x", "res:x:first", "res:y:Y", "res:x:second"},
			want: []string{"call:x,y,x", "res:x:first", "res:y:Y", "res:x:second"},
		},
		{
			name: "repeated id answered out of order",
			in:   []string{"call:x,y,x", "res:y:Y", "res:x:first", "res:x:second"},
			want: []string{"call:x,y,x", "res:x:first", "res:y:Y", "res:x:second"},
		},
		{
			name: "duplicate result for one call: the extra one is an orphan",
			in:   []string{"call:a", "res:a:A", "res:a:again"},
			want: []string{"call:a", "res:a:A"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := build(tc.in...)
			before := snapshot(t, in)
			out, changed := Normalize(in)
			if got := describe(out); !slices.Equal(got, tc.want) {
				t.Errorf("Normalize\n got %q\nwant %q", got, tc.want)
			}
			if valid := Normalized(in); changed == valid {
				t.Errorf("changed = %v for a history that is valid = %v", changed, valid)
			}
			if snapshot(t, in) != before || !slices.Equal(describe(in), tc.in) {
				t.Error("input modified")
			}
			if err := CheckPairing(out); err != nil {
				t.Errorf("output not normalized: %v", err)
			}
			if !Normalized(out) {
				t.Error("Normalized(out) = false")
			}
			again, changed := Normalize(out)
			if changed || &again[0] != &out[0] {
				t.Error("Normalize is not idempotent through the fast path")
			}
		})
	}
}

func TestNormalizeSyntheticResult(t *testing.T) {
	in := build("call:a")
	in[0].ToolCalls[0].Name = "read_file"
	out, _ := Normalize(in)
	want := Message{Role: Tool, ToolCallID: "a", ToolName: "read_file", Content: Text(InterruptedResult)}
	if !Equal(out[1], want) {
		b, _ := json.Marshal(out[1])
		t.Errorf("synthetic result = %s", b)
	}
	if InterruptedResult != "canceled: tool execution was interrupted; this placeholder keeps the call/result pairing valid." {
		t.Error("InterruptedResult text changed")
	}
}

func TestNormalizeFastPath(t *testing.T) {
	in := build("sys:s", "user:1", "call:call_0,call_1", "res:call_0:A", "res:call_1:B", "asst:done",
		"user:2", "call:call_0", "res:call_0:C", "sys:reminder", "call:call_0,call_0", "res:call_0:D", "res:call_0:E")
	e := NewEstimator(Approx)
	e.Messages(in)
	out, changed := Normalize(in)
	if changed {
		t.Fatal("valid history reported as changed")
	}
	if len(out) != len(in) || &out[0] != &in[0] {
		t.Fatal("fast path copied the history")
	}
	if _, ok := e.Cached(&out[3]); !ok {
		t.Error("estimate lost")
	}
	// The empty history and a history without tools are valid too.
	if out, changed := Normalize(nil); changed || out != nil {
		t.Error("nil history")
	}
	plain := build("user:a", "asst:b")
	if out, changed := Normalize(plain); changed || &out[0] != &plain[0] {
		t.Error("plain history copied")
	}
}

func TestNormalizeKeepsMessagesVerbatim(t *testing.T) {
	var in []Message
	must(t, json.Unmarshal([]byte(`[
		{"role":"assistant","toolCalls":[{"id":"c1","name":"read","thoughtSignature":"s","x":1},{"id":"c2","name":"grep"}],"reasoningDetails":[{"a":1}],"meta":true},
		{"role":"tool","toolCallId":"c2","toolName":"grep","content":[{"type":"text","text":"g"},{"type":"image","url":"u"}],"extra":[1]},
		{"role":"system","content":"between"},
		{"role":"tool","toolCallId":"c1","toolName":"read","content":"r","id":"r1"}
	]`), &in))
	e := NewEstimator(O200k)
	e.Messages(in)
	out, changed := Normalize(in)
	if !changed || len(out) != 4 {
		t.Fatalf("changed=%v len=%d", changed, len(out))
	}
	for oi, ii := range []int{0, 3, 1, 2} {
		if !Equal(out[oi], in[ii]) {
			t.Errorf("out[%d] differs from in[%d]", oi, ii)
		}
		if _, ok := e.Cached(&out[oi]); !ok {
			t.Errorf("out[%d] lost its cached estimate", oi)
		}
	}
}

func TestPair(t *testing.T) {
	msgs := build("user:u", "call:a,b", "res:b:B", "res:x:orphan", "call:a", "res:a:A2", "res:a:A1")
	p := Pair(msgs)
	want := []Batch{{Assistant: 1, Results: []int{6, 2}}, {Assistant: 4, Results: []int{5}}}
	if !reflect.DeepEqual(p.Batches, want) {
		t.Errorf("Batches = %+v, want %+v", p.Batches, want)
	}
	if wantOf := []int{-1, 0, 0, -1, 1, 1, 0}; !slices.Equal(p.BatchOf, wantOf) {
		t.Errorf("BatchOf = %v, want %v", p.BatchOf, wantOf)
	}
	if !p.Batches[0].Complete() || (Batch{Results: []int{1, -1}}).Complete() {
		t.Error("Complete")
	}
}

func TestCheckPairing(t *testing.T) {
	for _, tc := range []struct {
		spec []string
		ok   bool
	}{
		{[]string{"user:u", "call:a", "res:a:x"}, true},
		{[]string{"call:a,b", "res:a:x", "res:b:y", "sys:s"}, true},
		{[]string{"call:a,b", "res:b:y", "res:a:x"}, false},
		{[]string{"call:a", "sys:s", "res:a:x"}, false},
		{[]string{"call:a"}, false},
		{[]string{"res:a:x"}, false},
		{[]string{"call:a", "res:a:x", "res:a:y"}, false},
	} {
		err := CheckPairing(build(tc.spec...))
		if (err == nil) != tc.ok || Normalized(build(tc.spec...)) != tc.ok {
			t.Errorf("%q: CheckPairing = %v", tc.spec, err)
		}
	}
}

func TestGroups(t *testing.T) {
	msgs := build(
		"sys:s",                       // 0: before any group
		"user:1", "call:a", "res:a:A", // 1-3: complete
		"user:2", "call:b,c", "res:b:B", // 4-6: c unanswered
		"user:3", "asst:plain", // 7-8: no calls
		"user:4", "call:d", "user:5", "res:d:D", // 9-10: d answered in the next group; 11-12
	)
	got := Groups(msgs)
	want := []Group{
		{Start: 1, End: 4, Complete: true},
		{Start: 4, End: 7, Complete: false},
		{Start: 7, End: 9, Complete: true},
		{Start: 9, End: 11, Complete: false},
		{Start: 11, End: 13, Complete: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Groups =\n %+v\nwant\n %+v", got, want)
	}
	if g := Groups(build("sys:s", "call:a", "res:a:x")); len(g) != 0 {
		t.Errorf("no user message: %+v", g)
	}
	norm, _ := Normalize(msgs)
	for _, g := range Groups(norm) {
		if !g.Complete {
			t.Errorf("normalized history has incomplete group %+v", g)
		}
	}
}
