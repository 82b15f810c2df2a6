import type pg from 'pg';
import { canonicalJson } from '../../protocol/canonical-json.js';
import type { IndexEntry } from '../../protocol/types.js';
import type { PendingNode } from '../index-backend.js';
import type { FoldRow } from '../index-db.js';
import type { AnalysisKeyOf } from '../index-loader.js';
import type { NodeFlag } from '../node-flag.js';
import {
  ANALYSIS_COLUMNS,
  type AnalysisRow,
  analysisFromRow,
  FEED_PAGE,
  type Mirror,
  parseEntryRow,
  refuseEntryRow,
} from './pg-feed.js';

/**
 * Filling an empty mirror straight from the tables, one step per table: a first look at a large
 * store reads each table once by key ranges instead of replaying its whole change feed.
 */

/** What a bootstrap reads with: the store, and which stored analyses the mirror may take. */
export interface BootstrapOptions {
  storeId: string;
  /** The store's URL without password, for the rows problems name. */
  location: string;
  keyOf: AnalysisKeyOf | undefined;
  /** The stored analyses are not read (a read-only mirror after a damaged analysis). */
  ignoreAnalyses: boolean;
}

/**
 * Fills an empty mirror from the tables, each walked by its primary key in pages (a cost
 * linear in the store, whatever the planner's statistics), as of the snapshot `c` reads:
 * entries, then the analyses they name, token counts, and the eviction log in feed order.
 * The mirror is then at `seq`, and follows the feed from there.
 */
export async function bootstrap(
  c: pg.ClientBase,
  m: Mirror,
  seq: number,
  o: BootstrapOptions,
): Promise<void> {
  const { byKey, evicted } = await bootstrapEntries(c, m, o);
  await bootstrapAnalyses(c, m, byKey, o);
  await bootstrapTokens(c, m, o.storeId);
  await bootstrapFlags(c, m, o.storeId);
  if (evicted > 0) await bootstrapEvictions(c, m, o.storeId);
  m.seq = seq;
}

/**
 * Bootstrap: every entry, folded into `m`. Returns the nodes whose analysis is stored, by
 * analysis key (attached once the analyses are read), and how many entries are evicted.
 */
async function bootstrapEntries(
  c: pg.ClientBase,
  m: Mirror,
  o: BootstrapOptions,
): Promise<{ byKey: Map<string, PendingNode[]>; evicted: number }> {
  const keyOf = o.keyOf;
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
      [o.storeId, after, FEED_PAGE],
    );
    if (page.rows.length === 0) break;
    const rows: FoldRow[] = page.rows.flatMap((r) => {
      const parsed = parseEntryRow(Number(r.step), r.body);
      if (!parsed.ok) {
        // Left out, as a malformed record of a local index is: the mirror's load problem.
        refuseEntryRow(m, o.location, Number(r.step), parsed.reason);
        return [];
      }
      const entry = parsed.entry;
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
      return [{ entry, json: parsed.json }];
    });
    m.db.transaction(() => m.db.insertFolds(rows, m.state));
    after = Number(page.rows[page.rows.length - 1]!.step);
  }
  return { byKey, evicted: evicted.size };
}

/** Bootstrap: the stored analyses, attached to the nodes `byKey` lists under their key. */
async function bootstrapAnalyses(
  c: pg.ClientBase,
  m: Mirror,
  byKey: ReadonlyMap<string, PendingNode[]>,
  o: BootstrapOptions,
): Promise<void> {
  for (let after = ''; !o.ignoreAnalyses; ) {
    const page = await c.query<AnalysisRow>(
      `SELECT ${ANALYSIS_COLUMNS} FROM cf_analyses WHERE store_id = $1 AND akey > $2 ORDER BY akey LIMIT $3`,
      [o.storeId, after, FEED_PAGE],
    );
    if (page.rows.length === 0) break;
    const attach = page.rows.flatMap((a) => {
      const analysis = analysisFromRow(a);
      // A malformed analysis is left out: its nodes are analysed again from their bytes.
      if (!analysis) return [];
      return (byKey.get(a.akey) ?? []).map((p) => ({ ...p, analysis }));
    });
    m.db.transaction(() => m.db.attachAnalyses(attach, m.state));
    after = page.rows[page.rows.length - 1]!.akey;
  }
}

/** Bootstrap: the token counts. */
async function bootstrapTokens(c: pg.ClientBase, m: Mirror, storeId: string): Promise<void> {
  for (let after = ['', '']; ; ) {
    const page = await c.query<{ payload_sha256: string; tokenizer: string; count: number }>(
      `SELECT payload_sha256, tokenizer, count FROM cf_tokens
          WHERE store_id = $1 AND (payload_sha256, tokenizer) > ($2, $3)
          ORDER BY payload_sha256, tokenizer LIMIT $4`,
      [storeId, after[0], after[1], FEED_PAGE],
    );
    if (page.rows.length === 0) break;
    m.db.putTokens(page.rows);
    const last = page.rows[page.rows.length - 1]!;
    after = [last.payload_sha256, last.tokenizer];
  }
}

/** Bootstrap: the node flags. */
async function bootstrapFlags(c: pg.ClientBase, m: Mirror, storeId: string): Promise<void> {
  for (let after = ''; ; ) {
    const page = await c.query<NodeFlag>(
      `SELECT artifact_sha256, sanitized FROM cf_flags
          WHERE store_id = $1 AND artifact_sha256 > $2 ORDER BY artifact_sha256 LIMIT $3`,
      [storeId, after, FEED_PAGE],
    );
    if (page.rows.length === 0) break;
    m.db.putFlags(page.rows);
    after = page.rows[page.rows.length - 1]!.artifact_sha256;
  }
}

/** Bootstrap: the eviction log, replayed in feed order (it holds each eviction's time). */
async function bootstrapEvictions(c: pg.ClientBase, m: Mirror, storeId: string): Promise<void> {
  const log = await c.query<{ step: string; evicted_at: string | null }>(
    'SELECT step, evicted_at FROM cf_changes WHERE store_id = $1 AND op = 2 ORDER BY seq',
    [storeId],
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
