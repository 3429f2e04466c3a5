package compaction

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/vtcode/vtcode-ls/evidence"
	"github.com/vtcode/vtcode-ls/history"
)

// Fork selection (docs/design.md §8.5: "complete recent protocol groups (or bounded
// previews of them)"). A history that does not fit a summary budget is cut
// at batch boundaries, never at group boundaries only: one long agent turn
// (a user request followed by dozens of tool batches) is a single protocol
// group, and dropping it whole drops the work itself. The newest units are
// sent whole, every older unit as a bounded preview that keeps its protocol
// skeleton (ids, names, short arguments) and the lines that carry evidence
// (exit codes, errors, paths).
const (
	// minUnitPreview and maxUnitPreview bound the preview of one older unit.
	minUnitPreview = 48
	maxUnitPreview = 512
	// maxArgValue is the longest argument string kept whole in a preview.
	maxArgValue = 240
)

// unit is an atomic span of messages for selection: an assistant message
// with tool calls and the results that follow it (a batch), or any other
// single message.
type unit struct{ start, end int }

// units splits msgs (normalized) into selection units, oldest first,
// starting at index from.
func units(msgs []history.Message, from int) []unit {
	var us []unit
	for i := from; i < len(msgs); {
		j := i + 1
		if msgs[i].HasToolCalls() {
			for j < len(msgs) && msgs[j].Role == history.Tool {
				j++
			}
		}
		us = append(us, unit{i, j})
		i = j
	}
	return us
}

// budgetError reports that a fork cannot fit: need is the smallest input it
// could be bounded to.
type budgetError struct{ need int }

func (e *budgetError) Error() string {
	return fmt.Sprintf("needs at least %s tokens", history.FormatCount(e.need))
}

// hint is what a preview of one message must still show, from the
// history's evidence record: for a tool result, the check it answers (its
// command and exit code) and the distinct errors first or last seen in it;
// for a tool call, the files it changed.
type hint struct {
	command string
	exit    int
	hasExit bool
	errors  []string
	paths   []string
}

func (h *hint) empty() bool {
	return h == nil || h.command == "" && !h.hasExit && len(h.errors) == 0 && len(h.paths) == 0
}

// hintsFor reads msgs' evidence record and returns one hint per message
// (nil for messages with nothing to keep) and which messages the user typed
// (not harness text injected in the user role).
func hintsFor(ctx context.Context, msgs []history.Message) ([]*hint, []bool, error) {
	rec, err := evidence.Extract(ctx, msgs)
	if err != nil {
		return nil, nil, err
	}
	typed := make([]bool, len(msgs))
	for i, o := range rec.Origins {
		typed[i] = o == evidence.OriginTyped
	}
	hs := make([]*hint, len(msgs))
	at := func(i int) *hint {
		if i < 0 || i >= len(hs) {
			return nil
		}
		if hs[i] == nil {
			hs[i] = &hint{}
		}
		return hs[i]
	}
	for _, c := range rec.Checks {
		a := rec.Actions[c.Action]
		if h := at(a.Result); h != nil {
			h.command, h.exit, h.hasExit = c.Command, c.Exit, c.HasExit
		}
	}
	for _, c := range rec.Changes {
		if h := at(c.Index); h != nil && !slices.Contains(h.paths, c.Path) {
			h.paths = append(h.paths, c.Path)
		}
	}
	for _, e := range rec.Errors {
		for _, i := range []int{e.First, e.Last} {
			if h := at(i); h != nil && !slices.Contains(h.errors, e.Text) {
				h.errors = append(h.errors, e.Text)
			}
		}
	}
	return hs, typed, nil
}

// plan maps the index of every kept message to what is sent for it (the
// message itself or its preview).
type plan map[int]history.Message

