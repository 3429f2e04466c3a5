package main

// Sources of the fictional invoicer service the debugging session works on.

var goMod = text(`
module github.com/acme/invoicer

go 1.22

require (
	github.com/go-chi/chi/v5 v5.0.12
	github.com/google/go-cmp v0.6.0
	golang.org/x/sync v0.7.0
)
`)

var ciYml = text(`
name: ci
on:
  push:
    branches: [main]
  pull_request:
  schedule:
    - cron: "17 2 * * *"   # nightly race run

jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-go@v5
        with:
          go-version: "1.22.x"
      - run: go vet ./...
      - run: go test ./...

  race:
    if: github.event_name == 'schedule'
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-go@v5
        with:
          go-version: "1.22.x"
      - run: go test -race -count=3 ./...
`)

var moneyGo = goSrc(`
// Package money represents currency amounts as integer minor units (cents),
// so that arithmetic is exact and rounding happens only where it is asked for.
package money

import (
    "errors"
    "fmt"
    "math"
    "strconv"
    "strings"
)

// Amount is a currency amount in minor units (cents for EUR and USD).
type Amount int64

// RoundingMode selects how MulRat rounds a result that falls between two cents.
type RoundingMode int

const (
    // HalfUp rounds halves away from zero: 0.005 -> 0.01. Invoices use it.
    HalfUp RoundingMode = iota
    // HalfEven rounds halves to the even neighbour (banker's rounding), as
    // the ledger export does.
    HalfEven
    // Down truncates toward zero.
    Down
)

// ErrSyntax reports a string that is not an amount.
var ErrSyntax = errors.New("money: invalid amount")

// ErrOverflow reports a result that does not fit in an Amount.
var ErrOverflow = errors.New("money: overflow")

// Parse reads "12.34", "-0.5" or "1,234.50" as an Amount.
func Parse(s string) (Amount, error) {
    s = strings.ReplaceAll(strings.TrimSpace(s), ",", "")
    if s == "" {
        return 0, ErrSyntax
    }
    neg := false
    if s[0] == '-' || s[0] == '+' {
        neg = s[0] == '-'
        s = s[1:]
    }
    whole, frac, _ := strings.Cut(s, ".")
    if len(frac) > 2 {
        return 0, fmt.Errorf("%w: %q has more than two decimals", ErrSyntax, s)
    }
    for len(frac) < 2 {
        frac += "0"
    }
    if whole == "" {
        whole = "0"
    }
    w, err := strconv.ParseInt(whole, 10, 64)
    if err != nil {
        return 0, fmt.Errorf("%w: %q", ErrSyntax, s)
    }
    f, err := strconv.ParseInt(frac, 10, 64)
    if err != nil {
        return 0, fmt.Errorf("%w: %q", ErrSyntax, s)
    }
    if w > (math.MaxInt64-f)/100 {
        return 0, ErrOverflow
    }
    a := Amount(w*100 + f)
    if neg {
        a = -a
    }
    return a, nil
}

// MustParse is Parse for tests and constants; it panics on error.
func MustParse(s string) Amount {
    a, err := Parse(s)
    if err != nil {
        panic(err)
    }
    return a
}

// String formats the amount with two decimals: "-12.30".
func (a Amount) String() string {
    sign := ""
    v := int64(a)
    if v < 0 {
        sign = "-"
        v = -v
    }
    return fmt.Sprintf("%s%d.%02d", sign, v/100, v%100)
}

// Add returns a+b.
func (a Amount) Add(b Amount) Amount { return a + b }

// Sub returns a-b.
func (a Amount) Sub(b Amount) Amount { return a - b }

// MulRat returns a*num/den rounded with mode. den must be positive.
func (a Amount) MulRat(num, den int64, mode RoundingMode) Amount {
    if den <= 0 {
        panic("money: MulRat with non-positive denominator")
    }
    p := int64(a) * num
    q, r := p/den, p%den
    if r == 0 {
        return Amount(q)
    }
    neg := (p < 0) != (den < 0)
    if r < 0 {
        r = -r
    }
    away := false
    switch mode {
    case HalfUp:
        away = 2*r >= den
    case HalfEven:
        away = 2*r > den || (2*r == den && q%2 != 0)
    case Down:
        away = false
    }
    if away {
        if neg {
            q--
        } else {
            q++
        }
    }
    return Amount(q)
}

// Percent returns a*bp/10000 (bp in basis points, 1900 = 19 %) rounded half up.
func (a Amount) Percent(bp int64) Amount { return a.MulRat(bp, 10000, HalfUp) }

// Allocate splits a into parts proportional to weights. The parts sum to a
// exactly: the cents left over by truncation go to the parts with the
// largest remainders, earlier parts first on ties.
func (a Amount) Allocate(weights []int64) []Amount {
    var total int64
    for _, w := range weights {
        total += w
    }
    parts := make([]Amount, len(weights))
    if total == 0 {
        return parts
    }
    type rem struct {
        i int
        r int64
    }
    rems := make([]rem, len(weights))
    var sum Amount
    for i, w := range weights {
        p := int64(a) * w
        parts[i] = Amount(p / total)
        rems[i] = rem{i, p % total}
        sum += parts[i]
    }
    left := a - sum
    for left != 0 {
        best := -1
        for j, r := range rems {
            if best < 0 || r.r > rems[best].r {
                best = j
            }
        }
        if left > 0 {
            parts[rems[best].i]++
            left--
        } else {
            parts[rems[best].i]--
            left++
        }
        rems[best].r = -1
    }
    return parts
}

// Sum adds amounts.
func Sum(as ...Amount) Amount {
    var s Amount
    for _, a := range as {
        s += a
    }
    return s
}
`)

