// Unit tests of the context view's pure logic (node --test). Built from src/contextmap.ts into out/.
const test = require('node:test');
const assert = require('node:assert/strict');
const c = require('../../out/contextmap.js');

const cats = (o) => Object.entries(o).map(([category, tokens]) => ({ category, tokens, messages: category === 'free' || category === 'reservedOutput' ? 0 : 1 }));
const map = (extra = {}) => ({
  sessionId: 's1', capacity: 32000, reservedOutput: 4096, compactionThreshold: 20928, usedTokens: 9000, pressure: 0.3225,
  state: 'ok', display: { percent: '32%', used: '9k', window: '32k', text: '32% · 9k/32k' }, messages: 40, projectedMessages: 40,
  categories: cats({ prefix: 1000, user: 500, assistant: 1500, toolCalls: 500, toolResults: 4000, clearedStubs: 300, summary: 1200, free: 18904, reservedOutput: 4096 }),
  turns: [
    { turn: 1, tokens: 3000, capacity: 32000, pressure: 0.1075, state: 'ok', messages: 10 },
    { turn: 2, tokens: 6000, capacity: 32000, pressure: 0.215, state: 'ok', messages: 20, clearedResults: 3, clearedTokens: 4000, largeClear: true },
    { turn: 3, tokens: 9000, capacity: 32000, pressure: 0.3225, state: 'ok', messages: 40, compaction: 'manual' },
  ],
  compactions: [{ turn: 3, trigger: 'manual', mode: 'local', originalTokens: 20000, compactedTokens: 8000, artifactId: 'a1' }],
  cleared: [{ tool: 'read_file', callId: 'call_1', originalTokens: 1400, stubTokens: 30, turn: 2 }],
  artifacts: [{ artifactId: 'a1', createdAt: '2026-12-01T09:00:00Z', messages: 60, trigger: 'manual', mode: 'local' }],
  ...extra,
});

test('categoryRows: every category with its share of the window, in window order', () => {
  const rows = c.categoryRows(map());
  assert.deepEqual(rows.map((r) => r.category), ['prefix', 'user', 'assistant', 'toolCalls', 'toolResults', 'clearedStubs', 'summary', 'free', 'reservedOutput']);
  const total = rows.reduce((a, r) => a + r.share, 0);
  assert.ok(Math.abs(total - 1) < 1e-9, `shares add up to 1, got ${total}`);
  const results = rows.find((r) => r.category === 'toolResults');
  assert.equal(results.text, '4k (12.5%)');
  assert.equal(results.label, 'Tool results');
  for (const r of rows) assert.match(r.color, /^var\(--vscode-[A-Za-z.-]+\)$/, `${r.category} uses a theme colour`);
});

test('categoryRows: an overflowing or capacity-less window is scaled to what it holds', () => {
  const m = map({ capacity: 0, categories: cats({ prefix: 100, user: 300, free: 0, reservedOutput: 0 }) });
  const rows = c.categoryRows(m);
  assert.equal(rows.find((r) => r.category === 'user').share, 0.75);
});

test('headline: pressure, tokens, messages, requests, compactions, state', () => {
  assert.equal(c.headline(map()), '32% · 9k/32k tokens · 40 of 40 messages sent · 3 requests · 1 compaction · state ok');
  assert.match(c.headline(map({ capacity: 0, display: { percent: '', used: '9k', window: '', text: '9k' } })), /^9k tokens \(capacity unknown\)/);
});

test('chartPoints: one point per turn, compactions and large clears marked', () => {
  const { points, yMax } = c.chartPoints(map().turns);
  assert.equal(yMax, 1);
  assert.deepEqual(points.map((p) => p.x), [0, 0.5, 1]);
  assert.ok(Math.abs(points[2].y - 0.3225) < 1e-9);
  assert.equal(points[2].compaction, 'manual');
  assert.equal(points[1].largeClear, true);
  assert.match(points[1].label, /turn 2: 22% · 6k tokens · ok · 3 cleared \(4k freed\)/);
  const marked = c.chartPoints(map().turns, [...map().compactions, { turn: 4, trigger: 'auto', mode: 'local', originalTokens: 9000, compactedTokens: 3000, artifactId: 'a2' }]);
  assert.deepEqual(marked.marks.map((k) => [k.turn, k.x, k.next]), [[3, 1, false], [4, 1, true]]);
  assert.match(marked.marks[1].label, /^auto compaction \(local\) for turn 4: 9k → 3k tokens \(the next request\)$/);
  const over = c.chartPoints([{ turn: 1, tokens: 1, capacity: 1, pressure: 1.5, state: 'critical', messages: 1 }]);
  assert.equal(over.yMax, 1.5);
  assert.equal(over.points[0].x, 0.5);
});

test('the page: a strict CSP, one nonce\'d script and style, no remote or local resources', () => {
  const nonce = 'bm9uY2Vub25jZQ==';
  const csp = c.contentSecurityPolicy(nonce);
  assert.match(csp, /^default-src 'none';/);
  assert.doesNotMatch(csp, /unsafe|https?:|\*/);
  const html = c.contextPageHtml(nonce);
  assert.ok(html.includes(`content="${csp}"`));
  assert.equal(html.match(/<script/g).length, 1);
  assert.ok(html.includes(`<script nonce="${nonce}">`));
  assert.ok(html.includes(`<style nonce="${nonce}">`));
  assert.doesNotMatch(html, /\s(src|href)=/);
  assert.doesNotMatch(html, / style="/, 'no inline style attributes (the CSP forbids them)');
  const urls = html.match(/https?:\/\/[^\s'"]+/g) || [];
  assert.deepEqual([...new Set(urls)], ['http://www.w3.org/2000/svg'], 'only the SVG namespace, never a fetch');
  const script = html.slice(html.indexOf(`<script nonce="${nonce}">`) + `<script nonce="${nonce}">`.length, html.indexOf('</script>'));
  assert.doesNotThrow(() => new Function(script), 'the page script parses');
});

test('pageMessage: rows, headline, chart and the threshold line', () => {
  const m = c.pageMessage(map());
  assert.equal(m.type, 'map');
  assert.equal(m.rows.length, 9);
  assert.ok(Math.abs(m.threshold - 20928 / (32000 - 4096)) < 1e-9);
  assert.equal(c.pageMessage(map({ capacity: 0 })).threshold, 0);
});

test('isNoOp and the preview text', () => {
  assert.equal(c.isNoOp({ mode: 'none', message: 'Conversation is already compact.' }), true);
  assert.equal(c.isNoOp({ mode: 'local' }), false);
  assert.equal(c.previewSummaryText({ originalMessageCount: 64, compactedMessageCount: 29, originalTokens: 5952, compactedTokens: 3110, editable: true }),
    'VT Code: compaction preview · 64 → 29 messages, 6k → 3.1k tokens. Edit the summary, then Apply.');
});

test('fromPage: the page\'s messages, checked; anything else is refused', () => {
  for (const type of ['ready', 'refresh', 'preview']) assert.deepEqual(c.fromPage({ type, extra: 1 }), { type });
  assert.deepEqual(c.fromPage({ type: 'restore', artifactId: 'a1' }), { type: 'restore', artifactId: 'a1' });
  for (const bad of [undefined, null, 'ready', 42, {}, { type: 'restore' }, { type: 'restore', artifactId: 7 }, { type: 'restore', artifactId: '' }, { type: 'eval', code: 'x' }]) {
    assert.equal(c.fromPage(bad), undefined, `refuses ${JSON.stringify(bad)}`);
  }
});
