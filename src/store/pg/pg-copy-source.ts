import type pg from 'pg';
import { IntegrityCheckError } from '../../protocol/ipcf-errors.js';
import type { IndexEntry } from '../../protocol/types.js';
import type { CopySource, EvictionRecord } from '../copy-source.js';
import type { VerifiedNode } from '../verify.js';
import type { PgConnections } from './pg-connections.js';
import { storeError } from './pg-errors.js';
import { entryRowPath, FEED_PAGE, parseEntryRow } from './pg-feed.js';
import { type NodePaths, PgNodes, verifyStoredNode } from './pg-nodes.js';

/** What a copy source reads of its store: where it is, for the rows problems name. */
export interface CopyPaths extends NodePaths {
  /** The store's URL without password. */
  readonly location: string;
}

/**
 * A PostgreSQL store read for a copy (see {@link CopySource}): a connection of its own holding
 * one `REPEATABLE READ READ ONLY` transaction, so every page of both passes reads the same
 * snapshot (writers carry on; the copy is the store as it was when the copy began, as
 * `pg_dump` takes it). Entries are paged from `cf_entries` by step, each row checked as the
 * mirror checks it; the eviction log is paged from the change feed; nodes are fetched a page at
 * a time and only the last load kept. No mirror is built, so what the copy holds does not grow
 * with the store.
 */
export class PgCopySource implements CopySource {
  readonly total: number;
  readonly #client: pg.PoolClient;
  readonly #connections: PgConnections;
  readonly #storeId: string;
  readonly #paths: CopyPaths;
  readonly #nodes: PgNodes;
  /** The first failure on the connection (it is destroyed, not pooled, if that broke it). */
  #error: unknown;
  #closed = false;

  private constructor(
    client: pg.PoolClient,
    connections: PgConnections,
    storeId: string,
    paths: CopyPaths,
    total: number,
  ) {
    this.#client = client;
    this.#connections = connections;
    this.#storeId = storeId;
    this.#paths = paths;
    this.total = total;
    this.#nodes = new PgNodes({ withClient: (doing, fn) => this.#run(doing, fn) }, storeId);
    this.#nodes.keepOnlyLastLoad = true;
  }

  /**
   * Begins the snapshot, counts the entries and refuses a change feed that names a step whose
   * entry row is gone (deleted behind the engine's back: the mirror's load problem).
   */
  static async open(
    connections: PgConnections,
    storeId: string,
    paths: CopyPaths,
  ): Promise<PgCopySource> {
    const doing = 'reading the store for a copy';
    const client = await connections.connect(doing);
    let source: PgCopySource | undefined;
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      // The copy writes its target between reads: a server's idle-in-transaction timeout
      // must not end the snapshot under it (pg_dump turns it off the same way).
      await client.query('SET LOCAL idle_in_transaction_session_timeout = 0');
      const count = await client.query<{ n: string }>(
        'SELECT count(*) AS n FROM cf_entries WHERE store_id = $1',
        [storeId],
      );
      source = new PgCopySource(client, connections, storeId, paths, Number(count.rows[0]!.n));
      await source.#checkFeed();
      return source;
    } catch (e) {
      if (source) await source.close();
      else {
        await client.query('ROLLBACK').catch(() => {});
        connections.release(client, e);
      }
      throw storeError(e, paths.location, doing);
    }
  }

  /** Runs a read on the snapshot's connection (a failure is the copy's: never retried). */
  async #run<T>(doing: string, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    try {
      return await fn(this.#client);
    } catch (e) {
      this.#error ??= e;
      throw storeError(e, this.#paths.location, doing);
    }
  }

  async #query<R extends pg.QueryResultRow>(
    doing: string,
    sql: string,
    params: unknown[],
  ): Promise<R[]> {
    return this.#run(doing, async (c) => (await c.query<R>(sql, params)).rows);
  }

  /** Refuses a feed row whose step has no entry row (the first one, in feed order). */
  async #checkFeed(): Promise<void> {
    const rows = await this.#query<{ seq: string; step: string }>(
      'reading the change feed',
      `SELECT c.seq, c.step FROM cf_changes c WHERE c.store_id = $1 AND NOT EXISTS
         (SELECT 1 FROM cf_entries e WHERE e.store_id = $1 AND e.step = c.step)
         ORDER BY c.seq LIMIT 1`,
      [this.#storeId],
    );
    const r = rows[0];
    if (r) this.#refuse(Number(r.step), `is missing (feed change ${r.seq} names it)`);
  }

  #refuse(step: number, reason: string): never {
    const path = entryRowPath(this.#paths.location, step);
    throw new IntegrityCheckError(
      `the index row of step ${step} ${reason}: ${path} (run 'contextfold validate')`,
      { path },
    );
  }

  async *entryPages(pageSize: number): AsyncGenerator<IndexEntry[]> {
    for (let after = -1; ; ) {
      const rows = await this.#query<{ step: string; body: string }>(
        'reading entries',
        'SELECT step, body FROM cf_entries WHERE store_id = $1 AND step > $2 ORDER BY step LIMIT $3',
        [this.#storeId, after, pageSize],
      );
      if (rows.length === 0) return;
      yield rows.map((r) => {
        const step = Number(r.step);
        const parsed = parseEntryRow(step, r.body);
        if (!parsed.ok) this.#refuse(step, parsed.reason);
        // As the mirror holds it: the canonical form of the checked, normalised record.
        return JSON.parse(parsed.json) as IndexEntry;
      });
      after = Number(rows[rows.length - 1]!.step);
    }
  }

  async *evictionPages(): AsyncGenerator<EvictionRecord[]> {
    for (let after = '0'; ; ) {
      const rows = await this.#query<{ seq: string; step: string; evicted_at: string | null }>(
        'reading the eviction log',
        'SELECT seq, step, evicted_at FROM cf_changes WHERE store_id = $1 AND op = 2 AND seq > $2 ORDER BY seq LIMIT $3',
        [this.#storeId, after, FEED_PAGE],
      );
      if (rows.length === 0) return;
      yield rows.map((r) => ({ step_id: Number(r.step), evicted_at: r.evicted_at ?? '' }));
      after = rows[rows.length - 1]!.seq;
    }
  }

  nodeSizes(steps: readonly number[]): Promise<Map<number, number>> {
    return this.#nodes.sizes(steps);
  }

  load(steps: readonly number[]): Promise<void> {
    return this.#nodes.load(steps);
  }

  verifyNode(entry: IndexEntry): VerifiedNode {
    return verifyStoredNode(entry, this.#nodes, this.#paths);
  }

  /** Ends the snapshot and hands the connection back (destroyed if it broke). Safe twice. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#client.query('ROLLBACK').catch((e: unknown) => {
      this.#error ??= e;
    });
    this.#connections.release(this.#client, this.#error);
  }
}
