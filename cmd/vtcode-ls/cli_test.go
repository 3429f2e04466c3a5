package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/config"
	"github.com/vtcode/vtcode-ls/corpus"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/providers/anthropic"
	"github.com/vtcode/vtcode-ls/providers/chatcompat"
	"github.com/vtcode/vtcode-ls/providers/openai"
	"github.com/vtcode/vtcode-ls/transcript"
)

// repoRoot is the repository root (the folder holding go.mod).
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("repository root not found at %s: %v", dir, err)
	}
	return dir
}

// realTranscripts lists the published sessions: the committed corpus, and
// the larger one when present (see package corpus).
func realTranscripts(t *testing.T) []string {
	t.Helper()
	out, err := corpus.All()
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 8 {
		t.Fatalf("found %d transcripts, want at least the 8 published sessions", len(out))
	}
	return out
}

func examples(t *testing.T) []string {
	t.Helper()
	root := repoRoot(t)
	return []string{
		filepath.Join(root, "examples", "debugging-session.jsonl"),
		filepath.Join(root, "examples", "refactor-session.jsonl"),
	}
}

// noKeys is an environment without API keys, so no test can reach a provider.
func noKeys(string) string { return "" }

// cli runs a command line in process.
func cli(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = runWith(args, strings.NewReader(""), &out, &errb, noKeys)
	return code, out.String(), errb.String()
}

// step is one command line of a CLI scenario and what it must print.
type step struct {
	args           []string
	code           int
	stdout, stderr []string // regular expressions (multi-line mode) that must match
	noStdout       bool
	noStderr       bool
}

func (st step) check(t *testing.T) {
	t.Helper()
	code, stdout, stderr := cli(st.args...)
	if code != st.code {
		t.Fatalf("vtcode-ls %q: exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", st.args, code, st.code, stdout, stderr)
	}
	match := func(name, out string, res []string, empty bool) {
		if empty && out != "" {
			t.Errorf("vtcode-ls %q: %s not empty:\n%s", st.args, name, out)
		}
		for _, re := range res {
			if !regexp.MustCompile("(?m)" + re).MatchString(out) {
				t.Errorf("vtcode-ls %q: %s does not match %q:\n%s", st.args, name, re, out)
			}
		}
	}
	match("stdout", stdout, st.stdout, st.noStdout)
	match("stderr", stderr, st.stderr, st.noStderr)
}

func TestHelp(t *testing.T) {
	for _, st := range []step{
		{args: []string{"--help"}, stdout: []string{`^Usage:`, `vtcode-ls replay TRANSCRIPT`, `vtcode-ls compact TRANSCRIPT`}, noStderr: true},
		{args: []string{"help", "replay"}, stdout: []string{`^Usage: vtcode-ls replay TRANSCRIPT`}},
		{args: []string{"replay", "--help"}, stdout: []string{
			`^Usage: vtcode-ls replay TRANSCRIPT \[--provider P --model M --context-window N\] \[--json\]`,
			`-context-window`,
			`Transcript formats: vtcode-messages, claude-code, codex-rollout, openai-chat, swe-agent, mini-swe-agent, openhands, aider`,
		}, noStderr: true},
		{args: []string{"compact", "-h"}, stdout: []string{`^Usage: vtcode-ls compact TRANSCRIPT`, `-instructions`, `-o FILE`}, noStderr: true},
		{args: []string{"version", "--help"}, stdout: []string{`^Usage: vtcode-ls version`}},
		{args: []string{"version"}, stdout: []string{`\Avtcode-ls \S+ \(commit \S+(, [^,()]+)*, go1\.\S+ \w+/\w+\)\n\z`}, noStderr: true},
		{args: []string{"--version"}, stdout: []string{`\Avtcode-ls \S+ \(commit \S+(, [^,()]+)*, go1\.\S+ \w+/\w+\)\n\z`}},
		{args: []string{"frobnicate"}, code: 2, stderr: []string{`unknown command "frobnicate"`}},
		{args: []string{"replay"}, code: 2, stderr: []string{`want exactly one TRANSCRIPT`}},
		{args: []string{"replay", "--bogus", "x.jsonl"}, code: 2, stderr: []string{`flag provided but not defined: -bogus`}},
		{args: []string{"compact", "a.jsonl", "b.jsonl"}, code: 2, stderr: []string{`want exactly one TRANSCRIPT`}},
	} {
		st.check(t)
	}
}

