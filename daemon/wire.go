package daemon

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
)

// request is the first line a client sends.
type request struct {
	Op string `json:"op"` // attach, status or stop
	// Files says the client hands its stdin and stdout over (attach): a
	// message with their two descriptors follows the answer.
	Files bool `json:"files,omitempty"`
	// MaxMessageBytes is the client's frame limit (attach; 0: the default).
	MaxMessageBytes int64 `json:"maxMessageBytes,omitempty"`
	// Workspace is the folder of a hold's agent, whose proxy base path the
	// answer carries.
	Workspace string `json:"workspace,omitempty"`
}

// answer is the daemon's line in reply.
type answer struct {
	OK      bool    `json:"ok,omitempty"`
	Error   string  `json:"error,omitempty"`
	PID     int     `json:"pid,omitempty"`
	Version string  `json:"version,omitempty"`
	Status  *Status `json:"status,omitempty"`
	// ProxyBase is the proxy's base path of the hold's workspace.
	ProxyBase string `json:"proxyBase,omitempty"`
}

// maxLine bounds a request or answer line.
const maxLine = 1 << 20

// readLine reads one JSON line into v.
func readLine(br *bufio.Reader, v any) error {
	var line []byte
	for {
		chunk, isPrefix, err := br.ReadLine()
		if err != nil {
			return err
		}
		line = append(line, chunk...)
		if len(line) > maxLine {
			return errors.New("control line too long")
		}
		if !isPrefix {
			break
		}
	}
	if err := json.Unmarshal(line, v); err != nil {
		return fmt.Errorf("control line: %w", err)
	}
	return nil
}

func writeLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// Chunk kinds of the daemon's side of an attached connection.
const (
	kindData = 'd'
	kindExit = 'x'
)

// maxChunk bounds one chunk; larger writes are split.
const maxChunk = 1 << 20

// chunkWriter writes protocol bytes as data chunks. It is safe for
// concurrent use; each Write is one or more whole chunks.
type chunkWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (c *chunkWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for len(p) > 0 {
		part := p[:min(len(p), maxChunk)]
		if err := c.chunk(kindData, part); err != nil {
			return n, err
		}
		n += len(part)
		p = p[len(part):]
	}
	return n, nil
}

// exit writes the exit chunk.
func (c *chunkWriter) exit(code int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.chunk(kindExit, []byte{byte(code)})
}

func (c *chunkWriter) chunk(kind byte, p []byte) error {
	var h [5]byte
	h[0] = kind
	binary.BigEndian.PutUint32(h[1:], uint32(len(p)))
	if len(p) <= 16<<10 { // one write: header and bytes together
		buf := make([]byte, 0, len(h)+len(p))
		_, err := c.w.Write(append(append(buf, h[:]...), p...))
		return err
	}
	bufs := net.Buffers{h[:], p} // one writev on a socket
	_, err := bufs.WriteTo(c.w)
	return err
}

// errDropped is the end of a connection without an exit chunk: the daemon
// went away.
var errDropped = errors.New("the shared daemon closed the connection")

// copyChunks copies the data chunks of r to w until the exit chunk, and
// returns its code; a connection that ends before returns errDropped.
func copyChunks(w io.Writer, r io.Reader) (int, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	var h [5]byte
	var buf, out []byte
	for {
		if _, err := io.ReadFull(br, h[:]); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return 1, errDropped
			}
			return 1, fmt.Errorf("%w: %w", errDropped, err)
		}
		n := binary.BigEndian.Uint32(h[1:])
		if n > maxChunk {
			return 1, fmt.Errorf("daemon sent a chunk of %d bytes", n)
		}
		if cap(buf) < int(n) {
			buf = make([]byte, n)
		}
		b := buf[:n]
		if _, err := io.ReadFull(br, b); err != nil {
			return 1, errDropped
		}
		switch h[0] {
		case kindData:
			// What has arrived goes out in one write: a frame's header and
			// body reach the editor together.
			more := nextBuffered(br)
			if len(out) > 0 || more {
				out = append(out, b...)
			} else if _, err := w.Write(b); err != nil {
				return 1, fmt.Errorf("forwarding: %w", err)
			}
			if len(out) > 0 && (!more || len(out) >= maxChunk) {
				if _, err := w.Write(out); err != nil {
					return 1, fmt.Errorf("forwarding: %w", err)
				}
				out = out[:0]
			}
		case kindExit:
			if len(out) > 0 {
				if _, err := w.Write(out); err != nil {
					return 1, fmt.Errorf("forwarding: %w", err)
				}
			}
			if n != 1 {
				return 1, errDropped
			}
			return int(b[0]), nil
		default:
			return 1, fmt.Errorf("daemon sent a chunk of unknown kind %q", h[0])
		}
	}
}

// nextBuffered reports whether a whole chunk is buffered in br, so that
// reading it does not wait.
func nextBuffered(br *bufio.Reader) bool {
	if br.Buffered() < 5 {
		return false
	}
	h, err := br.Peek(5)
	if err != nil {
		return false
	}
	return br.Buffered() >= 5+int(binary.BigEndian.Uint32(h[1:]))
}
