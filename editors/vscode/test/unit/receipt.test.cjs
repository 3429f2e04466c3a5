// Unit tests of the receipt display (node --test). Built from src/receipt.ts into out/.
const test = require('node:test');
const assert = require('node:assert/strict');
const r = require('../../out/receipt.js');
const d = require('../../out/display.js');
const cm = require('../../out/contextmap.js');

const tokens = (o = {}) => ({ input: 1200, cacheRead: 8000, cacheWrite5m: 1500, cacheWrite1h: 500, output: 300, ...o });
const receipt = (o = {}) => ({
  requests: 3, tokens: tokens(), paidUsd: 0.152, withoutTokens: tokens({ input: 40000 }), withoutUsd: 0.2628, savedUsd: 0.1108,
  withoutIsEstimate: true, pricesAsOf: '2026-12-01',
  compactions: [{ trigger: 'auto', mode: 'local', originalTokens: 60000, compactedTokens: 9000, tokens: tokens(), usd: 0.062 }], ...o,
});

test('receiptSummary: paid, the estimate without vtcode-ls, saved', () => {
  assert.equal(r.receiptSummary(receipt()), '3 requests · paid $0.15 · without vtcode-ls ≈ $0.26 (estimate) · saved $0.11');
  assert.equal(r.receiptSummary(receipt({ requests: 1, paidUsd: 0.004, withoutUsd: 0.003, savedUsd: -0.001 })),
    '1 request · paid $0.0040 · without vtcode-ls ≈ $0.0030 (estimate) · cost $0.0010 more');
});

test('receiptSummary: tokens only without a list price, never a made-up cost', () => {
  const s = r.receiptSummary(receipt({ paidUsd: undefined, withoutUsd: undefined, savedUsd: undefined, unpriced: ['ollama/qwen3'] }));
  assert.equal(s, '3 requests · 1,200 in · 8,000 cache read · 2,000 cache write (500 1h) · 300 out · no list price for ollama/qwen3');
  assert.ok(!s.includes('$'));
});

test('tooltip: the receipt rows under the stats of the same session', () => {
  const view = { sessionId: 's1', projectedTokens: 78_100, capacity: 128_000, pressure: 0.62, state: 'ok', display: { percent: '62%', used: '78.1k', window: '128k', text: '62% · 78.1k/128k' } };
  const stats = { sessionId: 's1', messages: 10, projectedMessages: 10, capacity: 128_000, strategy: 'local', compactions: 1, receipt: receipt() };
  const md = d.tooltipMarkdown(view, stats);
  assert.match(md, /\| Paid \(list prices of 2026\\-12\\-01\) \| \$0\\\.15 \|/);
  assert.match(md, /\| Without vtcode-ls \(estimate\) \| \$0\\\.26 \|/);
  assert.match(md, /\| Compactions billed \| 1 · \$0\\\.06 \|/);
  assert.doesNotMatch(md, /Unused summarizer calls/, 'no unused line without unused calls');
  assert.doesNotMatch(d.tooltipMarkdown(view, { ...stats, receipt: undefined }), /Paid/);
});

test('Show Context: the page message carries the receipt line', () => {
  const map = { sessionId: 's1', capacity: 1000, reservedOutput: 100, compactionThreshold: 800, usedTokens: 100, pressure: 0.1, state: 'ok',
    messages: 1, projectedMessages: 1, categories: [], turns: [], compactions: [], cleared: [], artifacts: [], receipt: receipt() };
  assert.equal(cm.pageMessage(map).receipt, '3 requests · paid $0.15 · without vtcode-ls ≈ $0.26 (estimate) · saved $0.11');
  assert.equal(cm.pageMessage({ ...map, receipt: undefined }).receipt, '');
});

// A receipt of the bills of issue 23: a compaction that used its pass-1 note (2 calls), one of an
// older log (no calls), and unused calls (a preview replaced, one never applied).
const billed = (o = {}) => receipt({
  compactions: [
    { trigger: 'auto', mode: 'local', originalTokens: 60000, compactedTokens: 9000, tokens: tokens(), usd: 0.062, calls: 2 },
    { trigger: 'manual', mode: 'local', originalTokens: 30000, compactedTokens: 7000, tokens: tokens({ cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0 }), usd: 0.01 },
  ],
  unused: { calls: 2, tokens: { input: 34000, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0, output: 1000 }, usd: 0.117 }, ...o,
});
const tooltip = (rc) => d.tooltipMarkdown(
  { sessionId: 's1', projectedTokens: 1000, capacity: 128_000, pressure: 0.1, state: 'ok', display: { percent: '10%', used: '1k', window: '128k', text: '10% · 1k/128k' } },
  { sessionId: 's1', messages: 10, projectedMessages: 10, capacity: 128_000, strategy: 'local', compactions: 2, receipt: rc });