// TestMainJob is what "make run" shows: the debugging example on a 32k
// window clears tool results and compacts offline.
func TestMainJob(t *testing.T) {
	ex := examples(t)
	step{
		args: []string{"replay", ex[0], "--context-window", "32000"},
		stdout: []string{
			`debugging-session.jsonl: vtcode-messages, \d+ messages$`,
			`^route offline, context window 32,000$`,
			`^ turn   msgs  original  projected  cleared  pressure  reused      cost  state$`,
			`^ +1 +\d+ +[\d,]+ +[\d,]+ +0 +[\d.]+% +0\.0% +[\d,]+ +ok$`,                        // nothing cached before the first request
			`^ +\d+ +\d+ +[\d,]+ +[\d,]+ +[1-9]\d* +[\d.]+% +[1-9][\d.]*% +[\d,]+ +(ok|warn)$`, // results cleared, prefix reused
			`^ +compaction \(auto\): mode local, strategy local, \d+ -> \d+ messages, [\d,]+ -> [\d,]+ tokens, `,
			`^replayed \d+ turns in .*: [1-9]\d* compactions?, up to [1-9]\d* results cleared per request, peak pressure [\d.]+%; final history \d+ messages`,
		},
		noStderr: true,
	}.check(t)

	out := filepath.Join(t.TempDir(), "out.jsonl")
	step{
		args:     []string{"compact", ex[0], "--context-window", "32000", "-o", out},
		stderr:   []string{`^compacted .*debugging-session.jsonl: \d+ -> \d+ messages, [\d,]+ -> [\d,]+ tokens \(local, strategy local, offline, .*\) -> .*out.jsonl$`},
		noStdout: true,
	}.check(t)
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(data), "\n")
	// The work in progress first, then the goal.
	if !strings.HasPrefix(first, `{"role":"system","content":"Previous conversation summary:\n## Work in progress\n- `) || !strings.Contains(first, `\n## Goal\nCI on main has been red since #482`) {
		t.Errorf("first line %.200s", first)
	}
	if !strings.Contains(string(data), "don't change the exported API of internal/money") {
		t.Error("the user's restriction did not survive compaction")
	}
	// The compacted file is a transcript in its own right.
	step{args: []string{"replay", out, "--context-window", "32000"}, stdout: []string{`out.jsonl: vtcode-messages`}}.check(t)
}

func TestReplayJSONExample(t *testing.T) {
	ex := examples(t)
	step{
		args:   []string{"replay", ex[1], "--context-window", "16000", "--json"},
		stdout: []string{`^\{"turn":1,"messages":\d+,`, `"compaction":\{"mode":"local","strategy":"local","trigger":"auto"`},
		stderr: []string{`\Areplayed \d+ turns .*\n\z`},
	}.check(t)
	// flags before the transcript
	step{args: []string{"replay", "--context-window=16000", ex[1]}, stdout: []string{`refactor-session.jsonl: vtcode-messages`}}.check(t)
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	tiny := filepath.Join(dir, "tiny.jsonl")
	os.WriteFile(notes, []byte("Meeting notes: refactor the poller next week.\n"), 0o600)
	os.WriteFile(tiny, []byte(`{"role":"user","content":"hi"}`+"\n"+`{"role":"assistant","content":"hello"}`+"\n"), 0o600)
	tinyOut := filepath.Join(dir, "tiny-out.jsonl")
	// The system's own words for a missing file ("no such file or directory"
	// on Unix, "The system cannot find the file specified." on Windows).
	_, nf := os.Open(filepath.Join(dir, "missing.jsonl"))
	notFound := regexp.QuoteMeta(errors.Unwrap(nf).Error())
	for _, st := range []step{
		{args: []string{"replay", notes}, code: 1, stderr: []string{
			`notes.txt: unknown transcript format`,
			`vtcode-messages \(vtcode Message JSONL\), claude-code \(Claude Code session JSONL\), codex-rollout`,
			`openhands \(OpenHands event history JSON/JSONL\), aider`,
		}, noStdout: true},
		{args: []string{"compact", filepath.Join(dir, "missing.jsonl")}, code: 1, stderr: []string{`open transcript: .*missing.jsonl: ` + notFound}},
		// A history too small to compact is reported, and nothing is written.
		{args: []string{"compact", tiny, "-o", tinyOut}, code: 1, stderr: []string{`Conversation is already compact.*nothing written`}},
		{args: []string{"replay", tiny, "--context-window=-5"}, code: 1, stderr: []string{`context-window must be >= 0`}},
		// A provider without its API key fails with the variable's name.
		{args: []string{"compact", examples(t)[1], "--provider", "openai", "--model", "gpt-5", "--context-window", "32000"}, code: 1,
			stderr: []string{`environment variable OPENAI_API_KEY is not set`}, noStdout: true},
	} {
		st.check(t)
	}
	if _, err := os.Stat(tinyOut); err == nil {
		t.Error("a no-op compaction wrote its output")
	}
}

