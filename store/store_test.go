package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/vtcode/vtcode-ls/history"
)

func openStore(t *testing.T) *Store {
	t.Helper()
	st, err := openAt(t, filepath.Join(t.TempDir(), "ws", ".vtcode", "sessions"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// openAt is Open, closing the store when the test ends: on Windows an open
// store's handle keeps its folder from being removed.
func openAt(t testing.TB, root string, o Options) (*Store, error) {
	st, err := Open(root, o)
	if err == nil {
		t.Cleanup(func() { st.Close() })
	}
	return st, err
}

func openLog(t *testing.T, st *Store, id string) *Log {
	t.Helper()
	l, err := st.OpenSession(id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func appendN(t *testing.T, l *Log, from, to int) {
	t.Helper()
	for i := from; i <= to; i++ {
		data := fmt.Sprintf(`{"n":%d,"text":"line\nbreak %d"}`, i, i)
		if err := l.Append(Event{Type: "messages", Messages: i, Data: json.RawMessage(data)}); err != nil {
			t.Fatal(err)
		}
	}
}

// checkSeqs asserts that evs are exactly the events 1..n written by appendN.
func checkSeqs(t *testing.T, evs []Event, n int) {
	t.Helper()
	if len(evs) != n {
		t.Fatalf("got %d events, want %d", len(evs), n)
	}
	for i, ev := range evs {
		var d struct{ N int }
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if ev.Seq != int64(i+1) || d.N != i+1 || ev.Messages != i+1 || ev.Type != "messages" {
			t.Fatalf("event %d = seq %d n %d messages %d type %q", i, ev.Seq, d.N, ev.Messages, ev.Type)
		}
	}
}

func TestValidID(t *testing.T) {
	for _, id := range []string{"a", "...", ".hidden", "-x", "a.b-c_D9", "s1", strings.Repeat("z", 64)} {
		if err := ValidID(id); err != nil {
			t.Errorf("ValidID(%q) = %v, want nil", id, err)
		}
	}
	for _, id := range []string{
		"", ".", "..", "a/b", "../x", "/abs", `a\b`, `..\x`, "%2e%2e", "%2e", "a b", "a:b", "séance",
		"日本", "a\x00b", "a\n", strings.Repeat("z", 65), "~", "@compact-prompt.md",
	} {
		err := ValidID(id)
		if !errors.Is(err, ErrInvalidID) {
			t.Errorf("ValidID(%q) = %v, want ErrInvalidID", id, err)
		}
	}
	if err := ValidID(strings.Repeat("x", 10000)); len(err.Error()) > 200 {
		t.Errorf("error text not bounded: %d bytes", len(err.Error()))
	}
}

func TestInvalidIDsTouchNothing(t *testing.T) {
	st := openStore(t)
	l := openLog(t, st, "s1")
	for _, id := range []string{"..", "../s2", "a/b", ".", "", strings.Repeat("q", 65)} {
		if _, err := st.OpenSession(id); !errors.Is(err, ErrInvalidID) {
			t.Errorf("OpenSession(%q) = %v, want ErrInvalidID", id, err)
		}
		if _, err := l.WriteArtifact(id, nil); !errors.Is(err, ErrInvalidID) {
			t.Errorf("WriteArtifact(%q) = %v, want ErrInvalidID", id, err)
		}
		if _, err := l.ReadArtifact(ArtifactRef{ID: id}); !errors.Is(err, ErrInvalidID) {
			t.Errorf("ReadArtifact(%q) = %v, want ErrInvalidID", id, err)
		}
	}
	ents, err := os.ReadDir(st.Root())
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != "s1" {
		t.Errorf("root holds %v, want only s1", ents)
	}
	ents, _ = os.ReadDir(filepath.Dir(st.Root()))
	if len(ents) != 1 {
		t.Errorf("parent of root holds %v, want only the root", ents)
	}
}

func TestSymlinkedSessionRefused(t *testing.T) {
	st := openStore(t)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(st.Root(), "evil")); err != nil {
		t.Fatal(err)
	}
	// Wine 8 reports success and makes nothing: the attack is not staged.
	if fi, err := os.Lstat(filepath.Join(st.Root(), "evil")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("os.Symlink succeeded but made no link (%v): this platform cannot stage the attack", err)
	}
	if l, err := st.OpenSession("evil"); err == nil {
		l.Close()
		t.Fatal("OpenSession through a symlink succeeded")
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("files written outside the store: %v", ents)
	}
	if infos, err := st.List(); err != nil || len(infos) != 0 {
		t.Errorf("List = %v, %v; want nothing", infos, err)
	}
}

func TestAppendAndReplay(t *testing.T) {
	st := openStore(t)
	l := openLog(t, st, "s1")
	if evs, err := l.Events(); err != nil || len(evs) != 0 {
		t.Fatalf("new session: %v, %v", evs, err)
	}
	appendN(t, l, 1, 5)
	if err := l.Append(Event{Type: "bad", Data: json.RawMessage(`{"x":`)}); err == nil {
		t.Error("Append with invalid data succeeded")
	}
	if err := l.Append(Event{Data: json.RawMessage(`{}`)}); err == nil {
		t.Error("Append without type succeeded")
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	if err := l.Append(Event{Type: "policy", Time: at, Messages: 5}); err != nil {
		t.Fatal(err)
	}
	if l.Len() != 6 || l.LastSeq() != 6 {
		t.Errorf("Len, LastSeq = %d, %d; want 6, 6", l.Len(), l.LastSeq())
	}
	evs, err := l.Events()
	if err != nil {
		t.Fatal(err)
	}
	checkSeqs(t, evs[:5], 5)
	if last := evs[5]; !last.Time.Equal(at) || last.Seq != 6 || last.Data != nil {
		t.Errorf("last event = %+v", last)
	}
	if evs[0].Time.IsZero() {
		t.Error("Append did not fill in the time")
	}
	raw, _ := os.ReadFile(filepath.Join(l.Dir(), "events.jsonl"))
	if n := bytes.Count(raw, []byte{'\n'}); n != 6 {
		t.Errorf("log has %d lines, want 6 (one per event)", n)
	}

	// Reopen: same events, appends continue the sequence.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(Event{Type: "x"}); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close = %v", err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	l2 := openLog(t, st, "s1")
	evs2, err := l2.Events()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(evs, evs2); diff != "" {
		t.Errorf("replay after reopen differs (-before +after):\n%s", diff)
	}
	appendN(t, l2, 7, 7)
	if l2.LastSeq() != 7 {
		t.Errorf("LastSeq after reopen+append = %d, want 7", l2.LastSeq())
	}
}

// countingHandler counts log records at warning level.
type countingHandler struct {
	slog.Handler
	warns *int
	last  *string
}

func (h countingHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h countingHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelWarn {
		*h.warns++
		*h.last = r.Message
	}
	return nil
}

func TestTornLastLineRecovery(t *testing.T) {
	st := openStore(t)
	l := openLog(t, st, "s1")
	const n = 8
	appendN(t, l, 1, n)
	l.Close()
	path := filepath.Join(l.Dir(), "events.jsonl")
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// ends[i] = offset just after line i+1.
	var ends []int
	for i, b := range full {
		if b == '\n' {
			ends = append(ends, i+1)
		}
	}
	for cut := len(full) - 1; cut > 0; cut -= 13 {
		complete := 0
		for complete < len(ends) && ends[complete] <= cut {
			complete++
		}
		if err := os.WriteFile(path, full[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		var warns int
		var msg string
		st2, _ := openAt(t, st.Root(), Options{Logger: slog.New(countingHandler{slog.DiscardHandler, &warns, &msg})})
		l2, err := st2.OpenSession("s1")
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		evs, err := l2.Events()
		if err != nil {
			t.Fatal(err)
		}
		checkSeqs(t, evs, complete)
		torn := complete == 0 || ends[complete-1] != cut
		if torn && (warns != 1 || !strings.Contains(msg, "torn")) {
			t.Errorf("cut %d: %d warnings (%q), want one about the torn line", cut, warns, msg)
		}
		// The file was truncated to the acknowledged prefix, so appends are clean.
		appendN(t, l2, complete+1, complete+1)
		l2.Close()
		l3 := openLog(t, st, "s1")
		evs, err = l3.Events()
		if err != nil {
			t.Fatalf("cut %d: after append: %v", cut, err)
		}
		checkSeqs(t, evs, complete+1)
		l3.Close()
	}
}

// damage rewrites line i (0-based) of the closed log of session s1 with
// edit and returns the original and the damaged bytes.
func damage(t *testing.T, l *Log, edit func(lines [][]byte)) (orig, bad []byte) {
	t.Helper()
	path := filepath.Join(l.Dir(), "events.jsonl")
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(orig, []byte{'\n'})
	lines = lines[:len(lines)-1] // the empty tail after the last newline
	edit(lines)
	bad = bytes.Join(lines, nil)
	if err := os.WriteFile(path, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	return orig, bad
}

// TestDamagedLogRepairedToValidPrefix covers every damage a crash cannot
// produce: the session opens with the valid events before the first bad
// line, the whole damaged file is saved next to the log first, the repair
// is reported, and appends continue the sequence.
func TestDamagedLogRepairedToValidPrefix(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edit   func(lines [][]byte)
		kept   int // valid events before the damage
		line   int
		reason string
	}{
		{"invalid complete last line", func(l [][]byte) { l[3] = []byte("{\"seq\":4,\"type\":\"mess\n") }, 3, 4, "unexpected end"},
		{"garbage middle line", func(l [][]byte) { l[1] = []byte("garbage\n") }, 1, 2, "invalid character"},
		{"duplicated event", func(l [][]byte) { l[2] = l[1] }, 2, 3, "seq 2 after seq 2"},
		{"reordered events", func(l [][]byte) { l[1], l[2] = l[2], l[1] }, 1, 2, "seq 3 after seq 1"},
		{"flipped byte inside a string", func(l [][]byte) {
			l[2] = bytes.Replace(l[2], []byte("break 3"), []byte("break 8"), 1)
		}, 2, 3, "checksum mismatch"},
		{"checksum removed", func(l [][]byte) {
			i := bytes.LastIndex(l[1], []byte(`,"sum":"`))
			l[1] = append(append([]byte{}, l[1][:i]...), "}\n"...)
		}, 1, 2, "no checksum"},
		{"event without a type", func(l [][]byte) { l[1] = []byte("{\"seq\":2}\n") }, 1, 2, "no type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := openStore(t)
			l := openLog(t, st, "s1")
			appendN(t, l, 1, 4)
			l.Close()
			_, bad := damage(t, l, tc.edit)
			var warns int
			var msg string
			st2, _ := openAt(t, st.Root(), Options{Logger: slog.New(countingHandler{slog.DiscardHandler, &warns, &msg})})
			l2, err := st2.OpenSession("s1")
			if err != nil {
				t.Fatalf("OpenSession of a damaged log: %v", err)
			}
			defer l2.Close()
			r := l2.Repaired()
			if r == nil || r.Line != tc.line || r.KeptEvents != tc.kept || r.DroppedLines != 4-tc.kept || !strings.Contains(r.Reason, tc.reason) {
				t.Fatalf("Repaired = %+v, want line %d, %d kept, %d dropped, reason with %q", r, tc.line, tc.kept, 4-tc.kept, tc.reason)
			}
			if warns != 1 || !strings.Contains(msg, "repaired") {
				t.Errorf("%d warnings (%q), want one about the repair", warns, msg)
			}
			if saved, err := os.ReadFile(r.SavedAs); err != nil || !bytes.Equal(saved, bad) {
				t.Errorf("saved copy %s: %v; equal to the damaged log: %v", r.SavedAs, err, bytes.Equal(saved, bad))
			}
			if filepath.Dir(r.SavedAs) != l.Dir() {
				t.Errorf("saved as %s, outside the session folder", r.SavedAs)
			}
			evs, err := l2.Events()
			if err != nil {
				t.Fatal(err)
			}
			checkSeqs(t, evs, tc.kept)
			appendN(t, l2, tc.kept+1, tc.kept+1)
			l2.Close()
			// The repaired log is sound: a reopen repairs nothing.
			l3 := openLog(t, st, "s1")
			if l3.Repaired() != nil {
				t.Errorf("second open repaired again: %+v", l3.Repaired())
			}
			evs, _ = l3.Events()
			checkSeqs(t, evs, tc.kept+1)
		})
	}
}

// TestLegacyLinesWithoutChecksum: a log written before checksums existed
// opens as is, and new events are checksummed after it.
func TestLegacyLinesWithoutChecksum(t *testing.T) {
	st := openStore(t)
	dir := filepath.Join(st.Root(), "old")
	os.Mkdir(dir, 0o700)
	legacy := `{"seq":1,"type":"messages","time":"2026-01-01T00:00:00Z","messages":1,"data":{"n":1,"text":"line\nbreak 1"}}` + "\n" +
		`{"seq":2,"type":"messages","time":"2026-01-01T00:00:01Z","messages":2,"data":{"n":2,"text":"line\nbreak 2"}}` + "\n"
	os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(legacy), 0o600)
	l := openLog(t, st, "old")
	if l.Repaired() != nil {
		t.Fatalf("legacy log repaired: %+v", l.Repaired())
	}
	appendN(t, l, 3, 3)
	l.Close()
	l2 := openLog(t, st, "old")
	evs, _ := l2.Events()
	checkSeqs(t, evs, 3)
}

func TestBusySameProcess(t *testing.T) {
	st := openStore(t)
	l := openLog(t, st, "s1")
	st2, _ := openAt(t, st.Root(), Options{})
	_, err := st2.OpenSession("s1")
	var be *BusyError
	if !errors.As(err, &be) || be.PID != os.Getpid() || !errors.Is(err, ErrBusy) {
		t.Fatalf("second OpenSession = %v, want BusyError with our pid", err)
	}
	if !strings.Contains(err.Error(), strconv.Itoa(os.Getpid())) {
		t.Errorf("error %q does not name the pid", err)
	}
	// Another session is independent.
	openLog(t, st, "s2")
	l.Close()
	openLog(t, st2, "s1")
}

func testMessages(t *testing.T) []history.Message {
	t.Helper()
	var msgs []history.Message
	for _, line := range []string{
		`{"role":"system","content":"be brief"}`,
		`{"id":"u1","role":"user","content":[{"type":"text","text":"hi\nthere"},{"type":"image","url":"x","detail":{"a":1}}],"custom":true}`,
		`{"role":"assistant","content":null,"toolCalls":[{"id":"c1","name":"read","arguments":"{\"p\":1}","thoughtSignature":"sig","extra":1}],"reasoningDetails":[{"type":"thinking","signature":"s"}]}`,
		`{"role":"tool","toolCallId":"c1","toolName":"read","content":"ok"}`,
	} {
		var m history.Message
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

func TestArtifacts(t *testing.T) {
	st := openStore(t)
	l := openLog(t, st, "s1")
	if ids, err := l.ArtifactIDs(); err != nil || len(ids) != 0 {
		t.Fatalf("ArtifactIDs on new session = %v, %v", ids, err)
	}
	msgs := testMessages(t)
	ref, err := l.WriteArtifact("b", msgs)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(l.Dir(), "artifacts", "b.jsonl"))
	sum := sha256.Sum256(raw)
	if ref.ID != "b" || ref.Messages != 4 || ref.Bytes != int64(len(raw)) || ref.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("ref = %+v; file has %d bytes, sha256 %x", ref, len(raw), sum)
	}
	if n := bytes.Count(raw, []byte{'\n'}); n != len(msgs) {
		t.Errorf("artifact has %d lines, want one per message", n)
	}
	if _, err := l.WriteArtifact("b", msgs); !errors.Is(err, fs.ErrExist) {
		t.Errorf("overwriting an artifact = %v, want ErrExist", err)
	}
	got, err := l.ReadArtifact(ref)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(msgs) {
		t.Fatalf("read %d messages, want %d", len(got), len(msgs))
	}
	for i := range msgs {
		if !history.Equal(got[i], msgs[i]) {
			t.Errorf("message %d did not round-trip", i)
		}
	}
	if n, err := l.CheckArtifact(ref); err != nil || n != 4 {
		t.Errorf("CheckArtifact = %d, %v", n, err)
	}
	// No sidecar files: the ref lives in the event that references it.
	if ents, _ := os.ReadDir(filepath.Join(l.Dir(), "artifacts")); len(ents) != 1 {
		t.Errorf("artifacts folder holds %v, want only b.jsonl", ents)
	}
	if _, err := l.ReadArtifact(ArtifactRef{ID: "missing"}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadArtifact(missing) = %v", err)
	}
	// Leftovers of an interrupted write are removed at the next open.
	os.WriteFile(filepath.Join(l.Dir(), "artifacts", "@tmp-123"), []byte("x"), 0o600)
	if err := l.RemoveArtifact("b"); err != nil {
		t.Fatal(err)
	}
	if _, err := l.CheckArtifact(ref); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("CheckArtifact after RemoveArtifact = %v", err)
	}
	if err := l.RemoveArtifact("b"); err != nil {
		t.Errorf("removing a missing artifact = %v", err)
	}
	l.Close()
	openLog(t, st, "s1")
	if _, err := os.Stat(filepath.Join(l.Dir(), "artifacts", "@tmp-123")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("stale temporary file survived a reopen")
	}
}

// TestArtifactDamageDetected: an artifact that shrank (truncated at a line
// boundary), changed, or was replaced by a different valid one is refused
// against its ref; a legacy ref (count only) still catches a truncation.
func TestArtifactDamageDetected(t *testing.T) {
	st := openStore(t)
	l := openLog(t, st, "s1")
	msgs := testMessages(t)
	path := filepath.Join(l.Dir(), "artifacts", "a.jsonl")
	for _, tc := range []struct {
		name  string
		edit  func(b []byte) []byte
		cheap bool // CheckArtifact sees it too (the size changed)
	}{
		{"truncated at a line boundary", func(b []byte) []byte { return b[:bytes.IndexByte(b, '\n')+1] }, true},
		{"line removed in the middle", func(b []byte) []byte {
			lines := bytes.SplitAfter(b, []byte{'\n'})
			return bytes.Join(append(lines[:1:1], lines[2:]...), nil)
		}, true},
		{"same size, one byte changed", func(b []byte) []byte {
			c := bytes.Clone(b)
			i := bytes.Index(c, []byte("brief"))
			c[i] = 'B'
			return c
		}, false},
		{"emptied", func(b []byte) []byte { return nil }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(path)
			ref, err := l.WriteArtifact("a", msgs)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := os.ReadFile(path)
			os.WriteFile(path, tc.edit(raw), 0o600)
			if _, err := l.ReadArtifact(ref); !errors.Is(err, ErrDamaged) {
				t.Errorf("ReadArtifact = %v, want ErrDamaged", err)
			}
			_, err = l.CheckArtifact(ref)
			if tc.cheap != errors.Is(err, ErrDamaged) {
				t.Errorf("CheckArtifact = %v; want damaged: %v", err, tc.cheap)
			}
		})
	}
	os.WriteFile(path, []byte("{\"role\":\"user\"}\n"), 0o600)
	if _, err := l.ReadArtifact(ArtifactRef{ID: "a", Messages: 4}); !errors.Is(err, ErrDamaged) {
		t.Errorf("legacy ref with 4 messages, file with 1: %v", err)
	}
	if n, err := l.CheckArtifact(ArtifactRef{ID: "a"}); err != nil || n != 1 {
		t.Errorf("legacy ref without a count: %d, %v (counts the file)", n, err)
	}
}

func TestList(t *testing.T) {
	st := openStore(t)
	if infos, err := st.List(); err != nil || len(infos) != 0 {
		t.Fatalf("empty store: %v, %v", infos, err)
	}
	base := time.Date(2020, 5, 1, 12, 0, 0, 0, time.UTC) // before any mtime
	for i, id := range []string{"old", "new", "mid"} {
		l := openLog(t, st, id)
		for k := 1; k <= 3; k++ {
			if err := l.Append(Event{Type: "messages", Time: base.Add(time.Duration(i*10+k) * time.Minute), Messages: 10*i + k}); err != nil {
				t.Fatal(err)
			}
		}
		if id != "mid" { // "mid" stays open: List takes no locks
			l.Close()
		}
	}
	// A torn tail is skipped: "new" still reports its last complete event.
	f, _ := os.OpenFile(filepath.Join(st.Root(), "new", "events.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"seq":4,"type":"messages","time":"2030-01-01T00:00:00Z","messages":99,"data":{"x":"`)
	f.Close()
	empty := openLog(t, st, "empty")
	empty.Close()
	os.Mkdir(filepath.Join(st.Root(), "no-log"), 0o700)
	st.WritePrompt("custom")

	infos, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range infos {
		got = append(got, fmt.Sprintf("%s:%d", in.ID, in.Messages))
	}
	// "empty" has no events: its UpdatedAt is the file's mtime (now), so it sorts first.
	want := []string{"empty:0", "mid:23", "new:13", "old:3"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if !infos[1].UpdatedAt.Equal(base.Add(23 * time.Minute)) {
		t.Errorf("mid UpdatedAt = %v", infos[1].UpdatedAt)
	}
}

func TestLastHeaderLongLine(t *testing.T) {
	st := openStore(t)
	l := openLog(t, st, "s1")
	big := json.RawMessage(`"` + strings.Repeat("y", 200<<10) + `"`)
	l.Append(Event{Type: "messages", Messages: 1, Data: big})
	l.Append(Event{Type: "messages", Messages: 2, Data: big})
	infos, err := st.List()
	if err != nil || len(infos) != 1 || infos[0].Messages != 2 {
		t.Fatalf("List = %+v, %v", infos, err)
	}
}

func TestPrompt(t *testing.T) {
	st := openStore(t)
	if p, ok, err := st.ReadPrompt(); err != nil || ok || p != "" {
		t.Fatalf("ReadPrompt on new store = %q, %v, %v", p, ok, err)
	}
	if err := st.ResetPrompt(); err != nil {
		t.Errorf("ResetPrompt with none set = %v", err)
	}
	for _, want := range []string{"Summarize.\n", "Second version, longer: ünïcode"} {
		if err := st.WritePrompt(want); err != nil {
			t.Fatal(err)
		}
		if p, ok, err := st.ReadPrompt(); err != nil || !ok || p != want {
			t.Errorf("ReadPrompt = %q, %v, %v; want %q", p, ok, err, want)
		}
	}
	st2, _ := openAt(t, st.Root(), Options{})
	if p, ok, _ := st2.ReadPrompt(); !ok || p != "Second version, longer: ünïcode" {
		t.Errorf("prompt not persisted: %q %v", p, ok)
	}
	if err := st.ResetPrompt(); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := st.ReadPrompt(); ok {
		t.Error("prompt still set after reset")
	}
	if ents, _ := os.ReadDir(st.Root()); len(ents) != 0 {
		t.Errorf("root not empty after reset: %v", ents)
	}
}

func TestOpenRootIsFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o600)
	if _, err := Open(f, Options{}); err == nil {
		t.Error("Open on a file succeeded")
	}
	if _, err := Open("", Options{}); err == nil {
		t.Error("Open with an empty root succeeded")
	}
}

// TestReplaySkipsUnneededData: events the caller does not need come with
// their header only; the others whole.
func TestReplaySkipsUnneededData(t *testing.T) {
	st := openStore(t)
	l := openLog(t, st, "s1")
	appendN(t, l, 1, 4)
	if err := l.Append(Event{Type: "compact_boundary", Messages: 1, Checkpoint: true, Data: json.RawMessage(`{"n":5}`)}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l = openLog(t, st, "s1")
	if l.LastCheckpoint() != 5 {
		t.Errorf("LastCheckpoint = %d, want 5", l.LastCheckpoint())
	}
	var got []string
	err := l.Replay(func(seq int64, typ string) bool { return seq%2 == 1 }, func(ev Event) error {
		got = append(got, fmt.Sprintf("%d:%s:%d:%v:%s", ev.Seq, ev.Type, ev.Messages, ev.Checkpoint, ev.Data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`1:messages:1:false:{"n":1,"text":"line\nbreak 1"}`, "2:messages:2:false:", `3:messages:3:false:{"n":3,"text":"line\nbreak 3"}`,
		"4:messages:4:false:", `5:compact_boundary:1:true:{"n":5}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Replay (-want +got):\n%s", diff)
	}
}

// TestPromptFileBounded: a prompt file over MaxPromptBytes (one committed in
// a repository, say) is refused, not read whole.
func TestPromptFileBounded(t *testing.T) {
	st := openStore(t)
	os.WriteFile(filepath.Join(st.Root(), "@compact-prompt.md"), bytes.Repeat([]byte("x"), MaxPromptBytes+1), 0o600)
	if _, _, err := st.ReadPrompt(); err == nil || !strings.Contains(err.Error(), "over") {
		t.Errorf("ReadPrompt of an oversized file = %v", err)
	}
	os.WriteFile(filepath.Join(st.Root(), "@compact-prompt.md"), bytes.Repeat([]byte("x"), MaxPromptBytes), 0o600)
	if p, ok, err := st.ReadPrompt(); err != nil || !ok || len(p) != MaxPromptBytes {
		t.Errorf("ReadPrompt at the bound = %d bytes, %v, %v", len(p), ok, err)
	}
}