var invoiceGo = goSrc(`
// Package invoice computes invoice totals: line amounts, discounts and VAT
// per rate, with the rounding rules finance signed off on (docs/rounding.md).
package invoice

import (
    "errors"
    "fmt"
    "sort"
    "time"

    "github.com/acme/invoicer/internal/money"
)

// Line is one invoice line.
type Line struct {
    SKU         string       ‵json:"sku"‵
    Description string       ‵json:"description"‵
    Quantity    int64        ‵json:"quantity"‵    // in thousandths: 1500 = 1.5 units
    UnitPrice   money.Amount ‵json:"unit_price"‵  // net, per unit
    TaxRateBP   int64        ‵json:"tax_rate_bp"‵ // VAT in basis points: 1900 = 19 %
}

// Net returns quantity × unit price, rounded half up to the cent.
func (l Line) Net() money.Amount {
    return l.UnitPrice.MulRat(l.Quantity, 1000, money.HalfUp)
}

// Invoice is a draft or issued invoice.
type Invoice struct {
    Number     string       ‵json:"number"‵
    Customer   string       ‵json:"customer"‵
    IssuedAt   time.Time    ‵json:"issued_at"‵
    Currency   string       ‵json:"currency"‵
    Lines      []Line       ‵json:"lines"‵
    DiscountBP int64        ‵json:"discount_bp"‵ // invoice-level discount, basis points
    Shipping   money.Amount ‵json:"shipping"‵    // taxed at the standard rate
}

// RateTotal is the VAT owed for one rate.
type RateTotal struct {
    RateBP int64        ‵json:"rate_bp"‵
    Base   money.Amount ‵json:"base"‵
    Tax    money.Amount ‵json:"tax"‵
}

// Totals is the computed summary of an invoice.
type Totals struct {
    Subtotal money.Amount ‵json:"subtotal"‵ // sum of line nets
    Discount money.Amount ‵json:"discount"‵
    Net      money.Amount ‵json:"net"‵ // subtotal - discount + shipping
    Tax      money.Amount ‵json:"tax"‵
    Gross    money.Amount ‵json:"gross"‵
    ByRate   []RateTotal  ‵json:"by_rate"‵
    // LineTax is the VAT of each line, in line order, for the per-line
    // breakdown of the e-invoice export (XRechnung BT-117 per line).
    LineTax []money.Amount ‵json:"line_tax"‵
}

// StandardRateBP is the rate shipping is taxed at.
const StandardRateBP = 1900

var (
    ErrNoLines       = errors.New("invoice: no lines")
    ErrBadQuantity   = errors.New("invoice: quantity must be positive")
    ErrBadDiscount   = errors.New("invoice: discount must be between 0 and 100 %")
    ErrMixedCurrency = errors.New("invoice: lines in more than one currency")
)

// Validate checks an invoice before totals are computed.
func (inv *Invoice) Validate() error {
    if len(inv.Lines) == 0 {
        return ErrNoLines
    }
    for i, l := range inv.Lines {
        if l.Quantity <= 0 {
            return fmt.Errorf("line %d (%s): %w", i+1, l.SKU, ErrBadQuantity)
        }
        if l.TaxRateBP < 0 || l.TaxRateBP > 10000 {
            return fmt.Errorf("line %d (%s): tax rate %d bp out of range", i+1, l.SKU, l.TaxRateBP)
        }
    }
    if inv.DiscountBP < 0 || inv.DiscountBP > 10000 {
        return ErrBadDiscount
    }
    return nil
}

`) + computeBuggy

