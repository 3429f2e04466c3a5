package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers/catalog"
	"github.com/vtcode/vtcode-ls/session"
	"github.com/vtcode/vtcode-ls/transcript"
)

// defaultWindow is the context window of a replay or compaction whose route
// has no known window (the offline default has none).
const defaultWindow = 128000

// routeFlags are the flags replay and compact share.
type routeFlags struct {
	provider, model string
	window          int
	config          string
	verbose         bool
	getenv          func(string) string // reads API keys
}

func (r *routeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&r.provider, "provider", "", "provider of the route (default: the embedded offline summarizer)")
	fs.StringVar(&r.model, "model", "", "model of the route")
	fs.IntVar(&r.window, "context-window", 0, fmt.Sprintf("context window in tokens (default: the model's, else %d)", defaultWindow))
	fs.StringVar(&r.config, "config", "", "configuration file (providers, models, policy); default: none")
	fs.BoolVar(&r.verbose, "v", false, "log diagnostics to stderr")
}

// env is a one-shot session: a Manager on a temporary store with one session.
type env struct {
	m       *session.Manager
	id      string
	dir     string
	route   string // provider/model for display
	window  int
	assumed bool // window is defaultWindow, not the model's
}

// openEnv starts a Manager on a fresh temporary workspace and opens one
// session on the flags' route.
func openEnv(ctx context.Context, rf routeFlags, stderr io.Writer) (*env, error) {
	if rf.window < 0 {
		return nil, errors.New("--context-window must be >= 0")
	}
	level := slog.LevelWarn
	if rf.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	dir, err := os.MkdirTemp("", "vtcode-ls-*")
	if err != nil {
		return nil, fmt.Errorf("create temporary store: %w", err)
	}
	e := &env{dir: dir, window: rf.window}
	if e.window == 0 {
		if info, ok := catalog.LookupModel(rf.provider, rf.model); ok && info.ContextWindow > 0 {
			e.window = info.ContextWindow
		} else {
			e.window, e.assumed = defaultWindow, true
		}
	}
	e.route = catalog.CanonicalProvider(rf.provider)
	if e.route == "" {
		e.route = "offline"
	}
	if rf.model != "" {
		e.route += "/" + rf.model
	}
	e.m = session.NewManager(session.Options{
		Logger:     logger,
		UserConfig: rf.config,
		Clients:    clientFactoryEnv(logger, rf.getenv),
		NoWatch:    true,
	})
	if err := e.m.AddWorkspace(dir, nil); err != nil {
		e.close()
		return nil, fmt.Errorf("workspace: %w", err)
	}
	res, err := e.m.OpenSession(ctx, session.OpenParams{Workspace: dir, Provider: rf.provider, Model: rf.model, ContextWindow: e.window})
	if err != nil {
		e.close()
		return nil, fmt.Errorf("open session: %w", err)
	}
	e.id = res.SessionID
	return e, nil
}

func (e *env) close() {
	if e.m != nil {
		e.m.Close()
	}
	os.RemoveAll(e.dir)
}

func (e *env) describe() string {
	s := fmt.Sprintf("route %s, context window %s", e.route, history.FormatCount(e.window))
	if e.assumed {
		s += " (default; set --context-window)"
	}
	return s
}

// loadTranscript loads a transcript and describes it in one line.
func loadTranscript(path string) (*transcript.Transcript, string, error) {
	tr, err := transcript.Load(path)
	if err != nil {
		return nil, "", err
	}
	desc := fmt.Sprintf("%s: %s, %d messages", path, tr.Format, len(tr.Messages))
	if tr.Conversations > 1 {
		desc += fmt.Sprintf(" from %d conversations", tr.Conversations)
	}
	if tr.Skipped > 0 {
		var kinds []string
		for _, k := range tr.SkippedKinds() {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, tr.SkippedByKind[k]))
		}
		desc += fmt.Sprintf(", %d records skipped (%s)", tr.Skipped, strings.Join(kinds, ", "))
	}
	return tr, desc, nil
}

