package session

import (
	"encoding/hex"
	"testing"
)

// A recorded alignment is store input like any other: one that does not fit
// the history it is replayed onto is refused (the agent's next request then
// starts a new window), never indexed out of range.
func TestMirrorRecordMustFitTheHistory(t *testing.T) {
	k := hex.EncodeToString([]byte("0123456789abcdef"))
	for _, c := range []struct {
		name string
		d    mirrorData
		ok   bool
	}{
		{"fits", mirrorData{Covered: 2, Head: 1, Prefix: []string{k, k}}, true},
		{"nothing covered", mirrorData{Covered: 0, Head: 0}, true},
		{"head past the history", mirrorData{Covered: 1, Head: 4, Prefix: []string{k}}, false},
		{"negative head", mirrorData{Covered: 0, Head: -1}, false},
		{"negative covered", mirrorData{Covered: -1, Head: 0, Prefix: []string{}}, false},
		{"digests missing", mirrorData{Covered: 3, Head: 1, Prefix: []string{k}}, false},
		{"digest not hex", mirrorData{Covered: 1, Head: 1, Prefix: []string{"zz"}}, false},
		{"empty digest", mirrorData{Covered: 1, Head: 1, Prefix: []string{""}}, false},
	} {
		keys, ok := c.d.prefix(3)
		if ok != c.ok || ok && len(keys) != c.d.Covered {
			t.Errorf("%s: prefix(3) = %d keys, %v; want ok %v", c.name, len(keys), ok, c.ok)
		}
	}
}