// chooseUnits bounds the units us of msgs to allowance tokens. Every unit is
// first previewed to an equal share (clamped to [minUnitPreview,
// maxUnitPreview]); then, newest first, units are upgraded to whole while the
// total fits. When even the previews of every unit do not fit, the newest
// units that fit in half the allowance are kept whole (the newest one
// previewed when it alone is larger) and the rest is spent on previews of
// older units: messages the user typed first, then units carrying evidence
// (checks, errors, edits), newest first within each. A typed user message
// gets four times the preview share. It fails only when not even the newest
// unit's protocol skeleton fits.
//
// hs and typed are msgs' hints and typed-message flags ([hintsFor]).
func chooseUnits(est *history.Estimator, msgs []history.Message, hs []*hint, typed []bool, us []unit, allowance int) (plan, int, error) {
	if len(us) == 0 {
		return plan{}, 0, nil
	}
	c := newChooser(est, msgs, hs, typed, us, allowance)
	if allowance <= 0 {
		_, floor := c.preview(c.n-1, 0)
		return nil, 0, &budgetError{need: max(1, floor-allowance)}
	}
	if c.sumBound <= allowance {
		total := c.previewOldest(allowance)
		return c.p, total, nil
	}
	used, k, err := c.newestWhole(allowance)
	if err != nil {
		return nil, 0, err
	}
	left := c.previewByRank(k, allowance-used)
	return c.p, allowance - left, nil
}

// rankTyped and rankEvidence order older units for previews when not all
// fit: what the user typed first, then units that carry evidence, then the
// rest (rank 0).
const (
	rankEvidence = 1
	rankTyped    = 2
)

// chooser is the state of one [chooseUnits]: the units, their sizes whole
// and the bound of their previews, the previews made so far, and the plan.
type chooser struct {
	est      *history.Estimator
	msgs     []history.Message
	hs       []*hint
	us       []unit
	n        int
	rank     []int
	whole    []int // tokens of each unit whole
	bound    []int // a bound of each unit's preview: the cap plus its protocol floor
	sumBound int
	capTok   int // the preview share of a unit
	pv       [][]history.Message
	pt       []int
	made     []bool
	p        plan
}

func newChooser(est *history.Estimator, msgs []history.Message, hs []*hint, typed []bool, us []unit, allowance int) *chooser {
	n := len(us)
	c := &chooser{est: est, msgs: msgs, hs: hs, us: us, n: n, rank: make([]int, n), whole: make([]int, n), bound: make([]int, n),
		pv: make([][]history.Message, n), pt: make([]int, n), made: make([]bool, n), p: plan{}}
	for k, u := range us {
		for j := u.start; j < u.end; j++ {
			switch {
			case typed[j]:
				c.rank[k] = rankTyped
			case !hs[j].empty():
				c.rank[k] = max(c.rank[k], rankEvidence)
			}
		}
	}
	if allowance <= 0 {
		return c
	}
	c.capTok = min(max(allowance/(2*n), minUnitPreview), maxUnitPreview)
	// Previews are made only for the units that end up previewed; the
	// choice is made on a bound of their size (the cap plus the unit's
	// protocol floor, which a preview never exceeds).
	for k := range us {
		c.whole[k] = spanTokens(est, c.span(k))
		c.bound[k] = min(c.whole[k], c.capOf(k)+c.floor(k))
		c.sumBound += c.bound[k]
	}
	return c
}

func (c *chooser) span(k int) []history.Message { return c.msgs[c.us[k].start:c.us[k].end] }

// preview previews unit k to budget tokens.
func (c *chooser) preview(k, budget int) ([]history.Message, int) {
	u := c.us[k]
	return previewUnit(c.est, c.msgs[u.start:u.end], c.hs[u.start:u.end], budget)
}

// put sends ms for unit k.
func (c *chooser) put(k int, ms []history.Message) {
	for i, m := range ms {
		c.p[c.us[k].start+i] = m
	}
}

// capOf is unit k's preview share: a user's words get a larger one.
func (c *chooser) capOf(k int) int {
	if c.rank[k] == rankTyped {
		return min(4*c.capTok, SummaryMessageCap)
	}
	return c.capTok
}