// turnReport is one replayed turn; --json prints it as one line.
type turnReport struct {
	Turn              int                    `json:"turn"`
	Messages          int                    `json:"messages"`
	ProjectedMessages int                    `json:"projectedMessages"`
	OriginalTokens    int                    `json:"originalTokens"`
	ProjectedTokens   int                    `json:"projectedTokens"`
	ClearedResults    int                    `json:"clearedResults"`
	Pressure          float64                `json:"pressure"`
	State             string                 `json:"state"`
	Trimmed           bool                   `json:"trimmed"`
	Response          bool                   `json:"response"` // false for the pending request after the last response
	Compaction        *session.CompactResult `json:"compaction,omitempty"`
	ElapsedMs         int64                  `json:"elapsedMs"`
	// The request's prompt-cache prediction: the estimate of the request
	// (prefix + projection), the leading part reused from the previous
	// request and its answer, and the cost-weighted tokens under the
	// route's cache pricing.
	RequestTokens int     `json:"requestTokens"`
	ReusedTokens  int     `json:"reusedTokens"`
	CostUnits     float64 `json:"costUnits"`
}

// replayUsage is the help of vtcode-ls replay, before its flags.
var replayUsage = `Usage: vtcode-ls replay TRANSCRIPT [--provider P --model M --context-window N] [--json]

Plays a recorded session through the request pipeline, turn by turn, on a
temporary store: the messages before each assistant response are appended and
a request is prepared (pairing repair, tool-result clearing, compaction when
the threshold is reached), then the response is recorded. Prints per turn the
original and projected tokens, cleared results, pressure and every compaction.
Works offline with the embedded summarizer; with --provider, compactions call
that provider. A progress bar is drawn on stderr when it is a terminal.

Transcript formats: ` + strings.Join(transcript.Formats(), ", ") + `.

Flags:
`

func replayMain(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlags("replay", replayUsage, stderr)
	rf := routeFlags{getenv: getenv}
	rf.register(fs)
	asJSON := fs.Bool("json", false, "print one JSON object per turn on stdout (the summary goes to stderr)")
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "vtcode-ls replay: want exactly one TRANSCRIPT (see --help)")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := replay(ctx, fs.Arg(0), rf, *asJSON, stdout, stderr); err != nil {
		return fail(stderr, "replay", err)
	}
	return 0
}

func replay(ctx context.Context, path string, rf routeFlags, asJSON bool, stdout, stderr io.Writer) error {
	start := time.Now()
	tr, desc, err := loadTranscript(path)
	if err != nil {
		return err
	}
	e, err := openEnv(ctx, rf, stderr)
	if err != nil {
		return err
	}
	defer e.close()

	turns := 0
	for _, m := range tr.Messages {
		if m.Role == history.Assistant {
			turns++
		}
	}
	out := &replayOutput{w: stdout, json: asJSON, bar: newProgressBar(stderr, turns)}
	if !asJSON {
		fmt.Fprintln(stdout, desc)
		fmt.Fprintln(stdout, e.describe())
		fmt.Fprintf(stdout, "%5s %6s %9s %10s %8s %9s %7s %9s  %s\n", "turn", "msgs", "original", "projected", "cleared", "pressure", "reused", "cost", "state")
	}

	var sum replaySummary
	err = play(ctx, e, tr.Messages, func(r turnReport) error {
		sum.add(r)
		return out.turn(r)
	})
	if err != nil {
		out.bar.clear()
		return err
	}
	// The same session with clearing and compaction off, for the totals.
	base, err := playBaseline(ctx, rf, tr.Messages, stderr)
	if err != nil {
		out.bar.clear()
		return fmt.Errorf("baseline: %w", err)
	}
	turn := sum.turns
	out.bar.clear()
	st, err := e.m.ProjectionStats(ctx, e.id, nil)
	if err != nil {
		return fmt.Errorf("stats: %w", err)
	}
	line := sum.line(turn, st, time.Since(start)) + "; " + sum.costLine(base)
	if asJSON {
		fmt.Fprintln(stderr, line)
	} else {
		fmt.Fprintln(stdout, line)
	}
	return nil
}

