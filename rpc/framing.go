package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sourcegraph/jsonrpc2"
)

// DefaultMaxMessageBytes is the default limit on the body of one incoming
// frame (64 MiB).
const DefaultMaxMessageBytes = 64 << 20

// Limits of the header block. A header is a handful of short lines; anything
// beyond these bounds is not an LSP client talking.
const (
	maxHeaderLine  = 4 << 10 // bytes per header line, including \r\n
	maxHeaderLines = 32      // lines per header block
)

// A FramingError reports a malformed LSP base-protocol header. The stream
// cannot be resynchronized after one, so the connection ends.
type FramingError struct {
	Reason string
}

func (e *FramingError) Error() string { return "malformed header: " + e.Reason }

// rejection is an error response for a frame that never reached the
// dispatcher: it was too large, not JSON, or not a JSON-RPC message. ID is
// the raw request id when one could be recovered, else nil (sent as null).
type rejection struct {
	ID      json.RawMessage
	Code    int64
	Message string
}

// A stream is the jsonrpc2.ObjectStream of a vtcode-ls connection: LSP
// base-protocol framing (Content-Length headers) with a size limit, UTF-8 and
// JSON validation, and error replies for frames that cannot be used, so that
// one bad frame never ends the connection. Only a malformed header (after
// which the byte stream cannot be resynchronized) or the end of input makes
// ReadObject fail, which ends the jsonrpc2 read loop.
//
// The library re-encodes request params through interface{}, which would
// reorder the keys of opaque client objects and cost a second copy of large
// bodies. The stream therefore hands the library each request without its
// params and keeps the raw params bytes aside; the handler, which runs on
// the same goroutine right after ReadObject returns, takes them with
// takeParams.
type stream struct {
	r   *bufio.Reader
	w   io.Writer
	rc  io.Closer // the reader, when it is an io.Closer
	wc  io.Closer // the writer, when it is an io.Closer other than rc
	max int64

	// reject sends an error response for an unusable frame. It is set
	// before the connection starts; the default writes the frame directly.
	reject func(rejection)

	// The read gate (see pump.go), set before the connection starts: busy
	// reports that the server takes no more work now (nil: never), onExit
	// ends the connection for an exit notification held back by the gate,
	// aheadMax bounds the bytes read ahead and grace how long the end of
	// input waits behind a closed gate.
	busy     func() bool
	onExit   func()
	aheadMax int
	grace    time.Duration

	// params holds the raw params of the request most recently returned by
	// ReadObject. Only the read-loop goroutine touches it (see connect).
	params    json.RawMessage
	hasParams bool
	cancelled bool

	ahead readAhead // the frames read and not yet handed to the library

	wmu sync.Mutex // serializes frame writes

	closeOnce sync.Once // for Close
	allOnce   sync.Once // for closeAll

	doneOnce sync.Once
	done     chan struct{} // closed when ReadObject has failed for good
	readErr  error         // why; valid after done is closed
}

// connect starts the jsonrpc2 connection of a stream with handler h. The
// stream's side slot for params (takeParams) is correct only because the
// library calls h synchronously on its read loop, right after the
// ReadObject that returned the request and before the next one; h is
// therefore never wrapped in jsonrpc2.AsyncHandler, and
// TestHandlerRunsOnTheReadLoop fails if the library stops doing so.
func connect(ctx context.Context, st jsonrpc2.ObjectStream, h jsonrpc2.Handler, opts ...jsonrpc2.ConnOpt) *jsonrpc2.Conn {
	return jsonrpc2.NewConn(ctx, st, h, opts...)
}

// newStream returns a stream reading frames from r and writing to w.
func newStream(r io.Reader, w io.Writer, maxBody int64) *stream {
	if maxBody <= 0 {
		maxBody = DefaultMaxMessageBytes
	}
	s := &stream{
		r:    bufio.NewReaderSize(r, maxHeaderLine),
		w:    w,
		max:  maxBody,
		done: make(chan struct{}),

		aheadMax: DefaultReadAheadBytes,
		grace:    DefaultFlushTimeout,
	}
	s.ahead.init()
	s.rc, _ = r.(io.Closer)
	if wc, ok := w.(io.Closer); ok && wc != s.rc {
		s.wc = wc
	}
	s.reject = func(rj rejection) { _ = s.writeRejection(rj) }
	return s
}

var _ jsonrpc2.ObjectStream = (*stream)(nil)

// takeParams returns the raw params of the request ReadObject returned last
// (nil when the request had none) and forgets them.
func (s *stream) takeParams() json.RawMessage {
	p := s.params
	if !s.hasParams {
		p = nil
	}
	s.params, s.hasParams = nil, false
	return p
}

