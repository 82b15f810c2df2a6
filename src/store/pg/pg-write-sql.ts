import type pg from 'pg';
import { prettyJson } from '../../protocol/canonical-json.js';
import { OrphanedNodeError } from '../../protocol/ipcf-errors.js';
import type { ColdNode } from '../../protocol/types.js';
import type { NodeAnalysisRecord } from '../index-backend.js';
import type { NodeFlag } from '../node-flag.js';

/**
 * The statements every kind of PostgreSQL write shares (a fold, a background write of derived
 * rows, a verbatim load): the store's lock key, the batch inserts, and moving the change feed
 * on. Each takes the connection and the store id, so the caller decides the transaction.
 */

/** A per-store 64-bit advisory lock key (from the store id; collisions only serialise). */
export function lockKey(storeId: string): string {
  let h = 0xcbf29ce484222325n;
  for (const b of Buffer.from(`contextfold:${storeId}`, 'utf8')) {
    h ^= BigInt(b);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return BigInt.asIntN(64, h).toString();
}

/** Inserts cold nodes; a node already stored (an orphan) is refused, never overwritten. */
export async function writeNodes(
  c: pg.PoolClient,
  storeId: string,
  location: string,
  nodes: readonly ColdNode[],
): Promise<void> {
  if (nodes.length === 0) return;
  try {
    await c.query(
      `INSERT INTO cf_nodes (store_id, step, body, artifact_sha256, payload_sha256, projection_sha256)
         SELECT $1, * FROM unnest($2::bigint[], $3::bytea[], $4::text[], $5::text[], $6::text[])`,
      [
        storeId,
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
        `a node is stored without an index entry (written behind the engine's back?); refusing to overwrite it: ${location}`,
        { path: location },
      );
    }
    throw e;
  }
}

/** Moves the feed (and the counters) on by `n`; returns the seq before. */
export async function advance(
  c: pg.ClientBase,
  storeId: string,
  n: number,
  entries: number,
  evicted: number,
  tokens: number,
): Promise<number> {
  const r = await c.query<{ seq: string }>(
    `UPDATE cf_stores SET seq = seq + $2, entries = entries + $3, evicted = evicted + $4,
              token_estimate = token_estimate + $5
        WHERE store_id = $1 RETURNING seq`,
    [storeId, n, entries, evicted, tokens],
  );
  return Number(r.rows[0]!.seq) - n;
}

/** Writes the feed rows of `steps` (one change `op` each) at the seqs after `base`. */
export async function appendFeed(
  c: pg.ClientBase,
  storeId: string,
  base: number,
  steps: readonly number[],
  op: number,
  evictedAt: string | null,
): Promise<void> {
  await c.query(
    `INSERT INTO cf_changes (store_id, seq, step, op, evicted_at)
       SELECT $1, x.seq, x.step, $4, $5 FROM unnest($2::bigint[], $3::bigint[]) AS x(seq, step)`,
    [storeId, steps.map((_, i) => base + i + 1), steps, op, evictedAt],
  );
}

/** Inserts analyses (postings in forward form), keeping any already stored under their key. */
export async function insertAnalyses(
  c: pg.ClientBase,
  storeId: string,
  list: readonly NodeAnalysisRecord[],
): Promise<void> {
  if (list.length === 0) return;
  await c.query(
    `INSERT INTO cf_analyses (store_id, akey, length, parts, part_length, features, body)
       SELECT $1, * FROM unnest($2::text[], $3::int[], $4::int[], $5::int[], $6::text[], $7::text[])
       ON CONFLICT DO NOTHING`,
    [
      storeId,
      list.map((a) => a.akey),
      list.map((a) => a.length),
      list.map((a) => a.parts),
      list.map((a) => a.partLength),
      list.map((a) => a.features),
      list.map((a) => JSON.stringify([a.terms, a.tfs])),
    ],
  );
}

/** Inserts token counts, keeping any already stored. */
export async function insertTokens(
  c: pg.ClientBase,
  storeId: string,
  list: readonly { payload_sha256: string; tokenizer: string; count: number }[],
): Promise<void> {
  if (list.length === 0) return;
  await c.query(
    `INSERT INTO cf_tokens (store_id, payload_sha256, tokenizer, count)
       SELECT $1, * FROM unnest($2::text[], $3::text[], $4::int[]) ON CONFLICT DO NOTHING`,
    [
      storeId,
      list.map((t) => t.payload_sha256),
      list.map((t) => t.tokenizer),
      list.map((t) => t.count),
    ],
  );
}

/** Inserts node flags, keeping any already stored. */
export async function insertFlags(
  c: pg.ClientBase,
  storeId: string,
  list: readonly NodeFlag[],
): Promise<void> {
  if (list.length === 0) return;
  await c.query(
    `INSERT INTO cf_flags (store_id, artifact_sha256, sanitized)
       SELECT $1, * FROM unnest($2::text[], $3::boolean[]) ON CONFLICT DO NOTHING`,
    [storeId, list.map((f) => f.artifact_sha256), list.map((f) => f.sanitized)],
  );
}
