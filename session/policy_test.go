package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/config"
	"github.com/vtcode/vtcode-ls/session"
)

func TestPolicyLayers(t *testing.T) {
	e := newEnv(t, session.Options{}, `{"context":{"tokenizer":"approx","trimToPercent":50}}`)
	ctx := context.Background()
	a := e.open(session.OpenParams{})
	b := e.open(session.OpenParams{})

	// initializationOptions apply to the workspace default.
	pol, err := e.m.GetPolicy(ctx, session.GetPolicyParams{})
	if err != nil || pol.Context.TrimToPercent != 50 || pol.Context.Tokenizer != "approx" {
		t.Fatalf("workspace policy = %+v, %v", pol, err)
	}

	// A session override.
	pol, err = e.m.SetPolicy(ctx, session.SetPolicyParams{SessionID: a, Policy: json.RawMessage(`{"toolResultClearing":{"keepToolUses":5}}`)})
	if err != nil || pol.ToolResultClearing.KeepToolUses != 5 || pol.Context.TrimToPercent != 50 {
		t.Fatalf("session policy = %+v, %v", pol, err)
	}
	// A workspace default change reaches every session on the keys it did
	// not override.
	pol, err = e.m.SetPolicy(ctx, session.SetPolicyParams{Policy: json.RawMessage(`{"toolResultClearing":{"keepToolUses":3,"triggerTokens":1000}}`)})
	if err != nil || pol.ToolResultClearing.KeepToolUses != 3 {
		t.Fatalf("workspace default = %+v, %v", pol, err)
	}
	pa, _ := e.m.GetPolicy(ctx, session.GetPolicyParams{SessionID: a})
	pb, _ := e.m.GetPolicy(ctx, session.GetPolicyParams{SessionID: b})
	if pa.ToolResultClearing.KeepToolUses != 5 || pa.ToolResultClearing.TriggerTokens != 1000 {
		t.Errorf("session a = %+v", pa.ToolResultClearing)
	}
	if pb.ToolResultClearing.KeepToolUses != 3 || pb.ToolResultClearing.TriggerTokens != 1000 {
		t.Errorf("session b = %+v", pb.ToolResultClearing)
	}
	// Every session hears about a workspace change.
	e.rec.await(t, "pressure for b", func() bool {
		for _, p := range e.rec.pressure {
			if p.SessionID == b {
				return true
			}
		}
		return false
	})

	// Bad values and unknown keys name the field and change nothing.
	for _, bad := range []struct{ patch, path string }{
		{`{"toolResultClearing":{"keepToolUses":-1}}`, "policy.toolResultClearing.keepToolUses"},
		{`{"context":{"tokenizer":"gpt2","trimToPercent":40}}`, "policy.context.tokenizer"},
		{`{"autoCompaction":{"nope":true}}`, "policy.autoCompaction.nope"},
	} {
		_, err := e.m.SetPolicy(ctx, session.SetPolicyParams{SessionID: a, Policy: json.RawMessage(bad.patch)})
		var fe *config.FieldError
		if !errors.As(err, &fe) || fe.Path != bad.path {
			t.Errorf("%s: err = %v, want field %s", bad.patch, err, bad.path)
		}
	}
	after, _ := e.m.GetPolicy(ctx, session.GetPolicyParams{SessionID: a})
	if jsonOf(t, after) != jsonOf(t, pa) {
		t.Errorf("rejected patches changed the policy: %+v", after)
	}
	var pe *session.ParamError
	if _, err := e.m.SetPolicy(ctx, session.SetPolicyParams{SessionID: a}); !errors.As(err, &pe) || pe.Path != "policy" {
		t.Errorf("missing policy: %v", err)
	}

	// Session overrides survive a restart; workspace defaults set at run
	// time do not (like initializationOptions, they belong to the client).
	e.restart(`{"context":{"tokenizer":"approx","trimToPercent":50}}`)
	e.open(session.OpenParams{SessionID: a})
	pa, _ = e.m.GetPolicy(ctx, session.GetPolicyParams{SessionID: a})
	if pa.ToolResultClearing.KeepToolUses != 5 || pa.ToolResultClearing.TriggerTokens != 40000 {
		t.Errorf("after restart: %+v", pa.ToolResultClearing)
	}
}

