// Unit tests of the pure display logic (node --test). Built from src/display.ts into out/.
const test = require('node:test');
const assert = require('node:assert/strict');
const d = require('../../out/display.js');

// The table the daemon's formatters (session/display.go) and the Neovim plugin's are tested with.
test('formatTokens and formatPercent print the figures of editors/testdata/figures.txt', () => {
  const table = require('node:fs').readFileSync(require('node:path').join(__dirname, '../../../testdata/figures.txt'), 'utf8');
  let cases = 0;
  for (const line of table.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (!f[0] || f[0].startsWith('#')) continue;
    const [kind, value, want] = f;
    const got = kind === 'tokens' ? d.formatTokens(Number(value)) : kind === 'percent' ? d.formatPercent(Number(value)) : assert.fail(`kind ${kind}`);
    assert.equal(got, want, `${kind}(${value})`);
    cases++;
  }
  assert.ok(cases >= 20, `${cases} cases`);
  // what only a JavaScript caller can pass
  assert.equal(d.formatTokens(-5), '0');
  assert.equal(d.formatTokens(NaN), '0');
  assert.equal(d.formatPercent(NaN), '0%');
});

// display is the daemon's gauge (rpc/doc.go); the client shows it as is.
const gauge = (percent, used, window) => ({ percent, used, window, text: percent ? `${percent} · ${used}/${window}` : used });
const view = (o = {}) => ({ sessionId: 's1', projectedTokens: 78_100, capacity: 128_000, pressure: 0.62, state: 'ok', display: gauge('62%', '78.1k', '128k'), ...o });

test('statusText: the daemon\'s gauge, with the icon of the state', () => {
  assert.equal(d.statusText(view()), '$(pulse) 62% · 78.1k/128k');
  assert.equal(d.statusText(view({ state: 'critical', display: gauge('102%', '1.2M', '1M') })), '$(pulse) 102% · 1.2M/1M');
  assert.equal(d.statusText(view({ capacity: 0, pressure: 0, display: gauge('', '78.1k', '') })), '$(pulse) 78.1k');
  assert.equal(d.statusText(view({ state: 'compacting' })), '$(sync~spin) 62% · 78.1k/128k');
  assert.equal(d.statusText(view(), true), '$(sync~spin) 62% · 78.1k/128k');
  assert.equal(d.statusText(view({ projectedTokens: 1, display: gauge('63%', '80.1k', '128k') })), '$(pulse) 63% · 80.1k/128k', 'the text is the daemon\'s, not recomputed');
  assert.equal(d.statusText(undefined), '$(pulse) VT Code');
});

test('pressureView: a daemon without display figures shows a dash, not figures of the client', () => {
  const { display, ...old } = view();
  assert.equal(d.statusText(d.pressureView(old)), '$(pulse) —');
  assert.equal(d.statusText(d.pressureView(view())), '$(pulse) 62% · 78.1k/128k');
});

test('statusBackground: colour by state', () => {
  assert.equal(d.statusBackground('ok'), undefined);
  assert.equal(d.statusBackground(undefined), undefined);
  assert.equal(d.statusBackground('warn'), 'statusBarItem.warningBackground');
  assert.equal(d.statusBackground('compacting'), 'statusBarItem.warningBackground');
  assert.equal(d.statusBackground('critical'), 'statusBarItem.errorBackground');
});

const stats = {
  sessionId: 's1', messages: 120, projectedMessages: 118, originalTokens: 90_000, projectedTokens: 78_100,
  prefixTokens: 2_000, clearedResults: 12, protectedResults: 7, protectedBatches: 3, clearedInputs: 0,
  localTrigger: 40_000, historyBudget: 121_904, capacity: 128_000, reservedOutput: 4096,
  compactionThreshold: 92_928, pressure: 0.646, state: 'warn', strategy: 'local', compactions: 1,
  display: gauge('65%', '80.1k', '128k'),
  lastReportedInputTokens: 81_000,
  lastCompaction: { trigger: 'manual', mode: 'local', strategy: 'local', originalMessageCount: 200, compactedMessageCount: 14, originalTokens: 150_000, compactedTokens: 9_000, artifactId: 'a1', elapsedMs: 1400 },
  cache: { lastHitRate: 0.8, lowReuseStreak: 0, cumulativeInputTokens: 500_000, cumulativeCacheReadTokens: 400_000 },
};

test('tooltipMarkdown: session, pressure and stats', () => {
  const md = d.tooltipMarkdown(d.pressureView(stats), stats, true);
  assert.match(md, /session `s1` \(selected\)/);
  assert.match(md, /Pressure \*\*65%\*\*/);
  assert.match(md, /\| Projected tokens \| 78,100 \|/);
  assert.match(md, /\| Capacity \| 128,000 \|/);
  assert.match(md, /\| Compaction threshold \| 92,928 \|/);
  assert.match(md, /\| Messages \| 118 sent of 120 \|/);
  assert.match(md, /\| Tool results cleared \| 12 \(7 protected\) \|/);
  assert.match(md, /\| Prompt-cache hit rate \| 80% \|/);
  assert.match(md, /Click to compact/);
  // stats of another session are not mixed in
  assert.doesNotMatch(d.tooltipMarkdown(view({ sessionId: 'other' }), stats), /Compaction threshold/);
  assert.match(d.tooltipMarkdown(undefined), /no active session/);
});

