package session

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestDisplay(t *testing.T) {
	for _, c := range []struct {
		used, capacity int
		pressure       float64
		want           Display
	}{
		{0, 0, 0, Display{Used: "0", Text: "0"}},
		{950, 0, 0, Display{Used: "950", Text: "950"}},
		{14_321, 32_000, 0.513, Display{Percent: "51%", Used: "14.3k", Window: "32k", Text: "51% · 14.3k/32k"}},
		{78_149, 128_000, 0.62, Display{Percent: "62%", Used: "78.1k", Window: "128k", Text: "62% · 78.1k/128k"}},
		{99_950, 200_000, 0.5, Display{Percent: "50%", Used: "100k", Window: "200k", Text: "50% · 100k/200k"}},
		{999_499, 1_000_000, 1.006, Display{Percent: "101%", Used: "999k", Window: "1M", Text: "101% · 999k/1M"}},
		{999_500, 1_048_576, 0.999, Display{Percent: "100%", Used: "1M", Window: "1M", Text: "100% · 1M/1M"}},
		{1_250_000, 2_000_000, 0.6449, Display{Percent: "64%", Used: "1.3M", Window: "2M", Text: "64% · 1.3M/2M"}},
	} {
		if got := newDisplay(c.used, c.capacity, c.pressure); got != c.want {
			t.Errorf("newDisplay(%d, %d, %v) = %+v, want %+v", c.used, c.capacity, c.pressure, got, c.want)
		}
	}
}

// TestFiguresTable checks the formatters against the table both editors'
// formatters are tested with (editors/testdata/figures.txt), so that a
// figure reads the same wherever it is printed.
func TestFiguresTable(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "editors", "testdata", "figures.txt"))
	if err != nil {
		t.Fatal(err)
	}
	cases := 0
	for i, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) != 3 {
			t.Fatalf("figures.txt:%d: %q: want KIND VALUE TEXT", i+1, line)
		}
		var got string
		switch f[0] {
		case "tokens":
			n, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatalf("figures.txt:%d: %v", i+1, err)
			}
			got = formatTokens(n)
		case "percent":
			p, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				t.Fatalf("figures.txt:%d: %v", i+1, err)
			}
			got = formatPercent(p)
		default:
			t.Fatalf("figures.txt:%d: unknown kind %q", i+1, f[0])
		}
		if got != f[2] {
			t.Errorf("figures.txt:%d: %s(%s) = %q, want %q", i+1, f[0], f[1], got, f[2])
		}
		cases++
	}
	if cases < 20 {
		t.Errorf("only %d cases read from figures.txt", cases)
	}
}
