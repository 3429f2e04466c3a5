package session

import "github.com/vtcode/vtcode-ls/store"

// SetStoreFaults makes every store the Manager opens from now on call f
// before each of its file operations (tests only: see store.Options.Faults).
func SetStoreFaults(m *Manager, f func(op store.Op, name string) error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.storeFaults = f
}
