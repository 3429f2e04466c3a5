package main

var invoiceDiff = text(`
commit 5e02d3b86f0e4a1c9d27b3e5f6a8c0d1e2f3a4b5
Author: Jonas Weber <jonas.weber@acme.example>
Date:   Tue Apr 30 16:05:44 2024 +0200

    invoice: compute VAT per line for the XRechnung breakdown

    XRechnung wants the VAT of every line (BT-117), so compute it per line
    and sum the lines into the rate totals. Also spread the discount over
    the lines in proportion to their net.

diff --git a/internal/invoice/invoice.go b/internal/invoice/invoice.go
index 6b1e0c2..d94a7f1 100644
--- a/internal/invoice/invoice.go
+++ b/internal/invoice/invoice.go
@@ -47,6 +47,9 @@ type Totals struct {
 	Tax      money.Amount ‵json:"tax"‵
 	Gross    money.Amount ‵json:"gross"‵
 	ByRate   []RateTotal  ‵json:"by_rate"‵
+	// LineTax is the VAT of each line, in line order, for the per-line
+	// breakdown of the e-invoice export (XRechnung BT-117 per line).
+	LineTax []money.Amount ‵json:"line_tax"‵
 }
 
 // StandardRateBP is the rate shipping is taxed at.
@@ -81,37 +84,55 @@ func (inv *Invoice) Validate() error {
 }
 
 // Compute returns the totals of inv.
+//
+// Since #482 the tax of every line is computed (and rounded) per line so the
+// e-invoice export can show it; the rate totals are the sums of the lines.
 func Compute(inv *Invoice) (Totals, error) {
 	if err := inv.Validate(); err != nil {
 		return Totals{}, err
 	}
 	var t Totals
-	bases := map[int64]money.Amount{}
-	for _, l := range inv.Lines {
-		n := l.Net()
-		t.Subtotal += n
-		bases[l.TaxRateBP] += n
+	nets := make([]money.Amount, len(inv.Lines))
+	for i, l := range inv.Lines {
+		nets[i] = l.Net()
+		t.Subtotal += nets[i]
 	}
 	t.Discount = t.Subtotal.Percent(inv.DiscountBP)
-	rates := make([]int64, 0, len(bases))
-	weights := make([]int64, 0, len(bases))
-	for bp, b := range bases {
-		rates = append(rates, bp)
-		weights = append(weights, int64(b))
+	byRate := map[int64]*RateTotal{}
+	t.LineTax = make([]money.Amount, len(inv.Lines))
+	for i, l := range inv.Lines {
+		// The discount is spread over the lines in proportion to their net.
+		lineDiscount := discountShare(t.Discount, nets, i)
+		base := nets[i] - lineDiscount
+		tax := base.Percent(l.TaxRateBP)
+		t.LineTax[i] = tax
+		rt := byRate[l.TaxRateBP]
+		if rt == nil {
+			rt = &RateTotal{RateBP: l.TaxRateBP}
+			byRate[l.TaxRateBP] = rt
+		}
+		rt.Base += base
+		rt.Tax += tax
 	}
-	shares := t.Discount.Allocate(weights)
-	for i, bp := range rates {
-		base := bases[bp] - shares[i]
-		if bp == StandardRateBP {
-			base += inv.Shipping
-		}
-		t.ByRate = append(t.ByRate, RateTotal{RateBP: bp, Base: base, Tax: base.Percent(bp)})
+	if inv.Shipping != 0 {
+		rt := byRate[StandardRateBP]
+		if rt == nil {
+			rt = &RateTotal{RateBP: StandardRateBP}
+			byRate[StandardRateBP] = rt
+		}
+		rt.Base += inv.Shipping
+		rt.Tax += inv.Shipping.Percent(StandardRateBP)
 	}
-	for _, rt := range t.ByRate {
+	for _, rt := range byRate {
+		t.ByRate = append(t.ByRate, *rt)
 		t.Tax += rt.Tax
 	}
 	sort.Slice(t.ByRate, func(i, j int) bool { return t.ByRate[i].RateBP > t.ByRate[j].RateBP })
 	t.Net = t.Subtotal - t.Discount + inv.Shipping
 	t.Gross = t.Net + t.Tax
 	return t, nil
 }
+
+// discountShare returns line i's share of the invoice discount.
+func discountShare(discount money.Amount, nets []money.Amount, i int) money.Amount {
+	weights := make([]int64, len(nets))
+	for j, n := range nets {
+		weights[j] = int64(n)
+	}
+	return discount.Allocate(weights)[i]
+}`)

