package proxy

import (
	"bytes"
	"compress/gzip"
	"io"
	"log/slog"
	"net/http"
	neturl "net/url"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/proxywire"
)

// hopHeaders are the hop-by-hop headers, which belong to one connection
// and are not forwarded (RFC 9110 §7.6.1).
var hopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

// tee records the answer of an engine request from the bytes passed on.
type tee struct {
	d *decoded
	// done is told the answer when it was passed on (or failed): a, nil
	// when there is nothing to record, and whether all of it went to the
	// agent. It runs before the handler returns; the answer's reading
	// (a.result) belongs in the work it queues, after the agent has its
	// answer's end.
	done func(a *answerCopy, complete bool)
}

// finish reports the answer copy, if t asks for one.
func (t *tee) finish(a *answerCopy, complete bool) {
	if t != nil {
		t.done(a, complete)
	}
}

// forward sends the request to target with body and passes the answer on
// byte for byte, flushing after every chunk read from the upstream. The
// agent's headers (its credentials included) go out as they came, less the
// hop-by-hop headers and the shared secret. With t, a successful answer is
// also copied (an SSE stream read as it passes, a JSON body kept whole) and
// handed to t.done; any failure hands a nil copy. Decoding what the copy
// holds is left to t.done's queued work, so the end of the answer never
// waits for it.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, target *neturl.URL, body io.Reader, length int64, t *tee, rec *record) {
	resp := s.send(w, r, target, body, length, t, rec)
	if resp == nil {
		return
	}
	defer resp.Body.Close()
	h := w.Header()
	for k, vs := range resp.Header {
		h[k] = append([]string(nil), vs...)
	}
	removeHop(h)
	w.WriteHeader(resp.StatusCode)
	// The headers go on now, as the upstream sent them, not with the first
	// byte of the body.
	fl, _ := w.(http.Flusher)
	if fl != nil {
		fl.Flush()
	}
	ok2xx := resp.StatusCode >= 200 && resp.StatusCode < 300
	var a *answerCopy
	if t != nil && ok2xx {
		a = newAnswerCopy(t.d, resp.Header, s.logger)
	}
	copyErr, upErr := copyAnswer(w, fl, resp.Body, a)
	s.stats.add(*rec, s.now())
	if t != nil {
		t.finish(a, copyErr == nil)
	}
	if upErr != nil && r.Context().Err() == nil {
		// The upstream cut the answer: the agent must see a cut too, not a
		// well-formed end (the chunked body's last chunk, or an empty
		// body that Content-Length 0 would make look complete).
		panic(http.ErrAbortHandler)
	}
}

// send sends the request to target and returns the upstream's answer;
// with none (nil), it has answered the agent itself and told t.
func (s *Server) send(w http.ResponseWriter, r *http.Request, target *neturl.URL, body io.Reader, length int64, t *tee, rec *record) *http.Response {
	if length == 0 {
		body = http.NoBody
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, target.String(), body)
	if err != nil {
		t.finish(nil, false)
		writeError(w, http.StatusBadGateway, "vtcode-ls proxy: "+err.Error())
		return nil
	}
	out.Header = r.Header.Clone()
	removeHop(out.Header)
	out.Header.Del(SecretHeader)
	out.Header.Del("Content-Length")
	out.ContentLength = length
	rec.BytesOut = int(max(length, 0))
	cred, hasCred := credentialOf(r.Header, target)
	resp, err := s.client.Do(out)
	if err != nil {
		t.finish(nil, false)
		s.stats.add(*rec, s.now())
		if r.Context().Err() != nil {
			return nil
		}
		if br, ok := body.(*bodyReader); ok && br.err != nil {
			// The agent's body failed (too large, too slow): the upstream
			// got an incomplete request, which it cannot take for a whole one.
			ref := bodyRefusal(br.err, br.limit)
			writeError(w, ref.status, ref.msg)
			return nil
		}
		// No answer to pass on: say so in the shape of an API error. The
		// error names the upstream host, never a header.
		writeError(w, http.StatusBadGateway, "vtcode-ls proxy: upstream "+target.Host+" unreachable: "+providers.Bound(errText(err, target), 300))
		return nil
	}
	rec.Status = resp.StatusCode
	if hasCred {
		s.verified.observe(cred, resp.StatusCode)
	}
	return resp
}

