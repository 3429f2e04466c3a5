package session

import "time"

// OnEnqueue installs a hook called each time a call starts waiting in the
// queue of session id (tests only).
func OnEnqueue(m *Manager, id string, hook func()) {
	m.order.mu.Lock()
	defer m.order.mu.Unlock()
	if m.order.hooks == nil {
		m.order.hooks = map[string]func(){}
	}
	m.order.hooks[id] = hook
}

// SetPassOneWait changes how long a compaction waits for a background pass
// 1 (tests only); it returns a func restoring the old value.
func SetPassOneWait(d time.Duration) func() {
	old := passOneWait
	passOneWait = d
	return func() { passOneWait = old }
}
