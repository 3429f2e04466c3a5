package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Event is one line of a session's event log. The store assigns Seq and, when
// zero, Time; it never interprets Type or Data.
type Event struct {
	// Seq numbers the events of a session from 1, in append order.
	Seq int64 `json:"seq"`
	// Type names the event ("messages", "response", "compact_boundary",
	// "restore", "policy", "model_switch", ...). It must not be empty.
	Type string `json:"type"`
	// Time is when the event happened; Append fills in the current time when zero.
	Time time.Time `json:"time"`
	// Messages is the length of the live history after the event, recorded by
	// the session layer so that [Store.List] can report it without a replay.
	Messages int `json:"messages"`
	// Data is the event payload, any JSON value (it is written compacted).
	Data json.RawMessage `json:"data,omitempty"`
}

// header is the part of an event recovery and listing look at.
type header struct {
	Seq      int64     `json:"seq"`
	Type     string    `json:"type"`
	Time     time.Time `json:"time"`
	Messages int       `json:"messages"`
}

func parseHeader(line []byte) (header, error) {
	var h header
	if err := json.Unmarshal(line, &h); err != nil {
		return h, err
	}
	if h.Type == "" {
		return h, errors.New("event has no type")
	}
	return h, nil
}

// ErrBusy is matched (errors.Is) by every [*BusyError].
var ErrBusy = errors.New("session is busy")

// BusyError reports that a session is owned by another [Log], in this process
// or another one.
type BusyError struct {
	ID  string // the session
	PID int    // the owner's process id; 0 if it could not be read
}

// Error names the session and, when known, the owner's pid.
func (e *BusyError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("session %q is busy: owned by process %d", e.ID, e.PID)
	}
	return fmt.Sprintf("session %q is busy: owned by another process", e.ID)
}

// Is makes errors.Is(err, ErrBusy) true for a *BusyError.
func (e *BusyError) Is(target error) bool { return target == ErrBusy }

// CorruptError reports an invalid line in an event log or artifact that is not
// a torn final line, and so cannot be dropped without losing acknowledged data.
type CorruptError struct {
	File string // path of the file
	Line int    // 1-based line number
	Err  error  // what is wrong with the line
}

// Error reads "<file>:<line>: corrupt record: <reason>".
func (e *CorruptError) Error() string {
	return fmt.Sprintf("%s:%d: corrupt record: %v", e.File, e.Line, e.Err)
}

// Unwrap returns the reason the line is invalid.
func (e *CorruptError) Unwrap() error { return e.Err }

// ErrClosed is returned by the methods of a closed [Log].
var ErrClosed = errors.New("session log is closed")

var errTorn = errors.New("no trailing newline")

// Log is an open, exclusively owned session: its event log and artifacts. Its
// methods are safe for concurrent use.
type Log struct {
	id, dir, path string
	logger        *slog.Logger

	mu     sync.Mutex // guards the fields below and serializes writes
	f      *os.File   // events.jsonl, O_APPEND
	lock   *os.File   // the flocked lock file
	size   int64      // Inv: the file holds exactly size bytes of complete event lines
	seq    int64      // Seq of the last event
	count  int        // number of events
	broken error      // set when a failed append could not be rolled back
	closed bool
}

