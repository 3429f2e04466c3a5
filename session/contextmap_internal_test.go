package session

import (
	"encoding/json"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/store"
)

// TestRequestOfMessages reads the request record of a messages event
// without its messages, as a replay that skips them needs it.
func TestRequestOfMessages(t *testing.T) {
	reserved := 2048
	want := requestData{Turn: 3, Tokens: 9000, Capacity: 32000, Pressure: 0.32, State: StateOK, Messages: 40, Window: 27904,
		Prefix: 12, Reserved: &reserved, Cleared: []clearedRecord{{CallID: "call_1", Original: 1400, Stub: 30}}}
	raw, err := json.Marshal(messagesData{Messages: []history.Message{history.NewText(history.User, "hi")}, Request: &want})
	if err != nil {
		t.Fatal(err)
	}
	got, err := requestOfMessages(store.Event{Seq: 7, Type: evMessages, Data: raw})
	if err != nil {
		t.Fatal(err)
	}
	if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
		t.Errorf("got %s, want %s", g, w)
	}
	raw, _ = json.Marshal(messagesData{Messages: []history.Message{history.NewText(history.User, "hi")}})
	if got, err := requestOfMessages(store.Event{Seq: 8, Type: evMessages, Data: raw}); err != nil || got != nil {
		t.Errorf("an appendMessages event: %+v, %v", got, err)
	}
	if _, err := requestOfMessages(store.Event{Seq: 9, Type: evMessages, Data: json.RawMessage(`{"request":7}`)}); err == nil {
		t.Error("a malformed record is an error")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
