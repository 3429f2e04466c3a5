package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/session"
)

func TestManualCompact(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	ctx := context.Background()
	id := e.open(session.OpenParams{ContextWindow: 32000})
	e.append(id, turns(12, 3000)...)

	prog := newProgress()
	res, err := e.m.Compact(ctx, session.CompactParams{SessionID: id, Instructions: "Keep the module list.", Strategy: "local"}, prog)
	if err != nil {
		t.Fatal(err)
	}
	if res.Trigger != "manual" || res.Mode != "local" || res.ArtifactID == "" || res.OriginalMessageCount != 72 ||
		res.CompactedMessageCount >= 72 || res.CompactedTokens >= res.OriginalTokens {
		t.Fatalf("result = %+v", res)
	}
	if !strings.HasPrefix(res.Message, "Context compacted · ") || !strings.Contains(res.Message, "(72 -> ") {
		t.Errorf("message = %q", res.Message)
	}
	if ev := prog.list(); ev[0] != "begin: Compacting context..." || ev[len(ev)-1] != "end: "+res.Message {
		t.Errorf("progress = %q", ev)
	}
	st := e.stats(id)
	if st.Compactions != 1 || st.Messages != res.CompactedMessageCount {
		t.Errorf("stats = %+v", st)
	}

	// Compacting the compacted history again is a no-op, not an error.
	again, err := e.m.Compact(ctx, session.CompactParams{SessionID: id}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again.Message != "Conversation is already compact." || again.ArtifactID != "" {
		t.Errorf("no-op result = %+v", again)
	}
	if st2 := e.stats(id); st2.Compactions != 1 {
		t.Errorf("a no-op counted as a compaction")
	}

	// Parameter and strategy errors.
	var pe *session.ParamError
	if _, err := e.m.Compact(ctx, session.CompactParams{SessionID: id, Strategy: "fast"}, nil); !errors.As(err, &pe) || pe.Path != "strategy" {
		t.Errorf("bad strategy: %v", err)
	}
	var fe *session.FailedError
	e.append(id, turns(4, 3000)...)
	if _, err := e.m.Compact(ctx, session.CompactParams{SessionID: id, Strategy: "native"}, nil); !errors.As(err, &fe) || fe.Kind != "unsupported" {
		t.Errorf("native on offline: %v", err)
	}
}

func TestCompactFailureReportsRootCause(t *testing.T) {
	e := newEnv(t, session.Options{Clients: clients(map[string]providers.Generator{"flaky": failing{}})}, "")
	id := e.open(session.OpenParams{Provider: "flaky", Model: "m", ContextWindow: 32000})
	e.append(id, turns(10, 3000)...)
	before := snap(t, e, id)
	prog := newProgress()
	_, err := e.m.Compact(context.Background(), session.CompactParams{SessionID: id}, prog)
	var fe *session.FailedError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v", err)
	}
	if fe.Provider != "flaky" || fe.Model != "m" || fe.Kind != "server" || fe.RootCause != "flaky m: HTTP 503: upstream overloaded" {
		t.Errorf("failure = %+v", fe)
	}
	if end := <-prog.ended; end != "Compaction failed: flaky m: HTTP 503: upstream overloaded" {
		t.Errorf("progress end = %q", end)
	}
	if after := snap(t, e, id); after != before {
		t.Error("a failed compaction changed the session")
	}
}

func TestAutoCompactionFailureIsReported(t *testing.T) {
	e := newEnv(t, session.Options{Clients: clients(map[string]providers.Generator{"flaky": failing{}})}, "")
	id := e.open(session.OpenParams{Provider: "flaky", Model: "m", ContextWindow: 16000})
	e.setPolicy(id, `{"toolResultClearing":{"enabled":false}}`)
	msgs := turns(20, 2000)
	res := prepare(t, e, session.PrepareParams{SessionID: id, Messages: msgs}, nil)
	c := res.Compaction
	if c == nil || c.Error == "" || c.ArtifactID != "" || !strings.HasPrefix(c.Message, "Compaction failed: ") {
		t.Fatalf("compaction report = %+v", c)
	}
	if res.Stats.State != "critical" {
		t.Errorf("state = %q", res.Stats.State)
	}
	// The request's messages are appended anyway.
	if n := len(e.history(id)); n != len(msgs) {
		t.Errorf("history has %d messages", n)
	}
}

