//go:build linux

package integration_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCrashRecovery SIGKILLs a daemon at many random instants of a scripted
// workload (appends, prepareRequest with automatic compaction, and manual
// vtcode/compact) on one session, restarts it on the same workspace after
// each kill, and checks that nothing acknowledged was lost.
//
// The client sends one request at a time, so at most one request is in
// flight at a kill. A message is acknowledged when the client received the
// success reply of the request that carried it (appendMessages or
// prepareRequest). Every message has a unique id m<N>, increasing in send
// order. After each restart, with A the acknowledged ids in order and I the
// ids of the in-flight request:
//
//  1. I is all-or-nothing: either every id of I is found (in the live
//     history or a listed artifact) and A becomes A+I (the request committed
//     before the kill, only its reply was lost), or none is.
//  2. The listed artifacts (vtcode/listArtifacts, oldest first) and then the
//     live history (vtcode/history) form a chain. In each, the messages with
//     our ids are (a) a strictly increasing subsequence of the ids of the
//     previous link (the messages the compaction kept: summary tail,
//     retained turns), followed by (b) a contiguous block of A that starts
//     right after the highest id of the previous link, byte-equal (role,
//     content, tool calls, call id) to what the client sent. The first
//     artifact has no (a). The live history's block (b) ends at the end of A.
//     So every acknowledged message is in the live history or an artifact,
//     in order, and without compaction the live history is exactly A: no
//     message that was not acknowledged (apart from I, by rule 1) appears.
//     Messages without our ids (the summary, synthetic placeholders) are
//     compaction output and are not counted.
//  3. Every artifact file on disk (temporary files, named "@…", excluded)
//     is complete Message JSONL: every line a JSON object with a role,
//     newline-terminated; a listed artifact has exactly the listed number of
//     messages. Unlisted artifact files (written by a compaction killed
//     before its boundary event) are counted as orphans.
//  4. events.jsonl, after the reopen, ends with a newline and every line is
//     a JSON event: a torn last line (counted before the restart) was
//     repaired.
//
// A kill "landed mid-compaction" when the in-flight request had reported a
// progress begin (every request carries a workDoneToken) and the process
// died before sending the matching end.
func TestCrashRecovery(t *testing.T) {
	kills := 32
	if v, err := strconv.Atoi(os.Getenv("VTCODE_CRASH_KILLS")); err == nil && v > 0 {
		kills = v
	} else if testing.Short() {
		kills = 12
	}
	seed := uint64(20261130)
	if v, err := strconv.ParseUint(os.Getenv("VTCODE_CRASH_SEED"), 10, 64); err == nil {
		seed = v
	}
	t.Logf("seed %d (set VTCODE_CRASH_SEED to vary), %d kills", seed, kills)

	// Keep every artifact: the chain check below starts at the first one
	// (storage.keep_artifacts would delete the oldest by policy).
	ws := newWorkspace(t, "[storage]\nkeep_artifacts = 0\n")
	r := &crashRun{
		t: t, ws: ws, sid: "crash-1", rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		kill: rand.New(rand.NewPCG(seed+1, seed^0x5851f42d4c957f2d)),
		sent: map[string]message{}, verified: map[string]int64{},
		stderr: filepath.Join(t.TempDir(), "stderr.log"),
	}
	start := time.Now()
	budget := 50 * time.Second
	d := r.start()
	r.verify(d, nil)
	for r.kills < kills && time.Since(start) < budget {
		inflight := r.cycle(d)
		d = r.start()
		r.verify(d, inflight)
	}
	// A last clean run: one more append, an orderly exit, a restart.
	final := r.newOp("vtcode/appendMessages")
	var ar appendResult
	d.must(final.method, final.params, &ar)
	r.ack(final)
	d.shutdown()
	d = r.start()
	r.verify(d, nil)
	d.shutdown()
	checkNoPanicText(t, readFile(t, r.stderr))

	if r.kills < kills {
		t.Errorf("only %d of %d kills within %s", r.kills, kills, budget)
	}
	if r.midCompaction == 0 {
		t.Errorf("no kill landed mid-compaction in %d kills; the harness does not exercise compaction", r.kills)
	}
	if r.compactions == 0 {
		t.Errorf("no compaction committed")
	}
	if n := strings.Count(readFile(t, r.stderr), "torn last line"); n < r.torn+r.injected {
		t.Errorf("%d torn last lines, but the daemon logged only %d", r.torn+r.injected, n)
	}
	t.Logf("crash recovery: %d runs, %d kills (%d mid-compaction, %d orphan artifacts, %d torn event lines from kills + %d injected, all repaired, %d temp files left), "+
		"%d acknowledged messages (%d in-flight requests committed, %d lost unacknowledged), %d compactions, %d message checks, %s",
		r.runs, r.kills, r.midCompaction, len(r.orphans), r.torn, r.injected, r.tempFiles, len(r.acked), r.inflightCommitted, r.inflightLost,
		r.compactions, r.checked, time.Since(start).Round(time.Millisecond))
}

