import type { ColdNode, IndexEntry } from '../protocol/types.js';
import type { NodeAnalysisRecord } from './analysis-record.js';
import type { CopySource } from './copy-source.js';
import type { DocDetail, DocStats } from './index-db.js';
import type { LoadProblem } from './index-loader.js';
import type { FlagCounts, NodeFlag } from './node-flag.js';
import type { RecordsRead } from './records-head.js';
import type { RecordsMark } from './records-mark.js';
import type { VerifiedNode } from './verify.js';

export type { LoadProblem } from './index-loader.js';

/**
 * A posting field: `reference` holds the terms RGSC and recall match (identifiers, folded files
 * and errors of each entry); `ranked` holds the retrieval keys of each node's analysis.
 */
export type PostingField = 'reference' | 'ranked';

/** Posting lists of one term: steps ascending, with their term frequencies. */
export interface PostingList {
  steps: number[];
  tfs: number[];
}

/** Counters of the whole index (as of the last sync). */
export interface IndexStats {
  entries: number;
  evicted: number;
  /** Sum of the entries' `token_estimate`. */
  tokenEstimate: number;
  /** Records appended since the last compaction (they are not in `recall_index.json` yet). */
  journalRecords: number;
}

/** Collection statistics of a field for BM25: analysed documents and their summed lengths. */
export interface FieldStats {
  docs: number;
  totalLength: number;
  /** Ranked field: scoring parts (blocks) of the documents and their summed length (else 0). */
  parts: number;
  partLength: number;
  /** Ranked field: the largest analysed step (-1 when none, and for the reference field). */
  lastStep: number;
}

export type { NodeAnalysisRecord } from './analysis-record.js';
export type { FlagCounts, NodeFlag } from './node-flag.js';

export type { DocDetail, DocStats };

/** A node whose analysis is not in the index yet. */
export interface PendingNode {
  step: number;
  payload_sha256: string;
  summary: string;
}

/** A fold to commit: the entry, and what the engine derived from the content in hand. */
export interface CommitRow {
  entry: IndexEntry;
  analysis?: NodeAnalysisRecord;
  tokens?: { tokenizer: string; count: number };
  /** The node's `sanitized` flag, as written (kept by artifact hash for status counts). */
  sanitized?: boolean;
}

/** Operations available while holding the write lock (see {@link IndexBackend.write}). */
export interface WriteSession {
  /** The entry of a step as of now (under the lock), if indexed. */
  get(step: number): IndexEntry | undefined;
  /** True if a node exists for the step in storage (indexed or not). */
  nodeExists(step: number): boolean;
  /** Writes node bytes durably (before {@link commit} refers to them). */
  writeNodes(nodes: readonly ColdNode[]): Promise<void>;
  /** Makes folds durable and visible: the commit point of a fold. */
  commit(rows: readonly CommitRow[]): Promise<void>;
  /** Records an eviction. */
  evict(step: number, evictedAt: string): Promise<void>;
  /** Removes an indexed entry (repair: its node is gone or untrustworthy), with the reason. */
  drop(step: number, droppedAt: string, reason: string): Promise<void>;
}

/** How the derived index relates to the durable state (for status and validate). */
export interface IndexCheck {
  /** The backend's index file (or a description of where the index lives). */
  path: string;
  /** `fresh`: reflects the durable state; `stale`: it does not (rebuilt on next sync). */
  state: 'fresh' | 'stale' | 'absent';
  /** What disagrees, for `stale`. */
  message?: string;
  entries: number;
  /** Nodes whose ranked analysis is not in the index yet. */
  pending: number;
}

/**
 * What the store had to do on its own, for warnings: rebuild the derived index, keep it in
 * memory, move an interrupted append's torn journal tail into `quarantine/`, or leave the
 * journal uncompacted after a fold (the compaction failed; the fold stands), or wait long for
 * another process's write lock.
 */
