package store

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// The test binary doubles as the helper process of the cross-process tests:
// with helperEnv set, TestMain runs a helper instead of the tests.
const (
	helperEnv     = "VTCODE_STORE_TEST_HELPER"
	helperRootEnv = "VTCODE_STORE_TEST_ROOT"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode, os.Getenv(helperRootEnv)))
	}
	goleak.VerifyTestMain(m)
}

// runHelper opens session "s1" and then either holds it until stdin closes
// ("hold") or appends events forever, printing each acknowledged seq on its
// own line ("append").
func runHelper(mode, root string) int {
	if mode == "foreign" {
		return foreignLock(root)
	}
	st, err := Open(root, Options{})
	if err != nil {
		fmt.Printf("error: %v\n", err)
		return 2
	}
	l, err := st.OpenSession("s1")
	if err != nil {
		fmt.Printf("error: %v\n", err)
		return 2
	}
	defer l.Close()
	switch mode {
	case "hold":
		fmt.Println("ready")
		io.Copy(io.Discard, os.Stdin)
		return 0
	case "append":
		n := int(l.LastSeq())
		rng := rand.New(rand.NewPCG(uint64(os.Getpid()), 7))
		for {
			n++
			size := rng.IntN(512)
			if rng.IntN(6) == 0 {
				size = rng.IntN(64 << 10) // large writes are the ones a kill can tear
			}
			data, _ := json.Marshal(map[string]any{"n": n, "pad": strings.Repeat("x", size)})
			if err := l.Append(Event{Type: "messages", Messages: n, Data: data}); err != nil {
				fmt.Printf("error: %v\n", err)
				return 2
			}
			fmt.Printf("%d\n", n) // acknowledged: Append returned
		}
	}
	return 2
}

type helper struct {
	cmd   *exec.Cmd
	out   *bufio.Scanner
	stdin io.WriteCloser
}

func startHelper(t *testing.T, mode, root string) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, helperRootEnv+"="+root,
		"GORACE=atexit_sleep_ms=0") // under -race, do not linger a second at exit
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return &helper{cmd: cmd, out: bufio.NewScanner(out), stdin: stdin}
}

func (h *helper) line(t *testing.T) string {
	t.Helper()
	if !h.out.Scan() {
		t.Fatalf("helper exited early: %v", h.out.Err())
	}
	s := h.out.Text()
	if strings.HasPrefix(s, "error:") {
		t.Fatalf("helper: %s", s)
	}
	return s
}

func TestBusyAcrossProcesses(t *testing.T) {
	st := openStore(t)
	h := startHelper(t, "hold", st.Root())
	if got := h.line(t); got != "ready" {
		t.Fatalf("helper said %q", got)
	}
	_, err := st.OpenSession("s1")
	var be *BusyError
	if !errors.As(err, &be) || be.PID != h.cmd.Process.Pid {
		t.Fatalf("OpenSession = %v, want BusyError naming pid %d", err, h.cmd.Process.Pid)
	}
	if !strings.Contains(err.Error(), strconv.Itoa(h.cmd.Process.Pid)) {
		t.Errorf("error %q does not name the owner's pid", err)
	}
	// A clean close releases the session.
	h.stdin.Close()
	if err := h.cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
	l := openLog(t, st, "s1")

	// And the other way round: the helper finds us busy.
	h2 := startHelper(t, "hold", st.Root())
	h2.out.Scan()
	if got := h2.out.Text(); !strings.Contains(got, "busy") || !strings.Contains(got, strconv.Itoa(os.Getpid())) {
		t.Errorf("helper got %q, want a busy error naming pid %d", got, os.Getpid())
	}
	l.Close()

	// A killed owner releases the session too.
	h3 := startHelper(t, "hold", st.Root())
	h3.line(t)
	h3.cmd.Process.Kill()
	h3.cmd.Wait()
	openLog(t, st, "s1")
}

