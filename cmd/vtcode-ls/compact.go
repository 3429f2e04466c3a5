package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/session"
	"github.com/vtcode/vtcode-ls/transcript"
)

// compactUsage is the help of vtcode-ls compact, before its flags.
var compactUsage = `Usage: vtcode-ls compact TRANSCRIPT [--provider P --model M --context-window N] [--instructions S] [-o OUT]

Compacts a recorded session once and writes the compacted history as Message
JSONL (one message per line, the summary message first), to OUT or stdout.
Offline by default (the embedded extractive summarizer); with --provider the
summary is written by that provider. A one-line result goes to stderr.

Transcript formats: ` + strings.Join(transcript.Formats(), ", ") + `.

Flags:
`

func compactMain(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlags("compact", compactUsage, stderr)
	rf := routeFlags{getenv: getenv}
	rf.register(fs)
	instructions := fs.String("instructions", "", "extra instructions for the summary")
	strategy := fs.String("strategy", "auto", "compaction strategy: auto, local or native")
	outPath := fs.String("o", "", "write the compacted history to `FILE` instead of stdout")
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "vtcode-ls compact: want exactly one TRANSCRIPT (see --help)")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := compact(ctx, fs.Arg(0), rf, *instructions, *strategy, *outPath, stdout, stderr); err != nil {
		return fail(stderr, "compact", err)
	}
	return 0
}

func compact(ctx context.Context, path string, rf routeFlags, instructions, strategy, outPath string, stdout, stderr io.Writer) error {
	tr, _, err := loadTranscript(path)
	if err != nil {
		return err
	}
	e, err := openEnv(ctx, rf, stderr)
	if err != nil {
		return err
	}
	defer e.close()
	if _, err := e.m.AppendMessages(ctx, session.AppendParams{SessionID: e.id, Messages: tr.Messages}); err != nil {
		return fmt.Errorf("append: %w", err)
	}
	res, err := e.m.Compact(ctx, session.CompactParams{SessionID: e.id, Instructions: instructions, Strategy: strategy}, nil)
	if err != nil {
		return err
	}
	if res.ArtifactID == "" { // a no-op: nothing to write
		return fmt.Errorf("%s: %s (%d messages, %s tokens; %s); nothing written",
			path, res.Message, res.OriginalMessageCount, history.FormatCount(res.OriginalTokens), e.describe())
	}
	h, err := e.m.History(ctx, session.HistoryParams{SessionID: e.id})
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	dest := "stdout"
	if outPath != "" {
		dest = outPath
		if err := writeMessagesFile(outPath, h.Messages); err != nil {
			return err
		}
	} else if err := writeMessages(stdout, h.Messages); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "compacted %s: %d -> %d messages, %s -> %s tokens (%s, strategy %s, %s, %s) -> %s\n",
		path, res.OriginalMessageCount, res.CompactedMessageCount, history.FormatCount(res.OriginalTokens), history.FormatCount(res.CompactedTokens),
		res.Mode, res.Strategy, e.route, (time.Duration(res.ElapsedMs) * time.Millisecond).String(), dest)
	return nil
}

// writeMessages writes msgs as Message JSONL.
func writeMessages(w io.Writer, msgs []history.Message) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for i := range msgs {
		if err := enc.Encode(msgs[i]); err != nil {
			return fmt.Errorf("encode message %d: %w", i, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// writeMessagesFile writes msgs to path through a temporary file, so a
// failure never leaves a truncated output (the output may replace the input).
// Missing parent folders are created.
func writeMessagesFile(path string, msgs []history.Message) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := writeMessages(tmp, msgs); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
