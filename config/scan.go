package config

import (
	"strconv"
	"strings"
)

// The TOML decoder reports positions only for syntax errors. To name the line
// of an unknown key or a bad value, scanKeys reads the file once more and
// records where each key is defined. It understands what a configuration file
// contains — comments, [table] and [[array]] headers, dotted and quoted keys,
// multi-line strings and arrays — and degrades to line 0 (unknown) otherwise.

// keyPos is where a key (or table header) is defined.
type keyPos struct {
	key   []string
	line  int
	index int // entry of the enclosing [[array]] table, -1 outside one
}

type keyIndex []keyPos

// line returns the line defining key in entry index (-1: any), falling back
// to the longest defined prefix of key (the table or inline table holding it).
func (ix keyIndex) line(key []string, index int) int {
	best, bestLen := 0, 0
	for _, kp := range ix {
		if index >= 0 && kp.index != index {
			continue
		}
		if len(kp.key) <= bestLen || len(kp.key) > len(key) {
			continue
		}
		match := true
		for i := range kp.key {
			match = match && kp.key[i] == key[i]
		}
		if match {
			best, bestLen = kp.line, len(kp.key)
		}
	}
	return best
}

func scanKeys(src []byte) keyIndex {
	var (
		out    keyIndex
		table  []string
		index  = -1
		counts = map[string]int{}
		val    valueScanner
	)
	for i, text := range strings.Split(string(src), "\n") {
		line := i + 1
		if val.open() {
			val.feed(text)
			continue
		}
		t := strings.TrimLeft(text, " \t")
		switch {
		case t == "" || t[0] == '#':
		case strings.HasPrefix(t, "[["):
			if k, _, ok := parseKey(t[2:], ']'); ok {
				name := strings.Join(k, "\x00")
				table, index = k, counts[name]
				counts[name]++
				out = append(out, keyPos{k, line, index})
			}
		case t[0] == '[':
			if k, _, ok := parseKey(t[1:], ']'); ok {
				table, index = k, -1
				out = append(out, keyPos{k, line, index})
			}
		default:
			if k, rest, ok := parseKey(t, '='); ok {
				out = append(out, keyPos{sub(table, k...), line, index})
				val.feed(rest)
			}
		}
	}
	return out
}

// parseKey parses a dotted key of bare, "basic" and 'literal' parts up to the
// byte stop, returning the parts and the text after stop.
func parseKey(s string, stop byte) (parts []string, rest string, ok bool) {
	i := 0
	skip := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	for {
		skip()
		if i >= len(s) {
			return nil, "", false
		}
		switch s[i] {
		case '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return nil, "", false
			}
			p, err := strconv.Unquote(s[i : j+1])
			if err != nil {
				p = s[i+1 : j]
			}
			parts = append(parts, p)
			i = j + 1
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, "", false
			}
			parts = append(parts, s[i+1:i+1+j])
			i += j + 2
		default:
			j := i
			for j < len(s) && isBare(s[j]) {
				j++
			}
			if j == i {
				return nil, "", false
			}
			parts = append(parts, s[i:j])
			i = j
		}
		skip()
		if i >= len(s) {
			return nil, "", false
		}
		if s[i] == '.' {
			i++
			continue
		}
		if s[i] == stop {
			return parts, s[i+1:], true
		}
		return nil, "", false
	}
}

func isBare(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// valueScanner follows a value across lines: open multi-line strings and
// unclosed brackets.
type valueScanner struct {
	depth int    // open [ and {
	ml    string // closing delimiter of an open multi-line string
}

func (v *valueScanner) open() bool { return v.depth > 0 || v.ml != "" }

func (v *valueScanner) feed(s string) {
	for i := 0; i < len(s); {
		if v.ml != "" {
			j := strings.Index(s[i:], v.ml)
			if j < 0 {
				return
			}
			i += j + len(v.ml)
			v.ml = ""
			continue
		}
		switch c := s[i]; c {
		case '#':
			return
		case '"', '\'':
			if q := strings.Repeat(string(c), 3); strings.HasPrefix(s[i:], q) {
				v.ml = q
				i += 3
				continue
			}
			j := i + 1
			for j < len(s) && s[j] != c {
				if c == '"' && s[j] == '\\' {
					j++
				}
				j++
			}
			i = j + 1
		case '[', '{':
			v.depth++
			i++
		case ']', '}':
			if v.depth > 0 {
				v.depth--
			}
			i++
		default:
			i++
		}
	}
}
