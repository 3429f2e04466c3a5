package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
)

// ReadEvents calls fn with the events of session id in order, reading its
// log without opening the session: it takes no lock, so it reads a session
// another process owns as far as it is written. It stops before the first
// line that is incomplete or fails its check (a log being appended to, or
// damaged: the owner repairs it), and at fn's first error, which it
// returns. A session without a log is an error wrapping fs.ErrNotExist.
func (s *Store) ReadEvents(id string, fn func(ev Event) error) error {
	if err := ValidID(id); err != nil {
		return err
	}
	f, err := s.fs.openFile(s.root, path.Join(id, eventsFile), os.O_RDONLY)
	if err != nil {
		return fmt.Errorf("read events of %s: %w", id, err)
	}
	defer f.Close()
	lr := newLineReader(f)
	for {
		b, err := lr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read events of %s: %w", id, err)
		}
		if !bytes.HasSuffix(b, []byte{'\n'}) {
			return nil // a line being written
		}
		b = bytes.TrimSuffix(b, []byte{'\n'})
		if _, err := parseLine(b); err != nil {
			return nil
		}
		var ev Event
		if err := json.Unmarshal(b, &ev); err != nil {
			return nil
		}
		if err := fn(ev); err != nil {
			return err
		}
	}
}
