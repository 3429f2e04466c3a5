package providertest

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers/httpapi"
)

// Sleeper stands in for the sleep of a retry policy: it records every wait
// and returns at once. Use its Sleep method as httpapi.RetryPolicy.Sleep.
type Sleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

// Sleep records d and returns ctx.Err() without waiting.
func (s *Sleeper) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, d)
	return ctx.Err()
}

// Waits returns the waits recorded so far, in order.
func (s *Sleeper) Waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.waits)
}

// Prepare readies the endpoint of a vendor client under test: APIKey
// defaults to key and Model to model when the test left them empty, and the
// retry policy sleeps on a new Sleeper, which it returns, so that retries
// do not wait.
func Prepare(e *httpapi.Endpoint, key, model string) *Sleeper {
	sl := &Sleeper{}
	if e.APIKey == "" {
		e.APIKey = key
	}
	if e.Model == "" {
		e.Model = model
	}
	e.Retry.Sleep = sl.Sleep
	return sl
}

// MustJSON decodes s, failing the test when it is not JSON; it is the
// expected side of comparisons with decoded request bodies.
func MustJSON(tb testing.TB, s string) any {
	tb.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		tb.Fatalf("bad JSON %s: %v", s, err)
	}
	return v
}

// Parts decodes each raw JSON content part, failing the test on one that
// does not decode.
func Parts(tb testing.TB, raw ...string) []history.Part {
	tb.Helper()
	parts := make([]history.Part, 0, len(raw))
	for _, r := range raw {
		var p history.Part
		if err := json.Unmarshal([]byte(r), &p); err != nil {
			tb.Fatal(err)
		}
		parts = append(parts, p)
	}
	return parts
}
