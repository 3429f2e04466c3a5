package compaction

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
)

// InlineTriggerFloor is the smallest input-token trigger of the
// compact_20260112 edit.
const InlineTriggerFloor = providers.AnthropicCompactTriggerFloor

// Result modes.
const (
	ModeLocal    = "local"
	ModeProvider = "provider"
)

// Envelope is the session's last request envelope: the system prompt and tool
// schemas, in order, sent to provider/model. A summary request reuses it when
// its route has the same provider and model, so the provider's prompt cache
// serves the prefix.
type Envelope struct {
	Provider, Model, System string
	Tools                   []json.RawMessage
}

// Options configures one compaction.
type Options struct {
	Trigger Trigger // recorded by the caller; informational here
	// Strategy is "auto" (or ""): the route's strategy with Local fallback;
	// "local": Local only; "native": the route's native strategy, with Local
	// fallback when it fails or does not fire, and a KindUnsupported error on
	// routes without one.
	Strategy     string
	Instructions string // extra instructions for this compaction
	Prompt       string // summary prompt; "" means DefaultPrompt
	// Pin is text the user pinned (compaction.pin): every local summary
	// carries it verbatim, whichever summarizer wrote the summary.
	Pin []string
	// Record, when set, is the record's own writer (the offline
	// summarizer): a model writing the summary receives its account of the
	// record, and the model's summary is checked by it (a claim the record
	// contradicts is removed and listed as corrected; what the record shows
	// and the model left out is appended verbatim). When it fails, the
	// model's claims are still checked, and nothing is appended.
	Record providers.Summarizer
	// RecordFallback, with Record, makes the record's own summary the
	// summary when the model's call fails or answers nothing
	// ([Result.WriterFallback] says why); without it that is a failed
	// compaction.
	RecordFallback bool

	// Capacity is the resolved window (docs/design.md §4), 0 when unknown.
	Capacity int
	// ReservedOutput is the session's output reserve; the rebuilt history is
	// bounded to leave it free (see WindowBound).
	ReservedOutput int
	// Prefix is the session's frozen prefix (system prompt + tool schemas) in
	// tokens; the rebuilt history is bounded to leave it free, and a reused
	// envelope counts at least this much.
	Prefix int
	// SummaryOutputLimit is the summary request's max output tokens, 0 for
	// the provider's default; it is subtracted from the summary budget.
	SummaryOutputLimit int

	// RoutePolicy of the route; the zero value means DefaultRoutePolicy().
	RoutePolicy RoutePolicy
	Envelope    *Envelope // nil: no envelope reuse
	Route       providers.Route
	// Client generates summaries; it may also implement providers.Compactor
	// (native standalone) or providers.Summarizer (a summarizer that reads
	// the whole history: Local then makes one Summarize call instead of
	// bounded forks, two-pass and hierarchical bands). It must be safe for
	// concurrent use when a TwoPass is set.
	Client    providers.Generator
	Estimator *history.Estimator // nil: o200k
	// Progress receives progress reports; nil is fine. percent is 0–100, or
	// -1 when unknown. It is called on Compact's goroutine only.
	Progress func(message string, percent int)
	TwoPass  *TwoPass // nil: single pass
	// Answered, when set, is called with the usage of every provider call
	// that answers, as it answers: also when the compaction then fails,
	// changes nothing, is cancelled or its result is never used, and for
	// the calls of a pass 1 on the pass's goroutine ([TwoPass.Prefire]). It
	// must not block. A call that fails without an answer is not reported.
	Answered func(history.Usage)
	// Tag names this run to the caller: the note a pass 1 writes keeps it,
	// and a Compact whose pass 2 uses that note reports it as
	// [Result].NoteTag.
	Tag string

	// Hierarchical summarizes in two bands (older, then newer with the older
	// band's note), both prepared and budget-checked before either call.
	Hierarchical bool
	// RetainedMessages is how many earlier user messages are kept between the
	// summary and the tail; 0 means DefaultRetainedMessages, < 0 none.
	RetainedMessages int
	Logger           *slog.Logger // nil: discard
}

