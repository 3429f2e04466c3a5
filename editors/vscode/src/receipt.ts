// The session's receipt (rpc/doc.go, stats.receipt and contextMap.receipt; its wire shapes are
// protocol.ts's) as text: what the provider billed, from its own usage of every answer, beside
// the estimate without vtcode-ls, each compaction with the summarizer calls it committed, and the
// unused summarizer calls. Pure display logic, shared by the status-bar tooltip and Show Context.

import type { CompactionReceipt, Receipt, ReceiptTokens } from './protocol';

function count(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** dollars formats a cost: cents under $10 000, 4 decimals under a cent. */
export function dollars(v: number | undefined): string {
  if (v === undefined || !Number.isFinite(v)) return '—';
  const abs = Math.abs(v);
  const s = abs > 0 && abs < 0.01 ? abs.toFixed(4) : abs.toFixed(2);
  return `${v < 0 ? '−' : ''}$${s}`;
}

/** tokensText lists the non-zero kinds of a bill. */
export function tokensText(t: ReceiptTokens): string {
  const parts: string[] = [`${count(t.input)} in`];
  if (t.cacheRead > 0) parts.push(`${count(t.cacheRead)} cache read`);
  const writes = t.cacheWrite5m + t.cacheWrite1h;
  if (writes > 0) parts.push(`${count(writes)} cache write${t.cacheWrite1h > 0 ? ` (${count(t.cacheWrite1h)} 1h)` : ''}`);
  parts.push(`${count(t.output)} out${t.reasoning ? ` (${count(t.reasoning)} reasoning)` : ''}`);
  return parts.join(' · ');
}

/**
 * receiptSummary is the one-line receipt: what the session paid, the estimate without vtcode-ls
 * and the difference; tokens alone when a model has no known price.
 */
export function receiptSummary(r: Receipt): string {
  const req = `${r.requests} request${r.requests === 1 ? '' : 's'}`;
  if (r.paidUsd === undefined) {
    return `${req} · ${tokensText(r.tokens)} · no list price for ${(r.unpriced || []).join(', ') || 'the model'}`;
  }
  const saved = r.savedUsd ?? 0;
  return `${req} · paid ${dollars(r.paidUsd)} · without vtcode-ls ≈ ${dollars(r.withoutUsd)} (estimate) · ` +
    (saved >= 0 ? `saved ${dollars(saved)}` : `cost ${dollars(-saved)} more`);
}

/** receiptRows are the tooltip's table rows of a receipt (Markdown, escaped by esc). */
export function receiptRows(r: Receipt, esc: (s: string) => string): string[] {
  const rows = [`| Requests billed | ${count(r.requests)} |`, `| Tokens billed | ${esc(tokensText(r.tokens))} |`];
  if (r.paidUsd !== undefined) {
    rows.push(`| Paid (list prices${r.pricesAsOf ? ` of ${esc(r.pricesAsOf)}` : ''}) | ${esc(dollars(r.paidUsd))} |`);
    rows.push(`| Without vtcode-ls (estimate) | ${esc(dollars(r.withoutUsd))} |`);
    rows.push(`| Saved | ${esc(dollars(r.savedUsd))} |`);
  } else {
    rows.push(`| Cost | no list price for ${esc((r.unpriced || []).join(', '))} |`);
  }
  if (r.tierRequests || r.withoutTierRequests) {
    rows.push(`| Long-context tier | ${count(r.tierRequests || 0)} requests (${count(r.withoutTierRequests || 0)} without vtcode-ls) |`);
  }
  for (const l of receiptDetail(r)) rows.push(`| ${esc(l.label)} | ${esc(l.value)} |`);
  return rows;
}

function plural(n: number, word: string): string {
  return `${count(n)} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * callsText is a bill of summarizer calls: "2 calls · 34,000 in · 1,000 out · $0.12"; no count
 * when calls is 0 or absent (a compaction of an older log kept only its cost), no cost when usd
 * is absent (a model without a known list price: tokens only).
 */
export function callsText(calls: number | undefined, t: ReceiptTokens, usd: number | undefined): string {
  const parts: string[] = [];
  if ((calls ?? 0) > 0) parts.push(plural(calls ?? 0, 'call'));
  parts.push(tokensText(t));
  if (usd !== undefined) parts.push(dollars(usd));
  return parts.join(' · ');
}

/** unusedText is the receipt's unused summarizer calls as one text, or undefined when there are none. */
function unusedText(r: Receipt): string | undefined {
  const u = r.unused;
  return u && u.calls > 0 ? callsText(u.calls, u.tokens, u.usd) : undefined;
}

/** At most this many compactions are listed one by one (the newest); the total covers them all. */
export const MaxCompactionRows = 5;

/** A line of a receipt's detail: what it is, and its figures (plain text). */
export interface ReceiptLine {
  label: string;
  value: string;
}

function compactionLine(c: CompactionReceipt, n: number): ReceiptLine {
  return {
    label: `Compaction ${n} (${c.trigger}, ${c.mode})`,
    value: `${count(c.originalTokens)} → ${count(c.compactedTokens)} tokens · ${callsText(c.calls, c.tokens, c.usd)}`,
  };
}

/**
 * receiptDetail is what a receipt adds below its totals: the compactions billed (how many, their
 * summarizer calls and cost), the newest MaxCompactionRows of them one by one, and the unused
 * summarizer calls when there are any.
 */
export function receiptDetail(r: Receipt): ReceiptLine[] {
  const lines: ReceiptLine[] = [];
  const cs = r.compactions || [];
  if (cs.length > 0) {
    const usd = cs.reduce((s, c) => s + (c.usd || 0), 0);
    const calls = cs.reduce((s, c) => s + (c.calls || 0), 0);
    const parts = [count(cs.length)];
    if (calls > 0) parts.push(plural(calls, 'call'));
    if (usd > 0) parts.push(dollars(usd));
    lines.push({ label: 'Compactions billed', value: parts.join(' · ') });
    const first = Math.max(0, cs.length - MaxCompactionRows);
    cs.slice(first).forEach((c, i) => lines.push(compactionLine(c, first + i + 1)));
  }
  const unused = unusedText(r);
  if (unused) lines.push({ label: 'Unused summarizer calls', value: unused });
  return lines;
}
