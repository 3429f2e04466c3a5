package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/history/historytest"
	"github.com/vtcode/vtcode-ls/session"
)

// ResumeResult compares resuming two stored sessions whose event logs have
// the same size and the same appended messages: one compacted after every
// chunk (a long session: its last compaction boundary is a checkpoint, so a
// resume decodes only what follows it), one never compacted (every message
// is live and decoded: what every resume cost before checkpoints, whatever
// the log held).
type ResumeResult struct {
	Chunks       int           `json:"chunks"`
	Checkpointed ResumeMeasure `json:"checkpointed"`
	FullReplay   ResumeMeasure `json:"fullReplay"`
	// TimeRatio and AllocRatio are checkpointed ÷ full replay.
	TimeRatio  float64 `json:"timeRatio"`
	AllocRatio float64 `json:"allocRatio"`
}

// ResumeMeasure is one resume: a fresh Manager opening the stored session.
type ResumeMeasure struct {
	LogBytes     int64 `json:"logBytes"`
	LiveMessages int   `json:"liveMessages"`
	ResumeNs     int64 `json:"resumeNs"`   // median
	AllocBytes   int64 `json:"allocBytes"` // allocated by one resume
	HeapInuse    int64 `json:"heapInuse"`  // after a resume, the session open
}

// benchResume builds both sessions from chunks of about chunkTokens each and
// measures reps resumes of each.
func benchResume(ctx context.Context, chunks, chunkTokens, reps int) (*ResumeResult, error) {
	ws, err := os.MkdirTemp("", "vtcode-bench-resume-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(ws)
	res := &ResumeResult{Chunks: chunks}
	for _, compact := range []bool{true, false} {
		id := "full"
		if compact {
			id = "checkpointed"
		}
		if err := buildSession(ctx, ws, id, chunks, chunkTokens, compact); err != nil {
			return nil, fmt.Errorf("building %s session: %w", id, err)
		}
		m, err := measureResume(ctx, ws, id, reps)
		if err != nil {
			return nil, fmt.Errorf("resuming %s session: %w", id, err)
		}
		if compact {
			res.Checkpointed = *m
		} else {
			res.FullReplay = *m
		}
	}
	res.TimeRatio = float64(res.Checkpointed.ResumeNs) / float64(res.FullReplay.ResumeNs)
	res.AllocRatio = float64(res.Checkpointed.AllocBytes) / float64(res.FullReplay.AllocBytes)
	return res, nil
}

// resumeInit keeps clearing and automatic compaction out of the way: only
// the compactions the builder asks for happen.
const resumeInit = `{"autoCompaction":{"enabled":false},"toolResultClearing":{"enabled":false}}`

func newBenchManager(ws string) (*session.Manager, error) {
	m := session.NewManager(session.Options{NoWatch: true, Clients: offlineClients})
	if err := m.AddWorkspace(ws, json.RawMessage(resumeInit)); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

func buildSession(ctx context.Context, ws, id string, chunks, chunkTokens int, compact bool) error {
	m, err := newBenchManager(ws)
	if err != nil {
		return err
	}
	defer m.Close()
	if _, err := m.OpenSession(ctx, session.OpenParams{SessionID: id, ContextWindow: 200_000}); err != nil {
		return err
	}
	for i := range chunks {
		msgs := historytest.Synthetic(historyConfig(chunkTokens, uint64(100+i)))
		msgs = slices.DeleteFunc(msgs, func(m history.Message) bool { return m.Role == history.System })
		if _, err := m.AppendMessages(ctx, session.AppendParams{SessionID: id, Messages: msgs}); err != nil {
			return err
		}
		if compact {
			if _, err := m.Compact(ctx, session.CompactParams{SessionID: id, Strategy: "local"}, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

func measureResume(ctx context.Context, ws, id string, reps int) (*ResumeMeasure, error) {
	out := &ResumeMeasure{}
	if fi, err := os.Stat(filepath.Join(ws, ".vtcode", "sessions", id, "events.jsonl")); err == nil {
		out.LogBytes = fi.Size()
	}
	var times []int64
	for range reps {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		m, err := newBenchManager(ws)
		if err != nil {
			return nil, err
		}
		r, err := m.OpenSession(ctx, session.OpenParams{SessionID: id})
		elapsed := time.Since(start)
		if err != nil {
			m.Close()
			return nil, err
		}
		runtime.ReadMemStats(&after)
		times = append(times, elapsed.Nanoseconds())
		out.LiveMessages = r.Messages
		out.AllocBytes = int64(after.TotalAlloc - before.TotalAlloc)
		runtime.GC()
		runtime.ReadMemStats(&after)
		out.HeapInuse = int64(after.HeapInuse)
		if err := m.Close(); err != nil {
			return nil, err
		}
	}
	slices.Sort(times)
	out.ResumeNs = times[len(times)/2]
	return out, nil
}

// writeResume prints the resume section of the table.
func writeResume(p func(string, ...any), t *table, r *ResumeResult) {
	p("Session resume: a log of %d appended chunks, compacted after each (checkpointed) vs never (every message decoded, as every resume did before checkpoints)\n", r.Chunks)
	t.row("log", "size", "live messages", "resume", "allocated", "heap after")
	for _, row := range []struct {
		name string
		m    ResumeMeasure
	}{{"checkpointed", r.Checkpointed}, {"full replay", r.FullReplay}} {
		t.row(row.name, fmtBytes(row.m.LogBytes), formatInt(int64(row.m.LiveMessages)), fmtNs(row.m.ResumeNs), mib(row.m.AllocBytes), mib(row.m.HeapInuse))
	}
	t.row("ratio", "", "", fmtRatio(r.TimeRatio), fmtRatio(r.AllocRatio), "")
}