test('statsSummary and statsDetail', () => {
  assert.equal(d.statsSummary(stats), 'Session s1 · 65% · 80.1k/128k tokens · 118 of 120 messages sent · 12 tool results cleared · 1 compaction · state warn');
  const detail = d.statsDetail(stats);
  assert.match(detail, /^session +s1$/m);
  assert.match(detail, /tokens \(history \/ sent\) +90,000 \/ 78,100/);
  assert.match(detail, /last reported input +81,000 \(estimate differs by 900\)/);
  assert.match(detail, /last compaction +manual, local\/local, 200 -> 14 messages/);
});

test('compactResultText prefers the server message', () => {
  const r = { mode: 'local', strategy: 'local', trigger: 'manual', elapsedMs: 1400, originalMessageCount: 120, compactedMessageCount: 14, originalTokens: 1, compactedTokens: 1, artifactId: 'a', message: '' };
  assert.equal(d.compactResultText(r), 'Context compacted · 1.4s (120 -> 14 messages, local)');
  assert.equal(d.compactResultText({ ...r, message: 'Context compacted · 0.2s (40 -> 9 messages, local)' }), 'Context compacted · 0.2s (40 -> 9 messages, local)');
});

test('errorText is bounded and carries the root cause', () => {
  const e = { code: -32803, message: 'compaction failed', data: { kind: 'budget', rootCause: 'history exceeds budget' } };
  assert.equal(d.errorText('VT Code: Compaction failed', e), 'VT Code: Compaction failed: compaction failed (history exceeds budget)');
  const long = d.errorText('X', new Error('y'.repeat(5000)));
  assert.equal(long.length, d.MaxErrorChars);
  assert.ok(long.endsWith('…'));
  assert.equal(d.errorText('X', 'multi\n line'), 'X: multi line');
  assert.ok(d.isCancelled({ code: -32800 }));
  assert.ok(!d.isCancelled(new Error('x')));
});

test('relativeTime and pick items', () => {
  const now = new Date('2026-11-30T12:00:00Z');
  assert.equal(d.relativeTime('2026-11-30T11:59:50Z', now), 'just now');
  assert.equal(d.relativeTime('2026-11-30T11:55:00Z', now), '5 min ago');
  assert.equal(d.relativeTime('2026-11-30T09:00:00Z', now), '3 h ago');
  assert.equal(d.relativeTime('2026-11-01T09:30:00Z', now), '2026-11-01 09:30');
  const s = d.sessionPickItem({ sessionId: 'abc', workspace: '/ws', messages: 1, updatedAt: '2026-11-30T11:55:00Z' }, true, now);
  assert.deepEqual(s, { label: '$(check) abc', description: '1 message · updated 5 min ago', detail: '/ws' });
  const a = d.artifactPickItem({ artifactId: 'x1', createdAt: '2026-11-30T09:00:00Z', messages: 40, trigger: 'auto', mode: 'local' }, now);
  assert.deepEqual(a, { label: '3 h ago', description: '40 messages · auto compaction (local)', detail: 'x1' });
});

test('progressIncrement converts absolute percentages', () => {
  assert.equal(d.progressIncrement(0, undefined), undefined);
  assert.equal(d.progressIncrement(0, 30), 30);
  assert.equal(d.progressIncrement(30, 30), undefined);
  assert.equal(d.progressIncrement(30, 20), undefined);
  assert.equal(d.progressIncrement(30, 150), 70);
});

test('tooltipMarkdown: prompt-cache reuse of the next request', () => {
  const reuse = {
    reusedTokens: 76_000, requestTokens: 80_100, ratio: 0.949, reusedMessages: 110, costUnits: 12_725,
    cacheCold: false, clearedHorizon: 90, heldTokens: 6_400, pricing: { read: 0.1, write: 1.25, ttlSeconds: 300 },
    lastResponse: { predictedReadTokens: 74_000, cacheReadTokens: 73_500, cacheWriteTokens: 2_000, difference: -500 },
  };
  const md = d.tooltipMarkdown(d.pressureView(stats), { ...stats, reuse });
  const row = md.split('\n').find((l) => l.startsWith('| Cache reuse'));
  assert.ok(row, md);
  assert.match(row, /95%/);
  assert.match(row, /76k of 80\.1k tokens|76k of 80\\\.1k tokens/);
  assert.match(row, /6\\?\.4k held for the cache/);
  assert.match(row, /last read 73\\?\.5k \\?\(predicted 74k\\?\)/);
  const cold = d.tooltipMarkdown(d.pressureView(stats), { ...stats, reuse: { ...reuse, cacheCold: true, lastResponse: undefined } });
  assert.match(cold, /\| Cache reuse \(next request\) \| cold \\\(expired after 5 min\\\): 80,100 tokens written \|/);
  assert.doesNotMatch(d.tooltipMarkdown(d.pressureView(stats), stats), /Cache reuse/, 'no row without reuse stats');
});