// floor is the protocol skeleton of unit k, which no preview goes below.
func (c *chooser) floor(k int) int {
	f := 0
	for i := c.us[k].start; i < c.us[k].end; i++ {
		f += floorTokens(c.est, &c.msgs[i])
	}
	return f
}

// previewed is unit k at its share: whole when that fits, else its
// preview, made once.
func (c *chooser) previewed(k int) ([]history.Message, int) {
	if !c.made[k] {
		if c.whole[k] <= c.capOf(k) {
			c.pv[k], c.pt[k] = c.span(k), c.whole[k]
		} else {
			c.pv[k], c.pt[k] = c.preview(k, c.capOf(k))
		}
		c.made[k] = true
	}
	return c.pv[k], c.pt[k]
}

// previewOldest plans for an allowance the previews of every unit fit in:
// the oldest units previewed, as many of the newest whole as fit. It
// returns the tokens planned.
func (c *chooser) previewOldest(allowance int) int {
	n := c.n
	// cost(k) = previews of us[:k] + us[k:] whole; it only grows as k
	// decreases, so the smallest k that fits keeps the most whole.
	cost, k := c.sumBound, n
	for k > 0 && cost-c.bound[k-1]+c.whole[k-1] <= allowance {
		cost += c.whole[k-1] - c.bound[k-1]
		k--
	}
	total := 0
	for i := range n {
		if i < k {
			_, t := c.previewed(i)
			total += t
		} else {
			total += c.whole[i]
		}
	}
	// The real previews are smaller than their bounds: upgrade more.
	for k > 0 && total-c.pt[k-1]+c.whole[k-1] <= allowance {
		total += c.whole[k-1] - c.pt[k-1]
		k--
	}
	for i := range n {
		if i < k {
			c.put(i, c.pv[i])
		} else {
			c.put(i, c.span(i))
		}
	}
	if k == n { // not even the newest unit fits whole: give it the slack
		room := allowance - (total - c.pt[n-1])
		if q, t := c.preview(n-1, room); t <= room && t > c.pt[n-1] {
			total += t - c.pt[n-1]
			c.put(n-1, q)
		}
	}
	return total
}

// newestWhole plans, when not even the previews of every unit fit, the
// newest units that fit in half the allowance whole (the newest one
// previewed when it alone is larger). It returns the tokens used and the
// number k of older units left to preview.
func (c *chooser) newestWhole(allowance int) (used, k int, err error) {
	n := c.n
	half := allowance / 2
	k = n
	for k > 0 && used+c.whole[k-1] <= half {
		used += c.whole[k-1]
		k--
	}
	for i := k; i < n; i++ {
		c.put(i, c.span(i))
	}
	if k == n {
		q, t := c.preview(n-1, half)
		if t > half {
			if q, t = c.preview(n-1, allowance); t > allowance {
				return 0, 0, &budgetError{need: t}
			}
		}
		c.put(n-1, q)
		used, k = t, n-1
	}
	return used, k, nil
}

// previewByRank spends left tokens on previews of the units us[:k]: every
// typed request gets a share first when their previews do not all fit,
// then units go by rank, newest first within one. It returns what is left.
func (c *chooser) previewByRank(k, left int) int {
	var typedUnits []int
	sumT := 0
	for i := range k {
		if c.rank[i] == rankTyped {
			typedUnits = append(typedUnits, i)
			_, t := c.previewed(i)
			sumT += t
		}
	}
	if sumT > left && len(typedUnits) > 0 {
		share := max(minUnitPreview, left/len(typedUnits))
		for _, i := range typedUnits {
			if c.pt[i] > share {
				c.pv[i], c.pt[i] = c.preview(i, share)
			}
		}
	}
	order := make([]int, k)
	for i := range k {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		if ra, rb := c.rank[order[a]], c.rank[order[b]]; ra != rb {
			return ra > rb
		}
		return order[a] > order[b]
	})
	for _, i := range order {
		if left < minUnitPreview && left < c.whole[i] || c.floor(i) > left {
			continue // cannot fit; do not make its preview
		}
		if q, t := c.previewed(i); t <= left {
			c.put(i, q)
			left -= t
		}
	}
	return left
}