func TestSwitchModel(t *testing.T) {
	e := newEnv(t, session.Options{Clients: clients(map[string]providers.Generator{"flaky": failing{}})}, "")
	ctx := context.Background()
	id := e.open(session.OpenParams{Provider: "offline", Model: "big", ContextWindow: 128000})
	e.setPolicy(id, `{"toolResultClearing":{"enabled":false}}`)
	e.append(id, turns(20, 3000)...)
	if st := e.stats(id); st.Compactions != 0 || st.Capacity != 128000 {
		t.Fatalf("stats = %+v", st)
	}

	// To a route whose window does not fit the history: compacted with the
	// new route.
	prog := newProgress()
	res, err := e.m.SwitchModel(ctx, session.SwitchParams{SessionID: id, Provider: "offline", Model: "small", ContextWindow: 16000}, prog)
	if err != nil {
		t.Fatal(err)
	}
	if res.Message != "Model switched to offline/small." || res.Compaction == nil || res.Compaction.Trigger != "model_switch" || res.Compaction.ArtifactID == "" {
		t.Fatalf("switch = %+v", res)
	}
	if st := e.stats(id); st.Capacity != 16000 || st.Compactions != 1 {
		t.Errorf("stats after switch = %+v", st)
	}

	// A failing compaction never blocks the switch.
	e.append(id, turns(20, 3000)...)
	res, err = e.m.SwitchModel(ctx, session.SwitchParams{SessionID: id, Provider: "flaky", Model: "m", ContextWindow: 12000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "Model switched, but context compaction failed: flaky m: HTTP 503: upstream overloaded. Continuing with full history."
	if res.Message != want {
		t.Errorf("message = %q\nwant      %q", res.Message, want)
	}
	if res.Compaction == nil || res.Compaction.Error == "" {
		t.Errorf("compaction report = %+v", res.Compaction)
	}
	if st := e.stats(id); st.Capacity != 12000 || st.Compactions != 1 {
		t.Errorf("stats after failed switch compaction = %+v", st)
	}

	// With compactOnModelSwitch off, nothing is compacted.
	e.setPolicy(id, `{"autoCompaction":{"compactOnModelSwitch":false}}`)
	res, err = e.m.SwitchModel(ctx, session.SwitchParams{SessionID: id, Provider: "offline", Model: "tiny", ContextWindow: 8000}, nil)
	if err != nil || res.Compaction != nil || res.Message != "Model switched to offline/tiny." {
		t.Fatalf("switch = %+v, %v", res, err)
	}
	var pe *session.ParamError
	if _, err := e.m.SwitchModel(ctx, session.SwitchParams{SessionID: id}, nil); !errors.As(err, &pe) || pe.Path != "provider" {
		t.Errorf("missing provider: %v", err)
	}
}

func TestRecordResponseUsageAndCacheStreak(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	ctx := context.Background()
	id := e.open(session.OpenParams{Provider: "offline", Model: "m", ContextWindow: 32000})
	e.append(id, history.NewText(history.User, "hello"))
	record := func(in, read int) *session.Stats {
		t.Helper()
		res, err := e.m.RecordResponse(ctx, session.RecordParams{SessionID: id, Message: history.NewText(history.Assistant, "ok"),
			Usage: &history.Usage{InputTokens: in, OutputTokens: 10, CacheReadTokens: read}, StopReason: "end_turn"})
		if err != nil {
			t.Fatal(err)
		}
		return &res.Stats
	}
	if st := e.stats(id); st.Cache != nil || st.LastReportedInputTokens != nil {
		t.Fatalf("usage before any response: %+v", st)
	}
	// The reported input is compared with the estimate of the request it
	// answers: the projection and prefix of the last prepareRequest.
	prep, err := e.m.PrepareRequest(ctx, session.PrepareParams{SessionID: id, SystemPrompt: "You are a coding agent."}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sent := prep.Stats.ProjectedTokens + prep.Stats.PrefixTokens
	st := record(1000, 0) // the first request is cold: no streak
	if st.LastRequestEstimate == nil || *st.LastRequestEstimate != sent || *st.ReportedDifference != 1000-sent {
		t.Errorf("estimate %v, difference %v; want %d and %d", st.LastRequestEstimate, st.ReportedDifference, sent, 1000-sent)
	}
	if st.Cache.LowReuseStreak != 0 || *st.LastReportedInputTokens != 1000 {
		t.Errorf("first: %+v", st.Cache)
	}
	st = record(1000, 200)
	if st.Cache.LowReuseStreak != 1 || st.Cache.LastHitRate != 0.2 {
		t.Errorf("second: %+v", st.Cache)
	}
	st = record(1000, 900)
	if st.Cache.LowReuseStreak != 0 || st.Cache.LastHitRate != 0.9 {
		t.Errorf("third: %+v", st.Cache)
	}
	record(1000, 100)
	st = record(2000, 100)
	if st.Cache.LowReuseStreak != 2 || st.Cache.CumulativeInputTokens != 6000 || st.Cache.CumulativeCacheReadTokens != 1300 {
		t.Errorf("fifth: %+v", st.Cache)
	}
	if st.Messages != 6 {
		t.Errorf("messages = %d", st.Messages)
	}
	// A successful compaction resets the streak, not the totals.
	e.append(id, turns(10, 3000)...)
	if _, err := e.m.Compact(ctx, session.CompactParams{SessionID: id, Strategy: "local"}, nil); err != nil {
		t.Fatal(err)
	}
	st = e.stats(id)
	if st.Cache.LowReuseStreak != 0 || st.Cache.CumulativeInputTokens != 6000 {
		t.Errorf("after compaction: %+v", st.Cache)
	}
	var pe *session.ParamError
	if _, err := e.m.RecordResponse(ctx, session.RecordParams{SessionID: id, Message: history.NewText(history.User, "x")}); !errors.As(err, &pe) || pe.Path != "message.role" {
		t.Errorf("user message: %v", err)
	}
}

func TestAnthropicUsageIterations(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	id := e.open(session.OpenParams{Provider: "anthropic", Model: "claude-sonnet-4-6", ContextWindow: 200000})
	its := []json.RawMessage{
		json.RawMessage(`{"type":"compaction","input_tokens":5000,"output_tokens":300,"cache_read_input_tokens":0}`),
		json.RawMessage(`{"type":"message","input_tokens":100,"output_tokens":50,"cache_read_input_tokens":900,"cache_creation_input_tokens":0}`),
		json.RawMessage(`{"type":"mystery","input_tokens":99999}`),
	}
	res, err := e.m.RecordResponse(context.Background(), session.RecordParams{SessionID: id, Message: history.NewText(history.Assistant, "ok"),
		Usage: &history.Usage{InputTokens: 7, OutputTokens: 1, Iterations: its}})
	if err != nil {
		t.Fatal(err)
	}
	// The context after the response is the last message iteration (input
	// is exclusive on Anthropic: 100 uncached + 900 read); the compaction
	// iteration read the history before it was compacted. The cumulative
	// counts bill every iteration: 5,100 uncached + 900 read.
	if got := *res.Stats.LastReportedInputTokens; got != 1000 {
		t.Errorf("input = %d, want 1000", got)
	}
	if c := res.Stats.Cache; c.LastHitRate != 0.9 || c.CumulativeCacheReadTokens != 900 || c.CumulativeInputTokens != 6000 {
		t.Errorf("cache = %+v", c)
	}
}

func TestAnthropicCompactionBlock(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	ctx := context.Background()
	id := e.open(session.OpenParams{Provider: "anthropic", Model: "claude-sonnet-4-6", ContextWindow: 200000})
	e.append(id, turns(10, 1000)...)

	// A failed block (content null) is only logged.
	var failed history.Message
	if err := json.Unmarshal([]byte(`{"role":"assistant","content":"hi","reasoningDetails":[{"type":"compaction","content":null}]}`), &failed); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.RecordResponse(ctx, session.RecordParams{SessionID: id, Message: failed}); err != nil {
		t.Fatal(err)
	}
	if n := len(e.history(id)); n != 61 || len(e.rec.boundaries()) != 0 {
		t.Fatalf("null block: %d messages, %d boundaries", n, len(e.rec.boundaries()))
	}

	var msg history.Message
	raw := `{"role":"assistant","content":"Continuing.","reasoningDetails":[{"type":"compaction","content":"Summary of the work so far.","signature":"sig","cache_control":{"type":"ephemeral"}}]}`
	if err := json.Unmarshal([]byte(raw), &msg); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.RecordResponse(ctx, session.RecordParams{SessionID: id, Message: msg, StopReason: "pause_turn"}); err != nil {
		t.Fatal(err)
	}
	h := e.history(id)
	if len(h) != 1 || jsonOf(t, h[0]) != jsonOf(t, msg) {
		t.Fatalf("live history = %s", jsonOf(t, h))
	}
	bs := e.rec.boundaries()
	if len(bs) != 1 || bs[0].Mode != "provider" || bs[0].Strategy != "native_inline" || bs[0].Trigger != "auto" ||
		bs[0].OriginalMessageCount != 62 || bs[0].CompactedMessageCount != 1 {
		t.Fatalf("boundary = %+v", bs)
	}
	arts, err := e.m.ListArtifacts(ctx, id, nil)
	if err != nil || len(arts) != 1 || arts[0].Messages != 62 || arts[0].Mode != "provider" {
		t.Fatalf("artifacts = %+v, %v", arts, err)
	}
	// The block is replayed verbatim after a restart.
	before := snap(t, e, id)
	e.restart("")
	e.open(session.OpenParams{SessionID: id})
	if after := snap(t, e, id); after != before {
		t.Fatal("resume differs after a provider compaction")
	}
}

// An Anthropic compaction block stored as a JSON string holding the object
// (as some clients keep reasoningDetails) is the same block: the session
// compacts at it, as the vendor code replays it (providers.CompactionOf).
func TestAnthropicCompactionBlockStringWrapped(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	ctx := context.Background()
	id := e.open(session.OpenParams{Provider: "anthropic", Model: "claude-sonnet-4-6", ContextWindow: 200000})
	e.append(id, turns(10, 1000)...)

	block, err := json.Marshal(`{"type":"compaction","content":"Summary of the work so far.","signature":"sig"}`)
	if err != nil {
		t.Fatal(err)
	}
	var msg history.Message
	if err := json.Unmarshal([]byte(`{"role":"assistant","content":"Continuing.","reasoningDetails":[`+string(block)+`]}`), &msg); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.RecordResponse(ctx, session.RecordParams{SessionID: id, Message: msg, StopReason: "pause_turn"}); err != nil {
		t.Fatal(err)
	}
	h := e.history(id)
	if len(h) != 1 || jsonOf(t, h[0]) != jsonOf(t, msg) {
		t.Fatalf("live history = %s, want only the response with its block", jsonOf(t, h))
	}
	if bs := e.rec.boundaries(); len(bs) != 1 || bs[0].Mode != "provider" || bs[0].OriginalMessageCount != 61 {
		t.Fatalf("boundaries = %+v, want one provider boundary over 61 messages", bs)
	}
}

func TestCompactPromptPerWorkspace(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	ctx := context.Background()
	res, err := e.m.CompactPrompt(ctx, session.PromptParams{Action: "get"})
	if err != nil || !res.IsDefault || res.Prompt == "" {
		t.Fatalf("default = %+v, %v", res, err)
	}
	def := res.Prompt
	res, err = e.m.CompactPrompt(ctx, session.PromptParams{Action: "set", Prompt: "Summarize tersely."})
	if err != nil || res.IsDefault || res.Prompt != "Summarize tersely." {
		t.Fatalf("set = %+v, %v", res, err)
	}
	e.restart("")
	res, err = e.m.CompactPrompt(ctx, session.PromptParams{Action: "get", Workspace: e.dir})
	if err != nil || res.Prompt != "Summarize tersely." {
		t.Fatalf("after restart = %+v, %v", res, err)
	}
	res, err = e.m.CompactPrompt(ctx, session.PromptParams{Action: "reset"})
	if err != nil || !res.IsDefault || res.Prompt != def {
		t.Fatalf("reset = %+v, %v", res, err)
	}
	var pe *session.ParamError
	if _, err := e.m.CompactPrompt(ctx, session.PromptParams{Action: "set"}); !errors.As(err, &pe) || pe.Path != "prompt" {
		t.Errorf("set without prompt: %v", err)
	}
	if _, err := e.m.CompactPrompt(ctx, session.PromptParams{Action: "drop"}); !errors.As(err, &pe) || pe.Path != "action" {
		t.Errorf("bad action: %v", err)
	}
}
