package history

import (
	"encoding/json"
	"testing"
)

// recordResponse's usage may come as this protocol writes it or as the
// provider reported it; the cache counts land in the same fields.
func TestUsageShapes(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Usage
	}{
		{"protocol", `{"inputTokens":10,"outputTokens":2,"cacheReadTokens":900,"cacheCreationTokens":40}`, Usage{10, 2, 900, 40, nil}},
		{"anthropic", `{"input_tokens":10,"output_tokens":2,"cache_read_input_tokens":900,"cache_creation_input_tokens":40}`, Usage{10, 2, 900, 40, nil}},
		{"openai responses", `{"input_tokens":950,"output_tokens":2,"input_tokens_details":{"cached_tokens":900},"cache_write_tokens":40}`, Usage{950, 2, 900, 40, nil}},
		{"openai chat", `{"prompt_tokens":950,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":900,"cache_write_tokens":40}}`, Usage{950, 2, 900, 40, nil}},
		{"camelCase wins", `{"inputTokens":1,"input_tokens":2}`, Usage{InputTokens: 1}},
	} {
		var u Usage
		if err := json.Unmarshal([]byte(tc.in), &u); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if u.InputTokens != tc.want.InputTokens || u.OutputTokens != tc.want.OutputTokens ||
			u.CacheReadTokens != tc.want.CacheReadTokens || u.CacheCreationTokens != tc.want.CacheCreationTokens {
			t.Errorf("%s: %+v, want %+v", tc.name, u, tc.want)
		}
		// It encodes in the protocol's shape, and decodes back to itself.
		b, _ := json.Marshal(u)
		var back Usage
		if err := json.Unmarshal(b, &back); err != nil || back.InputTokens != u.InputTokens || back.CacheReadTokens != u.CacheReadTokens || back.CacheCreationTokens != u.CacheCreationTokens {
			t.Errorf("%s: round trip %s -> %+v", tc.name, b, back)
		}
	}
	var u Usage
	if err := json.Unmarshal([]byte(`{"inputTokens":"x"}`), &u); err == nil {
		t.Error("a string count decoded")
	}
}
