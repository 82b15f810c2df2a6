import { StoreNotFoundError, UsageError } from '../../protocol/errors.js';
import { IntegrityCheckError } from '../../protocol/ipcf-errors.js';
import { isoSeconds } from '../../protocol/time.js';
import type { IndexEntry } from '../../protocol/types.js';
import type { CopySource } from '../copy-source.js';
import { fieldStatsOf } from '../field-stats.js';
import type {
  DocDetail,
  DocStats,
  FieldStats,
  IndexBackend,
  IndexCheck,
  IndexStats,
  IndexWarning,
  NodeAnalysisRecord,
  PendingNode,
  PostingField,
  PostingList,
  WriteSession,
} from '../index-backend.js';
import { FIELD_RANKED, FIELD_REFERENCE } from '../index-db.js';
import type { AnalysisKeyOf, LoadProblem } from '../index-loader.js';
import { nodeFileName } from '../layout.js';
import { IndexBrokenError } from '../local-store.js';
import type { FlagCounts, NodeFlag } from '../node-flag.js';
import type { RecordsRead } from '../records-head.js';
import type { RecordsMark } from '../records-mark.js';
import { SerialQueue } from '../serial-queue.js';
import type { VerifiedNode } from '../verify.js';
import { discardAnalyses, storeAnalyses } from './pg-analyses.js';
import { mirrorProblem } from './pg-check.js';
import { PgConnections } from './pg-connections.js';
import { PgCopySource } from './pg-copy-source.js';
import { storeError } from './pg-errors.js';
import type { Mirror } from './pg-feed.js';
import { PgMirror } from './pg-mirror.js';
import { PgNodes, verifyStoredNode } from './pg-nodes.js';
import { PgRecords } from './pg-records.js';
import { type PgLocation, parsePgUrl } from './pg-url.js';
import {
  feedVerbatim,
  insertVerbatimEntries,
  insertVerbatimNodes,
  readVerbatimRows,
  recreateStoreRow,
} from './pg-verbatim.js';
import { type SessionContext, writeSession } from './pg-write-session.js';
import { insertFlags, insertTokens, lockKey } from './pg-write-sql.js';

/** Options of {@link PgStore}. */
export interface PgStoreOptions {
  /** `postgres://user@host:port/db?store_id=NAME`. */
  url: string;
  /** How long a writer waits for the store's lock (another writer's transaction). */
  lockTimeoutMs: number;
  /** Longest a single statement may run (server-side `statement_timeout`). Default 60 s. */
  statementTimeoutMs?: number;
  /** Connections in this process's pool. Default 4. */
  poolSize?: number;
  clock: () => Date;
  analyzer?: { version: string; keyOf: AnalysisKeyOf };
  readOnly?: boolean;
  /** Called when the mirror is rebuilt (a damaged analysis was reported). */
  onWarning?: (warning: IndexWarning) => void;
}

const FIELDS: Record<PostingField, number> = { reference: FIELD_REFERENCE, ranked: FIELD_RANKED };
/** The directory name entries record in `file_path` (what `export` writes next to). */
const PG_STORE_DIR = '.contextfold';

/**
 * A store in PostgreSQL: node bytes with their hashes, entries, analyses (ranked postings in
 * forward form), token counts, the eviction log and a change feed, all keyed by `store_id`.
 *
 * Reads are synchronous in {@link IndexBackend}, `pg` is not: each process keeps a mirror (an
 * in-memory SQLite index of the same shape as the local store's) that {@link sync} brings up to
 * date by pulling the change feed, and answers postings, statistics and entries from it. A
 * write takes the store's advisory lock in one transaction, catches the mirror up under it
 * (so conflicts are decided on the current state), writes nodes, entries and feed rows, and
 * commits: a fold is all or nothing, and there are no orphans. Node bytes are fetched by
 * {@link load} and re-hashed on every {@link verifyNode}.
 *
 * @example
 * const store = new PgStore({ url: 'postgres://cf@127.0.0.1/cf?store_id=web', lockTimeoutMs: 30_000, clock: () => new Date() });
 * await store.sync();
 */
