// The session's receipt (rpc/doc.go, stats.receipt and contextMap.receipt): what the provider
// billed, from its own usage of every answer, beside the estimate without vtcode-ls. Pure
// display logic, shared by the status-bar tooltip and Show Context.

/** Tokens by kind, disjoint: input is the uncached part. */
export interface ReceiptTokens {
  input: number;
  cacheRead: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
  output: number;
  reasoning?: number;
}

/** One compaction and what its own provider calls cost. */
export interface CompactionReceipt {
  trigger: string;
  mode: string;
  originalTokens: number;
  compactedTokens: number;
  model?: string;
  tokens: ReceiptTokens;
  usd?: number;
}

/** `stats.receipt`: costs in US dollars, absent when a model's list price is unknown. */
export interface Receipt {
  requests: number;
  tokens: ReceiptTokens;
  paidUsd?: number;
  withoutTokens: ReceiptTokens;
  withoutUsd?: number;
  savedUsd?: number;
  withoutIsEstimate: boolean;
  tierRequests?: number;
  withoutTierRequests?: number;
  compactions?: CompactionReceipt[];
  unpriced?: string[];
  pricesAsOf?: string;
}

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
  const c = r.compactions || [];
  if (c.length > 0) {
    const usd = c.reduce((s, x) => s + (x.usd || 0), 0);
    rows.push(`| Compactions | ${c.length}${usd > 0 ? `, ${esc(dollars(usd))}` : ''} |`);
  }
  return rows;
}
