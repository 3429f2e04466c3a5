//go:build linux

package integration_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/vtcode/vtcode-ls/providers/providertest"
)

// testKey is the API key every faulty provider is configured with. It has
// no well-known credential shape (no sk- prefix), so only exact redaction
// can keep it out of the daemon's output.
const testKey = "vtk_live_9F2c7Q4xZr81LmNpQ0wE"

// faultRoute is a provider route under test and its fault rows.
type faultRoute struct {
	name     string
	provider string
	model    string
	native   string // native_compaction
	// ok is the reply of a successful summary call on this route.
	ok   func() providertest.Reply
	rows []faultRow
}

// faultRow is one fault and what the daemon must make of it.
type faultRow struct {
	name    string
	replies func(h *hangs) []providertest.Reply
	cancel  bool // $/cancelRequest once the provider has the request

	wantMode  string   // success: the result's mode ("local", "provider")
	wantCode  int      // failure: the JSON-RPC error code
	wantKind  string   // failure: data.kind
	wantCause []string // failure: the root cause names the cause (one of, case-insensitive)
	fallback  bool     // a native strategy fell back to local (logged)
	calls     int      // provider requests the compaction makes
	check     func(t *testing.T, reqs []providertest.Request)
}

// hangs provides handlers that never answer until the client goes away,
// and tells the test when a request is being held.
type hangs struct {
	held     chan struct{} // one value per held request
	released chan struct{} // one value per request whose client went away
	stop     chan struct{} // closed at cleanup
}

func (h *hangs) reply(headersFirst bool) providertest.Reply {
	return providertest.Reply{Func: func(w http.ResponseWriter, r *http.Request) {
		if headersFirst {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(200)
			_, _ = w.Write([]byte(`{"id":"resp_hang","object":"response",`))
			w.(http.Flusher).Flush()
		}
		h.held <- struct{}{}
		select {
		case <-r.Context().Done():
			h.released <- struct{}{}
		case <-h.stop:
		}
	}}
}

func openAIError(status int, typ, code, msg string) providertest.Reply {
	return providertest.OpenAIError(status, typ, code, msg)
}

func repeat(n int, r providertest.Reply) []providertest.Reply {
	out := make([]providertest.Reply, n)
	for i := range out {
		out[i] = r
	}
	return out
}

func bodyLens(reqs []providertest.Request) []int {
	var out []int
	for _, r := range reqs {
		out = append(out, len(r.Body))
	}
	return out
}

