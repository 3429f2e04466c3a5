// Package historytest generates synthetic agent histories for tests and
// benchmarks of the packages that consume [history.Message] lists.
//
// [Synthetic] builds a realistic coding-agent session from a [Config]: a system
// prompt, user turns, assistant batches of parallel tool calls with their
// results, visible reasoning and opaque reasoning blocks, thought signatures,
// large tool inputs, image parts and unknown fields. The output depends only on
// the Config, so a seed reproduces a history exactly. [Preset1M] is the
// history the engine's performance targets are stated for.
package historytest

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/vtcode/vtcode-ls/history"
)

// Config describes a synthetic history.
type Config struct {
	// Seed selects the history; equal configs produce equal histories.
	Seed uint64
	// Messages is the exact number of messages when Faults is false and the
	// batches fit; 0 means a natural length of about 5 messages per batch.
	Messages int
	// Batches is the number of assistant messages with tool calls.
	Batches int
	// Tokens is the approximate o200k estimate of the whole history; 0 means
	// 500 tokens per message.
	Tokens int
	// MaxParallel bounds the calls of one batch; 0 means 4.
	MaxParallel int
	// ReuseIDs is the fraction of batches whose call ids restart at call_0
	// (as several providers do); the others get unique ids.
	ReuseIDs float64
	// Reasoning adds visible reasoning and opaque reasoningDetails blocks.
	Reasoning bool
	// Signatures adds thought signatures to some calls.
	Signatures bool
	// Images adds image parts to some user messages and tool results.
	Images bool
	// Unknown adds fields the protocol does not define to some messages, tool
	// calls and parts.
	Unknown bool
	// Faults breaks pairing the way real clients do: reordered completions,
	// missing results, orphan results, system messages and other batches
	// between a call and its results. The history is then not normalized and
	// Messages is approximate.
	Faults bool
}

// Preset1MConfig is the configuration of [Preset1M]: 2,000 messages, 400 tool
// batches and about 1,000,000 o200k tokens, with every feature on and valid
// pairing.
func Preset1MConfig() Config {
	return Config{
		Seed:        1,
		Messages:    2000,
		Batches:     400,
		Tokens:      1_000_000,
		MaxParallel: 5,
		ReuseIDs:    0.5,
		Reasoning:   true,
		Signatures:  true,
		Images:      true,
		Unknown:     true,
	}
}

// Preset1M returns a fresh copy of the history of [Preset1MConfig], without
// cached estimates.
func Preset1M() []history.Message { return Synthetic(Preset1MConfig()) }

// tool describes one synthetic tool: its result style and relative result size.
type tool struct {
	name   string
	result style
	weight float64
}

var tools = []tool{
	{"read_file", styleCode, 3},
	{"read_file", styleCode, 3},
	{"read_file", styleCode, 3},
	{"grep_search", styleGrep, 1.5},
	{"grep_search", styleGrep, 1.5},
	{"list_files", styleListing, 0.7},
	{"run_command", styleLog, 1.2},
	{"run_command", styleLog, 1.2},
	{"web_fetch", styleProse, 2},
}

// editTools are picked for 12 % of calls; their inputs are large and their
// results short.
var editTools = []tool{
	{"write_file", styleLog, 0.05},
	{"edit_file", styleLog, 0.05},
	{"apply_patch", styleLog, 0.05},
}

type gen struct {
	cfg   Config
	r     *rand.Rand
	tg    textGen
	scale float64 // token sizes of non-result messages scale with tokens per message
	ids   int
}

// pending is a result to fill once the result budget is known.
type pending struct {
	msg    int
	st     style
	weight float64
	image  bool
}

