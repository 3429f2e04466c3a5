// The context map (vtcode/contextMap) and compaction preview shapes, and the host side of the
// "VT Code: Show Context" webview: the category rows, the chart geometry, the check of what the
// page posts, and the page itself (strict CSP: one nonce'd script and style, no remote or local
// resources; the script is page/main.ts, bundled by scripts/build.mjs). No `vscode` here, so it
// is unit-tested with `node --test`.

import { receiptSummary, type Receipt } from './receipt';
import { formatPercent, formatTokens, NoFigures } from './display';
import type { ArtifactInfo, CompactResult, Display, Message, PressureState } from './protocol';
import type { FromPage, MapMessage } from './page/messages';

/** The page script (page/main.ts), bundled and inlined by scripts/build.mjs (esbuild define). */
declare const VTCODE_CONTEXT_PAGE_SCRIPT: string;

/** One category of the window. */
export interface ContextCategory {
  category: string;
  tokens: number;
  messages: number;
}

/** One prepared request of the session. */
export interface TurnPressure {
  turn: number;
  tokens: number;
  capacity: number;
  pressure: number;
  state: PressureState;
  messages: number;
  trimmed?: boolean;
  clearedResults?: number;
  clearedTokens?: number;
  largeClear?: boolean;
  compaction?: string;
}

/** One compaction of the session; turn is the request it took effect for. */
export interface CompactionMark {
  turn: number;
  trigger: string;
  mode: string;
  originalTokens: number;
  compactedTokens: number;
  artifactId: string;
}

/** A tool result the next request carries as a stub. */
export interface ClearedResult {
  tool: string;
  callId: string;
  originalTokens: number;
  stubTokens: number;
  turn: number;
  pending?: boolean;
}

/** `vtcode/contextMap` result. */
export interface ContextMap {
  sessionId: string;
  capacity: number;
  reservedOutput: number;
  compactionThreshold: number;
  usedTokens: number;
  pressure: number;
  state: PressureState;
  display: Display;
  messages: number;
  projectedMessages: number;
  categories: ContextCategory[];
  turns: TurnPressure[];
  compactions: CompactionMark[];
  cleared: ClearedResult[];
  artifacts: ArtifactInfo[];
  receipt?: Receipt;
}

/** `vtcode/compact` result with `preview: true`; previewId is "" when already compact. */
export interface CompactPreview {
  previewId: string;
  summary: string;
  editable: boolean;
  messages: Message[];
  mode: string;
  strategy: string;
  originalMessageCount: number;
  compactedMessageCount: number;
  originalTokens: number;
  compactedTokens: number;
  elapsedMs: number;
  message: string;
}

export const ContextMapMethod = 'vtcode/contextMap';

/** The JSON-RPC error of a preview committed after the history changed (LSP ContentModified). */
export const ContentModified = -32801;

/** isNoOp reports whether a compact result is the "already compact" outcome (mode "none"). */
export function isNoOp(r: CompactResult | CompactPreview | undefined): boolean {
  return !!r && r.mode === 'none';
}

/** previewSummaryText is the notification text of a preview ready to apply. */
export function previewSummaryText(p: CompactPreview): string {
  return `VT Code: compaction preview · ${p.originalMessageCount} → ${p.compactedMessageCount} messages, ` +
    `${formatTokens(p.originalTokens)} → ${formatTokens(p.compactedTokens)} tokens. ` +
    (p.editable ? 'Edit the summary, then Apply.' : 'The summary is opaque (provider-native); Apply commits it as is.');
}

/** The label and theme colour (a VS Code CSS variable) of each category. */
export const categoryStyle: Record<string, { label: string; color: string }> = {
  prefix: { label: 'System prompt & tools', color: 'var(--vscode-charts-purple)' },
  user: { label: 'User messages', color: 'var(--vscode-charts-blue)' },
  assistant: { label: 'Assistant text', color: 'var(--vscode-charts-green)' },
  toolCalls: { label: 'Tool calls', color: 'var(--vscode-charts-yellow)' },
  toolResults: { label: 'Tool results', color: 'var(--vscode-charts-orange)' },
  clearedStubs: { label: 'Cleared stubs', color: 'var(--vscode-charts-red)' },
  summary: { label: 'Compaction summary', color: 'var(--vscode-terminal-ansiCyan)' },
  free: { label: 'Free', color: 'var(--vscode-editorWidget-background)' },
  reservedOutput: { label: 'Reserved output', color: 'var(--vscode-descriptionForeground)' },
};

/** A row of the category legend: label, tokens, share of the window. */
export interface CategoryRow {
  category: string;
  label: string;
  color: string;
  tokens: number;
  messages: number;
  share: number; // 0..1 of the bar
  text: string; // "12.3k (9.6%)"
}

/**
 * categoryRows computes the stacked bar: each category's share of the window (the capacity, or
 * the sum of the categories when it is unknown or overflowed).
 */
