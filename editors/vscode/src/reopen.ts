// The sessions this window has open, reopened when the connection to vtcode-ls starts again (the
// shared daemon died and the client restarted it: the new daemon has nothing open, and every
// request naming one of them would get -32001). Free of `vscode` so it is tested with `node --test`
// against the real daemon (test/protocol/reopen.test.cjs).

import { Methods, type OpenSessionResult } from './protocol';

/** The route an openSession carried besides the id; reopening sends it again. */
export interface OpenParams {
  workspace?: string;
  provider?: string;
  model?: string;
  contextWindow?: number;
}

/**
 * What a reopen did: the sessions open again; those the daemon refused (with its error), dropped
 * from the record; those whose request the connection lost, kept for the next reopen.
 */
export interface ReopenResult {
  reopened: string[];
  failed: { sessionId: string; error: unknown }[];
  lost: string[];
}

type Send = (method: string, params: object) => Promise<unknown>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/**
 * refused tells an answer of the daemon (a JSON-RPC error it sent: the session's store is gone,
 * another process owns it) from the connection failing under the request (vscode-jsonrpc's
 * -32099..-32096, or no code), after which the session is still to be reopened next time.
 */
const refused = (e: unknown): boolean => isObject(e) && typeof e.code === 'number' && !(e.code >= -32099 && e.code <= -32096);

/**
 * OpenSessions records the sessions opened through the client (the extension's and agent
 * extensions' openSession calls, seen by `through`, the client's sendRequest middleware) until
 * closed, and reopens them with `reopen`. While a reopen runs, every other request through
 * `through` waits for it, so that an agent's next request after the reconnect finds its session
 * open instead of failing.
 */
export class OpenSessions {
  private readonly open = new Map<string, OpenParams>();
  private readonly own = new WeakSet<object>();
  private reopening: Promise<unknown> | undefined;

  /** ids are the recorded sessions, in the order they were first opened. */
  get ids(): string[] {
    return [...this.open.keys()];
  }

  /**
   * through sends one request with next, recording what an openSession or closeSession did once
   * it succeeded. Requests wait for a reopen in progress (but the reopen's own).
   */
  async through<R>(method: string, params: unknown, next: (params: unknown) => Promise<R>): Promise<R> {
    if (this.reopening && !(isObject(params) && this.own.has(params))) await this.reopening;
    const result = await next(params);
    this.record(method, params, result);
    return result;
  }

  private record(method: string, params: unknown, result: unknown): void {
    if (method === Methods.openSession && isObject(result) && typeof result.sessionId === 'string') {
      const p = isObject(params) ? params : {};
      const route: OpenParams = {};
      if (typeof p.workspace === 'string') route.workspace = p.workspace;
      if (typeof p.provider === 'string') route.provider = p.provider;
      if (typeof p.model === 'string') route.model = p.model;
      if (typeof p.contextWindow === 'number') route.contextWindow = p.contextWindow;
      // a later open of the same session replaces its route (rpc/doc.go), and so its record
      const before = this.open.get(result.sessionId);
      this.open.set(result.sessionId, before && !p.workspace && !p.provider && !p.model && p.contextWindow === undefined ? before : route);
    } else if (method === Methods.closeSession && isObject(params) && typeof params.sessionId === 'string') {
      this.open.delete(params.sessionId);
    }
  }

  /**
   * reopen sends openSession with the same sessionId (and route) for every recorded session, in
   * the order they were opened, over send (the new connection). A session that cannot be opened
   * again (the daemon refuses it: its store removed, another process owns it) is dropped from the
   * record and reported in `failed`; one whose request the connection lost stays recorded (`lost`).
   */
  reopen(send: Send): Promise<ReopenResult> {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    this.reopening = gate; // before the first send: nothing overtakes the reopen
    return (async (): Promise<ReopenResult> => {
      const result: ReopenResult = { reopened: [], failed: [], lost: [] };
      try {
        for (const [sessionId, route] of [...this.open]) {
          const params = { ...route, sessionId };
          this.own.add(params);
          try {
            const r = (await send(Methods.openSession, params)) as OpenSessionResult;
            result.reopened.push(r.sessionId);
          } catch (error) {
            if (refused(error)) {
              this.open.delete(sessionId);
              result.failed.push({ sessionId, error });
            } else {
              result.lost.push(sessionId);
            }
          }
        }
      } finally {
        if (this.reopening === gate) this.reopening = undefined;
        release();
      }
      return result;
    })();
  }
}
