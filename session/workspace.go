package session

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/vtcode/vtcode-ls/compaction"
	"github.com/vtcode/vtcode-ls/config"
	"github.com/vtcode/vtcode-ls/providers/catalog"
	"github.com/vtcode/vtcode-ls/store"
)

// workspace is one root folder: its configuration, its default policy, its
// store and its compaction prompt.
type workspace struct {
	m    *Manager
	root string // absolute, clean

	mu      sync.Mutex // guards the fields below
	cfg     config.Config
	init    json.RawMessage   // initializationOptions
	patches []json.RawMessage // workspace-default setPolicy patches, oldest first
	policy  config.Policy     // effective: cfg.Policy + init + patches
	catalog *catalog.Catalog
	gen     uint64 // bumped at every change of cfg or policy
	st      *store.Store
	unwatch func()
}

// newWorkspace loads the configuration of root, applies the
// initializationOptions and starts watching the configuration files.
func newWorkspace(m *Manager, root string, init json.RawMessage) (*workspace, error) {
	w := &workspace{m: m, root: root, init: init}
	cfg, err := config.Load(m.o.UserConfig, root)
	if err != nil {
		m.notifyShow(LevelError, fmt.Sprintf("vtcode-ls: configuration not loaded, using defaults: %s", bound(err.Error(), 900)))
		m.logger.Warn("session: configuration not loaded", "workspace", root, "err", err)
		cfg = config.DefaultConfig(root)
	}
	m.reportIgnored(root, cfg)
	if err := w.setConfig(cfg); err != nil {
		return nil, err
	}
	if !m.o.NoWatch {
		stop, err := config.Watch(context.Background(), root, m.o.UserConfig,
			func(cfg config.Config) { w.reload(cfg, nil) },
			func(err error) { w.reload(config.Config{}, err) })
		if err != nil {
			m.logger.Warn("session: not watching configuration", "workspace", root, "err", err)
		} else {
			w.unwatch = stop
		}
	}
	return w, nil
}

// setConfig installs cfg and recomputes the effective policy; it fails, and
// changes nothing, when the initializationOptions do not apply.
func (w *workspace) setConfig(cfg config.Config) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	pol := cfg.Policy
	if len(w.init) > 0 && !isJSONNull(w.init) {
		p, err := config.ApplyJSON(pol, w.init)
		if err != nil {
			return err
		}
		pol = p
	}
	pol = applyPatches(pol, w.patches, w.m.logger.With("workspace", w.root))
	w.cfg, w.policy = cfg, pol
	w.catalog = catalog.WithModels(catalogEntries(cfg))
	w.gen++
	return nil
}

// reload is the watcher's callback: a good configuration replaces the old
// one, a bad one is reported and the last good one stays.
func (w *workspace) reload(cfg config.Config, err error) {
	if err == nil {
		w.m.reportIgnored(w.root, cfg)
		err = w.setConfig(cfg)
	}
	if err != nil {
		w.m.notifyShow(LevelError, "vtcode-ls: configuration not reloaded, keeping the last good one: "+bound(err.Error(), 900))
		w.m.logger.Warn("session: configuration not reloaded", "workspace", w.root, "err", err)
		return
	}
	w.m.logger.Info("session: configuration reloaded", "workspace", w.root)
	w.m.refreshAll(w)
}

// snapshot returns the configuration, effective default policy, model
// catalog and generation.
func (w *workspace) snapshot() (config.Config, config.Policy, *catalog.Catalog, uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cfg, w.policy, w.catalog, w.gen
}

// setPolicy applies a workspace-default policy patch; nothing changes when it
// does not apply.
func (w *workspace) setPolicy(patch json.RawMessage) (config.Policy, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	pol, err := config.ApplyJSON(w.policy, patch)
	if err != nil {
		return config.Policy{}, err
	}
	w.patches = append(w.patches, patch)
	w.policy = pol
	w.gen++
	return pol, nil
}

