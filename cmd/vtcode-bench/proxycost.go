package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/vtcode/vtcode-ls/providers/catalog"
	"github.com/vtcode/vtcode-ls/proxy"
	"github.com/vtcode/vtcode-ls/proxy/proxytest"
	"github.com/vtcode/vtcode-ls/session"
)

// ProxyCostRow is a scripted agent loop (an agent that sends its whole
// conversation with every request and reads one file per tool turn) run
// against the strict upstream of proxy/proxytest twice: alone, and through
// vtcode-ls proxy with the default policy at costWindow. The costs are the
// upstream's byte-level prompt-cache model under the pricing's rates.
type ProxyCostRow struct {
	Wire        string `json:"wire"` // messages, chat or gemini
	ResultBytes int    `json:"resultBytes"`
	Turns       int    `json:"turns"`
	Pricing     string `json:"pricing"`
	// Stable and Requests are the prefix-stable requests (that start with
	// the previous request byte for byte) and the requests after the first,
	// alone and through the proxy.
	DirectStable    int `json:"directStable"`
	DirectRequests  int `json:"directRequests"`
	ProxiedStable   int `json:"proxiedStable"`
	ProxiedRequests int `json:"proxiedRequests"`
	// Rejected counts the requests the strict upstream refused (both runs).
	Rejected int `json:"rejected"`
	// SentRatio is the prompt bytes sent through the proxy ÷ alone;
	// CostRatio the modelled input cost through the proxy ÷ alone.
	SentRatio float64 `json:"sentRatio"`
	CostRatio float64 `json:"costRatio"`
}

// proxyCostTurns is the length of the scripted loop: the minimal
// agent loop.
const proxyCostTurns = 30

// benchProxyCost runs the scripted loop on every wire with small and large
// results.
func benchProxyCost(ctx context.Context) ([]ProxyCostRow, error) {
	var rows []ProxyCostRow
	for _, wire := range []string{"messages", "chat", "gemini"} {
		for _, size := range []int{6_000, 20_000} {
			r, err := proxyCostPlay(ctx, wire, size, proxyCostTurns)
			if err != nil {
				return nil, fmt.Errorf("%s, %d-byte results: %w", wire, size, err)
			}
			rows = append(rows, r...)
		}
	}
	return rows, nil
}

// proxyCostScript is the fake's script: one read per turn, then the answer.
func proxyCostScript(turns int) []proxytest.Turn {
	var out []proxytest.Turn
	for i := range turns {
		out = append(out, proxytest.Turn{Text: fmt.Sprintf("Reading module %02d.", i),
			Calls: []proxytest.Call{{Name: "read", Input: json.RawMessage(fmt.Sprintf(`{"path":"module%02d.go"}`, i))}}})
	}
	return append(out, proxytest.Turn{Text: "FINAL: all modules read."})
}

// proxyCostPlay plays the loop alone once, and through the proxy once per
// pricing of costRoutes (and Gemini's on its wire), and returns a row per pricing. Each proxied play
// is told the pricing its row is billed at ([[models]] cache multipliers
// for every wire's model): the schedule decides whether a step pays with
// the route's pricing, so a row that bills one pricing must not measure
// the decisions made for another (a chat route priced as OpenAI's billed
// at Anthropic's write premium measured a mismatch no configured route
// has).
func proxyCostPlay(ctx context.Context, wire string, size, turns int) ([]ProxyCostRow, error) {
	o := proxytest.Options{Strict: true}
	direct, err := proxytest.Start(proxyCostScript(turns), o)
	if err != nil {
		return nil, err
	}
	defer direct.Close()
	if err := agentLoop(ctx, wire, direct.URL, size); err != nil {
		return nil, fmt.Errorf("alone: %w", err)
	}
	ds, dn := direct.Strictness().Stable("")
	var cat *catalog.Catalog // the built-in cost table
	var rows []ProxyCostRow
	pricings := costRoutes
	if wire == "gemini" {
		pricings = append(pricings[:len(pricings):len(pricings)], geminiCostRoute)
	}
	for _, pr := range pricings {
		cc := cat.Cost(pr.provider, pr.model)
		through, err := proxyCostThrough(ctx, wire, size, turns, cc)
		if err != nil {
			return nil, fmt.Errorf("%s pricing: %w", pr.name, err)
		}
		ps, pn := through.Strictness().Stable("")
		rows = append(rows, ProxyCostRow{Wire: wire, ResultBytes: size, Turns: turns, Pricing: pr.name,
			DirectStable: ds, DirectRequests: dn, ProxiedStable: ps, ProxiedRequests: pn,
			Rejected:  len(direct.Strictness().Rejected) + len(through.Strictness().Rejected),
			SentRatio: ratioOf(float64(promptBytes(through)), float64(promptBytes(direct))),
			CostRatio: ratioOf(modelledCost(through, cc), modelledCost(direct, cc))})
		through.Close()
	}
	return rows, nil
}

