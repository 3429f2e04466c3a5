package providertest

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
)

// Step is one scripted answer of a [ScriptedClient]. Steps are consumed in
// order by Generate and Compact alike.
type Step struct {
	// Response answers a Generate call.
	Response *providers.Response
	// Compacted answers a Compact call.
	Compacted *providers.CompactResponse
	// Err is returned instead of an answer when set.
	Err error
	// Func, when set, computes the answer of a Generate call from its request
	// (Response and Err are then ignored for Generate).
	Func func(ctx context.Context, req *providers.Request) (*providers.Response, error)
	// Wait, when set, blocks the call until the channel is closed or ctx is
	// done (the call then returns ctx.Err()): for cancellation and
	// concurrency tests, without sleeping.
	Wait <-chan struct{}
	// Started, when set, is closed when the call starts waiting.
	Started chan<- struct{}
}

// ScriptedClient is a fake provider for tests of other packages: it answers
// Generate and Compact calls from a queue of steps and records every request.
// It is safe for concurrent use.
type ScriptedClient struct {
	mu       sync.Mutex
	steps    []Step
	requests []providers.Request
	compacts []providers.CompactRequest
	calls    int
}

// Scripted returns a client that answers with steps, in order.
func Scripted(steps ...Step) *ScriptedClient {
	return &ScriptedClient{steps: steps}
}

// TextResponse returns a Response whose assistant message is text.
func TextResponse(text string) *providers.Response {
	return &providers.Response{Message: history.NewText(history.Assistant, text), StopReason: "stop"}
}

// Push appends steps to the script.
func (s *ScriptedClient) Push(steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.steps = append(s.steps, steps...)
}

// Requests returns copies of the Generate requests received so far.
func (s *ScriptedClient) Requests() []providers.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// CompactRequests returns copies of the Compact requests received so far.
func (s *ScriptedClient) CompactRequests() []providers.CompactRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.compacts)
}

// Calls returns the number of Generate and Compact calls so far.
func (s *ScriptedClient) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Remaining returns the number of steps not consumed yet.
func (s *ScriptedClient) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.steps)
}

func (s *ScriptedClient) next() (Step, int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if len(s.steps) == 0 {
		return Step{}, s.calls, false
	}
	st := s.steps[0]
	s.steps = s.steps[1:]
	return st, s.calls, true
}

func wait(ctx context.Context, st Step) error {
	if st.Started != nil {
		close(st.Started)
	}
	if st.Wait == nil {
		return ctx.Err()
	}
	select {
	case <-st.Wait:
		return ctx.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// take returns the next step (and its call number) once the step lets the
// call go on, or an error when no step is left or ctx ends first.
func (s *ScriptedClient) take(ctx context.Context, model string) (Step, int, error) {
	st, n, ok := s.next()
	if !ok {
		return st, n, &providers.Error{Kind: providers.KindRejected, Provider: "scripted", Model: model,
			Message: fmt.Sprintf("scripted: no step left for call %d", n)}
	}
	return st, n, wait(ctx, st)
}

// Generate records req and answers with the next step.
func (s *ScriptedClient) Generate(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	rec := *req
	rec.Messages = slices.Clone(req.Messages)
	rec.Tools = slices.Clone(req.Tools)
	s.mu.Lock()
	s.requests = append(s.requests, rec)
	s.mu.Unlock()
	st, n, err := s.take(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	if st.Func != nil {
		return st.Func(ctx, req)
	}
	if st.Err != nil {
		return nil, st.Err
	}
	if st.Response == nil {
		return nil, &providers.Error{Kind: providers.KindRejected, Provider: "scripted", Model: req.Model,
			Message: fmt.Sprintf("scripted: step %d has no Response for Generate", n)}
	}
	r := *st.Response
	return &r, nil
}

// Compact records req and answers with the next step.
func (s *ScriptedClient) Compact(ctx context.Context, req *providers.CompactRequest) (*providers.CompactResponse, error) {
	rec := *req
	rec.Input = slices.Clone(req.Input)
	s.mu.Lock()
	s.compacts = append(s.compacts, rec)
	s.mu.Unlock()
	st, n, err := s.take(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	if st.Err != nil {
		return nil, st.Err
	}
	if st.Compacted == nil {
		return nil, &providers.Error{Kind: providers.KindRejected, Provider: "scripted", Model: req.Model,
			Message: fmt.Sprintf("scripted: step %d has no Compacted for Compact", n)}
	}
	r := *st.Compacted
	r.Output = slices.Clone(st.Compacted.Output)
	return &r, nil
}

// GeneratorOnly returns s as a plain Generator that does not implement
// Compactor, for routes without a native compaction endpoint.
func (s *ScriptedClient) GeneratorOnly() providers.Generator { return generatorOnly{s} }

type generatorOnly struct{ s *ScriptedClient }

func (g generatorOnly) Generate(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	return g.s.Generate(ctx, req)
}