var cacheDiff = text(`
commit a77f5c90e1d2b3c4a5f6e7d8c9b0a1f2e3d4c5b6
Author: Jonas Weber <jonas.weber@acme.example>
Date:   Wed May 1 10:12:31 2024 +0200

    store: lock-free fast path for cached totals

    The totals endpoint is hot (the PDF renderer calls it per page) and
    profiling showed contention on c.mu. Most reads hit, so check the map
    first and only take the lock on a miss.

diff --git a/internal/store/cache.go b/internal/store/cache.go
index 0f3c2a1..8e9d4b7 100644
--- a/internal/store/cache.go
+++ b/internal/store/cache.go
@@ -33,7 +33,16 @@ func NewCache(ttl time.Duration, load func(context.Context, string) (invoice.Tot
 
 // Get returns the totals of invoice number, loading them on a miss.
 func (c *Cache) Get(ctx context.Context, number string) (invoice.Totals, error) {
+	// Fast path (#482): most reads hit, so skip the lock when the entry is fresh.
+	if e, ok := c.entries[number]; ok && c.now().Before(e.expires) {
+		c.hits++
+		return e.totals, nil
+	}
 	c.mu.Lock()
 	if e, ok := c.entries[number]; ok && c.now().Before(e.expires) {
 		c.hits++
 		c.mu.Unlock()
 		return e.totals, nil
 	}
 	c.misses++
 	c.mu.Unlock()`)

var roundingDoc = text(`
# Rounding rules

Finance signed these off on 2023-11-14 (ticket FIN-212). The tests in
internal/invoice and the golden files encode them; change them only with
finance's approval.

1. **Line net** = quantity × unit price, rounded half up to the cent.
2. **Discount** = subtotal × discount rate, rounded half up, then spread over
   the lines in proportion to their net (largest remainder, so the shares add
   up to the discount exactly).
3. **VAT is computed per rate, not per line**: for each rate, sum the
   discounted line bases (plus shipping for the standard rate) and apply the
   rate once, rounding half up. This is what §14 Abs. 4 Nr. 8 UStG asks for
   ("the tax amount attributable to the consideration, per tax rate") and
   what our accounting system books.
4. **Per-line VAT** (where a format needs it, e.g. XRechnung BT-117 per
   line) is the rate's VAT *allocated* over its lines in proportion to
   their bases, so that the lines add up to the rate total.
5. The ledger export uses banker's rounding (money.HalfEven) for FX
   conversion only. Never use it for VAT.

## Examples

| lines (net, rate)                     | per rate                  | per line (wrong)          |
|---------------------------------------|---------------------------|---------------------------|
| 21.45 @19 %, 12.35 @19 %, 4.05 @7 %   | 6.42 + 0.28 = 6.70        | 4.08 + 2.35 + 0.28 = 6.71 |
| 40 × 0.50 @7 %                        | 20.00 × 7 % = 1.40        | 40 × 0.04 = 1.60          |`)

