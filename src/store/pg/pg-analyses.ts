import type pg from 'pg';
import type { NodeAnalysisRecord, PendingNode } from '../index-backend.js';
import { advance, appendFeed, insertAnalyses } from './pg-write-sql.js';

/**
 * The stored analyses as derived content: written in the background after a process analysed
 * nodes (best effort, under the store's lock), and discarded wholesale when one is found
 * damaged. Neither goes through a write session: no entry or node changes.
 */

/**
 * Stores analyses and points their entries at them, with a feed change (op 3) for each entry
 * that changed so other mirrors attach them too. The caller's connection; rolled back by the
 * caller on failure.
 */
export async function storeAnalyses(
  c: pg.ClientBase,
  storeId: string,
  lockKey: string,
  list: readonly (PendingNode & { analysis: NodeAnalysisRecord })[],
): Promise<void> {
  await c.query('BEGIN');
  await c.query('SELECT pg_advisory_xact_lock($1)', [lockKey]);
  await insertAnalyses(
    c,
    storeId,
    list.map((x) => x.analysis),
  );
  const upd = await c.query<{ step: string }>(
    `UPDATE cf_entries e SET akey = x.akey
           FROM unnest($2::bigint[], $3::text[]) AS x(step, akey)
          WHERE e.store_id = $1 AND e.step = x.step AND e.akey IS DISTINCT FROM x.akey
          RETURNING e.step`,
    [storeId, list.map((x) => x.step), list.map((x) => x.analysis.akey)],
  );
  if (upd.rows.length > 0) {
    const steps = upd.rows.map((r) => Number(r.step)).sort((a, b) => a - b);
    const base = await advance(c, storeId, steps.length, 0, 0, 0);
    await appendFeed(c, storeId, base, steps, 3, null);
  }
  await c.query('COMMIT');
}

/**
 * Discards every stored analysis of the store (and the feed changes that attached them), and
 * bumps the epoch so every process's mirror starts over: one transaction, under the lock.
 */
export async function discardAnalyses(
  c: pg.ClientBase,
  storeId: string,
  lockKey: string,
): Promise<void> {
  await c.query('BEGIN');
  try {
    await c.query('SELECT pg_advisory_xact_lock($1)', [lockKey]);
    await c.query('DELETE FROM cf_analyses WHERE store_id = $1', [storeId]);
    await c.query('UPDATE cf_entries SET akey = NULL WHERE store_id = $1 AND akey IS NOT NULL', [
      storeId,
    ]);
    await c.query('DELETE FROM cf_changes WHERE store_id = $1 AND op = 3', [storeId]);
    await c.query('UPDATE cf_stores SET epoch = epoch + 1 WHERE store_id = $1', [storeId]);
    await c.query('COMMIT');
  } catch (e) {
    await c.query('ROLLBACK').catch(() => {});
    throw e;
  }
}