var taxGo = goSrc(`
package invoice

import (
    "fmt"
    "strings"

    "github.com/acme/invoicer/internal/money"
)

// Category is the VAT category code of the e-invoice (UNTDID 5305).
type Category string

const (
    CategoryStandard Category = "S" // standard or reduced rate
    CategoryZero     Category = "Z" // zero rated
    CategoryExempt   Category = "E" // exempt (reason required)
    CategoryReverse  Category = "AE"
)

// CategoryFor returns the category of a rate.
func CategoryFor(rateBP int64, reverseCharge bool) Category {
    switch {
    case reverseCharge:
        return CategoryReverse
    case rateBP == 0:
        return CategoryZero
    default:
        return CategoryStandard
    }
}

// Breakdown is the per-rate tax summary printed at the foot of the invoice.
type Breakdown struct {
    Category Category
    RateBP   int64
    Base     money.Amount
    Tax      money.Amount
}

// Breakdowns returns the tax summary lines of t, highest rate first.
func Breakdowns(t Totals, reverseCharge bool) []Breakdown {
    out := make([]Breakdown, 0, len(t.ByRate))
    for _, rt := range t.ByRate {
        out = append(out, Breakdown{
            Category: CategoryFor(rt.RateBP, reverseCharge),
            RateBP:   rt.RateBP,
            Base:     rt.Base,
            Tax:      rt.Tax,
        })
    }
    return out
}

// FormatRate formats basis points as a percentage: 1900 -> "19 %", 550 -> "5.5 %".
func FormatRate(bp int64) string {
    s := fmt.Sprintf("%d.%02d", bp/100, bp%100)
    s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
    return s + " %"
}

// String renders a breakdown line: "S 19 % on 100.00 = 19.00".
func (b Breakdown) String() string {
    return fmt.Sprintf("%s %s on %s = %s", b.Category, FormatRate(b.RateBP), b.Base, b.Tax)
}
`)

