package rpctest

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WriteFrame writes body as one LSP base-protocol frame.
func WriteFrame(w io.Writer, body []byte) error {
	if _, err := fmt.Fprintf(w, "Content-Length: %d\r\n\r\n", len(body)); err != nil {
		return err
	}
	_, err := w.Write(body)
	return err
}

// ReadFrame reads one LSP base-protocol frame and returns its body. It is
// strict (it is for checking what the server writes): exactly one
// Content-Length header and \r\n line ends.
func ReadFrame(r *bufio.Reader) ([]byte, error) {
	length := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if err == io.EOF && line == "" && length < 0 {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("reading header: %w", err)
		}
		if !strings.HasSuffix(line, "\r\n") {
			return nil, fmt.Errorf("header line %q does not end in \\r\\n", line)
		}
		line = strings.TrimSuffix(line, "\r\n")
		if line == "" {
			break
		}
		v, ok := strings.CutPrefix(line, "Content-Length: ")
		if !ok || length >= 0 {
			return nil, fmt.Errorf("unexpected header line %q", line)
		}
		if length, err = strconv.Atoi(v); err != nil || length < 0 {
			return nil, fmt.Errorf("bad Content-Length %q", v)
		}
	}
	if length < 0 {
		return nil, fmt.Errorf("frame without Content-Length")
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("reading body: %w", err)
	}
	return body, nil
}
