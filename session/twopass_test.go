package session_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/session"
	"github.com/vtcode/vtcode-ls/summary"
)

// counting delegates to the offline summarizer and reports each call.
type counting struct {
	calls chan *providers.Request
}

func (c *counting) Generate(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	c.calls <- req
	return summary.New().Generate(ctx, req)
}

func TestSoftThresholdPrefiresPassOne(t *testing.T) {
	c := &counting{calls: make(chan *providers.Request, 16)}
	e := newEnv(t, session.Options{Clients: clients(map[string]providers.Generator{"local": c})}, "")
	id := e.open(session.OpenParams{Provider: "local", Model: "m", ContextWindow: 40000})
	e.setPolicy(id, `{"toolResultClearing":{"enabled":false}}`)

	// Threshold: round((40000-4096) × 0.75) = 26928; soft: 24236.
	msgs := turns(22, 4000)
	res := prepare(t, e, session.PrepareParams{SessionID: id, Messages: msgs}, nil)
	if st := res.Stats; st.ProjectedTokens < 24236 || st.ProjectedTokens >= 26928 || res.Compaction != nil {
		t.Fatalf("history not between the soft threshold and the threshold: %+v", st)
	}
	if st := res.Stats; st.State != "warn" {
		t.Errorf("state = %q, want warn", st.State)
	}
	<-c.calls // pass 1 runs in the background

	// Over the threshold: compaction runs with the cached note (pass 2 only).
	prog := newProgress()
	res = prepare(t, e, session.PrepareParams{SessionID: id, Messages: turns(3, 4000)}, prog)
	if res.Compaction == nil || res.Compaction.ArtifactID == "" {
		t.Fatalf("no compaction: %+v", res.Compaction)
	}
	if !slicesContain(prog.list(), "report: Summarizing") || !strings.Contains(strings.Join(prog.list(), "\n"), "two-pass") {
		t.Errorf("progress = %q, want a two-pass summary", prog.list())
	}
}

func TestCloseCancelsWork(t *testing.T) {
	slow := newBlocker()
	e := newEnv(t, session.Options{Clients: clients(map[string]providers.Generator{"slow": slow})}, "")
	id := e.open(session.OpenParams{Provider: "slow", Model: "m", ContextWindow: 16000})
	e.append(id, turns(10, 4000)...)
	done := make(chan error, 1)
	go func() {
		_, err := e.m.Compact(context.Background(), session.CompactParams{SessionID: id}, nil)
		done <- err
	}()
	<-slow.started
	if err := e.m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("compaction after Close = %v", err)
	}
	if _, err := e.m.OpenSession(context.Background(), session.OpenParams{}); err == nil {
		t.Error("OpenSession after Close succeeded")
	}
}

func TestWorkspaces(t *testing.T) {
	ctx := context.Background()
	m := session.NewManager(offlineOnly(session.Options{NoWatch: true}))
	defer m.Close()
	var pe *session.ParamError
	if _, err := m.OpenSession(ctx, session.OpenParams{}); !errors.As(err, &pe) || pe.Path != "workspace" {
		t.Fatalf("no workspace: %v", err)
	}
	a, b := t.TempDir(), t.TempDir()
	if err := m.AddWorkspace(fileURI(a), nil); err != nil {
		t.Fatal(err)
	}
	// The first folder is the default; an unknown folder is added.
	r1, err := m.OpenSession(ctx, session.OpenParams{})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := m.OpenSession(ctx, session.OpenParams{Workspace: b})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Workspaces(); len(got) != 2 {
		t.Fatalf("workspaces = %q", got)
	}
	for _, c := range []struct{ dir, id string }{{a, r1.SessionID}, {b, r2.SessionID}} {
		if _, err := os.Stat(filepath.Join(c.dir, ".vtcode", "sessions", c.id, "events.jsonl")); err != nil {
			t.Errorf("session %s not stored in its workspace: %v", c.id, err)
		}
		list, err := m.ListSessions(ctx, session.ListParams{Workspace: c.dir})
		if err != nil || len(list) != 1 || list[0].SessionID != c.id {
			t.Errorf("ListSessions(%s) = %+v, %v", c.dir, list, err)
		}
	}
	if _, err := m.OpenSession(ctx, session.OpenParams{Workspace: filepath.Join(a, "missing")}); !errors.As(err, &pe) || pe.Path != "workspace" {
		t.Errorf("missing folder: %v", err)
	}
	if _, err := m.OpenSession(ctx, session.OpenParams{Workspace: "https://example.com/x"}); !errors.As(err, &pe) || pe.Path != "workspace" {
		t.Errorf("http URI: %v", err)
	}
	// A session id is open in one workspace at a time.
	if _, err := m.OpenSession(ctx, session.OpenParams{Workspace: b, SessionID: r1.SessionID}); !errors.As(err, &pe) || pe.Path != "sessionId" {
		t.Errorf("same id in another workspace: %v", err)
	}
}

