// VT Code Context: the VS Code client of the vtcode-ls daemon (docs/design.md §14).
//
// It starts `vtcode-ls serve` over stdio with vscode-languageclient, follows the active session
// (the workspace's most recently updated one unless the user picked one), shows its token
// pressure in the status bar, runs compaction with a progress notification, and exports the
// connection to agent extensions: `activate` returns `{ client, activeSession() }`.
//
// This file only wires the features, each a module with its own commands and disposables:
//   connection.ts   the daemon, the language client, restarts and reconnects
//   sessions.ts     the active session: picking, following, reopening after a reconnect
//   gauge.ts        the status bar and "Show Projection Stats"
//   compaction.ts   "Compact Context", automatic compaction's progress, the ask-mode proposal
//   preview.ts      "Preview Compaction", Apply and Discard
//   restore.ts      "Restore History…"
//   prompt.ts       "Edit Compaction Prompt"
//   contextPanel.ts "Show Context" (the page: contextmap.ts, page/)
//   api.ts          what agent extensions get from `activate`

import * as vscode from 'vscode';
import { agentApi, type VtcodeApi } from './api';
import { CompactionCommands } from './compaction';
import { Connection } from './connection';
import { ContextPanel } from './contextPanel';
import { StatusGauge } from './gauge';
import { PreviewDocuments } from './preview';
import { CompactionPrompt } from './prompt';
import { Methods, type TokenPressure } from './protocol';
import { RestoreHistory } from './restore';
import { ActiveSession } from './sessions';

export type { VtcodeApi } from './api';

class Extension implements vscode.Disposable {
  private readonly log = vscode.window.createOutputChannel('VT Code', { log: true });
  private readonly connection: Connection;
  /** The features, disposed in reverse order of creation. */
  private readonly features: vscode.Disposable[] = [];
  readonly api: VtcodeApi;

  constructor(extensionPath: string) {
    const log = this.log;
    const connection = (this.connection = new Connection(extensionPath, log));
    // The stats and the context view of the active session are out of date (a compaction, a
    // restore, a reconnect): both refresh at once.
    const changed = () => {
      gauge.schedule(0);
      panel.changed(0);
    };
    const active = this.add(new ActiveSession({
      ready: () => connection.ensureStarted(),
      request: (method, params) => connection.request(method, params),
      openSessions: connection.openSessions,
      refreshStats: () => gauge.refresh(),
      changed,
      log,
    }));
    const gauge: StatusGauge = this.add(new StatusGauge({
      tracker: active.tracker,
      sessionRequest: (method, params) => connection.sessionRequest(method, params),
      get running() {
        return connection.running;
      },
      requireSession: () => active.requireSession(),
      log,
    }));
    const previews = this.add(new PreviewDocuments({
      request: (method, params, token) => connection.request(method, params, token),
      requireSession: () => active.requireSession(),
      compacted: changed,
      log,
    }));
    const restore = this.add(new RestoreHistory({
      request: (method, params) => connection.request(method, params),
      requireSession: () => active.requireSession(),
      changed,
    }));
    const panel: ContextPanel = this.add(new ContextPanel({
      sessionRequest: (method, params) => connection.sessionRequest(method, params),
      activeSession: () => active.id,
      restore: (artifactId) => restore.restore(artifactId),
      previewCompaction: () => previews.preview(),
      log,
    }));
    this.add(new CompactionCommands({ connection, active, gauge, preview: () => previews.preview(), changed, log }));
    this.add(new CompactionPrompt({ request: (method, params) => connection.request(method, params) }));
    this.api = agentApi(connection, active);

    this.features.push(active.tracker.onDidChange(() => panel.changed(0)));
    connection.onClient((client) =>
      client.onNotification(Methods.tokenPressure, (p: TokenPressure) => {
        if (gauge.pressure(p)) panel.changed();
      }),
    );
    connection.onStarted(() => active.followListed());
    this.features.push(
      connection.onDidRun((client) => void active.reopen(client)),
      connection.onDidStop(() => {
        active.tracker.reset();
        gauge.render();
      }),
      connection.onWillReconnect(() => active.reconnecting()),
      connection.onDidRestart(() => {
        active.tracker.reset();
        gauge.clear();
      }),
    );
  }

  private add<T extends vscode.Disposable>(feature: T): T {
    this.features.push(feature);
    return feature;
  }

  start(): Promise<void> {
    return this.connection.start();
  }

  async dispose(): Promise<void> {
    for (const d of this.features.splice(0).reverse()) d.dispose();
    await this.connection.dispose();
    this.log.dispose();
  }
}

let instance: Extension | undefined;

/** activate starts the client and returns the API for agent extensions. */
export async function activate(context: vscode.ExtensionContext): Promise<VtcodeApi> {
  instance = new Extension(context.extensionPath);
  context.subscriptions.push({ dispose: () => void instance?.dispose() });
  void instance.start();
  return instance.api;
}

/** deactivate stops the server. */
export async function deactivate(): Promise<void> {
  const i = instance;
  instance = undefined;
  await i?.dispose();
}
