package rpc_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/vtcode/vtcode-ls/rpc/rpctest"
)

// TestTranscripts plays every golden wire transcript in testdata. Run with
// -update to rewrite their server sections after an intended change, and
// review the diff: the transcripts are the contract editor clients are
// written against.
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no transcripts in testdata")
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rpctest.RunTranscript(t, file, rpctest.TranscriptOptions{Update: *update})
		})
	}
}
