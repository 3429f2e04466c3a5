// Which vtcode-ls the extension runs, free of `vscode` so it is unit-tested with `node --test`:
// an explicit `vtcode.serverPath` wins; otherwise the daemon bundled in a platform-specific
// package (server/vtcode-ls[.exe], see scripts/package-targets.sh); otherwise `vtcode-ls` on PATH.

import * as path from 'node:path';

/** The platforms a .vsix is built for, as `vsce package --target` names them, with Go's names. */
export const VsixTargets: Record<string, { goos: string; goarch: string }> = {
  'linux-x64': { goos: 'linux', goarch: 'amd64' },
  'linux-arm64': { goos: 'linux', goarch: 'arm64' },
  'darwin-x64': { goos: 'darwin', goarch: 'amd64' },
  'darwin-arm64': { goos: 'darwin', goarch: 'arm64' },
  'win32-x64': { goos: 'windows', goarch: 'amd64' },
};

/** bundledServer is where a platform-specific package keeps the daemon. */
export function bundledServer(extensionPath: string, platform: string = process.platform): string {
  return path.join(extensionPath, 'server', platform === 'win32' ? 'vtcode-ls.exe' : 'vtcode-ls');
}

export interface ServerChoice {
  command: string;
  /** bundled: the binary shipped inside the extension. */
  source: 'setting' | 'bundled' | 'path';
}

/**
 * resolveServer picks the daemon. configured is the user's explicit `vtcode.serverPath` (undefined
 * when only the default applies): `~/` is expanded and a relative path with a slash is resolved
 * against the first workspace folder. exists tells whether a file exists.
 */
export function resolveServer(opts: {
  configured: string | undefined;
  extensionPath: string;
  platform?: string;
  home?: string;
  folder?: string;
  exists: (p: string) => boolean;
}): ServerChoice {
  let command = (opts.configured ?? '').trim();
  if (command) {
    if (command.startsWith('~/')) command = path.join(opts.home ?? '', command.slice(2));
    if (!path.isAbsolute(command) && command.includes('/') && opts.folder) command = path.join(opts.folder, command);
    return { command, source: 'setting' };
  }
  const bundled = bundledServer(opts.extensionPath, opts.platform);
  if (opts.exists(bundled)) return { command: bundled, source: 'bundled' };
  return { command: 'vtcode-ls', source: 'path' };
}

/**
 * machineSetting is the value of a machine-scoped setting from what `inspect` reports: the user's
 * (or, in a remote window, the remote machine's) value only. A workspace or folder value is never
 * used, so a repository's `.vscode/settings.json` cannot choose the binary or its arguments, even
 * where VS Code itself would report one.
 */
export function machineSetting<T>(i: { globalValue?: T; workspaceValue?: T; workspaceFolderValue?: T } | undefined): T | undefined {
  return i?.globalValue;
}

/**
 * Reconnects is the policy for a connection to vtcode-ls that closed without the extension asking
 * (the shared daemon was killed, the forwarder exited 1): restart at once, at most `max` times in
 * `windowMs`, telling the user once per outage, not once per failed request. `closed` returns
 * whether to restart and the one message to show ('' for none).
 */
export class Reconnects {
  private times: number[] = [];
  private lastNotice = -Infinity;

  constructor(
    readonly max = 5,
    readonly windowMs = 3 * 60 * 1000,
  ) {}

  closed(now: number): { restart: boolean; message: string } {
    this.times = this.times.filter((t) => now - t < this.windowMs);
    this.times.push(now);
    if (this.times.length > this.max) {
      this.times = [];
      this.lastNotice = -Infinity;
      return {
        restart: false,
        message: `VT Code: vtcode-ls stopped ${this.max + 1} times in ${Math.round(this.windowMs / 60000)} minutes and is not restarted again; see the output, then run "VT Code: Restart Server".`,
      };
    }
    // One message per outage: the restarts that follow within the window say nothing more.
    const first = now - this.lastNotice >= this.windowMs;
    this.lastNotice = now;
    return {
      restart: true,
      message: first ? 'VT Code: the connection to vtcode-ls was lost (the shared daemon stopped); reconnecting. Sessions resume from disk.' : '',
    };
  }
}
