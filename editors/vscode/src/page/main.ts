// The script of the "VT Code: Show Context" page, run in the webview (DOM only, no Node, no
// vscode). esbuild bundles it (scripts/build.mjs) and the page inlines it under the nonce of its
// CSP (contextmap.ts contextPageHtml). It renders what the extension posts (ToPage, with
// everything computed on the extension side) and posts back FromPage: the messages of
// page/messages.ts, checked by tsc on both sides. CSSOM only: the CSP forbids inline style
// attributes.

import type { FromPage, MapMessage, ToPage } from './messages';

/** The page's handle on the webview host (a global in the webview). */
declare function acquireVsCodeApi(): { postMessage(m: FromPage): void };

const vscodeApi = acquireVsCodeApi();
const post = (m: FromPage) => vscodeApi.postMessage(m);
const doc = document;
const $ = (id: string) => doc.getElementById(id) as HTMLElement;
const el = (tag: string, attrs: Record<string, string> = {}, text?: string) => {
  const e = doc.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
};
const svg = (tag: string, attrs: Record<string, string | number> = {}) => {
  const e = doc.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
};
const fmt = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '—');
const clear = (e: HTMLElement) => { while (e.firstChild) e.removeChild(e.firstChild); };

$('refresh').addEventListener('click', () => post({ type: 'refresh' }));
$('preview').addEventListener('click', () => post({ type: 'preview' }));

