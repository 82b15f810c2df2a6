import type pg from 'pg';
import type { IndexDb, IndexState, StoredAnalysis } from '../index-db.js';
import { type ParsedEntry, parseEntry } from '../index-entry.js';

/**
 * The change feed as a process's mirror reads it: the mirror (an index and its place in the
 * feed), the feed's rows with the analyses they name, and the page query. Shared by following
 * the feed ({@link PgMirror}) and filling a mirror from the tables (pg-bootstrap).
 */

/** The in-memory index a process answers reads from, and how far it follows the feed. */
export interface Mirror {
  db: IndexDb;
  state: IndexState;
  seq: number;
  epoch: number;
}

/** Changes pulled per catch-up query. */
export const FEED_PAGE = 5000;

/** A change of the feed with its entry and analysis (null where the row is gone or has none). */
export interface FeedRow {
  seq: string;
  step: string;
  op: number;
  evicted_at: string | null;
  body: string | null;
  akey: string | null;
  length: number | null;
  parts: number | null;
  part_length: number | null;
  features: string | null;
  abody: string | null;
}

/** An analysis row of `cf_analyses`. */
export interface AnalysisRow {
  akey: string;
  length: number;
  parts: number;
  part_length: number;
  features: string;
  body: string;
}

/**
 * A stored analysis from its row (postings in forward form: JSON [terms, tfs]), or undefined
 * when the body is not that shape: derived content, so the node is analysed again from its
 * verified bytes instead.
 */
export function analysisFromRow(a: AnalysisRow): StoredAnalysis | undefined {
  let body: unknown;
  try {
    body = JSON.parse(a.body);
  } catch {
    return undefined;
  }
  if (!Array.isArray(body) || body.length !== 2) return undefined;
  const [terms, tfs] = body as unknown[];
  if (!Array.isArray(terms) || !Array.isArray(tfs) || terms.length !== tfs.length) return undefined;
  if (!terms.every((t) => typeof t === 'string') || !tfs.every((n) => Number.isInteger(n))) {
    return undefined;
  }
  return {
    akey: a.akey,
    terms: terms as string[],
    tfs: tfs as number[],
    length: a.length,
    parts: a.parts,
    partLength: a.part_length,
    features: a.features,
  };
}

/**
 * An entry row's body checked as a `recall_index.json` record is (the schema, then the step
 * its row is keyed by), or why it is refused.
 */
export function parseEntryRow(step: number, body: string): ParsedEntry {
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch {
    return { ok: false, reason: 'is not valid JSON' };
  }
  const parsed = parseEntry(raw);
  if (!parsed.ok || parsed.entry.step_id === step) return parsed;
  return { ok: false, reason: `holds step_id ${parsed.entry.step_id}` };
}

/** The row of `cf_entries` holding a step, as problems name it. */
export function entryRowPath(location: string, step: number): string {
  return `${location}#cf_entries/${step}`;
}

/**
 * Records a missing or malformed entry row as the mirror's load problem (the first one wins):
 * the row is left out of the mirror, operations refuse the store, `validate` reports it.
 */
export function refuseEntryRow(m: Mirror, location: string, step: number, reason: string): void {
  if (m.state.problem) return;
  const path = entryRowPath(location, step);
  m.state.problem = {
    kind: 'index',
    path,
    message: `the index row of step ${step} ${reason}: ${path}`,
  };
}

/** The columns of an {@link AnalysisRow}, for the queries that read one. */
export const ANALYSIS_COLUMNS = 'akey, length, parts, part_length, features, body';

/**
 * The next page of the feed with each row's entry and analysis. Three single-table lookups by
 * primary key rather than one join: right after a large load the planner's statistics are
 * stale, and it planned that join as nested sequential scans (1.3 s for 3,000 rows, 35 s for
 * 10,000); key lookups by `= ANY` keep one plan whatever the statistics say. A mirror that
 * ignores the stored analyses does not read them (`analyses` false).
 */
export async function feedPage(
  c: pg.ClientBase,
  storeId: string,
  after: number,
  analyses = true,
): Promise<FeedRow[]> {
  const changes = await c.query<{
    seq: string;
    step: string;
    op: number;
    evicted_at: string | null;
  }>(
    'SELECT seq, step, op, evicted_at FROM cf_changes WHERE store_id = $1 AND seq > $2 ORDER BY seq LIMIT $3',
    [storeId, after, FEED_PAGE],
  );
  if (changes.rows.length === 0) return [];
  const steps = [...new Set(changes.rows.map((r) => r.step))];
  const entries = await c.query<{ step: string; body: string; akey: string | null }>(
    'SELECT step, body, akey FROM cf_entries WHERE store_id = $1 AND step = ANY($2::bigint[])',
    [storeId, steps],
  );
  const byStep = new Map(entries.rows.map((e) => [e.step, e]));
  const akeys = [...new Set(entries.rows.flatMap((e) => (e.akey === null ? [] : [e.akey])))];
  const rows =
    akeys.length === 0 || !analyses
      ? []
      : (
          await c.query<AnalysisRow>(
            `SELECT ${ANALYSIS_COLUMNS} FROM cf_analyses WHERE store_id = $1 AND akey = ANY($2::text[])`,
            [storeId, akeys],
          )
        ).rows;
  const byKey = new Map(rows.map((a) => [a.akey, a]));
  return changes.rows.map((r) => {
    const e = byStep.get(r.step);
    const a = e?.akey ? byKey.get(e.akey) : undefined;
    return {
      ...r,
      body: e?.body ?? null,
      akey: e?.akey ?? null,
      length: a?.length ?? null,
      parts: a?.parts ?? null,
      part_length: a?.part_length ?? null,
      features: a?.features ?? null,
      abody: a?.body ?? null,
    };
  });
}