// OpenSession opens (creating if needed) session id and takes ownership of it.
// It fails with a [*BusyError] if another Log owns the session, with an error
// wrapping [ErrInvalidID] for a bad id, and with a [*CorruptError] if a line
// other than the last one of the event log is invalid. A torn last line is
// logged once and truncated away. The caller must Close the Log.
func (s *Store) OpenSession(id string) (_ *Log, err error) {
	dir, err := s.sessionDir(id)
	if err != nil {
		return nil, err
	}
	if err := mkdir(dir); err != nil {
		return nil, fmt.Errorf("open session %s: %w", id, err)
	}
	lock, err := acquireLock(dir, id)
	if err != nil {
		return nil, err
	}
	l := &Log{id: id, dir: dir, path: filepath.Join(dir, eventsFile), logger: s.logger, lock: lock}
	defer func() {
		if err != nil {
			l.release()
		}
	}()
	l.f, err = os.OpenFile(l.path, os.O_RDWR|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW, fileMode)
	if err != nil {
		return nil, fmt.Errorf("open session %s: %w", id, err)
	}
	if err := l.f.Chmod(fileMode); err != nil {
		return nil, fmt.Errorf("open session %s: %w", id, err)
	}
	if err := syncDir(dir); err != nil { // the lock and log entries, if new
		return nil, fmt.Errorf("open session %s: %w", id, err)
	}
	if err := l.recover(); err != nil {
		return nil, fmt.Errorf("open session %s: %w", id, err)
	}
	if err := mkdir(filepath.Join(dir, artifactsDir)); err != nil {
		return nil, fmt.Errorf("open session %s: %w", id, err)
	}
	// We own the session: any temporary file is a leftover of a dead writer.
	s.removeTemps(dir, 0)
	s.removeTemps(filepath.Join(dir, artifactsDir), 0)
	return l, nil
}

// acquireLock takes the session's flock and records our pid in the lock file.
func acquireLock(dir, id string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, fileMode)
	if err != nil {
		return nil, fmt.Errorf("open session %s: lock: %w", id, err)
	}
	if err := f.Chmod(fileMode); err != nil {
		f.Close()
		return nil, fmt.Errorf("open session %s: lock: %w", id, err)
	}
	if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &BusyError{ID: id, PID: readPID(f)}
		}
		return nil, fmt.Errorf("open session %s: lock: %w", id, err)
	}
	pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
	// A missing pid only makes a BusyError less informative; do not fail.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt(pid, 0)
	}
	return f, nil
}

func readPID(f *os.File) int {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:n])))
	if err != nil {
		return 0
	}
	return pid
}

func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = syscall.Flock(int(fd), how)
			if ferr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return ferr
}

// recover scans the log, truncates a torn last line, and sets size, seq and count.
func (l *Log) recover() error {
	fi, err := l.f.Stat()
	if err != nil {
		return err
	}
	lr := newLineReader(io.NewSectionReader(l.f, 0, fi.Size()))
	var (
		off, badOff int64
		line, bad   int
		badErr      error
	)
	for {
		b, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		line++
		if bad != 0 {
			return &CorruptError{File: l.path, Line: bad, Err: badErr}
		}
		if b[len(b)-1] != '\n' {
			bad, badOff, badErr = line, off, errTorn
		} else if h, err := parseHeader(b[:len(b)-1]); err != nil {
			bad, badOff, badErr = line, off, err
		} else {
			l.seq = max(l.seq, h.Seq)
			l.count++
		}
		off += int64(len(b))
	}
	l.size = off
	if bad == 0 {
		return nil
	}
	l.logger.Warn("store: ignoring torn last line of event log",
		"session", l.id, "file", l.path, "line", bad, "bytes", off-badOff, "reason", badErr.Error())
	if err := l.f.Truncate(badOff); err != nil {
		return err
	}
	if err := l.f.Sync(); err != nil {
		return err
	}
	l.size = badOff
	return nil
}

// ID returns the session id.
func (l *Log) ID() string { return l.id }

// Dir returns the session's folder.
func (l *Log) Dir() string { return l.dir }

// Len returns the number of events in the log.
func (l *Log) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.count
}

// LastSeq returns the Seq of the last event, 0 for an empty log.
func (l *Log) LastSeq() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seq
}