export interface IndexWarning {
  code:
    | 'INDEX_REBUILT'
    | 'INDEX_IN_MEMORY'
    | 'JOURNAL_TAIL_QUARANTINED'
    | 'DERIVE_WORKERS_FAILED'
    | 'COMPACTION_FAILED'
    | 'LOCK_WAIT'
    | 'DEAD_BUILD_FILE';
  message: string;
  path: string;
}

/**
 * Thrown by a synchronous node read of a backend that fetches nodes asynchronously (a database)
 * when the node was not {@link IndexBackend.load}ed first. Not a contextfold error: the engine
 * catches it, loads the node and runs the operation again.
 */
export class NodeNotLoadedError extends Error {
  readonly step: number;
  constructor(step: number) {
    super(`step ${step} was read before it was loaded`);
    this.name = 'NodeNotLoadedError';
    this.step = step;
  }
}

/**
 * What the engine needs from a store: entries, postings, statistics, analyses and token counts
 * (all derived, rebuildable), node storage, and serialised writes. Verification, hashing and
 * error codes stay above it: a backend returns bytes and rows, the engine checks them.
 *
 * Reads reflect the state as of the last {@link sync}; every engine operation syncs first.
 */
export interface IndexBackend {
  /** Brings the index up to date with the durable state (catching up, or rebuilding). */
  sync(): Promise<void>;
  /**
   * Names the index as of the last sync: it changes whenever something derived may have been
   * replaced (a rebuild, a re-analysis), so callers can key their own caches on it.
   */
  readonly generation: string;
  /**
   * Optional: names what every read answers as of the last sync (the generation and the
   * position in its change feed). Equal values, equal answers, so callers may keep what they
   * derived from reads while it is unchanged; undefined when the backend cannot tell.
   */
  readonly readVersion?: string | undefined;
  /** The state problem, if the durable state is inconsistent. */
  readonly loadProblem: LoadProblem | null;
  /** Throws the load problem as an integrity error naming the path. */
  assertConsistent(): void;

  stats(): IndexStats;
  get(step: number): IndexEntry | undefined;
  /**
   * Up to `limit` entries in step order: those with step > `after`, or (with `offset`) from the
   * `offset`-th entry on.
   */
  page(options: { after?: number; offset?: number; limit: number }): IndexEntry[];

  /** Document frequency of a term. */
  df(field: PostingField, term: string): number;
  /**
   * Optional: the document frequencies of many terms, aligned with them (what `df` answers for
   * each), read together rather than one query each.
   */
  dfMany?(field: PostingField, terms: readonly string[]): number[];
  /** The postings of a term, ascending; with `limit`, only the highest `limit` steps. */
  postings(field: PostingField, term: string, limit?: number): PostingList;
  /** Terms of a field that extend `prefix` (longer, same start), in code-point order. */
  termsWithPrefix(field: PostingField, prefix: string): string[];
  /**
   * The `limit` most frequent terms that extend `prefix` with at most `maxLength` code points in
   * all, most frequent first (ties in code-point order).
   */
  topTermsWithPrefix(
    field: PostingField,
    prefix: string,
    maxLength: number,
    limit: number,
  ): string[];
  /**
   * Optional: {@link topTermsWithPrefix} of many prefixes, aligned with them, read together (a
   * pasted log asks thousands; the cache is checked once, not once each).
   */
  topTermsWithPrefixMany?(
    field: PostingField,
    asks: readonly { prefix: string; maxLength: number }[],
    limit: number,
  ): string[][];
  fieldStats(field: PostingField): FieldStats;
  /** Ranked statistics of analysed nodes among `steps` (others are absent). */
  docStats(steps: readonly number[]): DocStats[];
  /**
   * The analyses and token keys of the analysed nodes among `steps` (others are absent), read
   * when a scan scores them in full; with `tokenizer`, their stored token counts under it.
   */
  docDetails(steps: readonly number[], tokenizer?: string): DocDetail[];

