// Package sse reads server-sent event streams (text/event-stream), the
// framing every streamed provider answer uses. It is a leaf of its own
// because two sides read streams: the vendor clients consuming an answer
// and the proxy recording one it relays unchanged.
package sse

import (
	"bufio"
	"errors"
	"io"
	"strings"
)

// Read reads a server-sent event stream (text/event-stream) and calls fn
// for every event with its event name ("" when the stream names none) and its
// data (data lines joined with "\n"). Comments and events without data are
// skipped. fn may return io.EOF to stop reading early without error; any other
// error from fn stops the stream and is returned. A read failure (a connection
// cut mid-stream) is returned as is, for the caller to classify. An event left
// unterminated by a clean end of stream is still delivered.
func Read(r io.Reader, fn func(event, data string) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var event string
	var data strings.Builder
	hasData := false
	dispatch := func() error {
		defer func() { event, hasData = "", false; data.Reset() }()
		if !hasData {
			return nil
		}
		return fn(event, data.String())
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		eof := err != nil
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if ferr := dispatch(); ferr != nil {
				if errors.Is(ferr, io.EOF) {
					return nil
				}
				return ferr
			}
		case line[0] == ':':
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				event = value
			case "data":
				if hasData {
					data.WriteByte('\n')
				}
				data.WriteString(value)
				hasData = true
			}
		}
		if eof {
			if ferr := dispatch(); ferr != nil && !errors.Is(ferr, io.EOF) {
				return ferr
			}
			return nil
		}
	}
}
