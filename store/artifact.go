package store

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/vtcode/vtcode-ls/history"
)

const (
	artifactExt = ".jsonl"
	metaExt     = ".meta.json" // sidecars of older versions, removed with their artifact
)

// ArtifactRef is what the event referencing an artifact records about it, so
// that the artifact can be verified before it is used: its id, message count,
// size and SHA-256. A ref with no SHA256 comes from a log of an older version
// and is only checked for its message count (when not zero).
type ArtifactRef struct {
	ID       string `json:"id"`
	Messages int    `json:"messages"`
	Bytes    int64  `json:"bytes,omitempty"`
	SHA256   string `json:"sha256,omitempty"`
}

// ArtifactInfo describes a stored artifact; its JSON form is the element of
// the vtcode/listArtifacts result.
type ArtifactInfo struct {
	ID        string    `json:"artifactId"`
	CreatedAt time.Time `json:"createdAt"`
	Messages  int       `json:"messages"`
	Trigger   string    `json:"trigger"`
	Mode      string    `json:"mode"`
}

// ErrDamaged is matched (errors.Is) by every [*DamagedError].
var ErrDamaged = errors.New("artifact is damaged")

// DamagedError reports an artifact whose file no longer matches the ref its
// event recorded (size, checksum or message count), or that does not decode.
type DamagedError struct {
	ID     string
	Reason string
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("artifact %s is damaged: %s", e.ID, e.Reason)
}

// Is makes errors.Is(err, ErrDamaged) true for a *DamagedError.
func (e *DamagedError) Is(target error) bool { return target == ErrDamaged }

// artifacts opens the session's artifacts folder, refusing a link in its
// place.
func (l *Log) artifacts() (*os.Root, error) {
	return l.st.fs.openDir(l.root, artifactsDir)
}

// WriteArtifact durably stores msgs as artifact id (Message JSONL, one message
// per line): written to a temporary file, fsynced, renamed, and the folder
// fsynced before it returns the ref to record. Artifacts are immutable: an
// existing id is an error wrapping fs.ErrExist. A failure leaves no file.
func (l *Log) WriteArtifact(id string, msgs []history.Message) (ArtifactRef, error) {
	if err := ValidID(id); err != nil {
		return ArtifactRef{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ArtifactRef{}, ErrClosed
	}
	ref, err := l.writeArtifact(id, msgs)
	if err != nil {
		return ArtifactRef{}, fmt.Errorf("write artifact %s: %w", id, err)
	}
	return ref, nil
}

func (l *Log) writeArtifact(id string, msgs []history.Message) (ArtifactRef, error) {
	ar, err := l.artifacts()
	if err != nil {
		return ArtifactRef{}, err
	}
	defer ar.Close()
	name := id + artifactExt
	if _, err := ar.Lstat(name); err == nil {
		return ArtifactRef{}, fs.ErrExist
	}
	ref := ArtifactRef{ID: id, Messages: len(msgs)}
	h := sha256.New()
	err = l.st.fs.writeAtomic(ar, name, func(w io.Writer) error {
		cw := &countWriter{w: io.MultiWriter(w, h)}
		bw := bufio.NewWriterSize(cw, 256<<10)
		for i := range msgs {
			b, err := json.Marshal(msgs[i])
			if err != nil {
				return fmt.Errorf("message %d: %w", i, err)
			}
			bw.Write(b)
			bw.WriteByte('\n')
		}
		err := bw.Flush()
		ref.Bytes = cw.n
		return err
	})
	if err == nil {
		if err = l.st.fs.syncDir(ar, "."); err != nil {
			ar.Remove(name) // not durable: not committed either
		}
	}
	if err != nil {
		return ArtifactRef{}, err
	}
	ref.SHA256 = hex.EncodeToString(h.Sum(nil))
	return ref, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// ReadArtifact returns the messages of the artifact ref names, after
// checking them against the ref: a size, checksum or count that differs, or
// a line that does not decode, is a [*DamagedError]. A missing artifact is
// an error wrapping fs.ErrNotExist.
func (l *Log) ReadArtifact(ref ArtifactRef) ([]history.Message, error) {
	if err := ValidID(ref.ID); err != nil {
		return nil, err
	}
	ar, err := l.artifacts()
	if err != nil {
		return nil, fmt.Errorf("read artifact %s: %w", ref.ID, err)
	}
	defer ar.Close()
	f, err := l.st.fs.openFile(ar, ref.ID+artifactExt, os.O_RDONLY)
	if err != nil {
		return nil, fmt.Errorf("read artifact %s: %w", ref.ID, err)
	}
	defer f.Close()
	var r io.Reader = f
	var h hash.Hash
	if ref.SHA256 != "" {
		fi, err := f.Stat()
		if err != nil {
			return nil, fmt.Errorf("read artifact %s: %w", ref.ID, err)
		}
		if fi.Size() != ref.Bytes {
			return nil, &DamagedError{ID: ref.ID, Reason: fmt.Sprintf("%d bytes, recorded %d", fi.Size(), ref.Bytes)}
		}
		h = sha256.New()
		r = io.TeeReader(f, h)
	}
	var msgs []history.Message
	lr := newLineReader(r)
	for line := 1; ; line++ {
		b, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read artifact %s: %w", ref.ID, err)
		}
		b = bytes.TrimSpace(b)
		if len(b) == 0 {
			continue
		}
		var m history.Message
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, &DamagedError{ID: ref.ID, Reason: fmt.Sprintf("line %d: %v", line, err)}
		}
		msgs = append(msgs, m)
	}
	if h != nil {
		if sum := hex.EncodeToString(h.Sum(nil)); sum != ref.SHA256 {
			return nil, &DamagedError{ID: ref.ID, Reason: "checksum differs from the recorded one"}
		}
	}
	if (ref.SHA256 != "" || ref.Messages > 0) && len(msgs) != ref.Messages {
		return nil, &DamagedError{ID: ref.ID, Reason: fmt.Sprintf("%d messages, recorded %d", len(msgs), ref.Messages)}
	}
	return msgs, nil
}

