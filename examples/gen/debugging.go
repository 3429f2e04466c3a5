package main

import (
	"fmt"
	"strings"
)

const agentSystem = `You are a coding agent working in the user's repository through tools.
Tools: read_file(path, start_line?, end_line?) returns the file with line numbers; run_command(command) runs a shell command in the repository root and returns its output and exit code; grep(pattern, path) searches file contents; edit_file(path, old_string, new_string) replaces one exact occurrence; write_file(path, content) creates or overwrites a file.
Work in small verified steps: reproduce before fixing, run the relevant tests after every change, and report what you verified with the exact commands. Never claim a test passes without running it. Ask before destructive git operations.`

// debuggingSession is a long session: CI is red after a merge, the agent
// reproduces, reads a lot of code, fixes a rounding bug in two steps, then a
// data race, adds a regression test, and finally fixes a flaky handler test.
func debuggingSession() *session {
	s := newSession("dbg", agentSystem)
	const repo = "/home/dana/src/invoicer"

	s.user(text(`
CI on main has been red since #482 ("invoice: per-line tax breakdown + cache fast path") was merged yesterday. ‵go test ./...‵ fails in internal/invoice, and the nightly ‵go test -race‵ job flags internal/store too. Can you find the root cause and fix it?

Constraints:
- don't change the exported API of internal/money (other services vendor it)
- don't regenerate the golden files under internal/invoice/testdata unless the expected numbers really changed — finance signed off on those
- no force pushes, I'll review and push myself

Here's the top of the nightly race job log in case it helps:

‵‵‵
` + nightlyExcerpt() + `
‵‵‵`))

	s.do("I'll start by getting an overview of the repository and the CI configuration.",
		run("git status --short --branch && ls", 0, text(`
## main...origin/main
Makefile
README.md
cmd
docs
go.mod
go.sum
internal`)),
		readFile("README.md", readme),
		readFile("go.mod", goMod),
		readFile("Makefile", makefile),
		readFile(".github/workflows/ci.yml", ciYml),
	)

	s.do("Let me look at the failed CI run first, so I know exactly what CI saw.",
		run("gh run list --branch main --limit 5", 0, text(`
STATUS  TITLE                                                   WORKFLOW  BRANCH  EVENT     ID          ELAPSED  AGE
X       Merge pull request #482 from acme/jw/xrechnung-line-tax  ci        main    push      9141877302  1m12s    about 17 hours ago
X       ci                                                      ci        main    schedule  9147730115  2m41s    about 6 hours ago
✓       Merge pull request #479 from acme/dana/pdf-footer        ci        main    push      9139012271  1m05s    about 1 day ago
✓       ci                                                      ci        main    schedule  9134419934  2m37s    about 1 day ago
✓       Merge pull request #477 from acme/jw/chi-v5             ci        main    push      9131170450  1m09s    about 2 days ago`)),
	)
	s.do("",
		run("gh run view 9141877302 --log-failed | tail -n 60", 0, ciLog(outTestAll)),
	)

	s.do("CI fails in internal/invoice only on the push run. Let me reproduce locally.",
		run("go test ./...", 1, testAllOutput()),
	)

	s.do(text(`
Reproduced: three ‵TestTotals‵ cases and the ‵mixed_rates‵ golden file fail, all by one or two cents, in both directions (6.71 vs 6.70, 17.00 vs 17.01). The store package passes without ‵-race‵. Let me read the invoice package.`),
		readFile("internal/invoice/invoice.go", invoiceGo),
		readFile("internal/invoice/tax.go", taxGo),
	)
	s.do("", readFile("internal/invoice/invoice_test.go", invoiceTestGo))
	s.do("Compute relies on money.Percent and money.Allocate; let me read the money package too.",
		readFile("internal/money/money.go", moneyGo),
	)

	s.do("Now the history: what did #482 change in these files?",
		run("git log --oneline -8", 0, text(`
9c4e1f7 Merge pull request #482 from acme/jw/xrechnung-line-tax
a77f5c9 store: lock-free fast path for cached totals
5e02d3b invoice: compute VAT per line for the XRechnung breakdown
1f9b8c4 render: add XRechnung line-level VAT (BT-117)
3b1d0e2 Merge pull request #479 from acme/dana/pdf-footer
c0a4e91 render: page numbers in the PDF footer
77d2a10 Merge pull request #477 from acme/jw/chi-v5
e3b90f2 api: migrate to chi v5`)),
		run("git show --stat 9c4e1f7", 0, text(`
commit 9c4e1f7a2b0d8e6c51f3a9d0c4b7e2f18a6d3c55
Merge: 3b1d0e2 a77f5c9
Author: Jonas Weber <jonas.weber@acme.example>
Date:   Wed May 1 17:42:10 2024 +0200

    Merge pull request #482 from acme/jw/xrechnung-line-tax

    invoice: per-line tax breakdown + cache fast path

 internal/api/handler.go           |  4 +-
 internal/invoice/invoice.go       | 58 +++++++++++++++++++-----------
 internal/render/xrechnung.go      | 41 +++++++++++++++++++++
 internal/render/xrechnung_test.go | 88 ++++++++++++++++++++++++++++++++++++++++
 internal/store/cache.go           | 12 +++++--
 5 files changed, 176 insertions(+), 27 deletions(-)`)),
	)

	s.do("", run("git show 5e02d3b -- internal/invoice/invoice.go", 0, invoiceDiff))

	s.do(text(`
Found the likely root cause. Before 5e02d3b, VAT was computed **once per rate** on the summed (discounted) base. The commit moved the ‵Percent‵ call into the per-line loop, so every line's tax is rounded half-up to the cent and the rate total is the sum of rounded values. With three lines that each round up by ~0.4 cent, the total drifts by a cent — exactly the failures we see (6.71 vs 6.70, 17.00 vs 17.01, 0.05 vs 0.03).

Let me confirm with the smallest failing case before changing anything.`),
		run("go test ./internal/invoice -run 'TestTotals/three_lines_mixed_rates' -v", 1, outFocused),
	)

	s.do("Before touching the package, a standalone check of both computations on this invoice's numbers, using the real money package:",
		write("/tmp/rounding/main.go", reproGo),
	)
	s.do("", run("cd /tmp/rounding && go mod init rounding >/dev/null 2>&1; go mod edit -replace github.com/acme/invoicer="+repo+" -require github.com/acme/invoicer@v0.0.0 && go run .", 0, reproOutput))
	s.do(text(`
3 × 7.15 = 21.45 → 19 % = 4.0755 → 4.08; 12.35 → 2.3465 → 2.35; sum 6.43. On the base: 33.80 × 19 % = 6.422 → 6.42. That is the cent. Let me check the golden file and the rounding doc to be sure which one finance expects.`),
		readFile("internal/invoice/testdata/golden/mixed_rates.input.json", goldenMixedInput),
		readFile("internal/invoice/testdata/golden/mixed_rates.totals.json", goldenMixedTotals),
		readFile("docs/rounding.md", roundingDoc),
	)

	s.do("The doc is explicit: tax per rate on the sum. Before fixing, let me see who consumes LineTax, since the breakdown is what #482 was for.",
		grep(`LineTax|line_tax`, ".", text(`
internal/invoice/invoice.go:53:    // LineTax is the VAT of each line, in line order, for the per-line
internal/invoice/invoice.go:56:    LineTax []money.Amount `+"`json:\"line_tax\"`"+`
internal/invoice/invoice.go:101:    t.LineTax = make([]money.Amount, len(inv.Lines))
internal/invoice/invoice.go:107:        t.LineTax[i] = tax
internal/invoice/invoice_test.go:91:            if sum := money.Sum(got.LineTax...); tt.inv.Shipping == 0 && sum != got.Tax {
internal/invoice/testdata/golden/mixed_rates.totals.json:21:  "line_tax": [
internal/render/xrechnung.go:64:        lineVAT := totals.LineTax[i]
internal/render/xrechnung.go:71:            Amount:   lineVAT.String(),`)),
		readFile("internal/render/xrechnung.go", xrechnungGo),
	)

	s.user("FYI the per-line breakdown is required for the XRechnung export (BT-117 per line), so please keep it. Just make the totals right.")

	s.do(text(`
Understood — I'll keep ‵LineTax‵ for the export and compute the totals per rate on the summed base again. First step: restore per-rate tax; I'll also allocate the discount once instead of calling Allocate for every line (discountShare was O(n²)).`),
		edit("internal/invoice/invoice.go", computeBuggy, computeMid),
	)
	s.do("", run("gofmt -l ./internal && go vet ./internal/invoice && go test ./internal/invoice", 1, outMid))

	s.do(text(`
Progress: gross and tax are now right in every case (no more "gross/tax" errors). What fails now is the breakdown: each line's tax is still rounded on its own, so the lines add up to 6.71 while the rate total is 6.70 — and the golden file expects line_tax [4.07, 2.35, 0.28], i.e. the rate total *allocated* over the lines (the 4.08 → 4.07 adjustment). The XRechnung validator rule BR-CO-17 also requires the breakdown to add up. money.Allocate does exactly this (largest remainder), so I'll use it per rate.`),
		edit("internal/invoice/invoice.go", lineTaxOld, lineTaxNew),
		edit("internal/invoice/tax.go", formatRateAnchor, lineTaxFunc),
	)
	s.do("", run("gofmt -l ./internal && go vet ./internal/invoice && go test ./internal/invoice -v", 0, outFinalV))
	s.do("All invoice tests pass, including the golden file, which I did not touch. Full suite:",
		run("go test ./...", 0, text(`
?   	github.com/acme/invoicer/cmd/invoicer	[no test files]
ok  	github.com/acme/invoicer/internal/api	0.418s
ok  	github.com/acme/invoicer/internal/invoice	0.006s
?   	github.com/acme/invoicer/internal/money	[no test files]
ok  	github.com/acme/invoicer/internal/render	0.031s
ok  	github.com/acme/invoicer/internal/store	0.004s`)),
	)

	s.do("Now the nightly failure. Reproducing the race in internal/store:",
		run("go test -race ./internal/store/", 1, outRace),
	)
	s.do("Two goroutines race on the entries map: a read in Get (cache.go:38) against the delete in Invalidate (cache.go:66) and the insert in Get (cache.go:58). Let me read the cache.",
		readFile("internal/store/cache.go", cacheGo),
		readFile("internal/store/cache_test.go", cacheTestGo),
	)
	s.do("", run("git show a77f5c9 -- internal/store/cache.go", 0, cacheDiff))
	s.do(text(`
a77f5c9 added a "fast path" that reads ‵c.entries‵ and increments ‵c.hits‵ without holding ‵c.mu‵. Go maps are not safe for concurrent read and write, so any Get racing an Invalidate (which ‵issueInvoice‵ calls) is undefined behaviour — in production this can crash with "concurrent map read and map write". The intent (cheap hits) is fine, so I'll keep a fast path but make it correct: an RWMutex so readers share the lock, and atomic counters so hits don't need the write lock.`),
		edit("internal/store/cache.go", cacheFieldsOld, cacheFieldsNew),
		edit("internal/store/cache.go", cacheFastPathOld, cacheFastPathNew),
		edit("internal/store/cache.go", cacheStatsOld, cacheStatsNew),
		edit("internal/store/cache.go", "import (\n\t\"context\"\n\t\"sync\"\n\t\"time\"\n", "import (\n\t\"context\"\n\t\"sync\"\n\t\"sync/atomic\"\n\t\"time\"\n"),
	)
	s.do("", run("go vet ./internal/store/", 1, text(`
# github.com/acme/invoicer/internal/store
vet: internal/store/cache.go:55:4: invalid operation: c.hits++ (non-numeric type atomic.Int64)`)))
	s.do("One increment left on the slow path after the load; fixing it.",
		edit("internal/store/cache.go", "\t\tc.hits++\n", "\t\tc.hits.Add(1)\n"),
	)
	s.do("", run("go vet ./internal/store/ && go test -race -count=20 ./internal/store/", 0, outRaceFix))
	s.do(text(`
The race is gone across 20 runs. a77f5c9 was a performance change ("contention on c.mu"), so let me make sure the fix keeps most of the gain: I'll add a parallel benchmark and compare against HEAD.`),
		edit("internal/store/cache_test.go", "\n\tif n := calls.Load(); n != 2 {\n\t\tt.Fatalf(\"load called %d times, want 2 (entry expired)\", n)\n\t}\n}\n", "\n\tif n := calls.Load(); n != 2 {\n\t\tt.Fatalf(\"load called %d times, want 2 (entry expired)\", n)\n\t}\n}\n"+cacheBench),
	)
	s.do("",
		run("go test -run '^$' -bench CacheGetParallel -benchmem -count 6 ./internal/store/ | tee /tmp/bench-new.txt", 0, benchOutput(false)),
		run("git stash push -q internal/store/cache.go && go test -run '^$' -bench CacheGetParallel -benchmem -count 6 ./internal/store/ | tee /tmp/bench-old.txt; git stash pop -q", 0, benchOutput(true)),
	)
	s.do("", run("go run golang.org/x/perf/cmd/benchstat@latest /tmp/bench-old.txt /tmp/bench-new.txt", 0, text(`
goos: linux
goarch: amd64
pkg: github.com/acme/invoicer/internal/store
cpu: 12th Gen Intel(R) Core(TM) i7-1260P
                     │ /tmp/bench-old.txt │         /tmp/bench-new.txt         │
                     │       sec/op       │   sec/op     vs base               │
CacheGetParallel-16          41.27n ± 3%   58.93n ± 2%  +42.79% (p=0.002 n=6)

                     │ /tmp/bench-old.txt │        /tmp/bench-new.txt          │
                     │        B/op        │    B/op     vs base                │
CacheGetParallel-16          5.000 ± 0%    5.000 ± 0%       ~ (p=1.000 n=6) ¹
¹ all samples are equal

                     │ /tmp/bench-old.txt │        /tmp/bench-new.txt          │
                     │     allocs/op      │ allocs/op   vs base                │
CacheGetParallel-16          1.000 ± 0%    1.000 ± 0%       ~ (p=1.000 n=6) ¹
¹ all samples are equal`)))
	s.do(text(`
The correct version costs ~18 ns per hit over the racy one (59 ns vs 41 ns with 16 goroutines). The old racy numbers aren't a valid baseline anyway, since unsynchronized map access is undefined. For context, the pre-#482 version with a plain Mutex would be the real comparison; let me measure that too so the PR description has honest numbers.`),
		run("git show 3b1d0e2:internal/store/cache.go > /tmp/cache_pre482.go && cp internal/store/cache.go /tmp/cache_new.go && cp /tmp/cache_pre482.go internal/store/cache.go && go test -run '^$' -bench CacheGetParallel -benchmem -count 6 ./internal/store/ | tee /tmp/bench-pre482.txt; cp /tmp/cache_new.go internal/store/cache.go && git diff --stat internal/store/cache.go", 0, benchOutputPre482()),
	)
	s.do("RWMutex gives 59 ns vs 162 ns with the pre-#482 Mutex, so the fast path keeps most of its benefit. Now the linters and the whole suite under the race detector.",
		run("staticcheck ./...", 127, "bash: staticcheck: command not found"),
	)
	s.do("", run("go run honnef.co/go/tools/cmd/staticcheck@2023.1.7 ./...", 0, text(`
go: downloading honnef.co/go/tools v0.4.7
go: downloading golang.org/x/tools v0.12.1-0.20230825192346-2191a27a6dc5
go: downloading golang.org/x/exp/typeparams v0.0.0-20221208152030-732eee02a75a
go: downloading golang.org/x/mod v0.12.0`)))
	s.do("", run("go test -race ./...", 0, text(`
?   	github.com/acme/invoicer/cmd/invoicer	[no test files]
ok  	github.com/acme/invoicer/internal/api	1.392s
ok  	github.com/acme/invoicer/internal/invoice	1.041s
?   	github.com/acme/invoicer/internal/money	[no test files]
ok  	github.com/acme/invoicer/internal/render	1.188s
ok  	github.com/acme/invoicer/internal/store	1.097s`)))
	s.do("", run("git status --short && git diff --stat", 0, text(`
 M internal/invoice/invoice.go
 M internal/invoice/tax.go
 M internal/store/cache.go
 internal/invoice/invoice.go | 62 ++++++++++++++++++++++++++-----------------------
 internal/invoice/tax.go     | 28 +++++++++++++++++++++
 internal/store/cache.go     | 29 ++++++++++-------------
 3 files changed, 72 insertions(+), 47 deletions(-)`)))

	s.say(text(`
Both CI failures are fixed. Summary:

**1. Wrong VAT totals (internal/invoice)** — root cause in 5e02d3b (#482): VAT was rounded per line and summed, instead of computed once per rate on the summed base as docs/rounding.md requires. That over-charged by a cent every few lines (6.71 vs 6.70 on the mixed_rates invoice).
- ‵Compute‵ again computes tax per rate on the discounted base; the discount is allocated once (was O(n²)).
- ‵LineTax‵ is kept for XRechnung: each rate's tax is allocated over its lines with ‵money.Allocate‵, so the lines add up exactly (BR-CO-17). Shipping takes its share of the standard rate.
- Golden files untouched; they pass as signed off.

**2. Data race (internal/store)** — a77f5c9 read the entries map and bumped counters without the lock. Now an RWMutex read lock on the fast path and atomic counters.

Verified: ‵go test ./...‵ (exit 0), ‵go test -race -count=20 ./internal/store/‵ (exit 0), ‵go test -race ./...‵ (exit 0), ‵go vet‵ and staticcheck clean. No exported API of internal/money changed. Nothing committed or pushed.`))

	s.user("Great. Can you also add a regression test that would have caught the per-line rounding? Something with many lines that each have a half-cent of tax.")
	s.do("I'll add it next to TestTotals. 40 lines at 0.50 with 7 % VAT: each line's tax is exactly 0.035, so per-line rounding gives 1.60 and the correct per-rate computation gives 1.40.",
		readRange("internal/invoice/invoice_test.go", invoiceTestGo, 1, 20),
	)
	s.do("",
		edit("internal/invoice/invoice_test.go", "\t\"flag\"\n", "\t\"flag\"\n\t\"fmt\"\n"),
		edit("internal/invoice/invoice_test.go", "func TestValidate(t *testing.T) {", strings.TrimPrefix(regressionTest, "\n\n")+"\nfunc TestValidate(t *testing.T) {"),
	)
	s.do("", run("go test ./internal/invoice -run TestTotalsManyHalfCentLines -v", 0, outReg))
	s.do("It passes with the fix. To prove it catches the bug, I'll run it against the pre-fix invoice.go/tax.go from HEAD in a throwaway worktree (your working tree stays untouched).",
		run("git worktree add -q /tmp/invoicer-head HEAD && cp internal/invoice/invoice_test.go /tmp/invoicer-head/internal/invoice/ && (cd /tmp/invoicer-head && go test ./internal/invoice -run TestTotalsManyHalfCentLines); git worktree remove --force /tmp/invoicer-head", 0, strings.ReplaceAll(outRegBuggy, repo, "/tmp/invoicer-head")),
	)
	s.say(text(`
The regression test ‵TestTotalsManyHalfCentLines‵ fails on HEAD (tax 1.60 instead of 1.40) and passes with the fix. The exit code above is 0 only because ‵git worktree remove‵ ran last; the test output shows FAIL as intended. The worktree is removed.`))

	s.user(text(`
Thanks. One more: TestCreateInvoiceHandler failed once in CI last week with an issued_at mismatch. Probably unrelated but can you take a look while you're here? This was the output:

‵‵‵
=== RUN   TestCreateInvoiceHandler
    handler_test.go:45: issued_at = 2024-04-24 13:07:52 +0000 UTC, want 2024-04-24 13:07:51 +0000 UTC
--- FAIL: TestCreateInvoiceHandler (0.01s)
FAIL
FAIL	github.com/acme/invoicer/internal/api	0.437s
‵‵‵`))
	s.do("Let me try to reproduce it with many iterations.",
		run("go test ./internal/api -run TestCreateInvoiceHandler -count=300", 1, text(`
--- FAIL: TestCreateInvoiceHandler (0.00s)
    handler_test.go:45: issued_at = 2024-05-02 11:23:18 +0000 UTC, want 2024-05-02 11:23:17 +0000 UTC
FAIL
FAIL	github.com/acme/invoicer/internal/api	1.867s
FAIL`)),
	)
	s.do("Reproduced once in 300 runs. Reading the handler and its test:",
		readFile("internal/api/handler.go", handlerGo),
		readFile("internal/api/handler_test.go", handlerTestGo),
		readFile("internal/store/memrepo.go", memRepoGo),
	)
	s.do(text(`
The test takes ‵before := time.Now()‵ truncated to the second, then the handler takes its own ‵time.Now()‵. When the two calls straddle a second boundary the truncated values differ by one second — a flaky test, not a product bug. The fix is to make the clock injectable in the Server and use a fixed time in the test. Let me check nothing else reads the wall clock in handlers.`),
		grep(`time\.Now\(`, "internal/api", text(`
internal/api/handler.go:62:        IssuedAt:   time.Now().UTC().Truncate(time.Second),
internal/api/handler.go:75:    s.Logger.Info("invoice created", "number", number, "gross", totals.Gross, "at", time.Now().UTC())
internal/api/handler.go:121:    if err := s.Repo.Issue(r.Context(), number, time.Now().UTC()); err != nil {
internal/api/handler_test.go:30:    before := time.Now().UTC().Truncate(time.Second)`)),
	)
	s.do("",
		edit("internal/api/handler.go", handlerClockOld, handlerClockNew),
		edit("internal/api/handler.go", handlerCreateOld, handlerCreateNew),
		edit("internal/api/handler.go", "\tif err := s.Repo.Issue(r.Context(), number, time.Now().UTC()); err != nil {", "\tif err := s.Repo.Issue(r.Context(), number, s.now()); err != nil {"),
		edit("internal/api/handler_test.go", handlerTestNowOld, handlerTestNowNew),
		edit("internal/api/handler_test.go", handlerTestOld, handlerTestNew),
		edit("internal/api/handler_test.go", handlerTestAssertOld, handlerTestAssertNew),
		edit("internal/api/handler_test.go", handlerTestAssert2Old, handlerTestAssert2New),
	)
	s.do("", run("gofmt -l ./internal && go vet ./internal/api && go test ./internal/api -count=1000", 0, "ok  \tgithub.com/acme/invoicer/internal/api\t5.904s"))
	s.do("", run("go test -race ./... && git diff --stat", 0, text(`
?   	github.com/acme/invoicer/cmd/invoicer	[no test files]
ok  	github.com/acme/invoicer/internal/api	1.407s
ok  	github.com/acme/invoicer/internal/invoice	1.039s
?   	github.com/acme/invoicer/internal/money	[no test files]
ok  	github.com/acme/invoicer/internal/render	1.201s
ok  	github.com/acme/invoicer/internal/store	1.088s
 internal/api/handler.go          | 16 +++++++++--
 internal/api/handler_test.go     | 18 ++++++++-----
 internal/invoice/invoice.go      | 62 ++++++++++++++++++++++++++-----------------------
 internal/invoice/invoice_test.go | 22 ++++++++++++++++++
 internal/invoice/tax.go          | 28 +++++++++++++++++++++
 internal/store/cache.go          | 29 ++++++++++-------------
 6 files changed, 116 insertions(+), 59 deletions(-)`)))
	s.say(text(`
The flaky test is fixed: the handler read the wall clock and the test compared it with its own ‵time.Now()‵ truncated to the second, which differs when the calls straddle a second boundary (1 failure in 300 runs). ‵Server‵ now has an optional ‵Now func() time.Time‵ (nil = time.Now), used for ‵IssuedAt‵ and ‵Issue‵; the test pins it to a fixed time.

Verified: ‵go test ./internal/api -count=1000‵ (exit 0) and ‵go test -race ./...‵ (exit 0).

All changes are uncommitted for your review:
- internal/invoice: per-rate VAT, allocated line breakdown, regression test
- internal/store: race-free cache fast path
- internal/api: injectable clock, deterministic handler test`))

	s.user("Perfect, please commit the three fixes as separate commits with descriptive messages. Don't push.")
	s.do("",
		run("git add internal/invoice && git commit -q -m 'invoice: compute VAT per rate again, allocate the per-line breakdown' -m 'Rounding VAT per line (5e02d3b) over-charged by a cent every few lines. Tax is computed once per rate on the discounted base, as docs/rounding.md requires; LineTax allocates each rate total over its lines so the XRechnung breakdown adds up (BR-CO-17). Adds TestTotalsManyHalfCentLines.' && git log --oneline -1", 0, "4d81c2e invoice: compute VAT per rate again, allocate the per-line breakdown"),
		run("git add internal/store && git commit -q -m 'store: make the cache fast path race-free' -m 'a77f5c9 read the entries map and updated counters without the lock. Use an RWMutex read lock and atomic counters.' && git log --oneline -1", 0, "b37e0a9 store: make the cache fast path race-free"),
		run("git add internal/api && git commit -q -m 'api: injectable clock; fix flaky TestCreateInvoiceHandler' && git log --oneline -1", 0, "e58c1d3 api: injectable clock; fix flaky TestCreateInvoiceHandler"),
	)
	s.do("", run("git status --short --branch && git log --oneline -4", 0, text(`
## main...origin/main [ahead 3]
e58c1d3 api: injectable clock; fix flaky TestCreateInvoiceHandler
b37e0a9 store: make the cache fast path race-free
4d81c2e invoice: compute VAT per rate again, allocate the per-line breakdown
9c4e1f7 Merge pull request #482 from acme/jw/xrechnung-line-tax`)))
	s.say("Committed as three commits on main (ahead of origin by 3), nothing pushed. The working tree is clean.")

	s.user("Hmm, wait. Releases are tagged on main and staging deploys automatically, and the pilot customers get real invoices from staging. How many invoices issued since #482 have wrong totals? There's an export of everything issued on staging at /var/tmp/staging-issued-2024-05-02.jsonl and a recompute script in scripts/recompute.")
	s.do("Let me first check whether #482 was actually released, then read the script.",
		run("git tag --contains 9c4e1f7 && git log -1 --format='%H %cd' v1.14.0", 0, "v1.14.0\n9c4e1f7a2b0d8e6c51f3a9d0c4b7e2f18a6d3c55 Wed May 1 17:58:03 2024 +0200"),
		readFile("scripts/recompute/main.go", recomputeGo),
	)
	s.do("v1.14.0 contains #482 and was tagged 16 minutes after the merge. The script recomputes every exported invoice with the *current* invoice.Compute, which in my working tree is the fixed one — exactly the comparison we need. Running it over the whole export first:",
		run("wc -l /var/tmp/staging-issued-2024-05-02.jsonl && go run ./scripts/recompute -dump /var/tmp/staging-issued-2024-05-02.jsonl", 0, "64 /var/tmp/staging-issued-2024-05-02.jsonl\n"+impactOutput(false)),
	)
	s.do("", run("go run ./scripts/recompute -dump /var/tmp/staging-issued-2024-05-02.jsonl -only-diff", 0, impactOutput(true)))
	s.say(text(`
Impact on staging since v1.14.0 (tagged 2024-05-01 17:58):
- 64 invoices issued, **18 with a wrong gross**, every one off by exactly 0.01 EUR: 8 overcharged, 10 undercharged, net −0.02 EUR.
- Affected numbers: RE-2024-00418, 00419, 00425, 00428, 00429, 00432, 00435, 00439, 00440, 00452, 00461, 00468, 00472, 00476, 00477, 00479, 00480, 00481 (full list above, with stored vs recomputed gross).
- Production is unaffected if it has not been deployed since (production deploys are manual per the README).

Issued invoices must not be edited; the usual remedy is a correction invoice (Rechnungskorrektur) per affected number, which is a finance decision. I have not changed anything outside the repository.`))

	s.user("OK, I'll hand the list to finance; production is still on v1.13.2, good. Before I push: the render package has golden PDFs and XRechnung XML too. Do they still match after the tax change? Check without regenerating anything.")
	s.do("I'll look at how the render tests compare output, then run them verbosely.",
		run("ls internal/render internal/render/testdata", 0, text(`
internal/render:
pdf.go
pdf_test.go
testdata
xrechnung.go
xrechnung_test.go

internal/render/testdata:
mixed_rates.pdf.txt
mixed_rates.xml
shipping.pdf.txt
shipping.xml
single_line.pdf.txt
single_line.xml`)),
		readFile("internal/render/xrechnung_test.go", xrechnungTestGo),
		readFile("internal/render/pdf.go", pdfGo),
	)
	s.do("", run("go test ./internal/render -v -count=1", 0, renderTestOutput()))
	s.do("The XML goldens pass. Let me double-check the mixed_rates XML carries the allocated line amounts (4.07, not 4.08) rather than matching by accident.",
		readFile("internal/render/testdata/mixed_rates.xml", mixedRatesXML),
	)
	s.say(text(`
Yes: all render goldens match without regeneration (‵go test ./internal/render -v -count=1‵, exit 0, 7 tests). The mixed_rates.xml golden has line VAT 4.07 / 2.35 / 0.28 and a 19 % total of 6.42 — the allocated values the fix produces — which means the XML goldens in #482 had been generated from the correct per-rate numbers and only ‵Compute‵ disagreed with them. You can push.`))

	s.user("Nice. Last thing before I push: internal/money has no tests at all ([no test files] in every run), and billing-export vendors it. Please add table tests for Parse, String, MulRat and Allocate. Same rule as before: no API changes.")
	s.do("I read money.go early on; let me read it again to write the tests against the exact current behaviour.",
		readFile("internal/money/money.go", moneyGo),
	)
	s.do("I'll cover the documented formats, the error cases, all three rounding modes including negative halves, and Allocate's remainder distribution (including the 6.42 → 4.07 + 2.35 split from the invoice fix).",
		write("internal/money/money_test.go", moneyTestGo),
	)
	s.do("", run("go vet ./internal/money/ && go test ./internal/money/", 1, outMoney))
	s.do(text(`
The tests found a real bug: ‵Parse("-")‵ returns 0 with no error. After the sign is stripped the string is empty, ‵strings.Cut‵ yields an empty whole part, which defaults to "0", and the fraction is padded to "00". The same happens for ‵"."‵ and ‵"+"‵. Let me check whether anything relies on that before fixing it.`),
		grep(`money\.(Parse|MustParse)\(`, ".", text(`
internal/api/handler.go:212:        amount, err := money.Parse(r.URL.Query().Get("min_gross"))
internal/invoice/invoice_test.go:15:func m(s string) money.Amount { return money.MustParse(s) }
internal/render/pdf.go:48:    threshold := money.MustParse("250.00")`)),
		readRange("internal/money/money.go", moneyGo, 36, 60),
	)
	s.do("Only the API's min_gross filter parses user input, and it would silently treat \"-\" as 0.00 today. Rejecting it is a bug fix, not an API change (same signature, same error value). Fixing:",
		edit("internal/money/money.go", parseSignOld, parseSignNew),
	)
	s.do("", run("gofmt -l ./internal/money && go vet ./internal/money/ && go test -v ./internal/money/", 0, outMoneyFixed))
	s.do("", run("go test ./... && git add internal/money && git commit -q -m 'money: add table tests; reject a sign without digits in Parse' && git log --oneline -5", 0, text(`
?   	github.com/acme/invoicer/cmd/invoicer	[no test files]
ok  	github.com/acme/invoicer/internal/api	0.421s
ok  	github.com/acme/invoicer/internal/invoice	0.006s
ok  	github.com/acme/invoicer/internal/money	0.004s
ok  	github.com/acme/invoicer/internal/render	0.030s
ok  	github.com/acme/invoicer/internal/store	0.004s
7a0c5f2 money: add table tests; reject a sign without digits in Parse
e58c1d3 api: injectable clock; fix flaky TestCreateInvoiceHandler
b37e0a9 store: make the cache fast path race-free
4d81c2e invoice: compute VAT per rate again, allocate the per-line breakdown
9c4e1f7 Merge pull request #482 from acme/jw/xrechnung-line-tax`)))
	s.say(text(`
Added ‵internal/money/money_test.go‵ (Parse, String, MulRat in all three modes, Allocate) and committed it with a fix the tests uncovered: ‵Parse‵ accepted "-", "+" and "." as 0.00; it now returns ‵ErrSyntax‵ ("no digits"). No exported identifiers changed. The only caller parsing user input is the ‵min_gross‵ query filter in internal/api, which now answers 400 for "-" instead of filtering on 0.00 — worth a line in the billing-export changelog.

‵go test ./...‵ passes (exit 0). main is 4 commits ahead of origin, nothing pushed:
1. 4d81c2e invoice: per-rate VAT, allocated line breakdown, regression test
2. b37e0a9 store: race-free cache fast path (RWMutex + atomics; 59 ns/op vs 162 ns/op before #482)
3. e58c1d3 api: injectable clock, deterministic handler test
4. 7a0c5f2 money: tests + Parse fix`))

	s.user("Thanks! Last bit of housekeeping: add an Unreleased section to CHANGELOG.md, add the allocation/shipping note to docs/rounding.md, and draft a PR description I can paste (write it to /tmp/pr-description.md, don't open the PR).")
	s.do("Reading the changelog format first.",
		readFile("CHANGELOG.md", changelog()),
		readRange("docs/rounding.md", roundingDoc, 1, 22),
	)
	s.do("",
		edit("CHANGELOG.md", changelogOld, changelogNew),
		edit("docs/rounding.md", roundingDocOld, roundingDocNew),
	)
	s.do("Let me review the complete change set against origin/main before writing the description, so the numbers in it are right.",
		run("git diff origin/main --stat", 0, text(`
 CHANGELOG.md                     |  15 +++++
 docs/rounding.md                 |   3 +
 internal/api/handler.go          |  16 ++++--
 internal/api/handler_test.go     |  18 ++++---
 internal/invoice/invoice.go      |  62 ++++++++++++-----------
 internal/invoice/invoice_test.go |  22 ++++++++
 internal/invoice/tax.go          |  28 ++++++++++
 internal/money/money.go          |   3 +
 internal/money/money_test.go     | 131 ++++++++++++++++++++++++++++++++++++++++++++
 internal/store/cache.go          |  29 +++++-----
 internal/store/cache_test.go     |  16 ++++++
 11 files changed, 289 insertions(+), 54 deletions(-)`)),
		run("git diff origin/main -- internal/invoice/invoice.go internal/invoice/tax.go internal/store/cache.go", 0,
			unifiedDiff("internal/invoice/invoice.go", computeBuggy, strings.Replace(computeMid, lineTaxOld, lineTaxNew, 1), 84)+
				unifiedDiff("internal/invoice/tax.go", formatRateAnchor, lineTaxFunc, 61)+
				unifiedDiff("internal/store/cache.go", cacheFastPathOld, cacheFastPathNew, 36)),
	)
	s.do("The diff matches what I described. Writing the PR description:",
		write("/tmp/pr-description.md", prDescription),
	)
	s.do("", run("git add CHANGELOG.md docs/rounding.md && git commit -q -m 'docs: changelog and rounding note for the #482 fixes' && git status --short --branch && git log --oneline origin/main..", 0, text(`
## main...origin/main [ahead 5]
0b6d4e8 docs: changelog and rounding note for the #482 fixes
7a0c5f2 money: add table tests; reject a sign without digits in Parse
e58c1d3 api: injectable clock; fix flaky TestCreateInvoiceHandler
b37e0a9 store: make the cache fast path race-free
4d81c2e invoice: compute VAT per rate again, allocate the per-line breakdown`)))
	s.say(text(`
Done:
- CHANGELOG.md has an Unreleased section (VAT fix, cache race, money.Parse, tests).
- docs/rounding.md rule 4 now says shipping takes its share of the standard-rate VAT and warns against summing per-line Percent results.
- The PR description is in /tmp/pr-description.md (why, what, verification, impact on staging). I did not open a PR.

main is 5 commits ahead of origin/main; nothing pushed. Remaining for you: push, open the PR with that description, and pass the 18 invoice numbers to finance.`))
	return s
}

