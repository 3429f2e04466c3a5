package session

import (
	"math"
	"strconv"
	"strings"
)

// Display is how an editor shows a session's figures: the pressure, the
// tokens used (the prefix of system prompt and tools plus the projection)
// and the window, formatted here once so that every client shows the same
// text for the same numbers.
type Display struct {
	// Percent is the pressure as a whole percentage ("62%"); "" without a
	// capacity.
	Percent string `json:"percent"`
	// Used is the tokens the request holds, compactly ("78.1k").
	Used string `json:"used"`
	// Window is the route's context window ("128k"); "" without a capacity.
	Window string `json:"window"`
	// Text is the one-line gauge: "62% · 78.1k/128k", or "78.1k" without a
	// capacity.
	Text string `json:"text"`
}

// newDisplay formats the figures of a gauge: used tokens (prefix
// included), the context window (0: unknown) and the pressure.
func newDisplay(used, capacity int, pressure float64) Display {
	d := Display{Used: formatTokens(used)}
	if capacity <= 0 {
		d.Text = d.Used
		return d
	}
	d.Percent = formatPercent(pressure)
	d.Window = formatTokens(capacity)
	d.Text = d.Percent + " · " + d.Used + "/" + d.Window
	return d
}

// formatTokens renders a token count compactly: 950, 9.5k, 78.1k, 128k,
// 1.2M. One decimal below 100k (and for millions), none from 100k on; a
// trailing ".0" is dropped.
func formatTokens(n int) string {
	switch {
	case n < 0:
		return "0"
	case n < 1000:
		return strconv.Itoa(n)
	case n < 100_000:
		return oneDecimal(n, 100) + "k"
	case n < 999_500: // rounds to at most 999k
		return strconv.Itoa((n+500)/1000) + "k"
	}
	return oneDecimal(n, 100_000) + "M"
}

// oneDecimal renders n/(10·unit) with one decimal, rounded half up, without
// a trailing ".0".
func oneDecimal(n, unit int) string {
	tenths := n / unit
	if n%unit*2 >= unit {
		tenths++
	}
	s := strconv.Itoa(tenths/10) + "." + strconv.Itoa(tenths%10)
	return strings.TrimSuffix(s, ".0")
}

// formatPercent renders a pressure ratio (0.62) as "62%".
func formatPercent(pressure float64) string {
	if math.IsNaN(pressure) || pressure < 0 {
		return "0%"
	}
	if pressure > 1e7 {
		pressure = 1e7
	}
	return strconv.Itoa(int(math.Round(pressure*100))) + "%"
}
