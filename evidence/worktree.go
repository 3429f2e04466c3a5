package evidence

import (
	"regexp"
	"strings"
)

// Dirty is a path git reported as not committed: modified, added, deleted
// or untracked, in the output of the last git status no later commit
// covered.
type Dirty struct {
	Path  string
	State string // "modified", "new file", "deleted", "renamed", "untracked", …
}

// Worktree is what git itself said of the uncommitted work after the last
// commit: the paths of the last git status that no later commit took, and
// the summary line of the last git diff --stat.
type Worktree struct {
	Dirty    []Dirty
	StatusAt int    // message index of that git status, -1 when none
	DiffStat string // "55 files changed, 10313 insertions(+), …", "" when none
	DiffAt   int    // message index of that git diff --stat, -1 when none
}

var (
	// statusLongRE matches a path line of git status's long format.
	statusLongRE = regexp.MustCompile(`^\t(modified|new file|deleted|renamed|copied|typechange|both modified|both added|deleted by us|deleted by them|added by us|added by them):\s+(.+)$`)
	// statusShortRE matches a line of git status --short / --porcelain.
	statusShortRE = regexp.MustCompile(`^([ MADRCU?!])([ MADRCU?!]) (\S.*)$`)
)

// statusOf reads the paths a git status output shows, and whether the
// output is a status at all (a clean tree is a status with no path).
func statusOf(out string, short bool) ([]Dirty, bool) {
	var ds []Dirty
	seen := false
	untracked := false
	for _, l := range strings.Split(HeadBytes(out, maxScan), "\n") {
		l = strings.TrimRight(l, "\r")
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "On branch ") || strings.HasPrefix(t, "HEAD detached") || strings.HasPrefix(t, "nothing to commit") || strings.HasPrefix(t, "Changes not staged") || strings.HasPrefix(t, "Changes to be committed"):
			seen = true
			untracked = false
		case strings.HasPrefix(t, "Untracked files:"):
			seen, untracked = true, true
		case strings.HasPrefix(t, "no changes added") || strings.HasPrefix(t, "nothing added to commit"):
			untracked = false
		}
		if m := statusLongRE.FindStringSubmatch(l); m != nil {
			p := m[2]
			if _, to, ok := strings.Cut(p, " -> "); ok {
				p = to
			}
			ds = append(ds, Dirty{Path: strings.TrimSpace(p), State: m[1]})
			continue
		}
		if untracked && strings.HasPrefix(l, "\t") && t != "" {
			ds = append(ds, Dirty{Path: t, State: "untracked"})
			continue
		}
		if short {
			// git never prints a blank XY: such a line is other output
			// (a numbered listing) on the same command line.
			if m := statusShortRE.FindStringSubmatch(l); m != nil && m[1]+m[2] != "  " {
				seen = true
				p := m[3]
				if _, to, ok := strings.Cut(p, " -> "); ok {
					p = to
				}
				ds = append(ds, Dirty{Path: strings.Trim(p, `"`), State: shortState(m[1] + m[2])})
			}
		}
	}
	return ds, seen || len(ds) > 0
}

func shortState(xy string) string {
	switch {
	case xy == "??":
		return "untracked"
	case strings.Contains(xy, "D"):
		return "deleted"
	case strings.Contains(xy, "A"):
		return "new file"
	case strings.Contains(xy, "R"):
		return "renamed"
	}
	return "modified"
}

// worktree follows what git says of the working tree: a git status sets the
// uncommitted paths, git add stages some of them, a commit takes what was
// staged (all tracked paths with -a, everything after git add -A or .),
// git stash, restore and checkout -- put paths back.
func (x *extractor) worktree(a *Action) {
	w := &x.r.Worktree
	committed := a.HasResult() && len(commitsIn(HeadBytes(a.Output, maxScan), false)) > 0 || a.HasResult() && !a.Flagged && (!a.HasExit || a.Exit == 0)
	for _, seg := range segments(a.Command) {
		ws := shellWords(seg)
		if len(ws) >= 4 && ws[0] == "git" && ws[1] == "-C" {
			ws = append([]string{"git"}, ws[3:]...)
		}
		if len(ws) < 2 || ws[0] != "git" || !a.HasResult() {
			continue
		}
		args := ws[2:]
		x.branch(ws[1], args, a)
		switch ws[1] {
		case "status":
			short := false
			for _, f := range args {
				if f == "-s" || f == "--short" || strings.HasPrefix(f, "--porcelain") {
					short = true
				}
			}
			if ds, ok := statusOf(a.Output, short); ok {
				w.Dirty, w.StatusAt = ds, a.Index
				x.staged, x.stagedAll = map[string]bool{}, false
			}
		case "diff":
			if hasWord(args, "--stat") || hasWord(args, "--shortstat") {
				lines := nonEmptyLines(TailBytes(a.Output, 4096))
				for i := len(lines) - 1; i >= 0; i-- {
					if commitStatRE.MatchString(lines[i]) {
						w.DiffStat, w.DiffAt = strings.TrimSpace(lines[i]), a.Index
						break
					}
				}
			}
		case "add":
			for _, p := range args {
				switch {
				case p == "-A" || p == "--all" || p == "." || p == ":/":
					x.stagedAll = true
				case p == "-u" || p == "--update":
					x.stagedTracked = true
				case !strings.HasPrefix(p, "-"):
					x.staged[strings.TrimPrefix(p, "./")] = true
				}
			}
		case "commit":
			if !committed {
				continue
			}
			all := x.stagedAll
			tracked := x.stagedTracked || hasWord(args, "-a") || hasWord(args, "--all") || hasShortFlag(args, 'a')
			w.Dirty = keepDirty(w.Dirty, func(d Dirty) bool {
				return !(all || tracked && d.State != "untracked" || x.stagedCovers(d.Path))
			})
			x.staged, x.stagedAll, x.stagedTracked = map[string]bool{}, false, false
			w.DiffStat, w.DiffAt = "", -1
		case "stash":
			if len(args) == 0 || args[0] == "push" || args[0] == "save" {
				w.Dirty = keepDirty(w.Dirty, func(d Dirty) bool { return d.State == "untracked" && !hasWord(args, "-u") })
			}
		case "restore", "checkout":
			if i := indexOf(args, "--"); i >= 0 || ws[1] == "restore" {
				paths := args
				if i >= 0 {
					paths = args[i+1:]
				}
				drop := map[string]bool{}
				for _, p := range paths {
					if !strings.HasPrefix(p, "-") {
						drop[strings.TrimPrefix(p, "./")] = true
					}
				}
				w.Dirty = keepDirty(w.Dirty, func(d Dirty) bool { return !drop[d.Path] && !drop["."] })
			}
		}
	}
}