var xrechnungGo = goSrc(`
// Package render turns computed invoices into documents: the PDF for
// customers and the XRechnung (EN 16931 UBL) XML for public-sector clients.
package render

import (
    "encoding/xml"
    "fmt"
    "io"

    "github.com/acme/invoicer/internal/invoice"
)

// ublInvoice is the subset of UBL 2.1 Invoice we emit.
type ublInvoice struct {
    XMLName        xml.Name    ‵xml:"urn:oasis:names:specification:ubl:schema:xsd:Invoice-2 Invoice"‵
    CustomizationID string     ‵xml:"cbc:CustomizationID"‵
    ID             string      ‵xml:"cbc:ID"‵
    IssueDate      string      ‵xml:"cbc:IssueDate"‵
    Currency       string      ‵xml:"cbc:DocumentCurrencyCode"‵
    Buyer          string      ‵xml:"cac:AccountingCustomerParty>cac:Party>cac:PartyName>cbc:Name"‵
    TaxTotal       ublTaxTotal ‵xml:"cac:TaxTotal"‵
    Monetary       ublTotals   ‵xml:"cac:LegalMonetaryTotal"‵
    Lines          []ublLine   ‵xml:"cac:InvoiceLine"‵
}

type ublTaxTotal struct {
    TaxAmount ublAmount        ‵xml:"cbc:TaxAmount"‵
    Subtotals []ublTaxSubtotal ‵xml:"cac:TaxSubtotal"‵
}

type ublTaxSubtotal struct {
    Taxable  ublAmount ‵xml:"cbc:TaxableAmount"‵
    Tax      ublAmount ‵xml:"cbc:TaxAmount"‵
    Category string    ‵xml:"cac:TaxCategory>cbc:ID"‵
    Percent  string    ‵xml:"cac:TaxCategory>cbc:Percent"‵
}

type ublTotals struct {
    LineExtension ublAmount ‵xml:"cbc:LineExtensionAmount"‵
    TaxExclusive  ublAmount ‵xml:"cbc:TaxExclusiveAmount"‵
    TaxInclusive  ublAmount ‵xml:"cbc:TaxInclusiveAmount"‵
    Payable       ublAmount ‵xml:"cbc:PayableAmount"‵
}

type ublLine struct {
    ID        string    ‵xml:"cbc:ID"‵
    Quantity  string    ‵xml:"cbc:InvoicedQuantity"‵
    Net       ublAmount ‵xml:"cbc:LineExtensionAmount"‵
    Name      string    ‵xml:"cac:Item>cbc:Name"‵
    SKU       string    ‵xml:"cac:Item>cac:SellersItemIdentification>cbc:ID"‵
    VATRate   string    ‵xml:"cac:Item>cac:ClassifiedTaxCategory>cbc:Percent"‵
    LineVAT   ublAmount ‵xml:"cac:Item>cac:ClassifiedTaxCategory>cbc:TaxAmount"‵ // BT-117 per line (German CIUS extension)
    UnitPrice ublAmount ‵xml:"cac:Price>cbc:PriceAmount"‵
}

type ublAmount struct {
    Currency string ‵xml:"currencyID,attr"‵
    Amount   string ‵xml:",chardata"‵
}

// XRechnung writes inv with its totals as XRechnung 3.0 UBL XML.
func XRechnung(w io.Writer, inv *invoice.Invoice, totals invoice.Totals) error {
    amt := func(a fmt.Stringer) ublAmount { return ublAmount{Currency: inv.Currency, Amount: a.String()} }
    doc := ublInvoice{
        CustomizationID: "urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0",
        ID:              inv.Number,
        IssueDate:       inv.IssuedAt.Format("2006-01-02"),
        Currency:        inv.Currency,
        Buyer:           inv.Customer,
    }
    for i, l := range inv.Lines {
        lineVAT := totals.LineTax[i]
        doc.Lines = append(doc.Lines, ublLine{
            ID:        fmt.Sprint(i + 1),
            Quantity:  fmt.Sprintf("%d.%03d", l.Quantity/1000, l.Quantity%1000),
            Net:       amt(l.Net()),
            Name:      l.Description,
            SKU:       l.SKU,
            VATRate:   invoice.FormatRate(l.TaxRateBP),
            LineVAT:   ublAmount{Currency: inv.Currency, Amount: lineVAT.String()},
            UnitPrice: amt(l.UnitPrice),
        })
    }
    for _, b := range invoice.Breakdowns(totals, false) {
        doc.TaxTotal.Subtotals = append(doc.TaxTotal.Subtotals, ublTaxSubtotal{
            Taxable: amt(b.Base), Tax: amt(b.Tax), Category: string(b.Category), Percent: invoice.FormatRate(b.RateBP),
        })
    }
    doc.TaxTotal.TaxAmount = amt(totals.Tax)
    doc.Monetary = ublTotals{
        LineExtension: amt(totals.Subtotal),
        TaxExclusive:  amt(totals.Net),
        TaxInclusive:  amt(totals.Gross),
        Payable:       amt(totals.Gross),
    }
    if _, err := io.WriteString(w, xml.Header); err != nil {
        return err
    }
    enc := xml.NewEncoder(w)
    enc.Indent("", "  ")
    if err := enc.Encode(doc); err != nil {
        return fmt.Errorf("render xrechnung %s: %w", inv.Number, err)
    }
    return nil
}
`)

