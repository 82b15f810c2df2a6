// The derived index's SQLite file as one object: `IndexDb` keeps the connection, the state row,
// entries, evictions, tokens and flags, and delegates the rest to modules beside it (schema and
// opening checks, the fold batch writer, analyses, scan reads, dropping an entry), which share
// its prepared statements. Their types and helpers are re-exported so importers keep one path.
import Database from 'better-sqlite3';
import type { IndexEntry } from '../protocol/types.js';
import { AnalysisRows, type StoredAnalysis } from './index-analyses.js';
import { deflate, type PackBody, type StoredBody, unpack } from './index-body.js';
import { dropEntry } from './index-drop.js';
import { asRollbackImage } from './index-file-header.js';
import { type FoldRow, FoldWriter, type PendingAnalysis } from './index-fold-writer.js';
import { type DocDetail, type DocStats, IndexScanReader } from './index-scan-reader.js';
import { FIELD_RANKED, IndexUnusable, prepareIndexFile } from './index-schema.js';
import type { IndexState } from './index-state.js';
import { IndexStatements } from './index-statements.js';
import type { FlagCounts, NodeFlag } from './node-flag.js';

export type { StoredAnalysis } from './index-analyses.js';
export { isRollbackFile } from './index-file-header.js';
export { type FoldRow, referenceTerms } from './index-fold-writer.js';
export type { DocDetail, DocStats } from './index-scan-reader.js';
export {
  APPLICATION_ID,
  FIELD_RANKED,
  FIELD_REFERENCE,
  IndexUnusable,
  isUnusable,
  SCHEMA_VERSION,
} from './index-schema.js';
export { emptyState, type IndexState, type LoadProblem } from './index-state.js';

/**
 * One change other processes' caches must follow (`op`: 1 fold, 2 evict, 3 analysed). A drop
 * (rare: repair) bumps the epoch instead, so every cache starts over.
 */
export interface ChangeRow {
  seq: number;
  step: number;
  op: number;
}

/**
 * The SQLite file of the derived index (schema, statements, row-level operations). It knows
 * nothing of journals or locks: {@link LocalStore} decides what to apply and when. Opening checks
 * that the file is ours (application id, schema version, tables) and throws
 * {@link IndexUnusable} otherwise.
 */
export class IndexDb {
  readonly db: Database.Database;
  readonly path: string;
  /** The connection's statements: each prepared once, shared with the collaborators below. */
  readonly #s: IndexStatements;
  /** How bodies are stored: deflated BLOBs (an index file), or TEXT (`compress: false`). */
  readonly #pack: PackBody = deflate;
  readonly #analyses: AnalysisRows;
  readonly #writer: FoldWriter;
  readonly #scan: IndexScanReader;

  /**
   * Opens (or with `create`, creates) the index at `path`. With `bytes`, a private in-memory
   * copy of an index file is opened instead (`path` names it in messages): nothing is written
   * to the file system, not even SQLite's WAL files.
   */
  constructor(
    path: string,
    options: { create: boolean; bytes?: Buffer; readonly?: boolean; compress?: boolean },
  ) {
    this.path = path;
    if (options.compress === false) this.#pack = (text) => text;
    let db: Database.Database;
    try {
      db = options.bytes
        ? new Database(asRollbackImage(options.bytes))
        : new Database(path, {
            fileMustExist: !options.create,
            timeout: 10_000,
            readonly: options.readonly === true,
          });
    } catch (e) {
      throw new IndexUnusable(`cannot open ${path}: ${(e as Error).message}`, { cause: e });
    }
    this.db = db;
    this.#s = new IndexStatements(db);
    this.#analyses = new AnalysisRows(this.#s, this.#pack);
    this.#writer = new FoldWriter(this.#s, this.#pack, this.#analyses);
    this.#scan = new IndexScanReader(this.#s, path);
    try {
      prepareIndexFile(db, path, options.create);
      this.state(); // a first read: fails now on a file that is not a database
    } catch (e) {
      db.close();
      if (e instanceof IndexUnusable) throw e;
      throw new IndexUnusable(`${path} is not a usable index: ${(e as Error).message}`, {
        cause: e,
      });
    }
  }

