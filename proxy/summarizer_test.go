package proxy_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/vtcode/vtcode-ls/proxy"
	"github.com/vtcode/vtcode-ls/session"
)

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestAgentSummarizerUsesTheServedRequestOnce: under [proxy] summarizer =
// "agent", the summary the engine writes for a proxied session goes to the
// upstream of the request being served, with that request's credentials
// and model, once per served request; the model gets the evidence record,
// its text is checked and completed from the record; no credential reaches
// a stored file, a log line or a notification.
func TestAgentSummarizerUsesTheServedRequestOnce(t *testing.T) {
	e, logs := agentSummarizerEnv(t, "", nil)
	a := newAgent(t, e, "34343434-0000-0000-0000-000000000001", "Read the parts.")
	tokens := map[string]bool{"sk-ant-secret-test-key": true}
	for i := 0; i < 10 && len(e.notes.bounds) == 0; i++ {
		tok := fmt.Sprintf("agent-token-%02d-secret", i)
		tokens[tok] = true
		a.header.Set("X-Agent-Token", tok) // a credential header, new on every request
		if _, status := a.step(); status != 200 {
			t.Fatal(status)
		}
	}
	if len(e.notes.bounds) == 0 {
		t.Fatal("no automatic compaction in 10 turns")
	}
	// The agent's summary call is a cost of the compaction in the receipt.
	if l, _ := e.mgr.ListSessions(context.Background(), session.ListParams{}); len(l) == 1 {
		st, err := e.mgr.ProjectionStats(context.Background(), l[0].SessionID, nil)
		if err != nil || st.Receipt == nil || len(st.Receipt.Compactions) == 0 {
			t.Fatalf("stats %v: no compaction receipt", err)
		}
		if c := st.Receipt.Compactions[0]; c.Model != "anthropic/claude-test" || c.Tokens.Input == 0 || c.Tokens.Output == 0 {
			t.Errorf("compaction receipt %+v: the agent's summary call is not billed to the compaction", c)
		}
	}
	e.mgr.Close() // ends a pass 1 in flight; the store is flushed

	reqs := e.up.Requests()
	engine, used := 0, map[string]int{}
	for i, r := range reqs {
		if !bytes.Contains(r.Body, []byte("The record of this session")) {
			continue
		}
		engine++
		tok := r.Header.Get("X-Agent-Token")
		used[tok]++
		// The served request is the agent's request next to it: the one
		// whose preparation made it (it is forwarded after a compaction at
		// the threshold; a pass 1 runs beside it).
		adjacent := func(step int) string {
			for j := i + step; j >= 0 && j < len(reqs); j += step {
				if !bytes.Contains(reqs[j].Body, []byte("The record of this session")) {
					return reqs[j].Header.Get("X-Agent-Token")
				}
			}
			return ""
		}
		if tok == "" || tok != adjacent(1) && tok != adjacent(-1) {
			t.Errorf("engine request %d used token %q; the requests beside it carried %q and %q", i, tok, adjacent(-1), adjacent(1))
		}
		if r.Header.Get("X-Api-Key") == "" || r.Path != "/v1/messages" || !bytes.Contains(r.Body, []byte(`"model":"claude-test"`)) {
			t.Errorf("engine request %d: key %q, path %q; want the served request's key, upstream and model", i, r.Header.Get("X-Api-Key"), r.Path)
		}
	}
	if engine == 0 {
		t.Fatal("no summary request reached the agent's upstream")
	}
	for tok, n := range used {
		if n != 1 {
			t.Errorf("the credentials of one served request (%s) were used %d times", tok, n)
		}
	}

	list, _ := (func() ([]session.SessionInfo, error) {
		m := session.NewManager(session.Options{NoWatch: true, UserConfig: e.user, Clients: offlineClients})
		defer m.Close()
		if err := m.AddWorkspace(e.ws, nil); err != nil {
			return nil, err
		}
		l, err := m.ListSessions(context.Background(), session.ListParams{})
		if err != nil || len(l) == 0 {
			return nil, err
		}
		h, err := m.History(context.Background(), session.HistoryParams{SessionID: l[0].SessionID})
		if err == nil && len(h.Messages) > 0 {
			if s := h.Messages[0].Text(); !strings.Contains(s, "(from the record)") && !strings.Contains(s, "## Files read or changed") {
				t.Errorf("the summary holds nothing of the record:\n%.1500s", s)
			}
		}
		return l, err
	})()
	if len(list) != 1 {
		t.Errorf("sessions %v", list)
	}

	// Nothing holds a credential: every file written, every log line, every
	// notification.
	var files int
	for _, root := range []string{e.ws, filepath.Dir(e.user)} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			b, _ := os.ReadFile(p)
			files++
			for tok := range tokens {
				if bytes.Contains(b, []byte(tok)) {
					t.Errorf("%s holds the credential %q", p, tok)
				}
			}
			return nil
		})
	}
	if files < 2 {
		t.Errorf("%d files written; the store was not checked", files)
	}
	text := logs.String() + strings.Join(e.notes.logs, "\n")
	for tok := range tokens {
		if strings.Contains(text, tok) {
			t.Errorf("a log line or notification holds the credential %q", tok)
		}
	}
}

