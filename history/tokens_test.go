package history

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// formulaMessage exercises every term of the estimate (docs/design.md §3).
func formulaMessage(t *testing.T) Message {
	t.Helper()
	var m Message
	must(t, json.Unmarshal([]byte(`{
		"role": "assistant",
		"content": [
			{"type": "text", "text": "hello world"},
			{"type": "image", "source": {"type": "url", "url": "https://x/y.png"}},
			{"type": "file", "file_id": "f1"},
			{"type": "text", "text": "Let me check.", "cache_control": {"type": "ephemeral"}}
		],
		"toolCalls": [
			{"id": "call_1", "name": "read_file", "arguments": "{\"path\":\"main.go\"}", "thoughtSignature": "sig"},
			{"id": "call_2", "name": "read_file", "input": "abcdefgh"}
		],
		"reasoning": "I will read the file.",
		"reasoningDetails": [{"k": "v"}, "abc"]
	}`), &m))
	return m
}

func TestEstimateFormulaApprox(t *testing.T) {
	e := NewEstimator(Approx)
	for _, tc := range []struct {
		s    string
		want int
	}{{"", 0}, {"a", 1}, {"abcd", 1}, {"abcde", 2}, {"é", 1}, {"東京東", 3}, {"abcdefgh", 2}} {
		if got := e.Text(tc.s); got != tc.want {
			t.Errorf("Text(%q) = %d, want ceil(bytes/4) = %d", tc.s, got, tc.want)
		}
	}
	m := formulaMessage(t)
	// 4 (message)
	// + 3 ("hello world", 11 bytes) + 1000 (image) + 1000 (file) + 4 ("Let me check.", 13 bytes)
	// + call_1: 20 + 3 ("read_file") + 5 (`{"path":"main.go"}`, 18 bytes) + 0 + 1 ("sig")
	// + call_2: 20 + 3 + 0 + 2 ("abcdefgh") + 0
	// + 0 (no toolCallId) + 6 ("I will read the file.", 21 bytes)
	// + 5 (`[{"k":"v"},"abc"]`, 17 bytes)
	want := 4 + 3 + 1000 + 1000 + 4 + (20 + 3 + 5 + 0 + 1) + (20 + 3 + 0 + 2 + 0) + 0 + 6 + 5
	if got := e.Message(&m); got != want {
		t.Errorf("approx estimate = %d, want %d", got, want)
	}
	r := NewToolResult("call_1", "read_file", "abcdefgh")
	if got := e.Message(&r); got != 4+2+2 { // content 8 bytes, toolCallId "call_1" 6 bytes
		t.Errorf("approx result estimate = %d, want 8", got)
	}
}

