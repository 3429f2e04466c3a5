package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/httpapi"
	"github.com/vtcode/vtcode-ls/providers/providertest"
)

func post(t *testing.T, srv *providertest.Server, p httpapi.RetryPolicy) (*providertest.Sleeper, error) {
	t.Helper()
	sl := &providertest.Sleeper{}
	if p.Sleep == nil {
		p.Sleep = sl.Sleep
	}
	c := &httpapi.Caller{Provider: "p", Retry: p}
	resp, err := c.Post(context.Background(), httpapi.Call{Model: "m", URL: srv.URL + "/x", Body: []byte(`{}`)})
	if err == nil {
		resp.Body.Close()
	}
	return sl, err
}

func TestRetryPolicy(t *testing.T) {
	boom := providertest.OpenAIError(500, "server_error", "", "boom")
	ok := providertest.JSON(200, `{}`)
	cases := []struct {
		name     string
		replies  []providertest.Reply
		policy   httpapi.RetryPolicy
		kind     providers.Kind
		requests int
	}{
		{"bounded attempts", []providertest.Reply{boom, boom, boom}, httpapi.RetryPolicy{MaxAttempts: 2}, providers.KindServer, 2},
		{"retries disabled", []providertest.Reply{boom}, httpapi.RetryPolicy{MaxAttempts: 1}, providers.KindServer, 1},
		{"409 retried", []providertest.Reply{providertest.OpenAIError(409, "conflict", "", "lock timeout"), ok}, httpapi.RetryPolicy{}, "", 2},
		{"501 not retried", []providertest.Reply{providertest.JSON(501, `not implemented`)}, httpapi.RetryPolicy{}, providers.KindServer, 1},
		{"x-should-retry true on 400", []providertest.Reply{
			providertest.OpenAIError(400, "invalid_request_error", "", "transient").WithHeader("X-Should-Retry", "true"), ok},
			httpapi.RetryPolicy{}, "", 2},
		{"capacity never retried", []providertest.Reply{
			providertest.OpenAIError(400, "invalid_request_error", "context_length_exceeded", "too long").WithHeader("X-Should-Retry", "true")},
			httpapi.RetryPolicy{}, providers.KindCapacity, 1},
		{"auth not retried", []providertest.Reply{providertest.OpenAIError(401, "invalid_request_error", "invalid_api_key", "bad key")},
			httpapi.RetryPolicy{}, providers.KindAuth, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := providertest.NewServer(t, tc.replies...)
			_, err := post(t, srv, tc.policy)
			if providers.KindOf(err) != tc.kind {
				t.Errorf("kind %q (%v), want %q", providers.KindOf(err), err, tc.kind)
			}
			if n := len(srv.Requests()); n != tc.requests {
				t.Errorf("requests = %d, want %d", n, tc.requests)
			}
		})
	}
}

func TestBackoffGrowsAndIsCapped(t *testing.T) {
	boom := providertest.OpenAIError(503, "server_error", "", "busy")
	srv := providertest.NewServer(t, boom, boom, boom, boom, boom)
	sl, _ := post(t, srv, httpapi.RetryPolicy{MaxAttempts: 5, BaseDelay: 100 * time.Millisecond, MaxDelay: 300 * time.Millisecond})
	want := []time.Duration{100, 200, 300, 300}
	waits := sl.Waits()
	if len(waits) != len(want) {
		t.Fatalf("waits = %v", waits)
	}
	for i, w := range waits {
		lo, hi := want[i]*time.Millisecond*8/10, want[i]*time.Millisecond*12/10
		if i >= 2 {
			lo, hi = 240*time.Millisecond, 300*time.Millisecond
		}
		if w < lo || w > hi {
			t.Errorf("wait %d = %v, want in [%v, %v]", i, w, lo, hi)
		}
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	srv := providertest.NewServer(t, providertest.OpenAIError(500, "server_error", "", "boom"), providertest.JSON(200, `{}`))
	ctx, cancel := context.WithCancel(context.Background())
	c := &httpapi.Caller{Provider: "p", Retry: httpapi.RetryPolicy{Sleep: func(ctx context.Context, d time.Duration) error {
		cancel()
		return ctx.Err()
	}}}
	_, err := c.Post(ctx, httpapi.Call{Model: "m", URL: srv.URL, Body: []byte(`{}`)})
	if !errors.Is(err, context.Canceled) || providers.KindOf(err) != "" {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("requests = %d", n)
	}
}

func TestDefaultSleepHonoursContext(t *testing.T) {
	srv := providertest.NewServer(t, providertest.RateLimited("30"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := &httpapi.Caller{Provider: "p"}
	if _, err := c.Post(ctx, httpapi.Call{Model: "m", URL: srv.URL, Body: []byte(`{}`)}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	d := httpapi.DefaultRetryPolicy()
	if d.MaxAttempts != 3 || d.BaseDelay != 500*time.Millisecond || d.MaxDelay != 8*time.Second || d.MaxRetryAfter != time.Minute {
		t.Errorf("default policy = %+v", d)
	}
}

func TestTimeoutIsNotRetried(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{Func: func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers; the client gives up
	}})
	sl := &providertest.Sleeper{}
	c := &httpapi.Caller{Provider: "p", HTTPClient: &http.Client{Timeout: 50 * time.Millisecond}, Retry: httpapi.RetryPolicy{Sleep: sl.Sleep}}
	_, err := c.Post(context.Background(), httpapi.Call{Model: "m", URL: srv.URL, Body: []byte(`{}`)})
	if providers.KindOf(err) != providers.KindTimeout {
		t.Fatalf("err = %v, want kind timeout", err)
	}
	if n := len(srv.Requests()); n != 1 || len(sl.Waits()) != 0 {
		t.Errorf("requests = %d, waits = %v", n, sl.Waits())
	}

	// A caller deadline is a timeout too, and unwraps to context.DeadlineExceeded.
	srv.Push(providertest.Reply{Func: func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	c.HTTPClient = nil
	_, err = c.Post(ctx, httpapi.Call{Model: "m", URL: srv.URL, Body: []byte(`{}`)})
	if providers.KindOf(err) != providers.KindTimeout || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline: %v", err)
	}
}
