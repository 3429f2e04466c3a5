package rpctest

import (
	"flag"
	"strings"
	"testing"
)

// The rpc package's golden tests take -update; "go test ./rpc/... -update"
// passes it here too.
var _ = flag.Bool("update", false, "accepted for go test ./rpc/... -update; unused here")

func TestNormalizer(t *testing.T) {
	n := &normalizer{workspace: "/tmp/ws", editor: `{"sessionId":"given"}`, vars: map[string]string{}, counts: map[string]int{}}
	got := n.frame([]byte(`{"jsonrpc":"2.0","method":"x","params":{"workspace":"/tmp/ws","sessionId":"20261130T000000.000Z-abcd","artifactId":"a-1",` +
		`"elapsedMs":1234,"updatedAt":"2026-11-30T00:00:00Z","message":"Context compacted · 1.4s (10 -> 2 messages). See a-1.","note":"owned by process 4242","html":"<b>&"}}`))
	want := `{"jsonrpc":"2.0","method":"x","params":{"artifactId":"$ARTIFACT1","elapsedMs":"$MS","html":"<b>&","message":"Context compacted · $DUR (10 -> 2 messages). See $ARTIFACT1.",` +
		`"note":"owned by process $PID","sessionId":"$SESSION1","updatedAt":"$TIME","workspace":"$WORKSPACE"}}`
	if got != want {
		t.Errorf("normalized\n got %s\nwant %s", got, want)
	}
	if got := n.frame([]byte(`{"sessionId":"given"}`)); got != `{"sessionId":"given"}` {
		t.Errorf("an id the editor gave was replaced: %s", got)
	}
	if got := n.substitute(`{"artifactId":"$ARTIFACT1","ws":"$WORKSPACE_URI","p":"$WORKSPACE"}`); got != `{"artifactId":"a-1","ws":"file:///tmp/ws","p":"/tmp/ws"}` {
		t.Errorf("substituted %s", got)
	}
}

func TestTxtarRoundTrip(t *testing.T) {
	in := "Prose.\n\n-- editor --\nline 1\n-- server --\n-- exit --\n0\n"
	a := parseTxtar([]byte(in))
	if string(a.comment) != "Prose.\n\n" || len(a.files) != 3 {
		t.Fatalf("parsed %q with %d files", a.comment, len(a.files))
	}
	if got, _ := a.get("editor"); got != "line 1\n" {
		t.Errorf("editor = %q", got)
	}
	a.set("server", "frame\n")
	if got := string(a.format()); got != strings.Replace(in, "-- server --\n", "-- server --\nframe\n", 1) {
		t.Errorf("formatted %q", got)
	}
}
