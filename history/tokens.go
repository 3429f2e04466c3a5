package history

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/tiktoken-go/tokenizer"
	"github.com/tiktoken-go/tokenizer/codec"
)

// Tokenizer names a token counting method.
type Tokenizer string

// The supported tokenizers.
const (
	O200k  Tokenizer = "o200k"  // the o200k_base BPE, embedded
	Approx Tokenizer = "approx" // ceil(utf8 bytes / 4)
)

// ParseTokenizer checks a tokenizer name; the empty string means [O200k].
func ParseTokenizer(s string) (Tokenizer, error) {
	switch Tokenizer(s) {
	case "", O200k:
		return O200k, nil
	case Approx:
		return Approx, nil
	}
	return "", fmt.Errorf("unknown tokenizer %q (want o200k or approx)", s)
}

// Estimation constants of the message estimate.
const (
	MessageOverhead  = 4    // per message, for the role
	ToolCallOverhead = 20   // per tool call
	MediaPartTokens  = 1000 // per image or file part
)

// estimate is the cache carried by a Message: the tokenizer it was computed
// with (1 = o200k, 2 = approx) and the count.
type estimate struct {
	kind uint8
	n    int32
}

// Estimator counts tokens of text and messages. It is safe for concurrent use,
// but two goroutines must not estimate the same *Message at once.
//
// It remembers the counts of short texts (tool names, call ids, small
// arguments, the synthetic result text), which recur in every projection:
// a bounded memo of a pure function, so that re-estimating a thousand
// synthesized results costs map lookups rather than a thousand runs of the
// BPE.
type Estimator struct {
	kind  uint8
	name  Tokenizer
	codec tokenizer.Codec

	memoMu sync.Mutex
	memo   map[string]int32 // counts of texts of at most memoText bytes
	// parts are the counts of the prefix's parts (Prefix: a system prompt,
	// a tool schema), whatever their length: an agent sends the same ones
	// with every request, tens of kilobytes that tokenizing again cost
	// milliseconds per request. partBytes is the text they hold.
	parts     map[string]int32
	partBytes int
}

// Bounds of the short-text memo and of the prefix parts' memo.
const (
	memoText     = 128     // bytes
	memoEntries  = 1 << 17 // cleared when full
	maxPartBytes = 8 << 20 // the parts' memo is cleared when it would pass it
)

var (
	o200kOnce  sync.Once
	o200kCodec tokenizer.Codec
)

// NewEstimator returns an estimator for t ("" means o200k). It panics on an
// unknown tokenizer; check names with [ParseTokenizer].
func NewEstimator(t Tokenizer) *Estimator {
	switch t {
	case "", O200k:
		o200kOnce.Do(func() { o200kCodec = codec.NewO200kBase() })
		return &Estimator{kind: 1, name: O200k, codec: o200kCodec}
	case Approx:
		return &Estimator{kind: 2, name: Approx}
	}
	panic(fmt.Sprintf("history: unknown tokenizer %q", t))
}

// Tokenizer returns the estimator's method.
func (e *Estimator) Tokenizer() Tokenizer { return e.name }

// Text returns the token count of s.
func (e *Estimator) Text(s string) int {
	if s == "" {
		return 0
	}
	if e.codec == nil {
		return (len(s) + 3) / 4
	}
	short := len(s) <= memoText
	if short {
		e.memoMu.Lock()
		n, ok := e.memo[s]
		e.memoMu.Unlock()
		if ok {
			return int(n)
		}
	}
	n := e.count(s)
	if short {
		e.memoMu.Lock()
		if e.memo == nil || len(e.memo) >= memoEntries {
			e.memo = make(map[string]int32)
		}
		e.memo[strings.Clone(s)] = clamp32(n)
		e.memoMu.Unlock()
	}
	return n
}

// countChunk is the size of the pieces a long text is counted in.
const countChunk = 64 << 10

// count runs the BPE on s. A long text is counted in pieces of about
// countChunk bytes, cut before a space that sits between two non-space
// bytes: no token of the o200k pre-tokenizer spans such a cut (the word
// after it starts with the space), so the sum is the count of the whole,
// and the tokenizer's working memory stays bounded by the piece instead of
// growing with the text.
func (e *Estimator) count(s string) int {
	total := 0
	for len(s) > 0 {
		piece := s
		if len(s) > 2*countChunk {
			if cut := cutPoint(s, countChunk); cut > 0 {
				piece = s[:cut]
			}
		}
		n, err := e.codec.Count(piece)
		if err != nil {
			n = (len(piece) + 3) / 4
		}
		total += n
		s = s[len(piece):]
	}
	return total
}

