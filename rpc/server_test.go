package rpc_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/history/historytest"
	"github.com/vtcode/vtcode-ls/rpc"
	. "github.com/vtcode/vtcode-ls/rpc/rpctest"
	"github.com/vtcode/vtcode-ls/session"
)

// blockingSession opens a session on the blocking fake provider with
// enough history to compact.
func blockingSession(env *Env, id string) {
	env.T.Helper()
	env.OpenSession(session.OpenParams{SessionID: id, Provider: "blocking", Model: "m", ContextWindow: 16000})
	env.Append(id, historytest.Turns(16, 400)...)
}

func TestSlowCompactionBlocksOnlyItsSession(t *testing.T) {
	Run(t, Options{}, func(t *testing.T, env *Env) {
		blockingSession(env, "slow")
		env.OpenSession(session.OpenParams{SessionID: "fast", ContextWindow: 32000})
		compact := env.Go("vtcode/compact", session.CompactParams{SessionID: "slow"})
		queued := env.Go("vtcode/history", session.HistoryParams{SessionID: "slow"})
		<-env.Blocking.Started()

		// Another session is served while the compaction runs...
		env.Append("fast", history.NewText(history.User, "hello"))
		if st := env.Stats("fast"); st.Messages != 1 {
			t.Errorf("fast session has %d messages, want 1", st.Messages)
		}
		// ...and the same session's stats are answered at once, as a
		// snapshot in state "compacting".
		if st := env.Stats("slow"); st.State != session.StateCompacting || st.Messages != 64 {
			t.Errorf("slow stats during compaction: state %q, %d messages", st.State, st.Messages)
		}

		compact.Cancel()
		compact.WantError(rpc.CodeRequestCancelled)
		var h session.HistoryResult
		if err := queued.Wait(&h); err != nil || h.Total != 64 {
			t.Errorf("queued history: %v, %d messages; want the untouched 64", err, h.Total)
		}
	})
}

func TestOneSessionKeepsArrivalOrder(t *testing.T) {
	Run(t, Options{PressureInterval: -1}, func(t *testing.T, env *Env) {
		env.OpenSession(session.OpenParams{SessionID: "s1", ContextWindow: 64000})
		const n = 40
		calls := make([]*Call, n)
		for i := range calls {
			calls[i] = env.Go("vtcode/appendMessages", session.AppendParams{SessionID: "s1",
				Messages: []history.Message{history.NewText(history.User, fmt.Sprintf("m%d", i))}})
		}
		for i, c := range calls {
			var res session.AppendResult
			if err := c.Wait(&res); err != nil {
				t.Fatal(err)
			}
			if res.Messages != i+1 {
				t.Errorf("append %d answered with %d messages, want %d", i, res.Messages, i+1)
			}
		}
		h := env.History("s1")
		for i, m := range h.Messages {
			if got := m.Text(); got != fmt.Sprintf("m%d", i) {
				t.Fatalf("message %d is %q", i, got)
			}
		}
		// Every append produced a pressure notification, in order.
		st := env.State()
		if st.PressureCount["s1"] != n+1 {
			t.Errorf("%d pressure notifications, want %d", st.PressureCount["s1"], n+1)
		}
	})
}

func TestCancelWhileQueued(t *testing.T) {
	Run(t, Options{}, func(t *testing.T, env *Env) {
		blockingSession(env, "s1")
		compact := env.Go("vtcode/compact", rpc.CompactParams{CompactParams: session.CompactParams{SessionID: "s1"}, WorkDoneProgressParams: rpc.WorkDoneProgressParams{WorkDoneToken: json.RawMessage(`"w"`)}})
		<-env.Blocking.Started()
		queued := env.Go("vtcode/appendMessages", session.AppendParams{SessionID: "s1",
			Messages: []history.Message{history.NewText(history.User, "never")}})
		queued.Cancel()
		// Answered while the compaction still runs.
		queued.WantError(rpc.CodeRequestCancelled)
		env.Await(StartedWork(session.CompactingTitle, 1), Not(CompletedWork(session.CompactingTitle, 1, true)))

		env.Notify("window/workDoneProgress/cancel", rpc.WorkDoneProgressCancelParams{Token: json.RawMessage(`"w"`)})
		compact.WantError(rpc.CodeRequestCancelled)
		env.Await(CompletedWork(session.CompactingTitle, 1, false), EndedWith(session.CompactingTitle, "cancelled"))
		if h := env.History("s1"); h.Total != 64 {
			t.Errorf("history has %d messages after the cancels, want 64", h.Total)
		}
		var arts []session.ArtifactInfo
		env.Call("vtcode/listArtifacts", map[string]string{"sessionId": "s1"}, &arts)
		if len(arts) != 0 {
			t.Errorf("artifacts after a cancelled compaction: %v", arts)
		}
	})
}

