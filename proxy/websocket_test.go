package proxy_test

import (
	"io"
	"net/http"
	"testing"
)

// TestWebsocketUpgradeRefused: Codex's Responses WebSocket request (what
// openai_base_url makes it send first) gets 426 at once and nothing goes
// upstream, so that Codex falls back to POST without retrying.
func TestWebsocketUpgradeRefused(t *testing.T) {
	e := setup(t, "", readTurns(1), "")
	req, _ := http.NewRequest(http.MethodGet, e.url+"/v1/responses", nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	req.Header.Set("OpenAI-Beta", "responses_websockets=2026-02-06")
	req.Header.Set("Authorization", "Bearer sk-test")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	settled(t, e.done)
	if resp.StatusCode != http.StatusUpgradeRequired {
		t.Errorf("upgrade answered %d %s, want 426", resp.StatusCode, body)
	}
	if n := len(e.up.Requests()); n != 0 {
		t.Errorf("the upgrade request reached the upstream (%d requests)", n)
	}
	if st := e.srv.Stats(); len(st.Recent) != 1 || st.Recent[0].Disposition != "refused" || st.Recent[0].Endpoint != "websocket" {
		t.Errorf("stats %+v: want the refusal counted", st)
	}
}
