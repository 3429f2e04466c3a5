package historytest

import (
	"encoding/json"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
)

func TestPreset1M(t *testing.T) {
	msgs := Preset1M()
	if len(msgs) != 2000 {
		t.Errorf("%d messages, want 2000", len(msgs))
	}
	batches, results, reused, sigs, images, unknown, details, bigInputs := 0, 0, 0, 0, 0, 0, 0, 0
	for _, m := range msgs {
		if m.HasToolCalls() {
			batches++
			if m.ToolCalls[0].ID == "call_0" {
				reused++
			}
			for _, tc := range m.ToolCalls {
				if tc.ThoughtSignature != "" {
					sigs++
				}
				if len(tc.Arguments) > 1024 || len(tc.Input) > 1024 {
					bigInputs++
				}
				if tc.Extra != nil {
					unknown++
				}
			}
		}
		if m.Role == history.Tool {
			results++
		}
		for _, p := range m.Content.PartList() {
			if p.IsMedia() {
				images++
			}
		}
		if m.Extra != nil {
			unknown++
		}
		if m.ReasoningDetails != nil {
			details++
		}
	}
	if batches != 400 {
		t.Errorf("%d batches, want 400", batches)
	}
	t.Logf("%d results, %d batches with reused ids, %d signatures, %d images, %d unknown fields, %d reasoningDetails, %d large inputs",
		results, reused, sigs, images, unknown, details, bigInputs)
	for name, n := range map[string]int{"reused ids": reused, "signatures": sigs, "images": images, "unknown fields": unknown, "reasoning details": details, "large inputs": bigInputs} {
		if n == 0 {
			t.Errorf("no %s", name)
		}
	}
	if err := history.CheckPairing(msgs); err != nil {
		t.Errorf("preset not normalized: %v", err)
	}
	if testing.Short() {
		return
	}
	j1, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	var back []history.Message
	if err := json.Unmarshal(j1, &back); err != nil {
		t.Fatal(err)
	}
	if j2, _ := json.Marshal(back); string(j2) != string(j1) {
		t.Error("preset changes through a JSON round trip")
	}
	est := history.NewEstimator(history.O200k)
	if total := est.Messages(msgs); total < 900_000 || total > 1_100_000 {
		t.Errorf("preset estimates %d o200k tokens, want about 1M", total)
	}
}

func TestSyntheticDeterministic(t *testing.T) {
	cfg := Config{Seed: 42, Messages: 300, Batches: 60, Tokens: 60_000, ReuseIDs: 0.5, Reasoning: true, Signatures: true, Images: true, Unknown: true}
	a, b := Synthetic(cfg), Synthetic(cfg)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Error("same config, different histories")
	}
	cfg.Seed = 43
	jc, _ := json.Marshal(Synthetic(cfg))
	if string(jc) == string(ja) {
		t.Error("different seeds, same history")
	}
	if len(a) != 300 {
		t.Errorf("%d messages, want 300", len(a))
	}
	// The history round-trips through JSON exactly.
	var back []history.Message
	if err := json.Unmarshal(ja, &back); err != nil {
		t.Fatal(err)
	}
	if j2, _ := json.Marshal(back); string(j2) != string(ja) {
		t.Error("JSON round trip changed the history")
	}
	total := history.NewEstimator(history.Approx).Messages(a)
	if total < 40_000 || total > 90_000 {
		t.Errorf("approx estimate %d for a 60k-token target", total)
	}
}

func TestSyntheticFaults(t *testing.T) {
	cfg := Config{Seed: 3, Batches: 200, MaxParallel: 4, ReuseIDs: 0.7, Faults: true}
	msgs := Synthetic(cfg)
	if history.Normalized(msgs) {
		t.Fatal("faulty history is normalized")
	}
	out, changed := history.Normalize(msgs)
	if !changed || history.CheckPairing(out) != nil {
		t.Error("Normalize did not repair the faulty history")
	}
}

func TestSyntheticSmall(t *testing.T) {
	for _, cfg := range []Config{{}, {Batches: 1}, {Messages: 3, Batches: 5}, {Messages: 10}} {
		msgs := Synthetic(cfg)
		if len(msgs) == 0 {
			t.Errorf("%+v: empty history", cfg)
		}
		if err := history.CheckPairing(msgs); err != nil {
			t.Errorf("%+v: %v", cfg, err)
		}
	}
}
