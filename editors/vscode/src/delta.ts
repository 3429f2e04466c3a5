// Projection deltas (rpc/doc.go, "Projection deltas"): the extension announces
// capabilities.experimental.vtcode.projectionDelta, remembers the last projection the server sent
// for each session, echoes its revision as baseRevision, and rebuilds the whole projection from a
// delta, so that agent extensions calling `prepareRequest` through the extension API always see
// whole projections while only the change crosses the wire. No vscode import: unit-tested in node.

import type { Message, PrepareResult, PrepareWireResult } from './protocol';

/** The client capability that asks the server for projection deltas. */
export const projectionDeltaCapability = { vtcode: { projectionDelta: true } } as const;

interface Known {
  revision: string;
  messages: Message[];
}

/** ProjectionDeltas holds, per session, the last projection received and applies deltas to it. */
export class ProjectionDeltas {
  private readonly known = new Map<string, Known>();

  /** params returns prepareRequest params with the session's baseRevision, when one is known. */
  params<P extends { sessionId: string }>(params: P): P & { baseRevision?: string } {
    const k = this.known.get(params.sessionId);
    const out: P & { baseRevision?: string } = { ...params };
    delete out.baseRevision;
    if (k) out.baseRevision = k.revision;
    return out;
  }

  /**
   * apply turns a wire result into the whole projection and remembers it. A delta against a
   * projection this client does not hold is an error (and forgets the session, so the next
   * request gets the whole projection).
   */
  apply(sessionId: string, r: PrepareWireResult): PrepareResult {
    const { delta, messages, ...rest } = r;
    let whole: Message[];
    if (delta) {
      const k = this.known.get(sessionId);
      if (!k || k.revision !== delta.baseRevision || delta.keep < 0 || delta.keep > k.messages.length) {
        this.known.delete(sessionId);
        throw new Error(`vtcode: projection delta against ${delta.baseRevision}, which this client does not hold`);
      }
      whole = k.messages.slice(0, delta.keep).concat(delta.messages);
    } else {
      whole = messages ?? [];
    }
    if (r.revision) this.known.set(sessionId, { revision: r.revision, messages: whole });
    else this.known.delete(sessionId);
    return { ...rest, messages: whole.slice() };
  }

  /** forget drops a session (closed, or a failed request). */
  forget(sessionId: string): void {
    this.known.delete(sessionId);
  }

  /** clear drops every session (the server restarted). */
  clear(): void {
    this.known.clear();
  }
}