export function categoryRows(map: ContextMap): CategoryRow[] {
  const sum = map.categories.reduce((a, c) => a + Math.max(0, c.tokens), 0);
  const whole = Math.max(map.capacity > 0 ? map.capacity : 0, sum) || 1;
  return map.categories.map((c) => {
    const st = categoryStyle[c.category] ?? { label: c.category, color: 'var(--vscode-foreground)' };
    const share = Math.max(0, c.tokens) / whole;
    return {
      category: c.category, label: st.label, color: st.color, tokens: c.tokens, messages: c.messages, share,
      text: `${formatTokens(c.tokens)} (${(share * 100).toFixed(1)}%)`,
    };
  });
}

/** headline is the one-line summary above the bar. */
export function headline(map: ContextMap): string {
  // the daemon's gauge, the same text as the status bar's
  const text = (map.display ?? NoFigures).text;
  const win = map.capacity > 0 ? `${text} tokens` : `${text} tokens (capacity unknown)`;
  return `${win} · ${map.projectedMessages} of ${map.messages} messages sent · ${map.turns.length} request${map.turns.length === 1 ? '' : 's'} · ` +
    `${map.compactions.length} compaction${map.compactions.length === 1 ? '' : 's'} · state ${map.state}`;
}

/** A point of the pressure chart, in a 0..1 box (y grows upwards). */
export interface ChartPoint {
  turn: number;
  x: number;
  y: number;
  label: string;
  compaction?: string;
  largeClear: boolean;
}

/** A compaction on the chart: at its turn's x, or at the right edge before the next request. */
export interface ChartMark {
  turn: number;
  x: number;
  label: string;
  /** next: for a request not prepared yet (drawn just right of the last point). */
  next: boolean;
}

/** The chart of the page: the points, the compaction marks and the scale (yMax, at least 1). */
export interface PageChart {
  points: ChartPoint[];
  marks: ChartMark[];
  yMax: number;
}

/**
 * chartPoints places every turn's pressure in a unit box: x by turn, y by pressure against
 * yMax (at least 100%, more when a request went over), and the compactions as marks. A
 * compaction that took effect for a request not prepared yet sits at the right edge.
 */
export function chartPoints(turns: readonly TurnPressure[], compactions: readonly CompactionMark[] = []): PageChart {
  const yMax = Math.max(1, ...turns.map((t) => (Number.isFinite(t.pressure) ? t.pressure : 0)));
  const n = turns.length;
  const points = turns.map((t, i) => ({
    turn: t.turn,
    x: n <= 1 ? 0.5 : i / (n - 1),
    y: Math.max(0, t.pressure) / yMax,
    label: `turn ${t.turn}: ${formatPercent(t.pressure)} · ${formatTokens(t.tokens)} tokens · ${t.state}` +
      (t.compaction ? ` · ${t.compaction} compaction` : '') +
      (t.clearedResults ? ` · ${t.clearedResults} cleared (${formatTokens(t.clearedTokens ?? 0)} freed)` : ''),
    compaction: t.compaction,
    largeClear: !!t.largeClear,
  }));
  const marks = compactions.map((c) => {
    const p = points.find((q) => q.turn === c.turn);
    return {
      turn: c.turn,
      x: p ? p.x : 1,
      next: !p,
      label: `${c.trigger} compaction (${c.mode}) for turn ${c.turn}: ${formatTokens(c.originalTokens)} → ${formatTokens(c.compactedTokens)} tokens` +
        (p ? '' : ' (the next request)'),
    };
  });
  return { points, marks, yMax };
}

/**
 * fromPage checks a message from the page (the webview is another process: nothing it sends is
 * taken on trust) and returns it typed, or undefined for anything else.
 */
export function fromPage(m: unknown): FromPage | undefined {
  if (typeof m !== 'object' || m === null) return undefined;
  const msg = m as Record<string, unknown>;
  const type = msg.type;
  return typeof type === 'string' && Object.hasOwn(pageMessages, type) ? pageMessages[type as FromPage['type']](msg) : undefined;
}

/** The check of each message the page may post, one per member of FromPage (tsc keeps them in step). */
const pageMessages: { [T in FromPage['type']]: (m: Record<string, unknown>) => Extract<FromPage, { type: T }> | undefined } = {
  ready: () => ({ type: 'ready' }),
  refresh: () => ({ type: 'refresh' }),
  preview: () => ({ type: 'preview' }),
  restore: ({ artifactId }) => (typeof artifactId === 'string' && artifactId !== '' ? { type: 'restore', artifactId } : undefined),
};

/** contentSecurityPolicy is the webview's policy: nothing but the nonce'd style and script. */
export function contentSecurityPolicy(nonce: string): string {
  return `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; img-src data:; font-src 'none'; connect-src 'none'; frame-src 'none'; form-action 'none'; base-uri 'none'`;
}