// selectFork bounds msgs (normalized, already pruned) to allowance tokens for
// a summary request: the whole list when it fits; otherwise the leading
// system messages (earlier summaries) and the first message the user typed
// (the goal; harness text injected in the user role does not count) as
// previews capped at a quarter of the allowance, and every other message
// chosen by [chooseUnits]: the newest units whole, older ones previewed. The
// result keeps the original order and valid pairing. It fails with a
// *budgetError, or with ctx's error.
func selectFork(ctx context.Context, est *history.Estimator, msgs []history.Message, allowance int) ([]history.Message, int, error) {
	total := spanTokens(est, msgs)
	if total <= allowance && len(msgs) > 0 {
		return msgs, total, nil
	}
	if allowance <= 0 {
		need := 0
		if len(msgs) > 0 {
			need = floorTokens(est, &msgs[len(msgs)-1])
		}
		return nil, 0, &budgetError{need: max(1, need-allowance)}
	}
	hs, typed, err := hintsFor(ctx, msgs)
	if err != nil {
		return nil, 0, err
	}
	var pinned []int
	for i := 0; i < len(msgs) && msgs[i].Role == history.System; i++ {
		pinned = append(pinned, i)
	}
	goal := slices.Index(typed, true)
	if goal < 0 {
		goal = slices.IndexFunc(msgs, func(m history.Message) bool { return m.Role == history.User })
	}
	if goal >= 0 && !slices.Contains(pinned, goal) {
		pinned = append(pinned, goal)
	}
	pins := plan{}
	pinBudget := allowance / 4
	used := 0
	for _, i := range pinned {
		lim := min(pinBudget-used, SummaryMessageCap)
		if lim < floorTokens(est, &msgs[i]) {
			continue
		}
		p := preview(est, msgs[i], lim)
		if t := est.Message(&p); used+t <= pinBudget {
			pins[i] = p
			used += t
		}
	}
	var us []unit
	for _, u := range units(msgs, 0) {
		if _, ok := pins[u.start]; !ok {
			us = append(us, u)
		}
	}
	chosen, _, err := chooseUnits(est, msgs, hs, typed, us, allowance-used)
	if err != nil && used > 0 { // drop the pins rather than fail
		clear(pins)
		chosen, _, err = chooseUnits(est, msgs, hs, typed, units(msgs, 0), allowance)
	}
	if err != nil {
		return nil, 0, err
	}
	if len(chosen) == 0 && len(pins) == 0 {
		return nil, 0, &budgetError{need: total}
	}
	out := make([]history.Message, 0, len(pins)+len(chosen))
	tokens := 0
	for i := range msgs {
		m, ok := pins[i]
		if !ok {
			m, ok = chosen[i]
		}
		if ok {
			tokens += est.Message(&m)
			out = append(out, m)
		}
	}
	return out, tokens, nil
}

// previewUnit bounds one unit to budget tokens with [evidencePreview]
// (hs holds the unit's hints, one per message), giving each message an
// equal share of what the smaller ones leave. When budget is below the
// unit's protocol floor, the result is that floor (its token count says
// so). It never returns more tokens than the unit has.
func previewUnit(est *history.Estimator, msgs []history.Message, hs []*hint, budget int) ([]history.Message, int) {
	out := make([]history.Message, len(msgs))
	order := make([]int, len(msgs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		return est.Message(&msgs[order[a]]) < est.Message(&msgs[order[b]])
	})
	remaining, tokens := budget, 0
	for k, i := range order {
		share := max(remaining/(len(order)-k), floorTokens(est, &msgs[i]))
		m := evidencePreview(est, msgs[i], hs[i], share)
		out[i] = m
		t := est.Message(&m)
		remaining -= t
		tokens += t
	}
	return out, tokens
}

