package compaction

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/vtcode/vtcode-ls/history"
)

// Bounding constants (SPEC §8.5, digest §6).
const (
	// OversizedToolResult is the estimate above which a tool result is
	// replaced by a head/tail preview before a local fork is bounded.
	OversizedToolResult = 4096
	// ToolResultPreview is the size of that preview.
	ToolResultPreview = 2048
	// SummaryMessageCap bounds the summary message when a rebuilt history is
	// bounded to the window.
	SummaryMessageCap = 4096
	// DefaultRetainedMessages is the number of earlier user messages kept
	// between the summary and the continuity tail.
	DefaultRetainedMessages = 4
	// reasoningPreviewCap bounds reasoning text in a preview.
	reasoningPreviewCap = 1024
)

// truncateMiddle cuts s to at most n tokens, keeping its head (two thirds)
// and tail around a marker naming what was cut. It never grows s.
func truncateMiddle(est *history.Estimator, s string, n int, what string) string {
	t := est.Text(s)
	if t <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	marker := fmt.Sprintf("\n[… %s tokens of %s omitted …]\n", history.FormatCount(t-n), what)
	mt := est.Text(marker)
	if n < mt+16 {
		return truncateHead(est, s, n)
	}
	avail := n - mt
	ratio := float64(len(s)) / float64(t)
	headB := int(float64(avail*2/3) * ratio)
	tailB := int(float64(avail-avail*2/3) * ratio)
	for range 12 {
		h := snapBack(s, headB)
		tl := snapForward(s, len(s)-tailB)
		if tl < h {
			tl = h
		}
		out := s[:h] + marker + s[tl:]
		if est.Text(out) <= n {
			return out
		}
		headB = headB * 8 / 10
		tailB = tailB * 8 / 10
	}
	return truncateHead(est, s, n)
}