const agentSummarizerTOML = "[proxy]\nsummarizer = \"agent\"\n[agent.harness]\nauto_compaction_threshold_tokens = 40000\n[agent.harness.tool_result_clearing]\nenabled = false\n"

// agentSummarizerEnv is a proxy under [proxy] summarizer = "agent" whose
// manager and server log everything at debug level into the returned
// buffer; extraTOML is added to the user file. front, when set, stands before the fake upstream: it gets the
// upstream's URL and returns the URL the configuration names instead.
func agentSummarizerEnv(t *testing.T, extraTOML string, front func(up string) string) (*env, *syncBuffer) {
	t.Helper()
	e := setup(t, agentSummarizerTOML+extraTOML, readTurns(12), "")
	if front != nil {
		b, err := os.ReadFile(e.user)
		if err != nil {
			t.Fatal(err)
		}
		url := front(e.up.URL)
		if err := os.WriteFile(e.user, []byte(strings.ReplaceAll(string(b), e.up.URL, url)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e.mgr.Close()
	e.notes = &notes{}
	e.mgr = session.NewManager(session.Options{Notifier: e.notes, NoWatch: true, UserConfig: e.user, Clients: offlineClients, Logger: logger})
	t.Cleanup(func() { e.mgr.Close() })
	if err := e.mgr.AddWorkspace(e.ws, nil); err != nil {
		t.Fatal(err)
	}
	e.srv = proxy.New(proxy.Options{Manager: e.mgr, Logger: logger, AfterRequest: func() { e.done <- struct{}{} }})
	hs := httptest.NewServer(e.srv)
	t.Cleanup(hs.Close)
	e.url = hs.URL
	return e, logs
}

// TestAgentSummarizerFailureLeavesTheRecordsSummary: when the agent's
// model fails the summary request, the compaction still happens with the
// record's summary, a warning says so without any credential, and the
// failed call is not retried.
func TestAgentSummarizerFailureLeavesTheRecordsSummary(t *testing.T) {
	var mu sync.Mutex
	failed := map[string]int{}
	e, logs := agentSummarizerEnv(t, "", func(up string) string {
		target, _ := neturl.Parse(up)
		rp := httputil.NewSingleHostReverseProxy(target)
		front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if bytes.Contains(body, []byte("The record of this session")) {
				mu.Lock()
				failed[r.Header.Get("X-Agent-Token")]++
				mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"summary refused by the test"}}`)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			rp.ServeHTTP(w, r)
		}))
		t.Cleanup(front.Close)
		return front.URL
	})
	a := newAgent(t, e, "34343434-0000-0000-0000-000000000002", "Read the parts.")
	for i := 0; i < 10 && len(e.notes.bounds) == 0; i++ {
		a.header.Set("X-Agent-Token", fmt.Sprintf("agent-token-%02d-secret", i))
		if _, status := a.step(); status != 200 {
			t.Fatal(status)
		}
	}
	if len(e.notes.bounds) == 0 {
		t.Fatal("no automatic compaction in 10 turns: a failed agent summary failed the compaction")
	}
	e.mgr.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(failed) == 0 {
		t.Fatal("no summary request reached the agent's upstream")
	}
	for tok, n := range failed {
		if n != 1 {
			t.Errorf("the failed summary call with %s was made %d times, want once", tok, n)
		}
	}
	warned := false
	for _, l := range e.notes.logs {
		warned = warned || strings.Contains(l, "the model's summary failed")
	}
	if !warned {
		t.Errorf("no warning that the model's summary failed: %q", e.notes.logs)
	}
	text := logs.String() + strings.Join(e.notes.logs, "\n")
	if strings.Contains(text, "agent-token-") || strings.Contains(text, "sk-ant-secret-test-key") {
		t.Error("a log line or notification holds a credential")
	}
}

// TestAgentSummarizerNotUsedWhenOfflineWins: with compaction.writer =
// "offline" the agent's model is never asked, whatever [proxy] summarizer
// says.
func TestAgentSummarizerNotUsedWhenOfflineWins(t *testing.T) {
	e, _ := agentSummarizerEnv(t, "[compaction]\nwriter = \"offline\"\n", nil)
	a := newAgent(t, e, "34343434-0000-0000-0000-000000000003", "Read the parts.")
	for i := 0; i < 10 && len(e.notes.bounds) == 0; i++ {
		if _, status := a.step(); status != 200 {
			t.Fatal(status)
		}
	}
	if len(e.notes.bounds) == 0 {
		t.Fatal("no automatic compaction in 10 turns")
	}
	e.mgr.Close()
	for i, r := range e.up.Requests() {
		if !bytes.Contains(r.Body, []byte(`"metadata"`)) { // the agent's requests all carry its metadata
			t.Errorf("request %d is an engine request under writer = offline", i)
		}
	}
}
