package proxywire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
)

func FuzzMembers(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"a ] } \" \\ ["},{"x":[1,2,{"y":"}"}]}],"n":-1.5e3,"t":true}`))
	f.Add([]byte(` { "messages" : [ ] , "a" : null } `))
	f.Add([]byte(`{"input":[{"type":"message"}],"messages":"str"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		members, array, elems, err := Members(body, "messages")
		if !json.Valid(body) {
			return // invalid bodies may or may not be refused; never a panic
		}
		want, wantElems, ok, werr := ArraySpans(body, "messages")
		if werr != nil {
			if err == nil && array != (Span{}) {
				t.Fatalf("Members accepted what the decoder refused: %v", werr)
			}
			return
		}
		if err != nil && !hasDuplicateMember(body) {
			t.Fatalf("Members refused a valid object: %v", err)
		}
		if err == nil && hasDuplicateMember(body) {
			t.Fatalf("Members accepted duplicate members")
		}
		if err != nil {
			return
		}
		if !ok {
			if array != (Span{}) && string(members["messages"]) != "" && body[array.Start] == '[' {
				t.Fatalf("Members found an array the decoder did not")
			}
			return
		}
		if array != want || len(elems) != len(wantElems) {
			t.Fatalf("array %v %d elems, decoder %v %d", array, len(elems), want, len(wantElems))
		}
		for i := range elems {
			if elems[i] != wantElems[i] {
				t.Fatalf("element %d at %v, decoder %v", i, elems[i], wantElems[i])
			}
		}
		for k, v := range members {
			if !json.Valid(v) {
				t.Fatalf("member %q is not a JSON value: %q", k, v)
			}
		}
	})
}

func TestSetMember(t *testing.T) {
	for _, c := range []struct{ obj, key, value, want string }{
		{`{"type":"tool_result","content":"big \"}\" text","is_error":true}`, "content", `"stub"`, `{"type":"tool_result","content":"stub","is_error":true}`},
		{`{ "a" : [1,{"content":2}] , "content" : {"x":"}"} }`, "content", `3`, `{ "a" : [1,{"content":2}] , "content" : 3 }`},
		{`{"a":1}`, "content", `"s"`, `{"a":1,"content":"s"}`},
		{`{}`, "content", `"s"`, `{"content":"s"}`},
		{`[1]`, "content", `"s"`, `[1]`},
	} {
		got := string(SetMember([]byte(c.obj), c.key, []byte(c.value)))
		if got != c.want {
			t.Errorf("SetMember(%s, %s) = %s, want %s", c.obj, c.key, got, c.want)
		}
	}
}

func TestMembersRefusesDuplicateMembers(t *testing.T) {
	for _, body := range []string{
		`{"messages":[{"a":1}],"system":"s","messages":[{"b":2}]}`,
		`{"model":"a","model":"b","messages":[]}`,
		`{"messages":[],"messages":[]}`,
	} {
		if _, _, _, err := Members([]byte(body), "messages"); err == nil {
			t.Errorf("Members(%s): no error; the API would read only the last member", body)
		}
	}
	if _, _, elems, err := Members([]byte(`{"messages":[{"a":1},{"b":2}],"x":{"messages":[1]}}`), "messages"); err != nil || len(elems) != 2 {
		t.Errorf("a nested member of the same name: %d elements, %v", len(elems), err)
	}
}

// hasDuplicateMember reports whether the top-level object of a valid JSON
// body names a member twice.
func hasDuplicateMember(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		k, _ := tok.(string)
		if seen[k] {
			return true
		}
		seen[k] = true
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return false
}