  /** Runs `fn` in one write transaction (BEGIN IMMEDIATE). */
  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  /**
   * Closes, leaving the file in rollback-journal mode when this is its last connection (then a
   * read-only process can open it without creating `-wal`/`-shm` files beside it). With another
   * connection open anywhere the switch fails at once and the file stays in WAL mode; the next
   * writer to open it switches back to WAL.
   */
  closeAsRollback(): void {
    if (!this.db.open) return;
    try {
      this.db.pragma('busy_timeout = 0');
      this.db.pragma('journal_mode = DELETE');
    } catch {
      // Busy (another connection) or read-only: left as it is.
    }
    this.db.close();
  }

  // --- state ---

  state(): IndexState {
    const json = this.#s.get('state', 'SELECT json FROM state WHERE id = 1').pluck().get() as
      | string
      | undefined;
    if (json === undefined) throw new IndexUnusable(`${this.path} has no state row`);
    return JSON.parse(json) as IndexState;
  }

  setState(state: IndexState): void {
    this.#s.get('setState', 'UPDATE state SET json = ? WHERE id = 1').run(JSON.stringify(state));
  }

  /** Highest change sequence number (0 when none). */
  changeSeq(): number {
    return this.#s.get('seq', 'SELECT coalesce(max(seq), 0) FROM changes').pluck().get() as number;
  }

  /** Empties the change feed (call with an epoch bump: readers then start over). */
  clearChanges(): void {
    this.db.exec('DELETE FROM changes');
  }

  changesSince(seq: number, limit: number): ChangeRow[] {
    return this.#s
      .get('changes', 'SELECT seq, step, op FROM changes WHERE seq > ? ORDER BY seq LIMIT ?')
      .all(seq, limit) as ChangeRow[];
  }

  // --- bulk lifecycle ---

  /** Forgets every ranked posting (the analyzer changed): every entry becomes pending again. */
  dropRanked(): void {
    this.db.exec(
      `DELETE FROM postings WHERE term IN (SELECT id FROM terms WHERE field = ${FIELD_RANKED});
       DELETE FROM terms WHERE field = ${FIELD_RANKED};
       DELETE FROM docs;
       UPDATE entries SET analysed = 0 WHERE analysed = 1;`,
    );
  }

  // --- entries ---

  entryJson(step: number): string | undefined {
    const body = this.#s
      .get('entry', 'SELECT body FROM entries WHERE step = ?')
      .pluck()
      .get(step) as StoredBody | undefined;
    return body === undefined ? undefined : unpack(body);
  }

  /** Up to `limit` entries' JSON with step > `after`, in step order. */
  entriesAfter(after: number, limit: number): string[] {
    const sql = 'SELECT body FROM entries WHERE step > ? ORDER BY step LIMIT ?';
    return this.#s.bodies('page', sql, after, limit);
  }

  /** Up to `limit` entries' JSON from the `offset`-th on, in step order. */
  entriesAt(offset: number, limit: number): string[] {
    const sql = 'SELECT body FROM entries ORDER BY step LIMIT ? OFFSET ?';
    return this.#s.bodies('pageAt', sql, limit, offset);
  }

  /** Up to `limit` nodes after `key` in code-point order of their keys (for the snapshot). */
  nodesAfterKey(key: string, limit: number): { key: string; json: string }[] {
    const rows = this.#s
      .get(
        'byKey',
        'SELECT CAST(step AS TEXT), body FROM entries WHERE CAST(step AS TEXT) > ? ORDER BY CAST(step AS TEXT) LIMIT ?',
      )
      .raw()
      .all(key, limit) as [string, StoredBody][];
    return rows.map(([k, body]) => ({ key: k, json: unpack(body) }));
  }