// TestProviderFaults runs a matrix of provider faults through the daemon:
// for each row a session with a compactable history asks for vtcode/compact
// while a fake provider (real wire formats, on loopback) misbehaves. Each
// row checks the documented outcome (a result, -32803 with its data, or
// -32800 after $/cancelRequest), that the history is unchanged by a
// failure, that the error text is bounded and names the cause, that the
// session keeps working (append, prepare, and a compaction that now
// succeeds), and, per route, that the API key appears nowhere: replies,
// notifications, stderr, or any file of the workspace.
func TestProviderFaults(t *testing.T) {
	capacity := func(msg string) providertest.Reply {
		return openAIError(400, "invalid_request_error", "context_length_exceeded", msg)
	}
	tooLong := "This model's maximum context length is 16000 tokens. However, your messages resulted in 23112 tokens. Please reduce the length of the messages."
	smaller := func(t *testing.T, reqs []providertest.Request) {
		if n := bodyLens(reqs); len(n) >= 2 && n[1] >= n[0] {
			t.Errorf("the retry after a capacity error was not smaller: request bodies %v bytes", n)
		}
	}
	routes := []faultRoute{{
		name: "openai-responses", provider: "openai", model: "gpt-5.1-codex", native: "never",
		ok: func() providertest.Reply {
			return providertest.ResponsesText("Goal: fix the failing test. Next: rerun go test.", 9000, 120)
		},
		rows: []faultRow{
			{name: "hang/cancel", cancel: true, replies: func(h *hangs) []providertest.Reply {
				return []providertest.Reply{h.reply(false)}
			}, wantCode: codeCancelled, calls: 1},
			{name: "hang-mid-body/cancel", cancel: true, replies: func(h *hangs) []providertest.Reply {
				return []providertest.Reply{h.reply(true)}
			}, wantCode: codeCancelled, calls: 1},
			{name: "reset", replies: func(*hangs) []providertest.Reply {
				return []providertest.Reply{providertest.Hangup()}
			}, wantCode: codeFailed, wantKind: "network", wantCause: []string{"connection", "reset", "eof"}, calls: 1},
			{name: "reset-mid-body", replies: func(*hangs) []providertest.Reply {
				return []providertest.Reply{providertest.ResponsesText("partial summary that never ends", 9000, 10).Truncated(120)}
			}, wantCode: codeFailed, wantKind: "network", wantCause: []string{"connection", "closed", "eof"}, calls: 1},
			{name: "429-retry-after-then-ok", replies: func(*hangs) []providertest.Reply {
				return []providertest.Reply{providertest.RateLimited("0.3"), providertest.ResponsesText("Summary after a rate limit.", 9000, 50)}
			}, wantMode: "local", calls: 2},
			{name: "429-every-attempt", replies: func(*hangs) []providertest.Reply {
				return repeat(3, providertest.RateLimited("0.2"))
			}, wantCode: codeFailed, wantKind: "rate_limit", wantCause: []string{"429", "rate limit"}, calls: 3},
			{name: "500-every-attempt", replies: func(*hangs) []providertest.Reply {
				return repeat(3, openAIError(500, "server_error", "", "The server had an error while processing your request."))
			}, wantCode: codeFailed, wantKind: "server", wantCause: []string{"500"}, calls: 3},
			{name: "503-then-ok", replies: func(*hangs) []providertest.Reply {
				return []providertest.Reply{providertest.JSON(503, `<html><body>503 Service Unavailable</body></html>`),
					providertest.ResponsesText("Summary after a 503.", 9000, 50)}
			}, wantMode: "local", calls: 2},
			{name: "503-every-attempt", replies: func(*hangs) []providertest.Reply {
				return repeat(3, providertest.JSON(503, `<html><body>503 Service Unavailable</body></html>`))
			}, wantCode: codeFailed, wantKind: "server", wantCause: []string{"503"}, calls: 3},
			{name: "malformed-json", replies: func(*hangs) []providertest.Reply {
				return []providertest.Reply{providertest.JSON(200, `{"id":"resp_1","object":"response","output":[{"type":"message",`)}
			}, wantCode: codeFailed, wantKind: "malformed", wantCause: []string{"malformed"}, calls: 1},
			{name: "empty-output", replies: func(*hangs) []providertest.Reply {
				return []providertest.Reply{providertest.JSON(200, `{"id":"resp_1","object":"response","status":"completed","model":"gpt-5.1-codex","output":[],"usage":{"input_tokens":9000,"output_tokens":0,"total_tokens":9000}}`)}
			}, wantCode: codeFailed, wantKind: "empty", wantCause: []string{"empty", "no output"}, calls: 1},
			{name: "empty-summary-text", replies: func(*hangs) []providertest.Reply {
				return []providertest.Reply{providertest.ResponsesText("   ", 9000, 1)}
			}, wantCode: codeFailed, wantKind: "empty", wantCause: []string{"empty summary"}, calls: 1},
			{name: "auth-echoes-key", replies: func(*hangs) []providertest.Reply {
				return []providertest.Reply{openAIError(401, "invalid_request_error", "invalid_api_key",
					"Incorrect API key provided: "+testKey+". You can find your API key at https://platform.openai.com/account/api-keys.")}
			}, wantCode: codeFailed, wantKind: "auth", wantCause: []string{"401", "api key"}, calls: 1},
			{name: "capacity-then-ok-after-halving", replies: func(*hangs) []providertest.Reply {
				return []providertest.Reply{capacity(tooLong), providertest.ResponsesText("Summary within half the budget.", 6000, 50)}
			}, wantMode: "local", calls: 2, check: smaller},
			{name: "capacity-every-retry", replies: func(*hangs) []providertest.Reply {
				return repeat(2, capacity(tooLong))
			}, wantCode: codeFailed, wantKind: "capacity", wantCause: []string{"context length", "capacity"}, calls: 2, check: smaller},
		},
	}, {
		name: "openai-native-compact", provider: "openai", model: "gpt-5.1-codex", native: "always",
		ok: func() providertest.Reply {
			return providertest.ResponsesCompacted(providertest.UserItem("Fix the failing test."), providertest.CompactionItem("cmp_1", "gAAAAencrypted=="))
		},
		rows: []faultRow{
			{name: "compact-ok", replies: func(*hangs) []providertest.Reply {
				return []providertest.Reply{providertest.ResponsesCompacted(providertest.UserItem("Fix the failing test."), providertest.CompactionItem("cmp_2", "gAAAAencrypted2=="))}
			}, wantMode: "provider", calls: 1},
			{name: "compact-500s-fallback-local", replies: func(*hangs) []providertest.Reply {
				return append(repeat(3, openAIError(500, "server_error", "", "The server had an error.")),
					providertest.ResponsesText("Local summary after native failure.", 9000, 50))
			}, wantMode: "local", fallback: true, calls: 4},
			{name: "compact-empty-fallback-local", replies: func(*hangs) []providertest.Reply {
				return []providertest.Reply{providertest.ResponsesCompacted(), providertest.ResponsesText("Local summary after empty output.", 9000, 50)}
			}, wantMode: "local", fallback: true, calls: 2},
			{name: "compact-malformed-fallback-local", replies: func(*hangs) []providertest.Reply {
				return []providertest.Reply{providertest.JSON(200, `{"output":[`), providertest.ResponsesText("Local summary after a malformed answer.", 9000, 50)}
			}, wantMode: "local", fallback: true, calls: 2},
			{name: "compact-reset-fallback-local-reset", replies: func(*hangs) []providertest.Reply {
				return []providertest.Reply{providertest.Hangup(), providertest.Hangup()}
			}, wantCode: codeFailed, wantKind: "network", wantCause: []string{"connection", "eof", "reset"}, fallback: true, calls: 2},
			{name: "compact-capacity-fallback-local", replies: func(*hangs) []providertest.Reply {
				return []providertest.Reply{capacity(tooLong), providertest.ResponsesText("Local summary after a native capacity error.", 9000, 50)}
			}, wantMode: "local", fallback: true, calls: 2},
			{name: "compact-hang/cancel", cancel: true, replies: func(h *hangs) []providertest.Reply {
				return []providertest.Reply{h.reply(false)}
			}, wantCode: codeCancelled, calls: 1},
		},
	}, {
		name: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-6", native: "auto",
		ok: func() providertest.Reply { return providertest.AnthropicCompacted("Goal: fix the failing test.") },
		rows: []faultRow{
			{name: "inline-ok", replies: func(*hangs) []providertest.Reply {
				return []providertest.Reply{providertest.AnthropicCompacted("Goal: fix the failing test. Done: read files.")}
			}, wantMode: "provider", calls: 1},
			{name: "inline-rejected-fallback-local", replies: func(*hangs) []providertest.Reply {
				return []providertest.Reply{providertest.AnthropicError(400, "invalid_request_error", "compact_20260112 is not supported for this model"),
					providertest.AnthropicText("Local summary after an inline rejection.", 9000, 60)}
			}, wantMode: "local", fallback: true, calls: 2},
			{name: "inline-not-fired-fallback-local", replies: func(*hangs) []providertest.Reply {
				return []providertest.Reply{providertest.AnthropicText("I did not compact.", 9000, 10),
					providertest.AnthropicText("Local summary after no compaction.", 9000, 60)}
			}, wantMode: "local", fallback: true, calls: 2},
			{name: "overloaded-every-attempt", replies: func(*hangs) []providertest.Reply {
				return append([]providertest.Reply{providertest.AnthropicError(400, "invalid_request_error", "compaction unavailable")},
					repeat(3, providertest.AnthropicError(529, "overloaded_error", "Overloaded"))...)
			}, wantCode: codeFailed, wantKind: "server", wantCause: []string{"529", "overloaded"}, fallback: true, calls: 4},
			{name: "prompt-too-long-then-ok", replies: func(*hangs) []providertest.Reply {
				return []providertest.Reply{providertest.AnthropicError(400, "invalid_request_error", "compaction unavailable"),
					providertest.AnthropicError(400, "invalid_request_error", "prompt is too long: 23112 tokens > 16000 maximum"),
					providertest.AnthropicText("Summary within half the budget.", 6000, 60)}
			}, wantMode: "local", fallback: true, calls: 3},
			{name: "malformed", replies: func(*hangs) []providertest.Reply {
				return []providertest.Reply{providertest.JSON(200, `{"type":"message","content":[{"type":"compaction","content":`),
					providertest.JSON(200, `not json at all`)}
			}, wantCode: codeFailed, wantKind: "malformed", wantCause: []string{"malformed"}, fallback: true, calls: 2},
		},
	}, {
		name: "chat-completions", provider: "deepseek", model: "deepseek-chat", native: "auto",
		ok: func() providertest.Reply {
			return providertest.ChatText("Goal: fix the failing test. Next: rerun go test.", 9000, 80)
		},
		rows: []faultRow{
			{name: "500-then-ok", replies: func(*hangs) []providertest.Reply {
				return []providertest.Reply{openAIError(500, "server_error", "", "Internal error"), providertest.ChatText("Summary after a 500.", 9000, 40)}
			}, wantMode: "local", calls: 2},
			{name: "reset", replies: func(*hangs) []providertest.Reply {
				return []providertest.Reply{providertest.Hangup()}
			}, wantCode: codeFailed, wantKind: "network", wantCause: []string{"connection", "eof", "reset"}, calls: 1},
			{name: "malformed-json", replies: func(*hangs) []providertest.Reply {
				return []providertest.Reply{providertest.JSON(200, `{"choices":[{"message":{"role":"assistant","content":"trunc`)}
			}, wantCode: codeFailed, wantKind: "malformed", wantCause: []string{"malformed"}, calls: 1},
			{name: "empty-content", replies: func(*hangs) []providertest.Reply {
				return []providertest.Reply{providertest.ChatText("", 9000, 0)}
			}, wantCode: codeFailed, wantKind: "empty", wantCause: []string{"empty"}, calls: 1},
			{name: "capacity-every-retry", replies: func(*hangs) []providertest.Reply {
				return repeat(2, capacity("This model's maximum context length is 16000 tokens. However, you requested 23112 tokens (23112 in the messages, 0 in the completion)."))
			}, wantCode: codeFailed, wantKind: "capacity", wantCause: []string{"context length", "capacity"}, calls: 2, check: smaller},
			{name: "hang/cancel", cancel: true, replies: func(h *hangs) []providertest.Reply {
				return []providertest.Reply{h.reply(false)}
			}, wantCode: codeCancelled, calls: 1},
		},
	}}

	var report []string
	for _, rt := range routes {
		t.Run(rt.name, func(t *testing.T) {
			report = append(report, runFaultRoute(t, rt)...)
		})
	}
	t.Logf("provider fault matrix (%d rows):\n%s", len(report), strings.Join(report, "\n"))
}

