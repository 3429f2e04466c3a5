package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/vtcode/vtcode-ls/session"
)

// createTimeout bounds how long a progress waits for the client to answer
// window/workDoneProgress/create; without an answer the work goes on
// without progress.
const createTimeout = 10 * time.Second

// A progressTracker reports LSP work-done progress for the requests of one
// connection and maps window/workDoneProgress/cancel back to the request
// that owns a token.
type progressTracker struct {
	// create asks the client to create token and waits for its answer.
	create func(ctx context.Context, token ProgressToken) error
	// send queues a $/progress notification.
	send func(ProgressParams)

	mu        sync.Mutex // guards the fields below
	supported bool       // the client advertised window.workDoneProgress
	seq       int
	cancels   map[string]context.CancelFunc // by token text
}

// setSupported records whether the client accepts server-created tokens.
func (t *progressTracker) setSupported(ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.supported = ok
}

// cancel cancels the work that reports on token, if any.
func (t *progressTracker) cancel(token ProgressToken) {
	t.mu.Lock()
	c := t.cancels[tokenKey(token)]
	t.mu.Unlock()
	if c != nil {
		c()
	}
}

func (t *progressTracker) register(token ProgressToken, cancel context.CancelFunc) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cancels == nil {
		t.cancels = map[string]context.CancelFunc{}
	}
	t.cancels[tokenKey(token)] = cancel
}

func (t *progressTracker) unregister(token ProgressToken) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.cancels, tokenKey(token))
}

// tokenKey is the canonical text of a token, for map keys.
func tokenKey(token ProgressToken) string {
	var b bytes.Buffer
	if json.Compact(&b, token) != nil {
		return string(token)
	}
	return b.String()
}

// validToken reports whether raw is a usable progress token: a string or an
// integer.
func validToken(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return false
	}
	if raw[0] == '"' {
		var s string
		return json.Unmarshal(raw, &s) == nil
	}
	_, err := strconv.ParseInt(string(raw), 10, 64)
	return err == nil
}

// start returns the session.Progress of one request. ctx is the
// request's context and cancel cancels it; clientToken is the request's
// workDoneToken (nil for none).
func (t *progressTracker) start(ctx context.Context, clientToken ProgressToken, cancel context.CancelFunc) *workDone {
	w := &workDone{t: t, ctx: ctx, client: clientToken, cancel: cancel}
	if clientToken != nil {
		t.register(clientToken, cancel)
	}
	return w
}

// A workDone is the session.Progress of one request. Each Begin opens a
// progress on a token: the client's workDoneToken (usable once: LSP forbids
// reusing an ended token), or a token the server creates with
// window/workDoneProgress/create when the client supports it. Begin waits
// for the client's answer to create (a round trip, before the long work
// starts; bounded by createTimeout and the request's cancellation), so the
// client sees the progress in order with everything else the work sends.
// A token the client refused carries nothing.
type workDone struct {
	t      *progressTracker
	ctx    context.Context
	client ProgressToken
	cancel context.CancelFunc

	mu         sync.Mutex    // guards the fields below
	open       bool          // a progress is begun and not ended
	token      ProgressToken // the open progress's token; nil: nowhere to report
	created    bool          // token was created by the server
	clientUsed bool          // the client token carried a progress already
}

var _ session.Progress = (*workDone)(nil)

// Begin implements session.Progress.
func (w *workDone) Begin(title string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.open {
		return
	}
	w.t.mu.Lock()
	supported := w.t.supported
	w.t.mu.Unlock()
	w.token, w.created = nil, false
	switch {
	case w.client != nil && !w.clientUsed:
		w.clientUsed = true
		w.token = w.client
	case w.client == nil && supported:
		w.t.mu.Lock()
		w.t.seq++
		token := ProgressToken(strconv.Quote("vtcode-" + strconv.Itoa(w.t.seq)))
		w.t.mu.Unlock()
		if err := w.t.create(w.ctx, token); err == nil {
			w.t.register(token, w.cancel)
			w.token, w.created = token, true
		}
	}
	w.open = true
	w.send(WorkDoneProgressBegin{Kind: "begin", Title: title, Cancellable: true})
}

// send sends one progress value on the open progress. w.mu is held.
func (w *workDone) send(v any) {
	if w.token != nil {
		w.t.send(ProgressParams{Token: w.token, Value: v})
	}
}

// Report implements session.Progress.
func (w *workDone) Report(message string, percent int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.open {
		return
	}
	r := WorkDoneProgressReport{Kind: "report", Cancellable: true, Message: message}
	if percent >= 0 {
		pct := min(percent, 100)
		r.Percentage = &pct
	}
	w.send(r)
}

// End implements session.Progress.
func (w *workDone) End(message string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.end(message)
}

// end closes the open progress. w.mu is held.
func (w *workDone) end(message string) {
	if !w.open {
		return
	}
	w.open = false
	w.send(WorkDoneProgressEnd{Kind: "end", Message: message})
	if w.created {
		w.t.unregister(w.token)
	}
	w.token, w.created = nil, false
}

// finish closes the request's progress: a progress the work left open is
// ended with a message derived from err.
func (w *workDone) finish(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.open {
		msg := "Compaction finished"
		switch {
		case errors.Is(err, context.Canceled):
			msg = "Compaction cancelled"
		case err != nil:
			msg = "Compaction failed: " + bound(err.Error())
		}
		w.end(msg)
	}
	if w.client != nil {
		w.t.unregister(w.client)
	}
}
