package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/session"
)

// ScalingRow measures how appending and preparing grow with what one call
// carries: the same shape at two sizes, in one process. Growth is the time
// factor divided by the size factor: 1 is linear, 2 would be one power more.
type ScalingRow struct {
	Shape          string  `json:"shape"`
	Small          string  `json:"small"`
	Large          string  `json:"large"`
	SizeFactor     float64 `json:"sizeFactor"`
	AppendSmallNs  int64   `json:"appendSmallNs"`
	AppendLargeNs  int64   `json:"appendLargeNs"`
	PrepareSmallNs int64   `json:"prepareSmallNs"`
	PrepareLargeNs int64   `json:"prepareLargeNs"`
	AppendGrowth   float64 `json:"appendGrowth"`
	PrepareGrowth  float64 `json:"prepareGrowth"`
}

// A scalingShape builds the messages of one call at size n. Both sizes of
// the tool-call shape are past the clearing trigger, so that they do the same
// work per result, and within the estimator's short-text memo (past it,
// every short text is tokenized again: still linear, with a larger
// constant).
type scalingShape struct {
	name         string
	small, large int
	unit         string
	build        func(n int) []history.Message
}

func scalingShapes(quick bool) []scalingShape {
	text := scalingShape{name: "one text message", small: 1 << 20, large: 8 << 20, unit: "bytes",
		build: func(n int) []history.Message {
			return []history.Message{history.NewText(history.User, benchWords(n))}
		}}
	calls := scalingShape{name: "messages of 1,024 unanswered tool calls", small: 8, large: 48, unit: "messages",
		build: func(n int) []history.Message {
			var msgs []history.Message
			for k := range n {
				msgs = append(msgs, history.NewText(history.User, fmt.Sprintf("step %d: read every file", k)))
				m := history.Message{Role: history.Assistant, Content: history.Text("Reading them.")}
				for i := range session.DefaultMaxToolCalls {
					m.ToolCalls = append(m.ToolCalls, history.ToolCall{ID: fmt.Sprintf("call_%d_%d", k, i), Name: "read_file",
						Arguments: fmt.Sprintf(`{"path":"src/file_%d.go"}`, i)})
				}
				msgs = append(msgs, m)
			}
			return msgs
		}}
	if quick {
		text.small, text.large = 512<<10, 4<<20
		calls.small, calls.large = 8, 32
	}
	return []scalingShape{text, calls}
}

// benchWords returns n bytes of varied words.
func benchWords(n int) string {
	var b strings.Builder
	b.Grow(n + 16)
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "word%d ", i%9973)
	}
	return b.String()[:n]
}

// benchScaling measures every shape at its two sizes, reps times each
// (the median counts).
func benchScaling(ctx context.Context, quick bool, reps int) ([]ScalingRow, error) {
	var rows []ScalingRow
	for _, sh := range scalingShapes(quick) {
		as, ps, err := appendPrepare(ctx, sh.build(sh.small), reps)
		if err != nil {
			return nil, fmt.Errorf("%s at %d %s: %w", sh.name, sh.small, sh.unit, err)
		}
		al, pl, err := appendPrepare(ctx, sh.build(sh.large), reps)
		if err != nil {
			return nil, fmt.Errorf("%s at %d %s: %w", sh.name, sh.large, sh.unit, err)
		}
		f := float64(sh.large) / float64(sh.small)
		r := ScalingRow{Shape: sh.name, Small: fmt.Sprintf("%s %s", formatInt(int64(sh.small)), sh.unit),
			Large: fmt.Sprintf("%s %s", formatInt(int64(sh.large)), sh.unit), SizeFactor: f,
			AppendSmallNs: int64(as.median()), AppendLargeNs: int64(al.median()),
			PrepareSmallNs: int64(ps.median()), PrepareLargeNs: int64(pl.median())}
		r.AppendGrowth = ratio(al.median(), as.median()) / f
		r.PrepareGrowth = ratio(pl.median(), ps.median()) / f
		rows = append(rows, r)
	}
	return rows, nil
}

// appendPrepare times vtcode/appendMessages of msgs into a fresh session
// and the vtcode/prepareRequest after it (which synthesizes the results of
// unanswered calls), on a window large enough that nothing compacts.
func appendPrepare(ctx context.Context, msgs []history.Message, reps int) (appends, prepares samples, err error) {
	for range reps {
		a, p, err := appendPrepareOnce(ctx, msgs)
		if err != nil {
			return nil, nil, err
		}
		appends, prepares = append(appends, a), append(prepares, p)
	}
	return appends, prepares, nil
}

func appendPrepareOnce(ctx context.Context, msgs []history.Message) (time.Duration, time.Duration, error) {
	dir, err := os.MkdirTemp("", "vtcode-bench-scaling-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	m := session.NewManager(session.Options{NoWatch: true})
	defer m.Close()
	if err := m.AddWorkspace(dir, nil); err != nil {
		return 0, 0, err
	}
	open, err := m.OpenSession(ctx, session.OpenParams{ContextWindow: session.MaxTokenCount})
	if err != nil {
		return 0, 0, err
	}
	fresh := make([]history.Message, len(msgs)) // no cached estimates
	for i := range msgs {
		fresh[i] = msgs[i]
		fresh[i].Forget()
	}
	runtime.GC() // start both sizes from a collected heap
	t0 := time.Now()
	if _, err := m.AppendMessages(ctx, session.AppendParams{SessionID: open.SessionID, Messages: fresh}); err != nil {
		return 0, 0, err
	}
	appended := time.Since(t0)
	runtime.GC()
	t1 := time.Now()
	res, err := m.PrepareRequest(ctx, session.PrepareParams{SessionID: open.SessionID}, nil)
	if err != nil {
		return 0, 0, err
	}
	t2 := time.Now()
	if res.Compaction != nil {
		return 0, 0, fmt.Errorf("the prepare compacted (%s); the window should hold everything", res.Compaction.Message)
	}
	return appended, t2.Sub(t1), nil
}
