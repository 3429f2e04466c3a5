// LSP work-done progress rendered as VS Code progress notifications.
//
// vscode-languageclient shows server-created progress (window/workDoneProgress/create) in the
// status-bar "window" location only. Compaction is long, user-visible work, so this module shows
// every vtcode-ls progress token as a cancellable notification instead: tokens the extension
// passes as workDoneToken (its own compact requests) and tokens the server creates (automatic
// compaction while an agent prepares a request).

import * as vscode from 'vscode';
import {
  type BaseLanguageClient,
  type ClientCapabilities,
  type FeatureState,
  type ProgressToken,
  type StaticFeature,
  WorkDoneProgress,
  WorkDoneProgressCancelNotification,
  WorkDoneProgressCreateRequest,
} from 'vscode-languageclient/node';
import { progressIncrement, type WorkDoneValue } from './display';

/** Options for one tracked progress token. */
export interface TrackOptions {
  /** Called when the user cancels; default: send window/workDoneProgress/cancel. */
  cancel?: () => void;
  /** Called with the end message of a token the server created. */
  onEnd?: (message: string | undefined) => void;
}

/** NotificationProgress renders work-done progress tokens as progress notifications. */
export class NotificationProgress {
  constructor(
    private readonly client: () => BaseLanguageClient | undefined,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /**
   * track listens for progress on token until its end (or until the returned disposable is
   * disposed) and shows it as a notification from its begin on.
   */
  track(token: ProgressToken, opts: TrackOptions = {}): vscode.Disposable {
    const client = this.client();
    if (!client) return new vscode.Disposable(() => undefined);
    let finish: (() => void) | undefined;
    let report: ((v: { message?: string; increment?: number }) => void) | undefined;
    let ended = false;
    let last = 0;
    const pending: Array<{ message?: string; increment?: number }> = [];
    const send = (v: { message?: string; increment?: number }) => (report ? report(v) : pending.push(v));
    const sub = client.onProgress(WorkDoneProgress.type, token, (raw) => {
      const value = raw as WorkDoneValue;
      switch (value.kind) {
        case 'begin': {
          this.log.info(`progress ${String(token)}: ${value.title}${value.message ? ' · ' + value.message : ''}`);
          void vscode.window.withProgress(
            { location: vscode.ProgressLocation.Notification, title: value.title, cancellable: value.cancellable !== false },
            (progress, ct) => {
              report = (v) => progress.report(v);
              for (const v of pending.splice(0)) report(v);
              ct.onCancellationRequested(() => {
                this.log.info(`progress ${String(token)}: cancelled by the user`);
                if (opts.cancel) opts.cancel();
                else void client.sendNotification(WorkDoneProgressCancelNotification.type, { token });
              });
              return new Promise<void>((resolve) => {
                finish = resolve;
                if (ended) resolve();
              });
            },
          );
          const inc = progressIncrement(last, value.percentage);
          if (inc !== undefined) last += inc;
          if (value.message || inc !== undefined) send({ message: value.message, increment: inc });
          break;
        }
        case 'report': {
          const inc = progressIncrement(last, value.percentage);
          if (inc !== undefined) last += inc;
          if (value.message) this.log.info(`progress ${String(token)}: ${value.message}`);
          send({ message: value.message, increment: inc });
          break;
        }
        case 'end':
          this.log.info(`progress ${String(token)} end: ${value.message ?? ''}`);
          ended = true;
          finish?.();
          sub.dispose();
          opts.onEnd?.(value.message);
          break;
      }
    });
    return new vscode.Disposable(() => {
      ended = true;
      finish?.();
      sub.dispose();
    });
  }
}

/**
 * ProgressCreateFeature replaces vscode-languageclient's handler of window/workDoneProgress/create
 * (it is registered after the built-in ProgressFeature, so its handler wins) and routes
 * server-created tokens to NotificationProgress. The client capability
 * window.workDoneProgress = true is still filled in by the built-in feature; it is set here too.
 */
export class ProgressCreateFeature implements StaticFeature {
  private disposable: vscode.Disposable | undefined;
  private readonly active = new Map<string, vscode.Disposable>();

  constructor(
    private readonly client: BaseLanguageClient,
    private readonly progress: NotificationProgress,
    private readonly onEnd: (message: string | undefined) => void,
  ) {}

  getState(): FeatureState {
    return { kind: 'static' };
  }

  fillClientCapabilities(capabilities: ClientCapabilities): void {
    capabilities.window = capabilities.window ?? {};
    capabilities.window.workDoneProgress = true;
  }

  initialize(): void {
    this.disposable = this.client.onRequest(WorkDoneProgressCreateRequest.type, (params) => {
      const key = String(params.token);
      this.active.get(key)?.dispose();
      const d = this.progress.track(params.token, {
        onEnd: (message) => {
          this.active.delete(key);
          this.onEnd(message);
        },
      });
      this.active.set(key, d);
    });
  }

  clear(): void {
    for (const d of this.active.values()) d.dispose();
    this.active.clear();
    this.disposable?.dispose();
    this.disposable = undefined;
  }
}