  /** The eviction log in order (what `eviction_log.json` holds). */
  evictions(): { step_id: number; evicted_at: string }[];
  /** Nodes without an analysis, step > `after`, in step order. */
  pending(after: number, limit: number): PendingNode[];
  pendingCount(): number;
  /** Stores analyses computed from verified content and applies them (best effort). */
  attachAnalyses(list: readonly (PendingNode & { analysis: NodeAnalysisRecord })[]): void;

  tokens(payloadSha256: string, tokenizer: string): number | undefined;
  /** Stores token counts computed from verified content (best effort). */
  putTokens(list: readonly { payload_sha256: string; tokenizer: string; count: number }[]): void;

  /** Entries by their node's recorded `sanitized` flag, counted without reading any node. */
  flagCounts(): FlagCounts;
  /** Up to `limit` entries with step > `after` whose node's flag is not recorded, in step order. */
  unflagged(after: number, limit: number): IndexEntry[];
  /** Records flags read from nodes (best effort; a read-only store keeps them in memory only). */
  putFlags(list: readonly NodeFlag[]): void;

  /** Where the store lives, for messages: its directory, or its database URL with `store_id`. */
  readonly location: string;
  /** True when the store holds anything (folded, imported or recorded). */
  exists(): Promise<boolean>;
  /** The `file_path` an index entry records for a step. */
  entryFilePath(step: number): string;
  /** Where a step's node lives, for messages (a file path, or a database address). */
  nodePath(step: number): string;
  /** The path of a node stored without an index entry (an interrupted fold), or null. */
  orphanPath(step: number): string | null;
  /**
   * Fetches the nodes of `steps` so that {@link verifyNode} and {@link readNodeText} can read
   * them synchronously (a database backend: fresh from the database, verified on every use; the
   * local store reads files directly and does nothing here).
   */
  load(steps: readonly number[]): Promise<void>;
  /**
   * The stored size in bytes of each step's node among `steps` (absent: nothing stored), read
   * without fetching the nodes: what a copy pages by, so a page of large nodes stays within a
   * byte budget. A hint only: nothing is trusted before {@link verifyNode}.
   */
  nodeSizes(steps: readonly number[]): Promise<Map<number, number>>;
  /** Reads a node and verifies it against its entry (throws the IPCF error of a failure). */
  verifyNode(entry: IndexEntry): VerifiedNode;
  /** A node's stored text, unverified (for a person's check of which hash broke), or null. */
  readNodeText(entry: IndexEntry): string | null;
  /** Nodes present in storage by step, and anything else found there. */
  listNodes(): Promise<{ steps: Map<number, string>; stray: string[] }>;

  /** Runs `fn` holding the store's write lock, synced. Writers are serialised. */
  write<T>(fn: (session: WriteSession) => Promise<T> | T): Promise<T>;
  /** Writes the reference index file and ends the journal. Returns the records compacted. */
  compact(): Promise<number>;
  /** Rebuilds the derived index from the durable state. */
  reindex(): Promise<void>;
  /**
   * The store read for a copy straight from its durable state, without the derived index (a
   * database store's mirror of every entry and posting, which grows with the store). Absent:
   * the copy reads through the synced index. Call before any read.
   */
  copySource?(): Promise<CopySource>;
  /** Compares the derived index with the durable state, fully (for validate). */
  checkIndex(): Promise<IndexCheck>;
  /**
   * Appends newline-terminated lines (a session's events: `kind` 'events') durably, in one
   * write. The local store appends to `<kind>.jsonl` in its directory.
   */
  appendRecords(kind: string, text: string, after?: RecordsMark): Promise<void>;
  /** Every line of a kind in append order as one text, and where it lives (for messages). */
  readRecords(kind: string): Promise<RecordsRead>;
  /**
   * Reports derived content the caller found damaged (e.g. an analysis that does not decode):
   * the index is rebuilt from the durable state on the next sync, nothing carried over. Throws
   * the error a read retries on.
   */
  reportBroken(reason: string): never;
  close(): void | Promise<void>;
}
