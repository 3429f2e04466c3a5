package clearing

import (
	"fmt"
	"hash/maphash"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/vtcode/vtcode-ls/history"
)

// StubPrefix starts every stub, and marks a result as already cleared.
const StubPrefix = "[tool result cleared"

// IsStub reports whether m is a tool result that has already been cleared: its
// content is a string starting with [StubPrefix].
func IsStub(m *history.Message) bool {
	return m.Role == history.Tool && m.Content.IsString() && strings.HasPrefix(m.Content.Text(), StubPrefix)
}

// StubText returns the stub of a result of the named tool answering callID
// whose estimate was tokens, for example
//
//	[tool result cleared: read_file call_7, 4,812 tokens; run the tool again if you need it]
func StubText(tool, callID string, tokens int) string {
	var sb strings.Builder
	sb.Grow(len(StubPrefix) + len(tool) + len(callID) + 64)
	sb.WriteString(StubPrefix)
	sb.WriteString(": ")
	if tool != "" {
		sb.WriteString(tool)
		if callID != "" {
			sb.WriteByte(' ')
		}
	}
	sb.WriteString(callID)
	if tool != "" || callID != "" {
		sb.WriteString(", ")
	}
	sb.WriteString(history.FormatCount(tokens))
	sb.WriteString(" tokens; run the tool again if you need it]")
	return sb.String()
}

func itoa(n int) string { return strconv.Itoa(n) }

// stub returns the stub text replacing result m (estimate n) and the estimate
// of m with that content.
func (mm *Memo) stub(est *history.Estimator, tok history.Tokenizer, m *history.Message, name string, n int) (string, int) {
	plain := len(m.ToolCalls) == 0 && m.Reasoning == "" && m.ReasoningDetails == nil
	if !plain {
		text := StubText(name, m.ToolCallID, n)
		c := m.WithContent(history.Text(text))
		return text, est.Message(&c)
	}
	if tok == history.Approx {
		text := StubText(name, m.ToolCallID, n)
		return text, history.MessageOverhead + est.Text(text) + est.Text(m.ToolCallID)
	}
	k := stubKey{tok: tok, name: name, id: m.ToolCallID, n: n}
	if mm != nil {
		mm.mu.RLock()
		v, ok := mm.stubs[k]
		mm.mu.RUnlock()
		if ok {
			return v.text, v.tokens
		}
	}
	text := StubText(name, m.ToolCallID, n)
	tokens, ok := mm.composedStubTokens(est, tok, stubLabel(name, m.ToolCallID), n)
	if !ok {
		tokens = est.Text(text)
	}
	v := stubVal{text: text, tokens: history.MessageOverhead + tokens + mm.textTokens(est, tok, m.ToolCallID)}
	if mm != nil {
		mm.mu.Lock()
		mm.reserve()
		mm.stubs[k] = v
		mm.mu.Unlock()
	}
	return v.text, v.tokens
}

// stubLabel is the part of a stub that names the tool and the call.
func stubLabel(tool, callID string) string {
	switch {
	case tool == "":
		return callID
	case callID == "":
		return tool
	}
	return tool + " " + callID
}

// Pieces of a stub between which the o200k pre-tokenizer always splits:
//
//	"[tool result cleared:" | " <label>," | " " | "4" | "," | "812" | " tokens; run the tool again if you need it]"
//
// The colon and the label's final comma are punctuation chunks that end at the
// following space; a space followed by a digit is a chunk of its own; digits
// form chunks of at most three, and the thousands separators split them at
// exactly those points. So the stub's count is the sum of its pieces' counts,
// provided the label has no character that could join a neighbouring piece
// (see simpleLabel).
const (
	stubHead = StubPrefix + ":"
	stubTail = " tokens; run the tool again if you need it]"
)

