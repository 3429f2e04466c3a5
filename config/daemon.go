package config

import (
	"strings"
	"time"
)

// Daemon is the [daemon] table of the user configuration: the user's
// shared daemon (package daemon). A workspace file may not set it.
type Daemon struct {
	// Idle is how long the daemon runs after its last client and its last
	// proxied request ("3m"); 0: not configured (the default applies),
	// negative: never idle ("0" or a negative duration in the file).
	Idle time.Duration
}

// decodeDaemon applies the [daemon] table of raw to dm.
func (d *decoder) decodeDaemon(raw map[string]any, dm *Daemon) {
	t := tableAt(raw, "daemon")
	if t == nil {
		return
	}
	key := []string{"daemon"}
	if _, ok := t["idle"]; !ok || !d.allowed("daemon.idle", sub(key, "idle")) {
		return
	}
	s, ok := d.str(t, key, "idle", -1, ruleString)
	if !ok {
		return
	}
	v, err := time.ParseDuration(strings.TrimSpace(*s))
	if err != nil {
		d.fail(sub(key, "idle"), -1, `must be a duration ("3m", "90s"; "0": never idle)`)
		return
	}
	if v <= 0 {
		v = -1
	}
	dm.Idle = v
}