// proxyCostThrough plays the loop through a proxy whose route of every
// wire's model is priced cc, against a strict upstream it returns (the
// caller closes it).
func proxyCostThrough(ctx context.Context, wire string, size, turns int, cc catalog.CacheCost) (*proxytest.Upstream, error) {
	through, err := proxytest.Start(proxyCostScript(turns), proxytest.Options{Strict: true})
	if err != nil {
		return nil, err
	}
	ws, err := os.MkdirTemp("", "vtcode-bench-proxycost-")
	if err != nil {
		through.Close()
		return nil, err
	}
	defer os.RemoveAll(ws)
	cfg := fmt.Sprintf("[providers.anthropic]\nbase_url = %q\n[providers.openai]\nbase_url = %q\n[providers.gemini]\nbase_url = %q\n[context]\nmax_context_tokens = %d\n",
		through.URL, through.URL+"/v1", through.URL, costWindow)
	for _, m := range []struct{ provider, model string }{{"anthropic", "claude-sonnet-4-5"}, {"openai", "gpt-4.1"}, {geminiCostRoute.provider, geminiCostRoute.model}} {
		cfg += fmt.Sprintf("[[models]]\nprovider = %q\nmodel = %q\ncache_read_multiplier = %g\ncache_write_multiplier = %g\n",
			m.provider, m.model, cc.Read, cc.Write)
	}
	user := filepath.Join(ws, "user.toml")
	if err := os.WriteFile(user, []byte(cfg), 0o600); err != nil {
		through.Close()
		return nil, err
	}
	mgr := session.NewManager(session.Options{NoWatch: true, UserConfig: user})
	defer mgr.Close()
	if err := mgr.AddWorkspace(ws, nil); err != nil {
		through.Close()
		return nil, err
	}
	srv := httptest.NewServer(proxy.New(proxy.Options{Manager: mgr}))
	defer srv.Close()
	if err := agentLoop(ctx, wire, srv.URL, size); err != nil {
		through.Close()
		return nil, fmt.Errorf("through the proxy: %w", err)
	}
	return through, nil
}