var xrechnungTestGo = goSrc(`
package render

import (
    "bytes"
    "encoding/json"
    "os"
    "path/filepath"
    "testing"

    "github.com/acme/invoicer/internal/invoice"
    "github.com/acme/invoicer/internal/money"
)

func loadGolden(t *testing.T, name string) *invoice.Invoice {
    t.Helper()
    b, err := os.ReadFile(filepath.Join("..", "invoice", "testdata", "golden", name+".input.json"))
    if err != nil {
        t.Fatal(err)
    }
    var inv invoice.Invoice
    if err := json.Unmarshal(b, &inv); err != nil {
        t.Fatal(err)
    }
    return &inv
}

func TestXRechnungGolden(t *testing.T) {
    for _, name := range []string{"mixed_rates", "shipping", "single_line"} {
        t.Run(name, func(t *testing.T) {
            inv := loadGolden(t, name)
            totals, err := invoice.Compute(inv)
            if err != nil {
                t.Fatal(err)
            }
            var buf bytes.Buffer
            if err := XRechnung(&buf, inv, totals); err != nil {
                t.Fatal(err)
            }
            want, err := os.ReadFile(filepath.Join("testdata", name+".xml"))
            if err != nil {
                t.Fatal(err)
            }
            if !bytes.Equal(buf.Bytes(), want) {
                t.Errorf("XML differs from testdata/%s.xml:\n%s", name, buf.Bytes())
            }
        })
    }
}

// TestXRechnungLineSumsMatchTotals checks BR-CO-17: the line VAT amounts of a
// category add up to the category's tax amount.
func TestXRechnungLineSumsMatchTotals(t *testing.T) {
    inv := loadGolden(t, "mixed_rates")
    totals, err := invoice.Compute(inv)
    if err != nil {
        t.Fatal(err)
    }
    sums := map[int64]money.Amount{}
    for i, l := range inv.Lines {
        sums[l.TaxRateBP] += totals.LineTax[i]
    }
    for _, rt := range totals.ByRate {
        if sums[rt.RateBP] != rt.Tax {
            t.Errorf("rate %d: lines sum to %s, category tax is %s", rt.RateBP, sums[rt.RateBP], rt.Tax)
        }
    }
}
`)

