// "VT Code: Restore History…": the full history saved before a compaction (vtcode/listArtifacts,
// vtcode/restore), picked from a list or named by its artifact id; the context view's Restore
// buttons ask the same confirmation.

import * as vscode from 'vscode';
import { artifactPickItem, errorText } from './display';
import { type ArtifactInfo, Methods } from './protocol';

/** What restoring needs from the extension. */
export interface RestoreHost {
  request<R>(method: string, params: unknown): Promise<R>;
  requireSession(): string | undefined;
  /** The history changed: refresh stats and views. */
  changed(): void;
}

/** confirmRestore asks before restoring an artifact; true when the user agreed. */
export async function confirmRestore(a: ArtifactInfo): Promise<boolean> {
  const ok = await vscode.window.showWarningMessage(
    `Restore ${a.messages} messages from before the ${a.trigger} compaction? The current history stays recoverable.`,
    { modal: true },
    'Restore',
  );
  return ok === 'Restore';
}

export class RestoreHistory implements vscode.Disposable {
  private readonly command: vscode.Disposable;

  constructor(private readonly host: RestoreHost) {
    this.command = vscode.commands.registerCommand('vtcode.restore', (artifactId?: string) => this.restore(artifactId));
  }

  /** restore restores artifactId (asked for when not given) into the active session. */
  async restore(artifactId?: string): Promise<{ messages: number } | undefined> {
    const sessionId = this.host.requireSession();
    if (sessionId === undefined) return undefined;
    try {
      if (typeof artifactId !== 'string') {
        const artifacts = (await this.host.request<ArtifactInfo[] | null>(Methods.listArtifacts, { sessionId })) ?? [];
        if (artifacts.length === 0) {
          void vscode.window.showInformationMessage(`VT Code: session ${sessionId} has no compaction artifacts to restore.`);
          return undefined;
        }
        const sorted = [...artifacts].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
        const pick = await vscode.window.showQuickPick(
          sorted.map((a) => ({ ...artifactPickItem(a), artifact: a })),
          { title: 'VT Code: Restore History', placeHolder: 'The full history saved before a compaction', matchOnDetail: true },
        );
        if (!pick || !(await confirmRestore(pick.artifact))) return undefined;
        artifactId = pick.artifact.artifactId;
      }
      const result = await this.host.request<{ messages: number }>(Methods.restore, { sessionId, artifactId });
      void vscode.window.showInformationMessage(`VT Code: history restored (${result.messages} messages).`);
      this.host.changed();
      return result;
    } catch (err) {
      void vscode.window.showErrorMessage(errorText('VT Code: Restore failed', err));
      return undefined;
    }
  }

  dispose(): void {
    this.command.dispose();
  }
}