func TestServerCreatedProgressCancel(t *testing.T) {
	Run(t, Options{WorkDoneProgress: true}, func(t *testing.T, env *Env) {
		blockingSession(env, "s1")
		compact := env.Go("vtcode/compact", session.CompactParams{SessionID: "s1"})
		env.Await(StartedWork(session.CompactingTitle, 1))
		st := env.State()
		if len(st.Created) != 1 {
			t.Fatalf("created tokens %v, want one", st.Created)
		}
		env.Notify("window/workDoneProgress/cancel", rpc.WorkDoneProgressCancelParams{Token: json.RawMessage(st.Created[0])})
		compact.WantError(rpc.CodeRequestCancelled)
		env.Await(CompletedWork(session.CompactingTitle, 1, false))
	})
}

func TestProgressCompletes(t *testing.T) {
	Run(t, Options{WorkDoneProgress: true}, func(t *testing.T, env *Env) {
		env.OpenSession(session.OpenParams{SessionID: "s1", ContextWindow: 16000})
		env.Append("s1", historytest.Turns(16, 400)...)
		res := env.Compact(session.CompactParams{SessionID: "s1"})
		env.Await(
			OnceMet(CompletedWork(session.CompactingTitle, 1, false),
				EndedWith(session.CompactingTitle, "Context compacted"),
				Boundary("s1", "manual")),
			PressureState("s1", session.StateOK),
			NoShownMessage(),
		)
		if res.ArtifactID == "" || res.CompactedMessageCount >= res.OriginalMessageCount {
			t.Errorf("compaction result %+v", res)
		}
	})
}

func TestRefusedProgressToken(t *testing.T) {
	Run(t, Options{WorkDoneProgress: true, RefuseProgress: true}, func(t *testing.T, env *Env) {
		env.OpenSession(session.OpenParams{SessionID: "s1", ContextWindow: 16000})
		env.Append("s1", historytest.Turns(16, 400)...)
		env.Compact(session.CompactParams{SessionID: "s1"})
		env.Await(Boundary("s1", "manual"))
		st := env.State()
		if len(st.Created) != 1 || len(st.Work) != 0 {
			t.Errorf("created %v, progress %v: want one refused token and no progress", st.Created, st.Work)
		}
	})
}

func TestPressureIsCoalesced(t *testing.T) {
	Run(t, Options{}, func(t *testing.T, env *Env) {
		env.OpenSession(session.OpenParams{SessionID: "s1", ContextWindow: 64000})
		const n = 30
		var last *Call
		for i := range n {
			last = env.Go("vtcode/appendMessages", session.AppendParams{SessionID: "s1",
				Messages: []history.Message{history.NewText(history.User, strings.Repeat("word ", i+1))}})
		}
		var res session.AppendResult
		if err := last.Wait(&res); err != nil {
			t.Fatal(err)
		}
		// The last value always arrives.
		env.Await(PressureWhere("s1", fmt.Sprintf("%d tokens", res.HistoryTokens), func(ev session.PressureEvent) bool {
			return ev.OriginalTokens == res.HistoryTokens
		}))
		if c := env.State().PressureCount["s1"]; c >= n {
			t.Errorf("%d pressure notifications for %d quick appends: not coalesced", c, n)
		}
	})
}

