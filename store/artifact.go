package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/vtcode/vtcode-ls/history"
)

const (
	artifactExt = ".jsonl"
	metaExt     = ".meta.json"
)

// ArtifactMeta is what the caller records about an artifact besides its messages.
type ArtifactMeta struct {
	Trigger   string    // compaction trigger: manual, auto, recovery, model_switch
	Mode      string    // compaction mode: local or provider
	CreatedAt time.Time // zero: now
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

// WriteArtifact durably stores msgs as artifact id (Message JSONL, one message
// per line) with its metadata in a sidecar file. Both files are written to a
// temporary file, fsynced and renamed; the folder is fsynced before it
// returns. Artifacts are immutable: an existing id is an error wrapping
// fs.ErrExist.
func (l *Log) WriteArtifact(id string, msgs []history.Message, meta ArtifactMeta) error {
	if err := ValidID(id); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	dir := filepath.Join(l.dir, artifactsDir)
	path, err := within(dir, id+artifactExt)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("write artifact %s: %w", id, fs.ErrExist)
	}
	if meta.CreatedAt.IsZero() {
		meta.CreatedAt = time.Now()
	}
	info := ArtifactInfo{ID: id, CreatedAt: meta.CreatedAt, Messages: len(msgs), Trigger: meta.Trigger, Mode: meta.Mode}
	// The sidecar goes first: the artifact's rename is the commit point, and a
	// sidecar without an artifact is ignored.
	err = writeAtomic(dir, id+metaExt, func(w io.Writer) error {
		return json.NewEncoder(w).Encode(info)
	})
	if err == nil {
		err = writeAtomic(dir, id+artifactExt, func(w io.Writer) error {
			bw := bufio.NewWriterSize(w, 256<<10)
			for i := range msgs {
				b, err := json.Marshal(msgs[i])
				if err != nil {
					return fmt.Errorf("message %d: %w", i, err)
				}
				bw.Write(b)
				bw.WriteByte('\n')
			}
			return bw.Flush()
		})
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("write artifact %s: %w", id, err)
	}
	return nil
}

// ReadArtifact returns the messages of artifact id. A missing artifact is an
// error wrapping fs.ErrNotExist; an undecodable line is a [*CorruptError].
func (l *Log) ReadArtifact(id string) ([]history.Message, error) {
	if err := ValidID(id); err != nil {
		return nil, err
	}
	path, err := within(filepath.Join(l.dir, artifactsDir), id+artifactExt)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("read artifact %s: %w", id, err)
	}
	defer f.Close()
	var msgs []history.Message
	lr := newLineReader(f)
	for line := 1; ; line++ {
		b, err := lr.next()
		if err == io.EOF {
			return msgs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read artifact %s: %w", id, err)
		}
		b = bytes.TrimSpace(b)
		if len(b) == 0 {
			continue
		}
		var m history.Message
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, &CorruptError{File: path, Line: line, Err: err}
		}
		msgs = append(msgs, m)
	}
}

// ListArtifacts describes the session's artifacts, oldest first (ties by id).
// An artifact whose sidecar is missing or unreadable is still listed, with the
// file's modification time, a counted message total and no trigger or mode.
func (l *Log) ListArtifacts() ([]ArtifactInfo, error) {
	dir := filepath.Join(l.dir, artifactsDir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []ArtifactInfo{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list artifacts: %w", err)
	}
	out := []ArtifactInfo{}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasSuffix(name, artifactExt) {
			continue
		}
		id := strings.TrimSuffix(name, artifactExt)
		if ValidID(id) != nil {
			continue
		}
		info, err := artifactInfo(dir, id)
		if err != nil {
			return nil, fmt.Errorf("list artifacts: %w", err)
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

func artifactInfo(dir, id string) (ArtifactInfo, error) {
	if b, err := readNoFollow(filepath.Join(dir, id+metaExt)); err == nil {
		var info ArtifactInfo
		if json.Unmarshal(b, &info) == nil && info.ID == id {
			return info, nil
		}
	}
	f, err := os.OpenFile(filepath.Join(dir, id+artifactExt), os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return ArtifactInfo{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ArtifactInfo{}, err
	}
	info := ArtifactInfo{ID: id, CreatedAt: fi.ModTime()}
	lr := newLineReader(f)
	for {
		b, err := lr.next()
		if err == io.EOF {
			return info, nil
		}
		if err != nil {
			return ArtifactInfo{}, err
		}
		if len(bytes.TrimSpace(b)) > 0 {
			info.Messages++
		}
	}
}

func readNoFollow(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
