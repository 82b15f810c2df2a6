import type pg from 'pg';
import { canonicalJson } from '../../protocol/canonical-json.js';
import type { IndexEntry } from '../../protocol/types.js';
import type { CommitRow, WriteSession } from '../index-backend.js';
import { type AnalysisKeyOf, dropRow } from '../index-loader.js';
import { commitFlags } from '../node-flag.js';
import type { PgMirror } from './pg-mirror.js';
import {
  advance,
  appendFeed,
  insertAnalyses,
  insertFlags,
  insertTokens,
  writeNodes,
} from './pg-write-sql.js';

/**
 * The engine's view of one PostgreSQL write transaction: commits, evictions and drops become
 * rows and feed changes on the connection, and each queues how the mirror follows once the
 * transaction commits. Apart from {@link PgStore} because it is the write path's whole logic,
 * while the store only opens, commits or rolls back the transaction around it.
 */

/** What a write session needs of its store. */
export interface SessionContext {
  storeId: string;
  /** Where the store is, for error messages. */
  location: string;
  mirror: PgMirror;
  keyOf: AnalysisKeyOf | undefined;
  /** The store's entry of a step, as the mirror has it. */
  get: (step: number) => IndexEntry | undefined;
}

/**
 * A write session on `c`, inside the transaction. `applied` collects what the mirror does once
 * it commits (run by the caller, in order, after COMMIT).
 */
export function writeSession(
  c: pg.PoolClient,
  ctx: SessionContext,
  applied: (() => void)[],
): WriteSession {
  // Entries this transaction wrote (the mirror sees them only once it commits).
  const written = new Map<number, IndexEntry>();
  return {
    get: (step) => written.get(step) ?? ctx.get(step),
    nodeExists: () => false,
    writeNodes: (nodes) => writeNodes(c, ctx.storeId, ctx.location, nodes),
    commit: async (rows) => {
      await commit(c, ctx, rows, applied);
      for (const r of rows) written.set(r.entry.step_id, r.entry);
    },
    evict: async (step, at) => {
      const entry = written.get(step) ?? ctx.get(step);
      if (!entry) throw new Error(`step ${step} is not indexed`);
      await evict(c, ctx, entry, at, applied);
      written.set(step, { ...entry, evicted: true });
    },
    drop: async (step, at, reason) => {
      const entry = written.get(step) ?? ctx.get(step);
      if (!entry) throw new Error(`step ${step} is not indexed`);
      await drop(c, ctx, entry, at, reason, applied);
      written.delete(step);
    },
  };
}

async function commit(
  c: pg.PoolClient,
  ctx: SessionContext,
  rows: readonly CommitRow[],
  applied: (() => void)[],
) {
  if (rows.length === 0) return;
  const entries = rows.map((r) => r.entry);
  const tokenSum = entries.reduce((n, e) => n + e.token_estimate, 0);
  await insertAnalyses(
    c,
    ctx.storeId,
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
  await insertTokens(c, ctx.storeId, tokens);
  const flags = commitFlags(rows);
  await insertFlags(c, ctx.storeId, flags);
  const jsons = entries.map((e) => canonicalJson(e));
  await c.query(
    `INSERT INTO cf_entries (store_id, step, body, akey)
       SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[])`,
    [ctx.storeId, entries.map((e) => e.step_id), jsons, rows.map((r) => r.analysis?.akey ?? null)],
  );
  const base = await advance(c, ctx.storeId, rows.length, rows.length, 0, tokenSum);
  await appendFeed(
    c,
    ctx.storeId,
    base,
    entries.map((e) => e.step_id),
    1,
    null,
  );
  applied.push(() => {
    const m = ctx.mirror.current;
    if (m.seq !== base) {
      ctx.mirror.reset(m.epoch); // someone else's change slipped in: re-read the feed
      return;
    }
    ctx.mirror.changed();
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

async function evict(
  c: pg.PoolClient,
  ctx: SessionContext,
  entry: IndexEntry,
  evictedAt: string,
  applied: (() => void)[],
) {
  const step = entry.step_id;
  // Changes a row only if it was not evicted yet: no row back means it already was.
  const r = await c.query(
    'UPDATE cf_entries SET evicted = true WHERE store_id = $1 AND step = $2 AND NOT evicted',
    [ctx.storeId, step],
  );
  const was = r.rowCount === 0;
  const base = await advance(c, ctx.storeId, 1, 0, was ? 0 : 1, 0);
  await appendFeed(c, ctx.storeId, base, [step], 2, evictedAt);
  applied.push(() => {
    const m = ctx.mirror.current;
    if (m.seq !== base) {
      ctx.mirror.reset(m.epoch);
      return;
    }
    const json = canonicalJson({ ...entry, evicted: true });
    ctx.mirror.changed();
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
async function drop(
  c: pg.PoolClient,
  ctx: SessionContext,
  entry: IndexEntry,
  droppedAt: string,
  reason: string,
  applied: (() => void)[],
) {
  const id = ctx.storeId;
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
    const m = ctx.mirror.current;
    if (m.seq !== seq) {
      ctx.mirror.reset(epoch);
      return;
    }
    ctx.mirror.changed();
    m.db.transaction(() => {
      if (!dropRow(m.db, m.state, step, ctx.keyOf)) {
        throw new Error(`step ${step} is not in the mirror`);
      }
    });
    m.epoch = epoch;
  });
}
