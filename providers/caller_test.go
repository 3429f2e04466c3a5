package providers_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/providertest"
)

func post(t *testing.T, srv *providertest.Server, p providers.RetryPolicy) (*providertest.Sleeper, error) {
	t.Helper()
	sl := &providertest.Sleeper{}
	if p.Sleep == nil {
		p.Sleep = sl.Sleep
	}
	c := &providers.Caller{Provider: "p", Retry: p}
	resp, err := c.Post(context.Background(), providers.Call{Model: "m", URL: srv.URL + "/x", Body: []byte(`{}`)})
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
		policy   providers.RetryPolicy
		kind     providers.Kind
		requests int
	}{
		{"bounded attempts", []providertest.Reply{boom, boom, boom}, providers.RetryPolicy{MaxAttempts: 2}, providers.KindServer, 2},
		{"retries disabled", []providertest.Reply{boom}, providers.RetryPolicy{MaxAttempts: 1}, providers.KindServer, 1},
		{"409 retried", []providertest.Reply{providertest.OpenAIError(409, "conflict", "", "lock timeout"), ok}, providers.RetryPolicy{}, "", 2},
		{"501 not retried", []providertest.Reply{providertest.JSON(501, `not implemented`)}, providers.RetryPolicy{}, providers.KindServer, 1},
		{"x-should-retry true on 400", []providertest.Reply{
			providertest.OpenAIError(400, "invalid_request_error", "", "transient").WithHeader("X-Should-Retry", "true"), ok},
			providers.RetryPolicy{}, "", 2},
		{"capacity never retried", []providertest.Reply{
			providertest.OpenAIError(400, "invalid_request_error", "context_length_exceeded", "too long").WithHeader("X-Should-Retry", "true")},
			providers.RetryPolicy{}, providers.KindCapacity, 1},
		{"auth not retried", []providertest.Reply{providertest.OpenAIError(401, "invalid_request_error", "invalid_api_key", "bad key")},
			providers.RetryPolicy{}, providers.KindAuth, 1},
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
	sl, _ := post(t, srv, providers.RetryPolicy{MaxAttempts: 5, BaseDelay: 100 * time.Millisecond, MaxDelay: 300 * time.Millisecond})
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
	c := &providers.Caller{Provider: "p", Retry: providers.RetryPolicy{Sleep: func(ctx context.Context, d time.Duration) error {
		cancel()
		return ctx.Err()
	}}}
	_, err := c.Post(ctx, providers.Call{Model: "m", URL: srv.URL, Body: []byte(`{}`)})
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
	c := &providers.Caller{Provider: "p"}
	if _, err := c.Post(ctx, providers.Call{Model: "m", URL: srv.URL, Body: []byte(`{}`)}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	d := providers.DefaultRetryPolicy()
	if d.MaxAttempts != 3 || d.BaseDelay != 500*time.Millisecond || d.MaxDelay != 8*time.Second || d.MaxRetryAfter != time.Minute {
		t.Errorf("default policy = %+v", d)
	}
}

func TestReadSSE(t *testing.T) {
	stream := ": comment\r\n" +
		"event: first\r\n" +
		"data: line one\r\n" +
		"data: line two\r\n" +
		"\r\n" +
		"id: 7\n" +
		"retry: 100\n" +
		"\n" +
		"data:no-space\n\n" +
		"event: ignored-without-data\n\n" +
		"data: {\"last\":true}" // no terminating blank line
	type ev struct{ name, data string }
	var got []ev
	err := providers.ReadSSE(strings.NewReader(stream), func(name, data string) error {
		got = append(got, ev{name, data})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []ev{{"first", "line one\nline two"}, {"", "no-space"}, {"", `{"last":true}`}}
	if !slices.Equal(got, want) {
		t.Errorf("events = %q, want %q", got, want)
	}

	n := 0
	err = providers.ReadSSE(strings.NewReader("data: a\n\ndata: b\n\ndata: c\n\n"), func(_, data string) error {
		n++
		if data == "b" {
			return io.EOF
		}
		return nil
	})
	if err != nil || n != 2 {
		t.Errorf("io.EOF stop: err %v after %d events", err, n)
	}
	sentinel := errors.New("stop")
	if err := providers.ReadSSE(strings.NewReader("data: a\n\n"), func(string, string) error { return sentinel }); !errors.Is(err, sentinel) {
		t.Errorf("fn error = %v", err)
	}
	if err := providers.ReadSSE(io.MultiReader(strings.NewReader("data: a\n"), errReader{}), func(string, string) error { return nil }); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("read error = %v", err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }

func TestScripted(t *testing.T) {
	ctx := context.Background()
	boom := &providers.Error{Kind: providers.KindCapacity, Provider: "x", Model: "y", InputTokens: 9000}
	s := providers.Scripted(
		providers.Step{Err: boom},
		providers.Step{Compacted: &providers.CompactResponse{Output: []history.Message{history.NewText(history.User, "kept")}}},
		providers.Step{Response: providers.TextResponse("summary")},
		providers.Step{Func: func(_ context.Context, req *providers.Request) (*providers.Response, error) {
			return providers.TextResponse("echo " + req.Model), nil
		}},
	)
	var _ providers.Compactor = s
	if _, err := s.Generate(ctx, &providers.Request{Model: "a"}); !providers.IsCapacity(err) {
		t.Errorf("step 1: %v", err)
	}
	cr, err := s.Compact(ctx, &providers.CompactRequest{Model: "b", Input: []history.Message{history.NewText(history.User, "in")}})
	if err != nil || cr.Output[0].Text() != "kept" {
		t.Errorf("step 2: %v %v", cr, err)
	}
	msgs := []history.Message{history.NewText(history.User, "hello")}
	res, err := s.Generate(ctx, &providers.Request{Model: "c", Messages: msgs})
	if err != nil || res.Message.Text() != "summary" || res.Message.Role != history.Assistant {
		t.Errorf("step 3: %v %v", res, err)
	}
	msgs[0] = history.NewText(history.User, "mutated")
	if res, _ := s.Generate(ctx, &providers.Request{Model: "d"}); res.Message.Text() != "echo d" {
		t.Errorf("step 4: %v", res.Message.Text())
	}
	if _, err := s.Generate(ctx, &providers.Request{Model: "e"}); err == nil || !strings.Contains(err.Error(), "no step left") {
		t.Errorf("exhausted: %v", err)
	}
	reqs := s.Requests()
	if len(reqs) != 4 || reqs[1].Messages[0].Text() != "hello" || len(s.CompactRequests()) != 1 || s.Calls() != 5 || s.Remaining() != 0 {
		t.Errorf("records: %d requests, calls %d", len(reqs), s.Calls())
	}
	if _, ok := s.GeneratorOnly().(providers.Compactor); ok {
		t.Error("GeneratorOnly implements Compactor")
	}
}

func TestScriptedWaitsForCancel(t *testing.T) {
	started := make(chan struct{})
	s := providers.Scripted(providers.Step{Response: providers.TextResponse("late"), Wait: make(chan struct{}), Started: started})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := s.GeneratorOnly().Generate(ctx, &providers.Request{})
		errc <- err
	}()
	<-started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}

	release := make(chan struct{})
	started = make(chan struct{})
	s.Push(providers.Step{Response: providers.TextResponse("done"), Wait: release, Started: started})
	resc := make(chan *providers.Response, 1)
	go func() {
		res, _ := s.Generate(context.Background(), &providers.Request{})
		resc <- res
	}()
	<-started
	close(release)
	if res := <-resc; res == nil || res.Message.Text() != "done" {
		t.Errorf("released: %v", res)
	}
}

func TestTimeoutIsNotRetried(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{Func: func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers; the client gives up
	}})
	sl := &providertest.Sleeper{}
	c := &providers.Caller{Provider: "p", HTTPClient: &http.Client{Timeout: 50 * time.Millisecond}, Retry: providers.RetryPolicy{Sleep: sl.Sleep}}
	_, err := c.Post(context.Background(), providers.Call{Model: "m", URL: srv.URL, Body: []byte(`{}`)})
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
	_, err = c.Post(ctx, providers.Call{Model: "m", URL: srv.URL, Body: []byte(`{}`)})
	if providers.KindOf(err) != providers.KindTimeout || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline: %v", err)
	}
}