// cutPoint returns the first index i >= from with s[i] == ' ' between two
// bytes that are not white space, or 0 when there is none.
func cutPoint(s string, from int) int {
	for i := from; i+1 < len(s); i++ {
		if s[i] == ' ' && !isSpaceByte(s[i-1]) && !isSpaceByte(s[i+1]) {
			return i
		}
	}
	return 0
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c >= 0x80
}

// Message returns the estimate of m, computing and caching it on m when m has no
// estimate from this tokenizer yet.
func (e *Estimator) Message(m *Message) int {
	if m.est.kind == e.kind {
		return int(m.est.n)
	}
	n := e.compute(m)
	m.est = estimate{kind: e.kind, n: clamp32(n)}
	return n
}

// Cached returns the cached estimate of m and whether there is one for this tokenizer.
func (e *Estimator) Cached(m *Message) (int, bool) {
	if m.est.kind == e.kind {
		return int(m.est.n), true
	}
	return 0, false
}

// SetCached records n as the estimate of m under this estimator's tokenizer,
// for callers that derived it without re-tokenizing (for example from the
// cached estimate of the message m was copied from). n must be what
// [Estimator.Message] would compute for m.
func (e *Estimator) SetCached(m *Message, n int) {
	m.est = estimate{kind: e.kind, n: clamp32(n)}
}

func clamp32(n int) int32 {
	if n > math.MaxInt32 {
		return math.MaxInt32
	}
	return int32(n)
}

// Messages estimates every message of msgs, caching on each, and returns the sum.
func (e *Estimator) Messages(msgs []Message) int {
	total := 0
	for i := range msgs {
		total += e.Message(&msgs[i])
	}
	return total
}

// Prefix returns the overhead of a system prompt and tool schemas:
// tokens(system) + Σ tokens(JSON of each schema). The count of each part
// is remembered (at most maxPartBytes of them), so that the prefix a
// conversation resends with every request is tokenized once.
func (e *Estimator) Prefix(system string, tools []json.RawMessage) int {
	n := part(e, system)
	for _, t := range tools {
		n += part(e, t)
	}
	return n
}

// part returns the count of one part of a prefix, from the parts' memo
// when it holds it.
func part[T string | json.RawMessage](e *Estimator, p T) int {
	if len(p) <= memoText || e.codec == nil {
		return e.Text(string(p))
	}
	e.memoMu.Lock()
	n, ok := e.parts[string(p)]
	e.memoMu.Unlock()
	if ok {
		return int(n)
	}
	c := e.count(string(p))
	e.memoMu.Lock()
	defer e.memoMu.Unlock()
	if len(p) > maxPartBytes {
		return c
	}
	if e.parts == nil || e.partBytes+len(p) > maxPartBytes {
		e.parts, e.partBytes = map[string]int32{}, 0
	}
	if _, ok := e.parts[string(p)]; !ok {
		e.parts[string(p)] = clamp32(c)
		e.partBytes += len(p)
	}
	return c
}

func (e *Estimator) compute(m *Message) int {
	n := MessageOverhead
	switch m.Content.kind {
	case contentString:
		n += e.Text(m.Content.text)
	case contentParts:
		for _, p := range m.Content.parts {
			switch {
			case p.IsMedia():
				n += MediaPartTokens
			case p.Raw != nil && p.Type != "text":
				n += (len(p.Raw) + 3) / 4
			default:
				n += e.Text(p.Text)
			}
		}
	}
	for _, tc := range m.ToolCalls {
		n += ToolCallOverhead + e.Text(tc.Name) + e.Text(tc.Arguments) + e.Text(tc.Input) + e.Text(tc.ThoughtSignature)
	}
	n += e.Text(m.ToolCallID)
	n += e.Text(m.Reasoning)
	if m.ReasoningDetails != nil {
		size := 2
		for i, d := range m.ReasoningDetails {
			if i > 0 {
				size++
			}
			if len(d) == 0 {
				size += 4
			}
			size += len(d)
		}
		n += (size + 3) / 4
	}
	return n
}

// FormatCount writes n with comma thousands separators, the way token counts
// appear in text a user reads: 4,812.
func FormatCount(n int) string {
	s := strconv.Itoa(n)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	if len(s) <= 3 {
		return sign + s
	}
	var sb strings.Builder
	sb.Grow(len(sign) + len(s) + len(s)/3)
	sb.WriteString(sign)
	head := len(s) % 3
	if head == 0 {
		head = 3
	}
	sb.WriteString(s[:head])
	for i := head; i < len(s); i += 3 {
		sb.WriteByte(',')
		sb.WriteString(s[i : i+3])
	}
	return sb.String()
}