// Result is a successful compaction. Messages is the new live history; the
// input history is untouched.
type Result struct {
	Messages []history.Message
	Mode     string   // ModeLocal or ModeProvider
	Strategy Strategy // the strategy that ran
	// Fallback says why a native strategy fell back to Local; "" if none.
	Fallback string

	OriginalMessageCount  int // len of the input history
	CompactedMessageCount int
	OriginalTokens        int // estimate of the normalized input history
	CompactedTokens       int
	Summary               string        // the summary text (or inline compaction content), "" when opaque
	Usage                 history.Usage // summed over every provider call that answered
	Calls                 int           // provider calls made by this Compact
	CachedNote            bool          // pass 2 of two-pass ran on a cached pass-1 note
	NoteTag               string        // the Options.Tag of the pass 1 whose note pass 2 used
	// WriterFallback says why the record's summary stands in for the
	// model's (Options.RecordFallback); "" when it does not.
	WriterFallback string
	// SummaryIndex is the index in Messages of the summary message this
	// compaction wrote ([SummaryMessage]; ModeLocal: 0), -1 when it wrote
	// none (a provider's compaction). The engine knows its own summary by
	// this index, never by its words.
	SummaryIndex int
}

// Compact compacts msgs (the full live history) and returns the new history.
// It never modifies msgs. It fails with ErrAlreadyCompact when the result
// would not be smaller than the input, with an *Error for budget and provider
// failures, and with ctx's error, promptly, when ctx ends.
//
// Local summary requests have this shape:
//
//	providers.Request{
//	  Model:    opts.Route.Model,
//	  System:   envelope system prompt, or "" without a matching envelope,
//	  Tools:    envelope tool schemas (tool use disabled), or nil,
//	  Messages: [carrier note (two-pass pass 2 / hierarchical band 2)]
//	            + bounded fork of the history (newest batches whole, older
//	              ones previewed)
//	            + user: prompt [+ "\n\nAdditional instructions for this summary:\n" + Instructions],
//	  MaxOutputTokens: opts.SummaryOutputLimit,
//	}
//
// A [providers.Summarizer] client instead gets one
// providers.SummaryRequest{Messages: the whole normalized history,
// Instructions, Prompt, MaxOutputTokens: min(opts.SummaryOutputLimit when
// set, 4,096, max(256, min(half of what the summary replaces, window/10)))}.
func Compact(ctx context.Context, msgs []history.Message, opts Options) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := newRun(opts)
	work := normalizedCopy(msgs)
	if len(work) == 0 {
		return nil, ErrAlreadyCompact
	}
	if err := warmEstimates(ctx, r.est, work); err != nil {
		return nil, err
	}
	res := &Result{OriginalMessageCount: len(msgs), OriginalTokens: spanTokens(r.est, work), SummaryIndex: -1}
	defer func() { res.Usage, res.Calls = r.usage, r.calls }()

	strategy := StrategyFor(opts.Route)
	switch strings.ToLower(strings.TrimSpace(opts.Strategy)) {
	case "", "auto":
	case "local":
		strategy = Local
	case "native":
		if strategy == Local {
			return nil, r.newErr(KindUnsupported, 0, 0, fmt.Errorf("route has no native compaction strategy; use auto or local"))
		}
	default:
		return nil, fmt.Errorf("compaction: unknown strategy %q (want auto, local or native)", opts.Strategy)
	}
	if opts.Client == nil {
		return nil, r.newErr(KindProvider, 0, 0, errors.New("no provider client"))
	}

	if strategy != Local {
		r.progress(fmt.Sprintf("Compacting %d messages (%s)", len(work), strategy), 10)
		var out []history.Message
		var fallback string
		var err error
		if strategy == NativeStandalone {
			out, fallback, err = r.standalone(ctx, work)
		} else {
			out, fallback, err = r.inline(ctx, work, res)
		}
		if err != nil {
			return nil, err
		}
		if fallback == "" {
			res.Strategy, res.Mode = strategy, ModeProvider
			return r.finish(res, out)
		}
		r.log.Info("native compaction fell back to local", "strategy", strategy, "reason", fallback)
		res.Fallback = fallback
		r.progress("Native compaction did not apply; summarizing locally", 30)
	}

	out, err := r.local(ctx, work, res)
	if err != nil {
		return nil, err
	}
	res.Strategy, res.Mode = Local, ModeLocal
	return r.finish(res, out)
}

