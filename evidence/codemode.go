package evidence

import (
	"encoding/json"
	"regexp"
	"strings"
)

// Codex's code mode: the model's only shell path is a freeform tool `exec`
// whose input is JavaScript run in V8, calling the harness's own tools
// ("const r = await tools.exec_command({cmd: …, workdir: …}); text(r.output)").
// Its result is "Script completed|Script failed|Script running with cell ID
// N", "Wall time N seconds", "Output:", then what the script printed. Rule
// "code-mode exec" (Codex CLI rollouts, custom_tool_call `exec`): the
// command and folder are those of the inner exec_command calls, the output
// is what follows the header, a failed script is a flagged result, and a
// running one is polled by its cell id (`wait {"cell_id": N}`).

// codeModeCallRE finds a call of the harness's shell tool in a script.
var codeModeCallRE = regexp.MustCompile(`\btools\.(?:exec_command|shell|local_shell)\s*\(\s*\{`)

// codeModeScriptRE recognizes a code-mode script: a call of a harness tool
// (tools.NAME(…)), the text(…) printer or the ALL_TOOLS list.
var codeModeScriptRE = regexp.MustCompile(`\btools\.[\w$]+\s*\(|\btext\s*\(|\bALL_TOOLS\b`)

// isCodeModeScript reports whether a command tool's input is a code-mode
// script rather than a shell line: what it runs is only the inner shell
// calls [codeModeCommand] finds, and a script without one runs no command.
func isCodeModeScript(input string) bool {
	return codeModeScriptRE.MatchString(HeadBytes(input, 64<<10))
}

// unquotedKeyRE finds an object key a script wrote without quotes.
var unquotedKeyRE = regexp.MustCompile(`([{,]\s*)([A-Za-z_$][\w$]*)\s*:`)

// codeModeCommand returns the command lines the script input runs through
// the harness's shell tool, joined by newlines, and the folder of the first
// one; ok is false when the input calls no such tool with a literal object.
func codeModeCommand(input string) (cmd, dir string, ok bool) {
	var cmds []string
	for _, loc := range codeModeCallRE.FindAllStringIndex(input, 16) {
		obj, found := objectLiteral(input[loc[1]-1:])
		if !found {
			continue
		}
		var v map[string]any
		if json.Unmarshal([]byte(obj), &v) != nil && json.Unmarshal([]byte(unquotedKeyRE.ReplaceAllString(obj, `$1"$2":`)), &v) != nil {
			continue
		}
		c := ""
		for _, k := range cmdKeys {
			if s, isStr := v[k].(string); isStr && strings.TrimSpace(s) != "" {
				c = strings.TrimSpace(s)
				break
			}
		}
		if c == "" {
			continue
		}
		cmds = append(cmds, c)
		if d, isStr := v["workdir"].(string); isStr && dir == "" {
			dir = d
		}
	}
	if len(cmds) == 0 {
		return "", "", false
	}
	return strings.Join(cmds, "\n"), dir, true
}

// objectLiteral returns the balanced {…} s starts with (strings skipped).
func objectLiteral(s string) (string, bool) {
	depth := 0
	quote := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return s[:i+1], true
			}
		}
	}
	return "", false
}

// codeModeHeaderRE matches the header of a code-mode script's result.
var codeModeHeaderRE = regexp.MustCompile(`^Script (completed|failed|running with cell ID \S+)\r?\nWall time [\d.]+ seconds\r?\nOutput:\r?\n?`)

// codeModeResult splits a code-mode script's result into its state
// ("completed", "failed", "running …") and what the script printed; ok is
// false when out has no such header.
func codeModeResult(out string) (state, rest string, ok bool) {
	m := codeModeHeaderRE.FindStringSubmatch(out)
	if m == nil {
		return "", out, false
	}
	return m[1], out[len(m[0]):], true
}

// codeModePatches returns the patches a code-mode script passes to the
// harness's patch tool (`tools.apply_patch(patch)`) as JavaScript string
// literals, decoded: rule "code-mode apply_patch" (Codex CLI rollouts whose
// `exec` scripts edit files through apply_patch; the patch is a "…" or `…`
// literal holding "*** Begin Patch"). None when the script calls no patch
// tool.
func codeModePatches(input string) []string {
	s := HeadBytes(input, 4*maxScan)
	if !strings.Contains(s, "apply_patch") {
		return nil
	}
	var out []string
	for i := 0; i < len(s); i++ {
		q := s[i]
		if q != '"' && q != '\'' && q != '`' {
			continue
		}
		j := i + 1
		for j < len(s) && s[j] != q {
			if s[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(s) {
			break
		}
		lit := s[i : j+1]
		i = j
		if !strings.Contains(lit, "*** Begin Patch") {
			continue
		}
		if p, ok := jsString(lit); ok {
			out = append(out, p)
		}
	}
	return out
}

// jsString decodes a JavaScript string literal (its quotes included): the
// escapes JSON shares, \' and \`, and a template's text as written.
func jsString(lit string) (string, bool) {
	q, body := lit[0], lit[1:len(lit)-1]
	if q == '`' {
		return strings.ReplaceAll(strings.ReplaceAll(body, "\\`", "`"), "\\\\", "\\"), true
	}
	if q == '\'' {
		body = strings.ReplaceAll(strings.ReplaceAll(body, `\'`, `'`), `"`, `\"`)
	}
	var v string
	if json.Unmarshal([]byte(`"`+body+`"`), &v) != nil {
		return "", false
	}
	return v, true
}