test('callsText: the count, the tokens and the cost of summarizer calls; tokens only without a price', () => {
  const t = { input: 34000, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0, output: 1000 };
  assert.equal(r.callsText(2, t, 0.117), '2 calls · 34,000 in · 1,000 out · $0.12');
  assert.equal(r.callsText(1, t, 0.117), '1 call · 34,000 in · 1,000 out · $0.12');
  assert.equal(r.callsText(undefined, t, 0.117), '34,000 in · 1,000 out · $0.12', 'an older log: no count');
  assert.equal(r.callsText(2, t, undefined), '2 calls · 34,000 in · 1,000 out', 'no made-up price');
});

test('tooltip: each compaction with its summarizer calls, and the unused calls', () => {
  const md = tooltip(billed());
  assert.match(md, /\| Compactions billed \| 2 · 2 calls · \$0\\\.07 \|/);
  assert.match(md, /\| Compaction 1 \\\(auto, local\\\) \| 60,000 → 9,000 tokens · 2 calls · 1,200 in · 8,000 cache read · 2,000 cache write \\\(500 1h\\\) · 300 out · \$0\\\.06 \|/);
  assert.match(md, /\| Compaction 2 \\\(manual, local\\\) \| 30,000 → 7,000 tokens · 1,200 in · 300 out · \$0\\\.01 \|/, 'a compaction of an older log: no count');
  assert.match(md, /\| Unused summarizer calls \| 2 calls · 34,000 in · 1,000 out · \$0\\\.12 \|/);
  assert.doesNotMatch(tooltip(billed({ unused: { calls: 0, tokens: tokens(), usd: 0 } })), /Unused/, 'no line for zero unused calls');
});

test('tooltip: an unknown price shows the unused calls in tokens only', () => {
  const md = tooltip(billed({
    paidUsd: undefined, withoutUsd: undefined, savedUsd: undefined, unpriced: ['ollama/qwen3'],
    compactions: [{ trigger: 'auto', mode: 'local', originalTokens: 60000, compactedTokens: 9000, tokens: tokens(), calls: 3 }],
    unused: { calls: 1, tokens: { input: 5000, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0, output: 400 } },
  }));
  assert.match(md, /\| Compactions billed \| 1 · 3 calls \|/);
  assert.match(md, /\| Unused summarizer calls \| 1 call · 5,000 in · 400 out \|/);
  assert.doesNotMatch(md, /\$/, 'no cost anywhere');
});

test('tooltip: the newest compactions one by one, the total covers them all', () => {
  const cs = Array.from({ length: r.MaxCompactionRows + 2 }, (_, i) => ({ trigger: 'auto', mode: 'local', originalTokens: 1000 * (i + 2), compactedTokens: 500, tokens: tokens(), usd: 0.01, calls: 1 }));
  const md = tooltip(billed({ compactions: cs }));
  assert.match(md, /\| Compactions billed \| 7 · 7 calls · \$0\\\.07 \|/);
  const rows = [...md.matchAll(/\| Compaction (\d+) /g)].map((m) => Number(m[1]));
  assert.deepEqual(rows, [3, 4, 5, 6, 7]);
});

test('Show Context: the page message carries each compaction with its calls and the unused line', () => {
  const map = { sessionId: 's1', capacity: 1000, reservedOutput: 100, compactionThreshold: 800, usedTokens: 100, pressure: 0.1, state: 'ok',
    messages: 1, projectedMessages: 1, categories: [], turns: [], compactions: [], cleared: [], artifacts: [], receipt: billed() };
  assert.deepEqual(cm.pageMessage(map).receiptDetail, [
    'Compactions billed: 2 · 2 calls · $0.07',
    'Compaction 1 (auto, local): 60,000 → 9,000 tokens · 2 calls · 1,200 in · 8,000 cache read · 2,000 cache write (500 1h) · 300 out · $0.06',
    'Compaction 2 (manual, local): 30,000 → 7,000 tokens · 1,200 in · 300 out · $0.01',
    'Unused summarizer calls: 2 calls · 34,000 in · 1,000 out · $0.12',
  ]);
  assert.deepEqual(cm.pageMessage({ ...map, receipt: receipt({ compactions: [] }) }).receiptDetail, []);
  assert.deepEqual(cm.pageMessage({ ...map, receipt: undefined }).receiptDetail, []);
});
