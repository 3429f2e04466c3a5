// "VT Code: Edit Compaction Prompt": the workspace's compaction prompt (vtcode/compactPrompt) as
// the `vtcode-prompt:` document. Reading the document gets the prompt, saving it sets it (an
// empty document resets it to the default).

import * as vscode from 'vscode';
import { errorText } from './display';
import { Methods, type PromptResult } from './protocol';

/** The scheme of the prompt document. */
export const PromptScheme = 'vtcode-prompt';

/** What the prompt document needs from the extension: vtcode/compactPrompt of the workspace. */
export interface PromptSource {
  prompt(action: 'get' | 'set' | 'reset', prompt?: string): Promise<PromptResult>;
}

/**
 * CompactionPrompt is the workspace's prompt over vtcode/compactPrompt, the `vtcode-prompt:`
 * file system and "VT Code: Edit Compaction Prompt".
 */
export class CompactionPrompt implements PromptSource, vscode.Disposable {
  private readonly disposables: vscode.Disposable[];

  constructor(private readonly host: { request<R>(method: string, params: unknown): Promise<R> }) {
    this.disposables = [
      vscode.commands.registerCommand('vtcode.editPrompt', () => editPrompt(this)),
      vscode.workspace.registerFileSystemProvider(PromptScheme, new PromptFileSystem(this), { isCaseSensitive: true }),
    ];
  }

  prompt(action: 'get' | 'set' | 'reset', prompt?: string): Promise<PromptResult> {
    const params: Record<string, unknown> = { action };
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (folder) params.workspace = folder.uri.fsPath;
    if (prompt !== undefined) params.prompt = prompt;
    return this.host.request<PromptResult>(Methods.compactPrompt, params);
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

/** editPrompt opens the prompt document, or offers to reset a customized prompt. */
export async function editPrompt(ext: PromptSource): Promise<void> {
  try {
    const prompt = await ext.prompt('get');
    if (!prompt.isDefault) {
      const pick = await vscode.window.showQuickPick(
        [
          { label: '$(edit) Edit the workspace compaction prompt', action: 'edit' },
          { label: '$(discard) Reset to the default prompt', action: 'reset' },
        ],
        { title: 'VT Code: Compaction Prompt (customized for this workspace)' },
      );
      if (!pick) return;
      if (pick.action === 'reset') {
        await ext.prompt('reset');
        void vscode.window.showInformationMessage('VT Code: the compaction prompt is the default again.');
        return;
      }
    }
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.from({ scheme: PromptScheme, path: '/compaction-prompt.md' }));
    await vscode.window.showTextDocument(doc, { preview: false });
    void vscode.window.setStatusBarMessage('VT Code: save the file to use this prompt for compactions in this workspace', 8000);
  } catch (err) {
    void vscode.window.showErrorMessage(errorText('VT Code: Compaction prompt', err));
  }
}

/** PromptFileSystem backs the `vtcode-prompt:` document: read = get, save = set. */
export class PromptFileSystem implements vscode.FileSystemProvider {
  private readonly emitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.emitter.event;
  private mtime = Date.now();
  private size = 0;

  constructor(private readonly ext: PromptSource) {}

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  async stat(): Promise<vscode.FileStat> {
    return { type: vscode.FileType.File, ctime: this.mtime, mtime: this.mtime, size: this.size };
  }

  async readFile(): Promise<Uint8Array> {
    const r = await this.ext.prompt('get');
    const bytes = new TextEncoder().encode(r.prompt);
    this.size = bytes.length;
    return bytes;
  }

  async writeFile(uri: vscode.Uri, content: Uint8Array): Promise<void> {
    const text = new TextDecoder().decode(content);
    const r = await this.ext.prompt(text.trim() ? 'set' : 'reset', text.trim() ? text : undefined);
    this.mtime = Date.now();
    this.size = content.length;
    this.emitter.fire([{ type: vscode.FileChangeType.Changed, uri }]);
    void vscode.window.showInformationMessage(
      r.isDefault ? 'VT Code: the compaction prompt is the default again.' : 'VT Code: compaction prompt saved for this workspace.',
    );
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }
  createDirectory(): void {
    throw vscode.FileSystemError.NoPermissions();
  }
  delete(): void {
    throw vscode.FileSystemError.NoPermissions();
  }
  rename(): void {
    throw vscode.FileSystemError.NoPermissions();
  }
}
