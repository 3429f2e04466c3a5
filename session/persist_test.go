package session_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/session"
	"github.com/vtcode/vtcode-ls/store"
)

// snapshot is what a resumed session must reproduce exactly.
type snapshot struct {
	History   string
	Stats     string
	Artifacts string
}

func snap(t *testing.T, e *env, id string) snapshot {
	t.Helper()
	arts, err := e.m.ListArtifacts(context.Background(), id, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := e.stats(id)
	// The reuse prediction compares with the last request this process
	// prepared; a resumed session has prepared none yet.
	st.Reuse = nil
	return snapshot{History: jsonOf(t, e.history(id)), Stats: jsonOf(t, st), Artifacts: jsonOf(t, arts)}
}

func TestResumeRebuildsExactHistory(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	id := e.open(session.OpenParams{Provider: "offline", Model: "m", ContextWindow: 16000})
	e.setPolicy(id, `{"toolResultClearing":{"enabled":false}}`)

	// Plain appends, with unknown fields that must round-trip.
	var odd history.Message
	if err := odd.UnmarshalJSON([]byte(`{"id":"u1","role":"user","content":[{"type":"text","text":"look","cache_control":{"type":"ephemeral"}}],"x-client":{"a":1}}`)); err != nil {
		t.Fatal(err)
	}
	e.append(id, odd)
	check := func(stage string) {
		t.Helper()
		before := snap(t, e, id)
		e.restart("")
		res, err := e.m.OpenSession(context.Background(), session.OpenParams{SessionID: id})
		if err != nil {
			t.Fatalf("%s: reopen: %v", stage, err)
		}
		if !res.Resumed || res.SessionID != id {
			t.Fatalf("%s: reopen = %+v", stage, res)
		}
		if after := snap(t, e, id); after != before {
			t.Fatalf("%s: resumed session differs\nbefore %+v\nafter  %+v", stage, before, after)
		}
	}
	check("after append")

	// Auto compaction through prepareRequest.
	res := prepare(t, e, session.PrepareParams{SessionID: id, Messages: turns(20, 4000)}, nil)
	if res.Compaction == nil || res.Compaction.ArtifactID == "" {
		t.Fatalf("no compaction: %+v", res.Compaction)
	}
	art := res.Compaction.ArtifactID
	rec, err := e.m.RecordResponse(context.Background(), session.RecordParams{SessionID: id,
		Message: history.NewText(history.Assistant, "Done."), Usage: &history.Usage{InputTokens: 5000, CacheReadTokens: 1000}})
	if err != nil || rec.Stats.Cache == nil {
		t.Fatalf("RecordResponse: %+v, %v", rec, err)
	}
	check("after compaction")

	// Restore the pre-compaction history.
	rr, err := e.m.Restore(context.Background(), session.RestoreParams{SessionID: id, ArtifactID: art})
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if rr.Messages != 1+20*6 || rr.BackupArtifactID == "" {
		t.Fatalf("restore = %+v", rr)
	}
	e.append(id, history.NewText(history.User, "continue after restore"))
	check("after restore")

	// The stored events are the record of all of it.
	if err := e.m.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(e.dir, ".vtcode", "sessions"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	log, err := st.OpenSession(id)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	evs, err := log.Events()
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ev := range evs {
		types = append(types, ev.Type)
	}
	// The messages of the prepareRequest that compacted are committed in
	// its boundary event (one append: all or nothing).
	want := []string{"model_switch", "policy", "messages", "compact_boundary", "request_pressure", "response", "restore", "messages"}
	if jsonOf(t, types) != jsonOf(t, want) {
		t.Errorf("events = %q, want %q", types, want)
	}
	if last := evs[len(evs)-1]; last.Messages != 1+20*6+1 {
		t.Errorf("last event records %d messages", last.Messages)
	}
}

func TestSessionIDs(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	ctx := context.Background()
	var pe *session.ParamError
	if _, err := e.m.OpenSession(ctx, session.OpenParams{SessionID: "../escape"}); !errors.As(err, &pe) || pe.Path != "sessionId" {
		t.Errorf("bad id: %v", err)
	}
	res, err := e.m.OpenSession(ctx, session.OpenParams{SessionID: "given.id_1"})
	if err != nil || res.SessionID != "given.id_1" || res.Resumed {
		t.Fatalf("given id: %+v, %v", res, err)
	}
	gen := e.open(session.OpenParams{})
	if store.ValidID(gen) != nil {
		t.Errorf("generated id %q is invalid", gen)
	}
	if _, err := e.m.History(ctx, session.HistoryParams{SessionID: "nope"}); !errors.Is(err, session.ErrUnknownSession) {
		t.Errorf("unknown session: %v", err)
	}
	if _, err := e.m.AppendMessages(ctx, session.AppendParams{}); !errors.As(err, &pe) || pe.Path != "sessionId" {
		t.Errorf("missing session id: %v", err)
	}
	if err := e.m.CloseSession(ctx, gen, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.ProjectionStats(ctx, gen, nil); !errors.Is(err, session.ErrUnknownSession) {
		t.Errorf("closed session: %v", err)
	}
	// A closed session can be resumed; an empty one too.
	res, err = e.m.OpenSession(ctx, session.OpenParams{SessionID: gen})
	if err != nil || res.SessionID != gen {
		t.Fatalf("reopen: %+v, %v", res, err)
	}
	list, err := e.m.ListSessions(ctx, session.ListParams{})
	if err != nil || len(list) != 2 {
		t.Fatalf("ListSessions = %+v, %v", list, err)
	}
	for _, s := range list {
		if s.Workspace != e.dir && s.Workspace != mustEval(t, e.dir) {
			t.Errorf("workspace = %q", s.Workspace)
		}
	}
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestBusySessionInAnotherManager(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	id := e.open(session.OpenParams{})
	other := session.NewManager(offlineOnly(session.Options{NoWatch: true}))
	defer other.Close()
	if err := other.AddWorkspace(fileURI(e.dir), nil); err != nil {
		t.Fatal(err)
	}
	_, err := other.OpenSession(context.Background(), session.OpenParams{SessionID: id})
	var be *store.BusyError
	if !errors.As(err, &be) {
		t.Fatalf("second owner: %v", err)
	}
	if err := e.m.CloseSession(context.Background(), id, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := other.OpenSession(context.Background(), session.OpenParams{SessionID: id}); err != nil {
		t.Fatalf("after close: %v", err)
	}
}

func TestCancelMidCompactionChangesNothing(t *testing.T) {
	slow := newBlocker()
	e := newEnv(t, session.Options{Clients: clients(map[string]providers.Generator{"slow": slow})}, "")
	id := e.open(session.OpenParams{Provider: "slow", Model: "m", ContextWindow: 16000})
	e.setPolicy(id, `{"toolResultClearing":{"enabled":false}}`)
	e.append(id, turns(20, 4000)...)
	before := snap(t, e, id)

	// Manual compaction, cancelled while the provider works.
	ctx, cancel := context.WithCancel(context.Background())
	prog := newProgress()
	done := make(chan error, 1)
	go func() {
		_, err := e.m.Compact(ctx, session.CompactParams{SessionID: id}, prog)
		done <- err
	}()
	<-slow.started
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Compact = %v, want context.Canceled", err)
	}
	if end := <-prog.ended; end != "Compaction cancelled." {
		t.Errorf("progress end = %q", end)
	}
	if after := snap(t, e, id); after != before {
		t.Fatalf("state changed by a cancelled compaction\nbefore %+v\nafter  %+v", before, after)
	}

	// prepareRequest with new messages, cancelled during auto compaction:
	// the messages are not appended either.
	ctx, cancel = context.WithCancel(context.Background())
	go func() {
		_, err := e.m.PrepareRequest(ctx, session.PrepareParams{SessionID: id, Messages: turns(1, 100)}, nil)
		done <- err
	}()
	<-slow.started
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("PrepareRequest = %v, want context.Canceled", err)
	}
	if after := snap(t, e, id); after != before {
		t.Fatalf("state changed by a cancelled prepare\nbefore %+v\nafter  %+v", before, after)
	}
	if len(e.rec.boundaries()) != 0 {
		t.Error("a boundary was announced")
	}

	// Nothing reached the log: the resumed session is the same.
	e.restart("")
	e.open(session.OpenParams{SessionID: id})
	if after := snap(t, e, id); after != before {
		t.Fatalf("log changed by cancelled requests\nbefore %+v\nafter  %+v", before, after)
	}
}

// TestListSessionsMarksActive: the listing marks the one session a client
// follows, the most recently updated, and moves the mark when an older
// session is updated.
func TestListSessionsMarksActive(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Second)
		return now
	}
	e := newEnv(t, session.Options{Clock: clock}, "")
	for _, id := range []string{"c", "a", "b"} {
		e.open(session.OpenParams{SessionID: id})
		e.append(id, history.NewText(history.User, "hello "+id))
	}
	active := func() []string {
		t.Helper()
		list, err := e.m.ListSessions(context.Background(), session.ListParams{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range list {
			if s.Active {
				out = append(out, s.SessionID)
			}
		}
		return out
	}
	if got := active(); !slices.Equal(got, []string{"b"}) {
		t.Errorf("active after appending to c, a, b: %v, want [b]", got)
	}
	e.append("c", history.NewText(history.User, "again"))
	if got := active(); !slices.Equal(got, []string{"c"}) {
		t.Errorf("active after appending to c again: %v, want [c]", got)
	}

	// Across workspaces one session is marked: the newest of all; a
	// workspace's own listing marks its newest.
	other := t.TempDir()
	if _, err := e.m.OpenSession(context.Background(), session.OpenParams{Workspace: other, SessionID: "z"}); err != nil {
		t.Fatal(err)
	}
	e.append("z", history.NewText(history.User, "elsewhere"))
	if got := active(); !slices.Equal(got, []string{"z"}) {
		t.Errorf("active over every workspace after appending to z: %v, want [z]", got)
	}
	own, err := e.m.ListSessions(context.Background(), session.ListParams{Workspace: e.dir})
	if err != nil {
		t.Fatal(err)
	}
	var marked []string
	for _, s := range own {
		if s.Active {
			marked = append(marked, s.SessionID)
		}
	}
	if !slices.Equal(marked, []string{"c"}) {
		t.Errorf("active in the first workspace's listing: %v, want [c]", marked)
	}
}
