package clearing

import (
	"sync"

	"github.com/vtcode/vtcode-ls/history"
)

// scratch holds the per-call working arrays of Clear, reused through a pool so
// that a request allocates nothing proportional to the history but its output.
type scratch struct {
	toks    []int
	owner   []int32 // for a tool message: index of its batch, -1, or protectedOrphan
	callOf  []int32 // for a matched tool message: index of its call in the batch
	res     []int32 // result indices of all batches, -1 for a missing result
	mark    []bool  // per entry of res: the call's result was cleared
	batches []batch
	stubs   []stubOf          // per message: its stub, once computed
	repl    []history.Message // per message: its replacement, where from is fromRepl
	from    []uint8
	// normalized says msgs is normalized (structure's positional path).
	normalized bool
	// Per message, what this projection did there (for the memo's sums):
	// the estimate its stub removed, the estimate its calls' edits
	// removed, whether it is a cleared result, and its calls' inputs
	// replaced.
	stubRed, editRed []int
	clearedAt        []uint8
	inputsAt         []int32
}

// stubOf is a result's stub and the estimate of the result with it.
type stubOf struct {
	text   string
	tokens int
	ok     bool
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func getScratch(n int) *scratch {
	sc := scratchPool.Get().(*scratch)
	sc.toks = grow(sc.toks, n)
	return sc
}

func putScratch(sc *scratch) {
	if cap(sc.toks) > 1<<20 { // do not pin huge arrays
		return
	}
	scratchPool.Put(sc)
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// structure computes batches, owner, callOf and res for msgs: positionally
// when msgs is normalized, with [history.Pair] otherwise.
func (sc *scratch) structure(msgs []history.Message) {
	n := len(msgs)
	sc.owner = grow(sc.owner, n)
	sc.callOf = grow(sc.callOf, n)
	for i := range sc.owner {
		sc.owner[i] = -1
	}
	sc.batches = sc.batches[:0]
	sc.res = sc.res[:0]
	sc.normalized = history.Normalized(msgs)
	if sc.normalized {
		for i := 0; i < n; i++ {
			k := len(msgs[i].ToolCalls)
			if k == 0 || msgs[i].Role != history.Assistant {
				continue
			}
			bi := int32(len(sc.batches))
			sc.batches = append(sc.batches, batch{asst: int32(i), first: int32(len(sc.res)), n: int32(k), complete: true})
			for c := range k {
				r := i + 1 + c
				sc.res = append(sc.res, int32(r))
				sc.owner[r] = bi
				sc.callOf[r] = int32(c)
			}
			i += k
		}
	} else {
		pr := history.Pair(msgs)
		for bi, b := range pr.Batches {
			sc.batches = append(sc.batches, batch{asst: int32(b.Assistant), first: int32(len(sc.res)), n: int32(len(b.Results)), complete: b.Complete()})
			for c, r := range b.Results {
				sc.res = append(sc.res, int32(r))
				if r >= 0 {
					sc.owner[r] = int32(bi)
					sc.callOf[r] = int32(c)
				}
			}
		}
	}
	sc.mark = grow(sc.mark, len(sc.res))
	clear(sc.mark)
}

// perMessage readies the per-message records of a projection of the
// structured messages whose first lo come from the last one.
func (sc *scratch) perMessage(lo int) {
	n := len(sc.owner)
	sc.stubRed, sc.editRed = grow(sc.stubRed, n), grow(sc.editRed, n)
	sc.clearedAt, sc.inputsAt = grow(sc.clearedAt, n), grow(sc.inputsAt, n)
	clear(sc.stubRed[lo:])
	clear(sc.editRed[lo:])
	clear(sc.clearedAt[lo:])
	clear(sc.inputsAt[lo:])
	sc.stubs = grow(sc.stubs, n)
	clear(sc.stubs[lo:])
}
