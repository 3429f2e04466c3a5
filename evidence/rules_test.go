package evidence

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// rulesTable is the table of the package's rules (RULES.md).
const rulesTable = "RULES.md"

// rulesRow is one row of the table.
type rulesRow struct {
	line       int
	name, test string
	code       []string
}

var backquotedRE = regexp.MustCompile("`([^`]+)`")

// readRulesTable parses the rows of every table in RULES.md: five cells
// (rule, what it recognizes, harness shape, code, test), the code a list of
// backquoted declarations, the test one backquoted test function.
func readRulesTable(t *testing.T) []rulesRow {
	t.Helper()
	data, err := os.ReadFile(rulesTable)
	if err != nil {
		t.Fatal(err)
	}
	var rows []rulesRow
	for n, l := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(l, "| ") || strings.HasPrefix(l, "| Rule |") {
			continue
		}
		// A cell may hold an escaped pipe (\|) as text.
		cells := strings.Split(strings.ReplaceAll(strings.Trim(l, "| "), `\|`, "\x00"), " | ")
		if len(cells) != 5 {
			t.Errorf("%s:%d: %d cells, want 5 (rule, recognizes, harness shape, code, test)", rulesTable, n+1, len(cells))
			continue
		}
		row := rulesRow{line: n + 1, name: cells[0]}
		for _, m := range backquotedRE.FindAllStringSubmatch(cells[3], -1) {
			row.code = append(row.code, m[1])
		}
		if m := backquotedRE.FindAllStringSubmatch(cells[4], -1); len(m) == 1 {
			row.test = m[0][1]
		}
		rows = append(rows, row)
	}
	return rows
}

// packageDecls returns the top-level declarations of the package's files
// (tests or not), and the package-level variables a regular expression
// initializes.
func packageDecls(t *testing.T, tests bool) (decls map[string]bool, regexps []string) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	decls = map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") != tests {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				decls[d.Name.Name] = true
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						decls[s.Name.Name] = true
					case *ast.ValueSpec:
						for i, name := range s.Names {
							decls[name.Name] = true
							if i < len(s.Values) && compilesRegexp(s.Values[i]) {
								regexps = append(regexps, name.Name)
							}
						}
					}
				}
			}
		}
	}
	return decls, regexps
}

// compilesRegexp reports whether an expression holds a regexp.MustCompile
// call (alone, or in a map of them).
func compilesRegexp(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "MustCompile" {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "regexp" {
				found = true
			}
		}
		return !found
	})
	return found
}

// TestRulesTable: RULES.md cannot rot. Every row names a test function of
// the package and declarations the package has; every regular expression
// the package reads a record with is in a row; rule names are unique.
func TestRulesTable(t *testing.T) {
	rows := readRulesTable(t)
	if len(rows) < 50 {
		t.Fatalf("%s has %d rows: the table was not read", rulesTable, len(rows))
	}
	code, regexps := packageDecls(t, false)
	tests, _ := packageDecls(t, true)
	named := map[string]bool{}
	names := map[string]int{}
	for _, r := range rows {
		if prev, ok := names[r.name]; ok {
			t.Errorf("%s:%d: rule %q is already the row of line %d", rulesTable, r.line, r.name, prev)
		}
		names[r.name] = r.line
		if r.test == "" || !strings.HasPrefix(r.test, "Test") || !tests[r.test] {
			t.Errorf("%s:%d: rule %q: test %q is no test function of the package", rulesTable, r.line, r.name, r.test)
		}
		if len(r.code) == 0 {
			t.Errorf("%s:%d: rule %q names no code", rulesTable, r.line, r.name)
		}
		for _, c := range r.code {
			if !code[c] {
				t.Errorf("%s:%d: rule %q: %s is no declaration of the package", rulesTable, r.line, r.name, c)
			}
			named[c] = true
		}
	}
	for _, re := range regexps {
		if !named[re] {
			t.Errorf("regular expression %s is in no row of %s: add its rule", re, rulesTable)
		}
	}
}