// TestDecodeCacheByBytes: a decoded element is found again by its bytes
// only (an equal copy, the same format), and the cache stays within its
// size, dropping the least recently used first.
func TestDecodeCacheByBytes(t *testing.T) {
	c := NewDecodeCache(130)
	a := []byte(`{"role":"user","content":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}`) // 58 bytes
	c.Put("anthropic", bytes.Clone(a), "A")
	if v, ok := c.Get("anthropic", bytes.Clone(a)); !ok || v != "A" {
		t.Fatalf("an equal copy of a stored element: %v %v", v, ok)
	}
	if _, ok := c.Get("chat", a); ok {
		t.Error("an element of another format was found")
	}
	b := bytes.Clone(a)
	b[len(b)-3] = 'b'
	if _, ok := c.Get("anthropic", b); ok {
		t.Error("an element one byte apart was found")
	}
	c.Put("anthropic", b, "B") // 116 bytes in all
	c.Get("anthropic", a)      // a is now the most recent
	d := []byte(`{"role":"user","content":"d"}`)
	c.Put("anthropic", d, "D") // over 130: b goes
	if _, ok := c.Get("anthropic", b); ok {
		t.Error("the least recently used element was kept past the cache's size")
	}
	if _, ok := c.Get("anthropic", a); !ok {
		t.Error("a recently used element was dropped")
	}
	if _, ok := c.Get("anthropic", d); !ok {
		t.Error("the newest element was dropped")
	}
	var nilCache *DecodeCache
	nilCache.Put("anthropic", a, "A")
	if _, ok := nilCache.Get("anthropic", a); ok {
		t.Error("a nil cache found an element")
	}
}

// TestDecodeCacheSharedSamples: elements of one length that differ only
// between the bytes the cache key samples (a file read again after an edit
// that kept its length) are each found with their own decode and do not
// evict each other, however many there are.
func TestDecodeCacheSharedSamples(t *testing.T) {
	c := NewDecodeCache(1 << 20)
	n := 3*maxChain + 2
	elem := func(i int) []byte {
		b := []byte(`{"role":"user","content":"` + strings.Repeat("x", 2000) + `"}`)
		copy(b[300:], fmt.Sprintf("%04d", i)) // between the start and the middle samples
		return b
	}
	for i := range n {
		c.Put("anthropic", elem(i), i)
	}
	for i := range n {
		if v, ok := c.Get("anthropic", elem(i)); !ok || v != i {
			t.Fatalf("element %d: got %v %v", i, v, ok)
		}
	}
	if _, ok := c.Get("anthropic", elem(n)); ok {
		t.Error("an element never stored was found")
	}
	if c.s.size != n*len(elem(0)) {
		t.Errorf("size %d, want %d", c.s.size, n*len(elem(0)))
	}
}

