package session_test

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/vtcode/vtcode-ls/compaction"
	"github.com/vtcode/vtcode-ls/session"
)

// summaries is the number of messages the context map of session id counts
// as the engine's summary.
func (e *env) summaries(id string) int {
	e.t.Helper()
	return category(e.contextMap(id), "summary").Messages
}

// compactNow compacts session id manually and returns its artifact.
func (e *env) compactNow(id string) string {
	e.t.Helper()
	res, err := e.m.Compact(context.Background(), session.CompactParams{SessionID: id}, nil)
	if err != nil {
		e.t.Fatalf("Compact: %v", err)
	}
	return res.ArtifactID
}

// The context map counts as the summary the message the compaction wrote,
// by its place, and nothing else: not a message of the client's own that
// opens with the same words, before or after a compaction and a restart.
func TestSummaryIsKnownByItsPlace(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	id := e.open(session.OpenParams{ContextWindow: 32000})
	e.setPolicy(id, `{"autoCompaction":{"enabled":false}}`)
	e.append(id, compaction.SummaryMessage("pasted from another tool"))
	e.append(id, turns(10, 2400)...)
	if n := e.summaries(id); n != 0 {
		t.Errorf("before any compaction the map shows %d summary messages", n)
	}
	e.compactNow(id)
	e.append(id, turns(2, 100)...)
	e.append(id, compaction.SummaryMessage("another paste"))
	if n := e.summaries(id); n != 1 {
		t.Errorf("after the compaction the map shows %d summary messages, want its one", n)
	}
	e.restart("")
	e.open(session.OpenParams{SessionID: id})
	if n := e.summaries(id); n != 1 {
		t.Errorf("after a restart the map shows %d summary messages, want the compaction's one", n)
	}
}

// A restore brings back the history of an artifact with its summary: the
// artifact of a second compaction holds the first one's summary, that of
// the first none.
func TestRestoreKeepsTheArtifactsSummary(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	ctx := context.Background()
	id := e.open(session.OpenParams{ContextWindow: 32000})
	e.setPolicy(id, `{"autoCompaction":{"enabled":false}}`)
	e.append(id, turns(10, 2400)...)
	first := e.compactNow(id)
	e.append(id, turns(10, 2400)...)
	second := e.compactNow(id)
	for _, tt := range []struct {
		artifact string
		want     int
	}{{second, 1}, {first, 0}, {second, 1}} {
		if _, err := e.m.Restore(ctx, session.RestoreParams{SessionID: id, ArtifactID: tt.artifact}); err != nil {
			t.Fatal(err)
		}
		if n := e.summaries(id); n != tt.want {
			t.Errorf("restored %s: the map shows %d summary messages, want %d", tt.artifact, n, tt.want)
		}
		e.restart("")
		e.open(session.OpenParams{SessionID: id})
		if n := e.summaries(id); n != tt.want {
			t.Errorf("restored %s, restarted: the map shows %d summary messages, want %d", tt.artifact, n, tt.want)
		}
	}
}

// A log written before boundaries recorded their summary's index still
// loads: the summary is found once in the boundary's history, also in the
// history a later restore brings back.
func TestSummaryOfAnOlderLog(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	ctx := context.Background()
	id := e.open(session.OpenParams{ContextWindow: 32000})
	e.setPolicy(id, `{"autoCompaction":{"enabled":false}}`)
	e.append(id, turns(10, 2400)...)
	e.compactNow(id)
	e.append(id, turns(10, 2400)...)
	second := e.compactNow(id)
	if err := e.m.Close(); err != nil {
		t.Fatal(err)
	}
	if n := stripRecorded(t, filepath.Join(e.dir, ".vtcode", "sessions", id, "events.jsonl"), `,"summaryIndex":0`); n != 2 {
		t.Fatalf("the log recorded the summary's index in %d boundaries, want 2", n)
	}
	e.start("")
	e.open(session.OpenParams{SessionID: id})
	if n := e.summaries(id); n != 1 {
		t.Errorf("an older log: the map shows %d summary messages, want 1", n)
	}
	// The second boundary's artifact is the history of the first, a past
	// event replay does not decode: the restore finds its summary.
	if _, err := e.m.Restore(ctx, session.RestoreParams{SessionID: id, ArtifactID: second}); err != nil {
		t.Fatal(err)
	}
	if n := e.summaries(id); n != 1 {
		t.Errorf("an older log's artifact restored: the map shows %d summary messages, want 1", n)
	}
}

// stripRecorded removes field from every line of the session log at path
// that has it, rewriting the line's checksum as the store writes it, and
// returns how many lines it changed.
func stripRecorded(t *testing.T, path, field string) int {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	table := crc32.MakeTable(crc32.Castagnoli)
	const sumLen = len(`,"sum":"00000000"}`)
	changed := 0
	lines := bytes.SplitAfter(raw, []byte("\n"))
	for i, line := range lines {
		if !bytes.Contains(line, []byte(field)) {
			continue
		}
		body := bytes.TrimSuffix(line, []byte("\n"))
		body = append(bytes.Replace(body[:len(body)-sumLen], []byte(field), nil, 1), '}')
		sum := crc32.Checksum(body, table)
		lines[i] = fmt.Appendf(nil, "%s,\"sum\":\"%08x\"}\n", body[:len(body)-1], sum)
		changed++
	}
	if err := os.WriteFile(path, bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
	return changed
}