// crashRun is the state of TestCrashRecovery across restarts.
type crashRun struct {
	t      *testing.T
	ws     string
	sid    string
	rng    *rand.Rand // the workload's (used by its goroutine only while it runs)
	kill   *rand.Rand // the kill instants' and torn lines'
	stderr string     // one stderr file for every child

	seq      int                // last message number used
	reqs     int                // requests sent
	acked    []string           // acknowledged ids in order
	sent     map[string]message // every message sent, by id
	verified map[string]int64   // artifact files fully checked, by name: size

	runs, kills, midCompaction, torn, injected, tempFiles int
	inflightCommitted, inflightLost                       int
	compactions, checked                                  int
	orphans                                               map[string]bool
}

// op is one request of the workload.
type op struct {
	method string
	params map[string]any
	ids    []string // ids of the messages it carries
	token  string   // its workDoneToken
}

func (r *crashRun) dir() string {
	return filepath.Join(r.ws, ".vtcode", "sessions", r.sid)
}

// start starts a daemon, opens the session and verifies the store.
func (r *crashRun) start() *daemon {
	r.t.Helper()
	r.runs++
	d := startDaemon(r.t, daemonOptions{Workspace: r.ws, Stderr: r.stderr})
	var o openResult
	d.must("vtcode/openSession", map[string]any{"sessionId": r.sid, "contextWindow": 16000}, &o)
	if len(r.acked) > 0 && !o.Resumed {
		r.t.Fatalf("openSession after restart: resumed = false with %d acknowledged messages", len(r.acked))
	}
	return d
}

// cycle runs the workload on d until a kill at a random instant and
// returns the request in flight at the kill (nil when none).
func (r *crashRun) cycle(d *daemon) *op {
	r.t.Helper()
	done := make(chan *op, 1)
	acks := make(chan struct{}, 1024)
	go func() { done <- r.workload(d, acks) }()

	// Choose the instant.
	var plan string
	switch x := r.kill.IntN(100); {
	case x < 45: // any instant of the workload
		delay := time.Duration(r.kill.IntN(250_000)) * time.Microsecond
		plan = "timer " + delay.String()
		time.AfterFunc(delay, d.kill)
	case x < 85: // inside a compaction: k-th progress begin + a few ms
		k := 1 + r.kill.IntN(2)
		delay := time.Duration(r.kill.IntN(6000)) * time.Microsecond
		plan = fmt.Sprintf("progress begin %d + %s", k, delay)
		err := d.notes.await(3*time.Second, func(notes []notification) bool {
			n := 0
			for _, raw := range notesOf(notes, "$/progress") {
				if bytes.Contains(raw, []byte(`"kind":"begin"`)) {
					n++
				}
			}
			return n >= k
		})
		if err != nil {
			delay = 0 // no compaction began in time: kill now
		}
		time.AfterFunc(delay, d.kill)
	default: // just after an acknowledgement
		n := 1 + r.kill.IntN(6)
		delay := time.Duration(r.kill.IntN(1500)) * time.Microsecond
		plan = fmt.Sprintf("ack %d + %s", n, delay)
		timeout := time.NewTimer(3 * time.Second)
	wait:
		for i := 0; i < n; i++ {
			select {
			case <-acks:
			case <-timeout.C:
				break wait
			}
		}
		timeout.Stop()
		time.AfterFunc(delay, d.kill)
	}
	inflight := <-done
	<-d.exited
	if !d.killed.Load() {
		r.t.Fatalf("the daemon exited on its own (code %d) during the workload\nstderr:\n%s", d.exitCode, tail(readFile(r.t, r.stderr), 4000))
	}
	r.kills++

	if inflight != nil && inflight.token != "" {
		pv := progressOf(d.notes.snapshot(), inflight.token)
		began, ended := false, false
		for _, v := range pv {
			began = began || v.Kind == "begin"
			ended = ended || v.Kind == "end"
		}
		if began && !ended {
			r.midCompaction++
		}
	}
	// A torn last line, seen before the restart repairs it. A SIGKILL
	// cannot tear the daemon's single-write appends (the kernel finishes
	// the write), but a power cut can: every fourth kill simulates one by
	// appending the first half of the last event line.
	events := filepath.Join(r.dir(), "events.jsonl")
	if b, err := os.ReadFile(events); err == nil && len(b) > 0 {
		if b[len(b)-1] != '\n' {
			r.torn++
		} else if r.kill.IntN(4) == 0 {
			lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			last := lines[len(lines)-1]
			f, err := os.OpenFile(events, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				r.t.Fatal(err)
			}
			_, err = f.WriteString(last[:len(last)/2])
			f.Close()
			if err != nil {
				r.t.Fatal(err)
			}
			r.injected++
		}
	}
	if testing.Verbose() {
		desc := "nothing in flight"
		if inflight != nil {
			desc = fmt.Sprintf("%s with %d messages in flight", inflight.method, len(inflight.ids))
		}
		r.t.Logf("kill %d (%s): %s", r.kills, plan, desc)
	}
	return inflight
}

