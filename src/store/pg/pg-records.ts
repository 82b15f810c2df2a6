import { isStepConflictError, UsageError } from '../../protocol/errors.js';
import { IntegrityCheckError } from '../../protocol/ipcf-errors.js';
import { isoSeconds } from '../../protocol/time.js';
import { nextHead, parseHead, type RecordsRead } from '../records-head.js';
import { expectRecords, type RecordsMark } from '../records-mark.js';
import type { PgConnections } from './pg-connections.js';
import { storeError } from './pg-errors.js';
import type { PgLocation } from './pg-url.js';

/**
 * The kind of the row holding the head of the records of `kind` (`events.head`): a kind no
 * caller can append to (a record kind is a plain name, without a dot).
 */
function headKind(kind: string): string {
  return `${kind}.head`;
}

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
      // One appender of a store's records at a time, so the count is still true at COMMIT.
      await client.query('SELECT 1 FROM cf_stores WHERE store_id = $1 FOR UPDATE', [
        this.#where.storeId,
      ]);
      const { rows } = await client.query<{ n: string }>(
        'SELECT count(*) AS n FROM cf_records WHERE store_id = $1 AND kind = $2',
        [this.#where.storeId, kind],
      );
      const count = Number(rows[0]!.n);
      if (after) expectRecords(`${this.#where.display} (${kind})`, count, after.lines, 'records');
      await client.query(
        'INSERT INTO cf_records (store_id, kind, body) SELECT $1, $2, * FROM unnest($3::text[])',
        [this.#where.storeId, kind, bodies],
      );
      // The log's head, in the same transaction: it commits with the rows or not at all.
      const head = JSON.stringify(nextHead(count, text));
      const updated = await client.query(
        'UPDATE cf_records SET body = $3 WHERE store_id = $1 AND kind = $2',
        [this.#where.storeId, headKind(kind), head],
      );
      if (updated.rowCount === 0) {
        await client.query('INSERT INTO cf_records (store_id, kind, body) VALUES ($1, $2, $3)', [
          this.#where.storeId,
          headKind(kind),
          head,
        ]);
      }
      await client.query('COMMIT');
      this.#connections.release(client);
    } catch (e) {
      await client.query('ROLLBACK').catch(() => {});
      this.#connections.release(client, e);
      if (isStepConflictError(e)) throw e;
      throw storeError(e, this.#where.display, 'recording events', 'no');
    }
  }

  /**
   * The records of `kind`, in order, as newline-terminated text, with where they are and their
   * head (read first: an append between the two reads leaves the rows longer than the head).
   */
  async read(kind: string): Promise<RecordsRead> {
    const path = `${this.#where.display}#${kind}`;
    const headPath = `${path}.head`;
    const { bodies, heads } = await this.#connections.withClient('reading events', async (c) => {
      const h = await c.query<{ body: string }>(
        'SELECT body FROM cf_records WHERE store_id = $1 AND kind = $2',
        [this.#where.storeId, headKind(kind)],
      );
      const r = await c.query<{ body: string }>(
        'SELECT body FROM cf_records WHERE store_id = $1 AND kind = $2 ORDER BY seq',
        [this.#where.storeId, kind],
      );
      return { bodies: r.rows.map((x) => x.body), heads: h.rows };
    });
    const text = bodies.map((b) => `${b}\n`).join('');
    if (heads.length > 1) {
      throw new IntegrityCheckError(
        `${headPath} is stored ${heads.length} times (one row is written)`,
        {
          path: headPath,
        },
      );
    }
    const head = heads[0] ? parseHead(heads[0].body, headPath) : null;
    return { path, text, head, headPath };
  }
}
