package store

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// lockOwner returns the pid of the process holding the flock on f: the one
// /proc/locks names for f's inode, whoever it is (a process that is not
// vtcode-ls writes no pid in the file). Without that, the pid recorded in the
// file when that process is alive, else 0 (unknown).
func lockOwner(f *os.File, recorded int) int {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err == nil {
		id := fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)
		if pid := procLocksOwner(id); pid > 0 {
			return pid
		}
	}
	if recorded > 0 && alive(recorded) {
		return recorded
	}
	return 0
}

// procLocksOwner scans /proc/locks for a FLOCK on the file "maj:min:inode".
// Lines read "1: FLOCK  ADVISORY  WRITE 4242 08:01:131090 0 EOF"; blocked
// waiters ("1: -> FLOCK ...") are skipped.
func procLocksOwner(id string) int {
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" || !sameFileID(fields[5], id) {
			continue
		}
		if pid, err := strconv.Atoi(fields[4]); err == nil && pid > 0 {
			return pid
		}
	}
	return 0
}

// sameFileID compares "maj:min:inode" ids, whatever the zero padding of the
// device numbers.
func sameFileID(a, b string) bool {
	pa, pb := strings.Split(a, ":"), strings.Split(b, ":")
	if len(pa) != 3 || len(pb) != 3 {
		return false
	}
	for i := range 2 {
		x, err1 := strconv.ParseUint(pa[i], 16, 32)
		y, err2 := strconv.ParseUint(pb[i], 16, 32)
		if err1 != nil || err2 != nil || x != y {
			return false
		}
	}
	return pa[2] == pb[2]
}
