package config

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// debounce is how long Watch waits after the last change before reloading, so
// that an editor's save (truncate + write, or write temp + rename) is one reload.
const debounce = 100 * time.Millisecond

// Watch reloads the configuration (see [Load]) whenever the workspace file
// (<workspace>/vtcode.toml or <workspace>/.vtcode/config.toml) or userFile is
// created, written, renamed or removed. It watches the folders, not the files,
// so editors' atomic saves are seen, and debounces bursts of events.
//
// After each reload it calls onChange with the new configuration when it
// differs from the last one delivered (or an error was reported since), and
// onError with a [*FileError] naming file and line when a file is bad; the
// caller keeps its last good configuration. Both callbacks run on the
// watcher's goroutine, one at a time, and must not call stop.
//
// Watch returns once the folders are watched. stop ends watching and waits
// for the goroutine to exit; it is also ended by cancelling ctx. Call stop in
// every case; it is idempotent.
func Watch(ctx context.Context, workspace, userFile string, onChange func(Config), onError func(error)) (stop func(), err error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch config: %w", err)
	}
	cw := &configWatcher{
		w:         w,
		workspace: workspace,
		userFile:  userFile,
		names:     map[string]map[string]bool{},
		onChange:  onChange,
		onError:   onError,
	}
	if err := cw.add(workspace, "vtcode.toml", ".vtcode"); err != nil {
		w.Close()
		return nil, fmt.Errorf("watch config: %w", err)
	}
	cw.addOptional(filepath.Join(workspace, ".vtcode"), "config.toml")
	if userFile != "" {
		cw.addOptional(filepath.Dir(userFile), filepath.Base(userFile))
	}
	// The baseline: changes are reported relative to what is on disk now.
	if c, err := Load(userFile, workspace); err == nil {
		cw.last, cw.haveLast = c, true
	}

	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		defer w.Close()
		cw.loop(ctx, done)
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		<-exited
	}, nil
}

type configWatcher struct {
	w                   *fsnotify.Watcher
	workspace, userFile string
	// names: for each watched folder, the entry names that matter in it.
	names    map[string]map[string]bool
	onChange func(Config)
	onError  func(error)

	last     Config // last configuration delivered or found at start
	haveLast bool   // false after an error: the next good load is delivered
}

func (cw *configWatcher) add(dir string, names ...string) error {
	dir = filepath.Clean(dir)
	if err := cw.w.Add(dir); err != nil {
		return err
	}
	if cw.names[dir] == nil {
		cw.names[dir] = map[string]bool{}
	}
	for _, n := range names {
		cw.names[dir][n] = true
	}
	return nil
}

// addOptional watches dir if it exists. The names are remembered either way,
// so a folder created later (.vtcode) can be added when it appears.
func (cw *configWatcher) addOptional(dir string, names ...string) {
	dir = filepath.Clean(dir)
	if err := cw.add(dir, names...); err != nil && !errors.Is(err, fs.ErrNotExist) && cw.onError != nil {
		cw.onError(fmt.Errorf("watch config: %w", err))
	}
	if cw.names[dir] == nil {
		cw.names[dir] = map[string]bool{}
		for _, n := range names {
			cw.names[dir][n] = true
		}
	}
}

func (cw *configWatcher) loop(ctx context.Context, done <-chan struct{}) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	vtdir := filepath.Join(filepath.Clean(cw.workspace), ".vtcode")
	for {
		select {
		case <-ctx.Done():
			return
		case <-done:
			return
		case err, ok := <-cw.w.Errors:
			if !ok {
				return
			}
			if cw.onError != nil {
				cw.onError(fmt.Errorf("watch config: %w", err))
			}
		case ev, ok := <-cw.w.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			dir, name := filepath.Dir(ev.Name), filepath.Base(ev.Name)
			if !cw.names[dir][name] {
				continue
			}
			if ev.Name == vtdir && ev.Op.Has(fsnotify.Create) {
				if fi, err := os.Stat(vtdir); err == nil && fi.IsDir() {
					cw.addOptional(vtdir, "config.toml")
				}
			}
			timer.Reset(debounce)
		case <-timer.C:
			cw.reload()
		}
	}
}

func (cw *configWatcher) reload() {
	c, err := Load(cw.userFile, cw.workspace)
	if err != nil {
		cw.haveLast = false
		if cw.onError != nil {
			cw.onError(err)
		}
		return
	}
	if cw.haveLast && reflect.DeepEqual(c, cw.last) {
		return
	}
	cw.last, cw.haveLast = c, true
	if cw.onChange != nil {
		cw.onChange(c)
	}
}