// runFaultRoute runs the rows of one route on one daemon and returns a
// report line per row.
func runFaultRoute(t *testing.T, rt faultRoute) []string {
	h := &hangs{held: make(chan struct{}, 8), released: make(chan struct{}, 8), stop: make(chan struct{})}
	srv := providertest.NewServer(t)
	t.Cleanup(func() { close(h.stop) }) // runs before the server closes
	ws := newWorkspace(t, "")
	user := userConfig(t, fmt.Sprintf(`
[providers.%s]
base_url = %q
api_key_env = "VTCODE_TEST_KEY"
native_compaction = %q
`, rt.provider, srv.URL+"/v1", rt.native))
	d := startDaemon(t, daemonOptions{
		Workspace: ws, RecordWire: true, WorkDoneProgress: true,
		Env:         []string{user, "VTCODE_TEST_KEY=" + testKey},
		InitOptions: map[string]any{"autoCompaction": map[string]any{"enabled": false}},
	})
	var lines []string
	for i, row := range rt.rows {
		sid := fmt.Sprintf("f%02d", i)
		var o openResult
		d.must("vtcode/openSession", map[string]any{"sessionId": sid, "provider": rt.provider, "model": rt.model, "contextWindow": 16000}, &o)
		seedHistory(t, d, sid, i)
		before := historyJSON(t, d, sid)
		base := len(srv.Requests())
		srv.Push(row.replies(h)...)

		start := time.Now()
		token := "fault-" + sid
		p, err := d.dispatch("vtcode/compact", map[string]any{"sessionId": sid, "workDoneToken": token})
		if err != nil {
			t.Fatal(err)
		}
		if row.cancel {
			select {
			case <-h.held:
			case <-time.After(callTimeout):
				t.Fatalf("%s: the provider never received the request", row.name)
			}
			if err := d.cancel(p); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		var res compactResult
		err = p.wait(ctx, &res)
		cancel()
		elapsed := time.Since(start)
		if row.cancel {
			select {
			case <-h.released:
			case <-time.After(10 * time.Second):
				t.Errorf("%s: the provider request was not abandoned after the cancel", row.name)
			}
		}

		outcome := ""
		je := rpcError(err)
		switch {
		case err != nil && je == nil:
			t.Fatalf("%s: %v", row.name, err)
		case row.wantCode == 0 && je != nil:
			t.Errorf("%s: want a %s compaction, got error %d %q data %s", row.name, row.wantMode, je.Code, je.Message, rawData(je))
			outcome = fmt.Sprintf("error %d (want %s)", je.Code, row.wantMode)
		case row.wantCode == 0:
			if res.Mode != row.wantMode || res.ArtifactID == "" {
				t.Errorf("%s: result mode %q artifact %q, want mode %q with an artifact", row.name, res.Mode, res.ArtifactID, row.wantMode)
			}
			outcome = fmt.Sprintf("ok mode=%s strategy=%s %d->%d msgs", res.Mode, res.Strategy, res.OriginalMessageCount, res.CompactedMessageCount)
		case je == nil:
			t.Errorf("%s: want error %d, got result %+v", row.name, row.wantCode, res)
			outcome = "ok (want error)"
		default:
			outcome = checkFaultError(t, row, rt, je)
			if after := historyJSON(t, d, sid); after != before {
				t.Errorf("%s: the history changed after a failed compaction", row.name)
			}
			var arts []artifactInfo
			d.must("vtcode/listArtifacts", map[string]any{"sessionId": sid}, &arts)
			if len(arts) != 0 {
				t.Errorf("%s: a failed compaction left artifacts %+v", row.name, arts)
			}
		}
		reqs := srv.Requests()[base:]
		if len(reqs) != row.calls {
			t.Errorf("%s: %d provider requests, want %d (%v)", row.name, len(reqs), row.calls, paths(reqs))
		}
		if srv.Remaining() != 0 || srv.Unexpected() != 0 {
			t.Errorf("%s: %d scripted replies unused, %d unexpected requests", row.name, srv.Remaining(), srv.Unexpected())
			t.FailNow() // the next row's script would be off
		}
		for _, r := range reqs {
			if !strings.Contains(r.Header.Get("Authorization")+r.Header.Get("X-Api-Key"), testKey) {
				t.Errorf("%s: request %s %s did not carry the API key", row.name, r.Method, r.Path)
			}
		}
		if row.check != nil {
			row.check(t, reqs)
		}
		if row.fallback && !strings.Contains(strings.Join(rawStrings(notesOf(d.notes.snapshot(), "window/logMessage")), "\n"), "fell back") {
			t.Errorf("%s: no window/logMessage reports the fallback to local", row.name)
		}
		// Every progress begun for the request has ended, a cancelled one
		// saying so.
		pv := progressOf(d.notes.snapshot(), token)
		if len(pv) > 0 && pv[len(pv)-1].Kind != "end" {
			t.Errorf("%s: progress did not end: %+v", row.name, pv)
		}
		if row.cancel && (len(pv) == 0 || !strings.Contains(strings.ToLower(pv[len(pv)-1].Message), "cancel")) {
			t.Errorf("%s: the progress of a cancelled compaction does not end with a cancellation: %+v", row.name, pv)
		}
		if row.wantCode != 0 {
			// Nothing half-written: no artifact file at all.
			if entries, _ := os.ReadDir(filepath.Join(ws, ".vtcode", "sessions", sid, "artifacts")); len(entries) > 0 {
				t.Errorf("%s: a failed or cancelled compaction left %d files in the artifacts folder", row.name, len(entries))
			}
		}

		// The session keeps working: append, prepare, and a compaction that
		// succeeds now that the provider behaves.
		var ar appendResult
		d.must("vtcode/appendMessages", map[string]any{"sessionId": sid, "messages": []message{{ID: "after", Role: "user", Content: text("still there?")}}}, &ar)
		var pr prepareResult
		d.must("vtcode/prepareRequest", map[string]any{"sessionId": sid, "messages": []message{{ID: "after2", Role: "assistant", Content: text("yes")}}}, &pr)
		if pr.Stats.Messages != ar.Messages+1 {
			t.Errorf("%s: prepare after the fault: %d messages, want %d", row.name, pr.Stats.Messages, ar.Messages+1)
		}
		if row.wantCode != 0 {
			srv.Push(rt.ok())
			var again compactResult
			d.must("vtcode/compact", map[string]any{"sessionId": sid}, &again)
			if again.ArtifactID == "" {
				t.Errorf("%s: the compaction after the fault did nothing: %+v", row.name, again)
			}
		}
		lines = append(lines, fmt.Sprintf("  %-22s %-36s %-60s calls=%d %s", rt.name, row.name, outcome, len(reqs), elapsed.Round(time.Millisecond)))
	}
	d.shutdown()
	checkNoSecret(t, testKey, d, ws)
	checkBoundedTexts(t, d.notes.snapshot())
	return lines
}

// checkFaultError checks a failure reply and returns its report.
func checkFaultError(t *testing.T, row faultRow, rt faultRoute, e *jsonrpc2.Error) string {
	t.Helper()
	if e.Code != int64(row.wantCode) {
		t.Errorf("%s: error code %d, want %d (%s)", row.name, e.Code, row.wantCode, e.Message)
	}
	if len(e.Message) > 1024 {
		t.Errorf("%s: error message is %d bytes", row.name, len(e.Message))
	}
	if row.wantCode == codeCancelled {
		return fmt.Sprintf("error %d %q", e.Code, e.Message)
	}
	fd, ok := errData(e)
	if !ok {
		t.Errorf("%s: -32803 without data {kind, provider, model, inputTokens, budget, rootCause}: %s", row.name, rawData(e))
		return fmt.Sprintf("error %d %q (no data)", e.Code, e.Message)
	}
	if fd.Kind != row.wantKind {
		t.Errorf("%s: data.kind %q, want %q (rootCause %q)", row.name, fd.Kind, row.wantKind, fd.RootCause)
	}
	if fd.Provider != rt.provider || fd.Model != rt.model {
		t.Errorf("%s: data names %s/%s, want %s/%s", row.name, fd.Provider, fd.Model, rt.provider, rt.model)
	}
	if fd.RootCause == "" || len(fd.RootCause) > 1024 {
		t.Errorf("%s: rootCause is %d bytes", row.name, len(fd.RootCause))
	}
	named := false
	for _, c := range row.wantCause {
		if strings.Contains(strings.ToLower(e.Message+" "+fd.RootCause), strings.ToLower(c)) {
			named = true
		}
	}
	if !named {
		t.Errorf("%s: the error does not name the cause (want one of %q): message %q rootCause %q", row.name, row.wantCause, e.Message, fd.RootCause)
	}
	if row.wantKind == "capacity" && (fd.InputTokens <= 0 || fd.Budget <= 0) {
		t.Errorf("%s: capacity error without inputTokens/budget: %+v", row.name, fd)
	}
	return fmt.Sprintf("error %d kind=%s input=%d budget=%d cause=%q", e.Code, fd.Kind, fd.InputTokens, fd.Budget, clip(fd.RootCause, 90))
}

// clip cuts s to n bytes for a report line.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func rawData(je *jsonrpc2.Error) string {
	if je == nil || je.Data == nil {
		return "null"
	}
	return string(*je.Data)
}

