package proxy

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"time"
)

// The proxy's bounds. The APIs take request bodies up to 32 MB; an API
// endpoint's body may be 33 MiB (the limit and a margin), a larger one is
// answered 413 and nothing of it is forwarded. Other paths (file uploads,
// …) are streamed, not held, up to 512 MiB.
const (
	// MaxAPIBody bounds the body of an API endpoint (messages, responses,
	// chat completions, count_tokens).
	MaxAPIBody = 33 << 20
	// MaxPassThroughBody bounds the body of any other path.
	MaxPassThroughBody = 512 << 20
	// maxRecorded bounds the bytes of an answer the proxy reads to record
	// it; a larger answer is passed on whole but not recorded (the agent's
	// next request carries it, and the session takes it from there).
	maxRecorded = 16 << 20
)

// Defaults of [Options] the zero value leaves open.
const (
	// DefaultBodyReadTimeout is the longest wait for the next bytes of a
	// request body.
	DefaultBodyReadTimeout = 30 * time.Second
	// DefaultBodyTimeout is the longest a request body may take in all.
	DefaultBodyTimeout = 2 * time.Minute
	// DefaultQueueWait is the longest a request waits for one of the
	// engine's slots before it is answered 503 with Retry-After.
	DefaultQueueWait = 30 * time.Second
)

// DefaultMaxConcurrent is how many requests the engine works on at once
// (reading, decoding, projecting, encoding; forwarding and streaming the
// answer are not counted).
func DefaultMaxConcurrent() int { return max(4, 2*runtime.GOMAXPROCS(0)) }

// NewHTTPServer returns the http.Server the proxy runs in: headers within
// 10 s and 256 KiB, idle keep-alive connections closed after 2 minutes.
// Body reads are bounded by the handler (Options.BodyReadTimeout and
// BodyTimeout), and nothing bounds the answer's writing: a stream lasts as
// long as the upstream's.
func NewHTTPServer(h http.Handler, logger *slog.Logger) *http.Server {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    256 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
	}
}

// gate bounds the requests the engine works on at once.
type gate chan struct{}

// enter takes a slot, waiting at most wait; false when none came free (or
// ctx ended).
func (g gate) enter(ctx context.Context, wait time.Duration) bool {
	select {
	case g <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case g <- struct{}{}:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

func (g gate) leave() { <-g }

// bodyReader reads a request body within the server's time bounds: each
// read must bring bytes within idle, the whole body within end. It sets
// the connection's read deadline (http.ResponseController) before each
// read and clears it at the end of the body.
type bodyReader struct {
	r     io.Reader
	rc    *http.ResponseController
	idle  time.Duration
	end   time.Time
	now   func() time.Time
	limit int64
	done  bool
	err   error // the error that ended the body early, if any
}

func (s *Server) newBodyReader(w http.ResponseWriter, r *http.Request, limit int64) *bodyReader {
	now := s.now()
	return &bodyReader{r: http.MaxBytesReader(w, r.Body, limit), rc: http.NewResponseController(w),
		idle: s.bodyIdle, end: now.Add(s.bodyTotal), now: s.now, limit: limit}
}

// readBody reads a whole request body: into one buffer of the announced
// length when there is one (the body is the largest thing a request holds;
// growing a buffer to it copies it again and again), else growing.
func readBody(r io.Reader, length int64) ([]byte, error) {
	if length <= 0 {
		return io.ReadAll(r)
	}
	buf := make([]byte, 0, length+1) // +1: the read that finds the end needs room
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func (b *bodyReader) Read(p []byte) (int, error) {
	if !b.done {
		d := b.now().Add(b.idle)
		if d.After(b.end) {
			d = b.end
		}
		_ = b.rc.SetReadDeadline(d)
	}
	n, err := b.r.Read(p)
	if err != nil && !b.done {
		b.done = true
		if err == io.EOF {
			_ = b.rc.SetReadDeadline(time.Time{})
		} else {
			// The deadline stays (or is now): the server's discarding of the
			// rest of the body fails at once and the connection is closed
			// after the answer.
			b.err = err
			_ = b.rc.SetReadDeadline(b.now())
		}
	}
	return n, err
}

// bodyRefusal turns an error reading a request body into the proxy's
// answer: 413 over the limit, 408 too slow, else 400.
func bodyRefusal(err error, limit int64) *refusal {
	var mb *http.MaxBytesError
	switch {
	case errors.As(err, &mb):
		return &refusal{http.StatusRequestEntityTooLarge, "vtcode-ls proxy: the request body exceeds " + strconv.FormatInt(limit>>20, 10) +
			" MiB, the proxy's limit for this endpoint; nothing was forwarded"}
	case errors.Is(err, os.ErrDeadlineExceeded):
		return &refusal{http.StatusRequestTimeout, "vtcode-ls proxy: the request body came too slowly; nothing was forwarded"}
	}
	return &refusal{http.StatusBadRequest, "vtcode-ls proxy: reading the request body: " + err.Error()}
}
