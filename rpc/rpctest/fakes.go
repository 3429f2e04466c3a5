package rpctest

import (
	"context"
	"fmt"
	"sync"

	"github.com/vtcode/vtcode-ls/config"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/session"
	"github.com/vtcode/vtcode-ls/summary"
)

// Clients returns a session.ClientFactory that serves fake providers, chosen
// by the route's provider name:
//
//   - "blocking": every call blocks until its context is cancelled; b
//     (when non-nil) counts the calls.
//   - "failing": every call fails with a provider rejection.
//   - "" and "offline": the embedded offline summarizer (package summary),
//     as the daemon serves them.
//   - any other name: [Summarizer], a deterministic summarizer.
func Clients(b *Blocking) session.ClientFactory {
	return func(route providers.Route, _ config.Config) (providers.Generator, error) {
		switch route.Provider {
		case "blocking":
			if b == nil {
				b = &Blocking{}
			}
			return b, nil
		case "failing":
			return failing{route}, nil
		case "", "offline":
			return summary.New(), nil
		}
		return Summarizer{}, nil
	}
}

// Summarizer is a provider whose summary names the number of messages it
// was given. Same input, same output.
type Summarizer struct{}

// Generate implements providers.Generator.
func (Summarizer) Generate(_ context.Context, req *providers.Request) (*providers.Response, error) {
	text := fmt.Sprintf("Goal: the test scenario.\nSummarized %d messages.", len(req.Messages))
	return &providers.Response{
		Message: history.NewText(history.Assistant, text),
		Usage:   history.Usage{InputTokens: 100, OutputTokens: 10},
	}, nil
}

// Blocking is a provider whose calls block until their context is
// cancelled, for cancellation tests.
type Blocking struct {
	mu      sync.Mutex
	calls   int
	started chan struct{} // closed at the first call
}

// Generate implements providers.Generator: it waits for ctx and returns its
// error.
func (b *Blocking) Generate(ctx context.Context, _ *providers.Request) (*providers.Response, error) {
	b.mu.Lock()
	b.calls++
	if b.started == nil {
		b.started = make(chan struct{})
	}
	if b.calls == 1 {
		close(b.started)
	}
	b.mu.Unlock()
	<-ctx.Done()
	return nil, ctx.Err()
}

// Started returns a channel closed when the first call has begun.
func (b *Blocking) Started() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.started == nil {
		b.started = make(chan struct{})
	}
	return b.started
}

// Calls returns the number of calls so far.
func (b *Blocking) Calls() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls
}

// failing is a provider whose calls fail with a provider rejection.
type failing struct{ route providers.Route }

func (f failing) Generate(context.Context, *providers.Request) (*providers.Response, error) {
	return nil, &providers.Error{
		Kind:     providers.KindRejected,
		Provider: f.route.Provider,
		Model:    f.route.Model,
		Status:   400,
		Message:  "the fake provider rejects every request",
	}
}
