package compaction

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
)

// answers collects what Options.Answered hears; safe for concurrent use.
type answers struct {
	mu sync.Mutex
	us []history.Usage
}

func (a *answers) hear(u history.Usage) {
	a.mu.Lock()
	a.us = append(a.us, u)
	a.mu.Unlock()
}

func (a *answers) list() []history.Usage {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]history.Usage(nil), a.us...)
}

// Pass 1 reports the usage of its call as it answers, and its note keeps
// the pass's tag: the Compact whose pass 2 uses it names that tag and
// reports its own call only.
func TestAnsweredPassOneAndItsNote(t *testing.T) {
	msgs := conv(40, 29, 471)
	client := twoPassClient()
	opts := localOpts(client)
	var pass1, final answers
	opts.Answered, opts.Tag = pass1.hear, "pass-1"
	tp := prefired(t, msgs, opts)
	if got := pass1.list(); len(got) != 1 || got[0].InputTokens != 10 || got[0].OutputTokens != 2 {
		t.Fatalf("pass 1 reported %+v, want its one call's usage", got)
	}
	opts.TwoPass, opts.Answered, opts.Tag = tp, final.hear, "final"
	res, err := Compact(context.Background(), append(msgs, conv(2, 29, 471)...), opts)
	if err != nil {
		t.Fatal(err)
	}
	if !res.CachedNote || res.NoteTag != "pass-1" {
		t.Errorf("result used note %v tagged %q, want the note of pass-1", res.CachedNote, res.NoteTag)
	}
	if got := final.list(); len(got) != 1 || len(pass1.list()) != 1 {
		t.Errorf("the compaction reported %d calls and pass 1 %d, want 1 each", len(got), len(pass1.list()))
	}
}

// A call that answered is reported even when what it answered is then of
// no use: an empty summary fails the compaction, a pass 1 abandoned while
// its call answers keeps no note; a call that fails without an answer is
// not reported.
func TestAnsweredWhateverHappensNext(t *testing.T) {
	msgs := conv(40, 29, 471)
	empty := &scripted{reply: func(context.Context, int, *providers.Request) (*providers.Response, error) {
		return &providers.Response{Message: history.NewText(history.Assistant, "  "), Usage: history.Usage{InputTokens: 700, OutputTokens: 1}}, nil
	}}
	var a answers
	opts := localOpts(empty)
	opts.Answered = a.hear
	if _, err := Compact(context.Background(), msgs, opts); !errors.As(err, new(*Error)) {
		t.Fatalf("empty summary: %v, want a compaction error", err)
	}
	if got := a.list(); len(got) != 1 || got[0].InputTokens != 700 {
		t.Errorf("empty summary reported %+v, want its usage", got)
	}

	// The provider answers as the pass is abandoned.
	started := make(chan struct{})
	late := &scripted{reply: func(ctx context.Context, _ int, _ *providers.Request) (*providers.Response, error) {
		close(started)
		<-ctx.Done()
		return reply("NOTE1"), nil
	}}
	var b answers
	opts = localOpts(late)
	opts.Answered = b.hear
	tp := NewTwoPass(nil)
	tp.Prefire(context.Background(), msgs, opts)
	<-started
	tp.Invalidate()
	tp.Wait()
	if got := b.list(); len(got) != 1 || got[0].InputTokens != 10 {
		t.Errorf("abandoned pass 1 reported %+v, want its answered call", got)
	}
	if _, _, _, ok := tp.lookup(msgs, opts.Route); ok {
		t.Error("an abandoned pass 1 left a note")
	}
	tp.Close()

	var c answers
	failing := &scripted{reply: func(context.Context, int, *providers.Request) (*providers.Response, error) {
		return nil, &providers.Error{Kind: providers.KindServer, Status: 500, Message: "down"}
	}}
	opts = localOpts(failing)
	opts.Answered = c.hear
	if _, err := Compact(context.Background(), msgs, opts); err == nil {
		t.Fatal("a failing provider compacted")
	}
	if got := c.list(); len(got) != 0 {
		t.Errorf("a call without an answer reported %+v", got)
	}
}

// A compaction's usage keeps every kind the provider reported: 1-hour
// cache writes and reasoning are summed with the rest.
func TestResultUsageKeepsEveryKind(t *testing.T) {
	client := &scripted{reply: func(context.Context, int, *providers.Request) (*providers.Response, error) {
		r := reply("SUMMARY")
		r.Usage = history.Usage{InputTokens: 100, CacheReadTokens: 900, CacheCreationTokens: 400, CacheCreation1hTokens: 300, OutputTokens: 50, ReasoningTokens: 20}
		return r, nil
	}}
	opts := localOpts(client)
	opts.Hierarchical = true
	res, err := Compact(context.Background(), conv(40, 29, 471), opts)
	if err != nil {
		t.Fatal(err)
	}
	n := res.Calls
	want := history.Usage{InputTokens: 100 * n, CacheReadTokens: 900 * n, CacheCreationTokens: 400 * n, CacheCreation1hTokens: 300 * n, OutputTokens: 50 * n, ReasoningTokens: 20 * n}
	if n != 2 || res.Usage.InputTokens != want.InputTokens || res.Usage.CacheCreation1hTokens != want.CacheCreation1hTokens || res.Usage.ReasoningTokens != want.ReasoningTokens {
		t.Errorf("%d calls, usage %+v; want 2 calls and %+v", n, res.Usage, want)
	}
}
