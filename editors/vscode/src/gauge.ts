// The status-bar gauge of the active session: its token pressure (vtcode/tokenPressure, the
// daemon's formatted figures), the projection stats in the tooltip, a spinner while the extension
// compacts, and "VT Code: Show Projection Stats". The texts are display.ts's.

import * as vscode from 'vscode';
import { errorText, statsDetail, statsSummary, statusBackground, statusText, tooltipMarkdown } from './display';
import { Methods, type Stats, type TokenPressure } from './protocol';
import type { SessionTracker } from './tracker';

/** What the gauge needs from the extension. */
export interface GaugeHost {
  readonly tracker: SessionTracker;
  /** A session request (loading a stored session once), on the started client. */
  sessionRequest<R>(method: string, params: { sessionId: string }): Promise<R>;
  /** Whether the client is connected (no stats are asked for otherwise). */
  readonly running: boolean;
  requireSession(): string | undefined;
  readonly log: vscode.LogOutputChannel;
}

export class StatusGauge implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private stats: Stats | undefined;
  private timer: NodeJS.Timeout | undefined;
  private compactions = 0;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly host: GaugeHost) {
    this.item = vscode.window.createStatusBarItem('vtcode.pressure', vscode.StatusBarAlignment.Right, 100);
    this.item.name = 'VT Code Context';
    this.disposables.push(
      this.item,
      vscode.commands.registerCommand('vtcode.showStats', () => this.showStats()),
      host.tracker.onDidChange((id) => {
        this.stats = undefined;
        this.render();
        if (id !== undefined && !host.tracker.view()) this.schedule(0);
      }),
    );
    this.render();
    this.item.show();
  }

  /** pressure records a vtcode/tokenPressure notification; true when the active session's gauge changed. */
  pressure(p: TokenPressure): boolean {
    if (!this.host.tracker.pressure(p)) return false;
    this.render();
    this.schedule(400);
    return true;
  }

  /** clear forgets the stats (the server restarted). */
  clear(): void {
    this.stats = undefined;
    this.render();
  }

  /** compacting shows the gauge as compacting while work runs. */
  async compacting<T>(work: () => Promise<T>): Promise<T> {
    this.compactions++;
    this.render();
    try {
      return await work();
    } finally {
      this.compactions--;
      this.render();
    }
  }

  /** schedule refreshes the stats of the active session after delayMs (the later call wins). */
  schedule(delayMs: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refresh();
    }, delayMs);
  }

  /** refresh asks for the active session's stats now and shows them. */
  async refresh(): Promise<Stats | undefined> {
    const id = this.host.tracker.active;
    if (id === undefined || !this.host.running) return undefined;
    try {
      const stats = await this.host.sessionRequest<Stats>(Methods.projectionStats, { sessionId: id });
      if (this.host.tracker.active === id) this.show(stats);
      return stats;
    } catch (err) {
      this.host.log.warn(errorText(`stats of ${id}`, err));
      return undefined;
    }
  }

  /** showStats is "VT Code: Show Projection Stats". */
  async showStats(): Promise<Stats | undefined> {
    const id = this.host.requireSession();
    if (id === undefined) return undefined;
    try {
      const stats = await this.host.sessionRequest<Stats>(Methods.projectionStats, { sessionId: id });
      this.show(stats);
      this.host.log.info(`projection stats\n${statsDetail(stats)}`);
      void vscode.window.showInformationMessage(statsSummary(stats), 'Details').then((a) => a && this.host.log.show(true));
      return stats;
    } catch (err) {
      void vscode.window.showErrorMessage(errorText('VT Code: Projection stats failed', err));
      return undefined;
    }
  }

  private show(stats: Stats): void {
    this.stats = stats;
    this.host.tracker.stats(stats);
    this.render();
  }

  render(): void {
    const tracker = this.host.tracker;
    const view = tracker.view();
    const active = tracker.active;
    if (active !== undefined && !view) {
      this.item.text = `$(pulse) ${active}`;
      this.item.backgroundColor = undefined;
    } else {
      this.item.text = statusText(view, this.compactions > 0);
      const bg = statusBackground(view?.state);
      this.item.backgroundColor = bg ? new vscode.ThemeColor(bg) : undefined;
    }
    const md = new vscode.MarkdownString(tooltipMarkdown(view, this.stats, tracker.pinned));
    md.supportThemeIcons = true;
    if (active !== undefined) {
      md.appendMarkdown('\n\n[$(graph) Show Context](command:vtcode.showContext "What fills the window, cleared results, compactions")');
      md.isTrusted = { enabledCommands: ['vtcode.showContext'] };
    }
    this.item.tooltip = md;
    this.item.command = active === undefined ? 'vtcode.selectSession' : 'vtcode.compact';
    this.item.accessibilityInformation = { label: `VT Code context: ${this.item.text.replace(/\$\([^)]*\)\s*/g, '')}` };
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
