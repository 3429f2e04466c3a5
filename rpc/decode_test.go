package rpc

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/vtcode/vtcode-ls/session"
)

func TestDecodeParamsPaths(t *testing.T) {
	for _, tc := range []struct {
		params string
		into   any
		want   string // the ParamError text, "" for success
	}{
		{`{"sessionId":"s1","messages":[]}`, &session.AppendParams{}, ""},
		{`null`, &session.AppendParams{}, ""},
		{`{"sessionId":"s1","unknown":{"ignored":[1,2]}}`, &session.AppendParams{}, ""},
		{`{"sessionId":1}`, &session.AppendParams{}, "sessionId: must be a string"},
		{`[1,2]`, &session.AppendParams{}, "params: must be an object"},
		{`{"sessionId":"s","offset":-1.5}`, &session.HistoryParams{}, "offset: must be an integer"},
		{`{"sessionId":"s","messages":[{"role":"user"},{"role":"bot"}]}`, &session.AppendParams{}, `messages[1].role: must be system, user, assistant or tool, got "bot"`},
		{`{"sessionId":"s","messages":[{"role":"user","content":7}]}`, &session.AppendParams{}, "messages[0].content: must be a string, an array of parts or null"},
		{`{"sessionId":"s","messages":[{"role":"user","content":[{"type":"text","text":"a"},5]}]}`, &session.AppendParams{}, "messages[0].content[1]: part must be an object"},
		{`{"sessionId":"s","messages":[{"role":"assistant","toolCalls":[{"id":"a","name":"n"},{"id":"b","name":false}]}]}`, &session.AppendParams{}, "messages[0].toolCalls[1].name: must be a string"},
		{`{"sessionId":"s","messages":{"role":"user"}}`, &session.AppendParams{}, "messages: must be an array"},
		{`{"sessionId":"s","message":{"role":"x"}}`, &session.RecordParams{}, `message.role: must be system, user, assistant or tool, got "x"`},
		{`{"sessionId":"s","message":{"role":"assistant"},"usage":{"inputTokens":"many"}}`, &session.RecordParams{}, "usage.inputTokens: must be an integer"},
		{`{"sessionId":"s","prefixTokens":"x"}`, &session.PrepareParams{}, "prefixTokens: must be an integer"},
		{`{"sessionId":"s","tools":{}}`, &session.PrepareParams{}, "tools: must be an array"},
	} {
		err := decodeParams(json.RawMessage(tc.params), tc.into)
		var got string
		if err != nil {
			var pe *session.ParamError
			if !errors.As(err, &pe) {
				t.Errorf("%s: error %v is not a ParamError", tc.params, err)
				continue
			}
			got = pe.Error()
		}
		if got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.params, got, tc.want)
		}
	}
}

func TestPathAt(t *testing.T) {
	raw := `{"a":1,"b":{"c":[10,{"d":"x"},[true]]},"e":null}`
	for _, tc := range []struct {
		after string // the value whose end is the offset
		want  string
	}{
		{`1`, "a"},
		{`10`, "b.c[0]"},
		{`"x"`, "b.c[1].d"},
		{`true`, "b.c[2][0]"},
		{`null`, "e"},
	} {
		off := int64(len(raw[:indexAfter(raw, tc.after)]))
		if got := pathAt(json.RawMessage(raw), off); got != tc.want {
			t.Errorf("pathAt after %s = %q, want %q", tc.after, got, tc.want)
		}
	}
}

// indexAfter returns the offset just after the first occurrence of s.
func indexAfter(raw, s string) int {
	for i := 0; i+len(s) <= len(raw); i++ {
		if raw[i:i+len(s)] == s {
			return i + len(s)
		}
	}
	return len(raw)
}
