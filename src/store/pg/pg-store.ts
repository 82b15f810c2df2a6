import pg from 'pg';
import { canonicalJson, prettyJson } from '../../protocol/canonical-json.js';
import { StoreNotFoundError, UsageError } from '../../protocol/errors.js';
import {
  BrokenReferenceError,
  OrphanedNodeError,
  PathContainmentError,
} from '../../protocol/ipcf-errors.js';
import { isoSeconds } from '../../protocol/time.js';
import type { ColdNode, IndexEntry } from '../../protocol/types.js';
import { fieldStatsOf } from '../field-stats.js';
import {
  type CommitRow,
  type DocDetail,
  type DocStats,
  type FieldStats,
  type IndexBackend,
  type IndexCheck,
  type IndexStats,
  type IndexWarning,
  type NodeAnalysisRecord,
  NodeNotLoadedError,
  type PendingNode,
  type PostingField,
  type PostingList,
  type WriteSession,
} from '../index-backend.js';
import {
  emptyState,
  FIELD_RANKED,
  FIELD_REFERENCE,
  type FoldRow,
  IndexDb,
  type IndexState,
  type StoredAnalysis,
} from '../index-db.js';
import { type AnalysisKeyOf, dropRow, type LoadProblem } from '../index-loader.js';
import { nodeFileName } from '../layout.js';
import { IndexBrokenError } from '../local-store.js';
import { commitFlags, type FlagCounts, type NodeFlag } from '../node-flag.js';
import { ReadCache } from '../read-cache.js';
import { SerialQueue } from '../serial-queue.js';
import { type VerifiedNode, verifyNodeText } from '../verify.js';
import { isConnectionError, storeError } from './pg-errors.js';
import { migrate } from './pg-schema.js';
import { type PgLocation, parsePgUrl } from './pg-url.js';

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
export const PG_STORE_DIR = '.contextfold';
/** Changes pulled per catch-up query. */
const FEED_PAGE = 5000;
/** A mirror that starts behind by more changes than this is filled from the tables instead. */
const BOOTSTRAP_MIN = 2000;
/** Node bodies kept for verification (each is re-hashed on every use). */
const NODE_CACHE = 256;