// workload sends requests one at a time until the connection ends; it
// returns the request in flight at that moment (nil when none).
func (r *crashRun) workload(d *daemon, acks chan<- struct{}) *op {
	for {
		var method string
		switch x := r.rng.IntN(100); {
		case x < 40:
			method = "vtcode/appendMessages"
		case x < 92:
			method = "vtcode/prepareRequest"
		default:
			method = "vtcode/compact"
		}
		o := r.newOp(method)
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		var res json.RawMessage
		err := d.call(ctx, o.method, o.params, &res)
		cancel()
		if err != nil {
			if rpcError(err) != nil {
				r.t.Errorf("%s: %v", o.method, err)
			}
			return o
		}
		r.ack(o)
		if o.method != "vtcode/appendMessages" {
			var c struct {
				ArtifactID string `json:"artifactId"`
				Compaction *struct {
					ArtifactID string `json:"artifactId"`
				} `json:"compaction"`
			}
			if json.Unmarshal(res, &c) == nil && (c.ArtifactID != "" || c.Compaction != nil && c.Compaction.ArtifactID != "") {
				r.compactions++
			}
		}
		select {
		case acks <- struct{}{}:
		default:
		}
	}
}

// ack records the messages of o as acknowledged.
func (r *crashRun) ack(o *op) {
	r.acked = append(r.acked, o.ids...)
}

// newOp builds the next request of the workload.
func (r *crashRun) newOp(method string) *op {
	r.reqs++
	o := &op{method: method, params: map[string]any{"sessionId": r.sid}}
	if method != "vtcode/appendMessages" {
		o.token = fmt.Sprintf("w%d", r.reqs)
		o.params["workDoneToken"] = o.token
	}
	if method == "vtcode/compact" {
		return o
	}
	var msgs []message
	switch x := r.rng.IntN(10); {
	case x < 2 && method == "vtcode/prepareRequest":
		// no new messages
	case x < 3:
		msgs = append(msgs, r.msg("user", ""))
	default:
		msgs = r.turn()
	}
	for _, m := range msgs {
		o.ids = append(o.ids, m.ID)
	}
	if len(msgs) > 0 {
		o.params["messages"] = msgs
	}
	if method == "vtcode/prepareRequest" {
		o.params["systemPrompt"] = "You are a coding agent working in a Go repository."
	}
	return o
}

// msg returns a new message with the next id; callID links a tool result.
func (r *crashRun) msg(role, callID string) message {
	r.seq++
	id := fmt.Sprintf("m%d", r.seq)
	m := message{ID: id, Role: role}
	switch role {
	case "user":
		m.Content = text(fmt.Sprintf("[%s] %s", id, words(uint64(r.seq), 20+r.rng.IntN(60))))
	case "tool":
		m.ToolCallID, m.ToolName = callID, "run_command"
		m.Content = text(fmt.Sprintf("[%s] exit 0\n%s", id, words(uint64(r.seq), 200+r.rng.IntN(3300))))
	default:
		m.Content = text(fmt.Sprintf("[%s] %s", id, words(uint64(r.seq), 10+r.rng.IntN(30))))
	}
	r.sent[id] = m
	return m
}

