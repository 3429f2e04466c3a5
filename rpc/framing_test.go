package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"
)

// readAll reads every message of input through a stream with limit max and
// returns the messages' methods, the rejections, and the final error.
func readAll(t *testing.T, input string, max int64) (methods []string, rejections []rejection, err error) {
	t.Helper()
	s := newStream(strings.NewReader(input), io.Discard, max)
	s.reject = func(rj rejection) { rejections = append(rejections, rj) }
	for {
		var req jsonrpc2.Request
		if err := s.ReadObject(&wrapped{&req}); err != nil {
			return methods, rejections, err
		}
		methods = append(methods, req.Method)
	}
}

// wrapped decodes a request the way the library's message type does for
// requests (the library's own type is unexported).
type wrapped struct{ r *jsonrpc2.Request }

func (w *wrapped) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, w.r) }

func frame(body string) string {
	return "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

const ping = `{"jsonrpc":"2.0","id":1,"method":"ping"}`

func TestStreamHeaders(t *testing.T) {
	for _, tc := range []struct {
		name  string
		input string
		want  []string // methods read
		fatal string   // substring of the FramingError, "" for a clean end
	}{
		{"one frame", frame(ping), []string{"ping"}, ""},
		{"two frames", frame(ping) + frame(ping), []string{"ping", "ping"}, ""},
		{"content type and case", "content-length: 40\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + ping, []string{"ping"}, ""},
		{"spaces around the value", "Content-Length:   40  \r\n\r\n" + ping, []string{"ping"}, ""},
		{"repeated equal lengths", "Content-Length: 40\r\nContent-Length: 40\r\n\r\n" + ping, []string{"ping"}, ""},
		{"empty input", "", nil, ""},
		{"no content length", "Content-Type: x\r\n\r\n" + ping, nil, "no Content-Length"},
		{"bare newline", "Content-Length: 40\n\n" + ping, nil, `does not end in \r\n`},
		{"not a number", "Content-Length: forty\r\n\r\n" + ping, nil, "not a byte count"},
		{"negative", "Content-Length: -40\r\n\r\n" + ping, nil, "not a byte count"},
		{"plus sign", "Content-Length: +40\r\n\r\n" + ping, nil, "not a byte count"},
		{"overflow", "Content-Length: 99999999999999999999999\r\n\r\n" + ping, nil, "not a byte count"},
		{"conflicting", "Content-Length: 40\r\nContent-Length: 41\r\n\r\n" + ping, nil, "conflicting"},
		{"no colon", "Content-Length 40\r\n\r\n" + ping, nil, `not "Name: value"`},
		{"garbage", "GET / HTTP/1.1\r\n\r\n", nil, `not "Name: value"`},
		{"json without header", ping + "\r\n", nil, `not "Name: value"`},
		{"line too long", strings.Repeat("X", 10000) + "\r\n", nil, "longer than"},
		{"too many lines", strings.Repeat("X-A: b\r\n", 40), nil, "more than 32 header lines"},
		{"good then bad", frame(ping) + "junk\r\n\r\n", []string{"ping"}, `not "Name: value"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			methods, _, err := readAll(t, tc.input, 0)
			if strings.Join(methods, ",") != strings.Join(tc.want, ",") {
				t.Errorf("methods = %q, want %q", methods, tc.want)
			}
			var fe *FramingError
			switch {
			case tc.fatal == "" && err != io.EOF:
				t.Errorf("err = %v, want io.EOF", err)
			case tc.fatal != "" && (!errors.As(err, &fe) || !strings.Contains(err.Error(), tc.fatal)):
				t.Errorf("err = %v, want a FramingError containing %q", err, tc.fatal)
			}
		})
	}
}

func TestStreamTruncated(t *testing.T) {
	for _, input := range []string{
		"Content-Length: 40\r\n",                 // header cut
		"Content-Length: 40\r\n\r\n{\"jsonrpc\"", // body cut
	} {
		_, _, err := readAll(t, input, 0)
		if err != io.ErrUnexpectedEOF {
			t.Errorf("%q: err = %v, want io.ErrUnexpectedEOF", input, err)
		}
	}
}

func TestStreamBadBodies(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		code int64
		id   string // raw id of the rejection, "" for null
	}{
		{"not json", "{nope", jsonrpc2.CodeParseError, ""},
		{"empty", "", jsonrpc2.CodeParseError, ""},
		{"invalid utf-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xff\"}", jsonrpc2.CodeParseError, ""},
		{"array", "[]", jsonrpc2.CodeInvalidRequest, ""},
		{"null", "null", jsonrpc2.CodeInvalidRequest, ""},
		{"string", `"x"`, jsonrpc2.CodeInvalidRequest, ""},
		{"no version", `{"id":3,"method":"p"}`, jsonrpc2.CodeInvalidRequest, "3"},
		{"wrong version", `{"jsonrpc":"1.0","id":"a","method":"p"}`, jsonrpc2.CodeInvalidRequest, `"a"`},
		{"no method", `{"jsonrpc":"2.0","id":4}`, jsonrpc2.CodeInvalidRequest, "4"},
		{"method not a string", `{"jsonrpc":"2.0","id":5,"method":true}`, jsonrpc2.CodeInvalidRequest, "5"},
		{"negative id", `{"jsonrpc":"2.0","id":-5,"method":"p"}`, jsonrpc2.CodeInvalidRequest, ""},
		{"fractional id", `{"jsonrpc":"2.0","id":5.5,"method":"p"}`, jsonrpc2.CodeInvalidRequest, ""},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"p"}`, jsonrpc2.CodeInvalidRequest, ""},
		{"scalar params", `{"jsonrpc":"2.0","id":6,"method":"p","params":1}`, jsonrpc2.CodeInvalidRequest, "6"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			methods, rejections, err := readAll(t, frame(tc.body)+frame(ping), 0)
			if err != io.EOF || len(methods) != 1 {
				t.Fatalf("the stream did not go on: methods %q, err %v", methods, err)
			}
			if len(rejections) != 1 {
				t.Fatalf("rejections = %v, want one", rejections)
			}
			rj := rejections[0]
			if rj.Code != tc.code || string(rj.ID) != tc.id {
				t.Errorf("rejection = %d id %q (%s), want %d id %q", rj.Code, rj.ID, rj.Message, tc.code, tc.id)
			}
		})
	}
}

func TestStreamResponsesAreNotAnswered(t *testing.T) {
	_, rejections, err := readAll(t, frame(`{"jsonrpc":"2.0","id":{"bad":1},"result":null}`)+frame(ping), 0)
	if err != io.EOF || len(rejections) != 0 {
		t.Errorf("rejections %v, err %v; want none and io.EOF", rejections, err)
	}
}

func TestStreamOversized(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":"big","method":"vtcode/appendMessages","params":{"x":"` + strings.Repeat("a", 5000) + `"}}`
	methods, rejections, err := readAll(t, frame(big)+frame(ping), 1000)
	if err != io.EOF || strings.Join(methods, ",") != "ping" {
		t.Fatalf("methods %q, err %v: want the next frame read", methods, err)
	}
	if len(rejections) != 1 || rejections[0].Code != jsonrpc2.CodeParseError || string(rejections[0].ID) != `"big"` {
		t.Fatalf("rejections = %+v, want one parse error with id \"big\"", rejections)
	}
	if !strings.Contains(rejections[0].Message, "exceeds the limit of 1000 bytes") {
		t.Errorf("message %q does not name the limit", rejections[0].Message)
	}
}

func TestStreamAbsurdLength(t *testing.T) {
	// 10^18 bytes are declared; the input ends long before. The stream
	// answers at once, allocates nothing for the body, and ends cleanly.
	input := "Content-Length: 1000000000000000000\r\n\r\n" + `{"jsonrpc":"2.0","id":9,"method":"x"}` + strings.Repeat(" ", 100000)
	methods, rejections, err := readAll(t, input, 0)
	if len(methods) != 0 || err != io.ErrUnexpectedEOF {
		t.Errorf("methods %q, err %v; want none and io.ErrUnexpectedEOF", methods, err)
	}
	if len(rejections) != 1 || string(rejections[0].ID) != "9" {
		t.Errorf("rejections = %+v, want one with id 9", rejections)
	}
}

func TestStreamKeepsParamsVerbatim(t *testing.T) {
	params := `{"b":1,"a":{"z":"\u00e9","y":[1.50,2e3]}}`
	s := newStream(strings.NewReader(frame(`{"jsonrpc":"2.0","id":1,"method":"m","params":`+params+`}`)), io.Discard, 0)
	var req jsonrpc2.Request
	if err := s.ReadObject(&wrapped{&req}); err != nil {
		t.Fatal(err)
	}
	if got := string(s.takeParams()); got != params {
		t.Errorf("params = %s, want %s", got, params)
	}
	if s.takeParams() != nil {
		t.Error("params were not forgotten")
	}
}

func TestSniffID(t *testing.T) {
	for in, want := range map[string]string{
		`{"jsonrpc":"2.0","id":12,"method":`:                "12",
		`{"jsonrpc":"2.0","params":{"id":3},"id":"x","meth`: `"x"`,
		`{"params":{"id":3,"deep":[`:                        "",
		`{"id":null,"method":"m"}`:                          "",
		`{"id":-1}`:                                         "",
		`[{"id":1}]`:                                        "",
		`garbage`:                                           "",
	} {
		if got := string(sniffID([]byte(in))); got != want {
			t.Errorf("sniffID(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestWriteRejection(t *testing.T) {
	var out bytes.Buffer
	s := newStream(strings.NewReader(""), &out, 0)
	if err := s.writeRejection(rejection{Code: jsonrpc2.CodeParseError, Message: "parse error: x"}); err != nil {
		t.Fatal(err)
	}
	want := frame(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: x"}}`)
	if out.String() != want {
		t.Errorf("wrote %q, want %q", out.String(), want)
	}
}
