// Pure display logic of the extension: status-bar text and colour, tooltip, number formatting,
// quick-pick labels and bounded error text. No dependency on `vscode`, tested with `node --test`.

import { receiptRows } from './receipt';
import type { ArtifactInfo, CompactResult, Display, PressureState, ReuseStats, SessionInfo, Stats, TokenPressure } from './protocol';

/** The theme colour ids of the status-bar backgrounds. */
export const WarningBackground = 'statusBarItem.warningBackground';
export const ErrorBackground = 'statusBarItem.errorBackground';

/** The most characters of error text shown to a user (docs/design.md §1 bounds server text at 1 KiB too). */
export const MaxErrorChars = 1024;

/**
 * formatTokens renders a token count compactly: 950, 9.5k, 78.1k, 128k, 1.2M.
 * One decimal below 100k (and for millions), none from 100k on; a trailing ".0" is dropped.
 */
export function formatTokens(n: number): string {
  if (!Number.isFinite(n) || n < 0) return '0';
  n = Math.round(n);
  if (n < 1000) return String(n);
  if (n < 100_000) {
    const k = Math.round(n / 100) / 10;
    return trimZero(k.toFixed(1)) + 'k';
  }
  if (n < 1_000_000) {
    const k = Math.round(n / 1000);
    if (k < 1000) return k + 'k';
  }
  const m = Math.round(n / 100_000) / 10;
  return trimZero(m.toFixed(1)) + 'M';
}

function trimZero(s: string): string {
  return s.endsWith('.0') ? s.slice(0, -2) : s;
}

/** formatPercent renders a pressure ratio (0.62) as "62%". */
export function formatPercent(pressure: number): string {
  if (!Number.isFinite(pressure) || pressure < 0) return '0%';
  return Math.round(pressure * 100) + '%';
}

/** What the status bar shows for one session; display is the daemon's formatted gauge. */
export interface PressureView {
  sessionId: string;
  projectedTokens: number;
  capacity: number;
  pressure: number;
  state: PressureState;
  display: Display;
  originalTokens?: number;
}

/**
 * NoFigures stands in for the display of a daemon that sends none (older than the display field):
 * the client shows a dash rather than figures of its own.
 */
export const NoFigures: Display = { percent: '', used: '', window: '', text: '—' };

/** pressureView takes the display fields out of a notification or a stats object. */
export function pressureView(p: TokenPressure | Stats): PressureView {
  return {
    sessionId: p.sessionId,
    projectedTokens: p.projectedTokens,
    capacity: p.capacity,
    pressure: p.pressure,
    state: p.state,
    display: p.display ?? NoFigures,
    originalTokens: p.originalTokens,
  };
}

/**
 * statusText is the status-bar text: the daemon's gauge (`$(pulse) 62% · 78.1k/128k`, or
 * `$(pulse) 78.1k` when the capacity is unknown); a spinning icon while compacting;
 * `$(pulse) VT Code` without a session.
 */
export function statusText(view: PressureView | undefined, compacting = false): string {
  if (!view) return '$(pulse) VT Code';
  const icon = compacting || view.state === 'compacting' ? '$(sync~spin)' : '$(pulse)';
  return `${icon} ${view.display.text}`;
}

/**
 * statusBackground is the theme colour id of the status-bar background for a state:
 * warning at `warn` and while compacting, error at `critical`, none at `ok`.
 */
export function statusBackground(state: PressureState | undefined): string | undefined {
  switch (state) {
    case 'warn':
    case 'compacting':
      return WarningBackground;
    case 'critical':
      return ErrorBackground;
    default:
      return undefined;
  }
}

const stateWords: Record<PressureState, string> = {
  ok: 'ok',
  warn: 'warning: approaching the compaction threshold',
  compacting: 'compacting',
  critical: 'critical: over the compaction threshold',
};

/** stateText is a human phrase for a pressure state. */
export function stateText(state: PressureState | undefined): string {
  return (state && stateWords[state]) || 'unknown';
}

function int(n: number | undefined): string {
  return typeof n === 'number' && Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '—';
}

