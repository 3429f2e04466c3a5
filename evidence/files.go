package evidence

import (
	"path"
	"regexp"
	"strings"
)

// pathKeys and pathLists are the argument names tools take file paths in.
var (
	pathKeys  = []string{"path", "file_path", "filepath", "filePath", "filename", "file", "target_file", "targetFile", "notebook_path", "absolute_path", "relative_path", "source", "destination", "new_path", "old_path"}
	pathLists = []string{"paths", "files", "file_paths", "filePaths"}
)

// fileChange is one change found in a command or a patch.
type fileChange struct {
	path, from string
	op         Op
	where      []string
}

// files records the files an action changed or read.
func (x *extractor) files(ai int, a *Action) {
	var changes []fileChange
	var reads []string
	switch {
	case a.Command != "":
		changes = shellChanges(a.Command)
		if isLineEdit(a.Command) && x.openFile != "" {
			changes = append(changes, fileChange{path: x.openFile, op: Modified})
		}
		if len(changes) == 0 {
			reads = shellReads(a.Command)
		}
		changes = append(changes, patchChanges(a.Command)...)
		changes = append(changes, scriptPatchChanges(a)...)
	case isCommandTool(a.Tool) && isCodeModeScript(a.Input):
		changes = scriptPatchChanges(a) // a script that runs no shell
	case isSubAgent(a):
		// A sub-agent's writes are the session's: its report (the call's
		// result) is all the record keeps of them.
		if a.HasResult() {
			changes = subAgentChanges(a.Output)
		}
	default:
		op, changes0 := toolOp(a)
		for _, p := range toolPaths(a) {
			if op == "" {
				reads = append(reads, p)
			} else {
				changes = append(changes, fileChange{path: p, op: op})
			}
		}
		changes = append(changes, changes0...)
	}
	// Relative paths are relative to the folder the call ran in, where
	// the record shows it (a leading "cd DIR &&" inside it).
	base := a.Dir
	if wd := WorkDir(a.Command); wd != "" {
		if strings.HasPrefix(wd, "/") || base == "" {
			base = wd
		} else {
			base = path.Join(base, wd)
		}
	}
	resolve := func(p string) string {
		if base == "" || !strings.HasPrefix(base, "/") || p == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || strings.HasPrefix(p, "$") {
			return p
		}
		return path.Join(base, p)
	}
	for i := range changes {
		if p := strings.TrimPrefix(strings.Trim(changes[i].path, `"'`), "./"); changes[i].op == Deleted && strings.ContainsAny(p, "*?[") {
			changes[i].path = resolve(p) // a glob, expanded below
			continue
		}
		changes[i].path = resolve(cleanPath(changes[i].path))
		if changes[i].from != "" {
			changes[i].from = resolve(cleanPath(changes[i].from))
		}
	}
	for i := range reads {
		reads[i] = resolve(cleanPath(reads[i]))
	}
	changes = x.expandGlobs(changes)
	for _, c := range changes {
		ch := Change{Path: cleanPath(c.path), Op: c.op, From: cleanPath(c.from), Index: a.Index, Action: ai, Via: a.Tool, Where: c.where}
		if ch.Path == "" {
			continue
		}
		if a.Rejected || !a.HasResult() {
			if a.Rejected {
				x.r.Rejected = append(x.r.Rejected, ch)
			}
			continue
		}
		x.r.Changes = append(x.r.Changes, ch)
		x.changed[ch.Path] = true
	}
	for _, p := range reads {
		x.noteRead(p)
	}
}

// expandGlobs replaces a deletion of a glob ("rm -f test_*.py") by the
// deletions of the files the record knows that it matches (by the same
// number of trailing path elements); the record cannot name the files of a
// glob that matches none.
func (x *extractor) expandGlobs(changes []fileChange) []fileChange {
	var out []fileChange
	for _, c := range changes {
		p := strings.TrimPrefix(strings.Trim(c.path, `"'`), "./")
		if c.op != Deleted || !strings.ContainsAny(p, "*?[") {
			out = append(out, c)
			continue
		}
		n := strings.Count(p, "/") + 1
		known := append(append([]string(nil), x.readOrd...), x.changedOrder()...)
		seen := map[string]bool{}
		for _, k := range known {
			parts := strings.Split(k, "/")
			if len(parts) < n || seen[k] {
				continue
			}
			tail := strings.Join(parts[len(parts)-n:], "/")
			if ok, err := path.Match(p, tail); err == nil && ok && (n == len(parts) || !strings.HasPrefix(p, "/")) {
				seen[k] = true
				out = append(out, fileChange{path: k, op: Deleted})
			}
		}
	}
	return out
}

