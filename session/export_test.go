package session

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

// WaitPassOne waits until no pass 1 of open session id runs (tests only).
func WaitPassOne(m *Manager, id string) {
	if s, err := m.session(id); err == nil {
		s.twoPass.Wait()
	}
}
