// The connection to vtcode-ls: which daemon runs with which arguments (the machine-scoped
// settings, server.ts), the language client over stdio, its restarts (asked for with "VT Code:
// Restart Server", or after the shared daemon died: Reconnects), and the record of the sessions
// opened through it (reopen.ts), which every request passes. The features hook into each client
// it starts (onClient) and into its lifecycle (onStarted, onDidRun, onDidStop, onWillReconnect,
// onDidRestart).

import * as fs from 'node:fs';
import * as vscode from 'vscode';
import {
  type CancellationToken,
  CloseAction,
  ErrorAction,
  LanguageClient,
  type LanguageClientOptions,
  type MessageSignature,
  RevealOutputChannelOn,
  type ServerOptions,
  State,
} from 'vscode-languageclient/node';
import { errorText } from './display';
import { ErrorCodes, Methods, type OpenSessionResult } from './protocol';
import { OpenSessions } from './reopen';
import { machineSetting, Reconnects, resolveServer } from './server';

/** The settings that choose the daemon; a change offers a restart. */
const serverSettings = ['vtcode.serverPath', 'vtcode.serverArgs', 'vtcode.server.shared', 'vtcode.proxy.listen'];

export class Connection implements vscode.Disposable {
  private current: LanguageClient | undefined;
  private starting: Promise<LanguageClient> | undefined;
  private readonly reconnects = new Reconnects();
  /** The sessions opened through the client, reopened when the connection starts again. */
  readonly openSessions = new OpenSessions();
  private readonly setups: ((client: LanguageClient) => void)[] = [];
  private readonly startedHooks: (() => Promise<void>)[] = [];
  private readonly runEmitter = new vscode.EventEmitter<LanguageClient>();
  private readonly stopEmitter = new vscode.EventEmitter<void>();
  private readonly reconnectEmitter = new vscode.EventEmitter<void>();
  private readonly restartEmitter = new vscode.EventEmitter<void>();
  /** A client reached Running (its first start and every restart): reopen what was open. */
  readonly onDidRun = this.runEmitter.event;
  /** A client stopped. */
  readonly onDidStop = this.stopEmitter.event;
  /** The connection closed without being asked and restarts (fired before the restart). */
  readonly onWillReconnect = this.reconnectEmitter.event;
  /** "Restart Server": the old client is gone, the new one not started yet. */
  readonly onDidRestart = this.restartEmitter.event;
  private readonly disposables: vscode.Disposable[] = [this.runEmitter, this.stopEmitter, this.reconnectEmitter, this.restartEmitter];

  constructor(
    private readonly extensionPath: string,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.disposables.push(
      vscode.commands.registerCommand('vtcode.restartServer', () => this.restart()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (serverSettings.some((s) => e.affectsConfiguration(s))) {
          void vscode.window
            .showInformationMessage('VT Code: the server settings changed.', 'Restart Server')
            .then((a) => a && this.restart());
        }
      }),
    );
  }

  /** client is the current language client (undefined while a restart replaces it). */
  get client(): LanguageClient | undefined {
    return this.current;
  }

  /** running reports whether the current client is connected. */
  get running(): boolean {
    return !!this.current?.isRunning();
  }

  /** onClient registers what to set up on every client created (features, notification handlers). */
  onClient(setup: (client: LanguageClient) => void): void {
    this.setups.push(setup);
  }

  /** onStarted registers work done after each start, before ensureStarted resolves. */
  onStarted(hook: () => Promise<void>): void {
    this.startedHooks.push(hook);
  }

  /** request sends a request on the started client. */
  async request<R>(method: string, params: unknown, token?: CancellationToken): Promise<R> {
    const client = await this.ensureStarted();
    // vscode-jsonrpc reads a trailing undefined as one more positional param: pass a token only when there is one.
    return token ? client.sendRequest<R>(method, params, token) : client.sendRequest<R>(method, params);
  }

  /** sessionRequest sends a session request, loading a stored session once if the daemon has not. */
  async sessionRequest<R>(method: string, params: { sessionId: string }): Promise<R> {
    const client = await this.ensureStarted();
    try {
      return await client.sendRequest<R>(method, params);
    } catch (err) {
      if ((err as { code?: number }).code !== ErrorCodes.UnknownSession) throw err;
      await client.sendRequest<OpenSessionResult>(Methods.openSession, { sessionId: params.sessionId });
      return await client.sendRequest<R>(method, params);
    }
  }

  ensureStarted(): Promise<LanguageClient> {
    if (this.current?.isRunning()) return Promise.resolve(this.current);
    if (this.starting) return this.starting;
    if (!this.current) this.current = this.createClient();
    const client = this.current;
    this.starting = (async () => {
      try {
        await client.start();
        const info = client.initializeResult?.serverInfo;
        this.log.info(`connected to ${info?.name ?? 'server'} ${info?.version ?? ''}`.trim());
        for (const hook of this.startedHooks) await hook();
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
    const old = this.current;
    this.current = undefined;
    if (old) await old.dispose().catch((e: unknown) => this.log.warn(`stopping the server: ${String(e)}`));
    this.restartEmitter.fire();
    await this.start();
  }

  async dispose(): Promise<void> {
    const c = this.current;
    for (const d of this.disposables.splice(0)) d.dispose();
    if (c) await c.dispose().catch(() => undefined);
  }

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
          if (restart) this.reconnectEmitter.fire();
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
    for (const setup of this.setups) setup(client);
    client.onDidChangeState((e) => {
      if (e.newState === State.Stopped) this.stopEmitter.fire();
      if (e.newState === State.Running) this.runEmitter.fire(client);
    });
    return client;
  }
}