// TestSSERecorderDoesNotHoldTheStream: Write hands the bytes over while the
// reader is busy with an earlier event, the reader still sees every event
// in order, and after the reader stopped early a writer never waits, however
// much follows.
func TestSSERecorderDoesNotHoldTheStream(t *testing.T) {
	release := make(chan struct{})
	var got []string
	rec := NewSSERecorder(func(event, data string) error {
		if len(got) == 0 {
			<-release // busy with the first event
		}
		got = append(got, data)
		if data == "end" {
			return io.EOF
		}
		return nil
	}, func() (history.Response, error) {
		return history.Response{StopReason: strings.Join(got, ",")}, nil
	})
	wrote := make(chan struct{})
	go func() {
		for i := 0; i < 100; i++ {
			rec.Write([]byte(fmt.Sprintf("data: %d\n\n", i)))
		}
		rec.Write([]byte("data: end\n\n"))
		close(wrote)
	}()
	select {
	case <-wrote: // although event 0 is not read yet
	case <-time.After(10 * time.Second):
		t.Fatal("the writes waited for the reader")
	}
	close(release)
	res, err := rec.Close()
	if err != nil || len(got) != 101 || got[0] != "0" || got[99] != "99" || !strings.HasSuffix(res.StopReason, "98,99,end") {
		t.Fatalf("recorded %d events (%v), %q", len(got), err, providers.Bound(res.StopReason, 40))
	}

	early := NewSSERecorder(func(event, data string) error { return io.EOF }, func() (history.Response, error) { return history.Response{}, nil })
	early.Write([]byte("data: stop\n\n"))
	big := bytes.Repeat([]byte("data: x\n\n"), 1<<16) // 576 KiB a write, past maxPendingSSE in all
	for i := 0; i < 8; i++ {
		early.Write(big)
	}
	if _, err := early.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestSSERecorderReadsALongStreamAsItPasses: a stream far longer than the
// bytes a recorder holds, written in small chunks, is read as it passes
// (the writer is never stuck behind a reader waiting for more) and every
// event is recorded in order.
func TestSSERecorderReadsALongStreamAsItPasses(t *testing.T) {
	n := 0
	rec := NewSSERecorder(func(event, data string) error {
		if data != fmt.Sprint(n) {
			return fmt.Errorf("event %d: %q", n, data)
		}
		n++
		return nil
	}, func() (history.Response, error) { return history.Response{}, nil })
	wrote := make(chan struct{})
	total := 0
	go func() {
		defer close(wrote)
		for i := 0; total < 4*maxPendingSSE; i++ {
			ev := fmt.Sprintf("event: delta\ndata: %d\n\n", i)
			total += len(ev)
			rec.Write([]byte(ev))
		}
	}()
	select {
	case <-wrote:
	case <-time.After(20 * time.Second):
		t.Fatal("the writer was stuck")
	}
	if _, err := rec.Close(); err != nil || n == 0 {
		t.Fatalf("recorded %d events: %v", n, err)
	}
}

// TestDecodeMembersKeepsLargeMembers: a large member (the tool schemas) is
// decoded once and found again by its bytes, equal to its decoding; an
// append to the value handed out copies instead of changing what the next
// request gets; a member one byte apart is decoded anew, and an invalid one
// is an error every time.
func TestDecodeMembersKeepsLargeMembers(t *testing.T) {
	c := NewDecodeCache(1 << 20)
	tools := `[{"name":"Bash","description":"` + strings.Repeat("runs a command ", 200) + `"},{"name":"Read"}]`
	members := map[string]json.RawMessage{"model": json.RawMessage(`"m"`), "tools": json.RawMessage(tools)}
	decode := func(m map[string]json.RawMessage) ([]json.RawMessage, string, error) {
		var top struct {
			Model string
			Tools []json.RawMessage
		}
		err := c.DecodeMembers(m, map[string]any{"model": &top.Model, "tools": &top.Tools})
		return top.Tools, top.Model, err
	}
	first, model, err := decode(members)
	if err != nil || model != "m" || len(first) != 2 {
		t.Fatalf("first decoding: %d tools, %q, %v", len(first), model, err)
	}
	if n := c.s.lru.Len(); n != 1 {
		t.Fatalf("the cache holds %d values, want the tools only", n)
	}
	_ = append(first, json.RawMessage(`{"name":"Extra"}`))
	again, _, err := decode(map[string]json.RawMessage{"tools": json.RawMessage([]byte(tools))})
	if err != nil || len(again) != 2 || string(again[1]) != `{"name":"Read"}` || cap(again) != 2 {
		t.Fatalf("second decoding: %q (cap %d), %v", again, cap(again), err)
	}
	other := strings.Replace(tools, `"Read"`, `"Edit"`, 1)
	edited, _, err := decode(map[string]json.RawMessage{"tools": json.RawMessage(other)})
	if err != nil || string(edited[1]) != `{"name":"Edit"}` {
		t.Fatalf("an edited member: %q, %v", edited, err)
	}
	bad := map[string]json.RawMessage{"tools": json.RawMessage(`{"not":"a list"` + strings.Repeat(" ", 2000) + `}`)}
	for range 2 {
		if _, _, err := decode(bad); err == nil || !strings.Contains(err.Error(), "tools") {
			t.Fatalf("an invalid member: %v", err)
		}
	}
}
