import type pg from 'pg';
import { canonicalJson } from '../../protocol/canonical-json.js';
import type { IndexEntry } from '../../protocol/types.js';
import { advance, appendFeed } from './pg-write-sql.js';

/**
 * The steps of a verbatim load (`PgStore.loadVerbatim`): a directory's state written as rows
 * exactly as it is, nothing verified. Apart from the store because no other write path takes
 * them: they bypass the checks every fold makes.
 */

/**
 * Verbatim load: the store's row replaced (its other rows go with it), the epoch past the old
 * one's so every process's mirror starts over.
 */
export async function recreateStoreRow(
  c: pg.ClientBase,
  storeId: string,
  createdAt: string,
): Promise<void> {
  const old = await c.query<{ epoch: number }>(
    'DELETE FROM cf_stores WHERE store_id = $1 RETURNING epoch',
    [storeId],
  );
  const epoch = (old.rows[0]?.epoch ?? 0) + 1;
  await c.query('INSERT INTO cf_stores (store_id, created_at, epoch) VALUES ($1, $2, $3)', [
    storeId,
    createdAt,
    epoch,
  ]);
}

/** Verbatim load: node bytes as given, with the hashes their JSON names ('' where it can't). */
export async function insertVerbatimNodes(
  c: pg.ClientBase,
  storeId: string,
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
      storeId,
      nodes.map((n) => n.step),
      nodes.map((n) => n.body),
      nodes.map((n) => field(n.body, 'artifact_sha256')),
      nodes.map((n) => field(n.body, 'payload_sha256')),
      nodes.map((n) => field(n.body, 'projection_sha256')),
    ],
  );
}

/** Verbatim load: the entries, none evicted yet (the evictions follow in the feed). */
export async function insertVerbatimEntries(
  c: pg.ClientBase,
  storeId: string,
  list: readonly IndexEntry[],
): Promise<IndexEntry[]> {
  const entries = [...list].sort((a, b) => a.step_id - b.step_id);
  await c.query(
    `INSERT INTO cf_entries (store_id, step, body)
       SELECT $1, * FROM unnest($2::bigint[], $3::text[])`,
    [
      storeId,
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
export async function feedVerbatim(
  c: pg.ClientBase,
  storeId: string,
  entries: readonly IndexEntry[],
  evictions: readonly { step_id: number; evicted_at: string }[],
): Promise<void> {
  const folds = entries.map((e) => e.step_id);
  const evicted = evictions.length;
  const tokens = entries.reduce((n, e) => n + e.token_estimate, 0);
  await advance(c, storeId, folds.length + evicted, folds.length, 0, tokens);
  await appendFeed(c, storeId, 0, folds, 1, null);
  for (let i = 0; i < evicted; i++) {
    const ev = evictions[i]!;
    await c.query('UPDATE cf_entries SET evicted = true WHERE store_id = $1 AND step = $2', [
      storeId,
      ev.step_id,
    ]);
    await appendFeed(c, storeId, folds.length + i, [ev.step_id], 2, ev.evicted_at);
  }
  await c.query(
    `UPDATE cf_stores SET evicted = (SELECT count(*) FROM cf_entries WHERE store_id = $1 AND evicted) WHERE store_id = $1`,
    [storeId],
  );
}

/** Verbatim dump: the node bytes by step and the store's creation time (null: no store row). */
export async function readVerbatimRows(
  c: pg.ClientBase,
  storeId: string,
): Promise<{ nodes: { step: string; body: Buffer }[]; createdAt: string | null }> {
  const n = await c.query<{ step: string; body: Buffer }>(
    'SELECT step, body FROM cf_nodes WHERE store_id = $1 ORDER BY step',
    [storeId],
  );
  const s = await c.query<{ created_at: string }>(
    'SELECT created_at FROM cf_stores WHERE store_id = $1',
    [storeId],
  );
  return { nodes: n.rows, createdAt: s.rows[0]?.created_at ?? null };
}
