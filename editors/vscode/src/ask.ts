// Ask mode (agent.harness.auto_compaction_mode = "ask", rpc/doc.go): the server proposes a
// compaction with vtcode/compactionProposed; the extension shows it as a notification with three
// answers. Pure logic, no dependency on `vscode`.

/** `vtcode/compactionProposed` params. */
export interface CompactionProposal {
  sessionId: string;
  workspace: string;
  usedTokens: number;
  threshold: number;
  limit: number;
  message: string;
}

/** The answers of the proposal notification, in button order. */
export const proposalActions = ['Review', 'Compact now', 'Not now'] as const;
export type ProposalAction = (typeof proposalActions)[number];

/** What an answer does: the request to send (or the preview editor to open). */
export type ProposalStep =
  | { kind: 'preview'; sessionId: string } // Review: the existing preview editor (Apply commits it as edited)
  | { kind: 'request'; method: 'vtcode/compact' | 'vtcode/declineCompaction'; params: { sessionId: string } }
  | { kind: 'none' }; // dismissed: the proposal stays unanswered; the session compacts at the hard limit

/** proposalText is the notification's text. */
export function proposalText(p: CompactionProposal): string {
  const k = (n: number) => (n >= 1000 ? `${Math.round(n / 100) / 10}k` : `${n}`);
  return `VT Code: session ${p.sessionId} holds ${k(p.usedTokens)} of ${k(p.limit)} tokens. Compact it? ` +
    `Until you answer, requests go on with clearing only; at ${k(p.limit)} it compacts anyway.`;
}

/** proposalStep maps an answer to what the extension does. */
export function proposalStep(p: CompactionProposal, answer: string | undefined): ProposalStep {
  switch (answer) {
    case 'Review':
      return { kind: 'preview', sessionId: p.sessionId };
    case 'Compact now':
      return { kind: 'request', method: 'vtcode/compact', params: { sessionId: p.sessionId } };
    case 'Not now':
      return { kind: 'request', method: 'vtcode/declineCompaction', params: { sessionId: p.sessionId } };
  }
  return { kind: 'none' };
}