func benchOutput(racy bool) string {
	ns := []string{"58.71", "59.42", "58.93", "60.15", "57.88", "59.07"}
	n := []string{"20384755", "20127391", "20298870", "19902218", "20711406", "20244930"}
	if racy {
		ns = []string{"41.06", "41.93", "40.18", "42.55", "41.27", "41.48"}
		n = []string{"29217540", "28610023", "29884182", "28199451", "29098317", "28927705"}
	}
	return benchLines(ns, n, "7.6")
}

func benchOutputPre482() string {
	return benchLines([]string{"161.9", "163.4", "160.7", "162.2", "164.8", "161.1"},
		[]string{"7412330", "7338196", "7469071", "7401589", "7280414", "7448862"}, "7.1") + "\n internal/store/cache.go | 0\n 1 file changed, 0 insertions(+), 0 deletions(-)"
}

func benchLines(ns, n []string, secs string) string {
	var sb strings.Builder
	sb.WriteString("goos: linux\ngoarch: amd64\npkg: github.com/acme/invoicer/internal/store\ncpu: 12th Gen Intel(R) Core(TM) i7-1260P\n")
	for i := range ns {
		fmt.Fprintf(&sb, "BenchmarkCacheGetParallel-16   \t%9s\t%13s ns/op\t       5 B/op\t       1 allocs/op\n", n[i], ns[i])
	}
	sb.WriteString("PASS\nok  \tgithub.com/acme/invoicer/internal/store\t" + secs + "s")
	return sb.String()
}

