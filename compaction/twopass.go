package compaction

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
)

// TwoPassSplit is the share of the history, by token weight, that pass 1
// summarizes.
const TwoPassSplit = 0.95

// TwoPass is the two-pass state of one session (docs/design.md §8.6). Once pressure
// crosses the soft threshold, [TwoPass.Prefire] summarizes the first 95 % of
// the history in the background (pass 1) and caches the note, keyed by a
// fingerprint of that prefix and the route's provider and model. A later
// [Compact] with Options.TwoPass set and a still-valid note makes pass 2 (the
// note plus the remaining messages) its only provider call.
//
// A changed prefix or model makes the note invalid automatically;
// [TwoPass.Invalidate] drops it explicitly (model switch, restore). At most
// one pass 1 runs at a time. The zero value is not usable; use [NewTwoPass].
// A TwoPass is safe for concurrent use.
type TwoPass struct {
	log *slog.Logger

	mu     sync.Mutex    // guards the fields below
	note   *note         // the cached pass-1 note, nil when none
	gen    uint64        // bumped by Invalidate and Close; a pass 1 started under an older gen is discarded
	cancel func()        // cancels the in-flight pass 1, nil when none
	done   chan struct{} // closed when the in-flight pass 1 ends, nil when none
	closed bool
}

// note is an immutable pass-1 result.
type note struct {
	text            string
	prefixLen       int
	fingerprint     [32]byte
	provider, model string
	tag             string // the Options.Tag of the pass 1 that wrote it
}

// NewTwoPass returns an empty two-pass state. A nil logger discards.
func NewTwoPass(logger *slog.Logger) *TwoPass {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &TwoPass{log: logger}
}

// Prefire starts pass 1 over the first 95 % of msgs in the background and
// returns at once. It does nothing when a pass 1 is already running, when the
// cached note still covers a prefix of msgs for this route, when the route
// would not compact locally, when the client is a [providers.Summarizer]
// (it reads the whole history in one call anyway), or after Close. msgs is copied before Prefire
// returns; opts is used as for Compact, except that Progress and TwoPass are
// ignored: Answered hears the usage of pass 1's calls as they answer, on
// the pass's goroutine, whether or not the note is then kept or used (a
// pass abandoned by Invalidate or Close included), and the note keeps Tag.
//
// ctx bounds pass 1: pass a context that lives as long as the session (for
// example context.WithoutCancel of the request's), not one that ends with the
// request that crossed the soft threshold.
func (t *TwoPass) Prefire(ctx context.Context, msgs []history.Message, opts Options) {
	if opts.Client == nil || len(msgs) < 2 {
		return
	}
	if !strings.EqualFold(opts.Strategy, "local") && StrategyFor(opts.Route) != Local {
		return
	}
	if _, whole := opts.Client.(providers.Summarizer); whole {
		return // one call over the whole history needs no pass 1
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || t.done != nil || ctx.Err() != nil {
		return
	}
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	t.cancel, t.done = cancel, done
	gen, existing := t.gen, t.note
	cp := slices.Clone(msgs)
	opts.Progress, opts.TwoPass = nil, nil
	if opts.Logger == nil {
		opts.Logger = t.log
	}
	go func() {
		defer close(done)
		defer cancel()
		n, err := pass1(pctx, cp, opts, existing)
		t.mu.Lock()
		defer t.mu.Unlock()
		t.cancel, t.done = nil, nil
		switch {
		case err != nil:
			t.log.Info("two-pass pass 1 failed", "err", err)
		case n != nil && gen == t.gen && !t.closed:
			t.note = n
			t.log.Debug("two-pass pass 1 cached", "messages", n.prefixLen)
		}
	}()
}

// Invalidate drops the cached note and abandons a running pass 1; call it
// on a model switch or a restore.
func (t *TwoPass) Invalidate() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.note = nil
	t.gen++
	if t.cancel != nil {
		t.cancel()
	}
}

// Wait blocks until no pass 1 is running.
func (t *TwoPass) Wait() {
	t.mu.Lock()
	d := t.done
	t.mu.Unlock()
	if d != nil {
		<-d
	}
}

// Close cancels a running pass 1, waits for it to end and disables Prefire.
func (t *TwoPass) Close() {
	t.mu.Lock()
	t.closed = true
	t.note = nil
	t.gen++
	if t.cancel != nil {
		t.cancel()
	}
	t.mu.Unlock()
	t.Wait()
}

