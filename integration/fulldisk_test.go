//go:build linux

package integration_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestStoreFullDisk runs the daemon on a real full disk: the workspace's
// .vtcode folder is a 4 MiB tmpfs, filled to the last byte. It needs to
// mount a tmpfs (root, or a user namespace that allows it); where mounting
// is refused it is skipped with the reason, and the same guarantees are
// tested through the store's fault seam (session/store_faults_test.go).
//
// A prepareRequest that compacts automatically answers an error only when
// nothing was stored (its retry stores the messages once); with room for
// its messages but not for the artifact it succeeds, the compaction
// reported failed; no failure leaves a file.
func TestStoreFullDisk(t *testing.T) {
	ws := newWorkspace(t, "")
	vt := filepath.Join(ws, ".vtcode")
	if err := os.Mkdir(vt, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", vt, "tmpfs", 0, "size=4m,mode=0700"); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v): the full-disk cases run through the store's fault seam only", err)
	}
	t.Cleanup(func() { syscall.Unmount(vt, syscall.MNT_DETACH) })
	sid := "full"
	artDir := filepath.Join(vt, "sessions", sid, "artifacts")
	d := startDaemon(t, daemonOptions{Workspace: ws})
	var o openResult
	d.must("vtcode/openSession", map[string]any{"sessionId": sid, "contextWindow": 16000}, &o)
	d.must("vtcode/setPolicy", map[string]any{"sessionId": sid, "policy": map[string]any{"toolResultClearing": map[string]any{"enabled": false}}}, nil)
	// A history of about 600 KB, appended without compacting.
	var base []message
	for i := range 120 {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		base = append(base, message{Role: role, Content: text(words(uint64(i), 1000))})
	}
	var ar appendResult
	d.must("vtcode/appendMessages", map[string]any{"sessionId": sid, "messages": base}, &ar)
	n0 := ar.Messages
	request := map[string]any{"sessionId": sid, "workDoneToken": "w", "messages": []message{
		{Role: "user", Content: text("the unique request message: " + words(7777, 2000))},
	}}

	// Fill the disk to the last byte.
	filler := filepath.Join(vt, "filler")
	f, err := os.OpenFile(filler, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	for _, c := range []int{4096, 1} { // the last partial pages
		for {
			if _, err := f.Write(chunk[:c]); err != nil {
				break
			}
		}
	}
	size, _ := f.Seek(0, 2)

	// 1. Nothing fits: an error, nothing stored, no file left.
	e := d.callErr("vtcode/prepareRequest", request)
	if !strings.Contains(e.Message, "no space left on device") {
		t.Errorf("prepareRequest on a full disk: %d %q", e.Code, e.Message)
	}
	var h historyResult
	d.must("vtcode/history", map[string]any{"sessionId": sid}, &h)
	if h.Total != n0 {
		t.Fatalf("an error reply after %d messages were stored", h.Total-n0)
	}
	if ents, _ := os.ReadDir(artDir); len(ents) != 0 {
		t.Errorf("files left in artifacts/: %v", ents)
	}

	// 2. Room for the messages (about 12 KB) but not for the artifact
	// (about 600 KB): the reply succeeds, the compaction reported failed.
	if err := f.Truncate(size - 128<<10); err != nil {
		t.Fatal(err)
	}
	var pr struct {
		Compaction *struct {
			ArtifactID string `json:"artifactId"`
			Error      string `json:"error"`
		} `json:"compaction"`
		Stats stats `json:"stats"`
	}
	d.must("vtcode/prepareRequest", request, &pr)
	if c := pr.Compaction; c == nil || c.ArtifactID != "" || !strings.Contains(c.Error, "no space left on device") {
		t.Errorf("compaction report on a nearly full disk: %+v", pr.Compaction)
	}
	if pr.Stats.State != "critical" {
		t.Errorf("state %q, want critical", pr.Stats.State)
	}
	d.must("vtcode/history", map[string]any{"sessionId": sid}, &h)
	if h.Total != n0+1 {
		t.Errorf("history has %d messages, want %d: the request's message stored once", h.Total, n0+1)
	}
	if ents, _ := os.ReadDir(artDir); len(ents) != 0 {
		t.Errorf("files left in artifacts/: %v", ents)
	}

	// 3. Room again: the next request compacts.
	f.Close()
	os.Remove(filler)
	d.must("vtcode/prepareRequest", map[string]any{"sessionId": sid}, &pr)
	if c := pr.Compaction; c == nil || c.ArtifactID == "" {
		t.Errorf("no compaction once the disk has room: %+v", pr.Compaction)
	}
	d.shutdown()
	d.checkNoPanic()
}
