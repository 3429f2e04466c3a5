// "VT Code: Preview Compaction": vtcode/compact with preview: true, the summary in an editor
// (a vtcode-preview: document), Apply commits it as edited (vtcode/compact {previewId, summary}),
// Discard drops it. Nothing changes on the server before Apply.

import * as vscode from 'vscode';
import { type CompactPreview, ContentModified, isNoOp, previewSummaryText } from './contextmap';
import { errorText, isCancelled } from './display';
import { type CompactResult, Methods } from './protocol';

export const PreviewScheme = 'vtcode-preview';

/** What the preview needs from the extension. */
export interface PreviewHost {
  request<R>(method: string, params: unknown, token?: vscode.CancellationToken): Promise<R>;
  requireSession(): string | undefined;
  compacted(): void; // a compaction was committed: refresh stats and views
  log: vscode.LogOutputChannel;
}

interface Pending {
  sessionId: string;
  preview: CompactPreview;
  uri: vscode.Uri;
}

/** PreviewDocuments holds the summaries under review, one document per preview. */
export class PreviewDocuments implements vscode.FileSystemProvider, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.emitter.event;
  private readonly files = new Map<string, { data: Uint8Array; mtime: number }>();
  private pending: Pending | undefined;
  private readonly disposables: vscode.Disposable[];

  constructor(private readonly host: PreviewHost) {
    this.disposables = [
      vscode.commands.registerCommand('vtcode.previewCompaction', () => this.preview()),
      vscode.commands.registerCommand('vtcode.applyPreview', (uri?: vscode.Uri) => this.apply(uri instanceof vscode.Uri ? uri : undefined)),
      vscode.commands.registerCommand('vtcode.discardPreview', (uri?: vscode.Uri) => this.discard(uri instanceof vscode.Uri ? uri : undefined)),
      vscode.workspace.registerFileSystemProvider(PreviewScheme, this, { isCaseSensitive: true }),
    ];
  }

  /** preview asks for a preview of the active session and opens its summary. */
  async preview(): Promise<CompactPreview | undefined> {
    const sessionId = this.host.requireSession();
    if (sessionId === undefined) return undefined;
    let p: CompactPreview;
    try {
      // The server reports progress ("Previewing compaction...", cancellable) on a token it creates.
      p = await this.host.request<CompactPreview>(Methods.compact, { sessionId, preview: true });
    } catch (err) {
      if (isCancelled(err)) void vscode.window.showInformationMessage('VT Code: compaction preview cancelled; nothing changed.');
      else void vscode.window.showErrorMessage(errorText('VT Code: Compaction preview failed', err));
      return undefined;
    }
    if (isNoOp(p) || !p.previewId) {
      void vscode.window.showInformationMessage(`VT Code: ${p.message}`);
      return p;
    }
    if (this.pending) {
      // the server keeps the newest preview only: close the older one's editor
      const old = this.pending;
      this.pending = undefined;
      await this.close(old.uri);
    }
    const uri = vscode.Uri.from({ scheme: PreviewScheme, path: `/${sessionId}/compaction-summary.md`, query: p.previewId });
    this.files.set(uri.toString(), { data: new TextEncoder().encode(p.summary), mtime: Date.now() });
    this.pending = { sessionId, preview: p, uri };
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: false });
    this.host.log.info(`compaction preview ${p.previewId} of ${sessionId}: ${p.message}`);
    void vscode.window.showInformationMessage(previewSummaryText(p), 'Apply', 'Discard').then((a) => {
      if (a === 'Apply') void this.apply(uri);
      if (a === 'Discard') void this.discard(uri);
    });
    return p;
  }

  /** apply commits the pending preview with the summary as the editor holds it. */
  async apply(uri?: vscode.Uri): Promise<CompactResult | undefined> {
    const pending = this.pendingFor(uri);
    if (!pending) {
      void vscode.window.showWarningMessage('VT Code: no compaction preview to apply; run "VT Code: Preview Compaction" first.');
      return undefined;
    }
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === pending.uri.toString());
    const text = doc ? doc.getText() : new TextDecoder().decode(this.files.get(pending.uri.toString())?.data ?? new Uint8Array());
    const params: Record<string, unknown> = { sessionId: pending.sessionId, previewId: pending.preview.previewId };
    if (pending.preview.editable) params.summary = text;
    try {
      const r = await this.host.request<CompactResult>(Methods.compact, params);
      this.pending = undefined;
      await this.close(pending.uri);
      this.host.log.info(`compacted ${pending.sessionId} from preview ${pending.preview.previewId}: ${r.message}`);
      void vscode.window.showInformationMessage(r.message);
      this.host.compacted();
      return r;
    } catch (err) {
      if ((err as { code?: number }).code === ContentModified) {
        this.pending = undefined;
        await this.close(pending.uri);
        void vscode.window
          .showWarningMessage('VT Code: the history changed since the preview; nothing was compacted.', 'Preview Again')
          .then((a) => a && void this.preview());
      } else {
        const msg = errorText('VT Code: Applying the compaction failed', err);
        this.host.log.error(msg);
        void vscode.window.showErrorMessage(msg);
      }
      return undefined;
    }
  }

  /** discard drops the pending preview; the history stays as it is. */
  async discard(uri?: vscode.Uri): Promise<boolean> {
    const pending = this.pendingFor(uri);
    if (!pending) return false;
    this.pending = undefined;
    await this.close(pending.uri);
    void vscode.window.showInformationMessage('VT Code: compaction preview discarded; the history is unchanged.');
    return true;
  }

  private pendingFor(uri?: vscode.Uri): Pending | undefined {
    const p = this.pending;
    if (!p) return undefined;
    const active = uri ?? vscode.window.activeTextEditor?.document.uri;
    if (active && active.scheme === PreviewScheme && active.toString() !== p.uri.toString()) return undefined;
    return p;
  }

  private drop(uri: vscode.Uri): void {
    this.files.delete(uri.toString());
  }

  /** close reverts and closes the preview's editors, then forgets the document. */
  private async close(uri: vscode.Uri): Promise<void> {
    for (const group of vscode.window.tabGroups.all) {
      for (const tab of group.tabs) {
        const input = tab.input as { uri?: vscode.Uri } | undefined;
        if (input?.uri?.toString() === uri.toString()) {
          const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
          if (doc?.isDirty) {
            await vscode.window.showTextDocument(doc, { viewColumn: group.viewColumn, preserveFocus: false });
            await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
          } else {
            await vscode.window.tabGroups.close(tab, true);
          }
        }
      }
    }
    this.drop(uri);
  }

  // ---- FileSystemProvider: the summaries, in memory; saving keeps the edit for Apply --------

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }
  stat(uri: vscode.Uri): vscode.FileStat {
    const f = this.files.get(uri.toString());
    if (!f) throw vscode.FileSystemError.FileNotFound(uri);
    return { type: vscode.FileType.File, ctime: f.mtime, mtime: f.mtime, size: f.data.length };
  }
  readFile(uri: vscode.Uri): Uint8Array {
    const f = this.files.get(uri.toString());
    if (!f) throw vscode.FileSystemError.FileNotFound(uri);
    return f.data;
  }
  writeFile(uri: vscode.Uri, content: Uint8Array): void {
    // A save after the preview was applied or discarded is kept harmlessly until the window closes.
    this.files.set(uri.toString(), { data: content, mtime: Date.now() });
    this.emitter.fire([{ type: vscode.FileChangeType.Changed, uri }]);
    void vscode.window.setStatusBarMessage('VT Code: summary saved; run "VT Code: Apply Compaction Preview" to commit it', 6000);
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

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
    this.emitter.dispose();
  }
}
