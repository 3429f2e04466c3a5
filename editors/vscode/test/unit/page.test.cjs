// The "VT Code: Show Context" page script (src/page/main.ts) as the webview runs it: the script
// the built page inlines, on a small DOM made of the page's own element ids, talking to a fake
// webview host in the messages of src/page/messages.ts (ToPage in, FromPage out).
const test = require('node:test');
const assert = require('node:assert/strict');
const c = require('../../out/contextmap.js');

class Node {
  constructor(tag) {
    this.tag = tag;
    this.attrs = {};
    this.children = [];
    this.style = {};
    this.listeners = {};
    this.text = '';
  }
  setAttribute(k, v) { this.attrs[k] = String(v); }
  appendChild(n) { this.children.push(n); return n; }
  removeChild(n) { this.children.splice(this.children.indexOf(n), 1); return n; }
  get firstChild() { return this.children[0] ?? null; }
  set textContent(t) { this.children = []; this.text = String(t); }
  get textContent() { return this.text + this.children.map((n) => n.textContent).join(''); }
  addEventListener(type, fn) { (this.listeners[type] ??= []).push(fn); }
  click() { for (const fn of this.listeners.click ?? []) fn({}); }
  /** all lists the descendants that pred accepts. */
  all(pred) { return this.children.flatMap((n) => [...(pred(n) ? [n] : []), ...n.all(pred)]); }
}

/** page runs the built page's script on the elements its HTML declares; posted holds what it sent. */
function page() {
  const nonce = 'bm9uY2Vub25jZQ==';
  const html = c.contextPageHtml(nonce);
  const open = `<script nonce="${nonce}">`;
  const script = html.slice(html.indexOf(open) + open.length, html.indexOf('</script>'));
  const byId = new Map([...html.matchAll(/\sid="([^"]+)"/g)].map(([, id]) => [id, new Node(id)]));
  const document = {
    getElementById: (id) => byId.get(id) ?? null, // an id the HTML lacks fails the script
    createElement: (tag) => new Node(tag),
    createElementNS: (_ns, tag) => new Node(tag),
    createTextNode: (t) => Object.assign(new Node('#text'), { text: String(t) }),
  };
  const onMessage = [];
  const window = { addEventListener: (type, fn) => type === 'message' && onMessage.push(fn) };
  const posted = [];
  new Function('acquireVsCodeApi', 'document', 'window', script)(() => ({ postMessage: (m) => posted.push(m) }), document, window);
  return {
    posted,
    el: (id) => byId.get(id),
    send: (data) => { for (const fn of onMessage) fn({ data }); },
  };
}

const cats = (o) => Object.entries(o).map(([category, tokens]) => ({ category, tokens, messages: category === 'free' || category === 'reservedOutput' ? 0 : 2 }));
const map = {
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
  artifacts: [
    { artifactId: 'a1', createdAt: '2026-12-01T09:00:00Z', messages: 60, trigger: 'manual', mode: 'local' },
    { artifactId: 'a2', createdAt: '2026-12-01T10:00:00Z', messages: 80, trigger: 'auto', mode: '' },
  ],
};

test('the page says it is ready, and its toolbar posts refresh and preview', () => {
  const p = page();
  assert.deepEqual(p.posted, [{ type: 'ready' }]);
  p.el('refresh').click();
  p.el('preview').click();
  assert.deepEqual(p.posted.slice(1), [{ type: 'refresh' }, { type: 'preview' }]);
  for (const m of p.posted) assert.deepEqual(c.fromPage(m), m, 'the host accepts what the page posts');
});

test('a map message renders the headline, the bar and legend, the chart, the cleared results and the artifacts', () => {
  const p = page();
  const msg = c.pageMessage(map);
  p.send(msg);
  assert.equal(p.el('title').textContent, 'Session s1');
  assert.equal(p.el('headline').textContent, msg.headline);
  assert.equal(p.el('bar').children.length, 9);
  const legend = p.el('legend').children;
  assert.deepEqual(legend.map((tr) => tr.attrs['data-category']), map.categories.map((x) => x.category));
  assert.deepEqual(legend.find((tr) => tr.attrs['data-category'] === 'toolResults').children.map((td) => td.textContent), ['Tool results', '4,000', '12.5%', '2']);
  const chart = p.el('chart');
  assert.equal(chart.all((n) => n.tag === 'circle').length, 3, 'one point per request');
  assert.equal(chart.all((n) => n.tag === 'line' && n.attrs.class === 'compaction').length, 1, 'the compaction marked');
  assert.equal(chart.all((n) => n.tag === 'line' && n.attrs.class === 'threshold').length, 1, 'the threshold drawn');
  assert.equal(p.el('chart-empty').textContent, '');
  assert.match(p.el('chart-caption').textContent, /^3 requests · 1 compaction marked · 1 large clear/);
  assert.deepEqual(p.el('cleared').children[0].children.map((td) => td.textContent), ['read_file', 'call_1', '1,400', '30', '1,370', '2']);
  const arts = p.el('artifacts').children;
  assert.deepEqual(arts.map((tr) => tr.children[1].textContent), ['auto', 'manual (local)'], 'newest first');
  arts[1].all((n) => n.tag === 'button')[0].click();
  assert.deepEqual(p.posted.at(-1), { type: 'restore', artifactId: 'a1' });
  assert.deepEqual(c.fromPage(p.posted.at(-1)), p.posted.at(-1));
});

test('a new map replaces the old one; an empty message says there is no session', () => {
  const p = page();
  p.send(c.pageMessage(map));
  p.send(c.pageMessage({ ...map, turns: [], compactions: [], cleared: [], artifacts: [] }));
  assert.equal(p.el('chart').all((n) => n.tag === 'circle').length, 0);
  assert.equal(p.el('chart-empty').textContent, 'No request has been prepared in this session yet.');
  assert.equal(p.el('artifacts').children.length, 0);
  assert.equal(p.el('artifacts-empty').textContent, 'No compaction artifacts yet.');
  assert.equal(p.el('legend').children.length, 9, 'the legend is not appended twice');
  p.send({ type: 'empty', text: 'Pick a session.' });
  assert.equal(p.el('title').textContent, 'No active session');
  assert.equal(p.el('headline').textContent, 'Pick a session.');
});