  /** Entries whose ranked analysis is not applied yet, step > `after`, in step order. */
  pending(
    after: number,
    limit: number,
  ): { step: number; payload_sha256: string; summary: string }[] {
    return this.#s
      .get(
        'pending',
        'SELECT step, payload_sha256, summary FROM entries WHERE analysed = 0 AND step > ? ORDER BY step LIMIT ?',
      )
      .all(after, limit) as { step: number; payload_sha256: string; summary: string }[];
  }

  evictions(): { step_id: number; evicted_at: string }[] {
    return this.#s
      .get('evictions', 'SELECT step AS step_id, evicted_at FROM evictions ORDER BY seq')
      .all() as { step_id: number; evicted_at: string }[];
  }

  // --- writes (inside a transaction) ---

  /** Stores analyses by content address (existing ones are kept). */
  putAnalyses(list: readonly StoredAnalysis[]): void {
    this.#analyses.putAnalyses(list);
  }

  /** Stored analyses by key (missing keys absent). */
  analyses(akeys: readonly string[]): Map<string, StoredAnalysis> {
    return this.#analyses.analyses(akeys);
  }

  /**
   * Inserts entries with their reference postings, and their ranked statistics and postings
   * when the analysis is given; counts them into `state`. Steps must not be indexed yet.
   */
  insertFolds(rows: readonly FoldRow[], state: IndexState): void {
    this.#writer.insertFolds(rows, state);
  }

  /** Marks an entry evicted (its canonical JSON replaced) and logs the eviction. */
  evict(step: number, json: string, evictedAt: string, wasEvicted: boolean, state: IndexState) {
    this.#s
      .get('evict', 'UPDATE entries SET body = ?, evicted = 1 WHERE step = ?')
      .run(this.#pack(json), step);
    this.#s
      .get('logEvict', 'INSERT INTO evictions (step, evicted_at) VALUES (?, ?)')
      .run(step, evictedAt);
    if (!wasEvicted) state.evicted++;
    this.#writer.change(step, 2);
  }

  /** Appends eviction log rows without touching entries (loading `eviction_log.json`). */
  logEvictions(list: readonly { step_id: number; evicted_at: string }[]): void {
    const ins = this.#s.get('logEvict', 'INSERT INTO evictions (step, evicted_at) VALUES (?, ?)');
    for (const e of list) ins.run(e.step_id, e.evicted_at);
  }

  /**
   * Applies analyses to pending entries (those still without one and with the same payload and
   * summary: an entry replaced meanwhile is left alone). Returns how many were applied.
   */
  attachAnalyses(list: readonly PendingAnalysis[], state: IndexState): number {
    return this.#writer.attachAnalyses(list, state);
  }

  /** Token counts of payloads per tokenizer, by content (a count never changes: kept if present). */
  putTokens(list: readonly { payload_sha256: string; tokenizer: string; count: number }[]): void {
    const ins = this.#s.get(
      'putTokens',
      'INSERT OR IGNORE INTO tokens (payload_sha256, tokenizer, count) VALUES (?, ?, ?)',
    );
    for (const t of list) ins.run(t.payload_sha256, t.tokenizer, t.count);
  }

  /** A payload's token count under `tokenizer`, if one was stored. */
  tokens(payloadSha256: string, tokenizer: string): number | undefined {
    return this.#s
      .get('tokens', 'SELECT count FROM tokens WHERE payload_sha256 = ? AND tokenizer = ?')
      .pluck()
      .get(payloadSha256, tokenizer) as number | undefined;
  }