// stagedCovers reports whether git add named p or a folder of it.
func (x *extractor) stagedCovers(p string) bool {
	for s := range x.staged {
		if s == p || strings.HasPrefix(p, strings.TrimSuffix(s, "/")+"/") {
			return true
		}
	}
	return false
}

func keepDirty(ds []Dirty, keep func(Dirty) bool) []Dirty {
	var out []Dirty
	for _, d := range ds {
		if keep(d) {
			out = append(out, d)
		}
	}
	return out
}

func hasWord(ws []string, w string) bool { return indexOf(ws, w) >= 0 }

func indexOf(ws []string, w string) int {
	for i, x := range ws {
		if x == w {
			return i
		}
	}
	return -1
}

// hasShortFlag reports whether a cluster of short flags ("-am") holds c.
func hasShortFlag(ws []string, c byte) bool {
	for _, w := range ws {
		if len(w) > 1 && w[0] == '-' && w[1] != '-' && strings.IndexByte(w[1:], c) >= 0 {
			return true
		}
	}
	return false
}

var (
	// onBranchRE matches git status's first line.
	onBranchRE = regexp.MustCompile(`(?m)^On branch (\S+)`)
	// switchedRE matches git checkout's and git switch's report.
	switchedRE = regexp.MustCompile(`Switched to (?:a new )?branch '([^']+)'`)
)

// branch follows the branch the work is on: one created or switched to by a
// command that succeeded (checkout, switch, worktree add -b), the one git status or a commit report names.
func (x *extractor) branch(sub string, args []string, a *Action) {
	ok := !a.Flagged && (!a.HasExit || a.Exit == 0)
	out := HeadBytes(a.Output, maxScan)
	switch sub {
	case "checkout", "switch":
		for i, f := range args {
			if (f == "-b" || f == "-B" || f == "-c" || f == "-C") && i+1 < len(args) && ok {
				x.r.Final.Branch = args[i+1]
				return
			}
		}
		if m := switchedRE.FindStringSubmatch(out); m != nil {
			x.r.Final.Branch = m[1]
		}
	case "worktree":
		// git worktree add <path> -b <branch>: the branch made for the work,
		// checked out in the new worktree.
		if len(args) == 0 || args[0] != "add" || !ok {
			return
		}
		for i, f := range args {
			if (f == "-b" || f == "-B") && i+1 < len(args) {
				x.r.Final.Branch = args[i+1]
				return
			}
		}
	case "status":
		if m := onBranchRE.FindStringSubmatch(out); m != nil {
			x.r.Final.Branch = m[1]
		}
	case "commit":
		if m := commitBranchRE.FindStringSubmatch(out); m != nil {
			x.r.Final.Branch = m[1]
		}
	}
}

// commitBranchRE matches the branch of git's commit report "[main
// 1a2b3c4] msg" ("[main (root-commit) 1a2b3c4] msg").
var commitBranchRE = regexp.MustCompile(`(?m)^\s*\[([^\]\s]+)(?: \([^)]*\))? [0-9a-f]{7,40}\] `)

// endsInCommit reports whether the last command of a command line is git
// commit: then git's report of the commit is the line's outcome.
func endsInCommit(cmd string) bool {
	segs := segments(cmd)
	if len(segs) == 0 {
		return false
	}
	w := shellWords(segs[len(segs)-1])
	if len(w) >= 4 && w[0] == "git" && w[1] == "-C" {
		w = append([]string{"git"}, w[3:]...)
	}
	return len(w) >= 2 && w[0] == "git" && w[1] == "commit"
}
