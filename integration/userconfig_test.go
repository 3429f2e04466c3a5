package integration_test

import (
	"os"
	"path/filepath"
	"testing"
)

// userConfig writes toml as the user configuration file
// ($XDG_CONFIG_HOME/vtcode/vtcode.toml) of a daemon and returns the
// environment entry that selects it. Endpoints and credential variables are
// read only from there, never from a workspace file.
func userConfig(tb testing.TB, toml string) string {
	tb.Helper()
	dir := tb.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "vtcode"), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "vtcode", "vtcode.toml"), []byte(toml), 0o600); err != nil {
		tb.Fatal(err)
	}
	return "XDG_CONFIG_HOME=" + dir
}