var (
	rowRE        = regexp.MustCompile(`^ +(\d+) +(\d+) +([\d,]+) +([\d,]+) +(\d+) +([\d.]+)% +[\d.]+% +[\d,]+ +(ok|warn|compacting|critical)( trimmed)?( \(pending request\))?$`)
	compactionRE = regexp.MustCompile(`^ {6}compaction \((auto|recovery)\)(: mode (local|provider), strategy \w+, \d+ -> \d+ messages, [\d,]+ -> [\d,]+ tokens, \S+| failed: .+|: .+)$`)
	summaryRE    = regexp.MustCompile(`^replayed (\d+) turns? in \S+: (\d+) compactions?(?: \(\d+ failed\))?, up to \d+ results cleared per request, peak pressure [\d.]+%(?:, \d+ trimmed requests?)?; final history \d+ messages, [\d,]+ tokens \(projected [\d,]+\); prompt cache: [\d,]+ tokens sent \((?:[\d.]+×|n/a) no clearing\), reuse [\d.]+ \(no clearing [\d.]+\), cost [\d,]+ units \((?:[\d.]+×|n/a) no clearing, route pricing\)$`)
)

// turnsOf returns the number of turns a replay of tr plays: one per
// assistant message, plus a pending request for trailing messages.
func turnsOf(tr *transcript.Transcript) int {
	n := 0
	for _, m := range tr.Messages {
		if m.Role == history.Assistant {
			n++
		}
	}
	if last := tr.Messages[len(tr.Messages)-1]; last.Role != history.Assistant {
		n++
	}
	return n
}

// TestReplayEveryTranscript replays each published session and both examples
// on a 32k window (so the large ones clear and compact) and checks the
// table: a row per turn, compaction lines, and the summary.
func TestReplayEveryTranscript(t *testing.T) {
	files := append(realTranscripts(t), examples(t)...)
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			tr, err := transcript.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := cli("replay", path, "--context-window", "32000")
			if code != 0 {
				t.Fatalf("exit code %d; stderr:\n%s", code, stderr)
			}
			if stderr != "" {
				t.Errorf("stderr is not empty:\n%s", stderr)
			}
			lines := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
			if len(lines) < 5 {
				t.Fatalf("output too short:\n%s", stdout)
			}
			if want := fmt.Sprintf("%s: %s, %d messages", path, tr.Format, len(tr.Messages)); !strings.HasPrefix(lines[0], want) {
				t.Errorf("first line %q, want prefix %q", lines[0], want)
			}
			if lines[1] != "route offline, context window 32,000" {
				t.Errorf("second line %q", lines[1])
			}
			rows, compactions := 0, 0
			for i, l := range lines[3 : len(lines)-1] {
				switch {
				case rowRE.MatchString(l):
					rows++
					if m := rowRE.FindStringSubmatch(l); m[1] != strconv.Itoa(rows) {
						t.Errorf("row %d numbered %s", rows, m[1])
					}
				case compactionRE.MatchString(l):
					if strings.Contains(l, "mode ") {
						compactions++
					}
				default:
					t.Errorf("line %d does not fit the table: %q", i+4, l)
				}
			}
			if want := turnsOf(tr); rows != want {
				t.Errorf("%d turn rows, want %d", rows, want)
			}
			m := summaryRE.FindStringSubmatch(lines[len(lines)-1])
			if m == nil {
				t.Fatalf("summary line %q", lines[len(lines)-1])
			}
			if m[1] != strconv.Itoa(rows) || m[2] != strconv.Itoa(compactions) {
				t.Errorf("summary says %s turns and %s compactions; the table has %d and %d", m[1], m[2], rows, compactions)
			}
			t.Logf("%s: %d turns, %d compactions", tr.Format, rows, compactions)
		})
	}
}