// evidencePreview is [preview] for fork units: tool results and long
// argument strings keep the lines that carry evidence (see [selectLines])
// rather than only their head and tail, tool-call arguments keep their
// short fields (commands, paths) instead of becoming "{}", and what the
// message's hint says must survive (the check's command and exit code, the
// errors first or last seen in it, the files a call changed) is stated in a
// bracketed note when the cut text no longer shows it.
func evidencePreview(est *history.Estimator, m history.Message, h *hint, budget int) history.Message {
	if est.Message(&m) <= budget {
		return m
	}
	if m.Role != history.Tool && !m.HasToolCalls() {
		return preview(est, m, budget)
	}
	out := m
	out.ReasoningDetails = nil
	out.Reasoning = ""
	out.Content = emptyLike(m.Content)
	var must []string
	if h != nil {
		must = append(append(must, h.errors...), h.paths...)
	}
	if len(m.ToolCalls) > 0 {
		out.ToolCalls = make([]history.ToolCall, len(m.ToolCalls))
		share := max(0, budget-floorTokens(est, &m)) / (2 * len(m.ToolCalls))
		for i, tc := range m.ToolCalls {
			tc.ThoughtSignature = ""
			tc.Arguments = boundArgs(est, tc.Arguments, share, must)
			tc.Input = selectLines(est, tc.Input, share, must)
			out.ToolCalls[i] = tc
		}
	}
	out.Forget()
	if rest := budget - est.Message(&out); rest > 2 {
		text := m.Content.Text()
		if m.Content.PartList() != nil {
			text = boundContent(est, m.Content, 1<<30).Text()
		}
		out.Content = history.Text(notedCut(est, text, rest-2, must, h, forkArgs(out.ToolCalls)))
		out.Forget()
	}
	if est.Message(&out) <= budget {
		return out
	}
	return preview(est, m, budget)
}

// notedCut cuts text to n tokens with [selectLines], led by a note of what
// h requires and the cut does not show (see [fitNote]). The note is
// recomputed for the cut that leaves room for it until it is stable; if it
// does not settle, it states everything h requires. When the budget holds
// little more than the note, the note alone is returned: the facts matter
// more than a line or two of output.
func notedCut(est *history.Estimator, text string, n int, must []string, h *hint, args string) string {
	cut := selectLines(est, text, n, must)
	items := h.missing(cut, args)
	// attempt leads a cut with the note of items; next is what that cut
	// still does not show.
	attempt := func(items []string) (out string, next []string) {
		note := fitNote(est, items, n-1)
		room := n - est.Text(note) - 1
		if room <= minNotedCut {
			return note, items // the note alone: nothing more to show
		}
		c := selectLines(est, text, room, must)
		if note == "" {
			return c, items
		}
		return note + "\n" + c, h.missing(c, args)
	}
	for range 4 {
		if len(items) == 0 {
			return cut
		}
		out, next := attempt(items)
		if slices.Equal(next, items) {
			return out
		}
		items = next
	}
	out, _ := attempt(h.missing("", args))
	return out
}

// minNotedCut is the smallest cut worth keeping beside a note.
const minNotedCut = 8

// forkArgs joins the arguments and inputs of calls.
func forkArgs(calls []history.ToolCall) string {
	var b strings.Builder
	for _, tc := range calls {
		b.WriteString(tc.Arguments)
		b.WriteString(tc.Input)
	}
	return b.String()
}

// missing lists, most important first, what the hint requires and neither
// the cut text nor the kept arguments show: the exit code, the errors, the
// changed files, a command too long to stay whole in its call.
func (h *hint) missing(cut, args string) []string {
	if h.empty() {
		return nil
	}
	var items []string
	if h.hasExit && !exitShown(cut, h.exit) {
		items = append(items, fmt.Sprintf("exit code %d", h.exit))
	}
	for _, e := range h.errors {
		if !strings.Contains(cut, e) {
			items = append(items, "error: "+clipText(e, 200))
		}
	}
	for _, p := range h.paths {
		if !strings.Contains(cut, p) && !strings.Contains(args, p) {
			items = append(items, "changed "+p)
		}
	}
	// A command up to maxArgValue bytes stays whole in its call's preview.
	if len(h.command) > maxArgValue && !strings.Contains(cut, h.command) && !strings.Contains(args, h.command) {
		items = append(items, "command `"+clipText(h.command, 160)+"`")
	}
	return items
}

