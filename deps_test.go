// Package deps_test holds the import policy of vtcode-ls: dependencies point
// down only (cmd → rpc → session → {compaction, clearing, store, config} →
// history), compaction sees providers only through the interface package and
// the catalog, and only cmd picks vendor clients. Change the table on
// purpose, never to make a build pass.
package deps_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/vtcode/vtcode-ls"

// allow lists, for each package of the module, the module packages it may
// import. Test-only imports are not checked. Packages not listed may import
// nothing from the module except what their prefix rule says below.
var allow = map[string][]string{
	"history":                {},
	"history/historytest":    {"history"},
	"evidence":               {"history"},
	"clearing":               {"history"},
	"providers":              {"history"},
	"providers/sse":          {},            // a leaf: reads text/event-stream
	"providers/catalog":      {"providers"}, // the route and model tables
	"providers/httpapi":      {"providers", "providers/catalog", "history"},
	"summary":                {"providers", "history", "evidence"},      // the offline summarizer: reads the record, writes the summary
	"providers/proxywire":    {"providers", "providers/sse", "history"}, // a proxy's view of any vendor's bodies, below the vendor packages
	"providers/openai":       {"providers", "providers/catalog", "providers/httpapi", "providers/sse", "providers/proxywire", "history"},
	"providers/anthropic":    {"providers", "providers/catalog", "providers/httpapi", "providers/sse", "providers/proxywire", "history"},
	"providers/chatcompat":   {"providers", "providers/catalog", "providers/httpapi", "providers/sse", "providers/proxywire", "history"},
	"providers/gemini":       {"providers", "providers/proxywire", "history"},
	"providers/providertest": {"providers", "providers/httpapi", "history"},
	"compaction":             {"history", "providers", "providers/catalog", "evidence", "compaction/routepolicy"},
	"compaction/routepolicy": {}, // the built-in numbers config and compaction both default to
	"store":                  {"history"},
	"config":                 {"clearing", "compaction/routepolicy"}, // the engine's own defaults
	"transcript":             {"history"},
	"corpus":                 {}, // locates the recorded sessions; standard library only
	"session":                {"history", "clearing", "compaction", "store", "config", "providers", "providers/catalog"},
	"rpc":                    {"session", "history", "config"},
	"rpc/rpctest":            {"rpc", "session", "history", "providers", "summary", "config"},
	"proxy":                  {"session", "history", "providers", "providers/proxywire", "providers/anthropic", "providers/openai", "providers/chatcompat", "providers/gemini", "providers/catalog", "providers/httpapi", "config"},
	"proxy/proxytest":        {},
	"daemon":                 {"rpc", "proxy", "session", "config"}, // between cmd and the transports
	// the fact ledger: an evaluation harness beside cmd (vtcode-ls eval, make bench)
	"ledger": {"evidence", "history", "compaction", "providers", "summary", "transcript"},
	// the code-server end-to-end test's scripted agent and fake provider (editors/vscode/scripts/e2e.sh)
	"editors/vscode/test/e2e/fakeagent": {"proxy/proxytest"},
}

// cmd may import anything in the module; nothing may import cmd.
var anyImport = map[string]bool{"cmd/vtcode-ls": true, "cmd/vtcode-bench": true}

func TestImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	seen := 0
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		if pkg == "" || pkg == fields[0] {
			continue
		}
		seen++
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			dep := strings.TrimPrefix(imp, module+"/")
			if strings.HasPrefix(dep, "cmd/") {
				t.Errorf("%s imports %s: nothing may import a command", pkg, dep)
				continue
			}
			if anyImport[pkg] {
				continue
			}
			allowed, listed := allow[pkg]
			if !listed {
				t.Errorf("package %s is not in the import policy table (deps_test.go): add it on purpose", pkg)
				break
			}
			if !contains(allowed, dep) {
				t.Errorf("%s may not import %s (allowed: %v)", pkg, dep, allowed)
			}
		}
	}
	if seen == 0 {
		t.Fatal("go list reported no packages of the module")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
