//go:build linux

// Package integration_test drives the real vtcode-ls binary over stdio
// JSON-RPC, as an editor does, and checks what only a whole process can
// show: crash recovery under SIGKILL (TestCrashRecovery,
// TestSessionOwnership), provider faults seen through the daemon
// (TestProviderFaults, TestCancel*, TestStatsNotBlockedByCompaction),
// pipelined load over one and several connections (TestLoad), a real full
// disk on a tmpfs (TestStoreFullDisk, where mounting works), secrets,
// store escapes and file modes (TestSecurity*), and hostile bytes on stdin
// (TestMalformedInput).
//
// TestMain builds cmd/vtcode-ls once per run, with -race when the test
// binary itself was built with -race (see race_on_test.go). Every test
// starts its own daemons on temporary workspaces; nothing touches the
// network beyond loopback fake provider servers (providers/providertest).
// Waiting is done on channels with timeouts, never by sleeping.
//
// Environment:
//
//	VTCODE_LOAD_SCALE  fraction of the load test's 200 requests per session
//	                   (50 sessions always; default 1, 0.25 under -race,
//	                   × 0.2 under -short)
//	VTCODE_CRASH_KILLS the number of SIGKILLs of the crash test (default 32,
//	                   12 under -short)
//	VTCODE_CRASH_SEED  its random seed (default 20261130, logged)
package integration_test

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// daemonBin is the path of the vtcode-ls binary under test.
var daemonBin string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	flag.Parse()
	dir, err := os.MkdirTemp("", "vtcode-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	daemonBin = filepath.Join(dir, "vtcode-ls")
	args := []string{"build", "-o", daemonBin}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "./cmd/vtcode-ls")
	start := time.Now()
	cmd := exec.Command("go", args...)
	cmd.Dir = ".." // the module root
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "integration: go %v: %v\n", args, err)
		return 1
	}
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "integration: built %s (race=%v) in %s\n", daemonBin, raceEnabled, time.Since(start).Round(time.Millisecond))
	}
	return m.Run()
}