func rawStrings(raws []json.RawMessage) []string {
	out := make([]string, len(raws))
	for i, r := range raws {
		out[i] = string(r)
	}
	return out
}

func paths(reqs []providertest.Request) []string {
	var out []string
	for _, r := range reqs {
		out = append(out, r.Path)
	}
	return out
}

// seedHistory appends a compactable history of about 9,000 tokens: six
// turns with tool results.
func seedHistory(t *testing.T, d *daemon, sid string, salt int) {
	t.Helper()
	var msgs []message
	for turn := 0; turn < 6; turn++ {
		call := fmt.Sprintf("call_%d", turn)
		msgs = append(msgs,
			message{ID: fmt.Sprintf("u%d", turn), Role: "user", Content: text(fmt.Sprintf("Step %d: %s", turn, words(uint64(salt*100+turn), 40)))},
			message{ID: fmt.Sprintf("a%d", turn), Role: "assistant", ToolCalls: []toolCall{{ID: call, Name: "read_file", Arguments: fmt.Sprintf(`{"path":"pkg/file%d.go"}`, turn)}}},
			message{ID: fmt.Sprintf("t%d", turn), Role: "tool", ToolCallID: call, ToolName: "read_file", Content: text(words(uint64(salt*100+turn+50), 1300))},
		)
	}
	var ar appendResult
	d.must("vtcode/appendMessages", map[string]any{"sessionId": sid, "messages": msgs}, &ar)
	if ar.HistoryTokens < 6000 {
		t.Fatalf("seed history is only %d tokens", ar.HistoryTokens)
	}
}