/** The page's stylesheet: theme colours only (VS Code's CSS variables). */
const styles = `
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); background: var(--vscode-editor-background); padding: 0 16px 24px; }
h1 { font-size: 1.3em; font-weight: 600; margin: 14px 0 4px; }
h2 { font-size: 1.05em; font-weight: 600; margin: 22px 0 8px; color: var(--vscode-foreground); }
.muted { color: var(--vscode-descriptionForeground); }
.toolbar { display: flex; gap: 8px; margin: 10px 0; }
button { font: inherit; color: var(--vscode-button-foreground); background: var(--vscode-button-background); border: 1px solid var(--vscode-button-border, transparent); padding: 3px 10px; border-radius: 2px; cursor: pointer; }
button:hover { background: var(--vscode-button-hoverBackground); }
button.secondary { color: var(--vscode-button-secondaryForeground); background: var(--vscode-button-secondaryBackground); }
.bar { display: flex; height: 26px; width: 100%; border: 1px solid var(--vscode-panel-border, var(--vscode-widget-border, transparent)); border-radius: 3px; overflow: hidden; }
.seg { height: 100%; min-width: 0; }
.seg.free { background-image: none; }
.seg.reservedOutput { opacity: 0.55; }
table { border-collapse: collapse; margin-top: 6px; }
th, td { text-align: left; padding: 3px 14px 3px 0; border-bottom: 1px solid var(--vscode-editorWidget-border, transparent); }
th { color: var(--vscode-descriptionForeground); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.swatch { display: inline-block; width: 10px; height: 10px; margin-right: 6px; border: 1px solid var(--vscode-widget-border, transparent); vertical-align: middle; }
svg { display: block; width: 100%; max-width: 900px; height: 220px; }
svg .axis { stroke: var(--vscode-editorWidget-border, var(--vscode-descriptionForeground)); stroke-width: 1; }
svg .line { fill: none; stroke: var(--vscode-charts-blue); stroke-width: 2; }
svg .dot { fill: var(--vscode-charts-blue); }
svg .threshold { stroke: var(--vscode-charts-yellow); stroke-dasharray: 4 3; }
svg .compaction { stroke: var(--vscode-charts-red); stroke-dasharray: 3 2; stroke-width: 1.5; }
svg .clear { fill: var(--vscode-charts-orange); }
svg text { fill: var(--vscode-descriptionForeground); font-size: 10px; font-family: var(--vscode-font-family); }
.empty { color: var(--vscode-descriptionForeground); font-style: italic; }
`;

/** contextPageHtml is the whole webview page for a nonce. */
export function contextPageHtml(nonce: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy(nonce)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>VT Code Context</title>
<style nonce="${nonce}">${styles}</style>
</head>
<body>
<h1 id="title">VT Code Context</h1>
<div id="headline" class="muted">Loading…</div>
<div id="receipt" class="muted"></div>
<div class="toolbar"><button id="refresh" class="secondary">Refresh</button><button id="preview">Preview Compaction…</button><span id="updated" class="muted"></span></div>
<h2>Context window</h2>
<div id="bar" class="bar" role="img" aria-label="The context window by category"></div>
<table><thead><tr><th>Category</th><th class="num">Tokens</th><th class="num">Share</th><th class="num">Messages</th></tr></thead><tbody id="legend"></tbody></table>
<h2>Pressure per request</h2>
<svg id="chart" viewBox="0 0 900 220" preserveAspectRatio="none" role="img" aria-label="Pressure over the session's requests"></svg>
<div id="chart-caption" class="muted"></div><div id="chart-empty" class="empty"></div>
<h2>Cleared tool results <span id="cleared-count" class="muted"></span></h2>
<table><thead><tr><th>Tool</th><th>Call id</th><th class="num">Original</th><th class="num">Stub</th><th class="num">Freed</th><th class="num">Cleared at turn</th></tr></thead><tbody id="cleared"></tbody></table>
<div id="cleared-empty" class="empty"></div>
<h2>Artifacts</h2>
<table><thead><tr><th>Created</th><th>Compaction</th><th class="num">Messages</th><th></th></tr></thead><tbody id="artifacts"></tbody></table>
<div id="artifacts-empty" class="empty"></div>
<script nonce="${nonce}">${VTCODE_CONTEXT_PAGE_SCRIPT}</script>
</body>
</html>`;
}

/** pageMessage is what the extension posts to the page for a map. */
export function pageMessage(map: ContextMap): MapMessage {
  const window = map.capacity - map.reservedOutput;
  return {
    type: 'map',
    map,
    rows: categoryRows(map),
    headline: headline(map),
    receipt: map.receipt ? receiptSummary(map.receipt) : '',
    chart: chartPoints(map.turns, map.compactions),
    threshold: window > 0 && map.compactionThreshold > 0 ? map.compactionThreshold / window : 0,
  };
}
