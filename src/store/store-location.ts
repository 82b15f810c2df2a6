import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { pgClientOptions } from './pg/pg-client-options.js';
import { storeError } from './pg/pg-errors.js';
import { childPgUrl, isPgUrl, parsePgUrl } from './pg/pg-url.js';

export { isPgUrl } from './pg/pg-url.js';

/**
 * A store nested under another (a proxy's or middleware's per-session stores): a subdirectory,
 * or in a database the `store_id` extended by the segments.
 *
 * @example
 * subStore('/repo/.contextfold', ['sessions', 'a', '.contextfold']);
 * subStore('postgres://h/db?store_id=web', ['sessions', 'a']); // store_id web/sessions/a
 */
export function subStore(base: string, segments: readonly string[]): string {
  if (!isPgUrl(base)) return join(base, ...segments);
  // `.contextfold` names a directory on disk; in a database the session's name is enough.
  return childPgUrl(
    base,
    segments.filter((s) => s !== '.contextfold'),
  );
}

/**
 * The names directly under `base/<under>`: entries of a directory, or the next `store_id`
 * segment of the database's stores below it.
 */
export async function listSubStores(base: string, under: string): Promise<string[]> {
  if (!isPgUrl(base)) {
    try {
      return (await readdir(join(base, under))).sort();
    } catch {
      return [];
    }
  }
  const where = parsePgUrl(base);
  const prefix = `${where.storeId}/${under}/`;
  // Loaded here, not at the top: a process on local stores never loads the PostgreSQL client.
  const { default: pg } = await import('pg');
  const client = new pg.Client(pgClientOptions(where));
  try {
    await client.connect();
    const r = await client.query<{ store_id: string }>(
      'SELECT store_id FROM cf_stores WHERE left(store_id, length($1)) = $1',
      [prefix],
    );
    const names = new Set(r.rows.map((x) => x.store_id.slice(prefix.length).split('/')[0]!));
    return [...names].sort();
  } catch (e) {
    if ((e as { code?: string }).code === '42P01') return []; // no schema yet: no stores
    throw storeError(e, where.display, 'listing stores');
  } finally {
    await client.end().catch(() => {});
  }
}
