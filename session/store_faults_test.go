package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/session"
	"github.com/vtcode/vtcode-ls/store"
)

// diskFaults injects ENOSPC into the store's file operations (through
// store.Options.Faults): the first `skip` matching operations pass, then
// `fail` of them fail (-1: all).
type diskFaults struct {
	mu    sync.Mutex
	rules []*faultRule
	hits  int
}

type faultRule struct {
	op         store.Op
	match      string // substring of the path
	skip, fail int
}

func (d *diskFaults) arm(op store.Op, match string, skip, fail int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rules = append(d.rules, &faultRule{op: op, match: match, skip: skip, fail: fail})
}

func (d *diskFaults) disarm() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rules = nil
}

func (d *diskFaults) hook(op store.Op, name string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, r := range d.rules {
		if r.op != op || !strings.Contains(filepath.ToSlash(name), r.match) {
			continue
		}
		if r.skip > 0 {
			r.skip--
			continue
		}
		if r.fail != 0 {
			r.fail--
			d.hits++
			return syscall.ENOSPC
		}
	}
	return nil
}

func newFaultEnv(t *testing.T) (*env, *diskFaults) {
	t.Helper()
	e := newEnv(t, session.Options{}, "")
	d := &diskFaults{}
	session.SetStoreFaults(e.m, d.hook)
	return e, d
}

func (e *env) sessionDir(id string) string {
	return filepath.Join(e.dir, ".vtcode", "sessions", id)
}

