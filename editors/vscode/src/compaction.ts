// Compaction from the editor: "VT Code: Compact Context" (and "… with Instructions"), with its
// cancellable progress notification; the progress of automatic compactions the server runs
// (progress.ts); the answer to an ask-mode proposal (vtcode/compactionProposed, ask.ts); and the
// compaction boundaries the server announces (vtcode/compactBoundary).

import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import { CancellationTokenSource, type LanguageClient } from 'vscode-languageclient/node';
import { proposalActions, proposalStep, proposalText, type CompactionProposal } from './ask';
import type { Connection } from './connection';
import { isNoOp } from './contextmap';
import { compactResultText, errorText, isCancelled } from './display';
import type { StatusGauge } from './gauge';
import { NotificationProgress, ProgressCreateFeature } from './progress';
import { type CompactBoundary, type CompactResult, Methods } from './protocol';
import type { ActiveSession } from './sessions';

/** What compaction needs from the extension. */
export interface CompactionHost {
  readonly connection: Connection;
  readonly active: ActiveSession;
  readonly gauge: StatusGauge;
  /** Opens the preview editor of the active session (preview.ts). */
  preview(): Promise<unknown>;
  /** The history changed: refresh stats and views. */
  changed(): void;
  readonly log: vscode.LogOutputChannel;
}

export class CompactionCommands implements vscode.Disposable {
  private readonly progress: NotificationProgress;
  private readonly disposables: vscode.Disposable[];

  constructor(private readonly host: CompactionHost) {
    const { connection } = host;
    this.progress = new NotificationProgress(() => connection.client, host.log);
    connection.onClient((client) => this.setUp(client));
    this.disposables = [
      vscode.commands.registerCommand('vtcode.compact', (instructions?: string) => this.compact(typeof instructions === 'string' ? instructions : undefined)),
      vscode.commands.registerCommand('vtcode.compactWithInstructions', (instructions?: string) => this.compactWithInstructions(instructions)),
    ];
  }

  private setUp(client: LanguageClient): void {
    client.registerFeature(new ProgressCreateFeature(client, this.progress, (message) => this.autoCompactionEnded(message)));
    client.onNotification(Methods.compactionProposed, (p: CompactionProposal) => void this.onProposal(p));
    client.onNotification(Methods.compactBoundary, (b: CompactBoundary) => {
      this.host.log.info(`compaction: ${JSON.stringify(b)}`);
      if (b.sessionId === undefined || b.sessionId === this.host.active.id) this.host.changed();
    });
  }

  /** compact is "VT Code: Compact Context": the active session, with optional instructions. */
  async compact(instructions?: string): Promise<CompactResult | undefined> {
    const { connection, active, gauge, log } = this.host;
    try {
      await connection.ensureStarted();
    } catch {
      return undefined;
    }
    const sessionId = active.requireSession();
    if (sessionId === undefined) return undefined;
    const token = `vtcode-compact-${randomUUID()}`;
    const cts = new CancellationTokenSource();
    const tracking = this.progress.track(token, { cancel: () => cts.cancel() });
    try {
      const params: Record<string, unknown> = { sessionId, workDoneToken: token };
      if (instructions) params.instructions = instructions;
      const result = await gauge.compacting(() => connection.request<CompactResult>(Methods.compact, params, cts.token));
      const text = compactResultText(result);
      // "Conversation is already compact." is a result (mode "none"), not an error.
      log.info(isNoOp(result) ? `${sessionId}: ${text}` : `compacted ${sessionId}: ${text}`);
      void vscode.window.showInformationMessage(isNoOp(result) ? `VT Code: ${text}` : text);
      return result;
    } catch (err) {
      if (isCancelled(err) || cts.token.isCancellationRequested) {
        void vscode.window.showInformationMessage('VT Code: compaction cancelled; the history is unchanged.');
      } else {
        const msg = errorText('VT Code: Compaction failed', err);
        log.error(msg);
        void vscode.window.showErrorMessage(msg);
      }
      return undefined;
    } finally {
      tracking.dispose();
      cts.dispose();
      gauge.schedule(0);
    }
  }

  /** compactWithInstructions asks for the instructions when none are given. */
  async compactWithInstructions(instructions?: string): Promise<CompactResult | undefined> {
    if (typeof instructions !== 'string') {
      if (this.host.active.requireSession() === undefined) return undefined;
      instructions = await vscode.window.showInputBox({
        title: 'VT Code: Compact Context with Instructions',
        prompt: 'What the summary must keep or focus on',
        placeHolder: 'e.g. keep the failing test names and the exact commands',
        ignoreFocusOut: true,
      });
      if (instructions === undefined) return undefined;
    }
    return this.compact(instructions.trim() || undefined);
  }

  /** autoCompactionEnded tells how a compaction the server started ended. */
  private autoCompactionEnded(message: string | undefined): void {
    if (!message) return;
    if (/^compaction failed/i.test(message)) void vscode.window.showWarningMessage(`VT Code: ${message}`);
    else vscode.window.setStatusBarMessage(`$(check) ${message}`, 8000);
    this.host.gauge.schedule(0);
  }

  /** onProposal shows an ask-mode proposal (ask.ts) and carries out the answer. */
  private async onProposal(p: CompactionProposal): Promise<void> {
    const { active, gauge, log } = this.host;
    log.info(`compaction proposed: ${JSON.stringify(p)}`);
    const step = proposalStep(p, await vscode.window.showInformationMessage(proposalText(p), ...proposalActions));
    try {
      if (step.kind === 'preview') {
        active.tracker.pin(step.sessionId);
        gauge.render();
        await this.host.preview();
      } else if (step.kind === 'request') {
        await this.host.connection.sessionRequest(step.method, step.params);
        this.host.changed();
      }
    } catch (err) {
      void vscode.window.showErrorMessage(errorText('VT Code: answering the compaction proposal failed', err));
    }
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
