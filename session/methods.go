package session

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/vtcode/vtcode-ls/compaction"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/store"
)

// run runs fn on session id, holding its queue in t's place (see
// [Manager.doIn]), and returns fn's result.
func run[R any](ctx context.Context, m *Manager, t *Ticket, id string, fn func(context.Context, *Session) (R, error)) (R, error) {
	var res R
	err := m.doIn(ctx, t, id, func(ctx context.Context, s *Session) error {
		var err error
		res, err = fn(ctx, s)
		return err
	})
	return res, err
}

// Limits bound what one call may carry, so that a single request cannot
// make the daemon spend time and memory out of proportion (every cost is
// linear in what a call carries; these bound the constant). A zero field
// takes its default.
type Limits struct {
	// MaxMessageBytes bounds one message's text (see [history.Message.Size]),
	// and the system prompt with the tool schemas of a request; default
	// DefaultMaxMessageBytes.
	MaxMessageBytes int
	// MaxToolCalls bounds the tool calls of one message; default
	// DefaultMaxToolCalls.
	MaxToolCalls int
	// MaxMessagesPerCall bounds the messages of one appendMessages or
	// prepareRequest; default DefaultMaxMessagesPerCall.
	MaxMessagesPerCall int
}

// The default [Limits].
const (
	DefaultMaxMessageBytes    = 32 << 20
	DefaultMaxToolCalls       = 1024
	DefaultMaxMessagesPerCall = 50_000
)

