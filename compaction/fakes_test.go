package compaction

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
)

// approx makes every estimate computable by hand: tokens(s) = ceil(bytes/4),
// a message is 4 + its text tokens.
var approx = history.NewEstimator(history.Approx)

// msg returns a message of role r whose estimate is exactly tokens (≥ 6),
// with a distinct label at the start of its text.
func msg(r history.Role, label string, tokens int) history.Message {
	body := label + " "
	n := 4*(tokens-history.MessageOverhead) - len(body)
	if n < 0 {
		panic("msg: label too long")
	}
	return history.NewText(r, body+strings.Repeat("x", n))
}

// conv returns groups protocol groups of a user message (userTok) and an
// assistant reply (asstTok).
func conv(groups, userTok, asstTok int) []history.Message {
	var out []history.Message
	for i := range groups {
		out = append(out, msg(history.User, fmt.Sprintf("u%03d", i), userTok), msg(history.Assistant, fmt.Sprintf("a%03d", i), asstTok))
	}
	return out
}

// replyFunc answers the n-th call (0-based).
type replyFunc func(ctx context.Context, n int, req *providers.Request) (*providers.Response, error)

// scripted is a providers.Generator whose answers come from a function; it
// records every request. Safe for concurrent use.
type scripted struct {
	mu    sync.Mutex
	reqs  []*providers.Request
	reply replyFunc
}

func (s *scripted) Generate(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	s.mu.Lock()
	n := len(s.reqs)
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	return s.reply(ctx, n, req)
}

func (s *scripted) requests() []*providers.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*providers.Request(nil), s.reqs...)
}

// answer always replies text.
func answer(text string) *scripted {
	return &scripted{reply: func(context.Context, int, *providers.Request) (*providers.Response, error) {
		return reply(text), nil
	}}
}

func reply(text string) *providers.Response {
	return &providers.Response{Message: history.NewText(history.Assistant, text), Usage: history.Usage{InputTokens: 10, OutputTokens: 2}}
}

// compactor adds a scripted native standalone endpoint.
type compactor struct {
	*scripted
	mu      sync.Mutex
	creqs   []*providers.CompactRequest
	compact func(ctx context.Context, req *providers.CompactRequest) (*providers.CompactResponse, error)
}

func (c *compactor) Compact(ctx context.Context, req *providers.CompactRequest) (*providers.CompactResponse, error) {
	c.mu.Lock()
	c.creqs = append(c.creqs, req)
	c.mu.Unlock()
	return c.compact(ctx, req)
}

func capacityErr(input int) error {
	return &providers.Error{Kind: providers.KindCapacity, Provider: "test", Model: "m", Status: 400, Message: "prompt is too long", InputTokens: input}
}

// reqTokens is the estimate of a request's messages.
func reqTokens(req *providers.Request) int {
	n := 0
	for _, m := range req.Messages {
		n += approx.Message(&m)
	}
	return n
}

// wholeSummarizer is a providers.Summarizer (and a Generator that must not
// be called); it records every summary request.
type wholeSummarizer struct {
	mu        sync.Mutex
	reqs      []*providers.SummaryRequest
	generated int
	reply     func(req *providers.SummaryRequest) (*providers.Response, error)
}

func (s *wholeSummarizer) Summarize(_ context.Context, req *providers.SummaryRequest) (*providers.Response, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	return s.reply(req)
}

func (s *wholeSummarizer) Generate(context.Context, *providers.Request) (*providers.Response, error) {
	s.mu.Lock()
	s.generated++
	s.mu.Unlock()
	return reply("generated"), nil
}
