// The active session (docs/design.md §14): at start, the session the daemon marks active in
// vtcode/listSessions; "VT Code: Select Session…" to pin one or to follow again; after a
// reconnect, the sessions this window had open are reopened and the same one followed again. The
// rule itself (follow the last updated session unless one is picked) is tracker.ts's.

import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { errorText, sessionPickItem } from './display';
import { Methods, type OpenSessionResult, type SessionInfo } from './protocol';
import type { OpenSessions } from './reopen';
import { SessionTracker } from './tracker';

/** What the active session needs from the extension. */
export interface SessionsHost {
  /** The started client. */
  ready(): Promise<unknown>;
  request<R>(method: string, params: unknown): Promise<R>;
  /** The record of the sessions opened through the client (the connection's). */
  readonly openSessions: OpenSessions;
  /** Refreshes the active session's stats for the status bar. */
  refreshStats(): Promise<unknown>;
  /** The stats and views of the active session are out of date. */
  changed(): void;
  readonly log: vscode.LogOutputChannel;
}

/** ActiveSession is the session the status bar and the views follow. */
export class ActiveSession implements vscode.Disposable {
  readonly tracker = new SessionTracker();
  private readonly emitter = new vscode.EventEmitter<string | undefined>();
  /** Fires when the active session changes. */
  readonly onDidChange = this.emitter.event;
  /** The session the status bar followed when the connection closed, to follow again after the reconnect. */
  private followAfterReconnect: string | undefined;
  private readonly disposables: vscode.Disposable[] = [this.emitter];

  constructor(private readonly host: SessionsHost) {
    this.disposables.push(
      this.tracker.onDidChange((id) => {
        host.log.info(`active session: ${id ?? '(none)'}${this.tracker.pinned ? ' (selected)' : ''}`);
        this.emitter.fire(id);
      }),
      vscode.commands.registerCommand('vtcode.selectSession', (sessionId?: string | null) => this.select(sessionId)),
    );
  }

  /** id is the active session's id, or undefined. */
  get id(): string | undefined {
    return this.tracker.active;
  }

  /** requireSession returns the active session, or tells the user there is none. */
  requireSession(): string | undefined {
    const id = this.tracker.active;
    if (id === undefined) {
      void vscode.window.showWarningMessage(
        'VT Code: no active session. An agent opens one through the extension API; pick a stored one with "VT Code: Select Session…".',
      );
    }
    return id;
  }

  /** followListed follows the session the daemon marks active, when nothing is followed yet. */
  async followListed(): Promise<void> {
    if (this.tracker.active !== undefined) return;
    try {
      const list = await this.list();
      const id = this.tracker.sessions(list);
      if (id !== undefined) this.host.log.info(`active session of the listing: ${id}`);
    } catch (err) {
      this.host.log.warn(errorText('listing sessions', err));
    }
  }

  /**
   * list lists the sessions of every workspace folder (the daemon's workspaces) in one
   * call, so that the one it marks active is the one to follow across all of them.
   */
  async list(): Promise<SessionInfo[]> {
    return (await this.host.request<SessionInfo[] | null>(Methods.listSessions, {})) ?? [];
  }

  /**
   * select is "VT Code: Select Session…". With an argument (for scripts and tests): a session id
   * pins it, null returns to following the most recently updated session.
   */
  async select(sessionId?: string | null): Promise<string | undefined> {
    try {
      await this.host.ready();
      if (sessionId === null) {
        this.tracker.pin(undefined);
        await this.followListed();
        return this.tracker.active;
      }
      if (typeof sessionId !== 'string') {
        const list = await this.list(); // each workspace's sessions newest first
        const follow = {
          label: '$(sync) Follow the most recently updated session',
          description: this.tracker.pinned ? '' : 'current',
          id: null as string | null,
        };
        const items = [follow, ...list.map((s) => ({ ...sessionPickItem(s, s.sessionId === this.tracker.active), id: s.sessionId as string | null }))];
        const pick = await vscode.window.showQuickPick(items, {
          title: 'VT Code: Select Session',
          placeHolder: list.length ? 'The session whose context the status bar follows' : 'No stored sessions in this workspace',
          matchOnDetail: true,
        });
        if (!pick) return this.tracker.active;
        if (pick.id === null) return this.select(null);
        sessionId = pick.id;
      }
      const opened = await this.host.request<OpenSessionResult>(Methods.openSession, { sessionId });
      this.tracker.pin(opened.sessionId);
      await this.host.refreshStats();
      return opened.sessionId;
    } catch (err) {
      void vscode.window.showErrorMessage(errorText('VT Code: Select session failed', err));
      return undefined;
    }
  }

  /** reconnecting notes the followed session when the connection closed and restarts. */
  reconnecting(): void {
    this.followAfterReconnect ??= this.tracker.active;
  }

  /**
   * reopen reopens, on a connection that (re)started, the sessions opened on the previous ones
   * (the shared daemon died: the new one has none open), before any other request goes out, and
   * follows again the session the status bar showed. The reconnect itself was told once
   * (Reconnects); only sessions the daemon refuses to reopen add a message.
   */
  async reopen(client: LanguageClient): Promise<void> {
    const { log, openSessions } = this.host;
    const follow = this.followAfterReconnect;
    this.followAfterReconnect = undefined;
    if (openSessions.ids.length === 0 && follow === undefined) return;
    const { reopened, failed, lost } = await openSessions.reopen((method, params) => client.sendRequest(method, params));
    if (reopened.length) log.info(`reopened after the reconnect: ${reopened.join(', ')}`);
    if (lost.length) log.warn(`the connection closed while reopening ${lost.join(', ')}`);
    for (const f of failed) {
      log.warn(errorText(`reopening ${f.sessionId}`, f.error));
      this.tracker.forget(f.sessionId);
    }
    if (failed.length) {
      const ids = failed.map((f) => f.sessionId).join(', ');
      void vscode.window.showWarningMessage(`VT Code: ${failed.length === 1 ? 'session' : 'sessions'} ${ids} could not be reopened after the reconnect; see the output.`, 'Show Output').then((a) => {
        if (a === 'Show Output') log.show(true);
      });
    }
    if (lost.length || !client.isRunning()) {
      this.followAfterReconnect ??= follow; // the next connection reopens and follows them
      return;
    }
    if (this.tracker.active === undefined && follow !== undefined && !failed.some((f) => f.sessionId === follow)) this.tracker.opened(follow);
    if (this.tracker.active === undefined) await this.followListed();
    this.host.changed();
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