func TestBadInitOptions(t *testing.T) {
	m := session.NewManager(offlineOnly(session.Options{NoWatch: true}))
	defer m.Close()
	err := m.AddWorkspace(t.TempDir(), json.RawMessage(`{"context":{"trimToPercent":0}}`))
	var fe *config.FieldError
	if !errors.As(err, &fe) || fe.Path != "policy.context.trimToPercent" {
		t.Fatalf("AddWorkspace = %v", err)
	}
	if len(m.Workspaces()) != 0 {
		t.Error("workspace added despite bad options")
	}
}

func TestTokenizerSwitchReestimates(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	id := e.open(session.OpenParams{})
	e.append(id, turns(3, 2000)...)
	approx := e.stats(id).OriginalTokens
	e.setPolicy(id, `{"context":{"tokenizer":"o200k"}}`)
	o200k := e.stats(id).OriginalTokens
	if approx == o200k || o200k == 0 {
		t.Fatalf("estimates approx %d, o200k %d", approx, o200k)
	}
}

func TestConfigHotReload(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "vtcode.toml")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("[context]\ntrim_to_percent = 40\n")
	rec := newRecorder()
	m := session.NewManager(offlineOnly(session.Options{Notifier: rec}))
	defer m.Close()
	if err := m.AddWorkspace(dir, nil); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	get := func() int {
		p, err := m.GetPolicy(ctx, session.GetPolicyParams{})
		if err != nil {
			t.Fatal(err)
		}
		return p.Context.TrimToPercent
	}
	if got := get(); got != 40 {
		t.Fatalf("trimToPercent = %d, want 40", got)
	}
	id, err := m.OpenSession(ctx, session.OpenParams{})
	if err != nil {
		t.Fatal(err)
	}

	// A bad file is reported with file and line; the last good policy stays.
	write("[context]\ntrim_to_percent = 40\ntokenizer = \"cl100k\"\n")
	rec.await(t, "a shown message", func() bool { return len(rec.shown) > 0 })
	if msg := rec.shownMessages()[0]; !strings.Contains(msg, "vtcode.toml:3") {
		t.Errorf("shown %q, want file:line", msg)
	}
	if got := get(); got != 40 {
		t.Errorf("trimToPercent = %d after a bad file", got)
	}

	// A good file applies, and sessions get a pressure update.
	n := func() int {
		c := 0
		for _, p := range rec.pressure {
			if p.SessionID == id.SessionID {
				c++
			}
		}
		return c
	}
	rec.mu.Lock()
	before := n()
	rec.mu.Unlock()
	write("[context]\ntrim_to_percent = 70\n")
	rec.await(t, "a pressure update", func() bool { return n() > before })
	if got := get(); got != 70 {
		t.Errorf("trimToPercent = %d after reload, want 70", got)
	}
}

func TestBadConfigAtStartKeepsDefaults(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "vtcode.toml"), []byte("[context]\ntrim_to_percent = 400\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	m := session.NewManager(offlineOnly(session.Options{Notifier: rec, NoWatch: true}))
	defer m.Close()
	if err := m.AddWorkspace(dir, nil); err != nil {
		t.Fatal(err)
	}
	if shown := rec.shownMessages(); len(shown) != 1 || !strings.Contains(shown[0], "vtcode.toml:2") {
		t.Errorf("shown = %q", shown)
	}
	p, err := m.GetPolicy(context.Background(), session.GetPolicyParams{})
	if err != nil || jsonOf(t, p) != jsonOf(t, config.Default()) {
		t.Errorf("policy = %+v, %v", p, err)
	}
}