// noteText renders the note of items.
func noteText(items []string) string {
	if len(items) == 0 {
		return ""
	}
	return "[cut; the full output showed " + strings.Join(items, "; ") + "]"
}

// fitNote returns the note of items within n tokens: the last items are
// dropped first, then the one left is clipped; "" when not even a clipped
// first item fits.
func fitNote(est *history.Estimator, items []string, n int) string {
	for len(items) > 1 {
		if note := noteText(items); est.Text(note) <= n {
			return note
		}
		items = items[:len(items)-1]
	}
	if len(items) == 0 {
		return ""
	}
	for it := items[0]; ; it = clipText(it, len(it)*2/3) {
		if note := noteText([]string{it}); est.Text(note) <= n {
			return note
		}
		if len(it) <= 24 {
			return ""
		}
	}
}

// exitShown reports whether text states exit code n in one of the usual
// phrasings.
func exitShown(text string, n int) bool {
	l := strings.ToLower(text)
	for _, f := range []string{"exit code %d", "exit code: %d", "exit status %d", "exited with code %d", "exit_code\": %d", "exit_code\":%d", "<returncode>%d</returncode>", "exit %d"} {
		if strings.Contains(l, fmt.Sprintf(f, n)) {
			return true
		}
	}
	return false
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:snapBack(s, n)] + "…"
}

// boundArgs bounds the JSON arguments of a tool call to about n tokens: the
// whole text when it fits, else the object with every long string value cut
// by [selectLines] (short ones such as commands and paths stay whole), else
// "{}".
func boundArgs(est *history.Estimator, args string, n int, must []string) string {
	if est.Text(args) <= n {
		return args
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) != nil || len(obj) == 0 {
		return "{}"
	}
	var long []string
	fixed := 2
	for k, v := range obj {
		var s string
		if len(v) > maxArgValue && json.Unmarshal(v, &s) == nil {
			long = append(long, k)
			continue
		}
		if len(v) > maxArgValue {
			v, _ = json.Marshal(fmt.Sprintf("[%d bytes omitted]", len(v)))
			obj[k] = v
		}
		fixed += est.Text(k) + est.Text(string(v)) + 2
	}
	sort.Strings(long)
	for _, k := range long {
		var s string
		_ = json.Unmarshal(obj[k], &s)
		share := max(0, n-fixed) / len(long)
		obj[k] = marshalString(selectLines(est, s, max(0, share-est.Text(k)-4), must))
	}
	b := marshalObject(obj)
	if est.Text(b) > n+8 {
		return "{}"
	}
	return b
}

func marshalString(s string) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// marshalObject writes obj with sorted keys.
func marshalObject(obj map[string]json.RawMessage) string {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(marshalString(k))
		b.WriteByte(':')
		b.Write(obj[k])
	}
	b.WriteByte('}')
	return b.String()
}

// Line cues of [selectLines], matched on the lowercased line.
var (
	exitCues    = []string{"exit code", "exit status", "exited", "returncode", "exit_code", "--- fail", "--- pass"}
	verdictCues = []string{"ok ", "ok\t", "fail", "pass"} // line prefixes of test runners
	errorCues   = []string{"error", "fail", "panic", "exception", "traceback", "fatal", "cannot", "can't", "undefined", "not found", "denied", "refused", "timed out", "warning"}
	pathLine    = regexp.MustCompile(`[\w.-]+/[\w./-]+|\b[\w-]+\.[A-Za-z]{1,5}:\d+`)
)