// changedOrder returns the changed paths in first-change order.
func (x *extractor) changedOrder() []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range x.r.Changes {
		if !seen[c.Path] {
			seen[c.Path] = true
			out = append(out, c.Path)
		}
	}
	return out
}

func (x *extractor) noteRead(p string) {
	p = cleanPath(p)
	if p == "" || x.read[p] {
		return
	}
	x.read[p] = true
	x.readOrd = append(x.readOrd, p)
}

// scriptPatchChanges returns the changes of the patches a code-mode script
// applies (codeModePatches), none for another action.
func scriptPatchChanges(a *Action) []fileChange {
	if !isCommandTool(a.Tool) || !isCodeModeScript(a.Input) {
		return nil
	}
	var out []fileChange
	for _, p := range codeModePatches(a.Input) {
		out = append(out, patchChanges(p)...)
	}
	return out
}

// toolOp classifies an editor tool call: the op for its path arguments ("" for
// a read), and the changes its patch input shows.
func toolOp(a *Action) (Op, []fileChange) {
	var patch string
	for _, k := range []string{"input", "patch", "patchText", "patch_text", "diff"} {
		if s, ok := a.Args[k].(string); ok && patch == "" {
			patch = s
		}
	}
	if patch == "" {
		patch = a.Input
	}
	changes := patchChanges(patch)
	name := strings.ToLower(a.Tool)
	if sub, ok := a.Args["command"].(string); ok {
		switch sub {
		case "view", "read", "show":
			return "", changes
		case "create":
			return Created, changes
		case "str_replace", "insert", "undo_edit", "replace", "edit", "append":
			return Modified, changes
		case "delete", "remove":
			return Deleted, changes
		}
	}
	switch {
	case !isEditTool(name):
		return "", changes
	case containsAny(name, "delete", "remove", "unlink"):
		return Deleted, changes
	case containsAny(name, "create", "write", "new_file", "add_file"):
		if _, hasOld := a.Args["old_string"]; hasOld {
			return Modified, changes
		}
		return Created, changes
	}
	if len(changes) > 0 && len(toolPaths(a)) == 0 {
		return "", changes
	}
	return Modified, changes
}

