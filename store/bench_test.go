package store

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkAppend measures one durable (fsynced) append of a 1 KiB event.
func BenchmarkAppend(b *testing.B) {
	st, err := openAt(b, filepath.Join(b.TempDir(), "s"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	l, err := st.OpenSession("s1")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	data, _ := json.Marshal(map[string]string{"text": strings.Repeat("x", 1000)})
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := l.Append(Event{Type: "messages", Data: data}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenAndReplay measures opening (with recovery scan) and replaying
// a session of 10,000 1 KiB events.
func BenchmarkOpenAndReplay(b *testing.B) {
	st, err := openAt(b, filepath.Join(b.TempDir(), "s"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	l, err := st.OpenSession("s1")
	if err != nil {
		b.Fatal(err)
	}
	var sb strings.Builder
	for i := range 10000 {
		fmt.Fprintf(&sb, `{"seq":%d,"type":"messages","time":"2026-01-01T00:00:00Z","messages":%d,"data":{"text":%q}}`+"\n", i+1, i+1, strings.Repeat("y", 1000))
	}
	l.f.WriteString(sb.String())
	l.Close()
	b.SetBytes(int64(sb.Len()))
	for b.Loop() {
		l, err := st.OpenSession("s1")
		if err != nil {
			b.Fatal(err)
		}
		evs, err := l.Events()
		if err != nil || len(evs) != 10000 {
			b.Fatal(len(evs), err)
		}
		l.Close()
	}
}