// CheckArtifact cheaply checks that the artifact ref names is there and
// has the recorded size, and returns its message count: the ref's, or for a
// ref without a size (older logs) the lines counted in the file. A missing
// artifact wraps fs.ErrNotExist; a size that differs is a [*DamagedError].
func (l *Log) CheckArtifact(ref ArtifactRef) (int, error) {
	if err := ValidID(ref.ID); err != nil {
		return 0, err
	}
	ar, err := l.artifacts()
	if err != nil {
		return 0, err
	}
	defer ar.Close()
	f, err := l.st.fs.openFile(ar, ref.ID+artifactExt, os.O_RDONLY)
	if err != nil {
		return 0, fmt.Errorf("artifact %s: %w", ref.ID, err)
	}
	defer f.Close()
	if ref.SHA256 != "" {
		fi, err := f.Stat()
		if err != nil {
			return 0, err
		}
		if fi.Size() != ref.Bytes {
			return 0, &DamagedError{ID: ref.ID, Reason: fmt.Sprintf("%d bytes, recorded %d", fi.Size(), ref.Bytes)}
		}
		return ref.Messages, nil
	}
	n := 0
	lr := newLineReader(f)
	for {
		b, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
		if len(bytes.TrimSpace(b)) > 0 {
			n++
		}
	}
	if ref.Messages > 0 && n != ref.Messages {
		return 0, &DamagedError{ID: ref.ID, Reason: fmt.Sprintf("%d messages, recorded %d", n, ref.Messages)}
	}
	return n, nil
}

// RemoveArtifact deletes artifact id (and the sidecar an older version may
// have written). A missing artifact is not an error.
func (l *Log) RemoveArtifact(id string) error {
	if err := ValidID(id); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	ar, err := l.artifacts()
	if err != nil {
		return fmt.Errorf("remove artifact %s: %w", id, err)
	}
	defer ar.Close()
	for _, name := range []string{id + artifactExt, id + metaExt} {
		if err := ar.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove artifact %s: %w", id, err)
		}
	}
	if err := l.st.fs.syncDir(ar, "."); err != nil {
		return fmt.Errorf("remove artifact %s: %w", id, err)
	}
	return nil
}

// ArtifactIDs returns the ids of the artifacts on disk (an artifact file,
// or only the sidecar an older version wrote), in no particular order.
func (l *Log) ArtifactIDs() ([]string, error) {
	ar, err := l.artifacts()
	if err != nil {
		return nil, err
	}
	defer ar.Close()
	d, err := ar.Open(".")
	if err != nil {
		return nil, err
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var ids []string
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), artifactExt)
		if !ok {
			id, ok = strings.CutSuffix(e.Name(), metaExt)
		}
		if ok && e.Type().IsRegular() && ValidID(id) == nil && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, nil
}
