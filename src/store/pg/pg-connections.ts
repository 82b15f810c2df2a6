import pg from 'pg';
import { pgClientOptions } from './pg-client-options.js';
import { isConnectionError, storeError } from './pg-errors.js';
import { migrate } from './pg-schema.js';
import type { PgLocation } from './pg-url.js';

/**
 * How a {@link PgStore} talks to its database: one pool per store, the schema migrated before
 * the first use, a broken connection destroyed rather than pooled, the one automatic retry
 * (a read, or a BEGIN on a connection dropped while idle), and the queue of best-effort writes.
 * Kept apart from the store so its methods read as what they do, not how they connect.
 */
export class PgConnections {
  readonly #location: string;
  readonly #pool: pg.Pool;
  #migrated: Promise<void> | null = null;
  #background: Promise<void> = Promise.resolve();

  constructor(where: PgLocation, options: { poolSize?: number; statementTimeoutMs?: number }) {
    this.#location = where.display;
    this.#pool = new pg.Pool({
      ...pgClientOptions(where, options.statementTimeoutMs),
      max: options.poolSize ?? 4,
      idleTimeoutMillis: 10_000,
    });
    // An idle connection that the server drops must not crash the process: the next query
    // gets a fresh one.
    this.#pool.on('error', () => {});
  }

  /** The best-effort writes queued so far (awaited by the next sync or close). */
  get background(): Promise<void> {
    return this.#background;
  }

  /** A pooled connection (schema migrated), with a listener so a dropped backend cannot crash us. */
  async connect(doing: string): Promise<pg.PoolClient> {
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (e) {
      throw storeError(e, this.#location, doing, 'no');
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
      this.release(client, e);
      throw storeError(e, this.#location, doing, 'no');
    }
    return client;
  }

  /** Hands a connection back to the pool (or destroys it, if `error` says it broke). */
  release(client: pg.PoolClient, error?: unknown): void {
    client.removeListener('error', noop);
    // A connection that broke is destroyed, not returned to the pool.
    client.release(error !== undefined && isConnectionError(error) ? (error as Error) : undefined);
  }

  /**
   * Runs a read-only piece of work on a connection. Reads are idempotent: after a broken
   * connection it is retried once on a fresh one (the only automatic retry).
   */
  async withClient<T>(doing: string, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const client = await this.connect(doing);
      try {
        const out = await fn(client);
        this.release(client);
        return out;
      } catch (e) {
        this.release(client, e);
        if (attempt === 0 && isConnectionError(e)) continue;
        throw storeError(e, this.#location, doing);
      }
    }
  }

  /**
   * A connection with a transaction begun. A pooled connection the server dropped while it was
   * idle fails on BEGIN, before anything was sent: that, and only that, is retried (once, on a
   * fresh connection). A failure after BEGIN is reported, never retried.
   */
  async begin(): Promise<pg.PoolClient> {
    for (let attempt = 0; ; attempt++) {
      const client = await this.connect('writing to the store');
      try {
        await client.query('BEGIN');
        return client;
      } catch (e) {
        this.release(client, e);
        if (attempt === 0 && isConnectionError(e)) continue;
        throw storeError(e, this.#location, 'writing to the store', 'no');
      }
    }
  }

  /** Queues a best-effort write (awaited by the next sync or close; failures are dropped). */
  later(doing: string, fn: (c: pg.PoolClient) => Promise<void>): void {
    this.#background = this.#background.then(async () => {
      let client: pg.PoolClient | null = null;
      try {
        client = await this.connect(doing);
        await fn(client);
        this.release(client);
      } catch (e) {
        if (client) {
          await client.query('ROLLBACK').catch(() => {});
          this.release(client, e);
        }
      }
    });
  }

  /** Closes the pool (its failures are not the caller's concern: the store is closing). */
  async end(): Promise<void> {
    await this.#pool.end().catch(() => {});
  }
}

function noop(): void {}