function render(m: MapMessage): void {
  const map = m.map;
  $('title').textContent = `Session ${map.sessionId}`;
  $('headline').textContent = m.headline;
  $('receipt').textContent = m.receipt;
  // the stacked bar and its legend
  const bar = $('bar');
  clear(bar);
  const legend = $('legend');
  clear(legend);
  for (const r of m.rows) {
    const seg = el('div', { class: `seg ${r.category}`, title: `${r.label}: ${r.text}`, 'data-category': r.category });
    seg.style.width = `${(r.share * 100).toFixed(3)}%`;
    seg.style.background = r.color;
    bar.appendChild(seg);
    const tr = el('tr', { 'data-category': r.category });
    const name = el('td');
    const sw = el('span', { class: 'swatch' });
    sw.style.background = r.color;
    name.appendChild(sw);
    name.appendChild(doc.createTextNode(r.label));
    tr.appendChild(name);
    tr.appendChild(el('td', { class: 'num' }, fmt(r.tokens)));
    tr.appendChild(el('td', { class: 'num' }, `${(r.share * 100).toFixed(1)}%`));
    tr.appendChild(el('td', { class: 'num' }, r.category === 'free' || r.category === 'reservedOutput' || r.category === 'prefix' && r.messages === 0 ? '' : String(r.messages)));
    legend.appendChild(tr);
  }
  // the pressure chart
  const chart = $('chart') as unknown as SVGSVGElement;
  while (chart.firstChild) chart.removeChild(chart.firstChild);
  const W = 900, H = 220, L = 44, R = 16, T = 12, B = 28;
  const px = (x: number) => L + x * (W - L - R);
  const py = (y: number) => T + (1 - y) * (H - T - B);
  chart.appendChild(svg('line', { class: 'axis', x1: L, y1: py(0), x2: W - R, y2: py(0) }));
  chart.appendChild(svg('line', { class: 'axis', x1: L, y1: T, x2: L, y2: py(0) }));
  const yMax = m.chart.yMax;
  for (const v of [0, 0.5, 1]) {
    const t = svg('text', { x: 4, y: py(v / yMax) + 3 });
    t.textContent = `${Math.round(v * 100)}%`;
    chart.appendChild(t);
  }
  if (m.threshold > 0) chart.appendChild(svg('line', { class: 'threshold', x1: L, x2: W - R, y1: py(m.threshold / yMax), y2: py(m.threshold / yMax) }));
  const pts = m.chart.points;
  $('chart-empty').textContent = pts.length ? '' : 'No request has been prepared in this session yet.';
  if (pts.length) {
    chart.appendChild(svg('polyline', { class: 'line', points: pts.map((p) => `${px(p.x).toFixed(1)},${py(p.y).toFixed(1)}`).join(' ') }));
    for (const p of pts) {
      const dot = svg('circle', { class: 'dot', cx: px(p.x), cy: py(p.y), r: 3 });
      const title = svg('title'); title.textContent = p.label; dot.appendChild(title);
      chart.appendChild(dot);
      if (p.largeClear) {
        const tri = svg('path', { class: 'clear', d: `M${px(p.x) - 5},${py(0) + 12} l5,-8 l5,8 z` });
        const tt = svg('title'); tt.textContent = `large clear at turn ${p.turn}`; tri.appendChild(tt);
        chart.appendChild(tri);
      }
    }
  }
  for (const k of m.chart.marks) {
    const kx = px(k.x) + (k.next ? 8 : 0);
    const ln = svg('line', { class: 'compaction', x1: kx, x2: kx, y1: T, y2: py(0), 'data-turn': k.turn });
    const tt = svg('title'); tt.textContent = k.label; ln.appendChild(tt);
    chart.appendChild(ln);
    const lbl = svg('text', { x: Math.min(kx + 3, W - 56), y: T + 9 }); lbl.textContent = 'compacted'; chart.appendChild(lbl);
  }
  if (pts.length) {
    const first = svg('text', { x: L, y: H - 6 }); first.textContent = `turn ${pts[0].turn}`; chart.appendChild(first);
    const last = svg('text', { x: W - R - 40, y: H - 6 }); last.textContent = `turn ${pts[pts.length - 1].turn}`; chart.appendChild(last);
  }
  $('chart-caption').textContent = `${pts.length} request${pts.length === 1 ? '' : 's'} · ${map.compactions.length} compaction${map.compactions.length === 1 ? '' : 's'} marked · ` +
    `${map.turns.filter((t) => t.largeClear).length} large clear(s)`;
  // cleared results
  const cleared = $('cleared');
  clear(cleared);
  $('cleared-count').textContent = `(${map.cleared.length})`;
  for (const c of map.cleared) {
    const tr = el('tr');
    tr.appendChild(el('td', {}, c.tool || '—'));
    tr.appendChild(el('td', {}, c.callId));
    tr.appendChild(el('td', { class: 'num' }, fmt(c.originalTokens)));
    tr.appendChild(el('td', { class: 'num' }, fmt(c.stubTokens)));
    tr.appendChild(el('td', { class: 'num' }, fmt(c.originalTokens - c.stubTokens)));
    tr.appendChild(el('td', { class: 'num' }, c.pending ? `next (${c.turn})` : String(c.turn)));
    cleared.appendChild(tr);
  }
  $('cleared-empty').textContent = map.cleared.length ? '' : 'No tool result is cleared in the next request.';
  // artifacts
  const arts = $('artifacts');
  clear(arts);
  const sorted = [...map.artifacts].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  for (const a of sorted) {
    const tr = el('tr');
    tr.appendChild(el('td', {}, a.createdAt.replace('T', ' ').slice(0, 19)));
    tr.appendChild(el('td', {}, a.mode ? `${a.trigger} (${a.mode})` : a.trigger));
    tr.appendChild(el('td', { class: 'num' }, String(a.messages)));
    const td = el('td');
    const b = el('button', { class: 'secondary', 'data-artifact': a.artifactId }, 'Restore');
    b.addEventListener('click', () => post({ type: 'restore', artifactId: a.artifactId }));
    td.appendChild(b);
    tr.appendChild(td);
    arts.appendChild(tr);
  }
  $('artifacts-empty').textContent = map.artifacts.length ? '' : 'No compaction artifacts yet.';
  $('updated').textContent = `updated ${new Date().toLocaleTimeString()}`;
}

window.addEventListener('message', (ev: MessageEvent<ToPage>) => {
  const m = ev.data;
  switch (m?.type) {
    case 'map':
      render(m);
      break;
    case 'empty':
      $('title').textContent = 'No active session';
      $('headline').textContent = m.text;
      break;
  }
});
post({ type: 'ready' });
