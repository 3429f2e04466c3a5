// Package compaction replaces a session's live history with a shorter one
// when clearing old tool results is not enough (docs/design.md §8).
//
// [Compact] is a value transform: it takes the full live history and
// [Options] describing the route, the window and the provider client, and
// returns a [Result] holding the new history. It never modifies its input,
// so a failed or cancelled compaction changes nothing; the caller swaps the
// result in.
//
// Three strategies exist ([StrategyFor] picks one per route from a table):
//
//   - [NativeStandalone]: the provider's /responses/compact endpoint
//     ([providers.Compactor]); its output becomes the new history as is.
//   - [NativeInline]: an Anthropic generate request carrying the
//     compact_20260112 edit; the returned compaction block becomes the first
//     message of the new history, followed by the continuity tail.
//   - [Local]: a summary written by any [providers.Generator] over a bounded
//     fork of the history, or, when the client is a [providers.Summarizer]
//     (the offline extractive summarizer), over the whole history with only
//     its output bounded; rebuilt as a "Previous conversation summary:\n…"
//     system message, retained user messages and the continuity tail,
//     bounded to the window.
//
// A fork or a tail is cut at batch boundaries, never only at protocol-group
// boundaries: one long agent turn is a single group, and dropping it whole
// drops the work. A fork sends the newest batches whole and every older one
// as a bounded preview that keeps ids, short arguments (commands, paths) and
// the output lines carrying exit codes, errors and paths, led by a
// "[cut; the full output showed …]" note of the exit code, errors and
// changed files (from the history's evidence record, package evidence) that
// the cut hides; what the user typed is previewed first. The continuity
// tail keeps the newest whole batches of the agent's last turn even when a
// short user follow-up comes after it.
//
// A native strategy that fails or does not fire falls back to Local, and the
// result says so. Local summaries respect a budget derived from the window
// ([SummaryBudget]); inputs that cannot fit fail before any provider call,
// and a context-capacity rejection is retried with a halved budget.
//
// [Readiness] computes the compaction and soft thresholds of docs/design.md §8.1, and
// [TwoPass] runs pass 1 of two-pass compaction in the background once the
// soft threshold is crossed, so that compaction time costs one call.
package compaction
