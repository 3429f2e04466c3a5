// VT Code Context: the VS Code client of the vtcode-ls daemon (docs/design.md §14).
//
// It starts `vtcode-ls serve` over stdio with vscode-languageclient, follows the active session
// (the workspace's most recently updated one unless the user picked one), shows its token
// pressure in the status bar, runs compaction with a progress notification, and exports the
// connection to agent extensions: `activate` returns `{ client, activeSession() }`.

import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import {
  type CancellationToken,
  CancellationTokenSource,
  CloseAction,
  ErrorAction,
  LanguageClient,
  type LanguageClientOptions,
  type MessageSignature,
  RevealOutputChannelOn,
  type ServerOptions,
  State,
} from 'vscode-languageclient/node';
import {
  artifactPickItem,
  compactResultText,
  errorText,
  isCancelled,
  statsDetail,
  statsSummary,
  statusBackground,
  statusText,
  tooltipMarkdown,
} from './display';
import { ContextPanel } from './contextPanel';
import { isNoOp } from './contextmap';
import { PreviewDocuments, PreviewScheme } from './preview';
import { editPrompt, PromptFileSystem, PromptScheme } from './prompt';
import { machineSetting, Reconnects, resolveServer } from './server';
import { ProjectionDeltas, projectionDeltaCapability } from './delta';
import { OpenSessions } from './reopen';
import { NotificationProgress, ProgressCreateFeature } from './progress';
import {
  type ArtifactInfo,
  type CompactBoundary,
  type CompactResult,
  ErrorCodes,
  Methods,
  type OpenSessionResult,
  type PrepareResult,
  type PrepareWireResult,
  type PromptResult,
  type Stats,
  type TokenPressure,
} from './protocol';
import { SessionPicker } from './sessions';
import { SessionTracker } from './tracker';
import { proposalActions, proposalStep, proposalText, type CompactionProposal } from './ask';

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

class Extension implements vscode.Disposable {
  private client!: LanguageClient;
  private starting: Promise<LanguageClient> | undefined;
  private readonly reconnects = new Reconnects();
  private readonly log: vscode.LogOutputChannel;
  private readonly status: vscode.StatusBarItem;
  private readonly tracker = new SessionTracker();
  private readonly progress: NotificationProgress;
  private readonly activeEmitter = new vscode.EventEmitter<string | undefined>();
  private readonly disposables: vscode.Disposable[] = [];
  private stats: Stats | undefined;
  private statsTimer: NodeJS.Timeout | undefined;
  private compacting = 0;
  private readonly contextPanel: ContextPanel;
  private readonly previews: PreviewDocuments;
  private readonly deltas = new ProjectionDeltas();
  private readonly sessions: SessionPicker;
  /** The sessions opened through the client, reopened when the connection starts again. */
  private readonly openSessions = new OpenSessions();
  /** The session the status bar followed when the connection closed, to follow again after the reconnect. */
  private followAfterReconnect: string | undefined;

  constructor(private readonly extensionPath: string) {
    this.log = vscode.window.createOutputChannel('VT Code', { log: true });
    this.status = vscode.window.createStatusBarItem('vtcode.pressure', vscode.StatusBarAlignment.Right, 100);
    this.status.name = 'VT Code Context';
    this.progress = new NotificationProgress(() => this.client, this.log);
    this.sessions = new SessionPicker({
      client: () => this.ensureStarted(),
      tracker: this.tracker,
      refreshStats: () => this.refreshStats(),
      log: this.log,
    });
    this.contextPanel = new ContextPanel({
      request: (method, params) => this.sessionRequest(method, params as { sessionId: string }),
      activeSession: () => this.tracker.active,
      restore: (artifactId) => this.restore(artifactId),
      previewCompaction: () => this.previews.preview(),
      log: this.log,
    });
    this.previews = new PreviewDocuments({
      // vscode-jsonrpc reads a trailing undefined as one more positional param: pass a token only when there is one.
      request: async (method, params, token) => {
        const client = await this.ensureStarted();
        return token ? client.sendRequest(method, params, token) : client.sendRequest(method, params);
      },
      requireSession: () => this.requireSession(),
      compacted: () => {
        this.scheduleStats(0);
        this.contextPanel.changed(0);
      },
      log: this.log,
    });
    this.disposables.push(
      this.log,
      this.status,
      this.activeEmitter,
      this.tracker.onDidChange((id) => {
        this.log.info(`active session: ${id ?? '(none)'}${this.tracker.pinned ? ' (selected)' : ''}`);
        this.activeEmitter.fire(id);
        this.stats = undefined;
        this.render();
        if (id !== undefined && !this.tracker.view()) this.scheduleStats(0);
        this.contextPanel.changed(0);
      }),
      this.contextPanel,
      this.previews,
    );
    this.render();
    this.status.show();
  }

