package session

import (
	"os"
	"sync"
	"time"

	"github.com/vtcode/vtcode-ls/config"
)

// userConfigMemo is the Manager's user configuration as last loaded, with
// the state of its file then: the proxy asks for it at every request whose
// upstream is not an official endpoint (a gateway, a local server), and
// decoding the TOML each time was a tenth of a millisecond on the agent's
// path. The file is loaded again whenever its size or modification time
// changes, or it appears or goes, so an edit is seen at the next request.
type userConfigMemo struct {
	mu    sync.Mutex
	ok    bool
	stamp fileStamp
	cfg   config.Config
	err   error
}

// fileStamp is what tells that a file changed without reading it.
type fileStamp struct {
	exists bool
	size   int64
	mod    time.Time
}

func stampOf(path string) (fileStamp, bool) {
	fi, err := os.Stat(path)
	switch {
	case err == nil:
		return fileStamp{true, fi.Size(), fi.ModTime()}, true
	case os.IsNotExist(err):
		return fileStamp{}, true
	}
	return fileStamp{}, false // unknown: load it
}

// load returns the configuration of the user file path (config.Load with no
// workspace), loading it only when its file changed. The value is shared
// with later calls: callers must not modify it.
func (u *userConfigMemo) load(path string) (config.Config, error) {
	st, known := stampOf(path)
	u.mu.Lock()
	defer u.mu.Unlock()
	if known && u.ok && st == u.stamp {
		return u.cfg, u.err
	}
	u.cfg, u.err = config.Load(path, "")
	u.stamp, u.ok = st, known
	return u.cfg, u.err
}
