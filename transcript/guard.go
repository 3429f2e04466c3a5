package transcript

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vtcode/vtcode-ls/history"
)

// A file that matches a format's shape but whose content the conversion
// mostly did not carry is an error, never a silent misread: a chat reader
// fed another agent's history would otherwise keep the user's first line
// and drop everything the agent did.

// Misread thresholds: a file of at least guardMinBytes whose converted text
// is under guardMinShare of its size, while the conversion dropped records,
// roles, parts or fields it does not know, is refused.
const (
	guardMinBytes = 4096
	guardMinShare = 0.10
)

// MisreadError reports a file that matched Format but whose content was
// mostly not converted; Dropped names what was left out, by category
// ("roles", "parts", "fields", "types", "records"), each with how often.
type MisreadError struct {
	Name, Format     string
	Converted, Total int // bytes
	Dropped          map[string]map[string]int
}

func (e *MisreadError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s: %s of %s bytes converted", e.Name, e.Format, history.FormatCount(e.Converted), history.FormatCount(e.Total))
	cats := make([]string, 0, len(e.Dropped))
	for c := range e.Dropped {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	for _, c := range cats {
		names := make([]string, 0, len(e.Dropped[c]))
		for n := range e.Dropped[c] {
			names = append(names, n)
		}
		sort.Strings(names)
		if len(names) > 8 {
			names = append(names[:8], fmt.Sprintf("and %d more", len(names)-8))
		}
		fmt.Fprintf(&b, "; dropped %s: %s", c, strings.Join(names, ", "))
	}
	b.WriteString("; the file looks like this format but is not one it reads")
	return b.String()
}

// drop records something the conversion does not carry.
func (t *Transcript) drop(category, name string) {
	if name == "" {
		name = "(unnamed)"
	}
	if t.dropped == nil {
		t.dropped = map[string]map[string]int{}
	}
	if t.dropped[category] == nil {
		t.dropped[category] = map[string]int{}
	}
	t.dropped[category][name]++
}

func (b *builder) drop(category, name string) { b.t.drop(category, name) }

// convertedBytes is the size of what the messages carry: text, reasoning,
// verbatim parts, tool names, arguments and inputs.
func convertedBytes(msgs []history.Message) int {
	n := 0
	for i := range msgs {
		m := &msgs[i]
		n += len(m.Reasoning)
		if parts := m.Content.PartList(); parts != nil {
			for _, p := range parts {
				n += len(p.Text) + len(p.Raw)
			}
		} else {
			n += len(m.Content.Text())
		}
		for _, tc := range m.ToolCalls {
			n += len(tc.Name) + len(tc.Arguments) + len(tc.Input)
		}
	}
	return n
}

// checkCoverage refuses a conversion that carried little of a file of total
// bytes while dropping content it does not know.
func checkCoverage(t *Transcript, total int, name string) error {
	if total < guardMinBytes || len(t.dropped) == 0 {
		return nil
	}
	conv := convertedBytes(t.Messages)
	if float64(conv) >= guardMinShare*float64(total) {
		return nil
	}
	return &MisreadError{Name: name, Format: t.Format, Converted: conv, Total: total, Dropped: t.dropped}
}
