package history

import "fmt"

// InterruptedResult is the text of the synthetic result that answers a call that
// never got one.
const InterruptedResult = "canceled: tool execution was interrupted; this placeholder keeps the call/result pairing valid."

// Batch is one assistant message with tool calls plus the results that answer
// its calls. Batches are ordered by the position of their assistant message.
type Batch struct {
	Assistant int   // index of the assistant message
	Results   []int // Results[i] is the index of the result answering call i, or -1
}

// Complete reports whether every call of the batch is answered.
func (b Batch) Complete() bool {
	for _, r := range b.Results {
		if r < 0 {
			return false
		}
	}
	return true
}

// Pairing is the call/result structure of a message list.
type Pairing struct {
	Batches []Batch
	// BatchOf maps the index of a tool message to the index in Batches of the batch
	// it answers, or -1 for an orphan (a result whose id matches no earlier
	// unanswered call); it maps every other index to -1 as well, except
	// assistant messages with tool calls, which map to their own batch.
	BatchOf []int
}

// Pair computes the pairing of msgs. Each result is matched with the nearest
// earlier unanswered call of the same id (the first such call when one message
// repeats an id), so reused ids, reordered completions and intervening
// messages pair correctly.
func Pair(msgs []Message) Pairing {
	p := Pairing{BatchOf: make([]int, len(msgs))}
	calls := 0
	for i := range msgs {
		if msgs[i].HasToolCalls() {
			calls += len(msgs[i].ToolCalls)
		}
	}
	// The unanswered calls by id, as a stack per id; ids are almost always
	// unique, so the first entry is kept inline and a stack is allocated
	// only for a repeated id.
	type pending struct{ batch, call int }
	type stack struct {
		top  pending
		n    int       // entries: top and below
		rest []pending // below top, oldest first
	}
	open := make(map[string]*stack, calls)
	var slab []stack // the stacks, allocated together
	if calls > 0 {
		slab = make([]stack, 0, calls)
	}
	for i := range msgs {
		m := &msgs[i]
		p.BatchOf[i] = -1
		switch {
		case m.HasToolCalls():
			b := len(p.Batches)
			res := make([]int, len(m.ToolCalls))
			// Push in reverse so that, for an id repeated inside one message,
			// results answer its calls in call order.
			for c := len(m.ToolCalls) - 1; c >= 0; c-- {
				res[c] = -1
				id := m.ToolCalls[c].ID
				st := open[id]
				if st == nil {
					slab = append(slab, stack{})
					st = &slab[len(slab)-1]
					open[id] = st
				}
				if st.n > 0 {
					st.rest = append(st.rest, st.top)
				}
				st.top, st.n = pending{b, c}, st.n+1
			}
			p.Batches = append(p.Batches, Batch{Assistant: i, Results: res})
			p.BatchOf[i] = b
		case m.Role == Tool:
			st := open[m.ToolCallID]
			if st == nil || st.n == 0 {
				continue
			}
			top := st.top
			st.n--
			if st.n > 0 {
				st.top = st.rest[len(st.rest)-1]
				st.rest = st.rest[:len(st.rest)-1]
			}
			p.Batches[top.batch].Results[top.call] = i
			p.BatchOf[i] = top.batch
		}
	}
	return p
}

// Normalized reports whether msgs already has valid pairing: every assistant
// message with tool calls is directly followed by one result per call, in call
// order, and there is no other tool message.
func Normalized(msgs []Message) bool {
	for i := 0; i < len(msgs); i++ {
		m := &msgs[i]
		switch {
		case m.Role == Tool:
			return false
		case m.HasToolCalls():
			if i+len(m.ToolCalls) >= len(msgs) {
				return false
			}
			for c, tc := range m.ToolCalls {
				r := &msgs[i+1+c]
				if r.Role != Tool || r.ToolCallID != tc.ID {
					return false
				}
			}
			i += len(m.ToolCalls)
		}
	}
	return true
}