// truncateHead keeps at most n tokens of the start of s.
func truncateHead(est *history.Estimator, s string, n int) string {
	if est.Text(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	b := n * 4
	for range 16 {
		out := s[:snapBack(s, min(b, len(s)))]
		if est.Text(out) <= n {
			return out
		}
		b = b * 8 / 10
	}
	return ""
}

// snapBack returns the largest i ≤ n on a rune boundary.
func snapBack(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	if n <= 0 {
		return 0
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// snapForward returns the smallest i ≥ n on a rune boundary.
func snapForward(s string, n int) int {
	if n <= 0 {
		return 0
	}
	for n < len(s) && !utf8.RuneStart(s[n]) {
		n++
	}
	return n
}

// floorTokens is the smallest estimate a preview of m can reach: the message
// and call overheads, ids, names and "{}" arguments.
func floorTokens(est *history.Estimator, m *history.Message) int {
	n := history.MessageOverhead + est.Text(m.ToolCallID)
	for _, tc := range m.ToolCalls {
		n += history.ToolCallOverhead + est.Text(tc.Name) + est.Text("{}")
	}
	return n
}

// preview returns m bounded to budget tokens, or m itself when it fits.
// Ids, roles, tool names and call ids are always kept, so pairing stays
// valid; text is cut head/tail, reasoning to 1,024 tokens, opaque reasoning
// details and thought signatures are dropped, large arguments become "{}".
// The result may exceed budget only when budget is below [floorTokens]. It
// never grows m, and preview(preview(m, b), b) == preview(m, b).
func preview(est *history.Estimator, m history.Message, budget int) history.Message {
	if est.Message(&m) <= budget {
		return m
	}
	avail := max(0, budget-history.MessageOverhead)
	out := m
	out.ReasoningDetails = nil
	out.Reasoning = truncateHead(est, m.Reasoning, min(avail/4, reasoningPreviewCap))
	if len(m.ToolCalls) > 0 {
		out.ToolCalls = slices.Clone(m.ToolCalls)
		for i := range out.ToolCalls {
			tc := &out.ToolCalls[i]
			tc.ThoughtSignature = ""
			if len(tc.Arguments) > avail*4/max(1, 2*len(m.ToolCalls)) {
				tc.Arguments = "{}"
			}
			tc.Input = truncateHead(est, tc.Input, min(avail/(2*len(m.ToolCalls)), reasoningPreviewCap))
		}
	}
	out.Content = history.Content{}
	out.Forget()
	rest := max(0, budget-est.Message(&out))
	out.Content = boundContent(est, m.Content, rest)
	out.Forget()
	if est.Message(&out) <= budget {
		return out
	}
	// Last resort: nothing but the protocol skeleton.
	out.Reasoning = ""
	for i := range out.ToolCalls {
		out.ToolCalls[i].Arguments = "{}"
		out.ToolCalls[i].Input = ""
	}
	out.Content = emptyLike(m.Content)
	out.Forget()
	return out
}

// boundContent cuts content to n tokens. String content stays a string;
// parts become one text part, with a note for dropped non-text parts.
func boundContent(est *history.Estimator, c history.Content, n int) history.Content {
	n = max(0, n-2) // slack for JSON-neutral rounding between pieces
	if c.IsString() {
		return history.Text(truncateMiddle(est, c.Text(), n, "text"))
	}
	parts := c.PartList()
	if parts == nil {
		return c
	}
	var b strings.Builder
	dropped := 0
	for _, p := range parts {
		if p.Raw != nil && p.Type != "text" {
			dropped++
			continue
		}
		b.WriteString(p.Text)
	}
	text := b.String()
	if dropped > 0 {
		text += fmt.Sprintf("\n[%d non-text parts omitted]", dropped)
	}
	return history.Parts(history.TextPart(truncateMiddle(est, text, n, "text")))
}

func emptyLike(c history.Content) history.Content {
	if c.IsString() || c.PartList() != nil {
		return history.Text("")
	}
	return c
}

// pruneToolResults replaces tool results over [OversizedToolResult] tokens
// with head/tail previews of [ToolResultPreview] tokens. msgs is not
// modified; the result shares unchanged messages.
func pruneToolResults(est *history.Estimator, msgs []history.Message) []history.Message {
	var out []history.Message
	for i := range msgs {
		m := &msgs[i]
		if m.Role != history.Tool || est.Message(m) <= OversizedToolResult {
			continue
		}
		if out == nil {
			out = slices.Clone(msgs)
		}
		p := *m
		text := m.Content.Text()
		if parts := m.Content.PartList(); parts != nil {
			text = boundContent(est, m.Content, 1<<30).Text()
		}
		what := "tool result"
		if m.ToolName != "" {
			what = "tool result " + m.ToolCallID + " (" + m.ToolName + ")"
		} else if m.ToolCallID != "" {
			what = "tool result " + m.ToolCallID
		}
		p.Content = history.Text(truncateMiddle(est, text, ToolResultPreview-history.MessageOverhead-est.Text(m.ToolCallID), what))
		p.ReasoningDetails = nil
		p.Forget()
		out[i] = p
	}
	if out == nil {
		return msgs
	}
	return out
}

// unit is an atomic span of messages for selection: a protocol group, or, before
// the first user message, one message or one batch.
type unit struct{ start, end int }

// units splits msgs (normalized) into selection units, oldest first, starting
// at index from.
func units(msgs []history.Message, from int) []unit {
	var us []unit
	i := from
	for i < len(msgs) && msgs[i].Role != history.User {
		j := i + 1
		if msgs[i].HasToolCalls() {
			for j < len(msgs) && msgs[j].Role == history.Tool {
				j++
			}
		}
		us = append(us, unit{i, j})
		i = j
	}
	for i < len(msgs) {
		j := i + 1
		for j < len(msgs) && msgs[j].Role != history.User {
			j++
		}
		us = append(us, unit{i, j})
		i = j
	}
	return us
}

func spanTokens(est *history.Estimator, msgs []history.Message) int {
	n := 0
	for i := range msgs {
		n += est.Message(&msgs[i])
	}
	return n
}

// previewSpan bounds msgs to budget by giving each message an equal share
// (at least its floor). ok is false when even the floors exceed budget.
func previewSpan(est *history.Estimator, msgs []history.Message, budget int) (out []history.Message, tokens int, ok bool) {
	if len(msgs) == 0 {
		return nil, 0, budget >= 0
	}
	floors := 0
	for i := range msgs {
		floors += floorTokens(est, &msgs[i])
	}
	if floors > budget {
		return nil, floors, false
	}
	out = make([]history.Message, len(msgs))
	// Distribute: small messages stay whole, the rest share what remains.
	order := make([]int, len(msgs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		return est.Message(&msgs[order[a]]) < est.Message(&msgs[order[b]])
	})
	remaining := budget
	for k, i := range order {
		share := remaining / (len(order) - k)
		m := preview(est, msgs[i], max(share, floorTokens(est, &msgs[i])))
		out[i] = m
		remaining -= est.Message(&m)
	}
	tokens = budget - remaining
	return out, tokens, tokens <= budget
}

// budgetError reports that a fork cannot fit: need is the smallest input it
// could be bounded to.
type budgetError struct{ need int }

func (e *budgetError) Error() string {
	return fmt.Sprintf("needs at least %s tokens", history.FormatCount(e.need))
}

// selectFork bounds msgs (normalized, already pruned) to allowance tokens for
// a summary request: the whole list when it fits; otherwise the leading
// system messages (earlier summaries) and the first user message (the goal)
// as previews capped at a quarter of the allowance, plus the newest complete
// protocol groups that fit, newest first; when not even the newest group fits
// whole, a bounded preview of it. The result keeps the original order.
func selectFork(est *history.Estimator, msgs []history.Message, allowance int) ([]history.Message, int, error) {
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
	// Pinned: leading system messages and the first user message.
	firstUser := slices.IndexFunc(msgs, func(m history.Message) bool { return m.Role == history.User })
	var pinned []int
	for i := 0; i < len(msgs) && msgs[i].Role == history.System; i++ {
		pinned = append(pinned, i)
	}
	if firstUser >= 0 {
		pinned = append(pinned, firstUser)
	}
	pinnedOut := map[int]history.Message{}
	pinBudget := allowance / 4
	used := 0
	for _, i := range pinned {
		lim := min(pinBudget-used, SummaryMessageCap)
		if lim < floorTokens(est, &msgs[i]) {
			continue
		}
		p := preview(est, msgs[i], lim)
		if t := est.Message(&p); used+t <= pinBudget {
			pinnedOut[i] = p
			used += t
		}
	}
	// Walk units newest-first over everything that is not pinned.
	from := 0
	for from < len(msgs) && msgs[from].Role == history.System {
		from++
	}
	us := units(msgs, from)
	remaining := allowance - used
	var chosen []unit
	var chosenMsgs = map[int][]history.Message{}
	for k := len(us) - 1; k >= 0; k-- {
		u := us[k]
		s := u.start
		if s == firstUser {
			s++ // the goal message is pinned
		}
		if s >= u.end {
			continue
		}
		t := spanTokens(est, msgs[s:u.end])
		if t <= remaining {
			chosen = append(chosen, unit{s, u.end})
			remaining -= t
			continue
		}
		if len(chosen) == 0 {
			pv, pt, ok := previewSpan(est, msgs[s:u.end], remaining)
			if !ok && used > 0 { // drop the pins rather than fail
				clear(pinnedOut)
				remaining, used, s = allowance, 0, u.start
				pv, pt, ok = previewSpan(est, msgs[s:u.end], remaining)
			}
			if !ok {
				return nil, 0, &budgetError{need: pt}
			}
			chosen = append(chosen, unit{s, u.end})
			chosenMsgs[s] = pv
			remaining -= pt
		}
		break
	}
	if len(chosen) == 0 && len(pinnedOut) == 0 {
		return nil, 0, &budgetError{need: total}
	}
	// Assemble in original order.
	slices.Reverse(chosen)
	out := make([]history.Message, 0, len(pinnedOut)+len(chosen)*4)
	tokens := 0
	add := func(m history.Message) {
		tokens += est.Message(&m)
		out = append(out, m)
	}
	ci := 0
	for i := 0; i < len(msgs); {
		if p, ok := pinnedOut[i]; ok {
			add(p)
			i++
			continue
		}
		if ci < len(chosen) && chosen[ci].start == i {
			c := chosen[ci]
			if pv, ok := chosenMsgs[c.start]; ok {
				for _, m := range pv {
					add(m)
				}
			} else {
				for _, m := range msgs[c.start:c.end] {
					add(m)
				}
			}
			i = c.end
			ci++
			continue
		}
		i++
	}
	return out, tokens, nil
}

// continuityTail returns the newest complete protocol groups of msgs within
// budget tokens and the index where they start. When the newest group alone
// exceeds budget it is returned as a bounded preview. Messages before the
// first user message never belong to the tail; with budget 0 there is none.
func continuityTail(est *history.Estimator, msgs []history.Message, budget int) ([]history.Message, int) {
	if budget <= 0 {
		return nil, len(msgs)
	}
	groups := history.Groups(msgs)
	start, used := len(msgs), 0
	for k := len(groups) - 1; k >= 0; k-- {
		g := groups[k]
		if !g.Complete {
			break
		}
		t := spanTokens(est, msgs[g.Start:g.End])
		if used+t > budget {
			if start == len(msgs) { // oversized newest group
				if sfx := groupSuffix(est, msgs[g.Start:g.End], budget); sfx != nil {
					return sfx, g.Start
				}
				pv, _, _ := previewSpan(est, msgs[g.Start:g.End], budget)
				if pv == nil { // even the floors do not fit: keep the skeleton
					pv = make([]history.Message, g.End-g.Start)
					for i := range pv {
						pv[i] = preview(est, msgs[g.Start+i], 0)
					}
				}
				return pv, g.Start
			}
			break
		}
		used += t
		start = g.Start
	}
	return msgs[start:], start
}

// groupSuffix bounds one oversized protocol group (a long agent turn: one
// user message and many tool batches) to budget tokens: its opening user
// message (previewed to at most a quarter of the budget), then the newest
// whole units (a batch with its results, or a single message) that fit, in
// order; the middle of the turn is what the summary covers. When not even
// the newest unit fits, it is previewed into what is left. It returns nil
// when nothing useful fits.
func groupSuffix(est *history.Estimator, grp []history.Message, budget int) []history.Message {
	if len(grp) < 2 {
		return nil
	}
	head := preview(est, grp[0], budget/4)
	remaining := budget - est.Message(&head)
	j := len(grp)
	for j > 1 {
		u := j - 1
		for u > 1 && grp[u].Role == history.Tool {
			u--
		}
		if grp[u].Role == history.Tool { // a result with no call before it: a unit of its own
			u = j - 1
		}
		t := spanTokens(est, grp[u:j])
		if t > remaining {
			if j == len(grp) {
				pv, pt, ok := previewSpan(est, grp[u:j], remaining)
				if !ok || pt > remaining {
					return nil
				}
				return append([]history.Message{head}, pv...)
			}
			break
		}
		remaining -= t
		j = u
	}
	out := make([]history.Message, 0, 1+len(grp)-j)
	out = append(out, head)
	return append(out, grp[j:]...)
}

// retainedSignals are the importance cues of digest §6.5.
var (
	errorSignals      = []string{"error", "failed", "failure", "panic", "bug", "broken", "regression"}
	correctionSignals = []string{"no,", "wrong", "actually", "fix", "instead", "should be", "don't"}
)

// retainUserMessages picks up to max earlier user messages of prefix within
// budget tokens, best score first (importance + recency, digest §6.5): error
// reports 3, corrections 2.5, others 1, plus index/len. The first message
// that does not fit is cut to the remaining budget (when more than 4 tokens
// remain) and selection stops. The result is in original order.
func retainUserMessages(est *history.Estimator, prefix []history.Message, budget, maxCount int) []history.Message {
	if budget <= 0 || maxCount <= 0 {
		return nil
	}
	type cand struct {
		i     int
		score float64
	}
	var cs []cand
	for i := range prefix {
		m := &prefix[i]
		if m.Role != history.User {
			continue
		}
		text := strings.ToLower(m.Text())
		if strings.TrimSpace(text) == "" && m.Content.PartList() == nil {
			continue
		}
		imp := 1.0
		switch {
		case containsAny(text, errorSignals):
			imp = 3
		case containsAny(text, correctionSignals):
			imp = 2.5
		}
		cs = append(cs, cand{i, imp + float64(i)/float64(len(prefix))})
	}
	sort.SliceStable(cs, func(a, b int) bool { return cs[a].score > cs[b].score })
	var picked []int
	cut := map[int]history.Message{}
	remaining := budget
	for _, c := range cs {
		if len(picked) >= maxCount {
			break
		}
		t := est.Message(&prefix[c.i])
		if t <= remaining {
			picked = append(picked, c.i)
			remaining -= t
			continue
		}
		if remaining > history.MessageOverhead {
			m := history.NewText(history.User, truncateHead(est, prefix[c.i].Text(), remaining-history.MessageOverhead-8)+" […]")
			if est.Message(&m) <= remaining && strings.TrimSpace(m.Text()) != "[…]" {
				picked = append(picked, c.i)
				cut[c.i] = m
			}
		}
		break
	}
	sort.Ints(picked)
	out := make([]history.Message, 0, len(picked))
	for _, i := range picked {
		if m, ok := cut[i]; ok {
			out = append(out, m)
			continue
		}
		out = append(out, prefix[i])
	}
	return out
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// boundToWindow bounds a rebuilt history [summary, retained..., tail...] to
// bound tokens (0: unbounded, digest §6.6): the tail first (previewed when
// larger than bound), then the summary capped at min(remaining, 4,096), then
// retained messages in order while they fit.
func boundToWindow(est *history.Estimator, summary history.Message, retained, tail []history.Message, bound int) []history.Message {
	all := make([]history.Message, 0, 1+len(retained)+len(tail))
	all = append(all, summary)
	all = append(all, retained...)
	all = append(all, tail...)
	if bound <= 0 || spanTokens(est, all) <= bound {
		return all
	}
	tt := spanTokens(est, tail)
	if tt > bound {
		if pv, pt, ok := previewSpan(est, tail, bound*3/4); ok {
			tail, tt = pv, pt
		}
	}
	remaining := bound - tt
	sum := preview(est, summary, min(max(remaining, 0), SummaryMessageCap))
	if est.Message(&sum) > remaining {
		sum = history.NewText(history.System, truncateHead(est, summary.Text(), max(0, remaining-history.MessageOverhead)))
	}
	remaining -= est.Message(&sum)
	out := []history.Message{sum}
	for _, m := range retained {
		t := est.Message(&m)
		if t > remaining {
			break
		}
		out = append(out, m)
		remaining -= t
	}
	return append(out, tail...)
}