// foreignLock is a process that is not a vtcode-ls store: it takes the lock
// of session s1 itself, writes no pid, and holds it until stdin closes.
func foreignLock(root string) int {
	f, err := os.OpenFile(root+"/s1/lock", os.O_RDWR, 0)
	if err != nil {
		fmt.Printf("error: %v\n", err)
		return 2
	}
	defer f.Close()
	if err := tryLock(f); err != nil {
		fmt.Printf("error: %v\n", err)
		return 2
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// TestBusyNamesTheRealOwner reproduces a lock held by a foreign process
// after its recorded owner died: the lock file still records the pid of a dead owner while a
// foreign process holds the lock. The BusyError names the real owner (on
// Linux, from /proc/locks) or no pid at all, never the dead one; once the
// holder is gone the stale lock is taken over and records our pid.
func TestBusyNamesTheRealOwner(t *testing.T) {
	st := openStore(t)
	openLog(t, st, "s1").Close()
	dead := exec.Command(os.Args[0], "-test.run=^$")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	deadPID := dead.Process.Pid
	lockPath := st.Root() + "/s1/lock"
	os.WriteFile(lockPath, []byte(strconv.Itoa(deadPID)+"\n"), 0o600)
	h := startHelper(t, "foreign", st.Root())
	if got := h.line(t); got != "ready" {
		t.Fatalf("helper said %q", got)
	}
	_, err := st.OpenSession("s1")
	var be *BusyError
	if !errors.As(err, &be) {
		t.Fatalf("OpenSession = %v, want a BusyError", err)
	}
	want := 0
	if runtime.GOOS == "linux" {
		want = h.cmd.Process.Pid
	}
	if be.PID != want || strings.Contains(err.Error(), strconv.Itoa(deadPID)) {
		t.Errorf("BusyError = %q (pid %d), want pid %d and never the dead owner %d", err, be.PID, want, deadPID)
	}
	h.stdin.Close()
	h.cmd.Wait()
	l := openLog(t, st, "s1")
	if b, _ := os.ReadFile(lockPath); strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("lock file after the takeover holds %q, want our pid", b)
	}
	l.Close()
}

// TestCrashLosesNoAcknowledgedEvent SIGKILLs a helper appending events at
// random points, then checks after each kill that every event the helper
// acknowledged is present, in order, and the log is clean.
func TestCrashLosesNoAcknowledgedEvent(t *testing.T) {
	st := openStore(t)
	rng := rand.New(rand.NewPCG(1, 2))
	const kills = 20
	var warns int
	var msg string
	logger := slog.New(countingHandler{slog.DiscardHandler, &warns, &msg})
	acked := 0
	for k := 0; k < kills; k++ {
		h := startHelper(t, "append", st.Root())
		for range 1 + rng.IntN(8) {
			n, err := strconv.Atoi(h.line(t))
			if err != nil || n != acked+1 {
				t.Fatalf("helper acknowledged %d after %d (%v)", n, acked, err)
			}
			acked = n
		}
		h.cmd.Process.Kill()
		// Acknowledgements already in the pipe count too.
		for h.out.Scan() {
			if n, err := strconv.Atoi(h.out.Text()); err == nil && n == acked+1 {
				acked = n
			}
		}
		h.cmd.Wait()

		st2, err := openAt(t, st.Root(), Options{Logger: logger})
		if err != nil {
			t.Fatal(err)
		}
		l, err := st2.OpenSession("s1")
		if err != nil {
			t.Fatalf("kill %d: reopen: %v", k, err)
		}
		evs, err := l.Events()
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) < acked {
			t.Fatalf("kill %d: %d events, but %d were acknowledged", k, len(evs), acked)
		}
		checkSeqs(t, evs, len(evs))
		acked = len(evs) // unacknowledged but durable events stay; the next helper continues after them
		l.Close()
	}
	t.Logf("%d kills, %d events, %d torn lines recovered", kills, acked, warns)
}