var invoiceTestGo = goSrc(`
package invoice

import (
    "encoding/json"
    "flag"
    "os"
    "path/filepath"
    "testing"

    "github.com/google/go-cmp/cmp"

    "github.com/acme/invoicer/internal/money"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func m(s string) money.Amount { return money.MustParse(s) }

func TestTotals(t *testing.T) {
    tests := []struct {
        name  string
        inv   Invoice
        gross string
        tax   string
    }{
        {
            name:  "single line",
            inv:   Invoice{Lines: []Line{{SKU: "A-1", Quantity: 1000, UnitPrice: m("100.00"), TaxRateBP: 1900}}},
            gross: "119.00", tax: "19.00",
        },
        {
            name: "two rates",
            inv: Invoice{Lines: []Line{
                {SKU: "BOOK-7", Quantity: 2000, UnitPrice: m("12.99"), TaxRateBP: 700},
                {SKU: "PEN-3", Quantity: 3000, UnitPrice: m("1.49"), TaxRateBP: 1900},
            }},
            gross: "33.12", tax: "2.67",
        },
        {
            name: "three lines mixed rates",
            inv: Invoice{Lines: []Line{
                {SKU: "CAB-USB-C", Quantity: 3000, UnitPrice: m("7.15"), TaxRateBP: 1900},
                {SKU: "ADP-HDMI", Quantity: 1000, UnitPrice: m("12.35"), TaxRateBP: 1900},
                {SKU: "MAN-DE", Quantity: 1000, UnitPrice: m("4.05"), TaxRateBP: 700},
            }},
            gross: "44.55", tax: "6.70",
        },
        {
            name: "discount then tax",
            inv: Invoice{DiscountBP: 1000, Lines: []Line{
                {SKU: "SUB-PRO", Quantity: 1000, UnitPrice: m("33.00"), TaxRateBP: 1900},
                {SKU: "SUB-ADDON", Quantity: 2000, UnitPrice: m("16.50"), TaxRateBP: 1900},
                {SKU: "SUB-SEAT", Quantity: 3000, UnitPrice: m("11.15"), TaxRateBP: 1900},
            }},
            gross: "106.51", tax: "17.01",
        },
        {
            name: "fractional quantity",
            inv: Invoice{Lines: []Line{
                {SKU: "CONSULT-H", Quantity: 2750, UnitPrice: m("95.00"), TaxRateBP: 1900},
            }},
            gross: "310.89", tax: "49.64",
        },
        {
            name: "shipping at standard rate",
            inv: Invoice{Shipping: m("4.90"), Lines: []Line{
                {SKU: "BOOK-7", Quantity: 1000, UnitPrice: m("12.99"), TaxRateBP: 700},
            }},
            gross: "19.73", tax: "1.84",
        },
        {
            name: "many small lines",
            inv: Invoice{Lines: []Line{
                {SKU: "SCREW-M3", Quantity: 1000, UnitPrice: m("0.03"), TaxRateBP: 1900},
                {SKU: "SCREW-M4", Quantity: 1000, UnitPrice: m("0.03"), TaxRateBP: 1900},
                {SKU: "NUT-M3", Quantity: 1000, UnitPrice: m("0.03"), TaxRateBP: 1900},
                {SKU: "NUT-M4", Quantity: 1000, UnitPrice: m("0.03"), TaxRateBP: 1900},
                {SKU: "WASHER", Quantity: 1000, UnitPrice: m("0.03"), TaxRateBP: 1900},
            }},
            gross: "0.18", tax: "0.03",
        },
    }
    for _, tt := range tests {
        t.Run(tt.name, func(t *testing.T) {
            got, err := Compute(&tt.inv)
            if err != nil {
                t.Fatal(err)
            }
            if got.Gross.String() != tt.gross || got.Tax.String() != tt.tax {
                t.Errorf("gross/tax = %s/%s, want %s/%s", got.Gross, got.Tax, tt.gross, tt.tax)
            }
            if sum := money.Sum(got.LineTax...); tt.inv.Shipping == 0 && sum != got.Tax {
                t.Errorf("line taxes sum to %s, want the total tax %s", sum, got.Tax)
            }
        })
    }
}

func TestValidate(t *testing.T) {
    for name, inv := range map[string]Invoice{
        "no lines":      {},
        "zero quantity": {Lines: []Line{{SKU: "X", Quantity: 0, UnitPrice: 100}}},
        "discount 120%": {DiscountBP: 12000, Lines: []Line{{SKU: "X", Quantity: 1000, UnitPrice: 100}}},
        "rate 101%":     {Lines: []Line{{SKU: "X", Quantity: 1000, UnitPrice: 100, TaxRateBP: 10100}}},
    } {
        if err := inv.Validate(); err == nil {
            t.Errorf("%s: Validate() = nil, want an error", name)
        }
    }
}

func TestGolden(t *testing.T) {
    files, err := filepath.Glob("testdata/golden/*.input.json")
    if err != nil {
        t.Fatal(err)
    }
    for _, in := range files {
        name := filepath.Base(in[:len(in)-len(".input.json")])
        t.Run(name, func(t *testing.T) {
            var inv Invoice
            readJSON(t, in, &inv)
            got, err := Compute(&inv)
            if err != nil {
                t.Fatal(err)
            }
            want := filepath.Join("testdata/golden", name+".totals.json")
            if *update {
                b, _ := json.MarshalIndent(got, "", "  ")
                os.WriteFile(want, append(b, '\n'), 0o644)
                return
            }
            var exp Totals
            readJSON(t, want, &exp)
            if diff := cmp.Diff(exp, got); diff != "" {
                t.Errorf("totals mismatch (-want +got):\n%s", diff)
            }
        })
    }
}

func readJSON(t *testing.T, path string, v any) {
    t.Helper()
    b, err := os.ReadFile(path)
    if err != nil {
        t.Fatal(err)
    }
    if err := json.Unmarshal(b, v); err != nil {
        t.Fatalf("%s: %v", path, err)
    }
}
`)

