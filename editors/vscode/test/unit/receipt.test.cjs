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
  assert.match(md, /\| Compactions \| 1, \$0\\\.06 \|/);
  assert.doesNotMatch(d.tooltipMarkdown(view, { ...stats, receipt: undefined }), /Paid/);
});

test('Show Context: the page message carries the receipt line', () => {
  const map = { sessionId: 's1', capacity: 1000, reservedOutput: 100, compactionThreshold: 800, usedTokens: 100, pressure: 0.1, state: 'ok',
    messages: 1, projectedMessages: 1, categories: [], turns: [], compactions: [], cleared: [], artifacts: [], receipt: receipt() };
  assert.equal(cm.pageMessage(map).receipt, '3 requests · paid $0.15 · without vtcode-ls ≈ $0.26 (estimate) · saved $0.11');
  assert.equal(cm.pageMessage({ ...map, receipt: undefined }).receipt, '');
});
