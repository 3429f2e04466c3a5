// The messages between the extension and the "VT Code: Show Context" page, both ways: one
// discriminated union each, the contract of the host (contextPanel.ts, contextmap.ts) and of the
// page script (page/main.ts), both checked by tsc. Types only: nothing here runs.

import type { CategoryRow, ContextMap, PageChart } from '../contextmap';

/** A map to render, with everything computed on the extension side (contextmap.ts pageMessage). */
export interface MapMessage {
  type: 'map';
  map: ContextMap;
  rows: CategoryRow[];
  headline: string;
  chart: PageChart;
  /** The compaction threshold as a share of the window (0: none). */
  threshold: number;
  /** The receipt line ('' for none). */
  receipt: string;
}

/** The messages the extension posts to the page: a map to render, or a text for no active session. */
export type ToPage = MapMessage | { type: 'empty'; text: string };

/** The messages the page posts back: loaded, the two toolbar buttons, and Restore of an artifact. */
export type FromPage =
  | { type: 'ready' }
  | { type: 'refresh' }
  | { type: 'preview' }
  | { type: 'restore'; artifactId: string };
