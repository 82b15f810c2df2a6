import { isStepConflictError, UsageError } from '../../protocol/errors.js';
import { isoSeconds } from '../../protocol/time.js';
import { expectRecords, type RecordsMark } from '../records-mark.js';
import type { PgConnections } from './pg-connections.js';
import { storeError } from './pg-errors.js';
import type { PgLocation } from './pg-url.js';

/**
 * A PostgreSQL store's records (session events, by kind): appended in their own transaction,
 * read back as the text of a journal. Apart from {@link PgStore}'s index because records never
 * touch the index, its mirror or its lock.
 */
export class PgRecords {
  readonly #connections: PgConnections;
  readonly #where: PgLocation;
  readonly #clock: () => Date;

  constructor(connections: PgConnections, where: PgLocation, clock: () => Date) {
    this.#connections = connections;
    this.#where = where;
    this.#clock = clock;
  }

  /** Appends newline-terminated records of `kind` (creating the store's row if need be). */
  async append(kind: string, text: string, after?: RecordsMark): Promise<void> {
    const bodies = text.split('\n');
    if (bodies.pop() !== '') throw new Error('records must end with a newline');
    if (bodies.length === 0) return;
    if (text.includes('\0')) {
      // PostgreSQL text holds no NUL: refused whole, rather than failing inside the INSERT.
      throw new UsageError(
        `records cannot hold a NUL character (U+0000) in a PostgreSQL store; escape it (JSON writes \\u0000): ${this.#where.display}`,
        { path: this.#where.display },
      );
    }
    const client = await this.#connections.begin();
    try {
      await client.query(
        'INSERT INTO cf_stores (store_id, created_at) VALUES ($1, $2) ON CONFLICT DO NOTHING',
        [this.#where.storeId, isoSeconds(this.#clock())],
      );
      if (after) {
        // One appender of a store's records at a time, so the count is still true at COMMIT.
        await client.query('SELECT 1 FROM cf_stores WHERE store_id = $1 FOR UPDATE', [
          this.#where.storeId,
        ]);
        const { rows } = await client.query<{ n: string }>(
          'SELECT count(*) AS n FROM cf_records WHERE store_id = $1 AND kind = $2',
          [this.#where.storeId, kind],
        );
        expectRecords(
          `${this.#where.display} (${kind})`,
          Number(rows[0]!.n),
          after.lines,
          'records',
        );
      }
      await client.query(
        'INSERT INTO cf_records (store_id, kind, body) SELECT $1, $2, * FROM unnest($3::text[])',
        [this.#where.storeId, kind, bodies],
      );
      await client.query('COMMIT');
      this.#connections.release(client);
    } catch (e) {
      await client.query('ROLLBACK').catch(() => {});
      this.#connections.release(client, e);
      if (isStepConflictError(e)) throw e;
      throw storeError(e, this.#where.display, 'recording events', 'no');
    }
  }

  /** The records of `kind`, in order, as newline-terminated text, with where they are. */
  async read(kind: string): Promise<{ path: string; text: string }> {
    const bodies = await this.#connections.withClient('reading events', async (c) => {
      const r = await c.query<{ body: string }>(
        'SELECT body FROM cf_records WHERE store_id = $1 AND kind = $2 ORDER BY seq',
        [this.#where.storeId, kind],
      );
      return r.rows.map((x) => x.body);
    });
    const text = bodies.map((b) => `${b}\n`).join('');
    return { path: `${this.#where.display}#${kind}`, text };
  }
}
