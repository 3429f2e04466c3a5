package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/vtcode/vtcode-ls/history"
)

func openStore(t *testing.T) *Store {
	t.Helper()
	st, err := Open(filepath.Join(t.TempDir(), "ws", ".vtcode", "sessions"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return st
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
		if err := l.WriteArtifact(id, nil, ArtifactMeta{}); !errors.Is(err, ErrInvalidID) {
			t.Errorf("WriteArtifact(%q) = %v, want ErrInvalidID", id, err)
		}
		if _, err := l.ReadArtifact(id); !errors.Is(err, ErrInvalidID) {
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

func TestPermissions(t *testing.T) {
	for _, mask := range []int{0o277, 0} {
		t.Run(fmt.Sprintf("umask%03o", mask), func(t *testing.T) {
			old := syscall.Umask(mask)
			defer syscall.Umask(old)
			st := openStore(t)
			l := openLog(t, st, "s1")
			appendN(t, l, 1, 2)
			if err := l.WriteArtifact("a1", []history.Message{history.NewText(history.User, "hi")}, ArtifactMeta{}); err != nil {
				t.Fatal(err)
			}
			if err := st.WritePrompt("p"); err != nil {
				t.Fatal(err)
			}
			want := map[string]fs.FileMode{
				filepath.Dir(st.Root()):                          0o700, // created parent
				st.Root():                                        0o700,
				l.Dir():                                          0o700,
				filepath.Join(l.Dir(), "artifacts"):              0o700,
				filepath.Join(l.Dir(), "events.jsonl"):           0o600,
				filepath.Join(l.Dir(), "lock"):                   0o600,
				filepath.Join(l.Dir(), "artifacts/a1.jsonl"):     0o600,
				filepath.Join(l.Dir(), "artifacts/a1.meta.json"): 0o600,
				filepath.Join(st.Root(), "@compact-prompt.md"):   0o600,
			}
			for p, m := range want {
				fi, err := os.Lstat(p)
				if err != nil {
					t.Fatal(err)
				}
				if got := fi.Mode().Perm(); got != m {
					t.Errorf("%s: mode %04o, want %04o", p, got, m)
				}
			}
		})
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
		st2, _ := Open(st.Root(), slog.New(countingHandler{slog.DiscardHandler, &warns, &msg}))
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

func TestInvalidFinalLineIsTorn(t *testing.T) {
	st := openStore(t)
	l := openLog(t, st, "s1")
	appendN(t, l, 1, 3)
	l.Close()
	path := filepath.Join(l.Dir(), "events.jsonl")
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("{\"seq\":4,\"type\":\"mess\n") // complete line, invalid JSON
	f.Close()
	l2 := openLog(t, st, "s1")
	evs, err := l2.Events()
	if err != nil {
		t.Fatal(err)
	}
	checkSeqs(t, evs, 3)
}

func TestCorruptMiddleLine(t *testing.T) {
	st := openStore(t)
	l := openLog(t, st, "s1")
	appendN(t, l, 1, 4)
	l.Close()
	path := filepath.Join(l.Dir(), "events.jsonl")
	raw, _ := os.ReadFile(path)
	lines := bytes.SplitAfter(raw, []byte{'\n'})
	lines[1] = []byte("garbage\n")
	bad := bytes.Join(lines, nil)
	os.WriteFile(path, bad, 0o600)
	_, err := st.OpenSession("s1")
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Line != 2 || !strings.Contains(err.Error(), "events.jsonl:2:") {
		t.Fatalf("OpenSession = %v, want a CorruptError naming line 2", err)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, bad) {
		t.Error("a corrupt log was modified")
	}
	// The failed open released the lock.
	os.WriteFile(path, raw, 0o600)
	openLog(t, st, "s1")
}

func TestBusySameProcess(t *testing.T) {
	st := openStore(t)
	l := openLog(t, st, "s1")
	st2, _ := Open(st.Root(), nil)
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

func TestArtifacts(t *testing.T) {
	st := openStore(t)
	l := openLog(t, st, "s1")
	if infos, err := l.ListArtifacts(); err != nil || len(infos) != 0 {
		t.Fatalf("ListArtifacts on new session = %v, %v", infos, err)
	}
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
	t1 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	if err := l.WriteArtifact("b", msgs, ArtifactMeta{Trigger: "auto", Mode: "local", CreatedAt: t1.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := l.WriteArtifact("a", msgs[:2], ArtifactMeta{Trigger: "manual", Mode: "provider", CreatedAt: t1}); err != nil {
		t.Fatal(err)
	}
	if err := l.WriteArtifact("a", msgs, ArtifactMeta{}); !errors.Is(err, fs.ErrExist) {
		t.Errorf("overwriting an artifact = %v, want ErrExist", err)
	}
	got, err := l.ReadArtifact("b")
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
	raw, _ := os.ReadFile(filepath.Join(l.Dir(), "artifacts", "b.jsonl"))
	if n := bytes.Count(raw, []byte{'\n'}); n != len(msgs) {
		t.Errorf("artifact has %d lines, want one per message", n)
	}
	infos, err := l.ListArtifacts()
	if err != nil {
		t.Fatal(err)
	}
	want := []ArtifactInfo{
		{ID: "a", CreatedAt: t1, Messages: 2, Trigger: "manual", Mode: "provider"},
		{ID: "b", CreatedAt: t1.Add(time.Hour), Messages: 4, Trigger: "auto", Mode: "local"},
	}
	if diff := cmp.Diff(want, infos); diff != "" {
		t.Errorf("ListArtifacts (-want +got):\n%s", diff)
	}
	j, _ := json.Marshal(infos[0])
	if string(j) != `{"artifactId":"a","createdAt":"2026-03-01T00:00:00Z","messages":2,"trigger":"manual","mode":"provider"}` {
		t.Errorf("ArtifactInfo JSON = %s", j)
	}
	// Without its sidecar an artifact is still listed, counted from the file.
	os.Remove(filepath.Join(l.Dir(), "artifacts", "b.meta.json"))
	// Leftovers of an interrupted write are ignored.
	os.WriteFile(filepath.Join(l.Dir(), "artifacts", "@tmp-123"), []byte("x"), 0o600)
	os.WriteFile(filepath.Join(l.Dir(), "artifacts", "c.meta.json"), []byte(`{"artifactId":"c"}`), 0o600)
	infos, err = l.ListArtifacts()
	if err != nil || len(infos) != 2 || infos[1].ID != "b" || infos[1].Messages != 4 || infos[1].Trigger != "" {
		t.Errorf("ListArtifacts without sidecar = %+v, %v", infos, err)
	}
	if _, err := l.ReadArtifact("missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadArtifact(missing) = %v", err)
	}
	os.WriteFile(filepath.Join(l.Dir(), "artifacts", "bad.jsonl"), []byte("{\"role\":\"user\"}\n{\"role\":\"nobody\"}\n"), 0o600)
	var ce *CorruptError
	if _, err := l.ReadArtifact("bad"); !errors.As(err, &ce) || ce.Line != 2 {
		t.Errorf("ReadArtifact(bad) = %v, want CorruptError at line 2", err)
	}
	// Reopening the session removes temporary leftovers.
	l.Close()
	openLog(t, st, "s1")
	if _, err := os.Stat(filepath.Join(l.Dir(), "artifacts", "@tmp-123")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("stale temporary file survived a reopen")
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
	st2, _ := Open(st.Root(), nil)
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
	if _, err := Open(f, nil); err == nil {
		t.Error("Open on a file succeeded")
	}
	if _, err := Open("", nil); err == nil {
		t.Error("Open with an empty root succeeded")
	}
}
