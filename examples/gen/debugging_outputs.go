package main

// Real outputs of the go toolchain on the invoicer sources of this
// directory (go test, go test -race), recorded once.

var outTestAll = `--- FAIL: TestTotals (0.00s)
    --- FAIL: TestTotals/three_lines_mixed_rates (0.00s)
        invoice_test.go:90: gross/tax = 44.56/6.71, want 44.55/6.70
    --- FAIL: TestTotals/discount_then_tax (0.00s)
        invoice_test.go:90: gross/tax = 106.50/17.00, want 106.51/17.01
    --- FAIL: TestTotals/many_small_lines (0.00s)
        invoice_test.go:90: gross/tax = 0.20/0.05, want 0.18/0.03
--- FAIL: TestGolden (0.00s)
    --- FAIL: TestGolden/mixed_rates (0.00s)
        invoice_test.go:135: totals mismatch (-want +got):
              invoice.Totals{
              	Subtotal: s"37.85",
              	Discount: s"0.00",
              	Net:      s"37.85",
            - 	Tax:      s"6.70",
            + 	Tax:      s"6.71",
            - 	Gross:    s"44.55",
            + 	Gross:    s"44.56",
              	ByRate: []invoice.RateTotal{
              		{
              			RateBP: 1900,
              			Base:   s"33.80",
            - 			Tax:    s"6.42",
            + 			Tax:    s"6.43",
              		},
              		{RateBP: 700, Base: s"4.05", Tax: s"0.28"},
              	},
              	LineTax: []money.Amount{
            - 		s"4.07",
            + 		s"4.08",
              		s"2.35",
              		s"0.28",
              	},
              }
FAIL
FAIL	github.com/acme/invoicer/internal/invoice	0.004s
?   	github.com/acme/invoicer/internal/money	[no test files]
ok  	github.com/acme/invoicer/internal/store	(cached)
FAIL
`

var outFocused = `=== RUN   TestTotals
=== RUN   TestTotals/three_lines_mixed_rates
    invoice_test.go:90: gross/tax = 44.56/6.71, want 44.55/6.70
--- FAIL: TestTotals (0.00s)
    --- FAIL: TestTotals/three_lines_mixed_rates (0.00s)
FAIL
FAIL	github.com/acme/invoicer/internal/invoice	0.003s
FAIL
`

var outMid = `--- FAIL: TestTotals (0.00s)
    --- FAIL: TestTotals/three_lines_mixed_rates (0.00s)
        invoice_test.go:93: line taxes sum to 6.71, want the total tax 6.70
    --- FAIL: TestTotals/discount_then_tax (0.00s)
        invoice_test.go:93: line taxes sum to 17.00, want the total tax 17.01
    --- FAIL: TestTotals/many_small_lines (0.00s)
        invoice_test.go:93: line taxes sum to 0.05, want the total tax 0.03
--- FAIL: TestGolden (0.00s)
    --- FAIL: TestGolden/mixed_rates (0.00s)
        invoice_test.go:135: totals mismatch (-want +got):
              invoice.Totals{
              	... // 4 identical fields
              	Gross:  s"44.55",
              	ByRate: {{RateBP: 1900, Base: s"33.80", Tax: s"6.42"}, {RateBP: 700, Base: s"4.05", Tax: s"0.28"}},
              	LineTax: []money.Amount{
            - 		s"4.07",
            + 		s"4.08",
              		s"2.35",
              		s"0.28",
              	},
              }
FAIL
FAIL	github.com/acme/invoicer/internal/invoice	0.004s
FAIL
`

var outFinalV = `=== RUN   TestTotals
=== RUN   TestTotals/single_line
=== RUN   TestTotals/two_rates
=== RUN   TestTotals/three_lines_mixed_rates
=== RUN   TestTotals/discount_then_tax
=== RUN   TestTotals/fractional_quantity
=== RUN   TestTotals/shipping_at_standard_rate
=== RUN   TestTotals/many_small_lines
--- PASS: TestTotals (0.00s)
    --- PASS: TestTotals/single_line (0.00s)
    --- PASS: TestTotals/two_rates (0.00s)
    --- PASS: TestTotals/three_lines_mixed_rates (0.00s)
    --- PASS: TestTotals/discount_then_tax (0.00s)
    --- PASS: TestTotals/fractional_quantity (0.00s)
    --- PASS: TestTotals/shipping_at_standard_rate (0.00s)
    --- PASS: TestTotals/many_small_lines (0.00s)
=== RUN   TestValidate
--- PASS: TestValidate (0.00s)
=== RUN   TestGolden
=== RUN   TestGolden/mixed_rates
--- PASS: TestGolden (0.00s)
    --- PASS: TestGolden/mixed_rates (0.00s)
PASS
ok  	github.com/acme/invoicer/internal/invoice	0.005s
`