function escapeMarkdown(s: string): string {
  return s.replace(/([\\`*_{}\[\]()#+\-.!|<>])/g, '\\$1');
}

/**
 * tooltipMarkdown is the status-bar tooltip: the session, its pressure and, when known, the
 * projection stats of docs/design.md §9. Returns Markdown.
 */
export function tooltipMarkdown(view: PressureView | undefined, stats?: Stats, pinned = false): string {
  if (!view) {
    return '**VT Code** — no active session.\n\nAn agent opens one through the extension API; ' +
      'click to pick a stored session.';
  }
  const lines: string[] = [];
  lines.push(`**VT Code** — session \`${view.sessionId.replace(/`/g, "'")}\`${pinned ? ' (selected)' : ''}`);
  lines.push('');
  lines.push(`Pressure **${view.display.percent || '—'}** (${escapeMarkdown(stateText(view.state))})`);
  lines.push('');
  lines.push('| | |');
  lines.push('|---|---|');
  lines.push(`| Projected tokens | ${int(view.projectedTokens)} |`);
  if (view.originalTokens !== undefined) lines.push(`| History tokens | ${int(view.originalTokens)} |`);
  lines.push(`| Capacity | ${view.capacity > 0 ? int(view.capacity) : 'unknown'} |`);
  if (stats && stats.sessionId === view.sessionId) {
    lines.push(`| Prefix tokens | ${int(stats.prefixTokens)} |`);
    lines.push(`| Reserved output | ${int(stats.reservedOutput)} |`);
    lines.push(`| Compaction threshold | ${int(stats.compactionThreshold)} |`);
    lines.push(`| Messages | ${int(stats.projectedMessages)} sent of ${int(stats.messages)} |`);
    lines.push(`| Tool results cleared | ${int(stats.clearedResults)} (${int(stats.protectedResults)} protected) |`);
    lines.push(`| Strategy | ${escapeMarkdown(stats.strategy || '—')} |`);
    lines.push(`| Compactions | ${int(stats.compactions)} |`);
    if (stats.lastReportedInputTokens !== undefined) {
      lines.push(`| Last reported input | ${int(stats.lastReportedInputTokens)} |`);
    }
    if (stats.cache) {
      lines.push(`| Prompt-cache hit rate | ${formatPercent(stats.cache.lastHitRate)} |`);
    }
    if (stats.reuse) lines.push(`| Cache reuse (next request) | ${cacheReuseText(stats.reuse)} |`);
    if (stats.receipt) lines.push(...receiptRows(stats.receipt, escapeMarkdown));
  }
  lines.push('');
  lines.push('Click to compact the context.');
  return lines.join('\n');
}

/**
 * cacheReuseText describes the predicted prompt-cache reuse of a request: the share of its tokens
 * the cache serves, what clearing holds back for the cache, and the provider's last reported read
 * against the prediction.
 */
export function cacheReuseText(r: ReuseStats): string {
  if (r.cacheCold) return escapeMarkdown(`cold (expired after ${Math.round(r.pricing.ttlSeconds / 60)} min): ${int(r.requestTokens)} tokens written`);
  let s = `${formatPercent(r.ratio)} · ${formatTokens(r.reusedTokens)} of ${formatTokens(r.requestTokens)} tokens`;
  if (r.heldTokens > 0) s += ` · ${formatTokens(r.heldTokens)} held for the cache`;
  const last = r.lastResponse;
  if (last) s += ` · last read ${formatTokens(last.cacheReadTokens)} (predicted ${formatTokens(last.predictedReadTokens)})`;
  return escapeMarkdown(s);
}

/** statsSummary is a one-line summary of projection stats for a notification. */
export function statsSummary(s: Stats): string {
  const parts = [
    `Session ${s.sessionId}`,
    `${(s.display ?? NoFigures).text} tokens`,
    `${s.projectedMessages} of ${s.messages} messages sent`,
    `${s.clearedResults} tool results cleared`,
    `${s.compactions} compaction${s.compactions === 1 ? '' : 's'}`,
    `state ${s.state}`,
  ];
  return parts.join(' · ');
}

/** statsDetail renders every stats field as aligned text lines (for the output channel). */
export function statsDetail(s: Stats): string {
  const rows: Array<[string, string]> = [
    ['session', s.sessionId],
    ['messages (history / sent)', `${int(s.messages)} / ${int(s.projectedMessages)}`],
    ['tokens (history / sent)', `${int(s.originalTokens)} / ${int(s.projectedTokens)}`],
    ['prefix tokens', int(s.prefixTokens)],
    ['capacity', s.capacity > 0 ? int(s.capacity) : 'unknown'],
    ['reserved output', int(s.reservedOutput)],
    ['compaction threshold', int(s.compactionThreshold)],
    ['pressure', `${formatPercent(s.pressure)} (${s.state})`],
    ['tool results cleared', int(s.clearedResults)],
    ['protected results / batches', `${int(s.protectedResults)} / ${int(s.protectedBatches)}`],
    ['cleared inputs', int(s.clearedInputs)],
    ['clearing trigger', int(s.localTrigger)],
    ['history budget', int(s.historyBudget)],
    ['strategy', s.strategy || '—'],
    ['compactions', int(s.compactions)],
  ];
  if (s.lastReportedInputTokens !== undefined) {
    rows.push(['last reported input', `${int(s.lastReportedInputTokens)} (estimate differs by ${int(s.lastReportedInputTokens - s.projectedTokens - s.prefixTokens)})`]);
  }
  if (s.lastCompaction) {
    const c = s.lastCompaction;
    rows.push(['last compaction', `${c.trigger}, ${c.mode}/${c.strategy}, ${c.originalMessageCount} -> ${c.compactedMessageCount} messages, ${int(c.originalTokens)} -> ${int(c.compactedTokens)} tokens, artifact ${c.artifactId}`]);
  }
  if (s.cache) {
    rows.push(['prompt cache', `last hit rate ${formatPercent(s.cache.lastHitRate)}, low-reuse streak ${s.cache.lowReuseStreak}, cumulative ${int(s.cache.cumulativeCacheReadTokens)} of ${int(s.cache.cumulativeInputTokens)} input tokens read from cache`]);
  }
  const w = Math.max(...rows.map(r => r[0].length));
  return rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n');
}