  /** Records nodes' `sanitized` flags (first write wins: a flag never changes under its hash). */
  putFlags(list: readonly NodeFlag[]): void {
    const ins = this.#s.get(
      'putFlags',
      'INSERT OR IGNORE INTO flags (artifact_sha256, sanitized) VALUES (?, ?)',
    );
    for (const f of list) ins.run(f.artifact_sha256, f.sanitized ? 1 : 0);
  }

  /** Entries by the recorded `sanitized` flag of their node: one pass in SQL, no row decoded. */
  flagCounts(): FlagCounts {
    const row = this.#s
      .get(
        'flagCounts',
        `SELECT count(*) AS entries, coalesce(sum(f.sanitized = 1), 0) AS sanitized,
              coalesce(sum(f.sanitized = 0), 0) AS unsanitized
         FROM entries e LEFT JOIN flags f ON f.artifact_sha256 = e.artifact_sha256`,
      )
      .get() as { entries: number; sanitized: number; unsanitized: number };
    return {
      sanitized: row.sanitized,
      unsanitized: row.unsanitized,
      unknown: row.entries - row.sanitized - row.unsanitized,
    };
  }

  /** Up to `limit` entries' JSON with step > `after` whose node has no recorded flag. */
  unflaggedAfter(after: number, limit: number): string[] {
    return this.#s.bodies(
      'unflagged',
      `SELECT e.body FROM entries e
        WHERE e.step > ? AND NOT EXISTS (SELECT 1 FROM flags f WHERE f.artifact_sha256 = e.artifact_sha256)
        ORDER BY e.step LIMIT ?`,
      after,
      limit,
    );
  }

  // --- postings ---

  /** Document frequency of a term in a field (0 when unknown). */
  df(field: number, term: string): number {
    return this.#scan.df(field, term);
  }

  /** Document frequencies of terms in a field, aligned with them (0 when unknown), in one query. */
  dfMany(field: number, terms: readonly string[]): number[] {
    return this.#scan.dfMany(field, terms);
  }

  /** Every step holding a term, ascending. */
  allPostings(field: number, term: string): number[] {
    return this.#scan.allPostings(field, term);
  }

  /**
   * The postings of a term, ascending: the `limit` most recent with their term frequencies, or
   * all of them (`limit` undefined; reference postings, whose frequency is always 1).
   */
  postingList(field: number, term: string, limit?: number): { steps: number[]; tfs: number[] } {
    return this.#scan.postingList(field, term, limit);
  }

  /** The `limit` highest steps holding a term with their term frequencies, ascending. */
  recentPostings(field: number, term: string, limit: number): { steps: number[]; tfs: number[] } {
    return this.#scan.recentPostings(field, term, limit);
  }

  /**
   * The `limit` most frequent terms of a field (ties in code-point order) that start with
   * `prefix`, are longer than it and have at most `maxLength` code points. SQLite sorts the
   * range: a prefix with 30,000 extensions costs one statement, not 30,000 lookups.
   */
  topTermsWithPrefix(field: number, prefix: string, maxLength: number, limit: number): string[] {
    return this.#scan.topTermsWithPrefix(field, prefix, maxLength, limit);
  }

  /** {@link topTermsWithPrefix} of each prefix with its `maxLength`, aligned with them. */
  topTermsWithPrefixMany(
    field: number,
    asks: readonly { prefix: string; maxLength: number }[],
    limit: number,
  ): string[][] {
    return this.#scan.topTermsWithPrefixMany(field, asks, limit);
  }

  /** Terms of a field that start with `prefix` and are longer than it. */
  termsWithPrefix(field: number, prefix: string): string[] {
    return this.#scan.termsWithPrefix(field, prefix);
  }

  /** Ranked statistics of the given steps (entries without an analysis are absent). */
  docs(steps: readonly number[]): DocStats[] {
    return this.#scan.docs(steps);
  }

  /** See `IndexScanReader.docDetails`. */
  docDetails(steps: readonly number[], tokenizer?: string): DocDetail[] {
    return this.#scan.docDetails(steps, tokenizer);
  }

  /** Largest analysed step (-1 when none). */
  lastDocStep(): number {
    return this.#scan.lastDocStep();
  }

  /**
   * Removes an indexed entry entirely (a journaled `drop`): its row, its reference and ranked
   * postings (frequencies follow; a term left without postings is removed), its ranked document
   * and its eviction log rows. `rankedTerms` are the terms of its analysis when it has one.
   */
  drop(step: number, rankedTerms: readonly string[] | undefined, state: IndexState): void {
    const json = this.entryJson(step);
    if (json === undefined) throw new Error(`step ${step} is not indexed`);
    const entry = JSON.parse(json) as IndexEntry;
    dropEntry(this.#s, this.path, step, entry, rankedTerms, state);
  }
}
