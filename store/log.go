package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
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
	// Checkpoint marks an event whose payload holds the whole live history
	// after it (a compaction boundary, a restore): a replay need not decode
	// the messages of the events before the last checkpoint
	// ([Log.LastCheckpoint]).
	Checkpoint bool `json:"checkpoint,omitempty"`
	// Data is the event payload, any JSON value (it is written compacted).
	Data json.RawMessage `json:"data,omitempty"`
}

// header is the part of an event recovery and listing look at.
type header struct {
	Seq        int64     `json:"seq"`
	Type       string    `json:"type"`
	Time       time.Time `json:"time"`
	Messages   int       `json:"messages"`
	Checkpoint bool      `json:"checkpoint"`
	Sum        string    `json:"sum"`
}

// Each line ends with its checksum: `,"sum":"<crc32c of the line without
// it, in 8 hex digits>"}`. Lines written before checksums existed have none
// and are accepted until the first line that has one.
const sumSuffixLen = len(`,"sum":"00000000"}`)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// encodeLine marshals ev as one checksummed line ending in '\n'.
func encodeLine(ev Event) ([]byte, error) {
	b, err := json.Marshal(ev) // compacts Data: the line holds no raw newline
	if err != nil {
		return nil, err
	}
	sum := crc32.Checksum(b, crcTable)
	b = b[:len(b)-1] // the closing brace
	b = append(b, `,"sum":"`...)
	b = append(b, fmt.Sprintf("%08x", sum)...)
	return append(b, "\"}\n"...), nil
}

// parseLine checks one complete line (without its '\n'): a type, a
// positive seq and the checksum, or, for a line without one (written before
// checksums existed), valid JSON. A checksummed line's header is read from
// its first fields only: the checksum already vouches for the rest.
func parseLine(line []byte) (header, error) {
	if sum, ok := lineSum(line); ok {
		want, _ := strconv.ParseUint(sum, 16, 32)
		n := len(line) - sumSuffixLen
		got := crc32.Update(crc32.Checksum(line[:n], crcTable), crcTable, []byte("}"))
		if uint64(got) != want {
			return header{}, fmt.Errorf("checksum mismatch (%08x, recorded %s)", got, sum)
		}
		h, err := prefixHeader(line)
		if err != nil {
			return h, err
		}
		h.Sum = sum
		return h, checkHeader(h)
	}
	var h header
	if err := json.Unmarshal(line, &h); err != nil {
		return h, err
	}
	if h.Sum != "" {
		return h, errors.New("malformed checksum")
	}
	return h, checkHeader(h)
}

func checkHeader(h header) error {
	if h.Type == "" {
		return errors.New("event has no type")
	}
	if h.Seq <= 0 {
		return errors.New("event has no sequence number")
	}
	return nil
}

// lineSum returns the checksum a line ends with, if it ends with one.
func lineSum(line []byte) (string, bool) {
	n := len(line) - sumSuffixLen
	if n < 1 || !bytes.HasPrefix(line[n:], []byte(`,"sum":"`)) || !bytes.HasSuffix(line, []byte(`"}`)) {
		return "", false
	}
	sum := line[n+len(`,"sum":"`) : len(line)-2]
	for _, c := range sum {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return "", false
		}
	}
	return string(sum), true
}

// prefixHeader decodes the header fields of a line written by encodeLine,
// stopping at "data" (which encodeLine writes after them) without reading
// it.
func prefixHeader(line []byte) (header, error) {
	var h header
	dec := json.NewDecoder(bytes.NewReader(line))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return h, errors.New("event is not a JSON object")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return h, err
		}
		var dst any
		switch t {
		case "data", "sum":
			return h, nil
		case "seq":
			dst = &h.Seq
		case "type":
			dst = &h.Type
		case "time":
			dst = &h.Time
		case "messages":
			dst = &h.Messages
		case "checkpoint":
			dst = &h.Checkpoint
		default:
			dst = new(json.RawMessage)
		}
		if err := dec.Decode(dst); err != nil {
			return h, err
		}
	}
	return h, nil
}

// ErrBusy is matched (errors.Is) by every [*BusyError].
var ErrBusy = errors.New("session is busy")

