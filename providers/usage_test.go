package providers

import (
	"encoding/json"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
)

// A usage passed on as this protocol writes it or as the provider reported
// it gives the same cache counts.
func TestReportedUsage(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     history.Usage
	}{
		{"protocol", `{"inputTokens":10,"outputTokens":2,"cacheReadTokens":900,"cacheCreationTokens":40}`, history.Usage{InputTokens: 10, OutputTokens: 2, CacheReadTokens: 900, CacheCreationTokens: 40}},
		{"anthropic", `{"input_tokens":10,"output_tokens":2,"cache_read_input_tokens":900,"cache_creation_input_tokens":40}`, history.Usage{InputTokens: 10, OutputTokens: 2, CacheReadTokens: 900, CacheCreationTokens: 40}},
		{"openai responses", `{"input_tokens":950,"output_tokens":2,"input_tokens_details":{"cached_tokens":900},"cache_write_tokens":40}`, history.Usage{InputTokens: 950, OutputTokens: 2, CacheReadTokens: 900, CacheCreationTokens: 40}},
		{"openai chat", `{"prompt_tokens":950,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":900,"cache_write_tokens":40}}`, history.Usage{InputTokens: 950, OutputTokens: 2, CacheReadTokens: 900, CacheCreationTokens: 40}},
		{"camelCase wins", `{"inputTokens":1,"input_tokens":2}`, history.Usage{InputTokens: 1}},
	} {
		var r ReportedUsage
		if err := json.Unmarshal([]byte(tc.in), &r); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := r.Usage(); got.InputTokens != tc.want.InputTokens || got.OutputTokens != tc.want.OutputTokens ||
			got.CacheReadTokens != tc.want.CacheReadTokens || got.CacheCreationTokens != tc.want.CacheCreationTokens {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
