package compaction

import (
	"context"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
)

// Counting a huge text is the one step of a compaction that a check of ctx
// between messages cannot interrupt: a 20 MB tool result takes seconds to
// tokenize. warmEstimates therefore counts such texts in chunks, checking ctx
// between them, and caches the total on the message, so every later estimate
// of it is free.

// estimateChunk is the size of the pieces a huge text is counted in.
const estimateChunk = 256 << 10

// warmEstimates caches the estimate of every message of msgs, checking ctx
// before each message and between the chunks of a huge one. It returns ctx's
// error.
func warmEstimates(ctx context.Context, est *history.Estimator, msgs []history.Message) error {
	for i := range msgs {
		if err := ctx.Err(); err != nil {
			return err
		}
		m := &msgs[i]
		if _, ok := est.Cached(m); ok {
			continue
		}
		text, plain := plainText(m)
		if !plain || len(text) <= estimateChunk || est.Tokenizer() == history.Approx {
			est.Message(m)
			continue
		}
		n, err := textTokens(ctx, est, text)
		if err != nil {
			return err
		}
		est.SetCached(m, history.MessageOverhead+n+est.Text(m.ToolCallID))
	}
	return nil
}

// plainText returns the text of a message whose estimate is its text's count
// plus the fixed overhead and call id: string content, no tool calls, no
// reasoning.
func plainText(m *history.Message) (string, bool) {
	if !m.Content.IsString() || len(m.ToolCalls) > 0 || m.Reasoning != "" || m.ReasoningDetails != nil {
		return "", false
	}
	return m.Content.Text(), true
}

// knownTextTokens returns the token count of a plain message's text derived
// from its cached estimate, without counting the text again.
func knownTextTokens(est *history.Estimator, m *history.Message) (int, bool) {
	if _, plain := plainText(m); !plain {
		return 0, false
	}
	n, ok := est.Cached(m)
	if !ok {
		return 0, false
	}
	return max(0, n-history.MessageOverhead-est.Text(m.ToolCallID)), true
}

// textTokens counts s in chunks of about [estimateChunk] bytes, checking ctx
// between them. Chunks end after a newline that a non-space character
// follows, where a tokenizer's pre-split also breaks, so the sum equals the
// count of the whole text.
func textTokens(ctx context.Context, est *history.Estimator, s string) (int, error) {
	n := 0
	for len(s) > 0 {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		cut := chunkEnd(s, estimateChunk)
		n += est.Text(s[:cut])
		s = s[cut:]
	}
	return n, nil
}

// chunkEnd returns where the chunk of s that starts at 0 ends: after the
// first newline at or past size that a byte other than whitespace follows,
// or len(s).
func chunkEnd(s string, size int) int {
	if len(s) <= size {
		return len(s)
	}
	for i := size; i < len(s)-1; {
		j := strings.IndexByte(s[i:len(s)-1], '\n')
		if j < 0 {
			break
		}
		k := i + j + 1
		if c := s[k]; c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\v' && c != '\f' {
			return k
		}
		i = k
	}
	return len(s)
}