  api(): VtcodeApi {
    const self = this;
    return {
      get client() {
        return self.client;
      },
      activeSession: () => this.tracker.active,
      onDidChangeActiveSession: this.activeEmitter.event,
      ready: () => this.ensureStarted(),
      prepareRequest: (params) => this.prepareRequest(params),
    };
  }

  register(): void {
    const cmd = (id: string, fn: (...args: any[]) => unknown) =>
      this.disposables.push(vscode.commands.registerCommand(id, fn));
    cmd('vtcode.compact', (instructions?: string) => this.compact(typeof instructions === 'string' ? instructions : undefined));
    cmd('vtcode.compactWithInstructions', (instructions?: string) => this.compactWithInstructions(instructions));
    cmd('vtcode.showStats', () => this.showStats());
    cmd('vtcode.editPrompt', () => this.editPrompt());
    cmd('vtcode.restore', (artifactId?: string) => this.restore(artifactId));
    cmd('vtcode.selectSession', (sessionId?: string | null) => this.selectSession(sessionId));
    cmd('vtcode.restartServer', () => this.restart());
    cmd('vtcode.showContext', () => this.contextPanel.show());
    cmd('vtcode.previewCompaction', () => this.previews.preview());
    cmd('vtcode.applyPreview', (uri?: vscode.Uri) => this.previews.apply(uri instanceof vscode.Uri ? uri : undefined));
    cmd('vtcode.discardPreview', (uri?: vscode.Uri) => this.previews.discard(uri instanceof vscode.Uri ? uri : undefined));
    this.disposables.push(
      vscode.workspace.registerFileSystemProvider(PromptScheme, new PromptFileSystem(this), { isCaseSensitive: true }),
      vscode.workspace.registerFileSystemProvider(PreviewScheme, this.previews, { isCaseSensitive: true }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('vtcode.serverPath') || e.affectsConfiguration('vtcode.serverArgs') || e.affectsConfiguration('vtcode.server.shared') || e.affectsConfiguration('vtcode.proxy.listen')) {
          void vscode.window
            .showInformationMessage('VT Code: the server settings changed.', 'Restart Server')
            .then((a) => a && this.restart());
        }
      }),
    );
  }

  // ---- requests of agent extensions -----------------------------------------------------------

  /** prepareRequest for the extension API: deltas on the wire, whole projections for callers. */
  async prepareRequest(params: { sessionId: string; [key: string]: unknown }): Promise<PrepareResult> {
    const client = await this.ensureStarted();
    try {
      const r = await client.sendRequest<PrepareWireResult>(Methods.prepareRequest, this.deltas.params(params));
      return this.deltas.apply(params.sessionId, r);
    } catch (err) {
      this.deltas.forget(params.sessionId);
      throw err;
    }
  }

  // ---- client lifecycle ---------------------------------------------------------------------

  private serverCommand(): { command: string; args: string[]; source: string } {
    const cfg = vscode.workspace.getConfiguration('vtcode');
    // An explicit user setting wins over the daemon bundled in a platform-specific package; a
    // workspace never picks the binary or its arguments (machine scope, see machineSetting).
    const configured = machineSetting(cfg.inspect<string>('serverPath'));
    const { command, source } = resolveServer({
      configured,
      extensionPath: this.extensionPath,
      home: process.env.HOME,
      folder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
      exists: (p) => fs.existsSync(p),
    });
    if (source === 'bundled' && process.platform !== 'win32') {
      // a .vsix unpacked without the executable bit
      try {
        fs.accessSync(command, fs.constants.X_OK);
      } catch {
        try {
          fs.chmodSync(command, 0o755);
        } catch (e) {
          this.log.warn(`making ${command} executable: ${String(e)}`);
        }
      }
    }
    const extra = machineSetting(cfg.inspect<string[]>('serverArgs')) ?? [];
    // vtcode-ls without a command attaches to the user's shared daemon (started on demand);
    // --no-shared serves this window in its own process.
    const shared = machineSetting(cfg.inspect<boolean>('server.shared')) ?? true;
    return { command, args: shared ? extra : ['--no-shared', ...extra], source };
  }

  // initializationOptions: the proxy address of vtcode.proxy.listen, when set
  // in the user's settings (the daemon then runs the proxy for existing
  // agents in-process); a workspace never picks it (machine scope).
  private initializationOptions(): { proxy?: { listen: string } } | undefined {
    const listen = (machineSetting(vscode.workspace.getConfiguration('vtcode').inspect<string>('proxy.listen')) ?? '').trim();
    return listen ? { proxy: { listen } } : undefined;
  }

  private createClient(): LanguageClient {
    const { command, args, source } = this.serverCommand();
    this.log.info(`starting ${[command, ...args].join(' ')}${source === 'bundled' ? ' (bundled with the extension)' : ''}`);
    const serverOptions: ServerOptions = {
      command,
      args,
      options: { cwd: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [],
      outputChannel: this.log,
      traceOutputChannel: this.log,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      // A connection that closes (the shared daemon killed: the forwarder exits 1) restarts at
      // once, bounded, with one message per outage; write errors on the dead pipe say nothing
      // more than the output channel (the close that follows is what the user hears about).
      errorHandler: {
        error: (error, _message, count) => {
          this.log.warn(`connection error: ${error.message}`);
          return { action: count !== undefined && count > 3 ? ErrorAction.Shutdown : ErrorAction.Continue, handled: true };
        },
        closed: () => {
          const { restart, message } = this.reconnects.closed(Date.now());
          this.log.warn(restart ? 'the connection to vtcode-ls closed; restarting it' : 'the connection to vtcode-ls closed; not restarting');
          if (restart) this.followAfterReconnect ??= this.tracker.active;
          if (message && restart) {
            void vscode.window.showInformationMessage(message);
          } else if (message) {
            void vscode.window.showErrorMessage(message, 'Restart Server', 'Show Output').then((a) => {
              if (a === 'Restart Server') void this.restart();
              if (a === 'Show Output') this.log.show(true);
            });
          }
          return { action: restart ? CloseAction.Restart : CloseAction.DoNotRestart, handled: true };
        },
      },
      initializationOptions: this.initializationOptions(),
      // every request passes the record of open sessions (openSession, closeSession), and waits
      // while they are reopened after a reconnect
      middleware: {
        sendRequest: <P, R>(type: string | MessageSignature, param: P | undefined, token: CancellationToken | undefined, next: (type: string | MessageSignature, param?: P, token?: CancellationToken) => Promise<R>) =>
          this.openSessions.through(typeof type === 'string' ? type : type.method, param, (p) => next(type, p as P | undefined, token)),
      },
    };
    const client = new LanguageClient('vtcode', 'VT Code', serverOptions, clientOptions);
    client.registerFeature(new ProgressCreateFeature(client, this.progress, (message) => this.autoCompactionEnded(message)));
    client.registerFeature({
      getState: () => ({ kind: 'static' }),
      fillClientCapabilities: (c) => {
        c.experimental = { ...(c.experimental as object | undefined), ...projectionDeltaCapability };
      },
      initialize: () => this.deltas.clear(),
      clear: () => this.deltas.clear(),
    });
    client.onNotification(Methods.tokenPressure, (p: TokenPressure) => this.onPressure(p));
    client.onNotification(Methods.compactionProposed, (p: CompactionProposal) => void this.onProposal(p));
    client.onNotification(Methods.compactBoundary, (b: CompactBoundary) => {
      this.log.info(`compaction: ${JSON.stringify(b)}`);
      if (b.sessionId === undefined || b.sessionId === this.tracker.active) {
        this.scheduleStats(0);
        this.contextPanel.changed(0);
      }
    });
    client.onDidChangeState((e) => {
      if (e.newState === State.Stopped) {
        this.tracker.reset();
        this.render();
      }
      if (e.newState === State.Running) void this.reopenSessions(client);
    });
    return client;
  }

  /**
   * reopenSessions reopens, on a connection that (re)started, the sessions opened on the previous
   * ones (the shared daemon died: the new one has none open), before any other request goes out,
   * and follows again the session the status bar showed. The reconnect itself was told once
   * (Reconnects); only sessions the daemon refuses to reopen add a message.
   */
  private async reopenSessions(client: LanguageClient): Promise<void> {
    const follow = this.followAfterReconnect;
    this.followAfterReconnect = undefined;
    if (this.openSessions.ids.length === 0 && follow === undefined) return;
    const { reopened, failed, lost } = await this.openSessions.reopen((method, params) => client.sendRequest(method, params));
    if (reopened.length) this.log.info(`reopened after the reconnect: ${reopened.join(', ')}`);
    if (lost.length) this.log.warn(`the connection closed while reopening ${lost.join(', ')}`);
    for (const f of failed) {
      this.log.warn(errorText(`reopening ${f.sessionId}`, f.error));
      this.tracker.forget(f.sessionId);
    }
    if (failed.length) {
      const ids = failed.map((f) => f.sessionId).join(', ');
      void vscode.window.showWarningMessage(`VT Code: ${failed.length === 1 ? 'session' : 'sessions'} ${ids} could not be reopened after the reconnect; see the output.`, 'Show Output').then((a) => {
        if (a === 'Show Output') this.log.show(true);
      });
    }
    if (lost.length || !client.isRunning()) {
      this.followAfterReconnect ??= follow; // the next connection reopens and follows them
      return;
    }
    if (this.tracker.active === undefined && follow !== undefined && !failed.some((f) => f.sessionId === follow)) this.tracker.opened(follow);
    if (this.tracker.active === undefined) await this.sessions.followListed();
    this.scheduleStats(0);
    this.contextPanel.changed(0);
  }

  /** onProposal shows an ask-mode proposal (ask.ts) and carries out the answer. */
  private async onProposal(p: CompactionProposal): Promise<void> {
    this.log.info(`compaction proposed: ${JSON.stringify(p)}`);
    const step = proposalStep(p, await vscode.window.showInformationMessage(proposalText(p), ...proposalActions));
    try {
      if (step.kind === 'preview') {
        this.tracker.pin(step.sessionId);
        this.render();
        await this.previews.preview();
      } else if (step.kind === 'request') {
        await this.sessionRequest(step.method, step.params);
        this.scheduleStats(0);
        this.contextPanel.changed(0);
      }
    } catch (err) {
      void vscode.window.showErrorMessage(errorText('VT Code: answering the compaction proposal failed', err));
    }
  }

  ensureStarted(): Promise<LanguageClient> {
    if (this.client?.isRunning()) return Promise.resolve(this.client);
    if (this.starting) return this.starting;
    if (!this.client) this.client = this.createClient();
    const client = this.client;
    this.starting = (async () => {
      try {
        await client.start();
        const info = client.initializeResult?.serverInfo;
        this.log.info(`connected to ${info?.name ?? 'server'} ${info?.version ?? ''}`.trim());
        await this.pickInitialSession();
        return client;
      } catch (err) {
        const { command } = this.serverCommand();
        const msg = errorText(`VT Code: could not start ${command}`, err);
        this.log.error(msg);
        void vscode.window.showErrorMessage(msg, 'Open Settings', 'Show Output').then((a) => {
          if (a === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'vtcode.serverPath');
          if (a === 'Show Output') this.log.show(true);
        });
        throw err;
      } finally {
        this.starting = undefined;
      }
    })();
    return this.starting;
  }

  async start(): Promise<void> {
    await this.ensureStarted().catch(() => undefined);
  }

  async restart(): Promise<void> {
    const old = this.client;
    this.client = undefined as unknown as LanguageClient;
    if (old) await old.dispose().catch((e: unknown) => this.log.warn(`stopping the server: ${String(e)}`));
    this.tracker.reset();
    this.stats = undefined;
    this.render();
    await this.start();
  }

  async dispose(): Promise<void> {
    if (this.statsTimer) clearTimeout(this.statsTimer);
    const c = this.client;
    for (const d of this.disposables.splice(0)) d.dispose();
    if (c) await c.dispose().catch(() => undefined);
  }

  // ---- active session and status bar --------------------------------------------------------

  /** pickInitialSession follows the session the daemon marks active, when nothing is followed yet (sessions.ts). */
  private pickInitialSession(): Promise<void> {
    return this.sessions.followListed();
  }

  private onPressure(p: TokenPressure): void {
    if (this.tracker.pressure(p)) {
      this.render();
      this.scheduleStats(400);
      this.contextPanel.changed();
    }
  }

  private scheduleStats(delayMs: number): void {
    if (this.statsTimer) clearTimeout(this.statsTimer);
    this.statsTimer = setTimeout(() => {
      this.statsTimer = undefined;
      void this.refreshStats();
    }, delayMs);
  }

  private async refreshStats(): Promise<Stats | undefined> {
    const id = this.tracker.active;
    if (id === undefined || !this.client?.isRunning()) return undefined;
    try {
      const stats = await this.requestStats(id);
      if (this.tracker.active === id) {
        this.stats = stats;
        this.tracker.stats(stats);
        this.render();
      }
      return stats;
    } catch (err) {
      this.log.warn(errorText(`stats of ${id}`, err));
      return undefined;
    }
  }

  /** sessionRequest sends a session request, loading a stored session once if the daemon has not. */
  private async sessionRequest<R>(method: string, params: { sessionId: string }): Promise<R> {
    const client = await this.ensureStarted();
    try {
      return await client.sendRequest<R>(method, params);
    } catch (err) {
      if ((err as { code?: number }).code !== ErrorCodes.UnknownSession) throw err;
      await client.sendRequest<OpenSessionResult>(Methods.openSession, { sessionId: params.sessionId });
      return await client.sendRequest<R>(method, params);
    }
  }

  /** requestStats asks for projection stats, loading a stored session once if the daemon has not. */
  private async requestStats(id: string): Promise<Stats> {
    const client = await this.ensureStarted();
    try {
      return await client.sendRequest<Stats>(Methods.projectionStats, { sessionId: id });
    } catch (err) {
      if ((err as { code?: number }).code !== ErrorCodes.UnknownSession) throw err;
      await client.sendRequest<OpenSessionResult>(Methods.openSession, { sessionId: id });
      return await client.sendRequest<Stats>(Methods.projectionStats, { sessionId: id });
    }
  }

  private render(): void {
    const view = this.tracker.view();
    const active = this.tracker.active;
    if (active !== undefined && !view) {
      this.status.text = `$(pulse) ${active}`;
      this.status.backgroundColor = undefined;
    } else {
      this.status.text = statusText(view, this.compacting > 0);
      const bg = statusBackground(view?.state);
      this.status.backgroundColor = bg ? new vscode.ThemeColor(bg) : undefined;
    }
    const md = new vscode.MarkdownString(tooltipMarkdown(view, this.stats, this.tracker.pinned));
    md.supportThemeIcons = true;
    if (active !== undefined) {
      md.appendMarkdown('\n\n[$(graph) Show Context](command:vtcode.showContext "What fills the window, cleared results, compactions")');
      md.isTrusted = { enabledCommands: ['vtcode.showContext'] };
    }
    this.status.tooltip = md;
    this.status.command = active === undefined ? 'vtcode.selectSession' : 'vtcode.compact';
    this.status.accessibilityInformation = { label: `VT Code context: ${this.status.text.replace(/\$\([^)]*\)\s*/g, '')}` };
  }

  private requireSession(): string | undefined {
    const id = this.tracker.active;
    if (id === undefined) {
      void vscode.window.showWarningMessage(
        'VT Code: no active session. An agent opens one through the extension API; pick a stored one with "VT Code: Select Session…".',
      );
    }
    return id;
  }

  // ---- commands -----------------------------------------------------------------------------

  async compact(instructions?: string): Promise<CompactResult | undefined> {
    let client: LanguageClient;
    try {
      client = await this.ensureStarted();
    } catch {
      return undefined;
    }
    const sessionId = this.requireSession();
    if (sessionId === undefined) return undefined;
    const token = `vtcode-compact-${randomUUID()}`;
    const cts = new CancellationTokenSource();
    const tracking = this.progress.track(token, { cancel: () => cts.cancel() });
    this.compacting++;
    this.render();
    try {
      const params: Record<string, unknown> = { sessionId, workDoneToken: token };
      if (instructions) params.instructions = instructions;
      const result = await client.sendRequest<CompactResult>(Methods.compact, params, cts.token);
      const text = compactResultText(result);
      if (isNoOp(result)) {
        // "Conversation is already compact." is a result (mode "none"), not an error.
        this.log.info(`${sessionId}: ${text}`);
        void vscode.window.showInformationMessage(`VT Code: ${text}`);
        return result;
      }
      this.log.info(`compacted ${sessionId}: ${text}`);
      void vscode.window.showInformationMessage(text);
      return result;
    } catch (err) {
      if (isCancelled(err) || cts.token.isCancellationRequested) {
        void vscode.window.showInformationMessage('VT Code: compaction cancelled; the history is unchanged.');
      } else {
        const msg = errorText('VT Code: Compaction failed', err);
        this.log.error(msg);
        void vscode.window.showErrorMessage(msg);
      }
      return undefined;
    } finally {
      tracking.dispose();
      cts.dispose();
      this.compacting--;
      this.render();
      this.scheduleStats(0);
    }
  }

  private autoCompactionEnded(message: string | undefined): void {
    if (!message) return;
    if (/^compaction failed/i.test(message)) void vscode.window.showWarningMessage(`VT Code: ${message}`);
    else vscode.window.setStatusBarMessage(`$(check) ${message}`, 8000);
    this.scheduleStats(0);
  }

  async compactWithInstructions(instructions?: string): Promise<CompactResult | undefined> {
    if (typeof instructions !== 'string') {
      if (this.requireSession() === undefined) return undefined;
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

  async showStats(): Promise<Stats | undefined> {
    const id = this.requireSession();
    if (id === undefined) return undefined;
    try {
      const stats = await this.requestStats(id);
      this.stats = stats;
      this.tracker.stats(stats);
      this.render();
      this.log.info(`projection stats\n${statsDetail(stats)}`);
      void vscode.window.showInformationMessage(statsSummary(stats), 'Details').then((a) => a && this.log.show(true));
      return stats;
    } catch (err) {
      void vscode.window.showErrorMessage(errorText('VT Code: Projection stats failed', err));
      return undefined;
    }
  }

  async restore(artifactId?: string): Promise<{ messages: number } | undefined> {
    const sessionId = this.requireSession();
    if (sessionId === undefined) return undefined;
    try {
      const client = await this.ensureStarted();
      if (typeof artifactId !== 'string') {
        const artifacts = (await client.sendRequest<ArtifactInfo[] | null>(Methods.listArtifacts, { sessionId })) ?? [];
        if (artifacts.length === 0) {
          void vscode.window.showInformationMessage(`VT Code: session ${sessionId} has no compaction artifacts to restore.`);
          return undefined;
        }
        const sorted = [...artifacts].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
        const pick = await vscode.window.showQuickPick(
          sorted.map((a) => ({ ...artifactPickItem(a), artifact: a })),
          { title: 'VT Code: Restore History', placeHolder: 'The full history saved before a compaction', matchOnDetail: true },
        );
        if (!pick) return undefined;
        const ok = await vscode.window.showWarningMessage(
          `Restore ${pick.artifact.messages} messages from before the ${pick.artifact.trigger} compaction? The current history stays recoverable.`,
          { modal: true },
          'Restore',
        );
        if (ok !== 'Restore') return undefined;
        artifactId = pick.artifact.artifactId;
      }
      const result = await client.sendRequest<{ messages: number }>(Methods.restore, { sessionId, artifactId });
      void vscode.window.showInformationMessage(`VT Code: history restored (${result.messages} messages).`);
      this.scheduleStats(0);
      this.contextPanel.changed(0);
      return result;
    } catch (err) {
      void vscode.window.showErrorMessage(errorText('VT Code: Restore failed', err));
      return undefined;
    }
  }

  /** selectSession is "VT Code: Select Session…" (sessions.ts). */
  selectSession(sessionId?: string | null): Promise<string | undefined> {
    return this.sessions.select(sessionId);
  }

  /** editPrompt is "VT Code: Edit Compaction Prompt" (prompt.ts). */
  editPrompt(): Promise<void> {
    return editPrompt(this);
  }

  async prompt(action: 'get' | 'set' | 'reset', prompt?: string): Promise<PromptResult> {
    const client = await this.ensureStarted();
    const params: Record<string, unknown> = { action };
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (folder) params.workspace = folder.uri.fsPath;
    if (prompt !== undefined) params.prompt = prompt;
    return client.sendRequest<PromptResult>(Methods.compactPrompt, params);
  }

  push(d: vscode.Disposable): void {
    this.disposables.push(d);
  }
}

let instance: Extension | undefined;

/** activate starts the client and returns the API for agent extensions. */
export async function activate(context: vscode.ExtensionContext): Promise<VtcodeApi> {
  instance = new Extension(context.extensionPath);
  instance.register();
  context.subscriptions.push({ dispose: () => void instance?.dispose() });
  void instance.start();
  return instance.api();
}

/** deactivate stops the server. */
export async function deactivate(): Promise<void> {
  const i = instance;
  instance = undefined;
  await i?.dispose();
}
