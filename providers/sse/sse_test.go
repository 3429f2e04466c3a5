package sse_test

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/providers/sse"
)

func TestReadSSE(t *testing.T) {
	stream := ": comment\r\n" +
		"event: first\r\n" +
		"data: line one\r\n" +
		"data: line two\r\n" +
		"\r\n" +
		"id: 7\n" +
		"retry: 100\n" +
		"\n" +
		"data:no-space\n\n" +
		"event: ignored-without-data\n\n" +
		"data: {\"last\":true}" // no terminating blank line
	type ev struct{ name, data string }
	var got []ev
	err := sse.Read(strings.NewReader(stream), func(name, data string) error {
		got = append(got, ev{name, data})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []ev{{"first", "line one\nline two"}, {"", "no-space"}, {"", `{"last":true}`}}
	if !slices.Equal(got, want) {
		t.Errorf("events = %q, want %q", got, want)
	}

	n := 0
	err = sse.Read(strings.NewReader("data: a\n\ndata: b\n\ndata: c\n\n"), func(_, data string) error {
		n++
		if data == "b" {
			return io.EOF
		}
		return nil
	})
	if err != nil || n != 2 {
		t.Errorf("io.EOF stop: err %v after %d events", err, n)
	}
	sentinel := errors.New("stop")
	if err := sse.Read(strings.NewReader("data: a\n\n"), func(string, string) error { return sentinel }); !errors.Is(err, sentinel) {
		t.Errorf("fn error = %v", err)
	}
	if err := sse.Read(io.MultiReader(strings.NewReader("data: a\n"), errReader{}), func(string, string) error { return nil }); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("read error = %v", err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }
