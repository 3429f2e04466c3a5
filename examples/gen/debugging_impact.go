package main

import (
	"fmt"
	"strings"
)

var recomputeGo = goSrc(`
// Command recompute recomputes the totals of exported invoices and reports
// those whose stored gross differs from what invoice.Compute returns now.
//
//	go run ./scripts/recompute -dump export.jsonl [-only-diff]
package main

import (
    "bufio"
    "encoding/json"
    "flag"
    "fmt"
    "log"
    "os"
    "text/tabwriter"

    "github.com/acme/invoicer/internal/invoice"
    "github.com/acme/invoicer/internal/money"
)

type exported struct {
    Invoice     invoice.Invoice ‵json:"invoice"‵
    StoredGross money.Amount    ‵json:"stored_gross"‵
    StoredTax   money.Amount    ‵json:"stored_tax"‵
}

func main() {
    dump := flag.String("dump", "", "JSONL export of issued invoices")
    onlyDiff := flag.Bool("only-diff", false, "print only invoices whose totals changed")
    flag.Parse()
    f, err := os.Open(*dump)
    if err != nil {
        log.Fatal(err)
    }
    defer f.Close()
    sc := bufio.NewScanner(f)
    sc.Buffer(make([]byte, 1<<20), 1<<24)
    w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
    fmt.Fprintln(w, "number\tissued\tlines\tstored gross\trecomputed\tdiff\t")
    var n, up, down int
    var net money.Amount
    for sc.Scan() {
        var e exported
        if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
            log.Fatalf("line %d: %v", n+1, err)
        }
        n++
        t, err := invoice.Compute(&e.Invoice)
        if err != nil {
            log.Fatalf("%s: %v", e.Invoice.Number, err)
        }
        d := e.StoredGross - t.Gross
        net += d
        switch {
        case d > 0:
            up++
        case d < 0:
            down++
        }
        if *onlyDiff && d == 0 {
            continue
        }
        fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\t\n", e.Invoice.Number, e.Invoice.IssuedAt.Format("2006-01-02 15:04"), len(e.Invoice.Lines), e.StoredGross, t.Gross, d)
    }
    if err := sc.Err(); err != nil {
        log.Fatal(err)
    }
    w.Flush()
    fmt.Printf("\n%d invoices, %d with different totals (%d overcharged, %d undercharged), net difference %s\n", n, up+down, up, down, net)
}
`)

// impactInvoice is one generated invoice of the staging export.
type impactInvoice struct {
	number, issued string
	lines          int
	stored, fixed  int64
}

// impactInvoices generates the staging export deterministically and computes
// each invoice both ways: VAT per line (what #482 stored) and per rate.
func impactInvoices() []impactInvoice {
	seed := uint32(20240501)
	rnd := func(n int) int {
		seed = seed*1664525 + 1013904223
		return int(seed>>8) % n
	}
	prices := []int64{199, 249, 399, 495, 715, 899, 1235, 1299, 1499, 2450, 3300, 4995, 8900, 12900}
	var out []impactInvoice
	for i := 0; i < 64; i++ {
		nl := 1 + rnd(8)
		byRate := map[int64]int64{}
		var net, perLine int64
		for l := 0; l < nl; l++ {
			q := int64(1 + rnd(5))
			p := prices[rnd(len(prices))]
			rate := int64(1900)
			if rnd(4) == 0 {
				rate = 700
			}
			ln := q * p
			net += ln
			byRate[rate] += ln
			perLine += halfUp(ln*rate, 10000)
		}
		var perRate int64
		for rate, base := range map[int64]int64{1900: byRate[1900], 700: byRate[700]} {
			perRate += halfUp(base*rate, 10000)
		}
		day, h, m := 1, 18+rnd(6), rnd(60)
		if i >= 32 {
			day, h = 2, 7+rnd(4)
		}
		out = append(out, impactInvoice{
			number: fmt.Sprintf("RE-2024-%05d", 418+i),
			issued: fmt.Sprintf("2024-05-%02d %02d:%02d", day, h, m),
			lines:  nl,
			stored: net + perLine,
			fixed:  net + perRate,
		})
	}
	return out
}

func halfUp(p, den int64) int64 {
	q, r := p/den, p%den
	if 2*r >= den {
		q++
	}
	return q
}

func cents(a int64) string {
	sign := ""
	if a < 0 {
		sign, a = "-", -a
	}
	return fmt.Sprintf("%s%d.%02d", sign, a/100, a%100)
}

// impactOutput renders the recompute report, all invoices or only the changed ones.
func impactOutput(onlyDiff bool) string {
	var rows [][]string
	rows = append(rows, []string{"number", "issued", "lines", "stored gross", "recomputed", "diff"})
	n, up, down := 0, 0, 0
	var net int64
	for _, inv := range impactInvoices() {
		n++
		d := inv.stored - inv.fixed
		net += d
		switch {
		case d > 0:
			up++
		case d < 0:
			down++
		}
		if onlyDiff && d == 0 {
			continue
		}
		rows = append(rows, []string{inv.number, inv.issued, fmt.Sprint(inv.lines), cents(inv.stored), cents(inv.fixed), cents(d)})
	}
	widths := make([]int, 6)
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len(c))
		}
	}
	var sb strings.Builder
	for _, r := range rows {
		for i, c := range r {
			sb.WriteString(strings.Repeat(" ", widths[i]-len(c)+2))
			sb.WriteString(c)
		}
		sb.WriteString("\n")
	}
	fmt.Fprintf(&sb, "\n%d invoices, %d with different totals (%d overcharged, %d undercharged), net difference %s", n, up+down, up, down, cents(net))
	return sb.String()
}