// store opens the workspace store on first use: storage.dir, or
// <workspace>/.vtcode/sessions. A folder inside the workspace is opened
// through the workspace (store.OpenIn): none of its folders may be a
// symlink, so a link committed in a repository cannot move the store. A
// storage.dir set by the workspace's own configuration file must be inside
// the workspace; only the user's configuration may put it elsewhere.
func (w *workspace) store() (*store.Store, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.st != nil {
		return w.st, nil
	}
	w.m.mu.Lock()
	so := store.Options{Logger: w.m.logger, Faults: w.m.storeFaults}
	w.m.mu.Unlock()
	dir := w.cfg.Storage.Dir
	if dir == "" {
		dir = config.DefaultStorageDir(w.root)
	} else if !filepath.IsAbs(dir) {
		dir = filepath.Join(w.root, dir)
	}
	var (
		st  *store.Store
		err error
	)
	rel, rerr := filepath.Rel(w.root, filepath.Clean(dir))
	switch {
	case rerr == nil && filepath.IsLocal(rel):
		st, err = store.OpenIn(w.root, rel, so)
	case w.cfg.Storage.DirFromWorkspace:
		return nil, fmt.Errorf("workspace %s: storage.dir %s, set by the workspace's configuration file, is outside the workspace: "+
			"a workspace file may only name a folder inside it (set it in the user configuration instead)", w.root, dir)
	default:
		st, err = store.Open(dir, so)
	}
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", w.root, err)
	}
	w.st = st
	return st, nil
}

// compactPrompt returns the workspace's compaction prompt and whether it is
// the default. It reads the store at each call, so a prompt another daemon
// on the same workspace set applies at once.
func (w *workspace) compactPrompt() (string, bool, error) {
	st, err := w.store()
	if err != nil {
		return "", false, err
	}
	p, ok, err := st.ReadPrompt()
	if err != nil {
		return "", false, err
	}
	if !ok || p == "" {
		return compaction.DefaultPrompt, true, nil
	}
	return p, false, nil
}

// setCompactPrompt persists a custom prompt; "" resets to the default.
func (w *workspace) setCompactPrompt(p string) error {
	st, err := w.store()
	if err != nil {
		return err
	}
	if p == "" {
		return st.ResetPrompt()
	}
	return st.WritePrompt(p)
}

// close stops watching the configuration and releases the store's folder.
func (w *workspace) close() {
	w.mu.Lock()
	stop := w.unwatch
	w.unwatch = nil
	st := w.st
	w.st = nil
	w.mu.Unlock()
	if stop != nil {
		stop()
	}
	if st != nil {
		st.Close()
	}
}

// refreshAll recomputes the stats of every open session of w in the
// background and reports their token pressure (after a workspace policy or
// configuration change). Nothing starts once the Manager is closing.
func (m *Manager) refreshAll(w *workspace) {
	m.mu.Lock()
	var open []*Session
	for _, s := range m.sessions {
		if s.ws == w {
			open = append(open, s)
		}
	}
	m.mu.Unlock()
	for _, s := range open {
		m.later(s, func(s *Session) { s.notifyPressure(s.refreshStats()) })
	}
}

// later runs fn in a turn of s of its own, in the background; nothing
// starts once the Manager is closing, and nothing runs once s is closed.
// It does not block, so that work outside the session's turns (a pass 1)
// can hand the session its results.
func (m *Manager) later(s *Session, fn func(s *Session)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	m.bg.Go(func() {
		_ = s.do(context.Background(), func(ctx context.Context, s *Session) error {
			fn(s)
			return nil
		})
	})
}

// reportIgnored shows the keys a workspace file set but may not set (an
// endpoint, a credential variable, a storage folder outside the workspace):
// they were ignored, the rest of the file applies.
func (m *Manager) reportIgnored(root string, cfg config.Config) {
	for _, w := range cfg.Warnings {
		m.notifyShow(LevelWarning, "vtcode-ls: "+bound(w.Error(), 900))
		m.logger.Warn("session: configuration key ignored", "workspace", root, "warning", w.Error())
	}
}

func (m *Manager) notifyShow(level int, text string) {
	if m.o.Notifier != nil {
		m.o.Notifier.ShowMessage(level, text)
	}
}

func (m *Manager) notifyLog(level int, text string) {
	if m.o.Notifier != nil {
		m.o.Notifier.LogMessage(level, text)
	}
}