var goldenMixedTotals = text(`
{
  "subtotal": 3785,
  "discount": 0,
  "net": 3785,
  "tax": 670,
  "gross": 4455,
  "by_rate": [
    {
      "rate_bp": 1900,
      "base": 3380,
      "tax": 642
    },
    {
      "rate_bp": 700,
      "base": 405,
      "tax": 28
    }
  ],
  "line_tax": [
    407,
    235,
    28
  ]
}
`)

var goldenMixedInput = text(`
{
  "number": "RE-2024-00417",
  "customer": "Kanzlei Hoffmann & Partner",
  "issued_at": "2024-05-02T09:00:00Z",
  "currency": "EUR",
  "lines": [
    {"sku": "CAB-USB-C", "description": "USB-C cable 2 m", "quantity": 3000, "unit_price": 715, "tax_rate_bp": 1900},
    {"sku": "ADP-HDMI", "description": "USB-C to HDMI adapter", "quantity": 1000, "unit_price": 1235, "tax_rate_bp": 1900},
    {"sku": "MAN-DE", "description": "Printed manual (DE)", "quantity": 1000, "unit_price": 405, "tax_rate_bp": 700}
  ],
  "discount_bp": 0,
  "shipping": 0
}
`)

var cacheGo = goSrc(`
package store

import (
    "context"
    "sync"
    "time"

    "github.com/acme/invoicer/internal/invoice"
)

// Cache keeps recently computed invoice totals in memory. Entries expire
// after TTL and are invalidated when the invoice changes.
type Cache struct {
    ttl   time.Duration
    now   func() time.Time
    load  func(ctx context.Context, number string) (invoice.Totals, error)
    group singleflight

    mu      sync.Mutex
    entries map[string]entry
    hits    int64
    misses  int64
}

type entry struct {
    totals  invoice.Totals
    expires time.Time
}

// NewCache returns a cache that computes missing entries with load.
func NewCache(ttl time.Duration, load func(context.Context, string) (invoice.Totals, error)) *Cache {
    return &Cache{ttl: ttl, now: time.Now, load: load, entries: map[string]entry{}}
}

// Get returns the totals of invoice number, loading them on a miss.
func (c *Cache) Get(ctx context.Context, number string) (invoice.Totals, error) {
    // Fast path (#482): most reads hit, so skip the lock when the entry is fresh.
    if e, ok := c.entries[number]; ok && c.now().Before(e.expires) {
        c.hits++
        return e.totals, nil
    }
    c.mu.Lock()
    if e, ok := c.entries[number]; ok && c.now().Before(e.expires) {
        c.hits++
        c.mu.Unlock()
        return e.totals, nil
    }
    c.misses++
    c.mu.Unlock()

    v, err := c.group.do(number, func() (invoice.Totals, error) {
        return c.load(ctx, number)
    })
    if err != nil {
        return invoice.Totals{}, err
    }
    c.mu.Lock()
    c.entries[number] = entry{totals: v, expires: c.now().Add(c.ttl)}
    c.mu.Unlock()
    return v, nil
}

// Invalidate drops the entry of invoice number.
func (c *Cache) Invalidate(number string) {
    c.mu.Lock()
    delete(c.entries, number)
    c.mu.Unlock()
}

// Stats returns the hit and miss counters.
func (c *Cache) Stats() (hits, misses int64) {
    c.mu.Lock()
    defer c.mu.Unlock()
    return c.hits, c.misses
}

// singleflight collapses concurrent loads of the same key.
type singleflight struct {
    mu    sync.Mutex
    calls map[string]*flight
}

type flight struct {
    wg  sync.WaitGroup
    v   invoice.Totals
    err error
}

func (g *singleflight) do(key string, fn func() (invoice.Totals, error)) (invoice.Totals, error) {
    g.mu.Lock()
    if g.calls == nil {
        g.calls = map[string]*flight{}
    }
    if f, ok := g.calls[key]; ok {
        g.mu.Unlock()
        f.wg.Wait()
        return f.v, f.err
    }
    f := &flight{}
    f.wg.Add(1)
    g.calls[key] = f
    g.mu.Unlock()

    f.v, f.err = fn()
    f.wg.Done()

    g.mu.Lock()
    delete(g.calls, key)
    g.mu.Unlock()
    return f.v, f.err
}
`)

