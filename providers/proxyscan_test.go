package providers

import (
	"bytes"
	"encoding/json"
	"testing"
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