// play replays msgs on e turn by turn: the messages before each assistant
// response are passed to prepareRequest, then the response is recorded; a
// trailing request without a response is prepared too. onTurn receives each
// turn.
func play(ctx context.Context, e *env, msgs []history.Message, onTurn func(turnReport) error) error {
	var pending []history.Message
	turn := 0
	step := func(response *history.Message) error {
		turn++
		t0 := time.Now()
		pr, err := e.m.PrepareRequest(ctx, session.PrepareParams{SessionID: e.id, Messages: pending}, nil)
		if err != nil {
			return fmt.Errorf("turn %d: prepare: %w", turn, err)
		}
		pending = nil
		r := turnReport{
			Turn: turn, Messages: pr.Stats.Messages, ProjectedMessages: pr.Stats.ProjectedMessages,
			OriginalTokens: pr.Stats.OriginalTokens, ProjectedTokens: pr.Stats.ProjectedTokens,
			ClearedResults: pr.Stats.ClearedResults, Pressure: pr.Stats.Pressure, State: pr.Stats.State,
			Trimmed: pr.Trimmed, Compaction: pr.Compaction, Response: response != nil,
		}
		if ru := pr.Stats.Reuse; ru != nil {
			r.RequestTokens, r.ReusedTokens, r.CostUnits = ru.RequestTokens, ru.ReusedTokens, ru.CostUnits
		}
		if response != nil {
			if _, err := e.m.RecordResponse(ctx, session.RecordParams{SessionID: e.id, Message: *response}); err != nil {
				return fmt.Errorf("turn %d: record response: %w", turn, err)
			}
		}
		r.ElapsedMs = time.Since(t0).Milliseconds()
		return onTurn(r)
	}
	for i := range msgs {
		m := msgs[i]
		if m.Role != history.Assistant {
			pending = append(pending, m)
			continue
		}
		if err := step(&m); err != nil {
			return err
		}
	}
	if len(pending) > 0 {
		return step(nil)
	}
	return nil
}

// noClearing turns tool-result clearing and automatic compaction off: the
// baseline of the cost comparison.
const noClearing = `{"toolResultClearing":{"enabled":false},"autoCompaction":{"enabled":false}}`

// playBaseline replays msgs on a fresh session of the same route with
// clearing and compaction off, and returns its totals.
func playBaseline(ctx context.Context, rf routeFlags, msgs []history.Message, stderr io.Writer) (replaySummary, error) {
	var sum replaySummary
	e, err := openEnv(ctx, rf, stderr)
	if err != nil {
		return sum, err
	}
	defer e.close()
	if _, err := e.m.SetPolicy(ctx, session.SetPolicyParams{SessionID: e.id, Policy: json.RawMessage(noClearing)}); err != nil {
		return sum, err
	}
	err = play(ctx, e, msgs, func(r turnReport) error {
		sum.add(r)
		return nil
	})
	return sum, err
}

// replaySummary accumulates the final line.
type replaySummary struct {
	compactions, failed, cleared, trimmed int
	maxPressure                           float64
	peakOriginal                          int
	turns                                 int
	sent, reused                          int // request and reused tokens, summed over turns
	cost                                  float64
}

func (s *replaySummary) add(r turnReport) {
	s.turns++
	s.sent += r.RequestTokens
	s.reused += r.ReusedTokens
	s.cost += r.CostUnits
	if c := r.Compaction; c != nil {
		if c.ArtifactID != "" {
			s.compactions++
		} else if c.Error != "" {
			s.failed++
		}
	}
	s.cleared = max(s.cleared, r.ClearedResults)
	s.maxPressure = max(s.maxPressure, r.Pressure)
	s.peakOriginal = max(s.peakOriginal, r.OriginalTokens)
	if r.Trimmed {
		s.trimmed++
	}
}

func (s *replaySummary) line(turns int, st *session.Stats, elapsed time.Duration) string {
	line := fmt.Sprintf("replayed %s in %s: %s", plural(turns, "turn"), elapsed.Round(time.Millisecond), plural(s.compactions, "compaction"))
	if s.failed > 0 {
		line += fmt.Sprintf(" (%d failed)", s.failed)
	}
	line += fmt.Sprintf(", up to %d results cleared per request, peak pressure %s", s.cleared, percent(s.maxPressure))
	if s.trimmed > 0 {
		line += ", " + plural(s.trimmed, "trimmed request")
	}
	line += fmt.Sprintf("; final history %d messages, %s tokens (projected %s)",
		st.Messages, history.FormatCount(st.OriginalTokens), history.FormatCount(st.ProjectedTokens))
	return line
}