// TestReplayJSON checks --json on every transcript: one object per turn,
// numbered, consistent, the summary on stderr.
func TestReplayJSON(t *testing.T) {
	files := append(realTranscripts(t), examples(t)...)
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			tr, err := transcript.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := cli("replay", "--json", "--context-window", "32000", path)
			if code != 0 {
				t.Fatalf("exit code %d; stderr:\n%s", code, stderr)
			}
			if !summaryRE.MatchString(strings.TrimSpace(stderr)) {
				t.Errorf("stderr %q is not the summary line", stderr)
			}
			sc := bufio.NewScanner(strings.NewReader(stdout))
			sc.Buffer(nil, 1<<20)
			n := 0
			for sc.Scan() {
				n++
				var r turnReport
				dec := json.NewDecoder(strings.NewReader(sc.Text()))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&r); err != nil {
					t.Fatalf("line %d: %v: %s", n, err, sc.Text())
				}
				if r.Turn != n {
					t.Errorf("line %d has turn %d", n, r.Turn)
				}
				if r.ProjectedTokens > r.OriginalTokens || r.Pressure < 0 || r.State == "" {
					t.Errorf("turn %d: inconsistent %+v", n, r)
				}
				if r.Compaction != nil && r.Compaction.Error == "" && r.Compaction.ArtifactID != "" && r.Compaction.CompactedTokens >= r.Compaction.OriginalTokens {
					t.Errorf("turn %d: compaction did not reduce the estimate: %+v", n, r.Compaction)
				}
			}
			if want := turnsOf(tr); n != want {
				t.Errorf("%d JSON lines, want %d turns", n, want)
			}
		})
	}
}

// TestCompactEveryTranscript compacts each published session and both
// examples: the output is valid Message JSONL with valid pairing whose first
// message is the summary, and stderr has the one-line result.
func TestCompactEveryTranscript(t *testing.T) {
	files := append(realTranscripts(t), examples(t)...)
	resultRE := regexp.MustCompile(`^compacted .+: (\d+) -> (\d+) messages, ([\d,]+) -> ([\d,]+) tokens \(local, strategy local, offline, \S+\) -> (\S+)\n$`)
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			tr, err := transcript.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "compacted.jsonl")
			code, stdout, stderr := cli("compact", path, "--context-window", "32000", "-o", out)
			if code != 0 {
				t.Fatalf("exit code %d; stderr:\n%s", code, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout with -o: %q", stdout)
			}
			m := resultRE.FindStringSubmatch(stderr)
			if m == nil {
				t.Fatalf("stderr %q is not the result line", stderr)
			}
			if m[1] != strconv.Itoa(len(tr.Messages)) || m[5] != out {
				t.Errorf("result line %q: want %d original messages written to %s", stderr, len(tr.Messages), out)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var msgs []history.Message
			for i, line := range bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n")) {
				var msg history.Message
				if err := json.Unmarshal(line, &msg); err != nil {
					t.Fatalf("line %d is not a Message: %v", i+1, err)
				}
				msgs = append(msgs, msg)
			}
			if m[2] != strconv.Itoa(len(msgs)) {
				t.Errorf("result says %s messages, file has %d", m[2], len(msgs))
			}
			if len(msgs) == 0 || msgs[0].Role != history.System || !strings.HasPrefix(msgs[0].Text(), "Previous conversation summary:") {
				t.Fatalf("first message is not the summary: %.200s", data)
			}
			if err := history.CheckPairing(msgs); err != nil {
				t.Errorf("compacted history has broken pairing: %v", err)
			}
			// The output is a transcript in its own right.
			again, err := transcript.Load(out)
			if err != nil || again.Format != transcript.FormatMessages || len(again.Messages) != len(msgs) {
				t.Errorf("compacted output does not load back as Message JSONL: %v", err)
			}
		})
	}
}

