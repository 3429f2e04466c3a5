package proxy

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// TestReadBody: a body is read whole whatever its announced length (exact,
// none, shorter or longer than sent) and however the reader splits it, and
// a failing read is an error, not a short body.
func TestReadBody(t *testing.T) {
	body := bytes.Repeat([]byte(`{"role":"user","content":"x"},`), 5000)
	for _, length := range []int64{int64(len(body)), 0, -1, 10, int64(len(body)) + 100} {
		got, err := readBody(iotest.HalfReader(bytes.NewReader(body)), length)
		if err != nil || !bytes.Equal(got, body) {
			t.Errorf("announced %d: read %d bytes, %v; want %d", length, len(got), err, len(body))
		}
	}
	boom := errors.New("boom")
	r := io.MultiReader(bytes.NewReader(body[:100]), iotest.ErrReader(boom))
	if _, err := readBody(r, int64(len(body))); !errors.Is(err, boom) {
		t.Errorf("a failing read gave %v", err)
	}
}
