import type pg from 'pg';
import { canonicalJson } from '../../protocol/canonical-json.js';
import { parseEntryRow } from './pg-feed.js';
import type { PgMirror } from './pg-mirror.js';

/**
 * Why a mirror is stale, if it is: its entries compared with the database's row by row (with
 * their eviction state), then the counts. What `PgStore.checkIndex` (and so `validate`)
 * reports; its own module because it walks the whole table, unlike any other read.
 */
export async function mirrorProblem(
  c: pg.ClientBase,
  storeId: string,
  mirror: PgMirror,
): Promise<string | null> {
  const counts = await c.query<{ entries: string; evicted: string }>(
    'SELECT entries, evicted FROM cf_stores WHERE store_id = $1',
    [storeId],
  );
  const row = counts.rows[0];
  const s = mirror.current.state;
  if (!row) return s.entries === 0 ? null : 'the store is gone from the database';
  let after = -1;
  let seen = 0;
  let malformed = 0;
  for (;;) {
    const r = await c.query<{ step: string; body: string; evicted: boolean }>(
      'SELECT step, body, evicted FROM cf_entries WHERE store_id = $1 AND step > $2 ORDER BY step LIMIT 2000',
      [storeId, after],
    );
    if (r.rows.length === 0) break;
    for (const e of r.rows) {
      const step = Number(e.step);
      const parsed = parseEntryRow(step, e.body);
      after = step;
      if (!parsed.ok) {
        // A row the mirror left out is its load problem (validate reports it), not staleness
        // a reindex would cure.
        if (mirror.current.db.entryJson(step) === undefined) {
          malformed++;
          continue;
        }
        return `the index row of step ${step} ${parsed.reason}`;
      }
      const want = e.evicted ? canonicalJson({ ...parsed.entry, evicted: true }) : parsed.json;
      if (mirror.current.db.entryJson(step) !== want)
        return `step ${step} differs from the database`;
      seen++;
    }
  }
  if (seen !== s.entries) return `the mirror holds ${s.entries} entries, the database ${seen}`;
  if (Number(row.entries) !== seen + malformed)
    return `the store's counter says ${row.entries} entries, its table holds ${seen + malformed}`;
  return null;
}