// copyAnswer passes the answer body on to w chunk by chunk, flushing each,
// and feeds a copy of it to a. copyErr is the error that ended the copy,
// on either side; upErr is the upstream's.
func copyAnswer(w io.Writer, fl http.Flusher, body io.Reader, a *answerCopy) (copyErr, upErr error) {
	chunk := make([]byte, 32<<10)
	for {
		n, err := body.Read(chunk)
		if n > 0 {
			if _, werr := w.Write(chunk[:n]); werr != nil {
				return werr, nil
			}
			if fl != nil {
				fl.Flush()
			}
			a.write(chunk[:n])
		}
		if err == io.EOF {
			return nil, nil
		}
		if err != nil {
			return err, err
		}
	}
}

// answerCopy is the copy of a successful answer read for the record: an
// event stream as it passes, any other body whole at its end, at most
// maxRecorded bytes of either. A nil answerCopy records nothing.
type answerCopy struct {
	d       *decoded
	header  http.Header
	logger  *slog.Logger
	sse     *proxywire.SSERecorder
	buf     *bytes.Buffer
	seen    int  // bytes of the answer read
	dropped bool // too large to record
}

func newAnswerCopy(d *decoded, h http.Header, logger *slog.Logger) *answerCopy {
	a := &answerCopy{d: d, header: h, logger: logger}
	if strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") && !contentEncoded(h) {
		a.sse = d.recorder()
	} else {
		a.buf = &bytes.Buffer{}
	}
	return a
}

// contentEncoded reports an answer whose body is content-encoded.
func contentEncoded(h http.Header) bool {
	ce := h.Get("Content-Encoding")
	return ce != "" && !strings.EqualFold(ce, "identity")
}

func (a *answerCopy) write(p []byte) {
	if a == nil || a.dropped {
		return
	}
	if a.seen += len(p); a.seen > maxRecorded {
		// Too large to hold for the recording: passed on, not recorded
		// (the agent's next request carries it).
		a.logger.Info("proxy: answer too large to record; passed on unrecorded", "bytes", a.seen)
		if a.sse != nil {
			a.sse.Abort()
		}
		a.sse, a.buf, a.dropped = nil, nil, true
		return
	}
	if a.sse != nil {
		_, _ = a.sse.Write(p)
	} else {
		a.buf.Write(p)
	}
}

// usable reports whether a copy that ended (complete: the whole answer was
// passed on) can give a recorded answer: without it, [answerCopy.result]
// returns none.
func (a *answerCopy) usable(complete bool) bool {
	return a != nil && complete && !a.dropped
}

// result returns the recorded answer of a copy that ended (complete: the
// whole answer was passed on); ok is false when there is none. It may wait
// for the reading of the stream to catch up: call it off the agent's path.
func (a *answerCopy) result(complete bool) (res *history.Response, ok bool) {
	switch {
	case a == nil:
		return nil, false
	case !complete || a.dropped:
		if a.sse != nil {
			a.sse.Abort()
		}
		return nil, false
	case a.sse != nil:
		res, err := a.sse.Close()
		if err != nil {
			a.logger.Info("proxy: answer not recorded", "err", err)
			return nil, false
		}
		return &res, true
	}
	return a.decodeBody()
}

// decodeBody records an answer read whole: inflated when gzip-encoded, as
// an event stream or a JSON body.
func (a *answerCopy) decodeBody() (*history.Response, bool) {
	raw := a.buf.Bytes()
	if contentEncoded(a.header) && strings.EqualFold(a.header.Get("Content-Encoding"), "gzip") {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err == nil {
			// Bounded like the stream: a small body may inflate a lot.
			raw, err = io.ReadAll(io.LimitReader(zr, maxRecorded+1))
		}
		if err != nil || len(raw) > maxRecorded {
			return nil, false
		}
	}
	if strings.HasPrefix(a.header.Get("Content-Type"), "text/event-stream") {
		rr := a.d.recorder()
		_, _ = rr.Write(raw)
		res, err := rr.Close()
		return &res, err == nil
	}
	res, err := a.d.record(raw)
	if err != nil {
		a.logger.Info("proxy: answer not recorded", "err", err)
		return nil, false
	}
	return &res, true
}

// errText is a transport error's text without the full URL (whose query
// could carry a key for some providers).
func errText(err error, target *neturl.URL) string {
	msg := err.Error()
	return strings.ReplaceAll(msg, target.String(), target.Scheme+"://"+target.Host)
}

func removeHop(h http.Header) {
	for _, f := range h.Values("Connection") {
		for _, k := range strings.Split(f, ",") {
			if k = strings.TrimSpace(k); k != "" {
				h.Del(k)
			}
		}
	}
	for _, k := range hopHeaders {
		h.Del(k)
	}
}