// testAllOutput is `go test ./...` on the broken main, with the packages the
// recorded run did not have.
func testAllOutput() string {
	out := strings.Replace(outTestAll, "?   \tgithub.com/acme/invoicer/internal/money\t[no test files]\n",
		"?   \tgithub.com/acme/invoicer/internal/money\t[no test files]\nok  \tgithub.com/acme/invoicer/internal/render\t0.029s\n", 1)
	return "?   \tgithub.com/acme/invoicer/cmd/invoicer\t[no test files]\nok  \tgithub.com/acme/invoicer/internal/api\t0.412s\n" + out
}

// ciLog renders test output as GitHub Actions log lines.
func ciLog(out string) string {
	var sb strings.Builder
	sec := 14
	for _, l := range strings.Split(strings.TrimRight(testAllOutput(), "\n"), "\n") {
		fmt.Fprintf(&sb, "test\tRun go test ./...\t2024-05-01T15:43:%02d.%07dZ %s\n", sec, 1034567+len(l)*7919%8000000, l)
	}
	sb.WriteString("test\tRun go test ./...\t2024-05-01T15:43:14.9811210Z ##[error]Process completed with exit code 1.")
	return sb.String()
}

func renderTestOutput() string {
	var sb strings.Builder
	for _, name := range []string{"TestPDFGolden/mixed_rates", "TestPDFGolden/shipping", "TestPDFGolden/single_line", "TestXRechnungGolden/mixed_rates", "TestXRechnungGolden/shipping", "TestXRechnungGolden/single_line"} {
		fmt.Fprintf(&sb, "=== RUN   %s\n", name)
	}
	sb.WriteString(text(`
--- PASS: TestPDFGolden (0.02s)
    --- PASS: TestPDFGolden/mixed_rates (0.01s)
    --- PASS: TestPDFGolden/shipping (0.00s)
    --- PASS: TestPDFGolden/single_line (0.00s)
--- PASS: TestXRechnungGolden (0.01s)
    --- PASS: TestXRechnungGolden/mixed_rates (0.00s)
    --- PASS: TestXRechnungGolden/shipping (0.00s)
    --- PASS: TestXRechnungGolden/single_line (0.00s)
=== RUN   TestXRechnungLineSumsMatchTotals
--- PASS: TestXRechnungLineSumsMatchTotals (0.00s)
PASS
ok  	github.com/acme/invoicer/internal/render	0.034s`))
	return sb.String()
}

