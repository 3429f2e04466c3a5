package main

import (
	"context"
	"testing"
)

// TestBenchResumeSmoke runs the resume measurement on a tiny log: both
// sessions resume with the history they were given (the checkpointed one
// with its compacted history), and the logs are about the same size.
func TestBenchResumeSmoke(t *testing.T) {
	r, err := benchResume(context.Background(), 3, 20_000, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Checkpointed.LiveMessages == 0 || r.Checkpointed.LiveMessages >= r.FullReplay.LiveMessages {
		t.Errorf("live messages: checkpointed %d, full %d", r.Checkpointed.LiveMessages, r.FullReplay.LiveMessages)
	}
	if r.FullReplay.LogBytes == 0 || r.Checkpointed.LogBytes < r.FullReplay.LogBytes {
		t.Errorf("log sizes: checkpointed %d, full %d (the checkpointed log holds the same appends plus boundaries)", r.Checkpointed.LogBytes, r.FullReplay.LogBytes)
	}
}
