package main

import (
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
)

// commit is the commit the program was built from; release builds set it
// with -ldflags "-X main.commit=<sha>". When empty, the VCS stamp of the
// build is used (go build in a checkout), else the revision a Go
// pseudo-version names (go install of an untagged commit).
var commit = ""

// buildLine is what `vtcode-ls version` prints: the version, the commit
// (with its date, and "modified" for a build of a changed checkout) and
// the Go version and platform it was built with, e.g.
//
//	vtcode-ls v0.4.0 (commit 1f2e3d4c5b6a, 2026-12-01, go1.26.8 linux/amd64)
func buildLine() string {
	bi, _ := debug.ReadBuildInfo()
	return describeBuild(versionString(), commit, bi, runtime.GOOS+"/"+runtime.GOARCH)
}

// pseudoRev matches the revision at the end of a Go pseudo-version
// (v0.0.0-20261201200000-1f2e3d4c5b6a).
var pseudoRev = regexp.MustCompile(`[.-](\d{14})-([0-9a-f]{12})(\+incompatible)?$`)

// describeBuild formats a build description from the link-time version and
// commit and the build information (nil when there is none).
func describeBuild(version, commit string, bi *debug.BuildInfo, platform string) string {
	var date, goVersion string
	modified := false
	if bi != nil {
		goVersion = bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if commit == "" {
					commit = s.Value
				}
			case "vcs.time":
				date, _, _ = strings.Cut(s.Value, "T")
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if m := pseudoRev.FindStringSubmatch(bi.Main.Version); commit == "" && m != nil {
			commit = m[2]
			date = m[1][:4] + "-" + m[1][4:6] + "-" + m[1][6:8]
		}
	}
	if goVersion == "" {
		goVersion = runtime.Version()
	}
	var parts []string
	if commit != "" {
		c := "commit " + commit[:min(len(commit), 12)]
		if date != "" {
			c += ", " + date
		}
		if modified {
			c += ", modified"
		}
		parts = append(parts, c)
	} else {
		parts = append(parts, "commit unknown")
	}
	parts = append(parts, goVersion+" "+platform)
	return "vtcode-ls " + version + " (" + strings.Join(parts, ", ") + ")"
}