// o200kPieces holds the o200k counts of the fixed pieces and of every digit
// group, computed once per process.
var o200kPieces = sync.OnceValue(func() *pieceCounts {
	e := history.NewEstimator(history.O200k)
	pc := &pieceCounts{head: e.Text(stubHead), space: e.Text(" "), comma: e.Text(","), tail: e.Text(stubTail)}
	for i := range pc.group {
		pc.group[i] = int32(e.Text(strconv.Itoa(i)))
	}
	for i := range pc.padded {
		pc.padded[i] = int32(e.Text(fmt.Sprintf("%03d", i)))
	}
	return pc
})

type pieceCounts struct {
	head, space, comma, tail int
	group                    [1000]int32 // "0" … "999"
	padded                   [100]int32  // "000" … "099"
}

// composedStubTokens returns the count of StubText with this label and n
// without tokenizing it, when the tokenizer and the label allow.
func (mm *Memo) composedStubTokens(est *history.Estimator, tok history.Tokenizer, label string, n int) (int, bool) {
	if tok != history.O200k || n < 0 || !simpleLabel(label) {
		return 0, false
	}
	pc := o200kPieces()
	total := pc.head + pc.space + pc.tail
	if label != "" {
		total += mm.textTokens(est, tok, " "+label+",")
	}
	digits := strconv.Itoa(n)
	head := len(digits) % 3
	if head == 0 {
		head = 3
	}
	total += int(pc.group[atoi3(digits[:head])])
	for i := head; i < len(digits); i += 3 {
		g := digits[i : i+3]
		if g[0] == '0' {
			total += pc.comma + int(pc.padded[atoi3(g)])
		} else {
			total += pc.comma + int(pc.group[atoi3(g)])
		}
	}
	return total, true
}

