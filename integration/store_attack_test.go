//go:build linux

package integration_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStoreAttackLostArtifact replays a lost artifact against the real
// daemon: compact, restore that artifact, append one message, shut down,
// delete every artifact (then, in a second round, truncate the new ones at
// a line boundary). The restarted daemon opens the session with every
// acknowledged message, listSessions reports what openSession yields,
// listArtifacts lists no damaged artifact, and restoring one is refused
// with -32602 and changes nothing.
func TestStoreAttackLostArtifact(t *testing.T) {
	ws := newWorkspace(t, "")
	sid := "attacked"
	artDir := filepath.Join(ws, ".vtcode", "sessions", sid, "artifacts")
	d := startDaemon(t, daemonOptions{Workspace: ws})
	var o openResult
	d.must("vtcode/openSession", map[string]any{"sessionId": sid, "contextWindow": 16000}, &o)
	var msgs []message
	for i := range 60 {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, message{Role: role, Content: text(words(uint64(i), 300))})
	}
	var ar appendResult
	d.must("vtcode/appendMessages", map[string]any{"sessionId": sid, "messages": msgs}, &ar)
	var c struct {
		ArtifactID string `json:"artifactId"`
	}
	d.must("vtcode/compact", map[string]any{"sessionId": sid}, &c)
	if c.ArtifactID == "" {
		t.Fatal("the compaction stored no artifact")
	}
	var rr struct {
		Messages int `json:"messages"`
	}
	d.must("vtcode/restore", map[string]any{"sessionId": sid, "artifactId": c.ArtifactID}, &rr)
	d.must("vtcode/appendMessages", map[string]any{"sessionId": sid, "messages": []message{{Role: "user", Content: text("after the restore")}}}, &ar)
	acked := ar.Messages
	d.shutdown()

	for _, damage := range []string{"deleted", "truncated"} {
		ents, _ := os.ReadDir(artDir)
		for _, e := range ents {
			p := filepath.Join(artDir, e.Name())
			if damage == "deleted" {
				os.Remove(p)
				continue
			}
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:bytes.IndexByte(b, '\n')+1], 0o600)
		}
		d = startDaemon(t, daemonOptions{Workspace: ws})
		d.must("vtcode/openSession", map[string]any{"sessionId": sid}, &o)
		var h historyResult
		d.must("vtcode/history", map[string]any{"sessionId": sid}, &h)
		if o.Messages != acked || h.Total != acked || h.Messages[len(h.Messages)-1].Content == nil {
			t.Fatalf("%s artifacts: reopened with %d messages (history %d), %d acknowledged", damage, o.Messages, h.Total, acked)
		}
		var list []struct {
			Messages int `json:"messages"`
		}
		d.must("vtcode/listSessions", map[string]any{}, &list)
		if len(list) != 1 || list[0].Messages != acked {
			t.Errorf("%s artifacts: listSessions = %+v, open yields %d", damage, list, acked)
		}
		var arts []artifactInfo
		d.must("vtcode/listArtifacts", map[string]any{"sessionId": sid}, &arts)
		if len(arts) != 0 {
			t.Errorf("%s artifacts: listArtifacts lists %+v", damage, arts)
		}
		e := d.callErr("vtcode/restore", map[string]any{"sessionId": sid, "artifactId": c.ArtifactID})
		if e.Code != -32602 || !strings.Contains(e.Message, "artifactId") {
			t.Errorf("%s artifacts: restore = %d %q, want -32602 on artifactId", damage, e.Code, e.Message)
		}
		d.must("vtcode/history", map[string]any{"sessionId": sid}, &h)
		if h.Total != acked {
			t.Errorf("%s artifacts: a refused restore changed the history to %d messages", damage, h.Total)
		}
		if damage == "deleted" {
			// New artifacts for the next round: compact again.
			d.must("vtcode/appendMessages", map[string]any{"sessionId": sid, "messages": msgs}, &ar)
			d.must("vtcode/compact", map[string]any{"sessionId": sid}, &c)
			d.must("vtcode/history", map[string]any{"sessionId": sid}, &h)
			acked = h.Total
		}
		d.shutdown()
		d.checkNoPanic()
	}
}

// TestStoreAttackCommittedSymlink replays a committed symlink: a
// repository that commits .vtcode as a symlink to a folder outside it (or a
// vtcode.toml whose storage.dir climbs out) cannot make the daemon write
// there: a symlinked store fails openSession with a clear error; a
// workspace storage.dir that leaves the workspace is ignored (config reports
// it) and the session lives in the default store inside the workspace.
func TestStoreAttackCommittedSymlink(t *testing.T) {
	outside := t.TempDir()
	for name, setup := range map[string]func(ws string){
		".vtcode symlink": func(ws string) { os.Symlink(outside, filepath.Join(ws, ".vtcode")) },
		"storage.dir ../..": func(ws string) {
			rel, _ := filepath.Rel(ws, outside)
			os.WriteFile(filepath.Join(ws, "vtcode.toml"), []byte("[storage]\ndir = \""+rel+"\"\n"), 0o600)
		},
		"absolute storage.dir": func(ws string) {
			os.WriteFile(filepath.Join(ws, "vtcode.toml"), []byte("[storage]\ndir = \""+outside+"\"\n"), 0o600)
		},
	} {
		ws := newWorkspace(t, "")
		setup(ws)
		d := startDaemon(t, daemonOptions{Workspace: ws})
		if name == ".vtcode symlink" {
			e := d.callErr("vtcode/openSession", map[string]any{"sessionId": "s1"})
			if e == nil || !strings.Contains(e.Message, "symbolic link") {
				t.Errorf("%s: openSession = %+v, want an error naming the problem", name, e)
			}
		} else {
			d.must("vtcode/openSession", map[string]any{"sessionId": "s1"}, nil)
			if _, err := os.Stat(filepath.Join(ws, ".vtcode", "sessions", "s1", "events.jsonl")); err != nil {
				t.Errorf("%s: the session is not in the default store inside the workspace: %v", name, err)
			}
		}
		d.shutdown()
		if ents, _ := os.ReadDir(outside); len(ents) != 0 {
			t.Fatalf("%s: the daemon wrote outside the workspace: %v", name, ents)
		}
	}
}
