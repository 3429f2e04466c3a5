package session_test

import (
	"context"
	"errors"
	"testing"

	"github.com/vtcode/vtcode-ls/compaction"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/session"
)

// The offline route's client is the Manager's factory's choice too: session
// has no summarizer of its own.
func TestOfflineRouteUsesTheClientFactory(t *testing.T) {
	c := &counting{calls: make(chan *providers.Request, 16)}
	e := newEnv(t, session.Options{Clients: clients(map[string]providers.Generator{"offline": c})}, "")
	for _, provider := range []string{"", "offline"} {
		id := e.open(session.OpenParams{Provider: provider, Model: "m", ContextWindow: 32000})
		e.append(id, turns(10, 3000)...)
		res, err := e.m.Compact(context.Background(), session.CompactParams{SessionID: id, Strategy: "local"}, nil)
		if err != nil {
			t.Fatalf("provider %q: Compact: %v", provider, err)
		}
		if res.ArtifactID == "" {
			t.Fatalf("provider %q: no compaction: %+v", provider, res)
		}
		select {
		case <-c.calls:
		default:
			t.Errorf("provider %q: the factory's offline client was not called", provider)
		}
	}
}

// A Manager without a client factory cannot compact, not even offline: the
// compaction fails as a provider failure and changes nothing.
func TestNoClientFactoryFailsCleanly(t *testing.T) {
	e := &env{t: t, dir: t.TempDir(), rec: newRecorder(), o: session.Options{NoWatch: true}}
	e.o.Notifier = e.rec
	e.start("")
	id := e.open(session.OpenParams{ContextWindow: 32000})
	e.append(id, turns(10, 3000)...)
	before := snap(t, e, id)
	_, err := e.m.Compact(context.Background(), session.CompactParams{SessionID: id, Strategy: "local"}, nil)
	var fe *session.FailedError
	if !errors.As(err, &fe) || fe.Kind != compaction.KindProvider || fe.Provider != "offline" {
		t.Fatalf("err = %v (%+v)", err, fe)
	}
	if after := snap(t, e, id); after != before {
		t.Error("a compaction without a client changed the session")
	}
}
