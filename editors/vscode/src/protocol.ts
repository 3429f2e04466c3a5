// Wire shapes of the vtcode-ls protocol (docs/design.md §2, §9, §10) that the extension uses.
// This module has no dependency on `vscode`, so the pure display logic and the tests can use it.

/** Pressure states of docs/design.md §9. */
export type PressureState = 'ok' | 'warn' | 'compacting' | 'critical';

/** A message of the session history (docs/design.md §2). Unknown fields are passed through untouched. */
export interface Message {
  id?: string;
  role: 'system' | 'user' | 'assistant' | 'tool';
  content?: string | Array<Record<string, unknown>>;
  toolCalls?: Array<{ id: string; name: string; arguments?: string; input?: string; thoughtSignature?: string }>;
  toolCallId?: string;
  toolName?: string;
  reasoning?: string;
  [extra: string]: unknown;
}

/**
 * The gauge as the daemon formats it for every client (rpc/doc.go, vtcode/projectionStats):
 * `{percent: "62%", used: "78.1k", window: "128k", text: "62% · 78.1k/128k"}`; used counts the
 * system/tools prefix and the projection; without a capacity percent and window are "" and text
 * is used alone.
 */
export interface Display {
  percent: string;
  used: string;
  window: string;
  text: string;
}

/** `vtcode/tokenPressure` notification params. */
export interface TokenPressure {
  sessionId: string;
  workspace: string;
  projectedTokens: number;
  originalTokens: number;
  capacity: number;
  pressure: number;
  state: PressureState;
  display: Display;
}

/** One entry of `vtcode/listSessions`; active marks the session to follow (the daemon picks it). */
export interface SessionInfo {
  sessionId: string;
  workspace: string;
  messages: number;
  updatedAt: string;
  active?: boolean;
}

/** `vtcode/openSession` result. */
export interface OpenSessionResult {
  sessionId: string;
  resumed: boolean;
  messages: number;
  policy: unknown;
}

/** The compact-boundary record (docs/design.md §8.8), also `stats.lastCompaction`. */
export interface CompactBoundary {
  sessionId?: string;
  trigger: string;
  mode: string;
  strategy: string;
  originalMessageCount: number;
  compactedMessageCount: number;
  originalTokens: number;
  compactedTokens: number;
  artifactId: string;
  elapsedMs: number;
}

/** `vtcode/compact` result. */
export interface CompactResult extends CompactBoundary {
  message: string;
}

/** Projection stats (docs/design.md §9). */
export interface Stats {
  sessionId: string;
  messages: number;
  projectedMessages: number;
  originalTokens: number;
  projectedTokens: number;
  prefixTokens: number;
  clearedResults: number;
  protectedResults: number;
  protectedBatches: number;
  clearedInputs: number;
  localTrigger: number;
  historyBudget: number;
  capacity: number;
  reservedOutput: number;
  compactionThreshold: number;
  pressure: number;
  state: PressureState;
  lastReportedInputTokens?: number;
  strategy: string;
  compactions: number;
  lastCompaction?: CompactBoundary;
  cache?: {
    lastHitRate: number;
    lowReuseStreak: number;
    cumulativeInputTokens: number;
    cumulativeCacheReadTokens: number;
  };
  /** Predicted prompt-cache reuse and cost of the (next) request (rpc/doc.go). */
  reuse?: ReuseStats;
  /** What the session's calls cost so far (shown by receipt.ts). */
  receipt?: Receipt;
  display: Display;
}

/** Tokens by kind of a bill (rpc/doc.go receipt.tokens), disjoint: input is the uncached part. */
export interface ReceiptTokens {
  input: number;
  cacheRead: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
  output: number;
  reasoning?: number;
}

/**
 * One committed compaction and what the summarizer calls whose outcome it committed cost (its
 * own, the pass-1 note it used or the preview it applied); calls is absent for a compaction of
 * an older log, which kept only its cost.
 */
export interface CompactionReceipt {
  trigger: string;
  mode: string;
  originalTokens: number;
  compactedTokens: number;
  model?: string;
  tokens: ReceiptTokens;
  usd?: number;
  calls?: number;
}

/**
 * `receipt.unused`: the summarizer calls billed for nothing committed (previews never applied or
 * replaced, pass-1 notes discarded, compactions that failed after a call answered).
 */
export interface UnusedReceipt {
  calls: number;
  tokens: ReceiptTokens;
  usd?: number;
}

/** `stats.receipt` and `contextMap.receipt`: costs in US dollars, absent when a model's list price is unknown. */
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
  unused?: UnusedReceipt;
  unpriced?: string[];
  pricesAsOf?: string;
}

/** `stats.reuse`: the prompt-cache prediction. */
export interface ReuseStats {
  reusedTokens: number;
  requestTokens: number;
  ratio: number;
  reusedMessages: number;
  costUnits: number;
  cacheCold: boolean;
  clearedHorizon: number;
  heldTokens: number;
  pricing: { read: number; write: number; ttlSeconds: number };
  lastResponse?: { predictedReadTokens: number; cacheReadTokens: number; cacheWriteTokens: number; difference: number };
}

/** `vtcode/prepareRequest` result, as the extension API returns it (always the whole projection). */
export interface PrepareResult {
  messages: Message[];
  stats: Stats;
  contextManagement?: unknown;
  compaction?: CompactResult;
  trimmed: boolean;
  /** Names this projection (servers with projectionDelta). */
  revision?: string;
}

/** `vtcode/prepareRequest` result on the wire for a client with projectionDelta. */
export interface PrepareWireResult extends Omit<PrepareResult, 'messages'> {
  messages?: Message[];
  delta?: { baseRevision: string; keep: number; messages: Message[] };
}

/** One entry of `vtcode/listArtifacts`. */
export interface ArtifactInfo {
  artifactId: string;
  createdAt: string;
  messages: number;
  trigger: string;
  mode: string;
}

/** `vtcode/compactPrompt` result. */
export interface PromptResult {
  prompt: string;
  isDefault: boolean;
}

/** Method and notification names. */
export const Methods = {
  openSession: 'vtcode/openSession',
  closeSession: 'vtcode/closeSession',
  listSessions: 'vtcode/listSessions',
  appendMessages: 'vtcode/appendMessages',
  history: 'vtcode/history',
  prepareRequest: 'vtcode/prepareRequest',
  recordResponse: 'vtcode/recordResponse',
  compact: 'vtcode/compact',
  projectionStats: 'vtcode/projectionStats',
  setPolicy: 'vtcode/setPolicy',
  getPolicy: 'vtcode/getPolicy',
  listArtifacts: 'vtcode/listArtifacts',
  restore: 'vtcode/restore',
  switchModel: 'vtcode/switchModel',
  compactPrompt: 'vtcode/compactPrompt',
  tokenPressure: 'vtcode/tokenPressure',
  compactBoundary: 'vtcode/compactBoundary',
  compactionProposed: 'vtcode/compactionProposed',
  declineCompaction: 'vtcode/declineCompaction',
} as const;

/** JSON-RPC error codes of docs/design.md §1. */
export const ErrorCodes = {
  RequestCancelled: -32800,
  RequestFailed: -32803,
  UnknownSession: -32001,
  Busy: -32004,
  InvalidParams: -32602,
  ServerNotInitialized: -32002,
} as const;