var cacheTestGo = goSrc(`
package store

import (
    "context"
    "fmt"
    "sync"
    "sync/atomic"
    "testing"
    "time"

    "github.com/acme/invoicer/internal/invoice"
    "github.com/acme/invoicer/internal/money"
)

func fakeLoad(calls *atomic.Int64) func(context.Context, string) (invoice.Totals, error) {
    return func(_ context.Context, number string) (invoice.Totals, error) {
        calls.Add(1)
        return invoice.Totals{Gross: money.Amount(len(number) * 100)}, nil
    }
}

func TestCacheHit(t *testing.T) {
    var calls atomic.Int64
    c := NewCache(time.Minute, fakeLoad(&calls))
    for i := 0; i < 3; i++ {
        if _, err := c.Get(context.Background(), "RE-1"); err != nil {
            t.Fatal(err)
        }
    }
    if n := calls.Load(); n != 1 {
        t.Fatalf("load called %d times, want 1", n)
    }
    if hits, misses := c.Stats(); hits != 2 || misses != 1 {
        t.Fatalf("stats = %d/%d, want 2/1", hits, misses)
    }
}

func TestCacheExpiry(t *testing.T) {
    var calls atomic.Int64
    now := time.Date(2024, 5, 2, 9, 0, 0, 0, time.UTC)
    c := NewCache(time.Minute, fakeLoad(&calls))
    c.now = func() time.Time { return now }
    c.Get(context.Background(), "RE-1")
    now = now.Add(2 * time.Minute)
    c.Get(context.Background(), "RE-1")
    if n := calls.Load(); n != 2 {
        t.Fatalf("load called %d times, want 2 (entry expired)", n)
    }
}

func TestCacheConcurrentInvalidate(t *testing.T) {
    var calls atomic.Int64
    c := NewCache(time.Minute, fakeLoad(&calls))
    var wg sync.WaitGroup
    for w := 0; w < 8; w++ {
        wg.Add(1)
        go func(w int) {
            defer wg.Done()
            for i := 0; i < 200; i++ {
                n := fmt.Sprintf("RE-%d", i%10)
                if w%2 == 0 {
                    c.Invalidate(n)
                    continue
                }
                if _, err := c.Get(context.Background(), n); err != nil {
                    t.Error(err)
                    return
                }
            }
        }(w)
    }
    wg.Wait()
}
`)