export class PgStore implements IndexBackend {
  /** A store in a PostgreSQL database. */
  readonly kind = 'postgres' as const;
  readonly where: PgLocation;
  readonly #opts: PgStoreOptions;
  readonly #connections: PgConnections;
  readonly #lockKey: string;
  /** The mirror and how it follows the feed. */
  readonly #follower: PgMirror;
  readonly #queue = new SerialQueue();
  #closed = false;
  readonly #nodes: PgNodes;
  readonly #records: PgRecords;
  /** Why derived content was reported damaged: the next sync rebuilds it (see reportBroken). */
  #broken: string | null = null;

  constructor(options: PgStoreOptions) {
    this.#opts = options;
    this.where = parsePgUrl(options.url);
    this.#lockKey = lockKey(this.where.storeId);
    this.#connections = new PgConnections(this.where, options);
    this.#follower = new PgMirror(this.where.storeId, this.where.display, options.analyzer);
    this.#nodes = new PgNodes(this.#connections, this.where.storeId);
    this.#records = new PgRecords(this.#connections, this.where, options.clock);
  }

  // --- state ---

  get location(): string {
    return this.where.display;
  }

  /** Where the index lives: the database (each process keeps an in-memory mirror of it). */
  get indexPath(): string {
    return this.where.display;
  }

  get generation(): string {
    return `pg:${this.where.storeId}#${this.#mirror.epoch}`;
  }

  /** See {@link IndexBackend.readVersion}: the mirror's place in the store's feed. */
  get readVersion(): string {
    return `${this.generation}:${this.#mirror.seq}`;
  }

  /** A missing or malformed entry row the mirror left out (see `PgMirror`), else null. */
  get loadProblem(): LoadProblem | null {
    return this.#mirror.state.problem;
  }

  /** Refuses to answer from a mirror that left an entry row out, as a local store does. */
  assertConsistent(): void {
    const p = this.loadProblem;
    if (p) {
      throw new IntegrityCheckError(`${p.message} (run 'contextfold validate')`, { path: p.path });
    }
  }

  entryFilePath(step: number): string {
    return `${PG_STORE_DIR}/cold_nodes/${nodeFileName(step)}`;
  }

  nodePath(step: number): string {
    return `${this.where.display}#cold_nodes/${nodeFileName(step)}`;
  }

  /**
   * A node row without an entry (never written so by the engine, whose folds commit both
   * together; a row inserted behind its back). Needs the step {@link load}ed.
   */
  orphanPath(step: number): string | null {
    if (this.get(step)) return null;
    return this.#nodes.bytes(step) === null ? null : this.nodePath(step);
  }