// turn returns a user message, an assistant message with 1–3 tool calls and
// their results.
func (r *crashRun) turn() []message {
	out := []message{r.msg("user", "")}
	a := r.msg("assistant", "")
	n := 1 + r.rng.IntN(3)
	for i := 0; i < n; i++ {
		a.ToolCalls = append(a.ToolCalls, toolCall{ID: fmt.Sprintf("call_%d_%d", r.seq, i), Name: "run_command",
			Arguments: fmt.Sprintf(`{"cmd":"go test ./pkg%d/..."}`, i)})
	}
	r.sent[a.ID] = a
	out = append(out, a)
	for _, c := range a.ToolCalls {
		out = append(out, r.msg("tool", c.ID))
	}
	return out
}

// verify checks the store and the daemon's view of the session against the
// acknowledged messages (see TestCrashRecovery), deciding the fate of the
// in-flight request.
func (r *crashRun) verify(d *daemon, inflight *op) {
	t := r.t
	t.Helper()
	var h historyResult
	d.must("vtcode/history", map[string]any{"sessionId": r.sid}, &h)
	if h.Total != len(h.Messages) {
		t.Fatalf("history: total %d, %d messages", h.Total, len(h.Messages))
	}
	var arts []artifactInfo
	d.must("vtcode/listArtifacts", map[string]any{"sessionId": r.sid}, &arts)

	// 3. Artifact files.
	listed := map[string]artifactInfo{}
	for _, a := range arts {
		listed[a.ArtifactID] = a
	}
	chain := make([][]message, 0, len(arts)+1)
	artDir := filepath.Join(r.dir(), "artifacts")
	entries, err := os.ReadDir(artDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	files := map[string]bool{}
	temps := 0
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, "@"):
			temps++
		case strings.HasSuffix(name, ".meta.json"):
			b := readFile(t, filepath.Join(artDir, name))
			if !json.Valid([]byte(b)) {
				t.Errorf("artifact sidecar %s is not JSON: %q", name, tail(b, 200))
			}
		case strings.HasSuffix(name, ".jsonl"):
			files[strings.TrimSuffix(name, ".jsonl")] = true
		default:
			t.Errorf("unexpected file %s in %s", name, artDir)
		}
	}
	r.tempFiles = max(r.tempFiles, temps)
	for id := range files {
		if _, ok := listed[id]; !ok {
			if r.orphans == nil {
				r.orphans = map[string]bool{}
			}
			r.orphans[id] = true
			r.readArtifact(filepath.Join(artDir, id+".jsonl"), -1)
		}
	}
	for _, a := range arts {
		if !files[a.ArtifactID] {
			t.Fatalf("listed artifact %s has no file", a.ArtifactID)
		}
		chain = append(chain, r.readArtifact(filepath.Join(artDir, a.ArtifactID+".jsonl"), a.Messages))
	}
	chain = append(chain, h.Messages)

	// 1. The in-flight request.
	order := r.acked
	if inflight != nil && len(inflight.ids) > 0 {
		found := 0
		want := map[string]bool{}
		for _, id := range inflight.ids {
			want[id] = true
		}
		seen := map[string]bool{}
		for _, link := range chain {
			for _, m := range link {
				if want[m.ID] && !seen[m.ID] {
					seen[m.ID] = true
					found++
				}
			}
		}
		switch found {
		case 0:
			r.inflightLost++
		case len(inflight.ids):
			r.inflightCommitted++
			order = append(order, inflight.ids...)
			r.acked = order
		default:
			t.Fatalf("in-flight %s committed %d of its %d messages", inflight.method, found, len(inflight.ids))
		}
	}

	// 2. The chain.
	pos := make(map[string]int, len(order))
	for i, id := range order {
		pos[id] = i
	}
	var prev map[string]bool
	next := 0
	for li, link := range chain {
		name := "live history"
		if li < len(arts) {
			name = "artifact " + arts[li].ArtifactID
		}
		cur := map[string]bool{}
		last := -1
		inBlock := false
		for i, m := range link {
			if !isOurID(m.ID) {
				continue
			}
			p, ok := pos[m.ID]
			if !ok {
				t.Fatalf("%s[%d]: message %s was never acknowledged (acknowledged: %d messages)", name, i, m.ID, len(order))
			}
			if p <= last {
				t.Fatalf("%s[%d]: message %s out of order or repeated", name, i, m.ID)
			}
			last = p
			cur[m.ID] = true
			if p < next {
				if inBlock {
					t.Fatalf("%s[%d]: kept message %s after the new block", name, i, m.ID)
				}
				if !prev[m.ID] {
					t.Fatalf("%s[%d]: message %s is older than the previous link but not in it", name, i, m.ID)
				}
				continue
			}
			if p != next {
				t.Fatalf("%s[%d]: acknowledged message %s missing (found %s next)", name, i, order[next], m.ID)
			}
			inBlock = true
			sameMessage(t, name, i, r.sent[m.ID], m)
			r.checked++
			next++
		}
		prev = cur
	}
	if next != len(order) {
		t.Fatalf("acknowledged message %s (and %d after it) missing from the live history", order[next], len(order)-next-1)
	}

	// 4. The event log after the reopen.
	b := readFile(t, filepath.Join(r.dir(), "events.jsonl"))
	if b != "" && !strings.HasSuffix(b, "\n") {
		t.Fatalf("events.jsonl ends with a torn line after reopen: %q", tail(b, 200))
	}
	for i, line := range strings.Split(strings.TrimSuffix(b, "\n"), "\n") {
		if line != "" && !json.Valid([]byte(line)) {
			t.Fatalf("events.jsonl line %d is not JSON: %q", i+1, tail(line, 200))
		}
	}
}

