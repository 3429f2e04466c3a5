package compaction

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/vtcode/vtcode-ls/history"
)

// Bounding constants (docs/design.md §8.5).
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
	return truncateMiddleOf(est, s, est.Text(s), n, what)
}

// truncateMiddleOf is truncateMiddle for a text whose token count t is
// already known (a message's cached estimate): a huge text is not
// tokenized a second time.
func truncateMiddleOf(est *history.Estimator, s string, t, n int, what string) string {
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
	if t, ok := knownTextTokens(est, &m); ok {
		out.Content = history.Text(truncateMiddleOf(est, m.Content.Text(), t, max(0, rest-2), "text")) // as boundContent
	} else {
		out.Content = boundContent(est, m.Content, rest)
	}
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
// It checks ctx before each message, and returns ctx's error.
func pruneToolResults(ctx context.Context, est *history.Estimator, msgs []history.Message) ([]history.Message, error) {
	var out []history.Message
	for i := range msgs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m := &msgs[i]
		if m.Role != history.Tool {
			continue
		}
		mt := est.Message(m)
		if mt <= OversizedToolResult {
			continue
		}
		if out == nil {
			out = slices.Clone(msgs)
		}
		p := *m
		text := m.Content.Text()
		textTokens, known := knownTextTokens(est, m) // counted once, with the message
		if parts := m.Content.PartList(); parts != nil {
			text = boundContent(est, m.Content, 1<<30).Text()
		}
		what := "tool result"
		if m.ToolName != "" {
			what = "tool result " + m.ToolCallID + " (" + m.ToolName + ")"
		} else if m.ToolCallID != "" {
			what = "tool result " + m.ToolCallID
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n := ToolResultPreview - history.MessageOverhead - est.Text(m.ToolCallID)
		if known {
			p.Content = history.Text(truncateMiddleOf(est, text, textTokens, n, what))
		} else {
			p.Content = history.Text(truncateMiddle(est, text, n, what))
		}
		p.ReasoningDetails = nil
		p.Forget()
		out[i] = p
	}
	if out == nil {
		return msgs, nil
	}
	return out, nil
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

// continuityTail returns the newest complete protocol groups of msgs within
// budget tokens and the index where they start. A group larger than the
// whole budget (a long agent turn) is not skipped when it is the first that
// does not fit: its opening user message and its newest whole batches that
// fit what is left are kept (see [groupSuffix]), so the agent's last turn
// survives a short user follow-up.
// When nothing of the newest group fits whole it is returned as a bounded
// preview. Messages before the first user message never belong to the tail;
// with budget 0 there is none.
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
		if used+t <= budget {
			used += t
			start = g.Start
			continue
		}
		if t > budget { // a long agent turn: larger than the whole tail
			if sfx := groupSuffix(est, msgs[g.Start:g.End], budget-used, start == len(msgs)); sfx != nil {
				return append(sfx, msgs[start:]...), g.Start
			}
		}
		if start == len(msgs) { // oversized newest group
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
	return msgs[start:], start
}

// groupSuffix bounds one oversized protocol group (a long agent turn: one
// user message and many tool batches) to budget tokens: its opening user
// message (previewed to at most a quarter of the budget), then the newest
// whole units (a batch with its results, or a single message) that fit, in
// order; the middle of the turn is what the summary covers. When not even
// the newest unit fits, it is previewed into what is left if allowPreview is
// set. It returns nil when nothing useful fits.
func groupSuffix(est *history.Estimator, grp []history.Message, budget int, allowPreview bool) []history.Message {
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
				if !allowPreview {
					return nil
				}
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

// retainedSignals are the importance cues that rank the retained user
// messages of a rebuilt history (docs/design.md §8.5).
var (
	errorSignals      = []string{"error", "failed", "failure", "panic", "bug", "broken", "regression"}
	correctionSignals = []string{"no,", "wrong", "actually", "fix", "instead", "should be", "don't"}
)

// retainUserMessages picks up to max earlier user messages of prefix within
// budget tokens, best score first (importance + recency): error
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
// bound tokens (0: unbounded; docs/design.md §8.5): the tail first (previewed when
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
