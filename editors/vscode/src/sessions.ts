// The active session's picking (docs/design.md §14): at start, the session the daemon marks active
// in vtcode/listSessions; "VT Code: Select Session…" to pin one or to follow again. The rule
// itself (follow the last updated session unless one is picked) is tracker.ts's.

import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { errorText, sessionPickItem } from './display';
import { Methods, type OpenSessionResult, type SessionInfo } from './protocol';
import type { SessionTracker } from './tracker';

/** What session picking needs from the extension. */
export interface SessionsHost {
  /** The started client. */
  client(): Promise<LanguageClient>;
  readonly tracker: SessionTracker;
  /** Refreshes the active session's stats for the status bar. */
  refreshStats(): Promise<unknown>;
  readonly log: vscode.LogOutputChannel;
}

/** SessionPicker picks the active session: from the daemon's listing, or by the user. */
export class SessionPicker {
  constructor(private readonly host: SessionsHost) {}

  /** followListed follows the session the daemon marks active, when nothing is followed yet. */
  async followListed(): Promise<void> {
    if (this.host.tracker.active !== undefined) return;
    try {
      const list = await this.list();
      const id = this.host.tracker.sessions(list);
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
    const client = await this.host.client();
    return (await client.sendRequest<SessionInfo[] | null>(Methods.listSessions, {})) ?? [];
  }

  /**
   * select picks the active session. With an argument (for scripts and tests): a session id
   * pins it, null returns to following the most recently updated session.
   */
  async select(sessionId?: string | null): Promise<string | undefined> {
    try {
      const client = await this.host.client();
      if (sessionId === null) {
        this.host.tracker.pin(undefined);
        await this.followListed();
        return this.host.tracker.active;
      }
      if (typeof sessionId !== 'string') {
        const list = await this.list(); // each workspace's sessions newest first
        const follow = {
          label: '$(sync) Follow the most recently updated session',
          description: this.host.tracker.pinned ? '' : 'current',
          id: null as string | null,
        };
        const items = [follow, ...list.map((s) => ({ ...sessionPickItem(s, s.sessionId === this.host.tracker.active), id: s.sessionId as string | null }))];
        const pick = await vscode.window.showQuickPick(items, {
          title: 'VT Code: Select Session',
          placeHolder: list.length ? 'The session whose context the status bar follows' : 'No stored sessions in this workspace',
          matchOnDetail: true,
        });
        if (!pick) return this.host.tracker.active;
        if (pick.id === null) return this.select(null);
        sessionId = pick.id;
      }
      const opened = await client.sendRequest<OpenSessionResult>(Methods.openSession, { sessionId });
      this.host.tracker.pin(opened.sessionId);
      await this.host.refreshStats();
      return opened.sessionId;
    } catch (err) {
      void vscode.window.showErrorMessage(errorText('VT Code: Select session failed', err));
      return undefined;
    }
  }
}
