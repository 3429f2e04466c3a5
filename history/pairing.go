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
	type pending struct{ batch, call int }
	open := map[string][]pending{}
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
				open[id] = append(open[id], pending{b, c})
			}
			p.Batches = append(p.Batches, Batch{Assistant: i, Results: res})
			p.BatchOf[i] = b
		case m.Role == Tool:
			st := open[m.ToolCallID]
			if len(st) == 0 {
				continue
			}
			top := st[len(st)-1]
			open[m.ToolCallID] = st[:len(st)-1]
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
	out = make([]Message, 0, len(msgs)+2)
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