func (l Limits) withDefaults() Limits {
	if l.MaxMessageBytes <= 0 {
		l.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if l.MaxToolCalls <= 0 {
		l.MaxToolCalls = DefaultMaxToolCalls
	}
	if l.MaxMessagesPerCall <= 0 {
		l.MaxMessagesPerCall = DefaultMaxMessagesPerCall
	}
	return l
}

// MaxTokenCount bounds every token count a caller passes (prefixTokens,
// reservedOutputTokens, contextWindow, usage): far above any model's window,
// and low enough that sums of such counts never overflow.
const MaxTokenCount = 1_000_000_000

// checkTokens validates a token count given by a caller.
func checkTokens(path string, n int) error {
	switch {
	case n < 0:
		return paramErr(path, "must be >= 0")
	case n > MaxTokenCount:
		return paramErr(path, "must be <= %d", MaxTokenCount)
	}
	return nil
}

// checkMessages validates messages given by a caller: every role must be
// one of the four protocol roles, and the list and each message within the
// limits.
func (m *Manager) checkMessages(path string, msgs []history.Message) error {
	lim := m.o.Limits.withDefaults()
	if len(msgs) > lim.MaxMessagesPerCall {
		return paramErr(path, "at most %d messages per call, got %d", lim.MaxMessagesPerCall, len(msgs))
	}
	for i := range msgs {
		if err := lim.checkMessage(fmt.Sprintf("%s[%d]", path, i), &msgs[i]); err != nil {
			return err
		}
	}
	return nil
}

// checkMessage validates one message at path.
func (lim Limits) checkMessage(path string, msg *history.Message) error {
	if !msg.Role.Valid() {
		return paramErr(path+".role", "must be system, user, assistant or tool")
	}
	if n := len(msg.ToolCalls); n > lim.MaxToolCalls {
		return paramErr(path+".toolCalls", "at most %d tool calls per message, got %d", lim.MaxToolCalls, n)
	}
	if n := msg.Size(); n > lim.MaxMessageBytes {
		return paramErr(path, "at most %d bytes per message, got %d", lim.MaxMessageBytes, n)
	}
	return nil
}

// checkPrefix validates the system prompt and tool schemas of a request:
// together at most MaxMessageBytes.
func (lim Limits) checkPrefix(system string, tools []json.RawMessage) error {
	n := len(system)
	if n > lim.MaxMessageBytes {
		return paramErr("systemPrompt", "at most %d bytes, got %d", lim.MaxMessageBytes, n)
	}
	for _, t := range tools {
		n += len(t)
	}
	if n > lim.MaxMessageBytes {
		return paramErr("tools", "at most %d bytes with the system prompt, got %d", lim.MaxMessageBytes, n)
	}
	return nil
}

// AppendMessages appends messages to the live history (durably) and returns
// its new length and estimate.
func (m *Manager) AppendMessages(ctx context.Context, p AppendParams) (*AppendResult, error) {
	if err := m.checkMessages("messages", p.Messages); err != nil {
		return nil, err
	}
	return run(ctx, m, p.Ticket, p.SessionID, func(ctx context.Context, s *Session) (*AppendResult, error) {
		s.syncEstimator()
		if len(p.Messages) > 0 {
			if err := s.record(evMessages, messagesData{Messages: p.Messages}); err != nil {
				return nil, err
			}
		}
		s.notifyPressure(s.refreshStats())
		return &AppendResult{Messages: len(s.live), HistoryTokens: s.est.Messages(s.live)}, nil
	})
}

// History returns a window of the live history: from Offset, at most Limit
// messages (0: all).
func (m *Manager) History(ctx context.Context, p HistoryParams) (*HistoryResult, error) {
	if p.Offset < 0 {
		return nil, paramErr("offset", "must be >= 0")
	}
	if p.Limit < 0 {
		return nil, paramErr("limit", "must be >= 0")
	}
	return run(ctx, m, p.Ticket, p.SessionID, func(ctx context.Context, s *Session) (*HistoryResult, error) {
		from := min(p.Offset, len(s.live))
		to := len(s.live)
		if p.Limit > 0 && p.Limit < to-from { // no from+Limit: it may overflow
			to = from + p.Limit
		}
		msgs := append([]history.Message{}, s.live[from:to]...)
		return &HistoryResult{Messages: msgs, Total: len(s.live)}, nil
	})
}

// PrepareRequest runs the request pipeline of docs/design.md §5 and returns the
// projection to send. prog receives the progress of an automatic
// compaction; nil for none. The call is atomic: when ctx is cancelled before
// it commits, nothing changes, not even the appended messages.
func (m *Manager) PrepareRequest(ctx context.Context, p PrepareParams, prog Progress) (*PrepareResult, error) {
	if err := m.checkMessages("messages", p.Messages); err != nil {
		return nil, err
	}
	if err := m.o.Limits.withDefaults().checkPrefix(p.SystemPrompt, p.Tools); err != nil {
		return nil, err
	}
	if p.PrefixTokens != nil {
		if err := checkTokens("prefixTokens", *p.PrefixTokens); err != nil {
			return nil, err
		}
	}
	if p.ReservedOutputTokens != nil {
		if err := checkTokens("reservedOutputTokens", *p.ReservedOutputTokens); err != nil {
			return nil, err
		}
	}
	for i, t := range p.Tools {
		if !json.Valid(t) {
			return nil, paramErr(fmt.Sprintf("tools[%d]", i), "must be a JSON value")
		}
	}
	return run(ctx, m, p.Ticket, p.SessionID, func(ctx context.Context, s *Session) (*PrepareResult, error) {
		return s.prepare(ctx, p, prog)
	})
}

// RecordResponse appends the assistant's response to the live history
// (durably) and folds its usage into the cache statistics. A response that
// carries an Anthropic compaction block (reasoningDetails entry of type
// "compaction" with non-null content) is a provider-side compaction: the
// history before it is stored as an artifact and the live history restarts
// at the response (boundary mode "provider", strategy "native_inline",
// trigger "auto"). A block with null content is a failed compaction and is
// only logged.
func (m *Manager) RecordResponse(ctx context.Context, p RecordParams) (*RecordResult, error) {
	switch {
	case p.Message.Role == "":
		return nil, paramErr("message", "required")
	case p.Message.Role != history.Assistant:
		return nil, paramErr("message.role", "must be assistant")
	}
	if err := m.o.Limits.withDefaults().checkMessage("message", &p.Message); err != nil {
		return nil, err
	}
	if u := p.Usage; u != nil {
		if u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens < 0 || u.CacheCreationTokens < 0 {
			return nil, paramErr("usage", "token counts must be >= 0")
		}
		for _, c := range []struct {
			path string
			n    int
		}{{"usage.inputTokens", u.InputTokens}, {"usage.outputTokens", u.OutputTokens}, {"usage.cacheReadTokens", u.CacheReadTokens}, {"usage.cacheCreationTokens", u.CacheCreationTokens}} {
			if err := checkTokens(c.path, c.n); err != nil {
				return nil, err
			}
		}
	}
	return run(ctx, m, p.Ticket, p.SessionID, func(ctx context.Context, s *Session) (*RecordResult, error) {
		s.syncEstimator()
		s.snapMu.Lock()
		estimate := s.snap.ProjectedTokens + s.snap.PrefixTokens
		s.snapMu.Unlock()
		resp := responseData{Message: p.Message, Usage: p.Usage, StopReason: p.StopReason, RequestEstimate: estimate,
			Receipt: s.receiptOf(p.Usage, "")}
		if !s.providerCompaction(ctx, resp) {
			if err := s.record(evResponse, resp); err != nil {
				return nil, err
			}
		}
		st := s.refreshStats()
		s.notifyPressure(st)
		return &RecordResult{Messages: len(s.live), Stats: st}, nil
	})
}

// providerCompaction commits a response that carries a usable compaction
// block as a boundary: the history before it, with it, goes to an artifact
// and the live history restarts at the response, in one event that also
// records the response. It reports whether it did; when it did not (no
// block, a failed block, or a store that could not take the artifact or
// the boundary), the caller records the response alone and nothing of the
// attempt is left.
func (s *Session) providerCompaction(ctx context.Context, resp responseData) bool {
	found, ok := compactionBlock(resp.Message.ReasoningDetails)
	switch {
	case !found:
		return false
	case !ok:
		s.m.logger.Warn("session: provider compaction block with null content: the native compaction failed", "session", s.id)
		s.m.notifyLog(LevelWarning, "vtcode-ls: the provider's compaction failed (empty compaction block); the full history is kept")
		return false
	case len(s.live) == 0:
		return false // the history already starts at the block
	}
	last := resp.Message
	s.est.Message(&last)
	pre := append(slices.Clip(s.live), last)
	next := []history.Message{last}
	b := Boundary{
		Trigger: string(compaction.TriggerAuto), Mode: compaction.ModeProvider, Strategy: string(compaction.NativeInline),
		OriginalMessageCount: len(pre), CompactedMessageCount: 1,
		OriginalTokens: s.est.Messages(pre), CompactedTokens: s.est.Message(&next[0]),
	}
	resp.Message = last
	if err := s.commit(context.WithoutCancel(ctx), pre, next, -1, &b, commitWith{response: &resp}); err != nil {
		s.m.logger.Warn("session: provider compaction not stored; keeping the full history", "session", s.id, "err", err)
		s.m.notifyLog(LevelWarning, "vtcode-ls: the provider compacted the conversation, but the compaction could not be stored ("+
			bound(err.Error(), maxRootCause)+"); the full history is kept")
		return false
	}
	s.autoFailed = false
	return true
}

// compactionBlock reports whether details hold an Anthropic compaction block
// and whether its content is usable (present and not null).
func compactionBlock(details []json.RawMessage) (found, ok bool) {
	for _, d := range details {
		switch providers.CompactionOf(d) {
		case providers.AnthropicCompaction:
			return true, true
		case providers.FailedCompaction:
			found = true
		}
	}
	return found, false
}

// Compact compacts a session's live history now (vtcode/compact, trigger
// manual). prog receives begin/report/end; nil for none. A compaction that
// would not reduce the history is not an error: the result has artifactId ""
// and message "Conversation is already compact.". A failure is a
// *FailedError; a cancellation returns ctx's error and changes nothing.
func (m *Manager) Compact(ctx context.Context, p CompactParams, prog Progress) (*CompactResult, error) {
	switch p.Strategy {
	case "", "auto", "local", "native":
	default:
		return nil, paramErr("strategy", "must be auto, local or native")
	}
	return run(ctx, m, p.Ticket, p.SessionID, func(ctx context.Context, s *Session) (*CompactResult, error) {
		return s.compact(ctx, p, prog)
	})
}

// ListArtifacts lists the stored pre-compaction histories of a session,
// oldest first, in t's place when t is not nil (see [Place]).
func (m *Manager) ListArtifacts(ctx context.Context, id string, t *Ticket) ([]ArtifactInfo, error) {
	return run(ctx, m, t, id, func(ctx context.Context, s *Session) ([]ArtifactInfo, error) {
		return s.listArtifacts()
	})
}

// Restore makes an artifact's history the live history. The live history
// it replaces is first stored as a backup artifact (trigger "restore").
func (m *Manager) Restore(ctx context.Context, p RestoreParams) (*RestoreResult, error) {
	if err := store.ValidID(p.ArtifactID); err != nil {
		return nil, paramErr("artifactId", "%s", idMsg(err))
	}
	return run(ctx, m, p.Ticket, p.SessionID, func(ctx context.Context, s *Session) (*RestoreResult, error) {
		return s.restore(ctx, p)
	})
}

// SwitchModel moves a session to another route. When
// autoCompaction.compactOnModelSwitch is set and the projection does not fit
// the new route's threshold, the history is compacted with the new route
// (trigger model_switch). A failed compaction never blocks the switch. The
// call is atomic under cancellation.
func (m *Manager) SwitchModel(ctx context.Context, p SwitchParams, prog Progress) (*SwitchResult, error) {
	if strings.TrimSpace(p.Provider) == "" {
		return nil, paramErr("provider", "required")
	}
	if err := checkTokens("contextWindow", p.ContextWindow); err != nil {
		return nil, err
	}
	return run(ctx, m, p.Ticket, p.SessionID, func(ctx context.Context, s *Session) (*SwitchResult, error) {
		return s.switchModel(ctx, p, prog)
	})
}

// CompactPrompt gets, sets or resets the compaction prompt of a workspace
// (persisted in its store).
func (m *Manager) CompactPrompt(ctx context.Context, p PromptParams) (*PromptResult, error) {
	return inTurn(ctx, m, p.Ticket, "", func(context.Context, *Ticket) (*PromptResult, error) {
		return m.compactPrompt(p)
	})
}

func (m *Manager) compactPrompt(p PromptParams) (*PromptResult, error) {
	w, err := m.workspaceFor(p.Workspace, "workspace")
	if err != nil {
		return nil, err
	}
	switch p.Action {
	case "get":
	case "set":
		if strings.TrimSpace(p.Prompt) == "" {
			return nil, paramErr("prompt", "required for action set")
		}
		if len(p.Prompt) > store.MaxPromptBytes {
			return nil, paramErr("prompt", "must be at most %d bytes", store.MaxPromptBytes)
		}
		if err := w.setCompactPrompt(p.Prompt); err != nil {
			return nil, err
		}
	case "reset":
		if err := w.setCompactPrompt(""); err != nil {
			return nil, err
		}
	default:
		return nil, paramErr("action", "must be get, set or reset")
	}
	prompt, isDefault, err := w.compactPrompt()
	if err != nil {
		return nil, err
	}
	return &PromptResult{Prompt: prompt, IsDefault: isDefault}, nil
}