// takeCancelled reports whether the request ReadObject returned last was
// cancelled while it waited behind the read gate, and forgets it.
func (s *stream) takeCancelled() bool {
	c := s.cancelled
	s.cancelled = false
	return c
}

// readFrame reads one frame. It returns (nil, nil) for a frame it answered
// itself because the body exceeded the limit, io.EOF at a clean end of
// input, io.ErrUnexpectedEOF for input that ends inside a frame, and a
// *FramingError for a malformed header.
func (s *stream) readFrame() ([]byte, error) {
	length := int64(-1)
	for n := 0; ; n++ {
		line, err := s.r.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			return nil, &FramingError{Reason: fmt.Sprintf("header line longer than %d bytes", maxHeaderLine)}
		case err == io.EOF && n == 0 && len(line) == 0:
			return nil, io.EOF
		case err == io.EOF:
			return nil, io.ErrUnexpectedEOF
		case err != nil:
			return nil, err
		}
		if n >= maxHeaderLines {
			return nil, &FramingError{Reason: fmt.Sprintf("more than %d header lines", maxHeaderLines)}
		}
		if len(line) < 2 || line[len(line)-2] != '\r' {
			return nil, &FramingError{Reason: fmt.Sprintf(`header line %s does not end in \r\n`, quoteLine(line))}
		}
		text := string(line[:len(line)-2])
		if text == "" {
			break
		}
		name, value, ok := strings.Cut(text, ":")
		if !ok || !isToken(name) {
			return nil, &FramingError{Reason: fmt.Sprintf("header line %s is not \"Name: value\"", quoteLine(line))}
		}
		if !strings.EqualFold(name, "Content-Length") {
			continue // Content-Type and unknown headers are ignored
		}
		value = strings.TrimSpace(value)
		l, err := strconv.ParseInt(value, 10, 64)
		if err != nil || l < 0 || value[0] == '+' {
			return nil, &FramingError{Reason: fmt.Sprintf("Content-Length %s is not a byte count", quoteLine([]byte(value)))}
		}
		if length >= 0 && l != length {
			return nil, &FramingError{Reason: "conflicting Content-Length headers"}
		}
		length = l
	}
	if length < 0 {
		return nil, &FramingError{Reason: "no Content-Length header"}
	}
	if length > s.max {
		return nil, s.skip(length)
	}
	var buf bytes.Buffer
	buf.Grow(int(min(length, 1<<20)))
	if _, err := io.CopyN(&buf, s.r, length); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf.Bytes(), nil
}