func toolPaths(a *Action) []string {
	var out []string
	for _, k := range pathKeys {
		if s, ok := a.Args[k].(string); ok && looksLikePath(s) {
			out = append(out, s)
		}
	}
	for _, k := range pathLists {
		if xs, ok := a.Args[k].([]any); ok {
			for _, e := range xs {
				if s, ok := e.(string); ok && looksLikePath(s) {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

func looksLikePath(s string) bool {
	s = strings.TrimSpace(s)
	return s != "" && len(s) < 400 && !strings.ContainsAny(s, "\n\t*?<>|\"")
}

func cleanPath(p string) string {
	p = strings.TrimSpace(p)
	p = strings.Trim(p, `"'`+"`")
	p = strings.TrimPrefix(p, "./")
	if !looksLikePath(p) || p == "/dev/null" || strings.HasPrefix(p, "/dev/") || strings.HasPrefix(p, "&") || strings.HasPrefix(p, "$") || strings.HasPrefix(p, "-") {
		return ""
	}
	return p
}

// hunkIdentRE finds the name a hunk's context line declares or calls.
var hunkIdentRE = regexp.MustCompile(`([A-Za-z_$][\w$]*)\s*(?:=\s*(?:async\s*)?(?:function\b|\()|\()`)

// hunkName returns the code a patch hunk header names: "@@ -1,2 +1,3 @@
// func Parse(" and "@@ export const handleLocal = async (" name Parse and
// handleLocal; "" when the header names nothing.
func hunkName(line string) string {
	ctx := strings.TrimPrefix(line, "@@")
	if i := strings.Index(ctx, "@@"); i >= 0 {
		ctx = ctx[i+2:]
	}
	ctx = strings.TrimSpace(ctx)
	if ctx == "" {
		return ""
	}
	if m := hunkIdentRE.FindStringSubmatch(ctx); m != nil {
		switch m[1] {
		case "if", "for", "while", "switch", "return", "catch", "function":
		default:
			return m[1]
		}
	}
	return clip(ctx, 60)
}

func containsString(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// patchChanges reads the files of a patch: an apply_patch envelope ("***
// Update File: p", "*** Add File: p", "*** Delete File: p", "*** Move to: q")
// or a unified diff ("+++ b/p").
func patchChanges(patch string) []fileChange {
	if len(patch) > 4*maxScan {
		patch = HeadBytes(patch, 4*maxScan)
	}
	if !strings.Contains(patch, "*** ") && !strings.Contains(patch, "+++ ") {
		return nil
	}
	var out []fileChange
	bareHunk := false
	for _, line := range strings.Split(patch, "\n") {
		line = strings.TrimRight(line, "\r")
		if (strings.HasPrefix(line, "@@") || bareHunk && strings.HasPrefix(line, " ")) && len(out) > 0 {
			ctx := line
			if bareHunk {
				ctx = "@@ " + line
			}
			w := hunkName(ctx)
			bareHunk = w == "" && !bareHunk // a bare "@@": its first context line names the code
			if w != "" {
				last := &out[len(out)-1]
				if len(last.where) < 8 && !containsString(last.where, w) {
					last.where = append(last.where, w)
				}
			}
			continue
		}
		bareHunk = false
		switch {
		case strings.HasPrefix(line, "*** Update File: "):
			out = append(out, fileChange{path: line[len("*** Update File: "):], op: Modified})
		case strings.HasPrefix(line, "*** Add File: "):
			out = append(out, fileChange{path: line[len("*** Add File: "):], op: Created})
		case strings.HasPrefix(line, "*** Delete File: "):
			out = append(out, fileChange{path: line[len("*** Delete File: "):], op: Deleted})
		case strings.HasPrefix(line, "*** Move to: ") && len(out) > 0:
			prev := out[len(out)-1]
			out[len(out)-1] = fileChange{path: line[len("*** Move to: "):], from: prev.path, op: Moved}
		case strings.HasPrefix(line, "+++ b/"):
			out = append(out, fileChange{path: line[len("+++ b/"):], op: Modified})
		case strings.HasPrefix(line, "+++ ") && !strings.HasPrefix(line, "+++ /dev/null"):
			f := strings.Fields(line[4:])
			if len(f) > 0 {
				out = append(out, fileChange{path: f[0], op: Modified})
			}
		}
	}
	return out
}

var (
	// heredocRE matches a heredoc that writes its body to a file:
	// `cat > f <<EOF`, `cat <<'EOF' > f`, `tee f <<EOF`, `cat >> f <<EOF`.
	heredocRE = regexp.MustCompile(`(?m)\b(?:cat|tee(?:\s+-a)?)\s*(?:(>>?)\s*(\S+)\s*<<-?\s*['"]?\w+['"]?|<<-?\s*['"]?\w+['"]?\s*(>>?)\s*(\S+)|(\S+)\s*<<-?\s*['"]?\w+['"]?)`)
	// pyWriteRE matches Python code that opens a file for writing or writes
	// it through pathlib.
	pyWriteRE = regexp.MustCompile(`(?:open|Path)\(\s*(?:r|f)?['"]([^'"\n]+)['"]\s*(?:,\s*(?:mode\s*=\s*)?['"]([wax])b?\+?['"])?\s*\)(\.write_(?:text|bytes))?`)
)

// shellChanges reads the files a shell command changes.
func shellChanges(cmd string) []fileChange {
	if len(cmd) > 2*maxScan {
		// A huge command is a script or a heredoc body: its opening lines
		// and its end say what it writes.
		cmd = HeadBytes(cmd, maxScan) + "\n" + TailBytes(cmd, maxScan)
	}
	var out []fileChange
	heredocBodies := heredocSpans(cmd)
	for _, m := range heredocRE.FindAllStringSubmatch(cmd, -1) {
		p, op := m[2], Created
		if m[1] == ">>" || m[3] == ">>" || strings.Contains(m[0], "tee -a") {
			op = Modified
		}
		if p == "" {
			p = m[4]
		}
		if p == "" {
			p = m[5]
		}
		out = append(out, fileChange{path: p, op: op})
	}
	if strings.Contains(cmd, "python") || strings.Contains(cmd, "open(") {
		for _, m := range pyWriteRE.FindAllStringSubmatch(cmd, -1) {
			if m[2] != "" || m[3] != "" {
				out = append(out, fileChange{path: m[1], op: Modified})
			}
		}
	}
	for _, seg := range segments(stripSpans(cmd, heredocBodies)) {
		words, redirs := shellSplit(seg)
		if len(words) == 0 {
			continue
		}
		if !((words[0] == "cat" || words[0] == "tee") && strings.Contains(seg, "<<")) { // a heredoc is counted above
			for _, r := range redirs {
				out = append(out, fileChange{path: r, op: Modified})
			}
		}
		out = append(out, commandChanges(words)...)
	}
	return out
}

// commandChanges reads one simple command: sed -i, git mv/rm/checkout/restore,
// mv, cp, rm, touch, tee.
func commandChanges(w []string) []fileChange {
	for len(w) > 0 && (strings.Contains(w[0], "=") || w[0] == "sudo" || w[0] == "command" || w[0] == "env") {
		w = w[1:]
	}
	if len(w) == 0 {
		return nil
	}
	args := func(from int) []string {
		var out []string
		for _, a := range w[from:] {
			if !strings.HasPrefix(a, "-") {
				out = append(out, a)
			}
		}
		return out
	}
	var out []fileChange
	switch w[0] {
	case "sed", "perl":
		inPlace, script := false, false
		var files []string
		for i := 1; i < len(w); i++ {
			a := w[i]
			switch {
			case a == "-i" || strings.HasPrefix(a, "-i") || a == "--in-place" || strings.HasPrefix(a, "--in-place=") || (w[0] == "perl" && strings.Contains(a, "i") && strings.HasPrefix(a, "-")):
				inPlace = true
			case a == "-e" || a == "-f" || a == "--expression":
				script = true
				i++
			case strings.HasPrefix(a, "-"):
			case !script:
				script = true
			default:
				files = append(files, a)
			}
		}
		if inPlace {
			for _, f := range files {
				out = append(out, fileChange{path: f, op: Modified})
			}
		}
	case "git":
		if len(w) < 2 {
			return nil
		}
		switch w[1] {
		case "mv":
			if a := args(2); len(a) == 2 {
				out = append(out, fileChange{path: a[1], from: a[0], op: Moved})
			}
		case "rm":
			for _, a := range args(2) {
				out = append(out, fileChange{path: a, op: Deleted})
			}
		case "checkout", "restore":
			a := w[2:]
			for i, x := range a {
				if x == "--" {
					for _, p := range a[i+1:] {
						out = append(out, fileChange{path: p, op: Reverted})
					}
					return out
				}
			}
			for _, p := range args(2) {
				if strings.Contains(p, ".") && strings.ContainsAny(p, "./") && !strings.HasPrefix(p, "origin") && looksLikeFile(p) {
					out = append(out, fileChange{path: p, op: Reverted})
				}
			}
		}
	case "mv":
		if a := args(1); len(a) == 2 {
			out = append(out, fileChange{path: a[1], from: a[0], op: Moved})
		}
	case "cp":
		if a := args(1); len(a) == 2 {
			out = append(out, fileChange{path: a[1], op: Created})
		}
	case "rm", "unlink":
		for _, a := range args(1) {
			out = append(out, fileChange{path: a, op: Deleted})
		}
	case "touch":
		for _, a := range args(1) {
			out = append(out, fileChange{path: a, op: Created})
		}
	case "tee":
		for _, a := range args(1) {
			out = append(out, fileChange{path: a, op: Modified})
		}
	case "create": // an editor interface's command
		if a := args(1); len(a) == 1 {
			out = append(out, fileChange{path: a[0], op: Created})
		}
	}
	return out
}

// looksLikeFile reports whether a word names a file (it has an extension
// or a folder).
func looksLikeFile(p string) bool {
	base := p[strings.LastIndex(p, "/")+1:]
	return strings.Contains(base, ".") && !strings.HasSuffix(base, ".")
}

// lineEditRE matches an editor interface's line-range edit command ("edit
// 287:295"), which changes the file the interface has open.
var lineEditRE = regexp.MustCompile(`^(edit|insert|append)\s+\d+(:\d+)?\b`)

func isLineEdit(cmd string) bool { return lineEditRE.MatchString(strings.TrimSpace(cmd)) }

// openFileRE matches an editor interface's report of the open file:
// "(Open file: /p)" or "[File: /p (12 lines total)]".
var openFileRE = regexp.MustCompile(`(?m)(?:^\(Open file: ([^)\n]+)\)|^\[File: (\S+) \(\d+ lines total\)\])`)

func (x *extractor) noteOpenFile(obs string) {
	all := openFileRE.FindAllStringSubmatch(TailBytes(obs, 4096), -1)
	if len(all) == 0 {
		all = openFileRE.FindAllStringSubmatch(HeadBytes(obs, 4096), -1)
	}
	if len(all) == 0 {
		return
	}
	m := all[len(all)-1]
	p := m[1]
	if p == "" {
		p = m[2]
	}
	if p = strings.TrimSpace(p); p != "" && p != "n/a" {
		x.openFile = p
	}
}

// shellReadCmds are commands whose file arguments are read.
var shellReadCmds = map[string]bool{"cat": true, "head": true, "tail": true, "less": true, "more": true, "nl": true, "sed": true, "open": true, "view": true, "bat": true, "wc": true}

// shellReads returns the files a read-only shell command reads.
func shellReads(cmd string) []string {
	var out []string
	cmd = HeadBytes(cmd, maxScan)
	for _, seg := range segments(cmd) {
		w := shellWords(seg)
		if len(w) < 2 || !shellReadCmds[w[0]] {
			continue
		}
		skipScript := w[0] == "sed"
		for _, a := range w[1:] {
			if strings.HasPrefix(a, "-") {
				continue
			}
			if skipScript {
				skipScript = false
				continue
			}
			if looksLikeFile(a) {
				out = append(out, a)
			}
		}
	}
	return out
}

// heredocSpans returns the byte ranges of heredoc bodies in cmd.
var heredocOpenRE = regexp.MustCompile(`<<-?\s*['"]?(\w+)['"]?`)

func heredocSpans(cmd string) [][2]int {
	var spans [][2]int
	if !strings.Contains(cmd, "<<") {
		return nil
	}
	for _, m := range heredocOpenRE.FindAllStringSubmatchIndex(cmd, -1) {
		tag := cmd[m[2]:m[3]]
		nl := strings.IndexByte(cmd[m[1]:], '\n')
		if nl < 0 {
			continue
		}
		start := m[1] + nl + 1
		end := len(cmd)
		rest := cmd[start:]
		off := 0
		for {
			i := strings.IndexByte(rest[off:], '\n')
			line := rest[off:]
			if i >= 0 {
				line = rest[off : off+i]
			}
			if strings.TrimSpace(line) == tag {
				end = start + off
				break
			}
			if i < 0 {
				break
			}
			off += i + 1
		}
		spans = append(spans, [2]int{start, end})
	}
	return spans
}

func stripSpans(s string, spans [][2]int) string {
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	prev := 0
	for _, sp := range spans {
		if sp[0] < prev {
			continue
		}
		b.WriteString(s[prev:sp[0]])
		prev = sp[1]
	}
	b.WriteString(s[prev:])
	return b.String()
}

// segments splits a command line into simple commands at ;, &&, ||, | and
// newlines (outside quotes).
func segments(cmd string) []string {
	var out []string
	var cur strings.Builder
	quote := byte(0)
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
	}
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case quote == '"' && c == '\\' && i+1 < len(cmd):
			cur.WriteByte(c)
			i++
			cur.WriteByte(cmd[i])
		case quote != 0:
			if c == quote {
				quote = 0
			}
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			quote = c
			cur.WriteByte(c)
		case c == ';' || c == '\n' || c == '|' || (c == '&' && i+1 < len(cmd) && cmd[i+1] == '&'):
			flush()
			if i+1 < len(cmd) && (cmd[i+1] == '&' || cmd[i+1] == '|') {
				i++
			}
		case c == '(' || c == ')':
			flush()
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return out
}

// shellWords splits a simple command into words, removing quotes and
// redirections.
func shellWords(seg string) []string {
	w, _ := shellSplit(seg)
	return w
}

// shellSplit splits a simple command into its words and the files its
// output is redirected to (quotes removed; "2>&1" and /dev/null dropped).
func shellSplit(seg string) (words, redirs []string) {
	var cur strings.Builder
	quote := byte(0)
	has := false
	redirect := false // the next word is a redirection target
	flush := func() {
		if !has && cur.Len() == 0 {
			return
		}
		if redirect {
			redirs = append(redirs, cur.String())
			redirect = false
		} else {
			words = append(words, cur.String())
		}
		cur.Reset()
		has = false
	}
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch {
		case quote == '"' && c == '\\' && i+1 < len(seg):
			i++
			cur.WriteByte(seg[i])
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\\' && i+1 < len(seg):
			i++
			cur.WriteByte(seg[i])
		case c == '\'' || c == '"':
			quote, has = c, true
		case c == ' ' || c == '\t':
			flush()
		case c == '>':
			// "2>" and "&>" redirect too; a preceding fd number is not a word.
			if s := cur.String(); s == "1" || s == "2" || s == "&" {
				cur.Reset()
			}
			flush()
			for i+1 < len(seg) && (seg[i+1] == '>' || seg[i+1] == '|') {
				i++
			}
			if i+1 < len(seg) && seg[i+1] == '&' { // 2>&1: a dup, not a file
				i++
				for i+1 < len(seg) && seg[i+1] >= '0' && seg[i+1] <= '9' {
					i++
				}
				continue
			}
			redirect = true
		case c == '<':
			flush()
			for i+1 < len(seg) && seg[i+1] == '<' {
				i++
			}
			redirect = false
			// the input file (or heredoc tag) is not a word of the command
			for i+1 < len(seg) && seg[i+1] == ' ' {
				i++
			}
			for i+1 < len(seg) && seg[i+1] != ' ' {
				i++
			}
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return words, redirs
}

var (
	// appliedRE matches an agent's report that it applied an edit to a file.
	appliedRE = regexp.MustCompile(`(?m)^\s*Applied edit to (\S+)`)
	// commitLineRE matches a commit report: "Commit 1a2b3c4 message" or
	// git's "[branch 1a2b3c4] message".
	commitLineRE = regexp.MustCompile(`(?m)^\s*(?:Commit ([0-9a-f]{7,40}) (.+)|\[[^\]\s]+(?: \([^)]*\))? ([0-9a-f]{7,40})\] (.+))$`)
)

// textChanges records the changes and commits a message's text reports.
func (x *extractor) textChanges(i int, text string) {
	if !strings.Contains(text, "Applied edit to ") && !strings.Contains(text, "Commit ") && !strings.Contains(text, "] ") {
		return
	}
	t := HeadBytes(text, maxScan)
	for _, m := range appliedRE.FindAllStringSubmatch(t, -1) {
		p := cleanPath(m[1])
		if p == "" {
			continue
		}
		x.r.Changes = append(x.r.Changes, Change{Path: p, Op: Modified, Index: i, Action: -1, Via: "text"})
		x.changed[p] = true
	}
	if x.r.Origins[i] == OriginAgent {
		return // an assistant quoting a commit line is not a commit
	}
	for _, c := range commitsIn(t, true) {
		c.Index = i
		x.addCommit(c)
	}
}

// commitStatRE matches git's summary line of a commit.
var commitStatRE = regexp.MustCompile(`^\s*(\d+ files? changed(?:, \d+ insertions?\(\+\))?(?:, \d+ deletions?\(-\))?)\s*$`)

// commitsIn returns the commits a text reports: git's "[branch 1a2b3c4]
// message" lines (and, when prose is true, "Commit 1a2b3c4 message"), each
// with the summary line that follows it.
func commitsIn(text string, prose bool) []Commit {
	var out []Commit
	for _, m := range commitLineRE.FindAllStringSubmatchIndex(text, -1) {
		var c Commit
		switch {
		case m[6] >= 0:
			c = Commit{Ref: text[m[6]:m[7]], Message: clip(text[m[8]:m[9]], detailChars)}
		case prose && m[2] >= 0:
			c = Commit{Ref: text[m[2]:m[3]], Message: clip(text[m[4]:m[5]], detailChars)}
		default:
			continue
		}
		rest := strings.TrimLeft(text[m[1]:], "\r\n")
		if l, _, _ := strings.Cut(rest, "\n"); commitStatRE.MatchString(l) {
			c.Stat = strings.TrimSpace(l)
		}
		out = append(out, c)
	}
	return out
}

func (x *extractor) addCommit(c Commit) {
	for _, have := range x.r.Final.Commits {
		if have.Ref == c.Ref {
			return
		}
	}
	x.r.Final.Commits = append(x.r.Final.Commits, c)
}

// pushedRE matches a push's report: git's "To REMOTE" line with a ref
// update under it, or a stack tool's "Pushed N branches".
var pushedRE = regexp.MustCompile(`(?m)^To \S+\r?\n\s+(?:[0-9a-f]{7,}\.{2,3}[0-9a-f]{7,}|\* \[new (?:branch|tag)\]|\+\s*[0-9a-f]{7,}\.{3}[0-9a-f]{7,})\s+\S+\s+->\s+\S+|^\W{0,3}Pushed (?:and synced )?\d+ branch(?:es)?\b`)

// pushedRefsRE matches the ref update under git push's "To REMOTE" line:
// the range pushed and the branches.
var pushedRefsRE = regexp.MustCompile(`(?m)^To \S+\r?\n\s+((?:\+\s*)?[0-9a-f]{7,}\.{2,3}[0-9a-f]{7,}\s+\S+\s+->\s+\S+)`)

// finalState notes commits, pushes, releases and submissions.
func (x *extractor) finalState(ai int, a *Action) {
	// Submitted says how the record ends: a later action undoes it.
	x.r.Final.Submitted = isSubmit(a)
	if a.Command == "" || !a.HasResult() {
		return
	}
	x.worktree(a)
	// git's report of a commit is the commit, whatever ran after it in the
	// same command line (a failing push, a test run); the report may come
	// after a long pre-commit hook's output.
	reported, committedHere := false, false
	for _, c := range commitsIn(HeadBytes(a.Output, maxScan), false) {
		c.Index = a.Index
		x.addCommit(c)
		reported = true
	}
	ok := !a.Flagged && (!a.HasExit || a.Exit == 0)
	if !ok {
		return
	}
	if a.Command != "" && !readsOnly(a) && pushedRE.MatchString(HeadBytes(a.Output, maxScan)) {
		// Rule "push by its report": git's own report of a push, or a stack
		// tool's ("✓ Pushed 4 branches", gh stack), whatever ran it.
		x.r.Final.Pushed, x.r.Final.PushedAt = true, a.Index
		x.r.Final.PushedRefs = ""
		if m := pushedRefsRE.FindStringSubmatch(HeadBytes(a.Output, maxScan)); m != nil {
			x.r.Final.PushedRefs = strings.Join(strings.Fields(m[1]), " ")
		}
	}
	for _, seg := range segments(a.Command) {
		w := shellWords(seg)
		if len(w) < 2 {
			continue
		}
		switch {
		case w[0] == "git" && w[1] == "push":
			if x.r.Final.PushedAt != a.Index {
				x.r.Final.PushedRefs = "" // a push that printed no report
			}
			x.r.Final.Pushed, x.r.Final.PushedAt = true, a.Index
			for _, a := range w[2:] {
				if a == "--tags" || versionTagRE.MatchString(a) {
					x.r.Final.Released = true
				}
			}
		case w[0] == "gh" && w[1] == "release" && len(w) > 2 && w[2] == "create":
			x.r.Final.Released = true
		case (w[0] == "npm" || w[0] == "cargo" || w[0] == "twine" || w[0] == "goreleaser") && (w[1] == "publish" || w[1] == "upload" || w[1] == "release"):
			x.r.Final.Released = true
		}
	}
	for _, seg := range segments(a.Command) {
		w := shellWords(seg)
		if len(w) >= 2 && w[0] == "git" && w[1] == "-C" && len(w) >= 4 {
			w = append([]string{"git"}, w[3:]...)
		}
		switch {
		case len(w) >= 2 && w[0] == "git" && w[1] == "commit" && !reported:
			// A commit whose output the command hid (-q, | tail -1): a git
			// log after it shows it.
			x.unseenCommit, committedHere = a.Index, true
		case len(w) >= 2 && w[0] == "git" && (w[1] == "log" || showsHead(w)) && x.unseenCommit >= 0 && (a.Index > x.unseenCommit || committedHere):
			if c, ok := newestLogged(a.Output); ok {
				c.Index = x.unseenCommit
				x.addCommit(c)
				x.unseenCommit = -1
			}
		}
	}
}

// showsHead reports whether a git command's words show the current commit
// (`git show --stat --oneline HEAD`, no revision or HEAD): rule "commit seen
// through git show" (Claude Code: `git commit -q --amend && git show --stat
// --oneline HEAD`), read as a git log after a hidden commit is.
func showsHead(w []string) bool {
	if len(w) < 2 || w[1] != "show" {
		return false
	}
	for _, a := range w[2:] {
		if !strings.HasPrefix(a, "-") && a != "HEAD" {
			return false
		}
	}
	return true
}

var (
	// logOnelineRE matches git log --oneline's first line: "9f8e7d6 (HEAD ->
	// main) feat: x".
	logOnelineRE = regexp.MustCompile(`^([0-9a-f]{7,40})\s+(?:\([^)]*\)\s+)?(.+)$`)
	// logCommitRE matches git log's "commit <sha>" header.
	logCommitRE = regexp.MustCompile(`^commit ([0-9a-f]{40})\b`)
)

// newestLogged returns the first (newest) commit a git log output shows.
func newestLogged(out string) (Commit, bool) {
	lines := nonEmptyLines(HeadBytes(out, 4096))
	// The log's first line, after what the line's earlier commands printed
	// (an echo of the command, git status).
	for i, l := range lines {
		if i == 20 {
			break
		}
		if m := logCommitRE.FindStringSubmatch(l); m != nil {
			msg := ""
			for _, l := range lines[i+1:] {
				if !strings.HasPrefix(l, "Author:") && !strings.HasPrefix(l, "Date:") && !strings.HasPrefix(l, "Merge:") {
					msg = l
					break
				}
			}
			return Commit{Ref: m[1][:7], Message: clip(msg, detailChars)}, true
		}
		if m := logOnelineRE.FindStringSubmatch(l); m != nil {
			return Commit{Ref: m[1], Message: clip(m[2], detailChars)}, true
		}
	}
	return Commit{}, false
}

// versionTagRE matches a release tag ("v1.2.3", "1.4.0").
var versionTagRE = regexp.MustCompile(`^v?\d+\.\d+(\.\d+)?([-+.][0-9A-Za-z.]+)?$`)

// submitRE matches a word that submits the work to the harness.
var submitRE = regexp.MustCompile(`(?i)(^submit\b|\b[A-Z_]*SUBMIT[A-Z_]*\b)`)

// isSubmit reports whether an action hands the work in: a submit or finish
// tool, a submit command, or an echo of a submission token.
func isSubmit(a *Action) bool {
	n := strings.ToLower(a.Tool)
	if strings.Contains(n, "submit") || n == "finish" || strings.HasSuffix(n, "_finish") || n == "attempt_completion" || n == "task_complete" {
		return true
	}
	if a.Command == "" {
		return false
	}
	c := strings.TrimSpace(a.Command)
	if strings.HasPrefix(c, "submit") {
		return true
	}
	return strings.HasPrefix(c, "echo") && submitRE.MatchString(c)
}

// isSubAgent reports whether a call delegates to a sub-agent (Claude Code's
// Task and Agent tools, and any tool named for a sub-agent) with a prompt.
func isSubAgent(a *Action) bool {
	n := strings.ToLower(a.Tool)
	if n != "task" && n != "agent" && !strings.Contains(n, "subagent") && !strings.Contains(n, "sub_agent") {
		return false
	}
	p, ok := a.Args["prompt"].(string)
	return ok && strings.TrimSpace(p) != ""
}

var (
	// subWriteRE matches a report line that starts with a write verb and
	// names a file: "- Created `src/a.ts`", "**Modified:** src/b.go",
	// "1. Updated the file tests/test_x.py".
	subWriteRE = regexp.MustCompile("(?im)^\\s*(?:[-*•]|\\d+[.)])?\\s*(?:\\*\\*)?(created|wrote|written|added|modified|updated|edited|changed|deleted|removed)(?:\\*\\*)?:?(?:\\*\\*)?\\s+(?:(?:the |a |new )?files?:?\\s+)?`?([\\w~./-]*[\\w-]\\.[A-Za-z0-9]{1,8})`?")
	// subListRE matches the heading of a list of changed files ("Files
	// modified:", "## Files created").
	subListRE = regexp.MustCompile(`(?i)^\s*(?:#+\s*)?(?:\*\*)?(?:files? (created|modified|changed|edited|written|updated|deleted|removed)|changes made)(?:\*\*)?:?(?:\*\*)?\s*$`)
	// subItemRE matches an item of such a list: "- `path` …", "* path - …".
	subItemRE = regexp.MustCompile("^\\s*(?:[-*•]|\\d+[.)])\\s+`?([\\w~./-]*[\\w-]\\.[A-Za-z0-9]{1,8})`?")
)

// subAgentChanges reads the files a sub-agent's report says it wrote.
func subAgentChanges(report string) []fileChange {
	opOf := func(verb string) Op {
		switch strings.ToLower(verb) {
		case "created", "wrote", "written", "added":
			return Created
		case "deleted", "removed":
			return Deleted
		}
		return Modified
	}
	var out []fileChange
	seen := map[string]bool{}
	add := func(p string, op Op) {
		if looksLikeFile(p) && !seen[p] {
			seen[p] = true
			out = append(out, fileChange{path: p, op: op})
		}
	}
	t := HeadBytes(report, maxScan)
	for _, m := range subWriteRE.FindAllStringSubmatch(t, -1) {
		add(m[2], opOf(m[1]))
	}
	list := Op("")
	for _, l := range strings.Split(t, "\n") {
		if m := subListRE.FindStringSubmatch(l); m != nil {
			list = opOf(m[1])
			if m[1] == "" {
				list = Modified
			}
			continue
		}
		if list == "" {
			continue
		}
		if m := subItemRE.FindStringSubmatch(l); m != nil {
			add(m[1], list)
		} else if strings.TrimSpace(l) != "" {
			list = ""
		}
	}
	return out
}
