import type { IndexEntry } from '../protocol/types.js';
import type { VerifiedNode } from './verify.js';

/** One line of a store's eviction log, in log order. */
export interface EvictionRecord {
  step_id: number;
  evicted_at: string;
}

/**
 * A store as a copy (`transferStore`: export, import-store) reads it: entries in step order and
 * the eviction log in order, a page at a time, and the nodes of a page loaded, then verified.
 * What a page asks is what is held: a backend that would otherwise build an index of the whole
 * store in memory (PostgreSQL's mirror) reads its tables directly instead.
 */
export interface CopySource {
  /** The entries the copy holds. */
  readonly total: number;
  /** Every entry in step order, at most `pageSize` to a page. */
  entryPages(pageSize: number): AsyncGenerator<IndexEntry[]>;
  /** The eviction log in order (a step evicted twice appears twice), a page at a time. */
  evictionPages(): AsyncGenerator<EvictionRecord[]>;
  /** The stored size in bytes of each step's node among `steps` (absent: no node). */
  nodeSizes(steps: readonly number[]): Promise<Map<number, number>>;
  /** Fetches the nodes of `steps` (only the last load is kept). */
  load(steps: readonly number[]): Promise<void>;
  /** A loaded node verified against its entry (throws the IPCF error of a failure). */
  verifyNode(entry: IndexEntry): VerifiedNode;
  /** Ends the read (a database snapshot is released). */
  close(): Promise<void>;
}