// skip answers an oversized frame with a parse error and discards its
// body. The answer goes out first, carrying the request id when the part
// of the body already received reveals it, so the client learns at once;
// the body is then read and dropped without being kept. A body that never
// arrives in full (an absurd Content-Length) consumes the input to its end,
// which ends the connection.
func (s *stream) skip(length int64) error {
	if s.r.Buffered() == 0 {
		_, _ = s.r.Peek(1) // wait for the start of the body
	}
	prefix, _ := s.r.Peek(int(min(int64(s.r.Buffered()), length)))
	s.enqueue(item{rj: &rejection{
		ID:   sniffID(prefix),
		Code: jsonrpc2.CodeParseError,
		Message: fmt.Sprintf("parse error: message of %d bytes exceeds the limit of %d bytes (--max-message-bytes)",
			length, s.max),
	}})
	if _, err := io.CopyN(io.Discard, s.r, length); err != nil {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// parseMessage validates a frame body and splits a request into the
// message the library decodes (without params) and its raw params. For a
// response it returns the body unchanged. A non-nil rejection says why the
// body is unusable.
func parseMessage(body []byte) (msg, params json.RawMessage, hasParams bool, rj *rejection) {
	if !utf8.Valid(body) {
		return nil, nil, false, &rejection{Code: jsonrpc2.CodeParseError, Message: "parse error: message is not valid UTF-8"}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) || !json.Valid(body) {
			return nil, nil, false, &rejection{Code: jsonrpc2.CodeParseError, Message: "parse error: " + bound(err.Error())}
		}
		first := bytes.TrimLeft(body, " \t\r\n")
		reason := "invalid request: a message must be a JSON object"
		if len(first) > 0 && first[0] == '[' {
			reason = "invalid request: batch messages are not supported"
		}
		return nil, nil, false, &rejection{Code: jsonrpc2.CodeInvalidRequest, Message: reason}
	}
	if fields == nil { // the body was JSON null
		return nil, nil, false, &rejection{Code: jsonrpc2.CodeInvalidRequest, Message: "invalid request: a message must be a JSON object"}
	}
	method, isRequest := fields["method"]
	if !isRequest {
		_, hasResult := fields["result"]
		_, hasError := fields["error"]
		if hasResult || hasError {
			return body, nil, false, nil // a response to a server request; the library matches it
		}
	}
	id, idOK := fields["id"]
	if idOK && !validID(id) {
		return nil, nil, false, &rejection{Code: jsonrpc2.CodeInvalidRequest,
			Message: "invalid request: id must be a string or a non-negative integer"}
	}
	replyID := id
	if !idOK || string(id) == "null" {
		replyID = nil
	}
	invalid := func(m string) *rejection {
		return &rejection{ID: replyID, Code: jsonrpc2.CodeInvalidRequest, Message: "invalid request: " + m}
	}
	var version string
	if err := json.Unmarshal(fields["jsonrpc"], &version); err != nil || version != "2.0" {
		return nil, nil, false, invalid(`jsonrpc must be "2.0"`)
	}
	if !isRequest {
		return nil, nil, false, invalid("a message needs a method, a result or an error")
	}
	var name string
	if err := json.Unmarshal(method, &name); err != nil {
		return nil, nil, false, invalid("method must be a string")
	}
	params, hasParams = fields["params"]
	if hasParams {
		if p := bytes.TrimLeft(params, " \t\r\n"); len(p) == 0 || (p[0] != '{' && p[0] != '[' && string(p) != "null") {
			return nil, nil, false, invalid("params must be an object or an array")
		}
	}
	small := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id,omitempty"`
		Method  string          `json:"method"`
	}{"2.0", replyID, name}
	msg, err := json.Marshal(small)
	if err != nil {
		return nil, nil, false, invalid(bound(err.Error()))
	}
	return msg, params, hasParams, nil
}

// validID reports whether raw is a request id this server can echo: null, a
// string, or an integer in [0, 2^63).
func validID(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return false
	}
	switch raw[0] {
	case 'n':
		return string(raw) == "null"
	case '"':
		var s string
		return json.Unmarshal(raw, &s) == nil
	default:
		_, err := strconv.ParseInt(string(raw), 10, 64)
		return err == nil && raw[0] != '-'
	}
}

// sniffID returns the top-level "id" of a JSON object from (a prefix of) its
// text, or nil when it cannot be found or is not a usable id.
func sniffID(prefix []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil
		}
		if key, _ := tok.(string); key == "id" {
			if validID(raw) && string(raw) != "null" {
				return raw
			}
			return nil
		}
	}
	return nil
}

// WriteObject implements jsonrpc2.ObjectStream.
func (s *stream) WriteObject(obj any) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return s.writeFrame(data)
}

func (s *stream) writeRejection(rj rejection) error {
	id := rj.ID
	if id == nil {
		id = json.RawMessage("null")
	}
	data, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc2.Error  `json:"error"`
	}{"2.0", id, jsonrpc2.Error{Code: rj.Code, Message: rj.Message}})
	if err != nil {
		return err
	}
	return s.writeFrame(data)
}

func (s *stream) writeFrame(data []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	header := "Content-Length: " + strconv.Itoa(len(data)) + "\r\n\r\n"
	if _, err := io.WriteString(s.w, header); err != nil {
		return err
	}
	_, err := s.w.Write(data)
	return err
}

// Close implements jsonrpc2.ObjectStream. The jsonrpc2 connection calls it
// when it ends; it closes only the input, when that is separate from the
// output, so that the server can still write what it queued before.
// closeAll closes the rest.
func (s *stream) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.ahead.close()
		if s.rc != nil && s.wc != nil {
			err = s.rc.Close()
		}
	})
	return err
}

// closeAll closes the input and the output.
func (s *stream) closeAll() error {
	var errs []error
	s.allOnce.Do(func() {
		errs = append(errs, s.Close()) // the input, when separate
		switch {
		case s.wc != nil:
			errs = append(errs, s.wc.Close())
		case s.rc != nil: // one closer for both directions
			errs = append(errs, s.rc.Close())
		}
	})
	return errors.Join(errs...)
}

// isToken reports whether s is an HTTP token, the syntax of a header name.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// quoteLine quotes at most 40 bytes of a header line for an error message.
func quoteLine(b []byte) string {
	if len(b) > 40 {
		return strconv.Quote(string(b[:40])) + "..."
	}
	return strconv.Quote(string(b))
}
