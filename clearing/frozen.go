package clearing

import (
	"github.com/vtcode/vtcode-ls/history"
)

// A projection of a history that grew decides again only what can have
// changed. Before the horizon, past the floor, every clearable result is a
// stub, so the messages there project the same way on every request until
// the history changes there: a memo keeps its last projection's output and
// running sums, and the next projection takes the prefix the caller says is
// unchanged (Request.Unchanged, up to where the last one had nothing
// protected and nothing held) from there, looking only at the messages after
// it. It never changes a result, only its cost: the sums are those the full
// passes would make, and a projection that cannot use the prefix does the
// full passes.

// frozen is a memo's record of its last projection.
type frozen struct {
	key  frozenKey
	out  []history.Message // the last output
	upTo int               // every message before it was decided by the rule alone (see frozenPrefix)
	cum  []partial         // cum[i]: the last projection's sums over messages [0, i)
}

// frozenKey is what, besides the messages, decides a message's projection.
type frozenKey struct {
	policy Policy
	budget Budget
	tok    history.Tokenizer
}

// partial holds running sums of one projection.
type partial struct {
	stubRed  int // estimate removed by stubbing results
	editRed  int // estimate removed by editing calls
	cleared  int // results that are stubs in the output
	inputs   int // calls whose arguments or input were replaced
	requests int // assistant messages
	end      int // the index after the last clearable result
}

// takeFrozen returns the memo's record for one projection to use and
// update; ok is false while another projection holds it (or without a
// memo).
func (m *Memo) takeFrozen() (fz *frozen, ok bool) {
	if m == nil {
		return nil, false
	}
	if p := m.frozen.Swap(nil); p != nil {
		return p, true
	}
	if m.frozenTaken.CompareAndSwap(false, true) {
		return new(frozen), true // the first projection with this memo
	}
	return nil, false
}

// putFrozen hands the record back.
func (m *Memo) putFrozen(fz *frozen) {
	if m != nil && fz != nil {
		m.frozen.Store(fz)
	}
}

// frozenPrefix returns how many leading messages of msgs this projection
// takes from the last one: of the unchanged ones, those before the last
// projection's upTo, before the horizon and before anything this projection
// protects (floor: its first protected message), ending at a batch
// boundary; 0 when base is not (a prefix of) the last output, or anything
// else that decides differs.
func (ps *pass) frozenPrefix(fz *frozen, key frozenKey, hz, unchanged, floor int) int {
	msgs, sc, base := ps.msgs, ps.sc, ps.base
	if fz == nil || fz.key != key || !sc.normalized || len(base) == 0 || len(fz.out) < len(base) || &base[0] != &fz.out[0] {
		return 0
	}
	lo := min(unchanged, fz.upTo, hz, len(base), len(msgs), len(fz.cum)-1, floor)
	return batchStart(msgs, max(lo, 0))
}

// batchStart moves i back to the start of the batch it is inside of, if
// any (msgs normalized).
func batchStart(msgs []history.Message, i int) int {
	for i > 0 && i < len(msgs) && msgs[i].Role == history.Tool {
		i--
	}
	return i
}

// firstProtected is the index of the first message of a protected batch or
// a protected orphan, n when there is none.
func (sc *scratch) firstProtected(n int) int {
	first := n
	for bi := len(sc.batches) - 1; bi >= 0; bi-- {
		if bt := &sc.batches[bi]; bt.protected {
			first = min(first, int(bt.asst))
		}
	}
	for i, o := range sc.owner[:n] {
		if o == protectedOrphan {
			first = min(first, i)
			break
		}
	}
	return first
}

// record makes fz the record of this projection, whose first lo messages
// came from the last one: its output, its sums, and how far the next
// projection may take from it (floor: its first protected message).
func (ps *pass) record(fz *frozen, key frozenKey, lo int, out []history.Message, floor int) {
	msgs, sc := ps.msgs, ps.sc
	fz.key, fz.out = key, out
	if cap(fz.cum) < len(msgs)+1 {
		c := make([]partial, len(msgs)+1, 2*len(msgs)+1)
		copy(c, fz.cum[:min(lo+1, len(fz.cum))])
		fz.cum = c
	}
	fz.cum = fz.cum[:len(msgs)+1]
	if lo == 0 {
		fz.cum[0] = partial{}
	}
	for i := lo; i < len(msgs); i++ {
		p := fz.cum[i]
		if msgs[i].Role == history.Assistant {
			p.requests++
		}
		if ps.clearable(i) {
			p.end = i + 1
		}
		p.stubRed += sc.stubRed[i]
		p.editRed += sc.editRed[i]
		p.cleared += int(sc.clearedAt[i])
		p.inputs += int(sc.inputsAt[i])
		fz.cum[i+1] = p
	}
	// The next projection may take what this one decided by the rule
	// alone: before its limit and before anything it protects.
	fz.upTo = batchStart(msgs, min(ps.limit, floor))
}

// invalidate makes fz useless to the next projection.
func (fz *frozen) invalidate() {
	if fz != nil {
		fz.upTo, fz.out = 0, nil
	}
}
