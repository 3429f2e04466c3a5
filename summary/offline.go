// Package summary writes the summary of a compaction from the record: the
// embedded default provider (route name "offline"), a deterministic,
// extractive summarizer that needs no network (docs/design.md §8.9).
//
// It implements [providers.Summarizer]: it reads the whole history, earlier
// summaries included (merged in, so repeated compaction keeps the original
// goal and every restriction), and bounds only its output. It writes the
// sections of the default summary prompt from what the record shows, read
// by package evidence:
//
//   - the goal and the user's restrictions come from the messages the user
//     typed, across the whole session; messages the agent's harness injected
//     in the user's turn (reminders, environment blocks, command echoes,
//     continuation summaries, observations, format nags) are not the user's
//     request;
//   - checks are the commands that ran, each with its exit code in whatever
//     format the harness printed it and its latest outcome; a failure that a
//     later run fixed is history, not a next step;
//   - files changed include changes made through a shell (heredocs, sed -i,
//     redirections, git mv/rm, apply_patch envelopes); rejected edits are
//     listed as not applied, never as changes;
//   - every commit is listed with its subject, and the simple commands run
//     inside chains and scripts with the outcome of their line;
//   - every message the user typed keeps a form (short ones whole, long
//     ones cut at both ends with a marker), paths are shown as the record
//     holds them;
//   - errors keep the first occurrence of each distinct error and the latest;
//   - the final state says whether the last check passed or failed and
//     whether the work was committed, pushed, released or submitted.
//
// Bounded lists keep what matters first: every user restriction, edited
// files before files only read, unfixed failures and test runs before
// inspections, the first and the latest distinct errors. Under a tight
// bound the record's lists go below their floors before the user's verbatim
// messages are dropped. A summary never
// claims what the record contradicts. The same input always yields
// byte-identical output.
//
// [New] also answers one-shot [providers.Generator] requests, for callers
// that send a bounded fork: there the last message is the summary prompt and
// is not summarized, and instructions follow
// [providers.SummaryInstructions] in it.
package summary

import (
	"context"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
)

// Name is the provider name of the offline summarizer.
const Name = "offline"

// MaxOutputTokens bounds every summary (≈ 4 bytes per token); a request's
// smaller MaxOutputTokens wins.
const MaxOutputTokens = 4096

// Client is the offline summarizer: a [providers.Generator] and a
// [providers.Summarizer].
type Client interface {
	providers.Generator
	providers.Summarizer
}

// New returns the offline summarizer. It is safe for concurrent use.
func New() Client { return summarizer{} }

type summarizer struct{}

// Summarize returns an extractive summary of the whole of req.Messages.
func (summarizer) Summarize(ctx context.Context, req *providers.SummaryRequest) (*providers.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	text, err := summaryText(ctx, req.Messages, clip(req.Instructions, maxInstructionChars), req.MaxOutputTokens)
	if err != nil {
		return nil, err
	}
	est := history.NewEstimator(history.Approx)
	in := 0
	for _, m := range req.Messages {
		in += est.Message(&m) // m is a copy: the request's messages keep their caches
	}
	return response(text, in, est), nil
}

// Generate returns an extractive summary of req.Messages as the assistant
// message text. The last message, when it is a user message, is the summary
// prompt: it is not summarized, and the instructions after
// [providers.SummaryInstructions] in it are carried first.
func (summarizer) Generate(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	msgs := req.Messages
	instructions := ""
	if n := len(msgs); n > 1 && msgs[n-1].Role == history.User {
		prompt := msgs[n-1].Text()
		if _, after, ok := strings.Cut(prompt, providers.SummaryInstructions); ok {
			instructions = clip(after, maxInstructionChars)
		}
		msgs = msgs[:n-1] // the summary prompt
	}
	text, err := summaryText(ctx, msgs, instructions, req.MaxOutputTokens)
	if err != nil {
		return nil, err
	}
	est := history.NewEstimator(history.Approx)
	in := est.Prefix(req.System, req.Tools)
	for _, m := range req.Messages {
		in += est.Message(&m)
	}
	return response(text, in, est), nil
}

func response(text string, in int, est *history.Estimator) *providers.Response {
	return &providers.Response{
		Message:    history.NewText(history.Assistant, text),
		Usage:      history.Usage{InputTokens: in, OutputTokens: est.Text(text)},
		StopReason: "end_turn",
	}
}

// summaryText writes the summary of msgs within maxOut tokens (0: the default).
func summaryText(ctx context.Context, msgs []history.Message, instructions string, maxOut int) (string, error) {
	f, err := extract(ctx, msgs)
	if err != nil {
		return "", err
	}
	limit := MaxOutputTokens
	if maxOut > 0 {
		limit = min(limit, maxOut)
	}
	// An extractive summary cannot follow free-form instructions; it carries
	// them at the top, so the model that continues sees what the user asked
	// the summary to focus on.
	if instructions == "" {
		instructions = clip(f.priorFocus, maxInstructionChars) // a later compaction keeps the focus
	}
	head := ""
	if instructions != "" {
		head = "## " + secFocus + "\n" + instructions + "\n\n"
	}
	body, err := f.render(ctx, max(0, limit*4-len(head)))
	if err != nil {
		return "", err
	}
	return head + body, nil
}