var outRace = `==================
WARNING: DATA RACE
Read at 0x00c00007f080 by goroutine 11:
  runtime.mapaccess2_faststr()
      /usr/local/go/src/internal/runtime/maps/runtime_faststr.go:161 +0x0
  github.com/acme/invoicer/internal/store.(*Cache).Get()
      /home/dana/src/invoicer/internal/store/cache.go:38 +0xe4
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate.func1()
      /home/dana/src/invoicer/internal/store/cache_test.go:65 +0x1c5
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate.gowrap1()
      /home/dana/src/invoicer/internal/store/cache_test.go:70 +0x38

Previous write at 0x00c00007f080 by goroutine 10:
  runtime.mapdelete_faststr()
      /usr/local/go/src/internal/runtime/maps/runtime_faststr.go:402 +0x0
  github.com/acme/invoicer/internal/store.(*Cache).Invalidate()
      /home/dana/src/invoicer/internal/store/cache.go:66 +0x6d
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate.func1()
      /home/dana/src/invoicer/internal/store/cache_test.go:62 +0x19a
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate.gowrap1()
      /home/dana/src/invoicer/internal/store/cache_test.go:70 +0x38

Goroutine 11 (running) created at:
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate()
      /home/dana/src/invoicer/internal/store/cache_test.go:57 +0x22b
  testing.tRunner()
      /usr/local/go/src/testing/testing.go:2036 +0x21c
  testing.(*T).Run.gowrap1()
      /usr/local/go/src/testing/testing.go:2101 +0x38

Goroutine 10 (finished) created at:
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate()
      /home/dana/src/invoicer/internal/store/cache_test.go:57 +0x22b
  testing.tRunner()
      /usr/local/go/src/testing/testing.go:2036 +0x21c
  testing.(*T).Run.gowrap1()
      /usr/local/go/src/testing/testing.go:2101 +0x38
==================
==================
WARNING: DATA RACE
Read at 0x00c00007f080 by goroutine 17:
  runtime.mapaccess2_faststr()
      /usr/local/go/src/internal/runtime/maps/runtime_faststr.go:161 +0x0
  github.com/acme/invoicer/internal/store.(*Cache).Get()
      /home/dana/src/invoicer/internal/store/cache.go:38 +0xe4
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate.func1()
      /home/dana/src/invoicer/internal/store/cache_test.go:65 +0x1c5
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate.gowrap1()
      /home/dana/src/invoicer/internal/store/cache_test.go:70 +0x38

Previous write at 0x00c00007f080 by goroutine 11:
  runtime.mapassign_faststr()
      /usr/local/go/src/internal/runtime/maps/runtime_faststr.go:263 +0x0
  github.com/acme/invoicer/internal/store.(*Cache).Get()
      /home/dana/src/invoicer/internal/store/cache.go:58 +0x694
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate.func1()
      /home/dana/src/invoicer/internal/store/cache_test.go:65 +0x1c5
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate.gowrap1()
      /home/dana/src/invoicer/internal/store/cache_test.go:70 +0x38

Goroutine 17 (running) created at:
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate()
      /home/dana/src/invoicer/internal/store/cache_test.go:57 +0x22b
  testing.tRunner()
      /usr/local/go/src/testing/testing.go:2036 +0x21c
  testing.(*T).Run.gowrap1()
      /usr/local/go/src/testing/testing.go:2101 +0x38

Goroutine 11 (running) created at:
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate()
      /home/dana/src/invoicer/internal/store/cache_test.go:57 +0x22b
  testing.tRunner()
      /usr/local/go/src/testing/testing.go:2036 +0x21c
  testing.(*T).Run.gowrap1()
      /usr/local/go/src/testing/testing.go:2101 +0x38
==================
==================
WARNING: DATA RACE
Read at 0x00c0000b22b8 by goroutine 17:
  github.com/acme/invoicer/internal/store.(*Cache).Get()
      /home/dana/src/invoicer/internal/store/cache.go:39 +0x8b0
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate.func1()
      /home/dana/src/invoicer/internal/store/cache_test.go:65 +0x1c5
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate.gowrap1()
      /home/dana/src/invoicer/internal/store/cache_test.go:70 +0x38

Previous write at 0x00c0000b22b8 by goroutine 11:
  github.com/acme/invoicer/internal/store.(*Cache).Get()
      /home/dana/src/invoicer/internal/store/cache.go:39 +0x8d1
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate.func1()
      /home/dana/src/invoicer/internal/store/cache_test.go:65 +0x1c5
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate.gowrap1()
      /home/dana/src/invoicer/internal/store/cache_test.go:70 +0x38

Goroutine 17 (running) created at:
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate()
      /home/dana/src/invoicer/internal/store/cache_test.go:57 +0x22b
  testing.tRunner()
      /usr/local/go/src/testing/testing.go:2036 +0x21c
  testing.(*T).Run.gowrap1()
      /usr/local/go/src/testing/testing.go:2101 +0x38

Goroutine 11 (running) created at:
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate()
      /home/dana/src/invoicer/internal/store/cache_test.go:57 +0x22b
  testing.tRunner()
      /usr/local/go/src/testing/testing.go:2036 +0x21c
  testing.(*T).Run.gowrap1()
      /usr/local/go/src/testing/testing.go:2101 +0x38
==================
==================
WARNING: DATA RACE
Write at 0x00c0000b22b8 by goroutine 11:
  github.com/acme/invoicer/internal/store.(*Cache).Get()
      /home/dana/src/invoicer/internal/store/cache.go:39 +0x8d1
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate.func1()
      /home/dana/src/invoicer/internal/store/cache_test.go:65 +0x1c5
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate.gowrap1()
      /home/dana/src/invoicer/internal/store/cache_test.go:70 +0x38

Previous write at 0x00c0000b22b8 by goroutine 17:
  github.com/acme/invoicer/internal/store.(*Cache).Get()
      /home/dana/src/invoicer/internal/store/cache.go:39 +0x8d1
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate.func1()
      /home/dana/src/invoicer/internal/store/cache_test.go:65 +0x1c5
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate.gowrap1()
      /home/dana/src/invoicer/internal/store/cache_test.go:70 +0x38

Goroutine 11 (running) created at:
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate()
      /home/dana/src/invoicer/internal/store/cache_test.go:57 +0x22b
  testing.tRunner()
      /usr/local/go/src/testing/testing.go:2036 +0x21c
  testing.(*T).Run.gowrap1()
      /usr/local/go/src/testing/testing.go:2101 +0x38

Goroutine 17 (running) created at:
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate()
      /home/dana/src/invoicer/internal/store/cache_test.go:57 +0x22b
  testing.tRunner()
      /usr/local/go/src/testing/testing.go:2036 +0x21c
  testing.(*T).Run.gowrap1()
      /usr/local/go/src/testing/testing.go:2101 +0x38
==================
==================
WARNING: DATA RACE
Read at 0x00c00010e1a0 by goroutine 17:
  github.com/acme/invoicer/internal/store.(*Cache).Get()
      /home/dana/src/invoicer/internal/store/cache.go:38 +0xfa
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate.func1()
      /home/dana/src/invoicer/internal/store/cache_test.go:65 +0x1c5
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate.gowrap1()
      /home/dana/src/invoicer/internal/store/cache_test.go:70 +0x38

Previous write at 0x00c00010e1a0 by goroutine 11:
  github.com/acme/invoicer/internal/store.(*Cache).Get()
      /home/dana/src/invoicer/internal/store/cache.go:58 +0x6a8
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate.func1()
      /home/dana/src/invoicer/internal/store/cache_test.go:65 +0x1c5
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate.gowrap1()
      /home/dana/src/invoicer/internal/store/cache_test.go:70 +0x38

Goroutine 17 (running) created at:
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate()
      /home/dana/src/invoicer/internal/store/cache_test.go:57 +0x22b
  testing.tRunner()
      /usr/local/go/src/testing/testing.go:2036 +0x21c
  testing.(*T).Run.gowrap1()
      /usr/local/go/src/testing/testing.go:2101 +0x38

Goroutine 11 (running) created at:
  github.com/acme/invoicer/internal/store.TestCacheConcurrentInvalidate()
      /home/dana/src/invoicer/internal/store/cache_test.go:57 +0x22b
  testing.tRunner()
      /usr/local/go/src/testing/testing.go:2036 +0x21c
  testing.(*T).Run.gowrap1()
      /usr/local/go/src/testing/testing.go:2101 +0x38
==================
--- FAIL: TestCacheConcurrentInvalidate (0.01s)
    testing.go:1712: race detected during execution of test
FAIL
FAIL	github.com/acme/invoicer/internal/store	0.019s
FAIL
`

var outRaceFix = `ok  	github.com/acme/invoicer/internal/store	1.072s
`

var outReg = `=== RUN   TestTotalsManyHalfCentLines
--- PASS: TestTotalsManyHalfCentLines (0.00s)
PASS
ok  	github.com/acme/invoicer/internal/invoice	0.003s
`

var outRegBuggy = `--- FAIL: TestTotalsManyHalfCentLines (0.00s)
    invoice_test.go:166: tax/gross = 1.60/21.60, want 1.40/21.40
FAIL
FAIL	github.com/acme/invoicer/internal/invoice	0.005s
FAIL
`
var outMoney = `--- FAIL: TestParse (0.00s)
    money_test.go:32: Parse("-") = 0, <nil>; want 0, money: invalid amount
FAIL
FAIL	github.com/acme/invoicer/internal/money	0.009s
FAIL
`

var outMoneyFixed = `=== RUN   TestParse
--- PASS: TestParse (0.00s)
=== RUN   TestString
--- PASS: TestString (0.00s)
=== RUN   TestMulRat
--- PASS: TestMulRat (0.00s)
=== RUN   TestAllocate
--- PASS: TestAllocate (0.00s)
PASS
ok  	github.com/acme/invoicer/internal/money	0.012s
`