var handlerGo = goSrc(`
// Package api serves the invoicer HTTP API.
package api

import (
    "encoding/json"
    "errors"
    "log/slog"
    "net/http"
    "time"

    "github.com/go-chi/chi/v5"

    "github.com/acme/invoicer/internal/invoice"
    "github.com/acme/invoicer/internal/store"
)

// Server holds the handlers' dependencies.
type Server struct {
    Repo   store.Repo
    Cache  *store.Cache
    Logger *slog.Logger
}

// Routes returns the API router.
func (s *Server) Routes() http.Handler {
    r := chi.NewRouter()
    r.Post("/invoices", s.createInvoice)
    r.Get("/invoices/{number}", s.getInvoice)
    r.Get("/invoices/{number}/totals", s.getTotals)
    r.Post("/invoices/{number}/issue", s.issueInvoice)
    return r
}

type createRequest struct {
    Customer   string         ‵json:"customer"‵
    Currency   string         ‵json:"currency"‵
    Lines      []invoice.Line ‵json:"lines"‵
    DiscountBP int64          ‵json:"discount_bp"‵
}

type invoiceResponse struct {
    Invoice  invoice.Invoice ‵json:"invoice"‵
    Totals   invoice.Totals  ‵json:"totals"‵
    TaxLines []string        ‵json:"tax_lines"‵
}

func (s *Server) createInvoice(w http.ResponseWriter, r *http.Request) {
    var req createRequest
    dec := json.NewDecoder(r.Body)
    dec.DisallowUnknownFields()
    if err := dec.Decode(&req); err != nil {
        httpError(w, http.StatusBadRequest, "invalid JSON: "+err.Error())
        return
    }
    inv := invoice.Invoice{
        Customer:   req.Customer,
        Currency:   req.Currency,
        Lines:      req.Lines,
        DiscountBP: req.DiscountBP,
        IssuedAt:   time.Now().UTC().Truncate(time.Second),
    }
    totals, err := invoice.Compute(&inv)
    if err != nil {
        httpError(w, http.StatusUnprocessableEntity, err.Error())
        return
    }
    number, err := s.Repo.Create(r.Context(), &inv)
    if err != nil {
        s.Logger.Error("create invoice", "err", err)
        httpError(w, http.StatusInternalServerError, "could not store the invoice")
        return
    }
    inv.Number = number
    s.Logger.Info("invoice created", "number", number, "gross", totals.Gross, "at", time.Now().UTC())
    writeJSON(w, http.StatusCreated, invoiceResponse{Invoice: inv, Totals: totals, TaxLines: taxLines(totals)})
}

func (s *Server) getInvoice(w http.ResponseWriter, r *http.Request) {
    number := chi.URLParam(r, "number")
    inv, err := s.Repo.Get(r.Context(), number)
    if errors.Is(err, store.ErrNotFound) {
        httpError(w, http.StatusNotFound, "no invoice "+number)
        return
    }
    if err != nil {
        s.Logger.Error("get invoice", "number", number, "err", err)
        httpError(w, http.StatusInternalServerError, "could not load the invoice")
        return
    }
    totals, err := s.Cache.Get(r.Context(), number)
    if err != nil {
        s.Logger.Error("totals", "number", number, "err", err)
        httpError(w, http.StatusInternalServerError, "could not compute totals")
        return
    }
    writeJSON(w, http.StatusOK, invoiceResponse{Invoice: *inv, Totals: totals, TaxLines: taxLines(totals)})
}

func (s *Server) getTotals(w http.ResponseWriter, r *http.Request) {
    number := chi.URLParam(r, "number")
    totals, err := s.Cache.Get(r.Context(), number)
    if errors.Is(err, store.ErrNotFound) {
        httpError(w, http.StatusNotFound, "no invoice "+number)
        return
    }
    if err != nil {
        httpError(w, http.StatusInternalServerError, "could not compute totals")
        return
    }
    writeJSON(w, http.StatusOK, totals)
}

func (s *Server) issueInvoice(w http.ResponseWriter, r *http.Request) {
    number := chi.URLParam(r, "number")
    if err := s.Repo.Issue(r.Context(), number, time.Now().UTC()); err != nil {
        if errors.Is(err, store.ErrNotFound) {
            httpError(w, http.StatusNotFound, "no invoice "+number)
            return
        }
        httpError(w, http.StatusConflict, err.Error())
        return
    }
    s.Cache.Invalidate(number)
    w.WriteHeader(http.StatusNoContent)
}

func taxLines(t invoice.Totals) []string {
    var out []string
    for _, b := range invoice.Breakdowns(t, false) {
        out = append(out, b.String())
    }
    return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
    w.Header().Set("Content-Type", "application/json")
    w.WriteHeader(status)
    json.NewEncoder(w).Encode(v)
}

func httpError(w http.ResponseWriter, status int, msg string) {
    writeJSON(w, status, map[string]string{"error": msg})
}
`)

