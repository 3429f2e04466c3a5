package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// referenceDecode is the straightforward decoding the scanner of decode.go
// replaces: a map of raw fields, each decoded with encoding/json. It returns
// the re-encoded message, or ok false when the input is not a message.
func referenceDecode(data []byte) (out []byte, ok bool) {
	var raw map[string]json.RawMessage
	if json.Unmarshal(data, &raw) != nil || raw == nil {
		return nil, false
	}
	str := func(k string, p *string) bool {
		v, has := raw[k]
		return !has || string(v) == "null" || json.Unmarshal(v, p) == nil
	}
	var m Message
	var role string
	if !str("id", &m.ID) || !str("role", &role) || !str("toolCallId", &m.ToolCallID) || !str("toolName", &m.ToolName) || !str("reasoning", &m.Reasoning) {
		return nil, false
	}
	m.Role = Role(role)
	if !m.Role.Valid() {
		return nil, false
	}
	if v, has := raw["content"]; has {
		v = bytes.TrimSpace(v)
		switch {
		case string(v) == "null":
			m.Content = Content{kind: contentNull}
		case v[0] == '"':
			var s string
			if json.Unmarshal(v, &s) != nil {
				return nil, false
			}
			m.Content = Text(s)
		case v[0] == '[':
			var elems []map[string]json.RawMessage
			var raws []json.RawMessage
			if json.Unmarshal(v, &raws) != nil || json.Unmarshal(v, &elems) != nil {
				return nil, false
			}
			var parts []Part
			for i, e := range elems {
				if e == nil {
					return nil, false
				}
				var p Part
				typeOK := json.Unmarshal(e["type"], &p.Type) == nil && string(e["type"]) != "null"
				textOK := json.Unmarshal(e["text"], &p.Text) == nil && string(e["text"]) != "null"
				if !(typeOK && textOK && p.Type == "text" && len(e) == 2) {
					p.Raw = compactRaw(raws[i])
				}
				if e["type"] != nil && !typeOK {
					p.Type = ""
				}
				if e["text"] != nil && !textOK {
					p.Text = ""
				}
				parts = append(parts, p)
			}
			m.Content = Parts(parts...)
		default:
			return nil, false
		}
	}
	if v, has := raw["toolCalls"]; has && string(v) != "null" {
		var calls []map[string]json.RawMessage
		if json.Unmarshal(v, &calls) != nil {
			return nil, false
		}
		m.ToolCalls = []ToolCall{}
		for _, c := range calls {
			if c == nil {
				return nil, false
			}
			var tc ToolCall
			for k, v := range c {
				var p *string
				switch k {
				case "id":
					p = &tc.ID
				case "name":
					p = &tc.Name
				case "arguments":
					p = &tc.Arguments
				case "input":
					p = &tc.Input
				case "thoughtSignature":
					p = &tc.ThoughtSignature
				default:
					if tc.Extra == nil {
						tc.Extra = map[string]json.RawMessage{}
					}
					tc.Extra[k] = compactRaw(v)
					continue
				}
				if string(v) != "null" && json.Unmarshal(v, p) != nil {
					return nil, false
				}
			}
			m.ToolCalls = append(m.ToolCalls, tc)
		}
	}
	if v, has := raw["reasoningDetails"]; has && string(v) != "null" {
		if json.Unmarshal(v, &m.ReasoningDetails) != nil {
			return nil, false
		}
		if m.ReasoningDetails == nil {
			m.ReasoningDetails = []json.RawMessage{}
		}
		for i, d := range m.ReasoningDetails {
			m.ReasoningDetails[i] = compactRaw(d)
		}
	}
	for k, v := range raw {
		switch k {
		case "id", "role", "content", "toolCalls", "toolCallId", "toolName", "reasoning", "reasoningDetails":
		default:
			if m.Extra == nil {
				m.Extra = map[string]json.RawMessage{}
			}
			m.Extra[k] = compactRaw(v)
		}
	}
	b, _ := m.MarshalJSON()
	return b, true
}

// FuzzDecodeMatchesReference: the one-pass decoder accepts exactly the
// messages the map-based reference accepts, and decodes them to the same
// message.
func FuzzDecodeMatchesReference(f *testing.F) {
	for _, s := range canonicalMessages {
		f.Add([]byte(s))
	}
	for _, s := range []string{
		`{"role":"user","content":"a\u00e9\n","role":"assistant"}`,
		`{"role":"user","content":[{"type":"text","text":"a","text":"b"},{"type":"text","text":1},{"x":[1,{"y":"]"}]}]}`,
		`{"role":"assistant","toolCalls":[{"id":"a","name":"n","extra":{"k":"}"}},{"id":null,"name":"m"}]}`,
		`{"role":"user","content":"\xff"}`,
		`{"role" : "tool" , "toolCallId":"c", "\u0072ole":"user"}`,
		`{"role":"assistant","reasoningDetails":[ {"a" : 1} , null ]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, ok := referenceDecode(data)
		var m Message
		err := json.Unmarshal(data, &m)
		if ok != (err == nil) {
			t.Fatalf("%q: reference ok %v, decoder error %v", data, ok, err)
		}
		if err != nil {
			if json.Valid(data) {
				var fe *FieldError
				if !errors.As(err, &fe) {
					t.Fatalf("%q: error %v on valid JSON is not a *FieldError", data, err)
				}
			}
			return
		}
		got, _ := m.MarshalJSON()
		if !bytes.Equal(got, want) {
			t.Fatalf("%q:\n decoder   %s\n reference %s", data, got, want)
		}
	})
}

func TestFieldErrorPaths(t *testing.T) {
	for in, want := range map[string]string{
		`{"role":"assistant","toolCalls":[{"id":"a","name":"n"},{"id":"b","name":false}]}`: "toolCalls[1].name",
		`{"role":"user","content":[{"type":"text","text":"a"},5]}`:                         "content[1]",
		`{"role":"user","content":7}`:                                                      "content",
		`{"role":"bot"}`:                                                                   "role",
		`{"role":"user","reasoningDetails":{}}`:                                            "reasoningDetails",
		`7`:                                                                                "",
	} {
		var m Message
		err := json.Unmarshal([]byte(in), &m)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Path != want {
			t.Errorf("%s: error %v, want a FieldError at %q", in, err, want)
		}
	}
}

// TestValueEndStrings: the structure scan ends a string at its first
// unescaped quote, whatever the escapes before it, and rejects a string
// that does not end.
func TestValueEndStrings(t *testing.T) {
	long := strings.Repeat(`x\n\t\"`, 2000)
	for _, tc := range []struct {
		in   string
		want int // -1: an error
	}{
		{`"abc"`, 5}, {`""`, 2}, {`"\\"`, 4}, {`"a\"b"`, 6}, {`"\\\""`, 6}, {`"\\\\"x`, 6},
		{`"` + long + `"`, len(long) + 2}, {`"` + long + `" , "z"`, len(long) + 2},
		{`["a\"]", {"k": "\\"}]`, 21},
		{`"\""`, 4}, {`"\"\"\""`, 8}, {`"\\\\\""`, 8}, {`"\\\\\\\""x`, 10}, {`"a\\\\\\"`, 9},
		{`"abc`, -1}, {`"abc\"`, -1}, {`"abc\`, -1}, {`"\`, -1}, {`"`, -1},
	} {
		got, err := ValueEnd([]byte(tc.in), 0)
		if tc.want < 0 {
			if err == nil {
				t.Errorf("ValueEnd(%.40q) = %d, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ValueEnd(%.40q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}