func atoi3(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// simpleLabel reports whether label is made of names and ids of ASCII
// letters, digits, '_', '-' and '.', separated by single spaces: characters
// that form chunks only with each other.
func simpleLabel(label string) bool {
	for i := 0; i < len(label); i++ {
		c := label[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-', c == '.':
		case c == ' ' && i > 0 && i < len(label)-1 && label[i-1] != ' ':
		default:
			return false
		}
	}
	return true
}

// textTokens returns est.Text(s), memoized in mm (when not nil) for BPE
// tokenizers.
func (mm *Memo) textTokens(est *history.Estimator, tok history.Tokenizer, s string) int {
	if mm == nil || tok == history.Approx || s == "" {
		return est.Text(s)
	}
	k := textKey{tok: tok, h: maphash.String(mm.seed, s), n: len(s)}
	mm.mu.RLock()
	v, ok := mm.texts[k]
	mm.mu.RUnlock()
	if ok {
		return v
	}
	v = est.Text(s)
	mm.mu.Lock()
	mm.reserve()
	mm.texts[k] = v
	mm.mu.Unlock()
	return v
}

// memoLimit bounds the number of memoized counts beyond those of the
// messages warmed into the memo; the memo is emptied when the bound is
// reached. The warmed messages' counts are what every projection needs, so
// the bound grows with them: a memo emptied below them would make every
// projection of a large session tokenize again.
const memoLimit = 1 << 16

type stubKey struct {
	tok      history.Tokenizer
	name, id string
	n        int
}

type stubVal struct {
	text   string
	tokens int // estimate of a plain result message with this stub
}

// textKey identifies a text by a 64-bit hash and its length, so the memo does
// not keep large strings alive.
type textKey struct {
	tok history.Tokenizer
	h   uint64
	n   int
}

// Memo holds token counts that clearing derives (stubs, thought signatures,
// large inputs), so that a projection after an append tokenizes nothing. It
// belongs to its caller (a session keeps one in its state): clearing holds no
// state of its own. A Memo never changes a result, only its cost; a nil
// *Memo memoizes nothing. It is safe for concurrent use and bounded: it is
// emptied when it reaches its limit.
type Memo struct {
	mu    sync.RWMutex
	seed  maphash.Seed
	stubs map[stubKey]stubVal
	texts map[textKey]int
	// warmed counts the tool calls and results Warm saw since the memo
	// was last emptied (a projection memoizes at most a few counts for each:
	// its stub, that of a synthesized result, a large input); the bound is
	// memoLimit plus eight times that.
	warmed int
	// byIndex holds the stub of each message index from the last
	// projection, checked against its key on use: a history that grows
	// finds its old results' stubs without hashing. One projection owns it
	// at a time (taken with Swap); a concurrent one goes without.
	byIndex atomic.Pointer[[]indexedStub]
	// frozen is the record of the last projection (frozen.go), owned like
	// byIndex; frozenTaken says the first one was handed out.
	frozen      atomic.Pointer[frozen]
	frozenTaken atomic.Bool
}

// indexedStub is the stub of the plain result at one index, with the key it
// was computed for.
type indexedStub struct {
	key    stubKey
	text   string
	tokens int
}

// takeIndex returns the per-index stubs for one projection to use and
// extend (nil without a memo, or while another projection holds them).
func (m *Memo) takeIndex() *[]indexedStub {
	if m == nil {
		return nil
	}
	if p := m.byIndex.Swap(nil); p != nil {
		return p
	}
	return new([]indexedStub)
}

// putIndex hands the per-index stubs back.
func (m *Memo) putIndex(p *[]indexedStub) {
	if m != nil && p != nil {
		m.byIndex.Store(p)
	}
}

// NewMemo returns an empty memo.
func NewMemo() *Memo {
	return &Memo{seed: maphash.MakeSeed(), stubs: map[stubKey]stubVal{}, texts: map[textKey]int{}}
}

// Len returns the number of memoized counts.
func (m *Memo) Len() int {
	if m == nil {
		return 0
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.stubs) + len(m.texts)
}

// reserve empties the memo when it is full; m.mu must be held.
func (m *Memo) reserve() {
	if len(m.stubs)+len(m.texts) >= memoLimit+8*m.warmed {
		clear(m.stubs)
		clear(m.texts)
		m.warmed = 0
	}
}

// Reset empties the memo.
func (m *Memo) Reset() {
	m.mu.Lock()
	clear(m.stubs)
	clear(m.texts)
	m.warmed = 0
	m.mu.Unlock()
}

// Warm memoizes in m, for the messages of msgs, the token counts a later
// projection with m would otherwise compute when it clears them: their
// stubs, thought signatures and large inputs. Call it where messages are
// estimated on arrival (after est.Message on each), so that no projection
// tokenizes; clearing is correct without it. It does not modify msgs.
func (m *Memo) Warm(est *history.Estimator, msgs []history.Message) {
	tok := est.Tokenizer()
	if m == nil || tok == history.Approx {
		return // nothing to memoize: counts are arithmetic
	}
	// The bound grows first, so that warming a large history does not
	// empty the memo of what it warms.
	entries := 0
	for i := range msgs {
		entries += len(msgs[i].ToolCalls)
		if msgs[i].Role == history.Tool {
			entries++
		}
	}
	m.mu.Lock()
	m.warmed += entries
	m.mu.Unlock()
	var names map[string]string // call id → tool name, for unnamed results
	for i := range msgs {
		msg := &msgs[i]
		for _, tc := range msg.ToolCalls {
			if tc.ThoughtSignature != "" {
				m.textTokens(est, tok, tc.ThoughtSignature)
			}
			for _, s := range []string{tc.Arguments, tc.Input} {
				if len(s) > MaxKeptInputBytes {
					m.textTokens(est, tok, s)
					m.textTokens(est, tok, `{"cleared":"`+itoa(len(s))+` bytes of arguments"}`)
				}
			}
			if msg.Role == history.Assistant {
				if names == nil {
					names = map[string]string{}
				}
				names[tc.ID] = tc.Name
			}
		}
		if msg.Role != history.Tool || IsStub(msg) {
			continue
		}
		n, ok := est.Cached(msg)
		if !ok {
			c := *msg
			n = est.Message(&c)
		}
		name := msg.ToolName
		if name == "" {
			name = names[msg.ToolCallID]
		}
		m.stub(est, tok, msg, name, n)
	}
}