// Synthetic returns the history described by cfg, without cached estimates.
func Synthetic(cfg Config) []history.Message {
	if cfg.MaxParallel <= 0 {
		cfg.MaxParallel = 4
	}
	if cfg.Batches < 0 {
		cfg.Batches = 0
	}
	r := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))
	g := &gen{cfg: cfg, r: r, tg: textGen{r}}

	// Calls per batch.
	calls := make([]int, cfg.Batches)
	results := 0
	for i := range calls {
		k := 1
		switch x := r.Float64(); {
		case x < 0.45:
		case x < 0.70:
			k = 2
		case x < 0.85:
			k = 3
		case x < 0.95:
			k = 4
		default:
			k = 5
		}
		calls[i] = min(k, cfg.MaxParallel)
		results += calls[i]
	}
	if cfg.Messages <= 0 {
		cfg.Messages = 1 + cfg.Batches + results + 2*max(1, cfg.Batches/2)
	}
	rem := cfg.Messages - 1 - cfg.Batches - results
	for i := 0; rem < 2 && i < len(calls); i++ {
		if calls[i] > 1 {
			rem += calls[i] - 1
			results -= calls[i] - 1
			calls[i] = 1
		}
	}
	turns := max(1, rem/2)
	extraSystem := rem >= 2 && rem%2 == 1
	if cfg.Tokens <= 0 {
		cfg.Tokens = 500 * cfg.Messages
	}
	g.scale = float64(cfg.Tokens) / float64(max(1, cfg.Messages)) / 500

	// Batches per turn, in order.
	perTurn := make([]int, turns)
	for range cfg.Batches {
		perTurn[r.IntN(turns)]++
	}

	msgs := make([]history.Message, 0, cfg.Messages+8)
	var fill []pending
	msgs = append(msgs, history.NewText(history.System, g.tg.text(styleProse, g.bytes(styleProse, 1500))))
	b := 0
	for t := range turns {
		msgs = append(msgs, g.user())
		if extraSystem && t == turns/2 {
			msgs = append(msgs, history.NewText(history.System, "<system-reminder>"+g.tg.text(styleProse, g.bytes(styleProse, 60))+"</system-reminder>"))
		}
		for range perTurn[t] {
			msgs, fill = g.batch(msgs, fill, calls[b])
			b++
		}
		msgs = append(msgs, g.assistantText())
	}

	// Size the results so that the whole history lands near cfg.Tokens.
	used := 0.0
	for i := range msgs {
		used += approxTokens(&msgs[i])
	}
	budget := math.Max(float64(cfg.Tokens)-used, float64(len(fill))*40)
	totalWeight := 0.0
	for _, f := range fill {
		totalWeight += f.weight
	}
	for _, f := range fill {
		tokens := budget * f.weight / totalWeight
		m := &msgs[f.msg]
		text := g.tg.text(f.st, tokensToBytes(f.st, tokens))
		if f.image {
			m.Content = history.Parts(history.TextPart(text), g.imagePart())
		} else {
			m.Content = history.Text(text)
		}
	}
	if cfg.Faults {
		msgs = g.breakPairing(msgs)
	}
	return msgs
}

// approxTokens is the generator's cheap density-based estimate of what is
// already sized.
func approxTokens(m *history.Message) float64 {
	n := 4.0 + float64(len(m.Content.Text()))/bytesPerToken[styleProse]
	for _, p := range m.Content.PartList() {
		if p.IsMedia() {
			n += 1000
		}
	}
	for _, tc := range m.ToolCalls {
		n += 24 + float64(len(tc.Arguments)+len(tc.Input))/bytesPerToken[styleCode] + float64(len(tc.ThoughtSignature))/bytesPerToken[styleBase64]
	}
	n += float64(len(m.Reasoning)) / bytesPerToken[styleProse]
	for _, d := range m.ReasoningDetails {
		n += float64(len(d)) / 4
	}
	return n
}

// bytes returns the bytes of style st for a base token size, scaled and
// jittered.
func (g *gen) bytes(st style, baseTokens float64) int {
	jitter := 0.5 + g.r.Float64()
	return tokensToBytes(st, baseTokens*g.scale*jitter)
}

func (g *gen) user() history.Message {
	text := g.tg.text(styleProse, g.bytes(styleProse, 15+float64(g.r.IntN(150))))
	m := history.NewText(history.User, text)
	switch {
	case g.cfg.Images && g.r.IntN(25) == 0:
		m.Content = history.Parts(history.TextPart(text), g.imagePart())
	case g.cfg.Unknown && g.r.IntN(10) == 0:
		m.Content = history.Parts(rawPart(map[string]any{
			"type": "text", "text": text, "cache_control": map[string]string{"type": "ephemeral"},
		}))
	}
	if g.cfg.Unknown && g.r.IntN(8) == 0 {
		m.ID = fmt.Sprintf("u-%d", g.r.IntN(1_000_000))
	}
	return m
}

