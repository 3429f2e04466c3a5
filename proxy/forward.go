package proxy

import (
	"bytes"
	"compress/gzip"
	"io"
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
	d    *decoded
	done func(res *history.Response, ok bool)
}

// forward sends the request to target with body and passes the answer on
// byte for byte, flushing after every chunk read from the upstream. The
// agent's headers (its credentials included) go out as they came, less the
// hop-by-hop headers and the shared secret. With t, a successful answer is
// also read (an SSE stream as it passes, a JSON body at its end) and
// reported to t.done; any failure reports ok false.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, target *neturl.URL, body io.Reader, length int64, t *tee, rec *record) {
	finish := func(res *history.Response, ok bool) {
		if t != nil {
			t.done(res, ok)
		}
	}
	if length == 0 {
		body = http.NoBody
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, target.String(), body)
	if err != nil {
		finish(nil, false)
		writeError(w, http.StatusBadGateway, "vtcode-ls proxy: "+err.Error())
		return
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
		finish(nil, false)
		s.stats.add(*rec, s.now())
		if r.Context().Err() != nil {
			return
		}
		if br, ok := body.(*bodyReader); ok && br.err != nil {
			// The agent's body failed (too large, too slow): the upstream
			// got an incomplete request, which it cannot take for a whole one.
			ref := bodyRefusal(br.err, br.limit)
			writeError(w, ref.status, ref.msg)
			return
		}
		// No answer to pass on: say so in the shape of an API error. The
		// error names the upstream host, never a header.
		writeError(w, http.StatusBadGateway, "vtcode-ls proxy: upstream "+target.Host+" unreachable: "+providers.Bound(errText(err, target), 300))
		return
	}
	defer resp.Body.Close()
	rec.Status = resp.StatusCode
	if hasCred {
		s.verified.observe(cred, resp.StatusCode)
	}
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
	var sse *proxywire.SSERecorder
	var buf *bytes.Buffer
	tooLarge := false
	encoded := resp.Header.Get("Content-Encoding") != "" && !strings.EqualFold(resp.Header.Get("Content-Encoding"), "identity")
	if t != nil && ok2xx {
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") && !encoded {
			sse = t.d.recorder()
		} else {
			buf = &bytes.Buffer{}
		}
	}
	chunk := make([]byte, 32<<10)
	var copyErr, upErr error
	seen := 0 // bytes of the answer read for the recording
	for {
		n, err := resp.Body.Read(chunk)
		if n > 0 {
			if _, werr := w.Write(chunk[:n]); werr != nil {
				copyErr = werr
				break
			}
			if fl != nil {
				fl.Flush()
			}
			if seen += n; seen > maxRecorded && (sse != nil || buf != nil) {
				// Too large to hold for the recording: passed on, not
				// recorded (the agent's next request carries it).
				s.logger.Info("proxy: answer too large to record; passed on unrecorded", "bytes", seen)
				if sse != nil {
					_, _ = sse.Close()
				}
				sse, buf, tooLarge = nil, nil, true
			}
			switch {
			case sse != nil:
				_, _ = sse.Write(chunk[:n])
			case buf != nil:
				buf.Write(chunk[:n])
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			copyErr, upErr = err, err
			break
		}
	}
	s.stats.add(*rec, s.now())
	switch {
	case t == nil:
	case !ok2xx || copyErr != nil || tooLarge:
		if sse != nil {
			_, _ = sse.Close()
		}
		finish(nil, false)
	case sse != nil:
		res, err := sse.Close()
		if err != nil {
			s.logger.Info("proxy: answer not recorded", "err", err)
			finish(nil, false)
			return
		}
		finish(&res, true)
	default:
		raw := buf.Bytes()
		if encoded && strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
			zr, err := gzip.NewReader(bytes.NewReader(raw))
			if err == nil {
				// Bounded like the stream: a small body may inflate a lot.
				raw, err = io.ReadAll(io.LimitReader(zr, maxRecorded+1))
			}
			if err != nil || len(raw) > maxRecorded {
				finish(nil, false)
				return
			}
		}
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			rr := t.d.recorder()
			_, _ = rr.Write(raw)
			res, err := rr.Close()
			finish(&res, err == nil)
			return
		}
		res, err := t.d.record(raw)
		if err != nil {
			s.logger.Info("proxy: answer not recorded", "err", err)
			finish(nil, false)
			return
		}
		finish(&res, true)
	}
	if upErr != nil && r.Context().Err() == nil {
		// The upstream cut the answer: the agent must see a cut too, not a
		// well-formed end (the chunked body's last chunk, or an empty
		// body that Content-Length 0 would make look complete).
		panic(http.ErrAbortHandler)
	}
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