var mixedRatesXML = text(`
<?xml version="1.0" encoding="UTF-8"?>
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2">
  <cbc:CustomizationID>urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0</cbc:CustomizationID>
  <cbc:ID>RE-2024-00417</cbc:ID>
  <cbc:IssueDate>2024-05-02</cbc:IssueDate>
  <cbc:DocumentCurrencyCode>EUR</cbc:DocumentCurrencyCode>
  <cac:AccountingCustomerParty>
    <cac:Party>
      <cac:PartyName>
        <cbc:Name>Kanzlei Hoffmann &amp; Partner</cbc:Name>
      </cac:PartyName>
    </cac:Party>
  </cac:AccountingCustomerParty>
  <cac:TaxTotal>
    <cbc:TaxAmount currencyID="EUR">6.70</cbc:TaxAmount>
    <cac:TaxSubtotal>
      <cbc:TaxableAmount currencyID="EUR">33.80</cbc:TaxableAmount>
      <cbc:TaxAmount currencyID="EUR">6.42</cbc:TaxAmount>
      <cac:TaxCategory>
        <cbc:ID>S</cbc:ID>
        <cbc:Percent>19 %</cbc:Percent>
      </cac:TaxCategory>
    </cac:TaxSubtotal>
    <cac:TaxSubtotal>
      <cbc:TaxableAmount currencyID="EUR">4.05</cbc:TaxableAmount>
      <cbc:TaxAmount currencyID="EUR">0.28</cbc:TaxAmount>
      <cac:TaxCategory>
        <cbc:ID>S</cbc:ID>
        <cbc:Percent>7 %</cbc:Percent>
      </cac:TaxCategory>
    </cac:TaxSubtotal>
  </cac:TaxTotal>
  <cac:LegalMonetaryTotal>
    <cbc:LineExtensionAmount currencyID="EUR">37.85</cbc:LineExtensionAmount>
    <cbc:TaxExclusiveAmount currencyID="EUR">37.85</cbc:TaxExclusiveAmount>
    <cbc:TaxInclusiveAmount currencyID="EUR">44.55</cbc:TaxInclusiveAmount>
    <cbc:PayableAmount currencyID="EUR">44.55</cbc:PayableAmount>
  </cac:LegalMonetaryTotal>
  <cac:InvoiceLine>
    <cbc:ID>1</cbc:ID>
    <cbc:InvoicedQuantity>3.000</cbc:InvoicedQuantity>
    <cbc:LineExtensionAmount currencyID="EUR">21.45</cbc:LineExtensionAmount>
    <cac:Item>
      <cbc:Name>USB-C cable 2 m</cbc:Name>
      <cac:SellersItemIdentification>
        <cbc:ID>CAB-USB-C</cbc:ID>
      </cac:SellersItemIdentification>
      <cac:ClassifiedTaxCategory>
        <cbc:Percent>19 %</cbc:Percent>
        <cbc:TaxAmount currencyID="EUR">4.07</cbc:TaxAmount>
      </cac:ClassifiedTaxCategory>
    </cac:Item>
    <cac:Price>
      <cbc:PriceAmount currencyID="EUR">7.15</cbc:PriceAmount>
    </cac:Price>
  </cac:InvoiceLine>
  <cac:InvoiceLine>
    <cbc:ID>2</cbc:ID>
    <cbc:InvoicedQuantity>1.000</cbc:InvoicedQuantity>
    <cbc:LineExtensionAmount currencyID="EUR">12.35</cbc:LineExtensionAmount>
    <cac:Item>
      <cbc:Name>USB-C to HDMI adapter</cbc:Name>
      <cac:SellersItemIdentification>
        <cbc:ID>ADP-HDMI</cbc:ID>
      </cac:SellersItemIdentification>
      <cac:ClassifiedTaxCategory>
        <cbc:Percent>19 %</cbc:Percent>
        <cbc:TaxAmount currencyID="EUR">2.35</cbc:TaxAmount>
      </cac:ClassifiedTaxCategory>
    </cac:Item>
    <cac:Price>
      <cbc:PriceAmount currencyID="EUR">12.35</cbc:PriceAmount>
    </cac:Price>
  </cac:InvoiceLine>
  <cac:InvoiceLine>
    <cbc:ID>3</cbc:ID>
    <cbc:InvoicedQuantity>1.000</cbc:InvoicedQuantity>
    <cbc:LineExtensionAmount currencyID="EUR">4.05</cbc:LineExtensionAmount>
    <cac:Item>
      <cbc:Name>Printed manual (DE)</cbc:Name>
      <cac:SellersItemIdentification>
        <cbc:ID>MAN-DE</cbc:ID>
      </cac:SellersItemIdentification>
      <cac:ClassifiedTaxCategory>
        <cbc:Percent>7 %</cbc:Percent>
        <cbc:TaxAmount currencyID="EUR">0.28</cbc:TaxAmount>
      </cac:ClassifiedTaxCategory>
    </cac:Item>
    <cac:Price>
      <cbc:PriceAmount currencyID="EUR">4.05</cbc:PriceAmount>
    </cac:Price>
  </cac:InvoiceLine>
</Invoice>`)