var handlerTestGo = goSrc(`
package api

import (
    "encoding/json"
    "io"
    "log/slog"
    "net/http"
    "net/http/httptest"
    "strings"
    "testing"
    "time"

    "github.com/acme/invoicer/internal/store"
)

func newTestServer(t *testing.T) *httptest.Server {
    t.Helper()
    repo := store.NewMemRepo()
    s := &Server{Repo: repo, Cache: store.NewCache(time.Minute, repo.Totals), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
    srv := httptest.NewServer(s.Routes())
    t.Cleanup(srv.Close)
    return srv
}

func TestCreateInvoiceHandler(t *testing.T) {
    srv := newTestServer(t)
    body := ‵{"customer":"ACME GmbH","currency":"EUR","lines":[{"sku":"A-1","quantity":1000,"unit_price":10000,"tax_rate_bp":1900}]}‵
    before := time.Now().UTC().Truncate(time.Second)
    resp, err := http.Post(srv.URL+"/invoices", "application/json", strings.NewReader(body))
    if err != nil {
        t.Fatal(err)
    }
    defer resp.Body.Close()
    if resp.StatusCode != http.StatusCreated {
        t.Fatalf("status = %d, want 201", resp.StatusCode)
    }
    var got invoiceResponse
    if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
        t.Fatal(err)
    }
    if got.Totals.Gross != 11900 {
        t.Errorf("gross = %s, want 119.00", got.Totals.Gross)
    }
    if !got.Invoice.IssuedAt.Equal(before) {
        t.Errorf("issued_at = %s, want %s", got.Invoice.IssuedAt, before)
    }
    if len(got.TaxLines) != 1 || got.TaxLines[0] != "S 19 % on 100.00 = 19.00" {
        t.Errorf("tax lines = %q", got.TaxLines)
    }
}

func TestCreateInvoiceRejectsUnknownFields(t *testing.T) {
    srv := newTestServer(t)
    resp, err := http.Post(srv.URL+"/invoices", "application/json", strings.NewReader(‵{"customer":"x","lines":[],"vat":19}‵))
    if err != nil {
        t.Fatal(err)
    }
    resp.Body.Close()
    if resp.StatusCode != http.StatusBadRequest {
        t.Fatalf("status = %d, want 400", resp.StatusCode)
    }
}

func TestGetTotalsNotFound(t *testing.T) {
    srv := newTestServer(t)
    resp, err := http.Get(srv.URL + "/invoices/RE-404/totals")
    if err != nil {
        t.Fatal(err)
    }
    resp.Body.Close()
    if resp.StatusCode != http.StatusNotFound {
        t.Fatalf("status = %d, want 404", resp.StatusCode)
    }
}
`)

var computeBuggy = goSrc(`
// Compute returns the totals of inv.
//
// Since #482 the tax of every line is computed (and rounded) per line so the
// e-invoice export can show it; the rate totals are the sums of the lines.
func Compute(inv *Invoice) (Totals, error) {
    if err := inv.Validate(); err != nil {
        return Totals{}, err
    }
    var t Totals
    nets := make([]money.Amount, len(inv.Lines))
    for i, l := range inv.Lines {
        nets[i] = l.Net()
        t.Subtotal += nets[i]
    }
    t.Discount = t.Subtotal.Percent(inv.DiscountBP)
    byRate := map[int64]*RateTotal{}
    t.LineTax = make([]money.Amount, len(inv.Lines))
    for i, l := range inv.Lines {
        // The discount is spread over the lines in proportion to their net.
        lineDiscount := discountShare(t.Discount, nets, i)
        base := nets[i] - lineDiscount
        tax := base.Percent(l.TaxRateBP)
        t.LineTax[i] = tax
        rt := byRate[l.TaxRateBP]
        if rt == nil {
            rt = &RateTotal{RateBP: l.TaxRateBP}
            byRate[l.TaxRateBP] = rt
        }
        rt.Base += base
        rt.Tax += tax
    }
    if inv.Shipping != 0 {
        rt := byRate[StandardRateBP]
        if rt == nil {
            rt = &RateTotal{RateBP: StandardRateBP}
            byRate[StandardRateBP] = rt
        }
        rt.Base += inv.Shipping
        rt.Tax += inv.Shipping.Percent(StandardRateBP)
    }
    for _, rt := range byRate {
        t.ByRate = append(t.ByRate, *rt)
        t.Tax += rt.Tax
    }
    sort.Slice(t.ByRate, func(i, j int) bool { return t.ByRate[i].RateBP > t.ByRate[j].RateBP })
    t.Net = t.Subtotal - t.Discount + inv.Shipping
    t.Gross = t.Net + t.Tax
    return t, nil
}

// discountShare returns line i's share of the invoice discount.
func discountShare(discount money.Amount, nets []money.Amount, i int) money.Amount {
    weights := make([]int64, len(nets))
    for j, n := range nets {
        weights[j] = int64(n)
    }
    return discount.Allocate(weights)[i]
}
`)