// Append writes ev as one line and fsyncs the log before returning: when it
// returns nil the event survives a crash. It sets ev.Seq to the next sequence
// number and ev.Time to the current time if zero. Data must be valid JSON.
// After a failed write the log is truncated back to its previous size; if even
// that fails, the Log refuses further appends.
func (l *Log) Append(ev Event) error {
	if ev.Type == "" {
		return errors.New("append event: empty type")
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if l.broken != nil {
		return fmt.Errorf("append event: log unusable after an earlier failure: %w", l.broken)
	}
	ev.Seq = l.seq + 1
	line, err := json.Marshal(ev) // compacts Data: the line holds no raw newline
	if err != nil {
		return fmt.Errorf("append event: %w", err)
	}
	line = append(line, '\n')
	// One write of the whole line, then fsync: nothing is acknowledged before
	// it is on disk, and a crash tears at most this last line.
	n, err := l.f.Write(line)
	if err == nil {
		err = l.f.Sync()
	}
	if err != nil {
		if terr := l.f.Truncate(l.size); terr != nil {
			l.broken = terr
		} else if serr := l.f.Sync(); serr != nil {
			l.broken = serr
		}
		return fmt.Errorf("append event: %w", err)
	}
	l.size += int64(n)
	l.seq = ev.Seq
	l.count++
	return nil
}

// Events reads back every event of the log, in order.
func (l *Log) Events() ([]Event, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, ErrClosed
	}
	lr := newLineReader(io.NewSectionReader(l.f, 0, l.size))
	evs := make([]Event, 0, l.count)
	for line := 1; ; line++ {
		b, err := lr.next()
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read events: %w", err)
		}
		var ev Event
		if err := json.Unmarshal(bytes.TrimSuffix(b, []byte{'\n'}), &ev); err != nil {
			return nil, &CorruptError{File: l.path, Line: line, Err: err}
		}
		evs = append(evs, ev)
	}
}

// Close releases the session. It is safe to call more than once.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	return l.release()
}

// release closes the log and drops the lock, clearing the pid first so a stale
// pid is never reported.
func (l *Log) release() error {
	var err error
	if l.f != nil {
		err = l.f.Close()
	}
	if l.lock != nil {
		l.lock.Truncate(0)
		if uerr := flock(l.lock, syscall.LOCK_UN); err == nil {
			err = uerr
		}
		if cerr := l.lock.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("close session %s: %w", l.id, err)
	}
	return nil
}

// lineReader yields the lines of r, each with its '\n' except possibly the
// last. The returned slice is valid until the next call.
type lineReader struct {
	r   *bufio.Reader
	buf []byte
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10)}
}

func (lr *lineReader) next() ([]byte, error) {
	lr.buf = lr.buf[:0]
	for {
		frag, err := lr.r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			lr.buf = append(lr.buf, frag...)
			continue
		}
		if len(lr.buf) > 0 {
			lr.buf = append(lr.buf, frag...)
			frag = lr.buf
		}
		if err == io.EOF && len(frag) > 0 {
			return frag, nil
		}
		return frag, err
	}
}

// lastHeader returns the header of the last complete, valid event among the
// final two lines of a log of the given size, without reading the rest.
func lastHeader(f io.ReaderAt, size int64) (header, bool, error) {
	nl, err := lastIndexBefore(f, size, '\n')
	if err != nil {
		return header{}, false, err
	}
	for tries := 0; tries < 2 && nl >= 0; tries++ {
		prev, err := lastIndexBefore(f, nl, '\n')
		if err != nil {
			return header{}, false, err
		}
		line := make([]byte, nl-prev-1)
		if _, err := f.ReadAt(line, prev+1); err != nil {
			return header{}, false, err
		}
		if h, err := parseHeader(line); err == nil {
			return h, true, nil
		}
		nl = prev
	}
	return header{}, false, nil
}

// lastIndexBefore returns the offset of the last byte c in f[0:end], or -1.
func lastIndexBefore(f io.ReaderAt, end int64, c byte) (int64, error) {
	buf := make([]byte, 32<<10)
	for end > 0 {
		start := max(0, end-int64(len(buf)))
		chunk := buf[:end-start]
		if _, err := f.ReadAt(chunk, start); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(chunk, c); i >= 0 {
			return start + int64(i), nil
		}
		end = start
	}
	return -1, nil
}