// BusyError reports that a session is owned by another [Log], in this process
// or another one.
type BusyError struct {
	ID  string // the session
	PID int    // the owner's process id; 0 if it is not known
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

// Repair describes what [Store.OpenSession] did to an event log holding an
// invalid line that a crash cannot produce (a complete line that is not a
// valid, checksummed event, or an event out of sequence): the log now holds
// the valid events before that line, and the whole damaged file was saved
// first, so nothing is lost from disk.
type Repair struct {
	File         string // the event log
	Line         int    // 1-based number of the first invalid line
	Reason       string // what is wrong with it
	KeptEvents   int    // events before it, kept
	DroppedLines int    // lines from it to the end, no longer in the log
	SavedAs      string // path of the copy of the damaged log
}

// ErrClosed is returned by the methods of a closed [Log].
var ErrClosed = errors.New("session log is closed")

// Log is an open, exclusively owned session: its event log and artifacts. Its
// methods are safe for concurrent use.
type Log struct {
	id     string
	dir    string // path of the session folder when opened
	st     *Store
	root   *os.Root // the session folder: held open, so a folder swapped later does not move it
	logger *slog.Logger

	mu     sync.Mutex // guards the fields below and serializes writes
	f      *os.File   // events.jsonl, O_APPEND
	lock   *os.File   // the locked lock file
	size   int64      // Inv: the file holds exactly size bytes of complete event lines
	seq    int64      // Seq of the last event
	count  int        // number of events
	cp     int64      // Seq of the last checkpoint event, 0 if none
	sums   bool       // a line with a checksum was read or written
	repair *Repair
	broken error // set when a failed append could not be rolled back
	closed bool
}

// OpenSession opens (creating if needed) session id and takes ownership of it.
// It fails with a [*BusyError] if another Log owns the session, and with an
// error wrapping [ErrInvalidID] for a bad id. A torn last line (no trailing
// newline: a write a crash interrupted, never acknowledged) is logged and
// truncated away. A damaged log is repaired to its valid prefix, see
// [Repair] and [Log.Repaired]. The caller must Close the Log.
func (s *Store) OpenSession(id string) (_ *Log, err error) {
	if err := ValidID(id); err != nil {
		return nil, err
	}
	root, err := s.fs.openDir(s.root, id)
	if err != nil {
		return nil, err
	}
	l := &Log{id: id, dir: filepath.Join(s.path, id), st: s, root: root, logger: s.logger}
	defer func() {
		if err != nil {
			l.release()
		}
	}()
	if l.lock, err = l.acquireLock(); err != nil {
		return nil, err
	}
	if l.f, err = s.fs.openFile(root, eventsFile, os.O_RDWR|os.O_CREATE|os.O_APPEND); err != nil {
		return nil, err
	}
	if err := s.fs.syncDir(root, "."); err != nil { // the lock and log entries, if new
		return nil, err
	}
	if err := l.recover(); err != nil {
		return nil, err
	}
	if err := s.fs.mkdir(root, artifactsDir); err != nil {
		return nil, err
	}
	// We own the session: any temporary file is a leftover of a dead writer.
	s.removeTemps(root, ".", 0)
	s.removeTemps(root, artifactsDir, 0)
	return l, nil
}

// acquireLock takes the session's exclusive lock and records our pid in the
// lock file. A lock left by a dead process was released by the kernel when
// it died, so taking it over needs nothing more.
func (l *Log) acquireLock() (*os.File, error) {
	f, err := l.st.fs.openFile(l.root, lockFile, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	if err := tryLock(f); err != nil {
		defer f.Close()
		if errors.Is(err, errLocked) {
			return nil, &BusyError{ID: l.id, PID: lockOwner(f, readPID(f))}
		}
		return nil, fmt.Errorf("lock: %w", err)
	}
	pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
	if err := f.Truncate(0); err == nil {
		if _, err = f.WriteAt(pid, 0); err == nil {
			f.Sync()
		}
	}
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
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// recover scans the log: it truncates a torn last line, repairs a damaged
// log (see [Repair]) and sets size, seq, count and cp.
func (l *Log) recover() error {
	fi, err := l.f.Stat()
	if err != nil {
		return err
	}
	lr := newLineReader(io.NewSectionReader(l.f, 0, fi.Size()))
	var off int64
	for line := 1; ; line++ {
		b, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if b[len(b)-1] != '\n' {
			// Torn: the write of an event that was never acknowledged.
			l.logger.Warn("store: ignoring torn last line of event log",
				"session", l.id, "file", l.f.Name(), "line", line, "bytes", len(b), "reason", "no trailing newline")
			return l.truncate(off)
		}
		h, err := parseLine(b[:len(b)-1])
		switch {
		case err != nil:
		case h.Seq != l.seq+1:
			err = fmt.Errorf("event seq %d after seq %d", h.Seq, l.seq)
		case h.Sum == "" && l.sums:
			err = errors.New("event has no checksum")
		}
		if err != nil {
			return l.repairAt(lr, line, off, err)
		}
		l.seq = h.Seq
		l.count++
		l.sums = l.sums || h.Sum != ""
		if h.Checkpoint {
			l.cp = h.Seq
		}
		off += int64(len(b))
	}
	l.size = off
	return nil
}

// truncate cuts the log to size bytes, durably.
func (l *Log) truncate(size int64) error {
	if err := l.f.Truncate(size); err != nil {
		return err
	}
	if err := l.st.fs.sync(l.f); err != nil {
		return err
	}
	l.size = size
	return nil
}

// repairAt saves a copy of the damaged log next to it, then cuts the log
// back to the events before line (at offset off).
func (l *Log) repairAt(lr *lineReader, line int, off int64, reason error) error {
	dropped := 1
	for {
		_, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		dropped++
	}
	// The first free @damaged-N-events.jsonl: an earlier copy is never
	// overwritten.
	saved := ""
	for n := 1; saved == ""; n++ {
		name := fmt.Sprintf("@damaged-%d-events.jsonl", n)
		if _, err := l.root.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			saved = name
		} else if err != nil {
			return err
		}
	}
	fi, err := l.f.Stat()
	if err != nil {
		return err
	}
	err = l.st.fs.writeAtomic(l.root, saved, func(w io.Writer) error {
		_, err := io.Copy(w, io.NewSectionReader(l.f, 0, fi.Size()))
		return err
	})
	if err == nil {
		err = l.st.fs.syncDir(l.root, ".")
	}
	if err != nil {
		return fmt.Errorf("%s:%d: %v; saving a copy before repairing it failed: %w", l.f.Name(), line, reason, err)
	}
	if err := l.truncate(off); err != nil {
		return err
	}
	l.repair = &Repair{
		File: l.f.Name(), Line: line, Reason: reason.Error(), KeptEvents: l.count,
		DroppedLines: dropped, SavedAs: filepath.Join(l.dir, saved),
	}
	l.logger.Warn("store: damaged event log repaired to its valid prefix",
		"session", l.id, "file", l.f.Name(), "line", line, "reason", reason.Error(),
		"kept_events", l.count, "dropped_lines", dropped, "saved_as", l.repair.SavedAs)
	return nil
}

// ID returns the session id.
func (l *Log) ID() string { return l.id }

// Dir returns the path of the session's folder (as it was when opened: the
// Log keeps using that folder even if it is moved).
func (l *Log) Dir() string { return l.dir }

// Repaired reports the repair OpenSession made to a damaged log, nil when
// the log was sound.
func (l *Log) Repaired() *Repair { return l.repair }

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

// LastCheckpoint returns the Seq of the last event marked
// [Event.Checkpoint], 0 when there is none.
func (l *Log) LastCheckpoint() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cp
}

// Append writes ev as one line and fsyncs the log before returning: when it
// returns nil the event survives a crash. It sets ev.Seq to the next sequence
// number and ev.Time to the current time if zero. Data must be valid JSON.
// After a failed write the log is truncated back to its previous size, so a
// failed Append changed nothing; if even that fails, the Log refuses further
// appends.
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
	line, err := encodeLine(ev)
	if err != nil {
		return fmt.Errorf("append event: %w", err)
	}
	// One write of the whole line, then fsync: nothing is acknowledged before
	// it is on disk, and a crash tears at most this last line.
	n, err := l.st.fs.write(l.f, line)
	if err == nil {
		err = l.st.fs.sync(l.f)
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
	l.sums = true
	if ev.Checkpoint {
		l.cp = ev.Seq
	}
	return nil
}

// Replay calls fn with every event of the log, in order, reading one line at
// a time; ev.Data is valid only during the call. When needData is not nil
// and returns false for an event, fn gets it without its Data, which is not
// decoded at all (a resume skipping the messages before a checkpoint). It
// stops at fn's first error and returns it.
func (l *Log) Replay(needData func(seq int64, typ string) bool, fn func(ev Event) error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	lr := newLineReader(io.NewSectionReader(l.f, 0, l.size))
	for line := 1; ; line++ {
		b, err := lr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read events: %w", err)
		}
		b = bytes.TrimSuffix(b, []byte{'\n'})
		var ev Event
		if needData != nil {
			if _, ok := lineSum(b); ok {
				if h, err := prefixHeader(b); err == nil && !needData(h.Seq, h.Type) {
					ev = Event{Seq: h.Seq, Type: h.Type, Time: h.Time, Messages: h.Messages, Checkpoint: h.Checkpoint}
					if err := fn(ev); err != nil {
						return err
					}
					continue
				}
			}
		}
		if err := json.Unmarshal(b, &ev); err != nil {
			// recover checked every line: the file changed under us, or a
			// line was forged with a valid checksum.
			return fmt.Errorf("%s:%d: %w", l.f.Name(), line, err)
		}
		if err := fn(ev); err != nil {
			return err
		}
	}
}

// Events reads back every event of the log, in order.
func (l *Log) Events() ([]Event, error) {
	var evs []Event
	err := l.Replay(nil, func(ev Event) error {
		evs = append(evs, ev)
		return nil
	})
	return evs, err
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
		if uerr := unlock(l.lock); err == nil {
			err = uerr
		}
		if cerr := l.lock.Close(); err == nil {
			err = cerr
		}
	}
	if cerr := l.root.Close(); err == nil {
		err = cerr
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
		if h, err := parseLine(line); err == nil {
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
