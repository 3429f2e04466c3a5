package session

import (
	"encoding/json"
	"testing"
)

// TestTimelineCheckpoint: the state a boundary or restore carries gives a
// replay that skips the messages events before it (with their request
// records) the same timeline as a full replay.
func TestTimelineCheckpoint(t *testing.T) {
	reqs := []requestData{
		{Tokens: 3000, Capacity: 32000, Pressure: 0.1, State: StateOK, Messages: 10, Window: 27904},
		{Tokens: 9000, Capacity: 32000, Pressure: 0.32, State: StateOK, Messages: 20, Window: 27904,
			Cleared: []clearedRecord{{CallID: "call_1", Original: 4000, Stub: 30}}},
	}
	b := Boundary{Trigger: "manual", Mode: "local", OriginalTokens: 9000, CompactedTokens: 3000, ArtifactID: "a1"}
	after := requestData{Tokens: 3500, Capacity: 32000, Pressure: 0.12, State: StateOK, Messages: 8, Window: 27904}

	var full contextState // every event
	for _, r := range reqs {
		full.applyRequest(r)
	}
	// the boundary event carries the state as it was when it was recorded
	raw, err := json.Marshal(full.timeline())
	if err != nil {
		t.Fatal(err)
	}
	full.applyBoundary(b, full.timeline())
	full.applyRequest(after)

	var carried timelineData
	if err := json.Unmarshal(raw, &carried); err != nil {
		t.Fatal(err)
	}
	var skipped contextState // the request records before the boundary are never seen
	skipped.applyBoundary(b, &carried)
	skipped.applyRequest(after)

	g, w := mustJSON(t, skipped.timeline()), mustJSON(t, full.timeline())
	if g != w {
		t.Errorf("replay from the checkpoint:\n%s\nfull replay:\n%s", g, w)
	}
	if n := len(full.turns); n != 3 || full.turns[2].Compaction != "manual" || !full.turns[1].LargeClear || full.clearedAt["call_1"] != 2 {
		t.Errorf("timeline = %+v, cleared %v", full.turns, full.clearedAt)
	}
	// A log of a version without the state keeps what was replayed.
	var old contextState
	old.applyRequest(reqs[0])
	old.checkpoint(nil)
	if len(old.turns) != 1 {
		t.Errorf("a nil checkpoint dropped the timeline: %+v", old.turns)
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
