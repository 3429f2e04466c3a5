package providertest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/providertest"
)

func TestScripted(t *testing.T) {
	ctx := context.Background()
	boom := &providers.Error{Kind: providers.KindCapacity, Provider: "x", Model: "y", InputTokens: 9000}
	s := providertest.Scripted(
		providertest.Step{Err: boom},
		providertest.Step{Compacted: &providers.CompactResponse{Output: []history.Message{history.NewText(history.User, "kept")}}},
		providertest.Step{Response: providertest.TextResponse("summary")},
		providertest.Step{Func: func(_ context.Context, req *providers.Request) (*providers.Response, error) {
			return providertest.TextResponse("echo " + req.Model), nil
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
	s := providertest.Scripted(providertest.Step{Response: providertest.TextResponse("late"), Wait: make(chan struct{}), Started: started})
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
	s.Push(providertest.Step{Response: providertest.TextResponse("done"), Wait: release, Started: started})
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