func TestBusySessionNamesOwner(t *testing.T) {
	Run(t, Options{}, func(t *testing.T, env *Env) {
		env.OpenSession(session.OpenParams{SessionID: "s1", ContextWindow: 32000})
		// A second server (as if another vtcode-ls process) on the same
		// workspace cannot open the session while the first owns it.
		other := startRaw(t, rpc.Options{})
		other.frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"rootUri":"file://` + env.Workspace + `","capabilities":{}}}`)
		other.next()
		other.frame(`{"jsonrpc":"2.0","id":2,"method":"vtcode/openSession","params":{"sessionId":"s1"}}`)
		id, code, msg := other.next()
		if id != "2" || code != rpc.CodeSessionBusy || !strings.Contains(msg, fmt.Sprintf("process %d", os.Getpid())) {
			t.Errorf("second owner: id %s code %d %q; want -32004 naming pid %d", id, code, msg, os.Getpid())
		}
		// Once the first closes it, the second can.
		env.Call("vtcode/closeSession", map[string]string{"sessionId": "s1"}, nil)
		other.frame(`{"jsonrpc":"2.0","id":3,"method":"vtcode/openSession","params":{"sessionId":"s1"}}`)
		if id, code, msg := other.next(); id != "3" || code != 0 {
			t.Errorf("after close: id %s code %d %q", id, code, msg)
		}
		other.wait()
	})
}

// TestStatsQueuedBehindACompactionAnswerWhenItBegins: a projectionStats sent
// right behind a compact of its session, before the compaction began, is
// answered as soon as it begins (state "compacting"), while the compaction
// still runs.
func TestStatsQueuedBehindACompactionAnswerWhenItBegins(t *testing.T) {
	Run(t, Options{}, func(t *testing.T, env *Env) {
		blockingSession(env, "s1")
		compact := env.Go("vtcode/compact", session.CompactParams{SessionID: "s1"})
		stats := env.Go("vtcode/projectionStats", map[string]string{"sessionId": "s1"})
		var st session.Stats
		if err := stats.Wait(&st); err != nil {
			t.Fatal(err)
		}
		if st.State != session.StateCompacting || st.Messages != 64 {
			t.Errorf("stats queued behind the compaction: state %q, %d messages", st.State, st.Messages)
		}
		compact.Cancel()
		compact.WantError(rpc.CodeRequestCancelled)
	})
}

// TestPipelinedOpenThenAppend: requests sent behind the openSession of
// their session, before it is answered, find the session open.
func TestPipelinedOpenThenAppend(t *testing.T) {
	Run(t, Options{}, func(t *testing.T, env *Env) {
		open := env.Go("vtcode/openSession", session.OpenParams{SessionID: "s1", ContextWindow: 32000})
		appended := env.Go("vtcode/appendMessages", session.AppendParams{SessionID: "s1",
			Messages: []history.Message{history.NewText(history.User, "hello")}})
		closed := env.Go("vtcode/closeSession", map[string]string{"sessionId": "s1"})
		late := env.Go("vtcode/history", session.HistoryParams{SessionID: "s1"})
		if err := open.Wait(nil); err != nil {
			t.Fatal(err)
		}
		var res session.AppendResult
		if err := appended.Wait(&res); err != nil || res.Messages != 1 {
			t.Fatalf("pipelined append: %v, %d messages", err, res.Messages)
		}
		if err := closed.Wait(nil); err != nil {
			t.Fatal(err)
		}
		late.WantError(rpc.CodeUnknownSession)
	})
}

// TestLimitErrorsNameTheField: a message over a limit of the session is
// refused with -32602 naming the field, and the history is unchanged.
func TestLimitErrorsNameTheField(t *testing.T) {
	Run(t, Options{}, func(t *testing.T, env *Env) {
		env.OpenSession(session.OpenParams{SessionID: "s1", ContextWindow: 32000})
		m := history.Message{Role: history.Assistant, Content: history.Text("reading")}
		for i := range session.DefaultMaxToolCalls + 1 {
			m.ToolCalls = append(m.ToolCalls, history.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "read_file", Arguments: "{}"})
		}
		e := env.CallError("vtcode/appendMessages", session.AppendParams{SessionID: "s1",
			Messages: []history.Message{history.NewText(history.User, "go"), m}}, jsonrpc2.CodeInvalidParams)
		want := fmt.Sprintf("messages[1].toolCalls: at most %d tool calls per message, got %d", session.DefaultMaxToolCalls, session.DefaultMaxToolCalls+1)
		if e.Message != want {
			t.Errorf("error %q, want %q", e.Message, want)
		}
		if h := env.History("s1"); h.Total != 0 {
			t.Errorf("history has %d messages after a refused append", h.Total)
		}
	})
}

// TestWorkspaceRequestsKeepArrivalOrder: requests that name no session are
// ordered among themselves: a compactPrompt get sent right behind a set
// sees the new prompt, and a reset behind both restores the default.
func TestWorkspaceRequestsKeepArrivalOrder(t *testing.T) {
	Run(t, Options{}, func(t *testing.T, env *Env) {
		set := env.Go("vtcode/compactPrompt", session.PromptParams{Action: "set", Prompt: "Summarize tersely."})
		get := env.Go("vtcode/compactPrompt", session.PromptParams{Action: "get"})
		reset := env.Go("vtcode/compactPrompt", session.PromptParams{Action: "reset"})
		again := env.Go("vtcode/compactPrompt", session.PromptParams{Action: "get"})
		for _, c := range []*Call{set, reset} {
			if err := c.Wait(nil); err != nil {
				t.Fatal(err)
			}
		}
		var got, after session.PromptResult
		if err := get.Wait(&got); err != nil || got.Prompt != "Summarize tersely." || got.IsDefault {
			t.Errorf("get behind set: %v, %+v", err, got)
		}
		if err := again.Wait(&after); err != nil || !after.IsDefault {
			t.Errorf("get behind reset: %v, %+v", err, after)
		}
	})
}

// TestCoalescedPressurePrecedesResponse: the last pressure a request causes
// arrives before its response, even while coalescing holds it back (an
// interval that never passes here), so a client that reads the response
// already shows the value its request produced.
func TestCoalescedPressurePrecedesResponse(t *testing.T) {
	Run(t, Options{PressureInterval: time.Hour}, func(t *testing.T, env *Env) {
		env.OpenSession(session.OpenParams{SessionID: "s1", ContextWindow: 64000})
		for i := range 4 {
			env.Append("s1", historytest.Turns(1, 2000)...)
			got := env.State().Pressure["s1"]
			st := env.Stats("s1")
			if got.ProjectedTokens != st.ProjectedTokens || got.Display != st.Display {
				t.Fatalf("after append %d the last pressure is %d tokens (%q), the stats %d (%q)",
					i+1, got.ProjectedTokens, got.Display.Text, st.ProjectedTokens, st.Display.Text)
			}
		}
	})
}