// artifactFiles lists the files of a session's artifacts folder.
func (e *env) artifactFiles(id string) []string {
	e.t.Helper()
	ents, err := os.ReadDir(filepath.Join(e.sessionDir(id), "artifacts"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		e.t.Fatal(err)
	}
	var out []string
	for _, en := range ents {
		out = append(out, en.Name())
	}
	return out
}

func (e *env) listed(id string) []session.ArtifactInfo {
	e.t.Helper()
	arts, err := e.m.ListArtifacts(context.Background(), id, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return arts
}

func (e *env) listCount(id string) int {
	e.t.Helper()
	infos, err := e.m.ListSessions(context.Background(), session.ListParams{})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, in := range infos {
		if in.SessionID == id {
			return in.Messages
		}
	}
	e.t.Fatalf("session %s not listed", id)
	return 0
}

// idsOf returns the texts of msgs, to count how often a message is stored.
func countText(msgs []history.Message, text string) int {
	n := 0
	for _, m := range msgs {
		if b, _ := json.Marshal(m); bytes.Contains(b, []byte(text)) {
			n++
		}
	}
	return n
}

// TestRestoreSurvivesLostArtifact reproduces a lost artifact: compact,
// restore that artifact, append one message, shut down, then delete (or
// truncate at a line boundary) every artifact. The session still opens
// with every acknowledged message, listSessions says what open yields, and
// the damaged artifacts are neither listed nor restorable.
func TestRestoreSurvivesLostArtifact(t *testing.T) {
	for _, damage := range []string{"deleted", "truncated"} {
		t.Run(damage, func(t *testing.T) {
			e := newEnv(t, session.Options{}, "")
			id := e.open(session.OpenParams{ContextWindow: 16000})
			e.setPolicy(id, `{"toolResultClearing":{"enabled":false}}`)
			e.append(id, turns(10, 3000)...)
			c, err := e.m.Compact(context.Background(), session.CompactParams{SessionID: id}, nil)
			if err != nil || c.ArtifactID == "" {
				t.Fatalf("Compact = %+v, %v", c, err)
			}
			if _, err := e.m.Restore(context.Background(), session.RestoreParams{SessionID: id, ArtifactID: c.ArtifactID}); err != nil {
				t.Fatal(err)
			}
			e.append(id, history.NewText(history.User, "after the restore"))
			want := jsonOf(t, e.history(id))
			n := len(e.history(id))
			if err := e.m.Close(); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(e.sessionDir(id), "artifacts")
			for _, name := range e.artifactFiles(id) {
				p := filepath.Join(dir, name)
				if damage == "deleted" {
					os.Remove(p)
					continue
				}
				b, _ := os.ReadFile(p)
				os.WriteFile(p, b[:bytes.IndexByte(b, '\n')+1], 0o600)
			}
			e.start("")
			res, err := e.m.OpenSession(context.Background(), session.OpenParams{SessionID: id})
			if err != nil {
				t.Fatalf("reopen after the artifacts were %s: %v", damage, err)
			}
			if got := jsonOf(t, e.history(id)); got != want || res.Messages != n {
				t.Fatalf("reopen: %d messages, want %d acknowledged ones, history equal: %v", res.Messages, n, got == want)
			}
			if got := e.listCount(id); got != n {
				t.Errorf("listSessions says %d messages, open yields %d", got, n)
			}
			if arts := e.listed(id); len(arts) != 0 {
				t.Errorf("listArtifacts lists %s artifacts: %+v", damage, arts)
			}
			_, err = e.m.Restore(context.Background(), session.RestoreParams{SessionID: id, ArtifactID: c.ArtifactID})
			var pe *session.ParamError
			if !errors.As(err, &pe) || pe.Path != "artifactId" {
				t.Errorf("restore from a %s artifact = %v, want an artifactId error", damage, err)
			}
			if got := jsonOf(t, e.history(id)); got != want {
				t.Error("a refused restore changed the history")
			}
			if damage == "truncated" && !strings.Contains(err.Error(), "damaged") {
				t.Errorf("error %q does not say the artifact is damaged", err)
			}
			if !strings.Contains(strings.Join(e.rec.loggedMessages(), "\n"), c.ArtifactID) {
				t.Errorf("open did not report the unusable artifact %s: %q", c.ArtifactID, e.rec.loggedMessages())
			}
		})
	}
}

// TestRestoreFromChangedArtifactChangesNothing: an artifact replaced by
// another valid history of the same length (nothing a line count sees) is
// refused by its checksum, and the refusal leaves no backup behind.
func TestRestoreFromChangedArtifactChangesNothing(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	id := e.open(session.OpenParams{ContextWindow: 16000})
	e.append(id, turns(10, 3000)...)
	c, err := e.m.Compact(context.Background(), session.CompactParams{SessionID: id}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(e.sessionDir(id), "artifacts", c.ArtifactID+".jsonl")
	b, _ := os.ReadFile(p)
	os.WriteFile(p, bytes.Replace(b, []byte("Step 3"), []byte("Step 9"), 1), 0o600)
	before := snap(t, e, id)
	_, err = e.m.Restore(context.Background(), session.RestoreParams{SessionID: id, ArtifactID: c.ArtifactID})
	if err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("restore from a changed artifact = %v", err)
	}
	if after := snap(t, e, id); after != before {
		t.Error("a refused restore changed the session")
	}
	if files := e.artifactFiles(id); len(files) != 1 {
		t.Errorf("artifact files after a refused restore: %v", files)
	}
}

// TestPrepareOnFullDisk reproduces a full disk during a request: an automatic
// compaction whose outcome cannot be stored never answers an error after
// committing the request's messages, never stores them twice, and leaves
// no file behind.
func TestPrepareOnFullDisk(t *testing.T) {
	for _, tc := range []struct {
		name  string
		arm   func(d *diskFaults)
		reply bool // the request succeeds (with the compaction reported failed)
	}{
		{"artifact write fails", func(d *diskFaults) { d.arm(store.OpWrite, "artifacts/", 0, -1) }, true},
		{"artifact folder fsync fails", func(d *diskFaults) { d.arm(store.OpSync, "artifacts", 1, 1) }, true},
		{"boundary append fails", func(d *diskFaults) { d.arm(store.OpWrite, "events.jsonl", 0, 1) }, true},
		{"boundary fsync fails", func(d *diskFaults) { d.arm(store.OpSync, "events.jsonl", 0, 1) }, true},
		{"disk full", func(d *diskFaults) {
			d.arm(store.OpWrite, "", 0, -1)
			d.arm(store.OpCreate, "", 0, -1)
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, d := newFaultEnv(t)
			id := e.open(session.OpenParams{ContextWindow: 16000})
			e.setPolicy(id, `{"toolResultClearing":{"enabled":false}}`)
			e.append(id, turns(2, 500)...)
			before := e.history(id)
			events, _ := os.ReadFile(filepath.Join(e.sessionDir(id), "events.jsonl"))
			msgs := turns(20, 2000)
			msgs[0] = history.NewText(history.User, "the unique request message")

			tc.arm(d)
			prog := newProgress()
			res, err := e.m.PrepareRequest(context.Background(), session.PrepareParams{SessionID: id, Messages: msgs}, prog)
			d.disarm()
			if d.hits == 0 {
				t.Fatal("no fault was injected")
			}
			if end := <-prog.ended; !strings.HasPrefix(end, "Compaction failed: could not store the compaction: ") || !strings.Contains(end, "no space left on device") {
				t.Errorf("progress end = %q", end)
			}
			if files := e.artifactFiles(id); len(files) != 0 {
				t.Errorf("files left in artifacts/: %v", files)
			}
			if !tc.reply {
				if err == nil {
					t.Fatalf("PrepareRequest on a full disk succeeded: %+v", res.Compaction)
				}
				if got := e.history(id); jsonOf(t, got) != jsonOf(t, before) {
					t.Fatal("an error reply after the history changed")
				}
				if now, _ := os.ReadFile(filepath.Join(e.sessionDir(id), "events.jsonl")); !bytes.Equal(now, events) {
					t.Fatal("an error reply after the log changed")
				}
				// The client retries: stored once.
				res = prepare(t, e, session.PrepareParams{SessionID: id, Messages: msgs}, nil)
				if c := res.Compaction; c == nil || c.ArtifactID == "" {
					t.Fatalf("retry did not compact: %+v", c)
				}
				// The artifact holds the history before this compaction: the
				// request's messages once, after the earlier ones.
				if art := e.artifactMessages(id); len(art) != len(before)+len(msgs) || countText(art, "the unique request message") != 1 {
					t.Errorf("artifact of the retried request: %d messages (want %d), the request message %d times (want 1)",
						len(art), len(before)+len(msgs), countText(art, "the unique request message"))
				}
				return
			}
			if err != nil {
				t.Fatalf("PrepareRequest = %v, want a reply with the compaction reported failed", err)
			}
			c := res.Compaction
			if c == nil || c.ArtifactID != "" || !strings.Contains(c.Error, "no space left on device") {
				t.Fatalf("compaction report = %+v", c)
			}
			if res.Stats.State != session.StateCritical {
				t.Errorf("state = %q, want critical (over the threshold, compaction failed)", res.Stats.State)
			}
			got := e.history(id)
			if len(got) != len(before)+len(msgs) || countText(got, "the unique request message") != 1 {
				t.Errorf("history has %d messages (want %d), the request message %d times", len(got), len(before)+len(msgs), countText(got, "the unique request message"))
			}
			if res.Stats.Messages != len(got) || len(res.Messages) == 0 {
				t.Errorf("projection of %d messages, stats.messages %d", len(res.Messages), res.Stats.Messages)
			}
			// The reply was the truth: a restart yields the same.
			e.restart("")
			e.open(session.OpenParams{SessionID: id})
			if again := e.history(id); jsonOf(t, again) != jsonOf(t, got) {
				t.Error("the resumed history differs from the one the reply described")
			}
		})
	}
}

// TestPrepareWithoutMessagesOnFullDisk: with nothing new to store, a full
// disk still gets its projection from the existing history, the failed
// compaction reported, as after a provider failure.
func TestPrepareWithoutMessagesOnFullDisk(t *testing.T) {
	e, d := newFaultEnv(t)
	id := e.open(session.OpenParams{ContextWindow: 16000})
	e.setPolicy(id, `{"toolResultClearing":{"enabled":false}}`)
	e.append(id, turns(20, 2000)...)
	before := snap(t, e, id)
	d.arm(store.OpWrite, "", 0, -1)
	d.arm(store.OpCreate, "", 0, -1)
	res, err := e.m.PrepareRequest(context.Background(), session.PrepareParams{SessionID: id}, nil)
	d.disarm()
	if err != nil || res.Compaction == nil || !strings.Contains(res.Compaction.Error, "no space left on device") || len(res.Messages) == 0 {
		t.Fatalf("prepare on a full disk = %v, %+v", err, res)
	}
	if res.Stats.State != session.StateCritical {
		t.Errorf("state = %q, want critical", res.Stats.State)
	}
	if files := e.artifactFiles(id); len(files) != 0 {
		t.Errorf("files left in artifacts/: %v", files)
	}
	if after := snap(t, e, id); after.History != before.History || after.Artifacts != before.Artifacts {
		t.Error("the history changed")
	}
}

// artifactMessages reads every artifact file of session id (test helper).
func (e *env) artifactMessages(id string) []history.Message {
	e.t.Helper()
	var out []history.Message
	for _, name := range e.artifactFiles(id) {
		b, _ := os.ReadFile(filepath.Join(e.sessionDir(id), "artifacts", name))
		for _, line := range bytes.Split(bytes.TrimSpace(b), []byte{'\n'}) {
			var m history.Message
			if json.Unmarshal(line, &m) == nil {
				out = append(out, m)
			}
		}
	}
	return out
}

// TestRecordResponseCompactionBlockOnFullDisk: a provider compaction that
// cannot be stored still records the response (the reply says what is
// stored), or, when nothing can be written, answers an error with nothing
// stored.
func TestRecordResponseCompactionBlockOnFullDisk(t *testing.T) {
	block := history.Message{Role: history.Assistant, Content: history.Text("Continuing."),
		ReasoningDetails: []json.RawMessage{json.RawMessage(`{"type":"compaction","content":"Summary of the work so far."}`)}}
	for _, full := range []bool{false, true} {
		e, d := newFaultEnv(t)
		id := e.open(session.OpenParams{ContextWindow: 200000})
		e.append(id, turns(3, 500)...)
		before := e.history(id)
		if full {
			d.arm(store.OpWrite, "events.jsonl", 0, -1)
		} else {
			d.arm(store.OpWrite, "events.jsonl", 0, 1)
		}
		res, err := e.m.RecordResponse(context.Background(), session.RecordParams{SessionID: id, Message: block})
		d.disarm()
		if files := e.artifactFiles(id); len(files) != 0 {
			t.Errorf("full=%v: files left in artifacts/: %v", full, files)
		}
		got := e.history(id)
		switch {
		case full && err == nil:
			t.Errorf("full disk: RecordResponse succeeded: %+v", res)
		case full && jsonOf(t, got) != jsonOf(t, before):
			t.Error("full disk: an error reply after the history changed")
		case !full && err != nil:
			t.Errorf("boundary append failed: RecordResponse = %v, want the response stored alone", err)
		case !full && (res.Messages != len(before)+1 || len(got) != len(before)+1 || res.Stats.Compactions != 0):
			t.Errorf("boundary append failed: %d messages, %d compactions; want the full history plus the response", res.Messages, res.Stats.Compactions)
		}
	}
}

// TestArtifactRetention: storage.keep_artifacts bounds the artifacts of a
// session, keeping the newest; the live history does not depend on them.
func TestArtifactRetention(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	os.WriteFile(filepath.Join(e.dir, "vtcode.toml"), []byte("[storage]\nkeep_artifacts = 2\n"), 0o600)
	e.restart("")
	id := e.open(session.OpenParams{ContextWindow: 16000})
	var ids []string
	for i := range 4 {
		e.append(id, turns(8, 3000)...)
		c, err := e.m.Compact(context.Background(), session.CompactParams{SessionID: id}, nil)
		if err != nil || c.ArtifactID == "" {
			t.Fatalf("compaction %d: %+v, %v", i, c, err)
		}
		ids = append(ids, c.ArtifactID)
	}
	want := []string{ids[2] + ".jsonl", ids[3] + ".jsonl"}
	if files := e.artifactFiles(id); jsonOf(t, files) != jsonOf(t, want) {
		t.Errorf("artifact files = %v, want the newest two %v", files, want)
	}
	arts := e.listed(id)
	if len(arts) != 2 || arts[0].ID != ids[2] || arts[1].ID != ids[3] {
		t.Errorf("listArtifacts = %+v", arts)
	}
	h := jsonOf(t, e.history(id))
	e.restart("")
	e.open(session.OpenParams{SessionID: id})
	if jsonOf(t, e.history(id)) != h || len(e.listed(id)) != 2 {
		t.Error("resume after pruning changed the session")
	}
	if logged := e.rec.loggedMessages(); len(logged) != 0 {
		t.Errorf("pruned artifacts reported as unusable: %q", logged)
	}
}

// TestUnreferencedArtifactsRemovedOnOpen: artifact files no event
// references (a compaction killed before its boundary) are removed when the
// session is opened; referenced ones stay.
func TestUnreferencedArtifactsRemovedOnOpen(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	id := e.open(session.OpenParams{ContextWindow: 16000})
	e.append(id, turns(10, 3000)...)
	c, err := e.m.Compact(context.Background(), session.CompactParams{SessionID: id}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.m.Close()
	dir := filepath.Join(e.sessionDir(id), "artifacts")
	os.WriteFile(filepath.Join(dir, "orphan.jsonl"), []byte(`{"role":"user","content":"x"}`+"\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "old.meta.json"), []byte(`{}`), 0o600)
	e.start("")
	e.open(session.OpenParams{SessionID: id})
	if files := e.artifactFiles(id); jsonOf(t, files) != jsonOf(t, []string{c.ArtifactID + ".jsonl"}) {
		t.Errorf("artifact files after open = %v", files)
	}
}

// TestDamagedLogOpensWithValidPrefix reproduces a damaged log at the
// session level: a corrupt line in the middle of the log no longer makes
// the session unopenable; it opens with the events before it, the user is
// told where the damaged copy is, and listSessions agrees with open.
func TestDamagedLogOpensWithValidPrefix(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	id := e.open(session.OpenParams{ContextWindow: 64000})
	for i := range 3 {
		e.append(id, history.NewText(history.User, "message "+string(rune('a'+i))))
	}
	e.m.Close()
	p := filepath.Join(e.sessionDir(id), "events.jsonl")
	b, _ := os.ReadFile(p)
	lines := bytes.SplitAfter(b, []byte{'\n'})
	lines[2] = []byte("{\"seq\":3,\"type\":\"messages\",\"data\":{\"messages\":[{\"role\":\"user\"\n")
	os.WriteFile(p, bytes.Join(lines, nil), 0o600)
	e.start("")
	res, err := e.m.OpenSession(context.Background(), session.OpenParams{SessionID: id})
	if err != nil {
		t.Fatalf("open of a damaged log: %v", err)
	}
	// Line 1 is the model switch of the first open, then one line per message.
	if res.Messages != 1 || len(e.history(id)) != 1 || e.listCount(id) != 1 {
		t.Errorf("opened with %d messages (listed %d), want the 1 before the damaged line", res.Messages, e.listCount(id))
	}
	shown := strings.Join(e.rec.shownMessages(), "\n")
	if !strings.Contains(shown, "damaged at line 3") || !strings.Contains(shown, "@damaged-") {
		t.Errorf("shown = %q, want the damage and the saved copy", shown)
	}
}

// TestPromptSetByAnotherDaemon reproduces the first point of item 15: a
// Manager sees the compaction prompt another one (another daemon) set on
// the same workspace, without a restart.
func TestPromptSetByAnotherDaemon(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	other := session.NewManager(offlineOnly(session.Options{NoWatch: true}))
	defer other.Close()
	if err := other.AddWorkspace(e.dir, nil); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if r, err := e.m.CompactPrompt(ctx, session.PromptParams{Action: "get"}); err != nil || !r.IsDefault {
		t.Fatalf("get = %+v, %v", r, err)
	}
	if _, err := other.CompactPrompt(ctx, session.PromptParams{Action: "set", Prompt: "Summarize tersely."}); err != nil {
		t.Fatal(err)
	}
	if r, err := e.m.CompactPrompt(ctx, session.PromptParams{Action: "get"}); err != nil || r.IsDefault || r.Prompt != "Summarize tersely." {
		t.Errorf("after the other daemon set it: %+v, %v", r, err)
	}
	var pe *session.ParamError
	if _, err := other.CompactPrompt(ctx, session.PromptParams{Action: "set", Prompt: strings.Repeat("x", store.MaxPromptBytes+1)}); !errors.As(err, &pe) || pe.Path != "prompt" {
		t.Errorf("set of an oversized prompt = %v, want a prompt error", err)
	}
	if _, err := other.CompactPrompt(ctx, session.PromptParams{Action: "reset"}); err != nil {
		t.Fatal(err)
	}
	if r, _ := e.m.CompactPrompt(ctx, session.PromptParams{Action: "get"}); !r.IsDefault {
		t.Errorf("after the other daemon reset it: %+v", r)
	}
}

// loggedMessages returns the texts of the LogMessage notifications.
func (r *recorder) loggedMessages() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.logged...)
}

// TestProgressEndsOnceWithTheOutcome: every compaction outcome (success,
// no-op, provider failure, storage failure, cancellation) reports exactly
// one begin and one end, the end built from the outcome and equal to the
// result's message when there is a result.
func TestProgressEndsOnceWithTheOutcome(t *testing.T) {
	slow := newBlocker()
	e := newEnv(t, session.Options{Clients: clients(map[string]providers.Generator{"flaky": failing{}, "slow": slow})}, "")
	d := &diskFaults{}
	session.SetStoreFaults(e.m, d.hook)
	ctx := context.Background()
	id := e.open(session.OpenParams{ContextWindow: 32000})
	e.append(id, turns(10, 3000)...)
	run := func(name string, want string, arm func(), p session.CompactParams) {
		t.Helper()
		prog := newProgress()
		if arm != nil {
			arm()
		}
		p.SessionID = id
		res, err := e.m.Compact(ctx, p, prog)
		d.disarm()
		evs := prog.list()
		if len(evs) < 2 || evs[0] != "begin: "+session.CompactingTitle || !strings.HasPrefix(evs[len(evs)-1], "end: "+want) {
			t.Errorf("%s: progress %q, want one begin and an end starting %q", name, evs, want)
		}
		ends := 0
		for _, ev := range evs {
			if strings.HasPrefix(ev, "end: ") {
				ends++
			}
		}
		if ends != 1 {
			t.Errorf("%s: %d ends", name, ends)
		}
		if err == nil && "end: "+res.Message != evs[len(evs)-1] {
			t.Errorf("%s: result message %q differs from the progress end %q", name, res.Message, evs[len(evs)-1])
		}
	}
	run("storage failure", "Compaction failed: could not store the compaction: write artifact ", func() { d.arm(store.OpWrite, "artifacts/", 0, -1) }, session.CompactParams{})
	run("success", "Context compacted · ", nil, session.CompactParams{})
	run("no-op", "Conversation is already compact.", nil, session.CompactParams{})
	e.append(id, turns(10, 3000)...)
	if _, err := e.m.SwitchModel(ctx, session.SwitchParams{SessionID: id, Provider: "flaky", Model: "m", ContextWindow: 32000}, nil); err != nil {
		t.Fatal(err)
	}
	run("provider failure", "Compaction failed: flaky m: HTTP 503", nil, session.CompactParams{})

	if _, err := e.m.SwitchModel(ctx, session.SwitchParams{SessionID: id, Provider: "slow", Model: "m", ContextWindow: 32000}, nil); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	prog := newProgress()
	done := make(chan error, 1)
	go func() {
		_, err := e.m.Compact(cctx, session.CompactParams{SessionID: id}, prog)
		done <- err
	}()
	<-slow.started
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Compact = %v", err)
	}
	if evs := prog.list(); len(evs) < 2 || evs[0] != "begin: "+session.CompactingTitle || evs[len(evs)-1] != "end: Compaction cancelled." {
		t.Errorf("cancelled: progress %q", evs)
	}
}