func TestEstimateFormulaO200k(t *testing.T) {
	e := NewEstimator(O200k)
	for _, tc := range []struct {
		s    string
		want int
	}{
		{"", 0},
		{"hello world", 2},             // hello| world
		{"read_file", 2},               // read|_file
		{`{"path":"main.go"}`, 6},      // {"|path|":"|main|.go|"}
		{"call_1", 3},                  // call|_|1
		{"I will read the file.", 6},   // I| will| read| the| file|.
		{"Let me check.", 4},           // Let| me| check|.
		{"sig", 1},                     // sig
		{"abcdefgh", 1},                // abcdefgh
		{"You are a coding agent.", 6}, // You| are| a| coding| agent|.
		{`{"type":"object"}`, 5},       // {"|type|":"|object|"}
	} {
		if got := e.Text(tc.s); got != tc.want {
			t.Errorf("Text(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
	m := formulaMessage(t)
	// 4 + 2 + 1000 + 1000 + 4
	// + call_1: 20 + 2 + 6 + 0 + 1
	// + call_2: 20 + 2 + 0 + 1 + 0
	// + 0 + 6 + ceil(17/4) = 5 (reasoningDetails are opaque: bytes/4 with every tokenizer)
	want := 4 + 2 + 1000 + 1000 + 4 + (20 + 2 + 6 + 0 + 1) + (20 + 2 + 0 + 1 + 0) + 0 + 6 + 5
	if got := e.Message(&m); got != want {
		t.Errorf("o200k estimate = %d, want %d", got, want)
	}
	r := NewToolResult("call_1", "read_file", "hello world")
	if got := e.Message(&r); got != 4+2+3 {
		t.Errorf("o200k result estimate = %d, want 9", got)
	}
	if got := e.Messages([]Message{NewText(User, "hello world"), NewText(System, "")}); got != 6+4 {
		t.Errorf("Messages = %d, want 10", got)
	}
	tools := []json.RawMessage{json.RawMessage(`{"type":"object"}`), json.RawMessage(`{"type":"object"}`)}
	if got := e.Prefix("You are a coding agent.", tools); got != 6+5+5 {
		t.Errorf("Prefix = %d, want 16", got)
	}
	if got := e.Prefix("", nil); got != 0 {
		t.Errorf("empty Prefix = %d", got)
	}
}

func TestEstimateOtherParts(t *testing.T) {
	e := NewEstimator(Approx)
	var m Message
	// A part that is neither text nor media counts its JSON at bytes/4; an
	// empty reasoningDetails list counts "[]".
	must(t, json.Unmarshal([]byte(`{"role":"user","content":[{"type":"audio","data":"abcd"}],"reasoningDetails":[]}`), &m))
	raw := len(`{"type":"audio","data":"abcd"}`) // 30 bytes → 8
	if got, want := e.Message(&m), 4+(raw+3)/4+1; got != want {
		t.Errorf("estimate = %d, want %d", got, want)
	}
	for _, typ := range []string{"image", "image_url", "input_image", "file", "input_file", "document"} {
		if !(Part{Type: typ}).IsMedia() {
			t.Errorf("%s is not media", typ)
		}
	}
	if (Part{Type: "text"}).IsMedia() {
		t.Error("text is media")
	}
}

func TestEstimateCached(t *testing.T) {
	e := NewEstimator(O200k)
	m := NewText(User, "hello world")
	if _, ok := e.Cached(&m); ok {
		t.Fatal("new message has a cached estimate")
	}
	if got := e.Message(&m); got != 6 {
		t.Fatalf("estimate = %d", got)
	}
	if n, ok := e.Cached(&m); !ok || n != 6 {
		t.Fatalf("Cached = %d, %v", n, ok)
	}
	// The cache is consulted before the content: a changed message that was not
	// forgotten still reports the old count, so nothing was re-tokenized.
	m.Content = Text("a much longer text than before, with many more tokens in it")
	if got := e.Message(&m); got != 6 {
		t.Errorf("cached estimate was recomputed: %d", got)
	}
	// Copies carry the estimate.
	cp := m
	if n, ok := e.Cached(&cp); !ok || n != 6 {
		t.Errorf("copy lost the estimate: %d, %v", n, ok)
	}
	list := []Message{m, cp}
	if got := e.Messages(list); got != 12 {
		t.Errorf("Messages over cached copies = %d", got)
	}
	// Forget and WithContent drop it.
	m.Forget()
	if _, ok := e.Cached(&m); ok {
		t.Error("Forget kept the estimate")
	}
	if got := e.Message(&m); got == 6 {
		t.Error("estimate not recomputed after Forget")
	}
	w := cp.WithContent(Text("x"))
	if _, ok := e.Cached(&w); ok {
		t.Error("WithContent kept the estimate")
	}
	if _, ok := e.Cached(&cp); !ok {
		t.Error("WithContent changed its receiver")
	}
	// An estimate from another tokenizer is not reused.
	a := NewEstimator(Approx)
	if _, ok := a.Cached(&cp); ok {
		t.Error("approx estimator used an o200k estimate")
	}
	if got := a.Message(&cp); got != 4+(len("a much longer text than before, with many more tokens in it")+3)/4 {
		t.Errorf("approx estimate = %d", got)
	}
	// Messages caches every element in place.
	fresh := []Message{NewText(User, "hello world"), NewText(User, "abcdefgh")}
	if got := e.Messages(fresh); got != 6+5 {
		t.Errorf("Messages = %d", got)
	}
	for i := range fresh {
		if _, ok := e.Cached(&fresh[i]); !ok {
			t.Errorf("message %d not cached", i)
		}
	}
	// SetCached records a known count.
	s := NewText(User, "hello world")
	e.SetCached(&s, 6)
	if n, ok := e.Cached(&s); !ok || n != 6 {
		t.Errorf("SetCached: %d, %v", n, ok)
	}
}

func TestParseTokenizer(t *testing.T) {
	for in, want := range map[string]Tokenizer{"": O200k, "o200k": O200k, "approx": Approx} {
		got, err := ParseTokenizer(in)
		if err != nil || got != want {
			t.Errorf("ParseTokenizer(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseTokenizer("cl100k"); err == nil {
		t.Error("cl100k accepted")
	}
	if NewEstimator("").Tokenizer() != O200k || NewEstimator(Approx).Tokenizer() != Approx {
		t.Error("Tokenizer()")
	}
}

func TestFormatCount(t *testing.T) {
	for n, want := range map[int]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 4812: "4,812", 123456: "123,456",
		1017082: "1,017,082", -1: "-1", -4812: "-4,812", -1000000: "-1,000,000"} {
		if got := FormatCount(n); got != want {
			t.Errorf("FormatCount(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestShortTextMemo: counts of short texts come from the memo on repeat,
// and equal the BPE's, also when the memo fills and starts over; a long
// text is always counted.
func TestShortTextMemo(t *testing.T) {
	e := NewEstimator(O200k)
	raw := NewEstimator(O200k) // a second estimator, with its own memo
	texts := []string{"read_file", "call_abc123", InterruptedResult, "{\"path\":\"main.go\"}", "東京 tokens", strings.Repeat("long text ", 40)}
	for round := range 3 {
		for _, s := range texts {
			want, err := raw.codec.Count(s)
			if err != nil {
				t.Fatal(err)
			}
			if got := e.Text(s); got != want {
				t.Errorf("round %d: Text(%.20q) = %d, want %d", round, s, got, want)
			}
		}
	}
	e.memoMu.Lock()
	n := len(e.memo)
	e.memoMu.Unlock()
	if n != len(texts)-1 {
		t.Errorf("memo holds %d texts, want the %d short ones", n, len(texts)-1)
	}
	for i := range memoEntries + 10 {
		e.Text("id_" + strconv.Itoa(i))
	}
	e.memoMu.Lock()
	n = len(e.memo)
	e.memoMu.Unlock()
	if n > memoEntries {
		t.Errorf("memo grew to %d entries, bound %d", n, memoEntries)
	}
	if want, _ := raw.codec.Count("read_file"); e.Text("read_file") != want {
		t.Errorf("after the memo started over: Text(read_file) = %d, want %d", e.Text("read_file"), want)
	}
}

// TestLongTextCountedInPieces: a long text counted in pieces gives exactly
// the count of the whole, whatever its words, spaces, digits, punctuation
// and scripts.
func TestLongTextCountedInPieces(t *testing.T) {
	e := NewEstimator(O200k)
	atoms := []string{"word", " ", "  ", "\t", "\n", " \n ", "123456", "3.14", ".", ",", "!?", "'s", "don't", "é", "東京",
		"\u00a0", "\u3000", "CamelCase", "snake_case", "https://x.y/z?q=1", "<|endoftext|>", "🙂", "\r\n", "--", "/*", "*/"}
	for seed := uint64(1); seed <= 6; seed++ {
		var b strings.Builder
		x := seed
		for b.Len() < 3*countChunk+1000 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			b.WriteString(atoms[x%uint64(len(atoms))])
		}
		s := b.String()
		want, err := e.codec.Count(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.count(s); got != want {
			t.Errorf("seed %d: %d bytes counted in pieces = %d, whole = %d", seed, len(s), got, want)
		}
	}
}

// TestPrefixPartsRemembered: the prefix's parts (a long system prompt, tool
// schemas) are counted once and remembered; the count is always that of
// the bytes given (a schema one word apart counts anew), and the memo stays
// within its bound however many distinct parts come.
func TestPrefixPartsRemembered(t *testing.T) {
	e, raw := NewEstimator(O200k), NewEstimator(O200k)
	system := strings.Repeat("Follow the repository's conventions and run the tests. ", 300)
	tools := []json.RawMessage{
		json.RawMessage(`{"name":"Bash","description":"` + strings.Repeat("Runs a command in a shell. ", 200) + `"}`),
		json.RawMessage(`{"name":"Read","description":"Reads a file."}`),
	}
	want := raw.Text(system) + raw.Text(string(tools[0])) + raw.Text(string(tools[1]))
	for round := range 3 {
		if got := e.Prefix(system, tools); got != want {
			t.Fatalf("round %d: Prefix = %d, want %d", round, got, want)
		}
	}
	e.memoMu.Lock()
	n := len(e.parts)
	e.memoMu.Unlock()
	if n != 2 {
		t.Errorf("the parts' memo holds %d parts, want the 2 long ones", n)
	}
	edited := []json.RawMessage{json.RawMessage(strings.Replace(string(tools[0]), "shell", "terminal emulator", 1)), tools[1]}
	want2 := raw.Text(system) + raw.Text(string(edited[0])) + raw.Text(string(tools[1]))
	if got := e.Prefix(system, edited); got != want2 || want2 == want {
		t.Errorf("an edited schema: Prefix = %d, want %d (before the edit %d)", got, want2, want)
	}
	big := strings.Repeat("lorem ipsum ", 1<<16) // 768 KiB
	for i := range maxPartBytes/len(big) + 2 {
		e.Prefix(strconv.Itoa(i)+big, nil)
	}
	e.memoMu.Lock()
	size := e.partBytes
	e.memoMu.Unlock()
	if size > maxPartBytes {
		t.Errorf("the parts' memo holds %d bytes, bound %d", size, maxPartBytes)
	}
	if got := e.Prefix(system, tools); got != want {
		t.Errorf("after the memo started over: Prefix = %d, want %d", got, want)
	}
}