var moneyTestGo = goSrc(`
package money

import (
    "errors"
    "testing"
)

func TestParse(t *testing.T) {
    tests := []struct {
        in      string
        want    Amount
        wantErr error
    }{
        {"0", 0, nil},
        {"12.34", 1234, nil},
        {"12.3", 1230, nil},
        {"-0.5", -50, nil},
        {"+7", 700, nil},
        {".05", 5, nil},
        {"1,234.50", 123450, nil},
        {"  42.00 ", 4200, nil},
        {"", 0, ErrSyntax},
        {"-", 0, ErrSyntax},
        {"abc", 0, ErrSyntax},
        {"1.234", 0, ErrSyntax},
        {"1.2.3", 0, ErrSyntax},
        {"92233720368547758.08", 0, ErrOverflow},
    }
    for _, tt := range tests {
        got, err := Parse(tt.in)
        if !errors.Is(err, tt.wantErr) || got != tt.want {
            t.Errorf("Parse(%q) = %d, %v; want %d, %v", tt.in, got, err, tt.want, tt.wantErr)
        }
    }
}

func TestString(t *testing.T) {
    for a, want := range map[Amount]string{0: "0.00", 5: "0.05", -5: "-0.05", 1234: "12.34", -123450: "-1234.50"} {
        if got := a.String(); got != want {
            t.Errorf("Amount(%d).String() = %q, want %q", int64(a), got, want)
        }
    }
}

func TestMulRat(t *testing.T) {
    tests := []struct {
        a        Amount
        num, den int64
        mode     RoundingMode
        want     Amount
    }{
        {1000, 1900, 10000, HalfUp, 190},
        {5, 1, 10, HalfUp, 1},     // 0.5 cent -> 1 cent
        {-5, 1, 10, HalfUp, -1},   // away from zero
        {15, 1, 10, HalfEven, 2},  // 1.5 -> 2
        {25, 1, 10, HalfEven, 2},  // 2.5 -> 2
        {-15, 1, 10, HalfEven, -2},
        {-25, 1, 10, HalfEven, -2},
        {19, 1, 10, Down, 1},
        {-19, 1, 10, Down, -1},
        {2145, 1900, 10000, HalfUp, 408}, // 4.0755
        {3380, 1900, 10000, HalfUp, 642}, // 6.422
    }
    for _, tt := range tests {
        if got := tt.a.MulRat(tt.num, tt.den, tt.mode); got != tt.want {
            t.Errorf("%d.MulRat(%d, %d, %d) = %d, want %d", int64(tt.a), tt.num, tt.den, tt.mode, int64(got), int64(tt.want))
        }
    }
}

func TestAllocate(t *testing.T) {
    tests := []struct {
        a       Amount
        weights []int64
        want    []Amount
    }{
        {100, []int64{1, 1, 1}, []Amount{34, 33, 33}},
        {-100, []int64{1, 1, 1}, []Amount{-34, -33, -33}},
        {642, []int64{2145, 1235}, []Amount{407, 235}},
        {5, []int64{0, 0}, []Amount{0, 0}},
        {1, []int64{3, 7}, []Amount{0, 1}},
    }
    for _, tt := range tests {
        got := tt.a.Allocate(tt.weights)
        if total(tt.weights) != 0 && Sum(got...) != tt.a {
            t.Errorf("Allocate(%d, %v) = %v: parts sum to %d", tt.a, tt.weights, got, Sum(got...))
        }
        for i := range got {
            if got[i] != tt.want[i] {
                t.Errorf("Allocate(%d, %v) = %v, want %v", tt.a, tt.weights, got, tt.want)
                break
            }
        }
    }
}

func total(ws []int64) (s int64) {
    for _, w := range ws {
        s += w
    }
    return s
}
`)

var cacheBench = goSrc(`

func BenchmarkCacheGetParallel(b *testing.B) {
    var calls atomic.Int64
    c := NewCache(time.Hour, fakeLoad(&calls))
    for i := 0; i < 64; i++ {
        c.Get(context.Background(), fmt.Sprintf("RE-%d", i))
    }
    b.ReportAllocs()
    b.RunParallel(func(pb *testing.PB) {
        i := 0
        for pb.Next() {
            c.Get(context.Background(), fmt.Sprintf("RE-%d", i%64))
            i++
        }
    })
}
`)

var readme = text(`
# invoicer

Invoicing service for ACME's B2B shop: computes invoice totals (net, discount,
VAT per rate), stores invoices, and renders them as PDF and as XRechnung
(EN 16931 UBL) XML for public-sector customers.

## Layout

| path                 | what                                                        |
|----------------------|-------------------------------------------------------------|
| cmd/invoicer         | the HTTP server (flags, config, wiring)                     |
| internal/api         | HTTP handlers (chi)                                         |
| internal/invoice     | totals: line nets, discounts, VAT; golden tests in testdata |
| internal/money       | exact currency amounts in cents; vendored by billing-export |
| internal/render      | PDF and XRechnung output; golden files in testdata          |
| internal/store       | invoice repository (Postgres, in-memory for tests), cache   |
| docs/rounding.md     | the rounding rules finance signed off on                    |

## Development

    make test        # go vet + go test ./...
    make race        # go test -race ./...
    make golden      # regenerate golden files (needs finance sign-off!)
    make run         # start on :8080 with the in-memory store

Money is always ‵money.Amount‵ (int64 cents). Never use float64 for amounts.
VAT is computed per rate on the summed base, see docs/rounding.md.

## Releasing

Tag ‵vX.Y.Z‵ on main; the release workflow builds the container image and
deploys to staging. Production deploys are manual (‵make deploy-prod‵).
`)

