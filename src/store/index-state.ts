// What the derived index records about itself (its one `state` row): how far it reflects the
// durable files and the collection counters. Apart from the SQLite file so that the loader, the
// generation and a database store's mirror can reason about it without the statements.
import type { FileIdentity } from './file-identity.js';

/** A state problem found while loading: the store refuses to serve until it is resolved. */
export interface LoadProblem {
  kind: 'index' | 'journal';
  path: string;
  message: string;
  /** The journal's last line has no newline (an interrupted append), and nothing else is wrong. */
  torn?: true;
}

/**
 * Everything the index derived and how far: the durable files it reflects (identities, snapshot
 * hash, journal offset) and the collection counters. One JSON row, read on every refresh.
 */
export interface IndexState {
  /** A build finished: the rows reflect `snapshot` + `journal` up to `journalOffset`. */
  complete: boolean;
  snapshot: FileIdentity | null;
  snapshotSha256: string | null;
  /** The snapshot's content was hashed after its racy window: identity alone now proves it. */
  snapshotVerified: boolean;
  evictionLog: FileIdentity | null;
  journal: FileIdentity | null;
  journalOffset: number;
  journalLines: number;
  journalRecords: number;
  /** The journal's base names an older snapshot (a compaction died before removing it). */
  journalStale: boolean;
  createdAt: string | null;
  /** Version of the analyzer whose analyses `entries.akey` refer to. */
  analyzer: string | null;
  /** Bumped by every rebuild: caches of other processes drop everything. */
  epoch: number;
  entries: number;
  evicted: number;
  tokenEstimate: number;
  rankedDocs: number;
  rankedLength: number;
  /** Scoring parts (blocks) of the analysed documents and the sum of their lengths. */
  rankedParts: number;
  rankedPartLength: number;
  /** Next term id to assign. */
  nextTermId: number;
  /** Why the durable state cannot be served (as of the identities above), or null. */
  problem: LoadProblem | null;
}

/** A fresh state: nothing derived yet. */
export function emptyState(analyzer: string | null): IndexState {
  return {
    complete: false,
    snapshot: null,
    snapshotSha256: null,
    snapshotVerified: false,
    evictionLog: null,
    journal: null,
    journalOffset: 0,
    journalLines: 0,
    journalRecords: 0,
    journalStale: false,
    createdAt: null,
    analyzer,
    epoch: 0,
    entries: 0,
    evicted: 0,
    tokenEstimate: 0,
    rankedDocs: 0,
    rankedLength: 0,
    rankedParts: 0,
    rankedPartLength: 0,
    nextTermId: 1,
    problem: null,
  };
}