var pdfGo = goSrc(`
package render

import (
    "fmt"
    "io"
    "strings"

    "github.com/acme/invoicer/internal/invoice"
    "github.com/acme/invoicer/internal/money"
)

// Page geometry in points (A4).
const (
    pageWidth    = 595
    pageHeight   = 842
    marginLeft   = 56
    marginRight  = 56
    lineHeight   = 14
    linesPerPage = 38
)

// PDF writes a customer invoice. The layout is a text layer over the
// letterhead template; tests compare the text layer (testdata/*.pdf.txt).
func PDF(w io.Writer, inv *invoice.Invoice, totals invoice.Totals) error {
    doc := newTextDoc(pageWidth, pageHeight)
    threshold := money.MustParse("250.00")
    header(doc, inv)
    y := 620
    for i, l := range inv.Lines {
        if i > 0 && i%linesPerPage == 0 {
            footer(doc, doc.page)
            doc.newPage()
            header(doc, inv)
            y = 620
        }
        qty := fmt.Sprintf("%d.%03d", l.Quantity/1000, l.Quantity%1000)
        qty = strings.TrimRight(strings.TrimRight(qty, "0"), ".")
        doc.text(marginLeft, y, fmt.Sprintf("%-14s %-34s", l.SKU, truncate(l.Description, 34)))
        doc.textRight(pageWidth-marginRight-160, y, qty)
        doc.textRight(pageWidth-marginRight-80, y, l.UnitPrice.String())
        doc.textRight(pageWidth-marginRight, y, l.Net().String())
        y -= lineHeight
    }
    y -= lineHeight
    doc.textRight(pageWidth-marginRight-80, y, "Subtotal")
    doc.textRight(pageWidth-marginRight, y, totals.Subtotal.String())
    if totals.Discount != 0 {
        y -= lineHeight
        doc.textRight(pageWidth-marginRight-80, y, fmt.Sprintf("Discount %s", invoice.FormatRate(inv.DiscountBP)))
        doc.textRight(pageWidth-marginRight, y, "-"+totals.Discount.String())
    }
    if inv.Shipping != 0 {
        y -= lineHeight
        doc.textRight(pageWidth-marginRight-80, y, "Shipping")
        doc.textRight(pageWidth-marginRight, y, inv.Shipping.String())
    }
    for _, b := range invoice.Breakdowns(totals, false) {
        y -= lineHeight
        doc.textRight(pageWidth-marginRight-80, y, fmt.Sprintf("VAT %s on %s", invoice.FormatRate(b.RateBP), b.Base))
        doc.textRight(pageWidth-marginRight, y, b.Tax.String())
    }
    y -= lineHeight + 4
    doc.rule(pageWidth-marginRight-200, y+10, pageWidth-marginRight)
    doc.textRightBold(pageWidth-marginRight-80, y, "Total "+inv.Currency)
    doc.textRightBold(pageWidth-marginRight, y, totals.Gross.String())
    if totals.Gross >= threshold {
        y -= 2 * lineHeight
        doc.text(marginLeft, y, "Payable within 14 days without deduction. Invoices over 250.00 EUR")
        y -= lineHeight
        doc.text(marginLeft, y, "may be paid in two instalments; contact billing@acme.example.")
    }
    footer(doc, doc.page)
    return doc.writeTo(w)
}

func header(doc *textDoc, inv *invoice.Invoice) {
    doc.textBold(marginLeft, 760, "Invoice "+inv.Number)
    doc.text(marginLeft, 744, "Date: "+inv.IssuedAt.Format("02.01.2006"))
    doc.text(marginLeft, 730, "Customer: "+inv.Customer)
    doc.text(marginLeft, 650, fmt.Sprintf("%-14s %-34s", "Item", "Description"))
    doc.textRight(pageWidth-marginRight-160, 650, "Qty")
    doc.textRight(pageWidth-marginRight-80, 650, "Unit")
    doc.textRight(pageWidth-marginRight, 650, "Amount")
    doc.rule(marginLeft, 642, pageWidth-marginRight)
}

func footer(doc *textDoc, page int) {
    doc.text(marginLeft, 40, "ACME Components GmbH · Hafenstraße 12 · 20457 Hamburg · VAT ID DE123456789")
    doc.textRight(pageWidth-marginRight, 40, fmt.Sprintf("Page %d", page))
}

func truncate(s string, n int) string {
    if len([]rune(s)) <= n {
        return s
    }
    return string([]rune(s)[:n-1]) + "…"
}
`)