// nightlyExcerpt is the first race report of the nightly job, as pasted by the user.
func nightlyExcerpt() string {
	lines := strings.Split(strings.ReplaceAll(outRace, "/home/dana/src/invoicer", "/home/runner/work/invoicer/invoicer"), "\n")
	var out []string
	for i, l := range lines {
		if i > 0 && strings.HasPrefix(l, "==================") && len(out) > 5 {
			out = append(out, l)
			break
		}
		out = append(out, "2024-05-02T02:19:44.1032112Z "+l)
	}
	return strings.Join(out, "\n")
}

var reproGo = goSrc(`
// Command rounding compares VAT computed per line with VAT per rate on the
// mixed_rates golden invoice.
package main

import (
    "fmt"

    "github.com/acme/invoicer/internal/money"
)

type line struct {
    sku    string
    net    money.Amount
    rateBP int64
}

func main() {
    lines := []line{
        {"CAB-USB-C", money.MustParse("21.45"), 1900},
        {"ADP-HDMI", money.MustParse("12.35"), 1900},
        {"MAN-DE", money.MustParse("4.05"), 700},
    }
    perLine := map[int64]money.Amount{}
    bases := map[int64]money.Amount{}
    fmt.Printf("%-10s %8s %6s %10s\n", "sku", "net", "rate", "line VAT")
    for _, l := range lines {
        vat := l.net.Percent(l.rateBP)
        perLine[l.rateBP] += vat
        bases[l.rateBP] += l.net
        fmt.Printf("%-10s %8s %5d%% %10s\n", l.sku, l.net, l.rateBP/100, vat)
    }
    var sumLine, sumRate money.Amount
    for _, bp := range []int64{1900, 700} {
        perRate := bases[bp].Percent(bp)
        sumLine += perLine[bp]
        sumRate += perRate
        fmt.Printf("rate %2d%%: base %s, per-line sum %s, per-rate %s\n", bp/100, bases[bp], perLine[bp], perRate)
    }
    fmt.Printf("total VAT: per line %s, per rate %s (golden: 6.70)\n", sumLine, sumRate)
}
`)

var reproOutput = text(`
sku             net   rate   line VAT
CAB-USB-C     21.45    19%       4.08
ADP-HDMI      12.35    19%       2.35
MAN-DE         4.05     7%       0.28
rate 19%: base 33.80, per-line sum 6.43, per-rate 6.42
rate  7%: base 4.05, per-line sum 0.28, per-rate 0.28
total VAT: per line 6.71, per rate 6.70 (golden: 6.70)`)
