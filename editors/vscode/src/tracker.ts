// The active-session rule of docs/design.md §14, free of `vscode` so it is unit-tested with `node --test`:
// the active session is the workspace's most recently updated session unless the user picked one.
// "Updated" is observed through vtcode/tokenPressure notifications (sent after every append,
// prepare, compact, restore and policy change) and, at start, through the session that
// vtcode/listSessions marks active (the daemon decides which; the client compares no dates).

import { pressureView, type PressureView } from './display';
import type { SessionInfo, Stats, TokenPressure } from './protocol';

/** SessionTracker holds the active session and the last pressure seen per session. */
export class SessionTracker {
  private pinnedId: string | undefined;
  private currentId: string | undefined;
  private readonly views = new Map<string, PressureView>();
  private readonly listeners = new Set<(id: string | undefined) => void>();

  /** active is the id of the active session, or undefined when there is none. */
  get active(): string | undefined {
    return this.pinnedId ?? this.currentId;
  }

  /** pinned reports whether the user picked the active session. */
  get pinned(): boolean {
    return this.pinnedId !== undefined;
  }

  /** onDidChange registers a listener for changes of the active session id. */
  onDidChange(fn: (id: string | undefined) => void): { dispose(): void } {
    this.listeners.add(fn);
    return { dispose: () => this.listeners.delete(fn) };
  }

  private set(fn: () => void): boolean {
    const before = this.active;
    fn();
    const after = this.active;
    if (before !== after) {
      for (const l of [...this.listeners]) l(after);
      return true;
    }
    return false;
  }

  /** pin makes id the active session until unpinned; undefined returns to following the most recent. */
  pin(id: string | undefined): boolean {
    return this.set(() => {
      this.pinnedId = id;
    });
  }

  /**
   * pressure records a vtcode/tokenPressure notification. Unless the user picked a session, the
   * session it names becomes active (it is the most recently updated one). Returns true when the
   * active session's display changed.
   */
  pressure(p: TokenPressure): boolean {
    this.views.set(p.sessionId, pressureView(p));
    const changed = this.set(() => {
      this.currentId = p.sessionId;
    });
    return changed || this.active === p.sessionId;
  }

  /** stats records pressure carried by projection stats (after a stats request). */
  stats(s: Stats): boolean {
    this.views.set(s.sessionId, pressureView(s));
    return this.active === s.sessionId;
  }

  /**
   * sessions takes a vtcode/listSessions answer: when nothing is active yet and nothing is
   * pinned, the session the daemon marks active becomes active. Returns the newly active id.
   */
  sessions(list: readonly SessionInfo[]): string | undefined {
    if (this.active !== undefined) return undefined;
    const best = list.find((s) => s.active === true);
    if (!best) return undefined;
    this.set(() => {
      this.currentId = best.sessionId;
    });
    return best.sessionId;
  }

  /** opened notes that the client itself opened a session (it is now the most recently updated). */
  opened(id: string): void {
    this.set(() => {
      this.currentId = id;
    });
  }

  /** forget drops a closed or unknown session; an active one stops being active. */
  forget(id: string): void {
    this.views.delete(id);
    this.set(() => {
      if (this.pinnedId === id) this.pinnedId = undefined;
      if (this.currentId === id) this.currentId = undefined;
    });
  }

  /** reset forgets everything (server restarted). The pin is kept. */
  reset(): void {
    this.views.clear();
    this.set(() => {
      this.currentId = undefined;
    });
  }

  /** view is the last pressure seen for the active session, if any. */
  view(): PressureView | undefined {
    const id = this.active;
    return id === undefined ? undefined : this.views.get(id);
  }
}
