package rpc_test

import (
	"flag"
	"testing"

	"go.uber.org/goleak"
)

var update = flag.Bool("update", false, "rewrite the server sections of the golden transcripts in testdata")

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
