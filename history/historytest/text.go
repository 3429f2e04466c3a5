package historytest

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode/utf8"
)

// style is a kind of generated text. Each has its own density in bytes per
// o200k token, measured once on this generator (see bytesPerToken).
type style uint8

const (
	styleCode style = iota
	styleProse
	styleListing
	styleLog
	styleGrep
	styleBase64
)

// bytesPerToken is the measured o200k density of each style, used to size
// text for a token target.
var bytesPerToken = [...]float64{
	styleCode:    3.55,
	styleProse:   5.47,
	styleListing: 2.23,
	styleLog:     2.50,
	styleGrep:    3.17,
	styleBase64:  1.47,
}

var words = strings.Fields(`the a of to and in is it that for on with as this be are was by at from or an
not but have has which when we you they can will all would there their what so if about more one
out up into then them these other some time only new could also two may like than first any way
been most after where well much should over such through back because between each under same
request context window history session message token result batch budget trigger cache stream
provider model summary compaction projection estimate capacity reserved output prefix policy
editor client server daemon transport frame notification progress cancel retry failure recovery
function method value pointer slice map channel goroutine mutex interface struct package module
file path line column buffer reader writer encoder decoder parser scanner lexer tokenizer vocabulary
café naïve façade résumé déjà-vu Zürich 東京 データ 변수 →`)

var idents = strings.Fields(`ctx req resp err msg msgs buf out in n i j k b p s t id name path data cfg opts
state store log logger conn client server sess session hist history est estimator tok tokens batch
batches results calls call stub window trigger budget policy stats limit count total size offset
handleRequest prepareRequest recordResponse appendMessages normalize clearResults compactHistory
readFile writeFile listFiles runCommand parseConfig loadPolicy newSession closeSession openStore
Message ToolCall Content Part Estimator Pairing Group Policy Budget Stats Session Manager Store Log`)

var types = strings.Fields(`int string bool error []byte []string map[string]int *Message []Message
context.Context *Session Policy Budget Stats time.Duration io.Reader json.RawMessage`)

var dirs = strings.Fields(`internal cmd pkg rpc session history clearing compaction providers store config
transcript testdata docs scripts editors/vscode editors/nvim vendor api web`)

var exts = strings.Fields(`.go .go .go .md .json .toml .ts .lua .txt .yaml`)

var logLevels = strings.Fields(`INFO INFO INFO DEBUG WARN ERROR`)

const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

type textGen struct {
	r *rand.Rand
}

func (g textGen) pick(list []string) string { return list[g.r.IntN(len(list))] }

// text returns about n bytes of text in style st (never more than n).
func (g textGen) text(st style, n int) string {
	if n <= 0 {
		return ""
	}
	var sb strings.Builder
	sb.Grow(n + 160)
	for sb.Len() < n {
		switch st {
		case styleCode:
			g.codeLine(&sb)
		case styleProse:
			g.sentence(&sb)
		case styleListing:
			g.listingLine(&sb)
		case styleLog:
			g.logLine(&sb)
		case styleGrep:
			sb.WriteString(g.path())
			sb.WriteByte(':')
			sb.WriteString(strconv.Itoa(1 + g.r.IntN(900)))
			sb.WriteByte(':')
			g.codeLine(&sb)
		case styleBase64:
			for range 64 {
				sb.WriteByte(b64[g.r.IntN(len(b64))])
			}
		}
	}
	s := sb.String()
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = strings.Clone(s[:cut])
	}
	return s
}

func (g textGen) path() string {
	return g.pick(dirs) + "/" + g.pick(idents) + "_" + strconv.Itoa(g.r.IntN(40)) + g.pick(exts)
}

func (g textGen) sentence(sb *strings.Builder) {
	k := 6 + g.r.IntN(14)
	for i := range k {
		w := g.pick(words)
		if i == 0 {
			if c := w[0]; c >= 'a' && c <= 'z' {
				w = string(c-'a'+'A') + w[1:]
			}
		} else {
			sb.WriteByte(' ')
		}
		sb.WriteString(w)
	}
	if g.r.IntN(6) == 0 {
		sb.WriteString(".\n\n")
	} else {
		sb.WriteString(". ")
	}
}

func (g textGen) codeLine(sb *strings.Builder) {
	indent := g.r.IntN(4)
	for range indent {
		sb.WriteByte('\t')
	}
	switch g.r.IntN(9) {
	case 0:
		fmt.Fprintf(sb, "func (%s *%s) %s(%s %s, %s %s) (%s, error) {\n",
			g.pick(idents)[:1], g.pick(idents), g.pick(idents), g.pick(idents), g.pick(types), g.pick(idents), g.pick(types), g.pick(types))
	case 1:
		fmt.Fprintf(sb, "if err := %s.%s(ctx, %s); err != nil {\n", g.pick(idents), g.pick(idents), g.pick(idents))
	case 2:
		fmt.Fprintf(sb, "return nil, fmt.Errorf(\"%s %s: %%w\", err)\n", g.pick(words), g.pick(idents))
	case 3:
		fmt.Fprintf(sb, "%s := make([]%s, 0, %d)\n", g.pick(idents), g.pick(types), g.r.IntN(512))
	case 4:
		fmt.Fprintf(sb, "// %s %s %s %s %s.\n", g.pick(words), g.pick(words), g.pick(idents), g.pick(words), g.pick(words))
	case 5:
		fmt.Fprintf(sb, "for %s, %s := range %s.%s {\n", g.pick(idents), g.pick(idents), g.pick(idents), g.pick(idents))
	case 6:
		fmt.Fprintf(sb, "%s.%s = append(%s.%s, %s[%d])\n", g.pick(idents), g.pick(idents), g.pick(idents), g.pick(idents), g.pick(idents), g.r.IntN(64))
	case 7:
		sb.WriteString("}\n")
	default:
		fmt.Fprintf(sb, "%s, %s := %s.%s(%s, %q)\n", g.pick(idents), g.pick(idents), g.pick(idents), g.pick(idents), g.pick(idents), g.pick(words))
	}
}

func (g textGen) listingLine(sb *strings.Builder) {
	fmt.Fprintf(sb, "%s\t%d bytes\t2026-08-%02d %02d:%02d\n", g.path(), g.r.IntN(90000), 1+g.r.IntN(28), g.r.IntN(24), g.r.IntN(60))
}

func (g textGen) logLine(sb *strings.Builder) {
	fmt.Fprintf(sb, "2026-08-14T%02d:%02d:%02d.%03dZ %s %s %s=%d %s=%q\n",
		g.r.IntN(24), g.r.IntN(60), g.r.IntN(60), g.r.IntN(1000), g.pick(logLevels), g.pick(words), g.pick(idents), g.r.IntN(100000), g.pick(idents), g.pick(words))
}

// tokensToBytes converts a token target into bytes of style st.
func tokensToBytes(st style, tokens float64) int {
	return int(tokens * bytesPerToken[st])
}
