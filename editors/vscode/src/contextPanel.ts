// "VT Code: Show Context": a webview of the active session's context map (vtcode/contextMap) that
// follows the active session live. The page is built by contextmap.ts (strict CSP, theme colours)
// and runs page/main.ts; they talk in the messages of page/messages.ts.

import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { type ContextMap, ContextMapMethod, contextPageHtml, fromPage, pageMessage } from './contextmap';
import { errorText } from './display';
import type { FromPage, ToPage } from './page/messages';
import { confirmRestore } from './restore';

/** What the panel needs from the extension. */
export interface ContextHost {
  /** A session request (loading a stored session once). */
  sessionRequest<R>(method: string, params: { sessionId: string }): Promise<R>;
  activeSession(): string | undefined;
  /** Restores an artifact the user confirmed. */
  restore(artifactId: string): Promise<unknown>;
  previewCompaction(): Promise<unknown>;
  log: vscode.LogOutputChannel;
}

export class ContextPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private ready = false;
  private timer: NodeJS.Timeout | undefined;
  private last: ContextMap | undefined;
  private stale = false; // a change arrived while the panel was hidden
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly host: ContextHost) {
    this.disposables.push(vscode.commands.registerCommand('vtcode.showContext', () => this.show()));
  }

  /** show opens (or reveals) the panel and returns the map it shows. */
  async show(): Promise<ContextMap | undefined> {
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel('vtcode.context', 'VT Code Context', vscode.ViewColumn.Active, {
        enableScripts: true,
        enableCommandUris: false,
        localResourceRoots: [],
        retainContextWhenHidden: true,
      });
      this.ready = false;
      const nonce = randomBytes(16).toString('base64');
      this.panel.webview.html = contextPageHtml(nonce);
      this.panel.onDidDispose(() => {
        this.panel = undefined;
        this.ready = false;
        if (this.timer) clearTimeout(this.timer);
      }, undefined, this.disposables);
      this.panel.webview.onDidReceiveMessage((raw: unknown) => {
        const m = fromPage(raw);
        if (m) void this.onMessage(m);
        else this.host.log.warn(`context view: ignored a message from the page: ${JSON.stringify(raw)?.slice(0, 200)}`);
      }, undefined, this.disposables);
      this.panel.onDidChangeViewState((e) => {
        if (e.webviewPanel.visible && this.stale) this.changed(0);
      }, undefined, this.disposables);
    } else {
      this.panel.reveal();
    }
    return this.refresh();
  }

  /** visible reports whether the panel is open. */
  get open(): boolean {
    return this.panel !== undefined;
  }

  /** changed schedules a refresh when the panel is open (pressure, boundary, active session). */
  changed(delayMs = 300): void {
    if (!this.panel) return;
    if (!this.panel.visible) {
      this.stale = true; // refreshed when it is shown again
      return;
    }
    this.stale = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refresh();
    }, delayMs);
  }

  /** refresh asks for the map of the active session and posts it to the page. */
  async refresh(): Promise<ContextMap | undefined> {
    const panel = this.panel;
    if (!panel) return undefined;
    const id = this.host.activeSession();
    if (id === undefined) {
      this.last = undefined;
      panel.title = 'VT Code Context';
      this.post({ type: 'empty', text: 'An agent opens a session through the extension API; pick a stored one with "VT Code: Select Session…".' });
      return undefined;
    }
    try {
      const map = await this.host.sessionRequest<ContextMap>(ContextMapMethod, { sessionId: id });
      if (this.host.activeSession() !== id || this.panel !== panel) return map;
      this.last = map;
      panel.title = `VT Code Context · ${map.capacity > 0 ? Math.round(map.pressure * 100) + '%' : id}`;
      this.post(pageMessage(map));
      return map;
    } catch (err) {
      this.host.log.warn(errorText(`context map of ${id}`, err));
      return undefined;
    }
  }

  private post(m: ToPage): void {
    if (this.panel && this.ready) void this.panel.webview.postMessage(m);
  }

  private async onMessage(m: FromPage): Promise<void> {
    switch (m.type) {
      case 'ready':
        this.ready = true;
        if (this.last) this.post(pageMessage(this.last));
        await this.refresh();
        break;
      case 'refresh':
        await this.refresh();
        break;
      case 'preview':
        await this.host.previewCompaction();
        break;
      case 'restore': {
        const a = this.last?.artifacts.find((x) => x.artifactId === m.artifactId);
        if (!a) return;
        if (await confirmRestore(a)) await this.host.restore(a.artifactId);
        await this.refresh();
        break;
      }
      default:
        m satisfies never; // every message of FromPage is handled
    }
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.panel?.dispose();
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