  /** The mirror now (replaced when the follower resets it). */
  get #mirror(): Mirror {
    return this.#follower.current;
  }

  #assertOpen(): void {
    if (this.#closed) throw new UsageError('this store is closed; open it again');
  }

  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.#queue.run(fn);
  }

  /** True when the database holds this store (anything folded, imported or recorded). */
  async exists(): Promise<boolean> {
    this.#assertOpen();
    return this.#connections.withClient('opening the store', async (c) => {
      const r = await c.query('SELECT 1 FROM cf_stores WHERE store_id = $1', [this.where.storeId]);
      return r.rowCount === 1;
    });
  }

  /** Refuses a store that is not in the database (readers: a mistyped store_id). */
  async assertExists(): Promise<void> {
    if (!(await this.exists())) {
      throw new StoreNotFoundError(
        `no store '${this.where.storeId}' in the database: nothing has been folded or imported there (${this.location})`,
        { path: this.location },
      );
    }
  }

  // --- following the feed ---

  /** Brings the mirror up to date with the database (pulls the change feed). */
  async sync(): Promise<void> {
    this.#assertOpen();
    await this.#exclusive(async () => {
      await this.#connections.background;
      if (this.#broken !== null) await this.#rebuildDerived(this.#broken);
      await this.#connections.withClient('reading the store', (c) => this.#follower.follow(c));
    });
  }

  /**
   * Derived content was found damaged: the stored analyses are discarded (every node is
   * analysed again from its verified bytes), the epoch bumped so every process's mirror starts
   * over, and this mirror re-read. Read-only: only this mirror ignores the stored analyses.
   */
  async #rebuildDerived(reason: string): Promise<void> {
    this.#broken = null;
    if (this.#opts.readOnly) this.#follower.ignoreAnalyses = true;
    else {
      await this.#connections.withClient('rebuilding the index', (c) =>
        discardAnalyses(c, this.where.storeId, this.#lockKey),
      );
    }
    this.#follower.reset(-1);
    this.#opts.onWarning?.({
      code: 'INDEX_REBUILT',
      message: `${this.location}: the index was rebuilt (${reason})`,
      path: this.location,
    });
  }

  /**
   * Derived content the caller found damaged: rebuilt from the database's entries and node
   * bytes on the next sync, stored analyses not carried over. Throws the error a read retries on.
   */
  reportBroken(reason: string): never {
    this.#broken = reason;
    throw new IndexBrokenError(`${this.location}: the index is damaged (${reason})`);
  }

  // --- reads (the mirror) ---

  stats(): IndexStats {
    const s = this.#mirror.state;
    return {
      entries: s.entries,
      evicted: s.evicted,
      tokenEstimate: s.tokenEstimate,
      journalRecords: 0,
    };
  }

  get(step: number): IndexEntry | undefined {
    const cache = this.#follower.cached();
    const hit = cache.entry(step);
    if (hit) return hit;
    const json = this.#mirror.db.entryJson(step);
    if (json === undefined) return undefined;
    const entry = JSON.parse(json) as IndexEntry;
    cache.putEntry(entry);
    return entry;
  }

  page(options: { after?: number; offset?: number; limit: number }): IndexEntry[] {
    const db = this.#mirror.db;
    const { after, offset, limit } = options;
    const rows =
      offset !== undefined ? db.entriesAt(offset, limit) : db.entriesAfter(after ?? -1, limit);
    return rows.map((j) => JSON.parse(j) as IndexEntry);
  }

  df(field: PostingField, term: string): number {
    const f = FIELDS[field];
    const cache = this.#follower.cached();
    const hit = cache.df(f, term);
    if (hit !== undefined) return hit;
    const df = this.#mirror.db.df(f, term);
    cache.putDf(f, term, df);
    return df;
  }

  /** See {@link IndexBackend.dfMany}: the cached ones from memory, the others in one query. */
  dfMany(field: PostingField, terms: readonly string[]): number[] {
    const f = FIELDS[field];
    const cache = this.#follower.cached();
    const out = terms.map((term) => cache.df(f, term));
    const missing = terms.filter((_, i) => out[i] === undefined);
    if (missing.length === 0) return out as number[];
    const found = this.#mirror.db.dfMany(f, missing);
    let next = 0;
    return out.map((df) => {
      if (df !== undefined) return df;
      const term = missing[next]!;
      const read = found[next++]!;
      cache.putDf(f, term, read);
      return read;
    });
  }

  postings(field: PostingField, term: string, limit?: number): PostingList {
    const f = FIELDS[field];
    const cache = this.#follower.cached();
    const hit = cache.postings(f, term, limit);
    if (hit) return hit;
    const list = this.#mirror.db.postingList(f, term, limit);
    cache.putPostings(f, term, limit, list);
    return list;
  }

  termsWithPrefix(field: PostingField, prefix: string): string[] {
    const f = FIELDS[field];
    const cache = this.#follower.cached();
    const hit = cache.prefix(f, prefix);
    if (hit) return hit;
    const terms = this.#mirror.db.termsWithPrefix(f, prefix);
    cache.putPrefix(f, prefix, terms);
    return terms;
  }

  topTermsWithPrefix(field: PostingField, prefix: string, maxLength: number, limit: number) {
    const f = FIELDS[field];
    const cache = this.#follower.cached();
    const hit = cache.top(f, prefix, maxLength, limit);
    if (hit) return hit;
    const terms = this.#mirror.db.topTermsWithPrefix(f, prefix, maxLength, limit);
    cache.putTop(f, prefix, maxLength, limit, terms);
    return terms;
  }

  /** See {@link IndexBackend.topTermsWithPrefixMany}: cached ones from memory, the others together. */
  topTermsWithPrefixMany(
    field: PostingField,
    asks: readonly { prefix: string; maxLength: number }[],
    limit: number,
  ): string[][] {
    const f = FIELDS[field];
    const cache = this.#follower.cached();
    const out = asks.map((a) => cache.top(f, a.prefix, a.maxLength, limit));
    const missing = asks.filter((_, i) => out[i] === undefined);
    if (missing.length === 0) return out as string[][];
    const found = this.#mirror.db.topTermsWithPrefixMany(f, missing, limit);
    missing.forEach((a, i) => {
      cache.putTop(f, a.prefix, a.maxLength, limit, found[i]!);
    });
    let next = 0;
    return out.map((terms) => terms ?? found[next++]!);
  }

  fieldStats(field: PostingField): FieldStats {
    return fieldStatsOf(field, this.#mirror.state, () => this.#mirror.db.lastDocStep());
  }

  docStats(steps: readonly number[]): DocStats[] {
    const cache = this.#follower.cached();
    const out: DocStats[] = [];
    const missing: number[] = [];
    for (const step of steps) {
      const d = cache.doc(step);
      if (d) out.push(d);
      else missing.push(step);
    }
    if (missing.length === 0) return out;
    const found = this.#mirror.db.docs(missing);
    for (const d of found) cache.putDoc(d);
    out.push(...found);
    return out;
  }

  docDetails(steps: readonly number[], tokenizer?: string): DocDetail[] {
    return this.#mirror.db.docDetails(steps, tokenizer);
  }

  evictions(): { step_id: number; evicted_at: string }[] {
    return this.#mirror.db.evictions();
  }

  pending(after: number, limit: number): PendingNode[] {
    return this.#mirror.db.pending(after, limit);
  }

  pendingCount(): number {
    const s = this.#mirror.state;
    return s.entries - s.rankedDocs;
  }

  tokens(payloadSha256: string, tokenizer: string): number | undefined {
    return this.#mirror.db.tokens(payloadSha256, tokenizer);
  }

  flagCounts(): FlagCounts {
    return this.#mirror.db.flagCounts();
  }

  unflagged(after: number, limit: number): IndexEntry[] {
    return this.#mirror.db.unflaggedAfter(after, limit).map((j) => JSON.parse(j) as IndexEntry);
  }

  // --- derived writes (best effort, in the background) ---

  attachAnalyses(list: readonly (PendingNode & { analysis: NodeAnalysisRecord })[]): void {
    if (list.length === 0) return;
    const m = this.#mirror;
    this.#follower.changed();
    m.db.transaction(() => m.db.attachAnalyses(list, m.state));
    if (this.#opts.readOnly) return;
    this.#connections.later('storing analyses', (c) =>
      storeAnalyses(c, this.where.storeId, this.#lockKey, list),
    );
  }

  putTokens(list: readonly { payload_sha256: string; tokenizer: string; count: number }[]): void {
    if (list.length === 0) return;
    this.#mirror.db.putTokens(list);
    if (this.#opts.readOnly) return;
    this.#connections.later('storing token counts', async (c) => {
      await insertTokens(c, this.where.storeId, list);
    });
  }

  putFlags(list: readonly NodeFlag[]): void {
    if (list.length === 0) return;
    this.#mirror.db.putFlags(list);
    if (this.#opts.readOnly) return;
    this.#connections.later('storing node flags', async (c) => {
      await insertFlags(c, this.where.storeId, list);
    });
  }

  // --- nodes ---

  /** Fetches the nodes of `steps` fresh from the database (verified on use, never trusted). */
  async load(steps: readonly number[]): Promise<void> {
    this.#assertOpen();
    await this.#nodes.load(steps);
  }

  async nodeSizes(steps: readonly number[]): Promise<Map<number, number>> {
    this.#assertOpen();
    return this.#nodes.sizes(steps);
  }

  /**
   * See {@link IndexBackend.copySource}: the tables paged in one snapshot of their own, no
   * mirror built (see {@link PgCopySource}).
   */
  async copySource(): Promise<CopySource> {
    this.#assertOpen();
    return PgCopySource.open(this.#connections, this.where.storeId, this);
  }

  verifyNode(entry: IndexEntry): VerifiedNode {
    return verifyStoredNode(entry, this.#nodes, this);
  }

  readNodeText(entry: IndexEntry): string | null {
    const bytes = this.#nodes.bytes(entry.step_id);
    return bytes === null ? null : bytes.toString('utf8');
  }

  async listNodes(): Promise<{ steps: Map<number, string>; stray: string[] }> {
    return this.#nodes.list();
  }

  // --- writes ---

  async write<T>(fn: (session: WriteSession) => Promise<T> | T): Promise<T> {
    this.#assertOpen();
    if (this.#opts.readOnly) {
      throw new UsageError(
        `this store was opened read-only; nothing can be written to it: ${this.location}`,
      );
    }
    return this.#exclusive(async () => {
      await this.#connections.background;
      const client = await this.#connections.begin();
      let stage: 'before' | 'commit' | 'done' = 'before';
      const applied: (() => void)[] = [];
      try {
        await client.query(
          `SET LOCAL lock_timeout = ${Math.max(1, Math.floor(this.#opts.lockTimeoutMs))}`,
        );
        await client.query(
          'INSERT INTO cf_stores (store_id, created_at) VALUES ($1, $2) ON CONFLICT DO NOTHING',
          [this.where.storeId, isoSeconds(this.#opts.clock())],
        );
        await client.query('SELECT pg_advisory_xact_lock($1)', [this.#lockKey]);
        await this.#follower.follow(client, true);
        const out = await fn(writeSession(client, this.#sessionContext(), applied));
        stage = 'commit';
        await client.query('COMMIT');
        stage = 'done';
        this.#follower.exists = true;
        for (const a of applied) a();
        this.#connections.release(client);
        return out;
      } catch (e) {
        if (stage !== 'done') await client.query('ROLLBACK').catch(() => {});
        this.#connections.release(client, e);
        if (stage === 'commit') this.#follower.reset(this.#mirror.epoch); // re-read: it may have committed
        throw storeError(
          e,
          this.location,
          'writing to the store',
          stage === 'commit' ? 'unknown' : 'no',
        );
      }
    });
  }

  /** What a write session needs of this store. */
  #sessionContext(): SessionContext {
    return {
      storeId: this.where.storeId,
      location: this.location,
      mirror: this.#follower,
      keyOf: this.#opts.analyzer?.keyOf,
      get: (step) => this.get(step),
    };
  }

  /** The drops recorded by repair, in order (what the journal's drop records say). */
  async drops(): Promise<{ step_id: number; dropped_at: string; reason: string }[]> {
    this.#assertOpen();
    return this.#connections.withClient('reading drops', async (c) => {
      const r = await c.query<{ step: string; dropped_at: string; reason: string }>(
        'SELECT step, dropped_at, reason FROM cf_drops WHERE store_id = $1 ORDER BY id',
        [this.where.storeId],
      );
      return r.rows.map((x) => ({
        step_id: Number(x.step),
        dropped_at: x.dropped_at,
        reason: x.reason,
      }));
    });
  }

  /** Nothing to compact: every commit is already in its final form. */
  async compact(): Promise<number> {
    this.#assertOpen();
    return 0;
  }

  /** Drops this process's mirror and re-reads it from the database. */
  async reindex(): Promise<void> {
    this.#assertOpen();
    await this.#exclusive(async () => {
      await this.#connections.background;
      this.#follower.reset(this.#mirror.epoch);
      await this.#connections.withClient('reading the store', (c) => this.#follower.follow(c));
    });
  }

  /**
   * Compares the mirror with the database row by row (entries and their eviction state): what
   * `validate` reports as a stale index.
   */
  async checkIndex(): Promise<IndexCheck> {
    this.#assertOpen();
    const base = {
      path: this.location,
      entries: this.#mirror.state.entries,
      pending: this.pendingCount(),
    };
    const problem = await this.#connections.withClient('checking the store', (c) =>
      mirrorProblem(c, this.where.storeId, this.#follower),
    );
    if (problem) return { ...base, state: 'stale', message: problem };
    return { ...base, state: this.#follower.exists || base.entries > 0 ? 'fresh' : 'absent' };
  }

  // --- verbatim copies (tools that mirror a directory, e.g. the conformance runner) ---

  /**
   * Replaces this store's rows with a directory's state exactly as it is, without verifying
   * anything (tampered bytes, orphans and missing nodes included): what lets the conformance
   * corpus's file edits be replayed against the database. Not for moving stores: use
   * `transferStore`, which verifies every node.
   */
  async loadVerbatim(input: {
    nodes: readonly { step: number; body: Buffer }[];
    entries: readonly IndexEntry[];
    evictions: readonly { step_id: number; evicted_at: string }[];
    createdAt: string;
  }): Promise<void> {
    this.#assertOpen();
    await this.#exclusive(async () => {
      await this.#connections.background;
      const c = await this.#connections.connect('loading a store verbatim');
      try {
        await c.query('BEGIN');
        await c.query('SELECT pg_advisory_xact_lock($1)', [this.#lockKey]);
        await recreateStoreRow(c, this.where.storeId, input.createdAt);
        await insertVerbatimNodes(c, this.where.storeId, input.nodes);
        const entries = await insertVerbatimEntries(c, this.where.storeId, input.entries);
        await feedVerbatim(c, this.where.storeId, entries, input.evictions);
        await c.query('COMMIT');
        this.#connections.release(c);
      } catch (e) {
        await c.query('ROLLBACK').catch(() => {});
        this.#connections.release(c, e);
        throw storeError(e, this.location, 'loading a store verbatim');
      }
      this.#follower.reset(-1);
      await this.#connections.withClient('reading the store', (cl) => this.#follower.follow(cl));
    });
  }

  /** This store's rows as they are: node bytes by step, current entries, the eviction log. */
  async dumpVerbatim(): Promise<{
    nodes: { step: number; body: Buffer }[];
    entries: IndexEntry[];
    evictions: { step_id: number; evicted_at: string }[];
    createdAt: string | null;
  }> {
    await this.sync();
    const rows = await this.#connections.withClient('reading a store verbatim', (c) =>
      readVerbatimRows(c, this.where.storeId),
    );
    const entries = this.page({ after: -1, limit: Number.MAX_SAFE_INTEGER });
    return {
      nodes: rows.nodes.map((r) => ({ step: Number(r.step), body: r.body })),
      entries,
      evictions: this.evictions(),
      createdAt: rows.createdAt,
    };
  }

  // --- records (session events) ---

  async appendRecords(kind: string, text: string, after?: RecordsMark): Promise<void> {
    this.#assertOpen();
    await this.#records.append(kind, text, after);
  }

  async readRecords(kind: string): Promise<RecordsRead> {
    this.#assertOpen();
    return this.#records.read(kind);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#queue.idle();
    await this.#connections.background;
    try {
      this.#mirror.db.close();
    } catch {}
    await this.#connections.end();
  }
}