// lineScore ranks a line of tool output for a preview: exit codes and test
// verdicts 3, errors 2, paths 1, anything else 0.
func lineScore(line string) int {
	l := strings.ToLower(line)
	if containsAny(l, exitCues) {
		return 3
	}
	for _, p := range verdictCues {
		if strings.HasPrefix(l, p) {
			return 3
		}
	}
	if containsAny(l, errorCues) {
		return 2
	}
	if strings.ContainsAny(l, "/:") && pathLine.MatchString(line) {
		return 1
	}
	return 0
}

// maxPreviewLine bounds one selected line.
const maxPreviewLine = 320

// selectLines cuts s to at most n tokens by whole lines: the first and last
// lines, every line with an exit code or test verdict, then error lines,
// then path lines (each distinct line once), then lines nearest the head and
// tail, in their original order with a marker for every gap. Lines are
// clipped to 320 bytes. It never grows s.
func selectLines(est *history.Estimator, s string, n int, must []string) string {
	if est.Text(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	cands := rankLines(lines, must)
	picked := make([]bool, len(lines))
	// Greedy by estimate (line + a possible gap marker), verified at the end.
	budget := n
	const lineSlack = 1 + 8 // the newline and a possible gap marker
	npicked := 0
	for _, c := range cands {
		if budget <= lineSlack {
			break
		}
		cost := est.Text(clipLine(lines[c.i])) + lineSlack
		if cost > budget {
			continue
		}
		picked[c.i] = true
		npicked++
		budget -= cost
	}
	out := renderLines(lines, picked)
	for est.Text(out) > n {
		// Drop the lowest-ranked tenth of the picked lines and try again.
		drop := max(1, npicked/10)
		for k := len(cands) - 1; k >= 0 && drop > 0; k-- {
			if picked[cands[k].i] {
				picked[cands[k].i] = false
				npicked--
				drop--
			}
		}
		if npicked == 0 {
			return truncateMiddle(est, s, n, "output")
		}
		out = renderLines(lines, picked)
	}
	if strings.TrimSpace(out) == "" || strings.HasPrefix(out, "[…") && !strings.Contains(out, "\n") {
		return truncateMiddle(est, s, n, "output")
	}
	return out
}

// lineCand is a line of an output selectLines may keep: its index, its
// score and its distance from the nearer end.
type lineCand struct{ i, score, dist int }

// rankLines orders the non-blank lines best first: a line naming one of
// must, then the first and last lines and the verdicts and exit codes, then
// errors, then paths ([lineScore]); a repeat of a scored line ranks below
// plain lines; ties go to the line nearer an end.
func rankLines(lines, must []string) []lineCand {
	last := len(lines) - 1
	cands := make([]lineCand, 0, len(lines))
	seen := map[string]bool{}
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		sc := lineScore(t)
		for _, w := range must {
			if w != "" && strings.Contains(t, w) {
				sc = 5
				break
			}
		}
		if sc > 0 && seen[t] {
			sc = -1 // a repeat ranks below plain lines
		}
		seen[t] = true
		if (i == 0 || i == last) && sc < 4 {
			sc = 4
		}
		cands = append(cands, lineCand{i, sc, min(i, last-i)})
	}
	sort.SliceStable(cands, func(a, b int) bool {
		if cands[a].score != cands[b].score {
			return cands[a].score > cands[b].score
		}
		return cands[a].dist < cands[b].dist
	})
	return cands
}

// clipLine bounds one selected line to maxPreviewLine bytes.
func clipLine(l string) string {
	if len(l) <= maxPreviewLine {
		return l
	}
	return l[:snapBack(l, maxPreviewLine)] + " […]"
}

// renderLines writes the picked lines, clipped, in their order, with a
// marker for every gap.
func renderLines(lines []string, picked []bool) string {
	var b strings.Builder
	gap := 0
	flush := func() {
		if gap > 0 {
			fmt.Fprintf(&b, "[… %d lines omitted …]\n", gap)
			gap = 0
		}
	}
	for i, l := range lines {
		if !picked[i] {
			gap++
			continue
		}
		flush()
		b.WriteString(clipLine(l))
		b.WriteByte('\n')
	}
	flush()
	return strings.TrimRight(b.String(), "\n")
}