var makefile = text(`
GO ?= go
PKGS := ./...

.PHONY: test race golden run lint deploy-prod

test:
	$(GO) vet $(PKGS)
	$(GO) test $(PKGS)

race:
	$(GO) test -race -count=3 $(PKGS)

golden:
	@echo "Regenerating golden files. Get finance sign-off before committing!"
	$(GO) test ./internal/invoice -run TestGolden -update
	$(GO) test ./internal/render -run Golden -update

lint:
	staticcheck $(PKGS)

run:
	$(GO) run ./cmd/invoicer -store=mem -addr=:8080

deploy-prod:
	./scripts/deploy.sh production
`)

var memRepoGo = goSrc(`
package store

import (
    "context"
    "errors"
    "fmt"
    "sync"
    "time"

    "github.com/acme/invoicer/internal/invoice"
)

// ErrNotFound reports an unknown invoice number.
var ErrNotFound = errors.New("store: invoice not found")

// ErrIssued reports a change to an invoice that was already issued.
var ErrIssued = errors.New("store: invoice already issued")

// Repo stores invoices.
type Repo interface {
    Create(ctx context.Context, inv *invoice.Invoice) (number string, err error)
    Get(ctx context.Context, number string) (*invoice.Invoice, error)
    Issue(ctx context.Context, number string, at time.Time) error
    Totals(ctx context.Context, number string) (invoice.Totals, error)
}

// MemRepo is an in-memory Repo for tests and local development.
type MemRepo struct {
    mu       sync.Mutex
    next     int
    invoices map[string]*stored
}

type stored struct {
    inv    invoice.Invoice
    issued bool
}

// NewMemRepo returns an empty repository.
func NewMemRepo() *MemRepo {
    return &MemRepo{next: 1, invoices: map[string]*stored{}}
}

// Create stores a copy of inv and returns its new number.
func (r *MemRepo) Create(_ context.Context, inv *invoice.Invoice) (string, error) {
    r.mu.Lock()
    defer r.mu.Unlock()
    number := fmt.Sprintf("RE-%d-%05d", inv.IssuedAt.Year(), r.next)
    r.next++
    cp := *inv
    cp.Number = number
    cp.Lines = append([]invoice.Line(nil), inv.Lines...)
    r.invoices[number] = &stored{inv: cp}
    return number, nil
}

// Get returns a copy of the invoice.
func (r *MemRepo) Get(_ context.Context, number string) (*invoice.Invoice, error) {
    r.mu.Lock()
    defer r.mu.Unlock()
    s, ok := r.invoices[number]
    if !ok {
        return nil, ErrNotFound
    }
    cp := s.inv
    return &cp, nil
}

// Issue marks the invoice issued at the given time.
func (r *MemRepo) Issue(_ context.Context, number string, at time.Time) error {
    r.mu.Lock()
    defer r.mu.Unlock()
    s, ok := r.invoices[number]
    if !ok {
        return ErrNotFound
    }
    if s.issued {
        return fmt.Errorf("%s: %w", number, ErrIssued)
    }
    s.issued = true
    s.inv.IssuedAt = at
    return nil
}

// Totals computes the totals of a stored invoice.
func (r *MemRepo) Totals(ctx context.Context, number string) (invoice.Totals, error) {
    inv, err := r.Get(ctx, number)
    if err != nil {
        return invoice.Totals{}, err
    }
    return invoice.Compute(inv)
}
`)

var parseSignOld = goSrc(`
    neg := false
    if s[0] == '-' || s[0] == '+' {
        neg = s[0] == '-'
        s = s[1:]
    }
`)

var parseSignNew = goSrc(`
    neg := false
    if s[0] == '-' || s[0] == '+' {
        neg = s[0] == '-'
        s = s[1:]
    }
    if s == "" || s == "." {
        return 0, fmt.Errorf("%w: no digits", ErrSyntax)
    }
`)