// readArtifact checks and reads an artifact file; want < 0 skips the
// message count check. Files already checked are re-read only for their
// messages when they changed size (they must not).
func (r *crashRun) readArtifact(path string, want int) []message {
	t := r.t
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if size, ok := r.verified[path]; ok && size != int64(len(b)) {
		t.Fatalf("artifact %s changed size from %d to %d", path, size, len(b))
	}
	r.verified[path] = int64(len(b))
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Fatalf("artifact %s: last line not terminated", path)
	}
	var out []message
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		var m message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m.Role == "" {
			t.Fatalf("artifact %s line %d is not a message: %v %q", path, n, err, tail(sc.Text(), 200))
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if want >= 0 && len(out) != want {
		t.Fatalf("artifact %s: %d messages, listed with %d", path, len(out), want)
	}
	return out
}

func isOurID(id string) bool {
	if len(id) < 2 || id[0] != 'm' {
		return false
	}
	_, err := strconv.Atoi(id[1:])
	return err == nil
}

// sameMessage fails unless got is what the client sent.
func sameMessage(t *testing.T, where string, i int, want, got message) {
	t.Helper()
	if want.Role != got.Role || want.ToolCallID != got.ToolCallID || want.ToolName != got.ToolName ||
		!jsonEqual(want.Content, got.Content) || len(want.ToolCalls) != len(got.ToolCalls) {
		t.Fatalf("%s[%d]: message %s differs from what was sent:\nsent %s\ngot  %s", where, i, want.ID, short(want), short(got))
	}
	for k := range want.ToolCalls {
		if want.ToolCalls[k] != got.ToolCalls[k] {
			t.Fatalf("%s[%d]: message %s tool call %d differs: sent %+v got %+v", where, i, want.ID, k, want.ToolCalls[k], got.ToolCalls[k])
		}
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func short(m message) string {
	b, _ := json.Marshal(m)
	return tail(string(b), 300)
}

func readFile(tb testing.TB, path string) string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		tb.Fatal(err)
	}
	return string(b)
}

// TestSessionOwnership checks the single-writer rule the crash recovery
// relies on (docs/design.md §11): while a daemon owns a session, a second daemon on
// the same workspace gets -32004 naming the owner's pid; once the owner is
// SIGKILLed, the kernel releases the lock and the second daemon resumes the
// session with everything acknowledged.
func TestSessionOwnership(t *testing.T) {
	ws := newWorkspace(t, "")
	a := startDaemon(t, daemonOptions{Workspace: ws})
	var o openResult
	a.must("vtcode/openSession", map[string]any{"sessionId": "owned"}, &o)
	var ar appendResult
	a.must("vtcode/appendMessages", map[string]any{"sessionId": "owned", "messages": []message{{ID: "m1", Role: "user", Content: text("hello")}}}, &ar)

	b := startDaemon(t, daemonOptions{Workspace: ws})
	e := b.callErr("vtcode/openSession", map[string]any{"sessionId": "owned"})
	if e.Code != -32004 || !strings.Contains(e.Message, strconv.Itoa(a.pid())) {
		t.Errorf("second owner: error %d %q, want -32004 naming pid %d", e.Code, e.Message, a.pid())
	}
	a.kill()
	b.must("vtcode/openSession", map[string]any{"sessionId": "owned"}, &o)
	if !o.Resumed || o.Messages != 1 {
		t.Errorf("after the owner's SIGKILL: %+v, want resumed with 1 message", o)
	}
	b.shutdown()
}