// reuse is the share of the tokens sent that the cache served.
func (s *replaySummary) reuse() float64 {
	if s.sent == 0 {
		return 0
	}
	return float64(s.reused) / float64(s.sent)
}

// costLine compares the totals with the baseline's (clearing and compaction
// off).
func (s *replaySummary) costLine(base replaySummary) string {
	ratio := func(a, b float64) string {
		if b == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.2f×", a/b)
	}
	return fmt.Sprintf("prompt cache: %s tokens sent (%s no clearing), reuse %.3f (no clearing %.3f), cost %s units (%s no clearing, route pricing)",
		history.FormatCount(s.sent), ratio(float64(s.sent), float64(base.sent)), s.reuse(), base.reuse(),
		history.FormatCount(int(s.cost+0.5)), ratio(s.cost, base.cost))
}

// replayOutput prints turns as a table or as JSON lines.
type replayOutput struct {
	w    io.Writer
	json bool
	bar  *progressBar
}

func (o *replayOutput) turn(r turnReport) error {
	o.bar.clear()
	defer o.bar.update(r.Turn, r.Pressure)
	if o.json {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(o.w, "%s\n", b)
		return err
	}
	state := r.State
	if r.Trimmed {
		state += " trimmed"
	}
	if !r.Response {
		state += " (pending request)"
	}
	reused := 0.0
	if r.RequestTokens > 0 {
		reused = float64(r.ReusedTokens) / float64(r.RequestTokens)
	}
	_, err := fmt.Fprintf(o.w, "%5d %6d %9s %10s %8d %9s %7s %9s  %s\n", r.Turn, r.Messages,
		history.FormatCount(r.OriginalTokens), history.FormatCount(r.ProjectedTokens), r.ClearedResults, percent(r.Pressure),
		percent(reused), history.FormatCount(int(r.CostUnits+0.5)), state)
	if err != nil {
		return err
	}
	if c := r.Compaction; c != nil {
		_, err = fmt.Fprintf(o.w, "      %s\n", describeCompaction(c))
	}
	return err
}

// describeCompaction renders a compaction result in one line.
func describeCompaction(c *session.CompactResult) string {
	switch {
	case c.Error != "":
		return fmt.Sprintf("compaction (%s) failed: %s", c.Trigger, c.Error)
	case c.ArtifactID == "":
		return fmt.Sprintf("compaction (%s): %s", c.Trigger, c.Message)
	}
	return fmt.Sprintf("compaction (%s): mode %s, strategy %s, %d -> %d messages, %s -> %s tokens, %s",
		c.Trigger, c.Mode, c.Strategy, c.OriginalMessageCount, c.CompactedMessageCount,
		history.FormatCount(c.OriginalTokens), history.FormatCount(c.CompactedTokens), (time.Duration(c.ElapsedMs) * time.Millisecond).String())
}

// plural returns "1 turn", "2 turns".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func percent(p float64) string { return fmt.Sprintf("%.1f%%", p*100) }

// progressBar draws "[#####.....] 45/120 turns" on a terminal; on anything
// else it draws nothing.
type progressBar struct {
	w     io.Writer
	total int
	shown bool
}

func newProgressBar(w io.Writer, total int) *progressBar {
	f, ok := w.(*os.File)
	if !ok || total == 0 {
		return &progressBar{}
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return &progressBar{}
	}
	return &progressBar{w: w, total: total}
}

func (b *progressBar) update(done int, pressure float64) {
	if b.w == nil {
		return
	}
	const width = 30
	n := min(width, done*width/b.total)
	fmt.Fprintf(b.w, "\r[%s%s] %d/%d turns · pressure %s\x1b[K", strings.Repeat("#", n), strings.Repeat(".", width-n), min(done, b.total), b.total, percent(pressure))
	b.shown = true
}

func (b *progressBar) clear() {
	if b.w == nil || !b.shown {
		return
	}
	fmt.Fprint(b.w, "\r\x1b[K")
	b.shown = false
}