func historyJSON(t *testing.T, d *daemon, sid string) string {
	t.Helper()
	var h json.RawMessage
	d.must("vtcode/history", map[string]any{"sessionId": sid}, &h)
	return string(h)
}

// checkNoSecret fails when secret appears in anything the daemon said or
// wrote: the frames it sent, its stderr, or any file under ws.
func checkNoSecret(t *testing.T, secret string, d *daemon, ws string, extraFiles ...string) {
	t.Helper()
	if strings.Contains(d.wireText(), secret) {
		i := strings.Index(d.wireText(), secret)
		t.Errorf("the API key appears in a frame from the daemon: …%s…", d.wireText()[max(0, i-200):i])
	}
	if s := d.stderrText(); strings.Contains(s, secret) {
		t.Errorf("the API key appears in the daemon's stderr")
	}
	files := 0
	err := filepath.Walk(ws, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), secret) {
			t.Errorf("the API key appears in %s", path)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	for _, f := range extraFiles {
		if strings.Contains(readFile(t, f), secret) {
			t.Errorf("the API key appears in %s", f)
		}
	}
	if files == 0 {
		t.Errorf("no file under %s to scan", ws)
	}
}

// checkBoundedTexts fails when a user-visible notification text is over
// 1 KiB (docs/design.md §1, §10).
func checkBoundedTexts(t *testing.T, notes []notification) {
	t.Helper()
	for _, n := range notes {
		var p struct {
			Message string `json:"message"`
			Value   struct {
				Message string `json:"message"`
			} `json:"value"`
		}
		if json.Unmarshal(n.Params, &p) != nil {
			continue
		}
		for _, m := range []string{p.Message, p.Value.Message} {
			if len(m) > 1024 {
				t.Errorf("%s text is %d bytes: %q", n.Method, len(m), tail(m, 200))
			}
		}
	}
}