func ratioOf(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func promptBytes(up *proxytest.Upstream) int {
	n := 0
	for _, e := range up.Strictness().Entries {
		n += e.PromptBytes
	}
	return n
}

// modelledCost is the input cost of every request an upstream answered
// under cc, in uncached-token units (4 bytes a token).
func modelledCost(up *proxytest.Upstream, cc catalog.CacheCost) float64 {
	sum := 0.0
	for _, e := range up.Strictness().Entries {
		sum += cc.Units(e.PromptBytes/4, e.CachedBytes/4)
	}
	return sum
}

// geminiCostRoute is the pricing the Gemini loop adds to costRoutes: the
// model the loop names (the one Gemini CLI 0.61 sends its turns to; its
// implicit cache serves prefixes of 4,096 tokens or more), cache reads at
// 0.1×.
var geminiCostRoute = struct{ name, provider, model string }{"gemini", "gemini", "gemini-3.1-pro-preview"}

// agentLoop is a minimal coding agent on wire against base: it sends its
// whole conversation, runs the read calls of the answer (a file of size
// bytes each) and goes on until an answer calls no tool.
func agentLoop(ctx context.Context, wire, base string, size int) error {
	if wire == "gemini" {
		return geminiLoop(ctx, base, size)
	}
	file := func(call string) string {
		var sb strings.Builder
		for l := 0; sb.Len() < size; l++ {
			fmt.Fprintf(&sb, "// %s line %04d: func handler_%04d(w http.ResponseWriter, r *http.Request) { serve(w, r, %d) }\n", call, l, l, l)
		}
		return sb.String()[:size]
	}
	system := "You are a coding agent. Read what the user asks, one file at a time."
	task := "Read every module of this folder, one by one."
	var msgs []any
	if wire == "chat" {
		msgs = append(msgs, map[string]any{"role": "system", "content": system})
	}
	msgs = append(msgs, map[string]any{"role": "user", "content": task})
	for step := 0; step < 2*proxyCostTurns+4; step++ {
		var body map[string]any
		path := "/v1/messages"
		if wire == "chat" {
			path = "/v1/chat/completions"
			body = map[string]any{"model": "gpt-4.1", "messages": msgs,
				"tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "read", "parameters": map[string]any{"type": "object"}}}}}
		} else {
			body = map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 4096, "system": system, "messages": msgs,
				"tools": []any{map[string]any{"name": "read", "input_schema": map[string]any{"type": "object"}}}}
		}
		raw, err := postJSON(ctx, base+path, body)
		if err != nil {
			return fmt.Errorf("step %d: %w", step, err)
		}
		if wire == "chat" {
			var resp struct {
				Choices []struct {
					Message struct {
						Content   string            `json:"content"`
						ToolCalls []json.RawMessage `json:"tool_calls"`
					} `json:"message"`
				} `json:"choices"`
			}
			if err := json.Unmarshal(raw, &resp); err != nil || len(resp.Choices) == 0 {
				return fmt.Errorf("step %d: answer %.200s", step, raw)
			}
			m := resp.Choices[0].Message
			am := map[string]any{"role": "assistant", "content": m.Content}
			if len(m.ToolCalls) == 0 {
				return nil
			}
			am["tool_calls"] = m.ToolCalls
			msgs = append(msgs, am)
			for _, c := range m.ToolCalls {
				var call struct {
					ID string `json:"id"`
				}
				json.Unmarshal(c, &call)
				msgs = append(msgs, map[string]any{"role": "tool", "tool_call_id": call.ID, "content": file(call.ID)})
			}
			continue
		}
		var resp struct {
			Content []json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(raw, &resp); err != nil {
			return fmt.Errorf("step %d: answer %.200s", step, raw)
		}
		msgs = append(msgs, map[string]any{"role": "assistant", "content": resp.Content})
		var results []any
		for _, b := range resp.Content {
			var blk struct{ Type, ID string }
			json.Unmarshal(b, &blk)
			if blk.Type == "tool_use" {
				results = append(results, map[string]any{"type": "tool_result", "tool_use_id": blk.ID, "content": file(blk.ID)})
			}
		}
		if len(results) == 0 {
			return nil
		}
		msgs = append(msgs, map[string]any{"role": "user", "content": results})
	}
	return fmt.Errorf("the loop did not finish")
}

// geminiLoop is agentLoop on the Gemini API (generateContent, as Gemini
// CLI's requests are shaped): every model content goes back as it came,
// thoughtSignature included, followed by a user content with a
// functionResponse per functionCall.
func geminiLoop(ctx context.Context, base string, size int) error {
	file := func(call string) string {
		var sb strings.Builder
		for l := 0; sb.Len() < size; l++ {
			fmt.Fprintf(&sb, "// %s line %04d: func handler_%04d(w http.ResponseWriter, r *http.Request) { serve(w, r, %d) }\n", call, l, l, l)
		}
		return sb.String()[:size]
	}
	contents := []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "Read every module of this folder, one by one."}}}}
	for step := 0; step < 2*proxyCostTurns+4; step++ {
		body := map[string]any{"contents": contents,
			"systemInstruction": map[string]any{"parts": []any{map[string]any{"text": "You are a coding agent. Read what the user asks, one file at a time."}}},
			"tools":             []any{map[string]any{"functionDeclarations": []any{map[string]any{"name": "read", "parameters": map[string]any{"type": "object"}}}}}}
		raw, err := postJSON(ctx, base+"/v1beta/models/"+geminiCostRoute.model+":generateContent", body)
		if err != nil {
			return fmt.Errorf("step %d: %w", step, err)
		}
		var resp struct {
			Candidates []struct {
				Content json.RawMessage `json:"content"`
			} `json:"candidates"`
		}
		if err := json.Unmarshal(raw, &resp); err != nil || len(resp.Candidates) == 0 {
			return fmt.Errorf("step %d: answer %.200s", step, raw)
		}
		var content struct {
			Parts []struct {
				FunctionCall *struct {
					Name string          `json:"name"`
					Args json.RawMessage `json:"args"`
				} `json:"functionCall"`
			} `json:"parts"`
		}
		if err := json.Unmarshal(resp.Candidates[0].Content, &content); err != nil {
			return fmt.Errorf("step %d: answer %.200s", step, raw)
		}
		var responses []any
		for _, p := range content.Parts {
			if c := p.FunctionCall; c != nil {
				responses = append(responses, map[string]any{"functionResponse": map[string]any{"name": c.Name,
					"response": map[string]any{"output": file(string(c.Args))}}})
			}
		}
		if len(responses) == 0 {
			return nil
		}
		contents = append(contents, resp.Candidates[0].Content, map[string]any{"role": "user", "parts": responses})
	}
	return fmt.Errorf("the loop did not finish")
}

func postJSON(ctx context.Context, url string, body any) ([]byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", "sk-bench")
	req.Header.Set("Authorization", "Bearer sk-bench")
	req.Header.Set("x-goog-api-key", "sk-bench")
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d: %.300s", resp.StatusCode, out)
	}
	return out, nil
}

// writeProxyCostTable writes the proxied cost table, beside the protocol
// path's (writeCostTable).
func writeProxyCostTable(w io.Writer, rows []ProxyCostRow) error {
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintf(w, "6b. Proxied prompt-cache cost: a scripted agent loop of %d tool turns (the whole conversation sent every\n", proxyCostTurns)
	fmt.Fprintf(w, "   request, one read per turn) through vtcode-ls proxy (default policy, %s window) vs the agent alone,\n", formatInt(costWindow))
	fmt.Fprintf(w, "   against the strict fake upstream (proxy/proxytest: what the APIs refuse is refused; byte-level\n")
	fmt.Fprintf(w, "   prompt-cache model); stable = requests starting with the previous one byte for byte\n")
	t := newTable(w)
	t.row("wire", "result", "pricing", "stable alone", "stable proxied", "rejected", "sent", "cost")
	for _, r := range rows {
		t.row(r.Wire, fmtBytes(int64(r.ResultBytes)), r.Pricing,
			fmt.Sprintf("%d/%d", r.DirectStable, r.DirectRequests), fmt.Sprintf("%d/%d", r.ProxiedStable, r.ProxiedRequests),
			fmt.Sprint(r.Rejected), fmtRatio(r.SentRatio), fmtRatio(r.CostRatio))
	}
	if err := t.flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return nil
}