// Normalize repairs pairing: a call with no result gets a synthetic result
// ([InterruptedResult]) right after its batch; orphan results are dropped;
// results are moved to directly follow their assistant message, in call order,
// so a message that sat between a call and its results ends up after them.
// A list that is already normalized is returned as is, without copying, and
// changed is false. msgs itself is never modified.
func Normalize(msgs []Message) (out []Message, changed bool) {
	if Normalized(msgs) {
		return msgs, false
	}
	p := Pair(msgs)
	// The exact length: every message but the tool results, and one result
	// per call; the slice never grows (a batch of a thousand unanswered
	// calls would otherwise copy the list again and again).
	n := 0
	for i := range msgs {
		switch m := &msgs[i]; {
		case m.Role == Tool:
		case m.HasToolCalls():
			n += 1 + len(m.ToolCalls)
		default:
			n++
		}
	}
	out = make([]Message, 0, n)
	for i := range msgs {
		m := msgs[i]
		switch {
		case m.Role == Tool:
			// emitted with its batch, or dropped as an orphan
		case m.HasToolCalls():
			out = append(out, m)
			b := p.Batches[p.BatchOf[i]]
			for c, r := range b.Results {
				if r >= 0 {
					out = append(out, msgs[r])
					continue
				}
				tc := m.ToolCalls[c]
				out = append(out, NewToolResult(tc.ID, tc.Name, InterruptedResult))
			}
		default:
			out = append(out, m)
		}
	}
	return out, true
}

// CheckPairing returns an error describing the first pairing violation of msgs,
// or nil when msgs is normalized.
func CheckPairing(msgs []Message) error {
	for i := 0; i < len(msgs); i++ {
		m := &msgs[i]
		switch {
		case m.Role == Tool:
			return fmt.Errorf("message %d: tool result %q does not follow its call", i, m.ToolCallID)
		case m.HasToolCalls():
			for c, tc := range m.ToolCalls {
				j := i + 1 + c
				if j >= len(msgs) || msgs[j].Role != Tool || msgs[j].ToolCallID != tc.ID {
					return fmt.Errorf("message %d: call %q (%d of %d) is not answered in order", i, tc.ID, c+1, len(m.ToolCalls))
				}
			}
			i += len(m.ToolCalls)
		}
	}
	return nil
}

// Group is a protocol group: a user message and everything up to the next user
// message. Messages before the first user message belong to no group.
type Group struct {
	Start, End int // msgs[Start:End]; msgs[Start] is a user message
	Complete   bool
}

// Groups returns the protocol groups of msgs in order. A group is complete when
// every call in it is answered by a result inside the group.
func Groups(msgs []Message) []Group {
	p := Pair(msgs)
	var gs []Group
	for i := range msgs {
		if msgs[i].Role == User {
			if len(gs) > 0 {
				gs[len(gs)-1].End = i
			}
			gs = append(gs, Group{Start: i, End: len(msgs)})
		}
	}
	for gi := range gs {
		g := &gs[gi]
		g.Complete = true
		for i := g.Start; i < g.End && g.Complete; i++ {
			if !msgs[i].HasToolCalls() {
				continue
			}
			for _, r := range p.Batches[p.BatchOf[i]].Results {
				if r < 0 || r >= g.End {
					g.Complete = false
					break
				}
			}
		}
	}
	return gs
}

// NormalizeGrow is [Normalize] for a list that usually grew by appending:
// when everything before the last assistant message with tool calls is
// normalized, only the messages from there on are paired again, and when
// their repair only appends (synthesized results for the trailing calls),
// out is msgs extended in place, written into its spare capacity, instead of
// a copy of the whole list. The caller must hold no slice of msgs's array
// longer than msgs. out is the same list Normalize returns.
func NormalizeGrow(msgs []Message) (out []Message, changed bool) {
	a := len(msgs) - 1
	for a >= 0 && !msgs[a].HasToolCalls() {
		a--
	}
	if a < 0 || !Normalized(msgs[:a]) {
		return Normalize(msgs)
	}
	tail, changed := Normalize(msgs[a:])
	if !changed {
		return msgs, false
	}
	n := len(msgs) - a
	extends := len(tail) >= n
	for i := 0; extends && i < n; i++ {
		extends = Same(&tail[i], &msgs[a+i])
	}
	if extends {
		return append(msgs, tail[n:]...), true
	}
	out = make([]Message, a, a+len(tail))
	copy(out, msgs[:a])
	return append(out, tail...), true
}
