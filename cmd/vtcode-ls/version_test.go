package main

import (
	"runtime/debug"
	"testing"
)

// The version line says which build a user runs, however it was built.
func TestDescribeBuild(t *testing.T) {
	stamped := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "1f2e3d4c5b6a7988776655443322110099aabbcc"},
		{Key: "vcs.time", Value: "2026-12-01T20:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}}
	for _, tc := range []struct {
		name, version, commit string
		bi                    *debug.BuildInfo
		want                  string
	}{
		{"make release: version and commit from -ldflags", "v0.4.0", "abcdef0123456789abcdef", &debug.BuildInfo{GoVersion: "go1.26.8"},
			"vtcode-ls v0.4.0 (commit abcdef012345, go1.26.8 linux/amd64)"},
		{"go build in a changed checkout: the VCS stamp", "dev", "", stamped,
			"vtcode-ls dev (commit 1f2e3d4c5b6a, 2026-12-01, modified, go1.26.8 linux/amd64)"},
		{"-ldflags commit wins over the stamp", "v0.4.0", "0011223344556677", stamped,
			"vtcode-ls v0.4.0 (commit 001122334455, 2026-12-01, modified, go1.26.8 linux/amd64)"},
		{"go install @commit: the pseudo-version's revision", "v0.0.0-20261201200000-1f2e3d4c5b6a", "",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261201200000-1f2e3d4c5b6a"}},
			"vtcode-ls v0.0.0-20261201200000-1f2e3d4c5b6a (commit 1f2e3d4c5b6a, 2026-12-01, go1.26.8 linux/amd64)"},
		{"go install @v0.4.1: a tag, no commit known", "v0.4.1", "",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.4.1"}},
			"vtcode-ls v0.4.1 (commit unknown, go1.26.8 linux/amd64)"},
	} {
		if got := describeBuild(tc.version, tc.commit, tc.bi, "linux/amd64"); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