/** compactResultText is the notification text after a successful compaction. */
export function compactResultText(r: CompactResult): string {
  if (r.message) return r.message;
  return `Context compacted · ${(r.elapsedMs / 1000).toFixed(1)}s (${r.originalMessageCount} -> ${r.compactedMessageCount} messages, ${r.mode})`;
}

/** relativeTime renders an ISO time relative to now: "just now", "5 min ago", "3 h ago", a date. */
export function relativeTime(iso: string, now: Date = new Date()): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso || '';
  const s = Math.round((now.getTime() - t) / 1000);
  if (s < 45) return 'just now';
  if (s < 3600) return `${Math.max(1, Math.round(s / 60))} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return new Date(t).toISOString().slice(0, 16).replace('T', ' ');
}

/** sessionPickItem is the quick-pick label/description/detail of a stored session. */
export function sessionPickItem(s: SessionInfo, active: boolean, now?: Date): { label: string; description: string; detail: string } {
  return {
    label: (active ? '$(check) ' : '') + s.sessionId,
    description: `${s.messages} message${s.messages === 1 ? '' : 's'} · updated ${relativeTime(s.updatedAt, now)}`,
    detail: s.workspace,
  };
}

/** artifactPickItem is the quick-pick label/description of a compaction artifact. */
export function artifactPickItem(a: ArtifactInfo, now?: Date): { label: string; description: string; detail: string } {
  return {
    label: relativeTime(a.createdAt, now),
    description: `${a.messages} message${a.messages === 1 ? '' : 's'} · ${a.trigger} compaction (${a.mode})`,
    detail: a.artifactId,
  };
}

/** boundText cuts text to at most max characters, marking the cut. */
export function boundText(s: string, max = MaxErrorChars): string {
  if (s.length <= max) return s;
  return s.slice(0, max - 1) + '…';
}

/** A JSON-RPC error as seen by the client (ResponseError or plain Error). */
export interface RpcErrorLike {
  code?: number;
  message?: string;
  data?: unknown;
}

/** isCancelled reports whether err is the RequestCancelled (-32800) answer. */
export function isCancelled(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as RpcErrorLike).code === -32800;
}

/**
 * errorText renders a failed request for a notification: "<what>: <message>", bounded.
 * For -32803 with data.rootCause the root cause is appended when the message does not already
 * contain it.
 */
export function errorText(what: string, err: unknown): string {
  let msg: string;
  if (typeof err === 'object' && err !== null) {
    const e = err as RpcErrorLike;
    msg = typeof e.message === 'string' && e.message ? e.message : String(err);
    const data = e.data as { rootCause?: unknown } | undefined;
    if (e.code === -32803 && data && typeof data.rootCause === 'string' && data.rootCause && !msg.includes(data.rootCause)) {
      msg += ` (${data.rootCause})`;
    }
  } else {
    msg = String(err);
  }
  msg = msg.replace(/\s+/g, ' ').trim();
  return boundText(`${what}: ${msg}`);
}

/** Progress values of LSP work-done progress. */
export type WorkDoneValue =
  | { kind: 'begin'; title: string; message?: string; percentage?: number; cancellable?: boolean }
  | { kind: 'report'; message?: string; percentage?: number; cancellable?: boolean }
  | { kind: 'end'; message?: string };

/**
 * progressIncrement converts an absolute LSP percentage into the increment VS Code's progress
 * API wants, given the last percentage reported; undefined when there is nothing to add.
 */
export function progressIncrement(last: number, percentage: number | undefined): number | undefined {
  if (typeof percentage !== 'number' || !Number.isFinite(percentage)) return undefined;
  const p = Math.max(0, Math.min(100, percentage));
  return p > last ? p - last : undefined;
}