/** A per-store 64-bit advisory lock key (from the store id; collisions only serialise). */
function lockKey(storeId: string): string {
  let h = 0xcbf29ce484222325n;
  for (const b of Buffer.from(`contextfold:${storeId}`, 'utf8')) {
    h ^= BigInt(b);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return BigInt.asIntN(64, h).toString();
}

interface FeedRow {
  seq: string;
  step: string;
  op: number;
  evicted_at: string | null;
  body: string | null;
  akey: string | null;
  length: number | null;
  parts: number | null;
  part_length: number | null;
  features: string | null;
  abody: string | null;
}

/** An analysis row of `cf_analyses`. */
interface AnalysisRow {
  akey: string;
  length: number;
  parts: number;
  part_length: number;
  features: string;
  body: string;
}

/** A stored analysis from its row (postings in forward form: JSON [terms, tfs]). */
function analysisFromRow(a: AnalysisRow): StoredAnalysis {
  const [terms, tfs] = JSON.parse(a.body) as [string[], number[]];
  return {
    akey: a.akey,
    terms,
    tfs,
    length: a.length,
    parts: a.parts,
    partLength: a.part_length,
    features: a.features,
  };
}

const ANALYSIS_COLUMNS = 'akey, length, parts, part_length, features, body';

/** The in-memory index a process answers reads from, and how far it follows the feed. */
interface Mirror {
  db: IndexDb;
  state: IndexState;
  seq: number;
  epoch: number;
}

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
  readonly #pool: pg.Pool;
  readonly #lockKey: string;
  #mirror: Mirror;
  #migrated: Promise<void> | null = null;
  readonly #queue = new SerialQueue();
  #background: Promise<void> = Promise.resolve();
  #exists = false;
  #closed = false;
  readonly #nodes = new Map<number, Buffer | null>();
  /** Lists and counts read from the mirror, valid while the mirror does not change. */
  readonly #cache = new ReadCache();
  /** Bumped by every change of the mirror: the cache belongs to one version. */
  #version = 0;
  /** Why derived content was reported damaged: the next sync rebuilds it (see reportBroken). */
  #broken: string | null = null;
  /** Read-only after a damaged analysis: the mirror ignores stored analyses (recomputed). */
  #ignoreAnalyses = false;

  constructor(options: PgStoreOptions) {
    this.#opts = options;
    this.where = parsePgUrl(options.url);
    this.#lockKey = lockKey(this.where.storeId);
    this.#pool = new pg.Pool({
      connectionString: this.where.connectionString,
      max: options.poolSize ?? 4,
      statement_timeout: options.statementTimeoutMs ?? 60_000,
      connectionTimeoutMillis: 10_000,
      idleTimeoutMillis: 10_000,
      application_name: 'contextfold',
    });
    // An idle connection that the server drops must not crash the process: the next query
    // gets a fresh one.
    this.#pool.on('error', () => {});
    this.#mirror = this.#emptyMirror(0);
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

  get loadProblem(): LoadProblem | null {
    return null;
  }

  assertConsistent(): void {}

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
    return this.#bytes(step) === null ? null : this.nodePath(step);
  }

  #emptyMirror(epoch: number): Mirror {
    return {
      db: new IndexDb(':memory:', { create: true, compress: false }),
      state: emptyState(this.#opts.analyzer?.version ?? null),
      seq: 0,
      epoch,
    };
  }

  #assertOpen(): void {
    if (this.#closed) throw new UsageError('this store is closed; open it again');
  }

  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.#queue.run(fn);
  }

  /** A pooled connection (schema migrated), with a listener so a dropped backend cannot crash us. */
  async #connect(doing: string): Promise<pg.PoolClient> {
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (e) {
      throw storeError(e, this.location, doing, 'no');
    }
    client.on('error', noop);
    if (!this.#migrated) {
      this.#migrated = migrate(client).then(() => {});
      this.#migrated.catch(() => {
        this.#migrated = null;
      });
    }
    try {
      await this.#migrated;
    } catch (e) {
      this.#release(client, e);
      throw storeError(e, this.location, doing, 'no');
    }
    return client;
  }

  #release(client: pg.PoolClient, error?: unknown): void {
    client.removeListener('error', noop);
    // A connection that broke is destroyed, not returned to the pool.
    client.release(error !== undefined && isConnectionError(error) ? (error as Error) : undefined);
  }

  /**
   * Runs a read-only piece of work on a connection. Reads are idempotent: after a broken
   * connection it is retried once on a fresh one (the only automatic retry).
   */
  async #withClient<T>(doing: string, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const client = await this.#connect(doing);
      try {
        const out = await fn(client);
        this.#release(client);
        return out;
      } catch (e) {
        this.#release(client, e);
        if (attempt === 0 && isConnectionError(e)) continue;
        throw storeError(e, this.location, doing);
      }
    }
  }

  /** True when the database holds this store (anything folded, imported or recorded). */
  async exists(): Promise<boolean> {
    this.#assertOpen();
    return this.#withClient('opening the store', async (c) => {
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
      await this.#background;
      if (this.#broken !== null) await this.#rebuildDerived(this.#broken);
      await this.#withClient('reading the store', (c) => this.#follow(c));
    });
  }

  /**
   * Derived content was found damaged: the stored analyses are discarded (every node is
   * analysed again from its verified bytes), the epoch bumped so every process's mirror starts
   * over, and this mirror re-read. Read-only: only this mirror ignores the stored analyses.
   */
  async #rebuildDerived(reason: string): Promise<void> {
    this.#broken = null;
    if (this.#opts.readOnly) this.#ignoreAnalyses = true;
    else {
      const id = this.where.storeId;
      await this.#withClient('rebuilding the index', async (c) => {
        await c.query('BEGIN');
        try {
          await c.query('SELECT pg_advisory_xact_lock($1)', [this.#lockKey]);
          await c.query('DELETE FROM cf_analyses WHERE store_id = $1', [id]);
          await c.query(
            'UPDATE cf_entries SET akey = NULL WHERE store_id = $1 AND akey IS NOT NULL',
            [id],
          );
          await c.query('DELETE FROM cf_changes WHERE store_id = $1 AND op = 3', [id]);
          await c.query('UPDATE cf_stores SET epoch = epoch + 1 WHERE store_id = $1', [id]);
          await c.query('COMMIT');
        } catch (e) {
          await c.query('ROLLBACK').catch(() => {});
          throw e;
        }
      });
    }
    this.#resetMirror(-1);
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

  /** Catches the mirror up on `c` (inside a write transaction: under the store's lock). */
  async #follow(c: pg.ClientBase, inWrite = false): Promise<void> {
    if (this.#mirror.seq === 0 && !inWrite) {
      // A first look at a store of any size: read it as one snapshot, by key ranges.
      await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      try {
        await this.#followIn(c, true);
      } finally {
        await c.query('COMMIT').catch(() => {});
      }
      return;
    }
    await this.#followIn(c, inWrite);
  }

  /** {@link follow} inside a transaction (a snapshot, or a write holding the store's lock). */
  async #followIn(c: pg.ClientBase, consistent: boolean): Promise<void> {
    const r = await c.query<{ seq: string; epoch: number }>(
      'SELECT seq, epoch FROM cf_stores WHERE store_id = $1',
      [this.where.storeId],
    );
    const row = r.rows[0];
    if (!row) {
      this.#exists = false;
      if (this.#mirror.seq !== 0) this.#resetMirror(0);
      return;
    }
    this.#exists = true;
    const seq = Number(row.seq);
    if (row.epoch !== this.#mirror.epoch || seq < this.#mirror.seq) this.#resetMirror(row.epoch);
    if (this.#mirror.seq === 0 && seq > BOOTSTRAP_MIN && consistent) {
      await this.#bootstrap(c, seq);
      return;
    }
    while (this.#mirror.seq < seq) {
      const feed = { rows: await this.#feedPage(c) };
      if (feed.rows.length === 0) {
        // The rest of the feed was removed with dropped entries (seq was read first, and a
        // commit writes its feed rows and seq together): nothing is missing up to `seq`.
        this.#mirror.seq = Math.max(this.#mirror.seq, seq);
        break;
      }
      // Token counts of the folded payloads (stored beside the feed, not in it): without them
      // a scan would read and count every candidate's payload.
      const payloads = [
        ...new Set(
          feed.rows.flatMap((r) =>
            r.op === 1 && r.body !== null
              ? [(JSON.parse(r.body) as IndexEntry).payload_sha256]
              : [],
          ),
        ),
      ];
      const tokens =
        payloads.length === 0
          ? []
          : (
              await c.query<{ payload_sha256: string; tokenizer: string; count: number }>(
                'SELECT payload_sha256, tokenizer, count FROM cf_tokens WHERE store_id = $1 AND payload_sha256 = ANY($2::text[])',
                [this.where.storeId, payloads],
              )
            ).rows;
      const artifacts = feed.rows.flatMap((r) =>
        r.op === 1 && r.body !== null ? [(JSON.parse(r.body) as IndexEntry).artifact_sha256] : [],
      );
      const flags =
        artifacts.length === 0
          ? []
          : (
              await c.query<NodeFlag>(
                'SELECT artifact_sha256, sanitized FROM cf_flags WHERE store_id = $1 AND artifact_sha256 = ANY($2::text[])',
                [this.where.storeId, artifacts],
              )
            ).rows;
      this.#apply(feed.rows);
      this.#mirror.db.putTokens(tokens);
      this.#mirror.db.putFlags(flags);
    }
  }

  /** The cache, emptied if the mirror changed since it was filled. */
  #cached(): ReadCache {
    const v = String(this.#version);
    if (this.#cache.generation !== v) this.#cache.reset(v, 0);
    return this.#cache;
  }

  /**
   * Fills an empty mirror from the tables, each walked by its primary key in pages (a cost
   * linear in the store, whatever the planner's statistics), as of the snapshot `c` reads:
   * entries, then the analyses they name, token counts, and the eviction log in feed order.
   * The mirror is then at `seq`, and follows the feed from there.
   */
  async #bootstrap(c: pg.ClientBase, seq: number): Promise<void> {
    const m = this.#mirror;
    this.#version++;
    const { byKey, evicted } = await this.#bootstrapEntries(c, m);
    await this.#bootstrapAnalyses(c, m, byKey);
    await this.#bootstrapTokens(c, m);
    await this.#bootstrapFlags(c, m);
    if (evicted > 0) await this.#bootstrapEvictions(c, m);
    m.seq = seq;
  }

  /**
   * Bootstrap: every entry, folded into `m`. Returns the nodes whose analysis is stored, by
   * analysis key (attached once the analyses are read), and how many entries are evicted.
   */
  async #bootstrapEntries(
    c: pg.ClientBase,
    m: Mirror,
  ): Promise<{ byKey: Map<string, PendingNode[]>; evicted: number }> {
    const keyOf = this.#opts.analyzer?.keyOf;
    const byKey = new Map<string, PendingNode[]>();
    const evicted = new Set<number>();
    for (let after = -1; ; ) {
      const page = await c.query<{
        step: string;
        body: string;
        akey: string | null;
        evicted: boolean;
      }>(
        'SELECT step, body, akey, evicted FROM cf_entries WHERE store_id = $1 AND step > $2 ORDER BY step LIMIT $3',
        [this.where.storeId, after, FEED_PAGE],
      );
      if (page.rows.length === 0) break;
      const rows: FoldRow[] = page.rows.map((r) => {
        const entry = JSON.parse(r.body) as IndexEntry;
        if (r.evicted) evicted.add(entry.step_id);
        if (keyOf && r.akey !== null && r.akey === keyOf(entry)) {
          const list = byKey.get(r.akey) ?? [];
          list.push({
            step: entry.step_id,
            payload_sha256: entry.payload_sha256,
            summary: entry.summary,
          });
          byKey.set(r.akey, list);
        }
        return { entry, json: r.body };
      });
      m.db.transaction(() => m.db.insertFolds(rows, m.state));
      after = Number(page.rows[page.rows.length - 1]!.step);
    }
    return { byKey, evicted: evicted.size };
  }

  /** Bootstrap: the stored analyses, attached to the nodes `byKey` lists under their key. */
  async #bootstrapAnalyses(
    c: pg.ClientBase,
    m: Mirror,
    byKey: ReadonlyMap<string, PendingNode[]>,
  ): Promise<void> {
    for (let after = ''; !this.#ignoreAnalyses; ) {
      const page = await c.query<AnalysisRow>(
        `SELECT ${ANALYSIS_COLUMNS} FROM cf_analyses WHERE store_id = $1 AND akey > $2 ORDER BY akey LIMIT $3`,
        [this.where.storeId, after, FEED_PAGE],
      );
      if (page.rows.length === 0) break;
      const attach = page.rows.flatMap((a) => {
        const analysis = analysisFromRow(a);
        return (byKey.get(a.akey) ?? []).map((p) => ({ ...p, analysis }));
      });
      m.db.transaction(() => m.db.attachAnalyses(attach, m.state));
      after = page.rows[page.rows.length - 1]!.akey;
    }
  }

  /** Bootstrap: the token counts. */
  async #bootstrapTokens(c: pg.ClientBase, m: Mirror): Promise<void> {
    for (let after = ['', '']; ; ) {
      const page = await c.query<{ payload_sha256: string; tokenizer: string; count: number }>(
        `SELECT payload_sha256, tokenizer, count FROM cf_tokens
          WHERE store_id = $1 AND (payload_sha256, tokenizer) > ($2, $3)
          ORDER BY payload_sha256, tokenizer LIMIT $4`,
        [this.where.storeId, after[0], after[1], FEED_PAGE],
      );
      if (page.rows.length === 0) break;
      m.db.putTokens(page.rows);
      const last = page.rows[page.rows.length - 1]!;
      after = [last.payload_sha256, last.tokenizer];
    }
  }

  /** Bootstrap: the node flags. */
  async #bootstrapFlags(c: pg.ClientBase, m: Mirror): Promise<void> {
    for (let after = ''; ; ) {
      const page = await c.query<NodeFlag>(
        `SELECT artifact_sha256, sanitized FROM cf_flags
          WHERE store_id = $1 AND artifact_sha256 > $2 ORDER BY artifact_sha256 LIMIT $3`,
        [this.where.storeId, after, FEED_PAGE],
      );
      if (page.rows.length === 0) break;
      m.db.putFlags(page.rows);
      after = page.rows[page.rows.length - 1]!.artifact_sha256;
    }
  }

  /** Bootstrap: the eviction log, replayed in feed order (it holds each eviction's time). */
  async #bootstrapEvictions(c: pg.ClientBase, m: Mirror): Promise<void> {
    const log = await c.query<{ step: string; evicted_at: string | null }>(
      'SELECT step, evicted_at FROM cf_changes WHERE store_id = $1 AND op = 2 ORDER BY seq',
      [this.where.storeId],
    );
    m.db.transaction(() => {
      const done = new Set<number>();
      for (const e of log.rows) {
        const step = Number(e.step);
        const json = m.db.entryJson(step);
        if (json === undefined) continue;
        const evictedJson = canonicalJson({ ...(JSON.parse(json) as IndexEntry), evicted: true });
        m.db.evict(step, evictedJson, e.evicted_at ?? '', done.has(step), m.state);
        done.add(step);
      }
    });
  }

  /**
   * The next page of the feed with each row's entry and analysis. Three single-table lookups by
   * primary key rather than one join: right after a large load the planner's statistics are
   * stale, and it planned that join as nested sequential scans (1.3 s for 3,000 rows, 35 s for
   * 10,000); key lookups by `= ANY` keep one plan whatever the statistics say.
   */
  async #feedPage(c: pg.ClientBase): Promise<FeedRow[]> {
    const id = this.where.storeId;
    const changes = await c.query<{
      seq: string;
      step: string;
      op: number;
      evicted_at: string | null;
    }>(
      'SELECT seq, step, op, evicted_at FROM cf_changes WHERE store_id = $1 AND seq > $2 ORDER BY seq LIMIT $3',
      [id, this.#mirror.seq, FEED_PAGE],
    );
    if (changes.rows.length === 0) return [];
    const steps = [...new Set(changes.rows.map((r) => r.step))];
    const entries = await c.query<{ step: string; body: string; akey: string | null }>(
      'SELECT step, body, akey FROM cf_entries WHERE store_id = $1 AND step = ANY($2::bigint[])',
      [id, steps],
    );
    const byStep = new Map(entries.rows.map((e) => [e.step, e]));
    const akeys = [...new Set(entries.rows.flatMap((e) => (e.akey === null ? [] : [e.akey])))];
    const analyses =
      akeys.length === 0
        ? []
        : (
            await c.query<AnalysisRow>(
              `SELECT ${ANALYSIS_COLUMNS} FROM cf_analyses WHERE store_id = $1 AND akey = ANY($2::text[])`,
              [id, akeys],
            )
          ).rows;
    const byKey = new Map(analyses.map((a) => [a.akey, a]));
    return changes.rows.map((r) => {
      const e = byStep.get(r.step);
      const a = e?.akey ? byKey.get(e.akey) : undefined;
      return {
        ...r,
        body: e?.body ?? null,
        akey: e?.akey ?? null,
        length: a?.length ?? null,
        parts: a?.parts ?? null,
        part_length: a?.part_length ?? null,
        features: a?.features ?? null,
        abody: a?.body ?? null,
      };
    });
  }

  #resetMirror(epoch: number): void {
    this.#version++;
    try {
      this.#mirror.db.close();
    } catch {}
    this.#mirror = this.#emptyMirror(epoch);
  }

  /** The analysis a feed row carries, if it is the current analyzer's for the entry. */
  #analysisOf(entry: IndexEntry, r: FeedRow): StoredAnalysis | undefined {
    const keyOf = this.#opts.analyzer?.keyOf;
    if (this.#ignoreAnalyses || !keyOf || r.akey === null || r.abody === null) return undefined;
    if (r.akey !== keyOf(entry)) return undefined;
    return analysisFromRow({
      akey: r.akey,
      length: r.length!,
      parts: r.parts!,
      part_length: r.part_length!,
      features: r.features!,
      body: r.abody,
    });
  }

  /** Applies feed rows, in order, to the mirror. */
  #apply(rows: readonly FeedRow[]): void {
    const m = this.#mirror;
    this.#version++;
    m.db.transaction(() => {
      let folds: FoldRow[] = [];
      const flush = () => {
        if (folds.length === 0) return;
        m.db.insertFolds(folds, m.state);
        folds = [];
      };
      for (const r of rows) {
        const step = Number(r.step);
        if (r.body === null) throw new Error(`feed row ${r.seq} names step ${step}, not stored`);
        const entry = JSON.parse(r.body) as IndexEntry;
        if (r.op === 1) {
          if (m.db.entryJson(step) === undefined)
            folds.push({ entry, json: r.body, analysis: this.#analysisOf(entry, r) });
        } else if (r.op === 2) {
          flush();
          const current = m.db.entryJson(step);
          const was = current !== undefined && (JSON.parse(current) as IndexEntry).evicted;
          const json = canonicalJson({ ...entry, evicted: true });
          m.db.evict(step, json, r.evicted_at ?? '', was, m.state);
        } else if (r.op === 3) {
          flush();
          const a = this.#analysisOf(entry, r);
          if (a) {
            m.db.attachAnalyses(
              [{ step, payload_sha256: entry.payload_sha256, summary: entry.summary, analysis: a }],
              m.state,
            );
          }
        }
        m.seq = Number(r.seq);
      }
      flush();
    });
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
    const cache = this.#cached();
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
    const cache = this.#cached();
    const hit = cache.df(f, term);
    if (hit !== undefined) return hit;
    const df = this.#mirror.db.df(f, term);
    cache.putDf(f, term, df);
    return df;
  }

  postings(field: PostingField, term: string, limit?: number): PostingList {
    const f = FIELDS[field];
    const cache = this.#cached();
    const hit = cache.postings(f, term, limit);
    if (hit) return hit;
    const list = this.#mirror.db.postingList(f, term, limit);
    cache.putPostings(f, term, limit, list);
    return list;
  }

  termsWithPrefix(field: PostingField, prefix: string): string[] {
    const f = FIELDS[field];
    const cache = this.#cached();
    const hit = cache.prefix(f, prefix);
    if (hit) return hit;
    const terms = this.#mirror.db.termsWithPrefix(f, prefix);
    cache.putPrefix(f, prefix, terms);
    return terms;
  }

  topTermsWithPrefix(field: PostingField, prefix: string, maxLength: number, limit: number) {
    const f = FIELDS[field];
    const cache = this.#cached();
    const hit = cache.top(f, prefix, maxLength, limit);
    if (hit) return hit;
    const terms = this.#mirror.db.topTermsWithPrefix(f, prefix, maxLength, limit);
    cache.putTop(f, prefix, maxLength, limit, terms);
    return terms;
  }

  fieldStats(field: PostingField): FieldStats {
    return fieldStatsOf(field, this.#mirror.state, () => this.#mirror.db.lastDocStep());
  }

  docStats(steps: readonly number[]): DocStats[] {
    const cache = this.#cached();
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

  docDetail(step: number): DocDetail | undefined {
    return this.#mirror.db.docDetail(step);
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
    this.#version++;
    m.db.transaction(() => m.db.attachAnalyses(list, m.state));
    if (this.#opts.readOnly) return;
    this.#later('storing analyses', async (c) => {
      await c.query('BEGIN');
      await c.query('SELECT pg_advisory_xact_lock($1)', [this.#lockKey]);
      await this.#insertAnalyses(
        c,
        list.map((x) => x.analysis),
      );
      const upd = await c.query<{ step: string }>(
        `UPDATE cf_entries e SET akey = x.akey
           FROM unnest($2::bigint[], $3::text[]) AS x(step, akey)
          WHERE e.store_id = $1 AND e.step = x.step AND e.akey IS DISTINCT FROM x.akey
          RETURNING e.step`,
        [this.where.storeId, list.map((x) => x.step), list.map((x) => x.analysis.akey)],
      );
      if (upd.rows.length > 0) {
        const steps = upd.rows.map((r) => Number(r.step)).sort((a, b) => a - b);
        const base = await this.#advance(c, steps.length, 0, 0, 0);
        await this.#feed(c, base, steps, 3, null);
      }
      await c.query('COMMIT');
    });
  }

  putTokens(list: readonly { payload_sha256: string; tokenizer: string; count: number }[]): void {
    if (list.length === 0) return;
    this.#mirror.db.putTokens(list);
    if (this.#opts.readOnly) return;
    this.#later('storing token counts', async (c) => {
      await this.#insertTokens(c, list);
    });
  }

  putFlags(list: readonly NodeFlag[]): void {
    if (list.length === 0) return;
    this.#mirror.db.putFlags(list);
    if (this.#opts.readOnly) return;
    this.#later('storing node flags', async (c) => {
      await this.#insertFlags(c, list);
    });
  }

  /** Queues a best-effort write (awaited by the next sync or close; failures are dropped). */
  #later(doing: string, fn: (c: pg.PoolClient) => Promise<void>): void {
    this.#background = this.#background.then(async () => {
      let client: pg.PoolClient | null = null;
      try {
        client = await this.#connect(doing);
        await fn(client);
        this.#release(client);
      } catch (e) {
        if (client) {
          await client.query('ROLLBACK').catch(() => {});
          this.#release(client, e);
        }
      }
    });
  }

  // --- nodes ---

  /** Fetches the nodes of `steps` fresh from the database (verified on use, never trusted). */
  async load(steps: readonly number[]): Promise<void> {
    this.#assertOpen();
    const want = [...new Set(steps)];
    if (want.length === 0) return;
    const rows = await this.#withClient('reading nodes', async (c) => {
      const r = await c.query<{ step: string; body: Buffer }>(
        'SELECT step, body FROM cf_nodes WHERE store_id = $1 AND step = ANY($2::bigint[])',
        [this.where.storeId, want],
      );
      return r.rows;
    });
    const found = new Map(rows.map((r) => [Number(r.step), r.body]));
    for (const s of want) {
      this.#nodes.delete(s);
      this.#nodes.set(s, found.get(s) ?? null);
    }
    while (this.#nodes.size > Math.max(NODE_CACHE, want.length)) {
      this.#nodes.delete(this.#nodes.keys().next().value!);
    }
  }

  /** The loaded bytes of a step's node (null: not in the database). Throws if not loaded. */
  #bytes(step: number): Buffer | null {
    if (!this.#nodes.has(step)) throw new NodeNotLoadedError(step);
    return this.#nodes.get(step)!;
  }

  verifyNode(entry: IndexEntry): VerifiedNode {
    const step = entry.step_id;
    const path = this.nodePath(step);
    if (entry.file_path !== this.entryFilePath(step)) {
      throw new PathContainmentError(
        `step ${step}: file_path ${JSON.stringify(entry.file_path)} is not the canonical path for the step; expected ${this.entryFilePath(step)}`,
        { stepId: step, path: String(entry.file_path) },
      );
    }
    const bytes = this.#bytes(step);
    if (bytes === null) {
      throw new BrokenReferenceError(
        `step ${step}: cold node is missing from the database: ${path}`,
        {
          stepId: step,
          path,
        },
      );
    }
    return verifyNodeText(entry, bytes.toString('utf8'), path);
  }

  readNodeText(entry: IndexEntry): string | null {
    const bytes = this.#bytes(entry.step_id);
    return bytes === null ? null : bytes.toString('utf8');
  }

  async listNodes(): Promise<{ steps: Map<number, string>; stray: string[] }> {
    const rows = await this.#withClient('listing nodes', async (c) => {
      const r = await c.query<{ step: string }>(
        'SELECT step FROM cf_nodes WHERE store_id = $1 ORDER BY step',
        [this.where.storeId],
      );
      return r.rows;
    });
    const steps = new Map<number, string>();
    for (const r of rows) steps.set(Number(r.step), nodeFileName(Number(r.step)));
    return { steps, stray: [] };
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
      await this.#background;
      const client = await this.#begin();
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
        await this.#follow(client, true);
        const out = await fn(this.#session(client, applied));
        stage = 'commit';
        await client.query('COMMIT');
        stage = 'done';
        this.#exists = true;
        for (const a of applied) a();
        this.#release(client);
        return out;
      } catch (e) {
        if (stage !== 'done') await client.query('ROLLBACK').catch(() => {});
        this.#release(client, e);
        if (stage === 'commit') this.#resetMirror(this.#mirror.epoch); // re-read: it may have committed
        throw storeError(
          e,
          this.location,
          'writing to the store',
          stage === 'commit' ? 'unknown' : 'no',
        );
      }
    });
  }

  /**
   * A connection with a transaction begun. A pooled connection the server dropped while it was
   * idle fails on BEGIN, before anything was sent: that, and only that, is retried (once, on a
   * fresh connection). A failure after BEGIN is reported, never retried.
   */
  async #begin(): Promise<pg.PoolClient> {
    for (let attempt = 0; ; attempt++) {
      const client = await this.#connect('writing to the store');
      try {
        await client.query('BEGIN');
        return client;
      } catch (e) {
        this.#release(client, e);
        if (attempt === 0 && isConnectionError(e)) continue;
        throw storeError(e, this.location, 'writing to the store', 'no');
      }
    }
  }

  #session(c: pg.PoolClient, applied: (() => void)[]): WriteSession {
    // Entries this transaction wrote (the mirror sees them only once it commits).
    const written = new Map<number, IndexEntry>();
    return {
      get: (step) => written.get(step) ?? this.get(step),
      nodeExists: () => false,
      writeNodes: (nodes) => this.#writeNodes(c, nodes),
      commit: async (rows) => {
        await this.#commit(c, rows, applied);
        for (const r of rows) written.set(r.entry.step_id, r.entry);
      },
      evict: async (step, at) => {
        const entry = written.get(step) ?? this.get(step);
        if (!entry) throw new Error(`step ${step} is not indexed`);
        await this.#evict(c, entry, at, applied);
        written.set(step, { ...entry, evicted: true });
      },
      drop: async (step, at, reason) => {
        const entry = written.get(step) ?? this.get(step);
        if (!entry) throw new Error(`step ${step} is not indexed`);
        await this.#drop(c, entry, at, reason, applied);
        written.delete(step);
      },
    };
  }

  async #writeNodes(c: pg.PoolClient, nodes: readonly ColdNode[]): Promise<void> {
    if (nodes.length === 0) return;
    try {
      await c.query(
        `INSERT INTO cf_nodes (store_id, step, body, artifact_sha256, payload_sha256, projection_sha256)
         SELECT $1, * FROM unnest($2::bigint[], $3::bytea[], $4::text[], $5::text[], $6::text[])`,
        [
          this.where.storeId,
          nodes.map((n) => n.step_id),
          nodes.map((n) => Buffer.from(prettyJson(n), 'utf8')),
          nodes.map((n) => n.artifact_sha256),
          nodes.map((n) => n.payload_sha256),
          nodes.map((n) => n.projection_sha256),
        ],
      );
    } catch (e) {
      if ((e as { code?: string }).code === '23505') {
        throw new OrphanedNodeError(
          `a node is stored without an index entry (written behind the engine's back?); refusing to overwrite it: ${this.location}`,
          { path: this.location },
        );
      }
      throw e;
    }
  }

  /** Moves the feed (and the counters) on by `n`; returns the seq before. */
  async #advance(
    c: pg.ClientBase,
    n: number,
    entries: number,
    evicted: number,
    tokens: number,
  ): Promise<number> {
    const r = await c.query<{ seq: string }>(
      `UPDATE cf_stores SET seq = seq + $2, entries = entries + $3, evicted = evicted + $4,
              token_estimate = token_estimate + $5
        WHERE store_id = $1 RETURNING seq`,
      [this.where.storeId, n, entries, evicted, tokens],
    );
    return Number(r.rows[0]!.seq) - n;
  }

  async #feed(
    c: pg.ClientBase,
    base: number,
    steps: readonly number[],
    op: number,
    evictedAt: string | null,
  ): Promise<void> {
    await c.query(
      `INSERT INTO cf_changes (store_id, seq, step, op, evicted_at)
       SELECT $1, x.seq, x.step, $4, $5 FROM unnest($2::bigint[], $3::bigint[]) AS x(seq, step)`,
      [this.where.storeId, steps.map((_, i) => base + i + 1), steps, op, evictedAt],
    );
  }

  async #insertAnalyses(c: pg.ClientBase, list: readonly NodeAnalysisRecord[]): Promise<void> {
    if (list.length === 0) return;
    await c.query(
      `INSERT INTO cf_analyses (store_id, akey, length, parts, part_length, features, body)
       SELECT $1, * FROM unnest($2::text[], $3::int[], $4::int[], $5::int[], $6::text[], $7::text[])
       ON CONFLICT DO NOTHING`,
      [
        this.where.storeId,
        list.map((a) => a.akey),
        list.map((a) => a.length),
        list.map((a) => a.parts),
        list.map((a) => a.partLength),
        list.map((a) => a.features),
        list.map((a) => JSON.stringify([a.terms, a.tfs])),
      ],
    );
  }

  async #insertTokens(
    c: pg.ClientBase,
    list: readonly { payload_sha256: string; tokenizer: string; count: number }[],
  ): Promise<void> {
    if (list.length === 0) return;
    await c.query(
      `INSERT INTO cf_tokens (store_id, payload_sha256, tokenizer, count)
       SELECT $1, * FROM unnest($2::text[], $3::text[], $4::int[]) ON CONFLICT DO NOTHING`,
      [
        this.where.storeId,
        list.map((t) => t.payload_sha256),
        list.map((t) => t.tokenizer),
        list.map((t) => t.count),
      ],
    );
  }

  async #insertFlags(c: pg.ClientBase, list: readonly NodeFlag[]): Promise<void> {
    if (list.length === 0) return;
    await c.query(
      `INSERT INTO cf_flags (store_id, artifact_sha256, sanitized)
       SELECT $1, * FROM unnest($2::text[], $3::boolean[]) ON CONFLICT DO NOTHING`,
      [this.where.storeId, list.map((f) => f.artifact_sha256), list.map((f) => f.sanitized)],
    );
  }

  async #commit(c: pg.PoolClient, rows: readonly CommitRow[], applied: (() => void)[]) {
    if (rows.length === 0) return;
    const entries = rows.map((r) => r.entry);
    const tokenSum = entries.reduce((n, e) => n + e.token_estimate, 0);
    await this.#insertAnalyses(
      c,
      rows.flatMap((r) => (r.analysis ? [r.analysis] : [])),
    );
    const tokens = rows.flatMap((r) =>
      r.tokens
        ? [
            {
              payload_sha256: r.entry.payload_sha256,
              tokenizer: r.tokens.tokenizer,
              count: r.tokens.count,
            },
          ]
        : [],
    );
    await this.#insertTokens(c, tokens);
    const flags = commitFlags(rows);
    await this.#insertFlags(c, flags);
    const jsons = entries.map((e) => canonicalJson(e));
    await c.query(
      `INSERT INTO cf_entries (store_id, step, body, akey)
       SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[])`,
      [
        this.where.storeId,
        entries.map((e) => e.step_id),
        jsons,
        rows.map((r) => r.analysis?.akey ?? null),
      ],
    );
    const base = await this.#advance(c, rows.length, rows.length, 0, tokenSum);
    await this.#feed(
      c,
      base,
      entries.map((e) => e.step_id),
      1,
      null,
    );
    applied.push(() => {
      const m = this.#mirror;
      if (m.seq !== base) {
        this.#resetMirror(m.epoch); // someone else's change slipped in: re-read the feed
        return;
      }
      this.#version++;
      m.db.transaction(() => {
        m.db.putTokens(tokens);
        m.db.putFlags(flags);
        m.db.insertFolds(
          rows.map((r, i) => ({ entry: r.entry, json: jsons[i]!, analysis: r.analysis })),
          m.state,
        );
      });
      m.seq = base + rows.length;
    });
  }

  async #evict(c: pg.PoolClient, entry: IndexEntry, evictedAt: string, applied: (() => void)[]) {
    const step = entry.step_id;
    // Changes a row only if it was not evicted yet: no row back means it already was.
    const r = await c.query(
      'UPDATE cf_entries SET evicted = true WHERE store_id = $1 AND step = $2 AND NOT evicted',
      [this.where.storeId, step],
    );
    const was = r.rowCount === 0;
    const base = await this.#advance(c, 1, 0, was ? 0 : 1, 0);
    await this.#feed(c, base, [step], 2, evictedAt);
    applied.push(() => {
      const m = this.#mirror;
      if (m.seq !== base) {
        this.#resetMirror(m.epoch);
        return;
      }
      const json = canonicalJson({ ...entry, evicted: true });
      this.#version++;
      m.db.transaction(() => m.db.evict(step, json, evictedAt, entry.evicted, m.state));
      m.seq = base + 1;
    });
  }

  /**
   * Removes an entry (repair: its node is gone or untrustworthy): its row and its feed rows go,
   * the drop is recorded with its reason in `cf_drops`, the counters follow, and the epoch is
   * bumped so other processes' mirrors start over (a removal cannot be followed). The node's
   * bytes are not touched.
   */
  async #drop(
    c: pg.PoolClient,
    entry: IndexEntry,
    droppedAt: string,
    reason: string,
    applied: (() => void)[],
  ) {
    const id = this.where.storeId;
    const step = entry.step_id;
    const del = await c.query<{ evicted: boolean }>(
      'DELETE FROM cf_entries WHERE store_id = $1 AND step = $2 RETURNING evicted',
      [id, step],
    );
    const row = del.rows[0];
    if (!row) throw new Error(`step ${step} is not indexed`);
    await c.query('DELETE FROM cf_changes WHERE store_id = $1 AND step = $2', [id, step]);
    await c.query(
      'INSERT INTO cf_drops (store_id, step, dropped_at, reason) VALUES ($1, $2, $3, $4)',
      [id, step, droppedAt, reason],
    );
    const r = await c.query<{ seq: string; epoch: number }>(
      `UPDATE cf_stores SET epoch = epoch + 1, entries = entries - 1, evicted = evicted - $2,
              token_estimate = token_estimate - $3
        WHERE store_id = $1 RETURNING seq, epoch`,
      [id, row.evicted ? 1 : 0, entry.token_estimate],
    );
    const seq = Number(r.rows[0]!.seq);
    const epoch = r.rows[0]!.epoch;
    applied.push(() => {
      const m = this.#mirror;
      if (m.seq !== seq) {
        this.#resetMirror(epoch);
        return;
      }
      this.#version++;
      m.db.transaction(() => {
        if (!dropRow(m.db, m.state, step, this.#opts.analyzer?.keyOf)) {
          throw new Error(`step ${step} is not in the mirror`);
        }
      });
      m.epoch = epoch;
    });
  }

  /** The drops recorded by repair, in order (what the journal's drop records say). */
  async drops(): Promise<{ step_id: number; dropped_at: string; reason: string }[]> {
    this.#assertOpen();
    return this.#withClient('reading drops', async (c) => {
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
      await this.#background;
      this.#resetMirror(this.#mirror.epoch);
      await this.#withClient('reading the store', (c) => this.#follow(c));
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
    const problem = await this.#withClient('checking the store', async (c) => {
      const counts = await c.query<{ entries: string; evicted: string }>(
        'SELECT entries, evicted FROM cf_stores WHERE store_id = $1',
        [this.where.storeId],
      );
      const row = counts.rows[0];
      const s = this.#mirror.state;
      if (!row) return s.entries === 0 ? null : 'the store is gone from the database';
      let after = -1;
      let seen = 0;
      for (;;) {
        const r = await c.query<{ step: string; body: string; evicted: boolean }>(
          'SELECT step, body, evicted FROM cf_entries WHERE store_id = $1 AND step > $2 ORDER BY step LIMIT 2000',
          [this.where.storeId, after],
        );
        if (r.rows.length === 0) break;
        for (const e of r.rows) {
          const step = Number(e.step);
          const want = e.evicted
            ? canonicalJson({ ...(JSON.parse(e.body) as IndexEntry), evicted: true })
            : e.body;
          if (this.#mirror.db.entryJson(step) !== want)
            return `step ${step} differs from the database`;
          seen++;
          after = step;
        }
      }
      if (seen !== s.entries) return `the mirror holds ${s.entries} entries, the database ${seen}`;
      if (Number(row.entries) !== seen)
        return `the store's counter says ${row.entries} entries, its table holds ${seen}`;
      return null;
    });
    if (problem) return { ...base, state: 'stale', message: problem };
    return { ...base, state: this.#exists || base.entries > 0 ? 'fresh' : 'absent' };
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
      await this.#background;
      const c = await this.#connect('loading a store verbatim');
      try {
        await c.query('BEGIN');
        await c.query('SELECT pg_advisory_xact_lock($1)', [this.#lockKey]);
        await this.#recreateStoreRow(c, input.createdAt);
        await this.#insertVerbatimNodes(c, input.nodes);
        const entries = await this.#insertVerbatimEntries(c, input.entries);
        await this.#feedVerbatim(c, entries, input.evictions);
        await c.query('COMMIT');
        this.#release(c);
      } catch (e) {
        await c.query('ROLLBACK').catch(() => {});
        this.#release(c, e);
        throw storeError(e, this.location, 'loading a store verbatim');
      }
      this.#resetMirror(-1);
      await this.#withClient('reading the store', (cl) => this.#follow(cl));
    });
  }

  /**
   * Verbatim load: the store's row replaced (its other rows go with it), the epoch past the old
   * one's so every process's mirror starts over.
   */
  async #recreateStoreRow(c: pg.ClientBase, createdAt: string): Promise<void> {
    const old = await c.query<{ epoch: number }>(
      'DELETE FROM cf_stores WHERE store_id = $1 RETURNING epoch',
      [this.where.storeId],
    );
    const epoch = (old.rows[0]?.epoch ?? 0) + 1;
    await c.query('INSERT INTO cf_stores (store_id, created_at, epoch) VALUES ($1, $2, $3)', [
      this.where.storeId,
      createdAt,
      epoch,
    ]);
  }

  /** Verbatim load: node bytes as given, with the hashes their JSON names ('' where it can't). */
  async #insertVerbatimNodes(
    c: pg.ClientBase,
    nodes: readonly { step: number; body: Buffer }[],
  ): Promise<void> {
    const field = (b: Buffer, k: string): string => {
      try {
        const v = (JSON.parse(b.toString('utf8')) as Record<string, unknown>)[k];
        return typeof v === 'string' ? v : '';
      } catch {
        return '';
      }
    };
    await c.query(
      `INSERT INTO cf_nodes (store_id, step, body, artifact_sha256, payload_sha256, projection_sha256)
       SELECT $1, * FROM unnest($2::bigint[], $3::bytea[], $4::text[], $5::text[], $6::text[])`,
      [
        this.where.storeId,
        nodes.map((n) => n.step),
        nodes.map((n) => n.body),
        nodes.map((n) => field(n.body, 'artifact_sha256')),
        nodes.map((n) => field(n.body, 'payload_sha256')),
        nodes.map((n) => field(n.body, 'projection_sha256')),
      ],
    );
  }

  /** Verbatim load: the entries, none evicted yet (the evictions follow in the feed). */
  async #insertVerbatimEntries(
    c: pg.ClientBase,
    list: readonly IndexEntry[],
  ): Promise<IndexEntry[]> {
    const entries = [...list].sort((a, b) => a.step_id - b.step_id);
    await c.query(
      `INSERT INTO cf_entries (store_id, step, body)
       SELECT $1, * FROM unnest($2::bigint[], $3::text[])`,
      [
        this.where.storeId,
        entries.map((e) => e.step_id),
        entries.map((e) => canonicalJson({ ...e, evicted: false })),
      ],
    );
    return entries;
  }

  /**
   * Verbatim load: the store's counters and change feed, every entry folded in step order, then
   * the evictions in the log's order.
   */
  async #feedVerbatim(
    c: pg.ClientBase,
    entries: readonly IndexEntry[],
    evictions: readonly { step_id: number; evicted_at: string }[],
  ): Promise<void> {
    const folds = entries.map((e) => e.step_id);
    const evicted = evictions.length;
    const tokens = entries.reduce((n, e) => n + e.token_estimate, 0);
    await this.#advance(c, folds.length + evicted, folds.length, 0, tokens);
    await this.#feed(c, 0, folds, 1, null);
    for (let i = 0; i < evicted; i++) {
      const ev = evictions[i]!;
      await c.query('UPDATE cf_entries SET evicted = true WHERE store_id = $1 AND step = $2', [
        this.where.storeId,
        ev.step_id,
      ]);
      await this.#feed(c, folds.length + i, [ev.step_id], 2, ev.evicted_at);
    }
    await c.query(
      `UPDATE cf_stores SET evicted = (SELECT count(*) FROM cf_entries WHERE store_id = $1 AND evicted) WHERE store_id = $1`,
      [this.where.storeId],
    );
  }

  /** This store's rows as they are: node bytes by step, current entries, the eviction log. */
  async dumpVerbatim(): Promise<{
    nodes: { step: number; body: Buffer }[];
    entries: IndexEntry[];
    evictions: { step_id: number; evicted_at: string }[];
    createdAt: string | null;
  }> {
    await this.sync();
    const rows = await this.#withClient('reading a store verbatim', async (c) => {
      const n = await c.query<{ step: string; body: Buffer }>(
        'SELECT step, body FROM cf_nodes WHERE store_id = $1 ORDER BY step',
        [this.where.storeId],
      );
      const s = await c.query<{ created_at: string }>(
        'SELECT created_at FROM cf_stores WHERE store_id = $1',
        [this.where.storeId],
      );
      return { nodes: n.rows, createdAt: s.rows[0]?.created_at ?? null };
    });
    const entries = this.page({ after: -1, limit: Number.MAX_SAFE_INTEGER });
    return {
      nodes: rows.nodes.map((r) => ({ step: Number(r.step), body: r.body })),
      entries,
      evictions: this.evictions(),
      createdAt: rows.createdAt,
    };
  }

  // --- records (session events) ---

  async appendRecords(kind: string, text: string): Promise<void> {
    this.#assertOpen();
    const bodies = text.split('\n');
    if (bodies.pop() !== '') throw new Error('records must end with a newline');
    if (bodies.length === 0) return;
    const client = await this.#begin();
    try {
      await client.query(
        'INSERT INTO cf_stores (store_id, created_at) VALUES ($1, $2) ON CONFLICT DO NOTHING',
        [this.where.storeId, isoSeconds(this.#opts.clock())],
      );
      await client.query(
        'INSERT INTO cf_records (store_id, kind, body) SELECT $1, $2, * FROM unnest($3::text[])',
        [this.where.storeId, kind, bodies],
      );
      await client.query('COMMIT');
      this.#release(client);
    } catch (e) {
      await client.query('ROLLBACK').catch(() => {});
      this.#release(client, e);
      throw storeError(e, this.location, 'recording events', 'no');
    }
  }

  async readRecords(kind: string): Promise<{ path: string; text: string }> {
    this.#assertOpen();
    const bodies = await this.#withClient('reading events', async (c) => {
      const r = await c.query<{ body: string }>(
        'SELECT body FROM cf_records WHERE store_id = $1 AND kind = $2 ORDER BY seq',
        [this.where.storeId, kind],
      );
      return r.rows.map((x) => x.body);
    });
    const text = bodies.map((b) => `${b}\n`).join('');
    return { path: `${this.where.display}#${kind}`, text };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#queue.idle();
    await this.#background;
    try {
      this.#mirror.db.close();
    } catch {}
    await this.#pool.end().catch(() => {});
  }
}

function noop(): void {}