// lookup returns the cached note when it is valid for work on route r: same
// provider and model, and a fingerprint equal to that of work's prefix,
// with the prefix length and the tag of the pass 1 that wrote it. An
// invalid note is dropped.
func (t *TwoPass) lookup(work []history.Message, r providers.Route) (string, int, string, bool) {
	t.mu.Lock()
	n := t.note
	t.mu.Unlock()
	if n == nil {
		return "", 0, "", false
	}
	if strings.EqualFold(n.provider, r.Provider) && n.model == r.Model &&
		n.prefixLen > 0 && n.prefixLen < len(work) && fingerprint(work[:n.prefixLen]) == n.fingerprint {
		return n.text, n.prefixLen, n.tag, true
	}
	t.mu.Lock()
	if t.note == n {
		t.note = nil
	}
	t.mu.Unlock()
	return "", 0, "", false
}

// consume drops the note after a successful pass 2.
func (t *TwoPass) consume() {
	t.mu.Lock()
	t.note = nil
	t.mu.Unlock()
}

// pass1 summarizes the first 95 % of msgs (which the caller owns). It
// returns nil, nil when there is nothing to do.
func pass1(ctx context.Context, msgs []history.Message, opts Options, existing *note) (*note, error) {
	r := newRun(opts)
	work, _ := history.Normalize(msgs)
	if existing != nil && strings.EqualFold(existing.provider, opts.Route.Provider) && existing.model == opts.Route.Model &&
		existing.prefixLen < len(work) && fingerprint(work[:existing.prefixLen]) == existing.fingerprint {
		return nil, nil // the cached note still applies
	}
	split := splitIndex(r.est, work, TwoPassSplit)
	if split <= 0 {
		return nil, nil
	}
	pruned, err := pruneToolResults(ctx, r.est, work[:split])
	if err != nil {
		return nil, err
	}
	if r.checksModel() {
		// The model writes pass 1 with the record of the prefix too.
		r.withRecord(r.recordOf(ctx, work[:split]))
	}
	text, err := r.summarize(ctx, nil, pruned, "local, two-pass pass 1", -1)
	if err != nil {
		return nil, err
	}
	return &note{text: text, prefixLen: split, fingerprint: fingerprint(work[:split]), provider: opts.Route.Provider, model: opts.Route.Model, tag: opts.Tag}, nil
}

// splitIndex returns the index that splits msgs (normalized) at fraction f of
// its token weight: the first i whose cumulative weight reaches round(f × Σ),
// plus one, kept below len(msgs), then snapped so no batch is cut (moved
// forward past tool results, or back when that reaches the end). 0 means no
// split.
func splitIndex(est *history.Estimator, msgs []history.Message, f float64) int {
	if len(msgs) < 2 {
		return 0
	}
	f = min(max(f, 0.05), 0.95)
	total := spanTokens(est, msgs)
	target := int(math.Round(f * float64(total)))
	split, cum := len(msgs), 0
	for i := range msgs {
		cum += est.Message(&msgs[i])
		if cum >= target {
			split = i + 1
			break
		}
	}
	split = min(max(split, 1), len(msgs)-1)
	c := split
	for c < len(msgs) && msgs[c].Role == history.Tool {
		c++
	}
	if c >= len(msgs) {
		for c = split; c > 0 && msgs[c].Role == history.Tool; c-- {
		}
	}
	return c
}

// fingerprint hashes what identifies a prefix: per message its role, id,
// content, tool calls (id, name, arguments, input), call id and tool name.
func fingerprint(msgs []history.Message) [32]byte {
	h := sha256.New()
	var n [8]byte
	put := func(b []byte) {
		binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	str := func(s string) { put([]byte(s)) }
	binary.LittleEndian.PutUint64(n[:], uint64(len(msgs)))
	h.Write(n[:])
	for i := range msgs {
		m := &msgs[i]
		str(string(m.Role))
		str(m.ID)
		c, _ := m.Content.MarshalJSON()
		put(c)
		binary.LittleEndian.PutUint64(n[:], uint64(len(m.ToolCalls)))
		h.Write(n[:])
		for _, tc := range m.ToolCalls {
			str(tc.ID)
			str(tc.Name)
			str(tc.Arguments)
			str(tc.Input)
		}
		str(m.ToolCallID)
		str(m.ToolName)
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}