func (g *gen) assistantText() history.Message {
	m := history.NewText(history.Assistant, g.tg.text(styleProse, g.bytes(styleProse, 40+float64(g.r.IntN(200)))))
	g.extra(&m)
	return m
}

func (g *gen) extra(m *history.Message) {
	if g.cfg.Unknown && g.r.IntN(10) == 0 {
		m.Extra = map[string]json.RawMessage{
			"providerMetadata": json.RawMessage(fmt.Sprintf(`{"latencyMs":%d,"model":"synthetic-1"}`, g.r.IntN(9000))),
		}
	}
}

func (g *gen) imagePart() history.Part {
	return rawPart(map[string]any{
		"type":   "image",
		"source": map[string]string{"type": "base64", "media_type": "image/png", "data": g.tg.text(styleBase64, 256)},
	})
}

func rawPart(v map[string]any) history.Part {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var p history.Part
	if err := json.Unmarshal(b, &p); err != nil {
		panic(err)
	}
	return p
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// batch appends one assistant message with k calls and its k results; the
// results' content is sized later.
func (g *gen) batch(msgs []history.Message, fill []pending, k int) ([]history.Message, []pending) {
	a := history.Message{Role: history.Assistant}
	if g.r.IntN(10) < 4 {
		a.Content = history.Text(g.tg.text(styleProse, g.bytes(styleProse, 10+float64(g.r.IntN(110)))))
	}
	if g.cfg.Reasoning && g.r.IntN(2) == 0 {
		a.Reasoning = g.tg.text(styleProse, g.bytes(styleProse, 30+float64(g.r.IntN(200))))
	}
	if g.cfg.Reasoning && g.r.IntN(10) < 3 {
		a.ReasoningDetails = []json.RawMessage{json.RawMessage(mustJSON(map[string]string{
			"type":      "thinking",
			"thinking":  g.tg.text(styleProse, g.bytes(styleProse, 50+float64(g.r.IntN(250)))),
			"signature": g.tg.text(styleBase64, 200+g.r.IntN(400)),
		}))}
	}
	reuse := g.r.Float64() < g.cfg.ReuseIDs
	tls := make([]tool, k)
	a.ToolCalls = make([]history.ToolCall, k)
	for c := range k {
		t := tools[g.r.IntN(len(tools))]
		if g.r.IntN(100) < 12 {
			t = editTools[g.r.IntN(len(editTools))]
		}
		tls[c] = t
		tc := history.ToolCall{Name: t.name}
		if reuse {
			tc.ID = "call_" + strconv.Itoa(c)
		} else {
			g.ids++
			tc.ID = fmt.Sprintf("toolu_%016x", g.r.Uint64()>>4|uint64(g.ids))
		}
		g.args(&tc)
		if g.cfg.Signatures && c == 0 && g.r.IntN(10) < 3 {
			tc.ThoughtSignature = g.tg.text(styleBase64, 100+g.r.IntN(700))
		}
		if g.cfg.Unknown && g.r.IntN(2) == 0 {
			tc.Extra = map[string]json.RawMessage{"type": json.RawMessage(`"function"`)}
		}
		a.ToolCalls[c] = tc
	}
	g.extra(&a)
	msgs = append(msgs, a)
	for c, tc := range a.ToolCalls {
		res := history.NewToolResult(tc.ID, tc.Name, "")
		w := tls[c].weight * math.Exp(g.r.NormFloat64()*0.8)
		fill = append(fill, pending{msg: len(msgs), st: tls[c].result, weight: w, image: g.cfg.Images && g.r.IntN(60) == 0})
		msgs = append(msgs, res)
	}
	return msgs, fill
}

func (g *gen) args(tc *history.ToolCall) {
	p := g.tg.path()
	switch tc.Name {
	case "read_file":
		start := 1 + g.r.IntN(400)
		tc.Arguments = mustJSON(map[string]any{"path": p, "start_line": start, "end_line": start + 50 + g.r.IntN(400)})
	case "grep_search":
		tc.Arguments = mustJSON(map[string]any{"pattern": "func " + g.tg.pick(idents), "path": g.tg.pick(dirs)})
	case "list_files":
		tc.Arguments = mustJSON(map[string]any{"path": g.tg.pick(dirs), "recursive": g.r.IntN(2) == 0})
	case "run_command":
		tc.Arguments = mustJSON(map[string]any{"command": "go test ./" + g.tg.pick(dirs) + "/... -run " + g.tg.pick(idents)})
	case "web_fetch":
		tc.Arguments = mustJSON(map[string]any{"url": "https://example.com/docs/" + g.tg.pick(idents)})
	case "write_file":
		tc.Arguments = mustJSON(map[string]any{"path": p, "content": g.tg.text(styleCode, 600+g.r.IntN(3400))})
	case "edit_file":
		tc.Arguments = mustJSON(map[string]any{"path": p, "old": g.tg.text(styleCode, 100+g.r.IntN(900)), "new": g.tg.text(styleCode, 100+g.r.IntN(900))})
	case "apply_patch":
		tc.Input = "*** Begin Patch\n*** Update File: " + p + "\n" + g.tg.text(styleCode, 300+g.r.IntN(2200)) + "*** End Patch\n"
	}
}

// breakPairing rearranges a valid history the way real clients break it.
func (g *gen) breakPairing(in []history.Message) []history.Message {
	out := make([]history.Message, 0, len(in)+len(in)/20)
	var deferred []history.Message // results held back past the next message
	for i := 0; i < len(in); i++ {
		m := in[i]
		if !m.HasToolCalls() {
			out = append(out, m)
			out = append(out, deferred...)
			deferred = nil
			continue
		}
		k := len(m.ToolCalls)
		res := append([]history.Message(nil), in[i+1:i+1+k]...)
		i += k
		out = append(out, m)
		out = append(out, deferred...)
		deferred = nil
		switch x := g.r.IntN(100); {
		case x < 20: // completions arrive out of order
			g.r.Shuffle(len(res), func(a, b int) { res[a], res[b] = res[b], res[a] })
		case x < 25: // a call never gets its result
			j := g.r.IntN(len(res))
			res = append(res[:j], res[j+1:]...)
		case x < 30: // a system message arrives between the call and its results
			out = append(out, history.NewText(history.System, "<system-reminder>"+g.tg.text(styleProse, 120)+"</system-reminder>"))
		case x < 35: // results arrive after the next message (maybe another batch)
			deferred = res
			res = nil
		case x < 38: // an orphan result whose call is unknown
			out = append(out, history.NewToolResult(fmt.Sprintf("orphan_%d", g.r.IntN(1000)), "read_file", g.tg.text(styleCode, 400)))
		}
		out = append(out, res...)
	}
	return append(out, deferred...)
}

// Texts returns every string an [history.Estimator] tokenizes in msgs, and
// their total size in bytes: text content and text parts, tool call names,
// arguments, inputs and signatures, call ids and reasoning. The rest of a
// message estimate is arithmetic (overheads, media parts, opaque blocks).
// Benchmarks tokenize these with the raw codec to compare throughputs.
func Texts(msgs []history.Message) (out []string, bytes int) {
	add := func(s string) {
		if s != "" {
			out = append(out, s)
			bytes += len(s)
		}
	}
	for _, m := range msgs {
		if m.Content.IsString() {
			add(m.Content.Text())
		}
		for _, p := range m.Content.PartList() {
			if !p.IsMedia() && (p.Raw == nil || p.Type == "text") {
				add(p.Text)
			}
		}
		for _, tc := range m.ToolCalls {
			add(tc.Name)
			add(tc.Arguments)
			add(tc.Input)
			add(tc.ThoughtSignature)
		}
		add(m.ToolCallID)
		add(m.Reasoning)
	}
	return out, bytes
}