func TestResumeFindsTheSessionsWorkspace(t *testing.T) {
	ctx := context.Background()
	a, b := t.TempDir(), t.TempDir()
	start := func() *session.Manager {
		m := session.NewManager(offlineOnly(session.Options{NoWatch: true}))
		for _, d := range []string{a, b} {
			if err := m.AddWorkspace(d, nil); err != nil {
				t.Fatal(err)
			}
		}
		return m
	}
	m := start()
	res, err := m.OpenSession(ctx, session.OpenParams{Workspace: b, SessionID: "in-b"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.AppendMessages(ctx, session.AppendParams{SessionID: res.SessionID, Messages: turns(1, 10)}); err != nil {
		t.Fatal(err)
	}
	// Already open: found without naming the workspace.
	if again, err := m.OpenSession(ctx, session.OpenParams{SessionID: "in-b"}); err != nil || !again.Resumed {
		t.Fatalf("reopen = %+v, %v", again, err)
	}
	m.Close()
	m = start()
	defer m.Close()
	again, err := m.OpenSession(ctx, session.OpenParams{SessionID: "in-b"})
	if err != nil || !again.Resumed || again.Messages != 6 {
		t.Fatalf("resume = %+v, %v", again, err)
	}
}

// hangFirst blocks its first call until the call's context ends, and
// delegates the others to the offline summarizer.
type hangFirst struct {
	mu        sync.Mutex
	calls     int
	started   chan struct{}
	cancelled chan struct{}
}

func (h *hangFirst) Generate(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	h.mu.Lock()
	h.calls++
	first := h.calls == 1
	h.mu.Unlock()
	if first {
		close(h.started)
		<-ctx.Done()
		close(h.cancelled)
		return nil, ctx.Err()
	}
	return summary.New().Generate(ctx, req)
}

// TestHungPassOneDoesNotHoldCompaction: a background pass 1 stuck at a hung
// provider is given up after a bounded wait, and the compaction that needed
// it summarizes in one pass instead of waiting for the provider's timeout.
func TestHungPassOneDoesNotHoldCompaction(t *testing.T) {
	h := &hangFirst{started: make(chan struct{}), cancelled: make(chan struct{})}
	e := newEnv(t, session.Options{Clients: clients(map[string]providers.Generator{"local": h}), PassOneWait: 50 * time.Millisecond}, "")
	id := e.open(session.OpenParams{Provider: "local", Model: "m", ContextWindow: 40000})
	e.setPolicy(id, `{"toolResultClearing":{"enabled":false}}`)
	prepare(t, e, session.PrepareParams{SessionID: id, Messages: turns(22, 4000)}, nil)
	<-h.started // pass 1 hangs

	res := prepare(t, e, session.PrepareParams{SessionID: id, Messages: turns(3, 4000)}, nil)
	if res.Compaction == nil || res.Compaction.ArtifactID == "" {
		t.Fatalf("no compaction: %+v", res.Compaction)
	}
	<-h.cancelled // the hung pass 1 was cancelled, not left running
}
