// The API `activate` returns to agent extensions that send their turns to vtcode-ls: the client,
// the active session, and prepareRequest, which receives projection deltas (delta.ts) and hands
// back whole projections.

import type * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import type { Connection } from './connection';
import { ProjectionDeltas, projectionDeltaCapability } from './delta';
import { Methods, type PrepareResult, type PrepareWireResult } from './protocol';
import type { ActiveSession } from './sessions';

/** The API returned by `activate`, for agent extensions that send their turns to vtcode-ls. */
export interface VtcodeApi {
  /** The running language client (replaced when the server restarts: read it each time). */
  readonly client: LanguageClient;
  /** The id of the active session, or undefined. */
  activeSession(): string | undefined;
  /** Fires when the active session changes. */
  readonly onDidChangeActiveSession: vscode.Event<string | undefined>;
  /** Resolves with the client once the server is initialized. */
  ready(): Promise<LanguageClient>;
  /**
   * Sends `vtcode/prepareRequest` and resolves with the whole projection. Between the extension
   * and the server only the change since the session's previous projection travels (projection
   * deltas, rpc/doc.go); the extension rebuilds the whole one.
   */
  prepareRequest(params: { sessionId: string; [key: string]: unknown }): Promise<PrepareResult>;
}

/** agentApi builds the API over the connection; it announces projection deltas on every client. */
export function agentApi(connection: Connection, active: ActiveSession): VtcodeApi {
  const deltas = new ProjectionDeltas();
  connection.onClient((client) =>
    client.registerFeature({
      getState: () => ({ kind: 'static' }),
      fillClientCapabilities: (c) => {
        c.experimental = { ...(c.experimental as object | undefined), ...projectionDeltaCapability };
      },
      initialize: () => deltas.clear(),
      clear: () => deltas.clear(),
    }),
  );
  return {
    get client() {
      return connection.client as LanguageClient;
    },
    activeSession: () => active.id,
    onDidChangeActiveSession: active.onDidChange,
    ready: () => connection.ensureStarted(),
    async prepareRequest(params) {
      const client = await connection.ensureStarted();
      try {
        const r = await client.sendRequest<PrepareWireResult>(Methods.prepareRequest, deltas.params(params));
        return deltas.apply(params.sessionId, r);
      } catch (err) {
        deltas.forget(params.sessionId);
        throw err;
      }
    },
  };
}