// run is the state of one Compact (or one pass 1).
type run struct {
	opts    Options
	est     *history.Estimator
	rp      RoutePolicy
	log     *slog.Logger
	system  string
	tools   []json.RawMessage
	prefix  int             // tokens of the envelope sent with summary requests
	request history.Message // the final user message of summary requests
	instr   int             // its estimate
	usage   history.Usage
	calls   int
}

func newRun(opts Options) *run {
	r := &run{opts: opts, est: opts.Estimator, rp: opts.RoutePolicy, log: opts.Logger}
	if r.est == nil {
		r.est = history.NewEstimator(history.O200k)
	}
	if r.rp == (RoutePolicy{}) {
		r.rp = DefaultRoutePolicy()
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if env := opts.Envelope; env != nil && strings.EqualFold(env.Provider, opts.Route.Provider) && env.Model == opts.Route.Model {
		r.system, r.tools = env.System, env.Tools
		r.prefix = max(opts.Prefix, r.est.Prefix(env.System, env.Tools))
	}
	r.request = history.NewText(history.User, requestText(opts.Prompt, opts.Instructions))
	r.instr = r.est.Message(&r.request)
	return r
}

// normalizedCopy returns the normalized history as a slice the caller does
// not own, so estimates can be cached on it without touching msgs.
func normalizedCopy(msgs []history.Message) []history.Message {
	norm, changed := history.Normalize(msgs)
	if changed {
		return norm
	}
	return slices.Clone(norm)
}

func (r *run) progress(msg string, pct int) {
	if r.opts.Progress != nil {
		r.opts.Progress(msg, pct)
	}
}

func (r *run) newErr(kind string, input, budget int, err error) *Error {
	return &Error{Kind: kind, Provider: r.opts.Route.Provider, Model: r.opts.Route.Model, InputTokens: input, Budget: budget, Err: err}
}

// addUsage adds the usage of a call that answered and reports it to
// Options.Answered.
func (r *run) addUsage(u history.Usage) {
	r.usage.InputTokens += u.InputTokens
	r.usage.OutputTokens += u.OutputTokens
	r.usage.CacheReadTokens += u.CacheReadTokens
	r.usage.CacheCreationTokens += u.CacheCreationTokens
	r.usage.CacheCreation1hTokens += u.CacheCreation1hTokens
	r.usage.ReasoningTokens += u.ReasoningTokens
	r.usage.Iterations = append(r.usage.Iterations, u.Iterations...)
	if r.opts.Answered != nil {
		r.opts.Answered(u)
	}
}

func (r *run) finish(res *Result, out []history.Message) (*Result, error) {
	res.Messages = out
	res.CompactedMessageCount = len(out)
	res.CompactedTokens = spanTokens(r.est, out)
	if res.CompactedTokens >= res.OriginalTokens {
		return nil, ErrAlreadyCompact
	}
	r.progress("Rebuilt history", 95)
	return res, nil
}

// local runs the Local strategy: summary (two-pass, hierarchical or single
// pass) + retained user messages + continuity tail, bounded to the window.
func (r *run) local(ctx context.Context, work []history.Message, res *Result) ([]history.Message, error) {
	tailBudget := TailBudget(r.opts.Capacity, r.rp.RetainRatio)
	tail, tailStart := continuityTail(r.est, work, tailBudget)
	if tailStart == len(work) || spanTokens(r.est, tail) == spanTokens(r.est, work[tailStart:]) {
		// The tail is verbatim: only what precedes it can shrink, and a
		// summary message cannot be smaller than a few dozen tokens.
		if spanTokens(r.est, work[:tailStart]) <= minSummarizable {
			return nil, ErrAlreadyCompact
		}
	}
	count := r.opts.RetainedMessages
	if count == 0 {
		count = DefaultRetainedMessages
	}
	retained := retainUserMessages(r.est, work[:tailStart], tailBudget, count)
	if nothingNew(work[:tailStart], retained) {
		// Only an earlier summary and messages that would be retained again
		// precede a verbatim tail: a new summary would restate the old one.
		if tailStart == len(work) || spanTokens(r.est, tail) == spanTokens(r.est, work[tailStart:]) {
			return nil, ErrAlreadyCompact
		}
	}
	pruned, err := pruneToolResults(ctx, r.est, work)
	if err != nil {
		return nil, err
	}

	replaced := spanTokens(r.est, work) - spanTokens(r.est, tail) - spanTokens(r.est, retained)
	record := ""
	if r.checksModel() {
		record = r.recordOf(ctx, work)
		r.withRecord(record)
	}
	summary, err := r.summary(ctx, work, pruned, replaced, res)
	switch {
	case err != nil && r.opts.RecordFallback && record != "" && ctx.Err() == nil:
		// The model failed or answered nothing: the record's own summary.
		res.WriterFallback = "the model's summary failed; the record's summary is used: " + providers.Bound(redact(err.Error()), 512)
		r.log.Warn("model summary failed; using the record's summary", "err", redact(err.Error()))
		summary = record
	case err != nil:
		return nil, err
	case r.checksModel():
		if summary, err = checked(ctx, summary, record, work); err != nil {
			return nil, err
		}
	}
	summary = withPins(summary, r.opts.Pin)
	res.Summary = summary

	res.SummaryIndex = 0 // boundToWindow leads with the summary
	return boundToWindow(r.est, SummaryMessage(summary), retained, tail, WindowBound(r.opts.Capacity, r.opts.ReservedOutput, r.opts.Prefix)), nil
}

// summary produces the summary text of work (pruned is work with oversized
// tool results previewed; replaced is the size of what the summary stands
// in for). A client that is a [providers.Summarizer] reads the whole of work
// in one call; every other client gets bounded forks.
func (r *run) summary(ctx context.Context, work, pruned []history.Message, replaced int, res *Result) (string, error) {
	if s, ok := r.opts.Client.(providers.Summarizer); ok {
		return r.summarizeWhole(ctx, s, work, replaced)
	}
	if tp := r.opts.TwoPass; tp != nil {
		if note, n, tag, ok := tp.lookup(work, r.opts.Route); ok {
			lead := []history.Message{carrier(r.est, note)}
			s, err := r.summarize(ctx, lead, pruned[n:], "local, two-pass", 40)
			switch {
			case err == nil:
				res.CachedNote, res.NoteTag = true, tag
				tp.consume()
				return s, nil
			case ctx.Err() != nil:
				return "", ctx.Err()
			}
			r.log.Warn("two-pass pass 2 failed; summarizing in one pass", "err", err)
		}
	}
	if r.opts.Hierarchical {
		if s, ok, err := r.hierarchical(ctx, pruned); ok {
			return s, err
		}
	}
	return r.summarize(ctx, nil, pruned, "local", 20)
}

// nothingNew reports whether prefix (what precedes the continuity tail)
// holds nothing a summary would add: only system messages that carry an
// earlier summary and user messages kept verbatim in retained.
func nothingNew(prefix, retained []history.Message) bool {
	summaries := 0
	for i := range prefix {
		m := &prefix[i]
		switch {
		case IsSummaryMessage(m):
			summaries++
		case m.Role == history.User && slices.ContainsFunc(retained, func(k history.Message) bool { return history.Equal(k, *m) }):
		default:
			return false
		}
	}
	return summaries > 0
}

// minWholeSummary is the smallest output bound of a whole-history summary.
const minWholeSummary = 256

// minSummarizable is the size below which the part of the history before
// the continuity tail is not worth a summary call.
const minSummarizable = 64

// noteCap bounds an earlier note carried into a second summary call.
const noteCap = 3000

// carrier wraps an earlier note in the user message that leads pass 2.
func carrier(est *history.Estimator, note string) history.Message {
	return history.NewText(history.User, carrierHeader+truncateHead(est, strings.TrimSpace(note), noteCap)+carrierFooter)
}

// hierarchical summarizes the older half of pruned (by token weight, snapped
// to a batch boundary), then the newer half with the older note. Both bands
// are bounded and budget-checked before either call. ok is false when the
// history cannot be split (one pass is used then).
func (r *run) hierarchical(ctx context.Context, pruned []history.Message) (string, bool, error) {
	split := splitIndex(r.est, pruned, 0.5)
	if split <= 0 || split >= len(pruned) {
		return "", false, nil
	}
	band1, band2 := pruned[:split], pruned[split:]
	reserve := r.opts.SummaryOutputLimit
	if reserve <= 0 || reserve > noteCap {
		reserve = noteCap
	}
	placeholder := carrier(r.est, "")
	leadReserve := r.est.Message(&placeholder) + reserve
	if r.opts.Capacity > 0 {
		budget := SummaryBudget(r.opts.Capacity, r.prefix, r.opts.SummaryOutputLimit)
		if _, _, err := selectFork(ctx, r.est, band1, budget-r.instr); err != nil {
			if ctx.Err() != nil {
				return "", true, ctx.Err()
			}
			return "", true, r.budgetErr(err, 0, budget)
		}
		if _, _, err := selectFork(ctx, r.est, band2, budget-r.instr-leadReserve); err != nil {
			if ctx.Err() != nil {
				return "", true, ctx.Err()
			}
			return "", true, r.budgetErr(err, leadReserve, budget)
		}
	}
	note, err := r.summarize(ctx, nil, band1, "local, older band", 20)
	if err != nil {
		return "", true, err
	}
	lead := []history.Message{carrier(r.est, truncateHead(r.est, note, reserve))}
	s, err := r.summarize(ctx, lead, band2, "local, newer band", 60)
	return s, true, err
}

func (r *run) budgetErr(err error, lead, budget int) error {
	need := 0
	var be *budgetError
	if errors.As(err, &be) {
		need = be.need
	}
	return r.newErr(KindBudget, r.prefix+lead+need+r.instr, budget, err)
}

// summarize sends lead + a fork of body bounded to the summary budget + the
// request message, retrying with a halved budget on capacity rejections
// (docs/design.md §8.5), and returns the trimmed summary.
func (r *run) summarize(ctx context.Context, lead, body []history.Message, label string, pct int) (string, error) {
	known := r.opts.Capacity > 0
	budget := SummaryBudget(r.opts.Capacity, r.prefix, r.opts.SummaryOutputLimit)
	leadTok := spanTokens(r.est, lead)
	maxRetries := max(0, r.rp.MaxOverflowRetries)
	retries, lastInput := 0, -1
	var lastErr error
	for {
		fork, forkTok := body, 0
		if known {
			var err error
			fork, forkTok, err = selectFork(ctx, r.est, body, budget-r.instr-leadTok)
			if err != nil {
				if ctx.Err() != nil {
					return "", ctx.Err()
				}
				if lastErr != nil {
					return "", lastErr // the retry cannot be bounded any further
				}
				return "", r.budgetErr(err, leadTok, budget)
			}
		} else {
			forkTok = spanTokens(r.est, body)
		}
		input := r.prefix + leadTok + forkTok + r.instr
		if lastErr != nil && input >= lastInput {
			// This retry cannot shrink the input: skip it.
			if retries >= maxRetries {
				return "", lastErr
			}
			retries++
			budget /= 2
			continue
		}
		req := &providers.Request{
			Model:           r.opts.Route.Model,
			System:          r.system,
			Tools:           r.tools,
			Messages:        make([]history.Message, 0, len(lead)+len(fork)+1),
			MaxOutputTokens: r.opts.SummaryOutputLimit,
		}
		req.Messages = append(req.Messages, lead...)
		req.Messages = append(req.Messages, fork...)
		req.Messages = append(req.Messages, r.request)
		r.progress(fmt.Sprintf("Summarizing %d messages (%s)", len(lead)+len(fork), label), pct)
		r.calls++
		resp, err := r.opts.Client.Generate(ctx, req)
		if resp != nil {
			r.addUsage(resp.Usage) // billed whatever becomes of the answer
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if err == nil {
			text := strings.TrimSpace(resp.Message.Text())
			if text == "" {
				return "", r.newErr(KindEmpty, input, budget, errEmptySummary)
			}
			return text, nil
		}
		perr := r.newErr(KindProvider, input, budget, err)
		if !providers.IsCapacity(err) || retries >= maxRetries {
			return "", perr
		}
		retries++
		lastErr, lastInput = perr, input
		if known {
			budget /= 2
		} else {
			in := input
			var pe *providers.Error
			if errors.As(err, &pe) && pe.InputTokens > 0 {
				in = pe.InputTokens
			}
			budget, known = in/2, true
		}
		r.log.Info("summary request exceeded the context window; retrying smaller", "input", input, "budget", budget)
		r.progress(fmt.Sprintf("Summary input too large; retrying within %s tokens", history.FormatCount(budget)), pct)
	}
}

// summarizeWhole asks a summarizer whose input is not limited by a model
// window for a summary of the whole history (earlier summaries included),
// with the typed prompt, instructions and output bound; nothing but the
// output is bounded: to the summary output limit, [SummaryMessageCap], and
// the smaller of half of what the summary replaces and a tenth of the
// window (at least [minWholeSummary]), so that the summary is smaller than
// what it stands in for and leaves the window room to work.
func (r *run) summarizeWhole(ctx context.Context, s providers.Summarizer, work []history.Message, replaced int) (string, error) {
	limit := SummaryMessageCap
	if r.opts.SummaryOutputLimit > 0 {
		limit = min(limit, r.opts.SummaryOutputLimit)
	}
	bound := replaced / 2
	if r.opts.Capacity > 0 {
		bound = min(bound, r.opts.Capacity/10)
	}
	limit = min(limit, max(minWholeSummary, bound))
	r.progress(fmt.Sprintf("Summarizing %d messages (local)", len(work)), 20)
	r.calls++
	resp, err := s.Summarize(ctx, &providers.SummaryRequest{
		Messages:        work,
		Instructions:    strings.TrimSpace(r.opts.Instructions),
		Prompt:          r.opts.Prompt,
		MaxOutputTokens: limit,
	})
	if resp != nil {
		r.addUsage(resp.Usage)
	}
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	input := spanTokens(r.est, work)
	if err != nil {
		return "", r.newErr(KindProvider, input, 0, err)
	}
	text := strings.TrimSpace(resp.Message.Text())
	if text == "" {
		return "", r.newErr(KindEmpty, input, 0, errEmptySummary)
	}
	return text, nil
}

// standalone runs NativeStandalone. fallback is non-empty when Local must run
// instead; err is only ctx's error.
func (r *run) standalone(ctx context.Context, work []history.Message) (out []history.Message, fallback string, err error) {
	c, ok := r.opts.Client.(providers.Compactor)
	if !ok {
		return nil, "the provider client has no native compaction endpoint", nil
	}
	instructions := strings.TrimSpace(r.opts.Instructions)
	if p := strings.TrimSpace(r.opts.Prompt); p != "" && p != strings.TrimSpace(DefaultPrompt) {
		instructions = strings.TrimSpace(p + "\n\n" + instructions)
	}
	budget := SummaryBudget(r.opts.Capacity, 0, 0)
	if budget > 0 {
		budget = max(1, budget-r.est.Text(instructions))
	}
	input, err := boundNative(ctx, r.est, work, budget)
	if err != nil {
		return nil, "", err
	}
	r.calls++
	resp, cerr := c.Compact(ctx, &providers.CompactRequest{Model: r.opts.Route.Model, Input: input, Instructions: instructions})
	if resp != nil {
		r.addUsage(resp.Usage)
	}
	if ctx.Err() != nil {
		return nil, "", ctx.Err()
	}
	if cerr != nil {
		return nil, "native standalone compaction failed: " + providers.Bound(redact(cerr.Error()), 512), nil
	}
	if len(resp.Output) == 0 {
		return nil, "native standalone compaction returned no output", nil
	}
	return resp.Output, "", nil
}

// inline runs NativeInline. fallback is non-empty when Local must run
// instead; err is only ctx's error.
func (r *run) inline(ctx context.Context, work []history.Message, res *Result) (out []history.Message, fallback string, err error) {
	fork := work
	if r.opts.Capacity > 0 {
		budget := SummaryBudget(r.opts.Capacity, r.prefix, r.opts.SummaryOutputLimit)
		f, _, ferr := selectFork(ctx, r.est, work, budget-r.est.Text(r.opts.Instructions))
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		if ferr != nil {
			return nil, "history does not fit the inline compaction budget: " + ferr.Error(), nil
		}
		fork = f
	}
	msgs := slices.Clone(fork)
	if last := msgs[len(msgs)-1]; last.Role == history.Assistant {
		msgs = append(msgs, history.NewText(history.User, "Compact the conversation so far; no other reply is needed."))
	}
	r.calls++
	resp, gerr := r.opts.Client.Generate(ctx, &providers.Request{
		Model:           r.opts.Route.Model,
		System:          r.system,
		Tools:           r.tools,
		Messages:        msgs,
		MaxOutputTokens: r.opts.SummaryOutputLimit,
		Inline: &providers.InlineCompaction{
			Instructions:  r.opts.Instructions,
			ClearingEdits: r.opts.Route.SupportsContextEdits,
			TriggerTokens: InlineTriggerFloor,
		},
	})
	if resp != nil {
		r.addUsage(resp.Usage)
	}
	if ctx.Err() != nil {
		return nil, "", ctx.Err()
	}
	if gerr != nil {
		return nil, "native inline compaction was rejected: " + providers.Bound(redact(gerr.Error()), 512), nil
	}
	block := resp.Compaction
	if len(block) == 0 {
		reason := "native inline compaction did not fire"
		if resp.StopReason != "" {
			reason += " (stop reason " + resp.StopReason + ")"
		}
		return nil, reason, nil
	}
	if providers.CompactionOf(block) != providers.AnthropicCompaction {
		return nil, "native inline compaction returned a block without content", nil
	}
	var fields struct {
		Content json.RawMessage `json:"content"`
	}
	var text string
	if json.Unmarshal(block, &fields) == nil && json.Unmarshal(fields.Content, &text) == nil {
		res.Summary = strings.TrimSpace(text)
	}
	m := resp.Message
	m.Role = history.Assistant
	details := m.ReasoningDetails
	if i := slices.IndexFunc(details, func(d json.RawMessage) bool { return bytes.Equal(d, block) }); i >= 0 {
		details = details[i:] // blocks before the signed boundary are dropped
	} else {
		details = append([]json.RawMessage{block}, details...)
	}
	m.ReasoningDetails = slices.Clip(details)
	m.Forget()
	tail, _ := continuityTail(r.est, work, TailBudget(r.opts.Capacity, r.rp.RetainRatio))
	out = append([]history.Message{m}, tail...)
	return out, "", nil
}

// isCompactionItem reports whether a reasoning detail is an opaque
// compaction item of an earlier native pass.
func isCompactionItem(d json.RawMessage) bool {
	return providers.CompactionOf(d) != providers.NotCompaction
}

// boundNative bounds the input of a native standalone request to budget
// tokens (0: unbounded): every message carrying an opaque compaction item of
// an earlier pass is kept, and the rest is chosen as for a summary fork
// ([chooseUnits]): the newest batches whole, older ones as bounded previews.
// When not even the newest batch's skeleton fits, that skeleton is sent.
// It fails only with ctx's error.
func boundNative(ctx context.Context, est *history.Estimator, msgs []history.Message, budget int) ([]history.Message, error) {
	if budget <= 0 || spanTokens(est, msgs) <= budget {
		return msgs, nil
	}
	pinned := make([]bool, len(msgs))
	used := 0
	for i := range msgs {
		if !slices.ContainsFunc(msgs[i].ReasoningDetails, isCompactionItem) {
			continue
		}
		pinned[i] = true
		used += est.Message(&msgs[i])
		for j := i + 1; msgs[i].HasToolCalls() && j < len(msgs) && msgs[j].Role == history.Tool; j++ {
			pinned[j] = true
			used += est.Message(&msgs[j])
		}
	}
	var us []unit
	for _, u := range units(msgs, 0) {
		if !pinned[u.start] {
			us = append(us, u)
		}
	}
	hs, typed, err := hintsFor(ctx, msgs)
	if err != nil {
		return nil, err
	}
	chosen, _, err := chooseUnits(est, msgs, hs, typed, us, budget-used)
	if err != nil && len(us) > 0 {
		u := us[len(us)-1]
		chosen = plan{}
		for i := u.start; i < u.end; i++ {
			chosen[i] = preview(est, msgs[i], 0)
		}
	}
	out := make([]history.Message, 0, len(msgs))
	for i := range msgs {
		if pinned[i] {
			out = append(out, msgs[i])
		} else if m, ok := chosen[i]; ok {
			out = append(out, m)
		}
	}
	return out, nil
}