// TestCancelAutoCompaction cancels a prepareRequest whose automatic
// compaction waits on a hung provider: the reply is -32800 and the state is
// exactly as before the request (docs/design.md §1): the request's messages are not
// appended, no artifact is written, and the session goes on.
func TestCancelAutoCompaction(t *testing.T) {
	h := &hangs{held: make(chan struct{}, 1), released: make(chan struct{}, 1), stop: make(chan struct{})}
	srv := providertest.NewServer(t, h.reply(false))
	t.Cleanup(func() { close(h.stop) })
	ws := newWorkspace(t, "")
	user := userConfig(t, fmt.Sprintf("[providers.openai]\nbase_url = %q\napi_key_env = \"VTCODE_TEST_KEY\"\nnative_compaction = \"never\"\n", srv.URL+"/v1"))
	d := startDaemon(t, daemonOptions{Workspace: ws, WorkDoneProgress: true, Env: []string{user, "VTCODE_TEST_KEY=" + testKey}})
	var o openResult
	d.must("vtcode/openSession", map[string]any{"sessionId": "c", "provider": "openai", "model": "gpt-5.1-codex", "contextWindow": 16000}, &o)
	seedHistory(t, d, "c", 3)
	before := historyJSON(t, d, "c")
	var st stats
	d.must("vtcode/projectionStats", map[string]any{"sessionId": "c"}, &st)

	// A tool batch big enough to cross the threshold.
	p, err := d.dispatch("vtcode/prepareRequest", map[string]any{"sessionId": "c", "messages": []message{
		{ID: "n1", Role: "user", Content: text("read the big file")},
		{ID: "n2", Role: "assistant", ToolCalls: []toolCall{{ID: "big", Name: "read_file", Arguments: `{"path":"big.go"}`}}},
		{ID: "n3", Role: "tool", ToolCallID: "big", ToolName: "read_file", Content: text(words(99, 9000))},
	}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.held:
	case <-time.After(callTimeout):
		t.Fatal("the automatic compaction never reached the provider")
	}
	// While it compacts, stats of the session answer at once, in state compacting.
	var during stats
	d.must("vtcode/projectionStats", map[string]any{"sessionId": "c"}, &during)
	if during.State != "compacting" {
		t.Errorf("projectionStats during the compaction: state %q, want compacting", during.State)
	}
	if err := d.cancel(p); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	err = p.wait(ctx, nil)
	if je := rpcError(err); je == nil || je.Code != codeCancelled {
		t.Fatalf("cancelled prepareRequest: %v, want -32800", err)
	}
	if after := historyJSON(t, d, "c"); after != before {
		t.Errorf("the cancelled prepareRequest changed the history (its messages must not be appended)")
	}
	var arts []artifactInfo
	d.must("vtcode/listArtifacts", map[string]any{"sessionId": "c"}, &arts)
	if entries, _ := os.ReadDir(filepath.Join(ws, ".vtcode", "sessions", "c", "artifacts")); len(arts) > 0 || len(entries) > 0 {
		t.Errorf("the cancelled compaction left artifacts: %d listed, %d files", len(arts), len(entries))
	}
	d.must("vtcode/projectionStats", map[string]any{"sessionId": "c"}, &during)
	if during.Messages != st.Messages || during.State == "compacting" {
		t.Errorf("stats after the cancel: %+v, want %d messages and not compacting", during, st.Messages)
	}
	var pr prepareResult
	d.must("vtcode/prepareRequest", map[string]any{"sessionId": "c", "messages": []message{{ID: "n4", Role: "user", Content: text("go on")}}}, &pr)
	if pr.Stats.Messages != st.Messages+1 {
		t.Errorf("prepare after the cancel: %d messages, want %d", pr.Stats.Messages, st.Messages+1)
	}
	d.shutdown()
	checkNoSecret(t, testKey, d, ws)
}

// TestCancelBehindHungPassOne: pass 1 of two-pass compaction (started in the
// background at the soft threshold) hangs at the provider; the next request
// that crosses the threshold waits for it (the daemon lets a running pass 1
// finish rather than start a fresh summary). The test checks that the
// waiting request announces "compacting" (vtcode/tokenPressure), that
// projectionStats then answers at once in state compacting, and that the
// request stays cancellable with $/cancelRequest (-32800, state unchanged).
// Without a cancel the wait lasts as long as pass 1: up to the provider
// clients' HTTP timeout (httpapi.DefaultTimeout, 10 min).
func TestCancelBehindHungPassOne(t *testing.T) {
	h := &hangs{held: make(chan struct{}, 4), released: make(chan struct{}, 4), stop: make(chan struct{})}
	srv := providertest.NewServer(t, h.reply(false))
	t.Cleanup(func() { close(h.stop) })
	ws := newWorkspace(t, "")
	user := userConfig(t, fmt.Sprintf("[providers.openai]\nbase_url = %q\napi_key_env = \"VTCODE_TEST_KEY\"\nnative_compaction = \"never\"\n", srv.URL+"/v1"))
	d := startDaemon(t, daemonOptions{Workspace: ws, Env: []string{user, "VTCODE_TEST_KEY=" + testKey}})
	var o openResult
	d.must("vtcode/openSession", map[string]any{"sessionId": "c", "provider": "openai", "model": "gpt-5.1-codex", "contextWindow": 16000}, &o)
	seedHistory(t, d, "c", 3)
	var pr prepareResult
	d.must("vtcode/prepareRequest", map[string]any{"sessionId": "c", "messages": []message{
		{ID: "n1", Role: "user", Content: text("read the file")},
		{ID: "n2", Role: "assistant", ToolCalls: []toolCall{{ID: "f", Name: "read_file", Arguments: `{"path":"f.go"}`}}},
		{ID: "n3", Role: "tool", ToolCallID: "f", ToolName: "read_file", Content: text(words(99, 6000))},
	}}, &pr)
	if pr.Stats.State != "warn" || pr.Compaction != nil {
		t.Fatalf("the first prepare should cross only the soft threshold: %+v", pr.Stats)
	}
	select {
	case <-h.held:
	case <-time.After(callTimeout):
		t.Fatal("no background pass 1 reached the provider")
	}
	before := historyJSON(t, d, "c")
	start := time.Now()
	p, err := d.dispatch("vtcode/prepareRequest", map[string]any{"sessionId": "c", "messages": []message{
		{ID: "n4", Role: "user", Content: text("read the big file")},
		{ID: "n5", Role: "assistant", ToolCalls: []toolCall{{ID: "g", Name: "read_file", Arguments: `{"path":"g.go"}`}}},
		{ID: "n6", Role: "tool", ToolCallID: "g", ToolName: "read_file", Content: text(words(98, 9000))},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.notes.await(callTimeout, pressureState("c", "compacting")); err != nil {
		t.Fatalf("no tokenPressure in state compacting: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var st stats
	if err := d.call(ctx, "vtcode/projectionStats", map[string]any{"sessionId": "c"}, &st); err != nil || st.State != "compacting" {
		t.Errorf("projectionStats while compacting: state %q, err %v; want an immediate answer in state compacting", st.State, err)
	}
	waited := time.Since(start)
	if err := d.cancel(p); err != nil {
		t.Fatal(err)
	}
	if je := rpcError(p.wait(ctx, nil)); je == nil || je.Code != codeCancelled {
		t.Fatalf("the request waiting on pass 1: %v, want -32800", je)
	}
	if historyJSON(t, d, "c") != before {
		t.Errorf("the cancelled request changed the history")
	}
	t.Logf("a threshold-crossing prepareRequest waited on the hung pass 1 (%s until cancelled)", waited.Round(time.Millisecond))
	d.kill()
}

// pressureState matches a vtcode/tokenPressure of session sid in state.
func pressureState(sid, state string) func([]notification) bool {
	return func(notes []notification) bool {
		for _, raw := range notesOf(notes, "vtcode/tokenPressure") {
			var p struct {
				SessionID string `json:"sessionId"`
				State     string `json:"state"`
			}
			if json.Unmarshal(raw, &p) == nil && p.SessionID == sid && p.State == state {
				return true
			}
		}
		return false
	}
}

// TestStatsNotBlockedByCompaction pipelines a prepareRequest whose automatic
// compaction hangs at the provider and, right behind it, a projectionStats
// of the same session, as a status bar does. rpc/doc.go: "projectionStats
// sent while its session is compacting is answered at once with the last
// stats, in state compacting, instead of waiting for the compaction"; the
// session layer's queue also releases stats readers when a compaction
// begins while they wait. The stats request must be answered while the
// compaction is still hanging.
func TestStatsNotBlockedByCompaction(t *testing.T) {
	h := &hangs{held: make(chan struct{}, 4), released: make(chan struct{}, 4), stop: make(chan struct{})}
	srv := providertest.NewServer(t, h.reply(false))
	t.Cleanup(func() { close(h.stop) })
	ws := newWorkspace(t, "")
	user := userConfig(t, fmt.Sprintf("[providers.openai]\nbase_url = %q\napi_key_env = \"VTCODE_TEST_KEY\"\nnative_compaction = \"never\"\n", srv.URL+"/v1"))
	d := startDaemon(t, daemonOptions{Workspace: ws, Env: []string{user, "VTCODE_TEST_KEY=" + testKey}})
	var o openResult
	d.must("vtcode/openSession", map[string]any{"sessionId": "c", "provider": "openai", "model": "gpt-5.1-codex", "contextWindow": 16000}, &o)
	seedHistory(t, d, "c", 4)
	p, err := d.dispatch("vtcode/prepareRequest", map[string]any{"sessionId": "c", "messages": []message{
		{ID: "n1", Role: "user", Content: text("read the big file")},
		{ID: "n2", Role: "assistant", ToolCalls: []toolCall{{ID: "g", Name: "read_file", Arguments: `{"path":"g.go"}`}}},
		{ID: "n3", Role: "tool", ToolCallID: "g", ToolName: "read_file", Content: text(words(98, 9000))},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := d.dispatch("vtcode/projectionStats", map[string]any{"sessionId": "c"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.held:
	case <-time.After(callTimeout):
		t.Fatal("the automatic compaction never reached the provider")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var st stats
	if err := ps.wait(ctx, &st); err != nil {
		t.Errorf("BUG: projectionStats queued behind a prepareRequest is not answered while that request's compaction "+
			"hangs (waited 5s after the compaction began): %v. The rpc lane decides snapshot-or-wait only when the stats "+
			"request arrives (rpc/server.go dispatch: s.lanes.compacting(lane)); a stats request that entered the lane just "+
			"before the compaction began waits for the whole compaction, although session/queue.go would release it.", err)
	} else if st.State != "compacting" {
		t.Errorf("projectionStats during the compaction: state %q, want compacting", st.State)
	}
	_ = d.cancel(p)
	_ = d.cancel(ps)
	cctx, ccancel := context.WithTimeout(context.Background(), callTimeout)
	defer ccancel()
	if je := rpcError(p.wait(cctx, nil)); je == nil || je.Code != codeCancelled {
		t.Errorf("the cancelled prepareRequest: %v, want -32800", je)
	}
	d.kill()
}