func TestCompactToStdout(t *testing.T) {
	code, stdout, stderr := cli("compact", examples(t)[1], "--context-window=32000")
	if code != 0 {
		t.Fatalf("exit code %d: %s", code, stderr)
	}
	tr, err := transcript.Parse(strings.NewReader(stdout), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tr.Messages[0].Text(), "Previous conversation summary:") {
		t.Errorf("first message %.100q", tr.Messages[0].Text())
	}
	if !strings.Contains(stderr, "-> stdout") {
		t.Errorf("stderr %q", stderr)
	}
}

func TestParseFlagsInterleaved(t *testing.T) {
	for _, args := range [][]string{
		{"a.jsonl", "--json", "--context-window", "7"},
		{"--json", "a.jsonl", "--context-window=7"},
		{"--context-window", "7", "--json", "a.jsonl"},
		{"--json", "--context-window", "7", "--", "a.jsonl"},
	} {
		var rf routeFlags
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		rf.register(fs)
		asJSON := fs.Bool("json", false, "")
		if code, done := parseFlags(fs, args, &bytes.Buffer{}); done {
			t.Fatalf("%q: stopped with %d", args, code)
		}
		if !*asJSON || rf.window != 7 || fs.NArg() != 1 || fs.Arg(0) != "a.jsonl" {
			t.Errorf("%q: json=%v window=%d args=%q", args, *asJSON, rf.window, fs.Args())
		}
	}
}

func TestClients(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "sk-test-secret", "ANTHROPIC_API_KEY": "sk-ant-secret", "DEEPSEEK_API_KEY": "ds-secret", "MY_KEY": "mine-secret"}
	getenv := func(k string) string { return env[k] }
	cfg := config.Config{Providers: map[string]config.ProviderConfig{
		"openrouter": {APIKeyEnv: "MY_KEY"},
		"corp":       {BaseURL: "https://llm.corp.example/v1"},
	}}
	for _, tc := range []struct {
		provider string
		want     string // Go type of the client, or an error substring
	}{
		{"", "offline"},
		{"offline", "offline"},
		{"openai", "*openai.Client"},
		{"vercel", "AI_GATEWAY_API_KEY"},
		{"anthropic", "*anthropic.Client"},
		{"deepseek", "*chatcompat.Client"},
		{"openrouter", "*chatcompat.Client"}, // key from the configured variable
		{"gemini", "GEMINI_API_KEY"},
		{"ollama", "*chatcompat.Client"}, // local: no key
		{"llamacpp", "*chatcompat.Client"},
		{"lmstudio", "*chatcompat.Client"},
		{"corp", "*chatcompat.Client"}, // unknown but configured with a base URL
		{"nonesuch", "unknown provider without a base URL"},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			g, err := newClient(providers.Route{Provider: tc.provider, Model: "m"}, cfg, nil, getenv)
			got := ""
			switch c := g.(type) {
			case nil:
				got = err.Error()
			case *openai.Client, *anthropic.Client, *chatcompat.Client:
				got = fmt.Sprintf("%T", c)
			default:
				got = "offline"
			}
			if err != nil {
				for _, secret := range env {
					if strings.Contains(err.Error(), secret) {
						t.Fatalf("error leaks a key: %v", err)
					}
				}
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	if f := clientFactory(nil); f == nil {
		t.Fatal("clientFactory returned nil")
	}
}

func TestProgressBarOnlyOnTerminals(t *testing.T) {
	var buf bytes.Buffer
	b := newProgressBar(&buf, 10)
	b.update(3, 0.5)
	b.clear()
	if buf.Len() != 0 {
		t.Errorf("progress drawn on a non-terminal: %q", buf.String())
	}
	f, err := os.CreateTemp(t.TempDir(), "f")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if b := newProgressBar(f, 10); b.w != nil {
		t.Error("a regular file is not a terminal")
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 32000: "32,000", 1234567: "1,234,567", -4096: "-4,096"} {
		if got := history.FormatCount(n); got != want {
			t.Errorf("history.FormatCount(%d) = %q, want %q", n, got, want)
		}
	}
}
