import { randomBytes } from 'node:crypto';
import { describe, it } from 'vitest';
import { isCi } from './shared-location.js';

/** The run's PostgreSQL server (the superuser URL, database `contextfold`), if it started. */
export const PG_URL = process.env.CONTEXTFOLD_TEST_PG_URL ?? null;

/** Why there is no server (set by the global setup), for the skip or the failure. */
export const PG_MISSING =
  process.env.CONTEXTFOLD_TEST_PG_SKIP ?? 'no PostgreSQL server (CONTEXTFOLD_TEST_PG_URL unset)';

/**
 * A store URL with a fresh `store_id` in the run's database: tests never see each other's rows.
 *
 * @example
 * const cf = await ContextFold.open({ store: pgStoreUrl('fold') });
 */
export function pgStoreUrl(label = 't'): string {
  if (!PG_URL) throw new Error(PG_MISSING);
  const id = `${label}-${process.pid}-${randomBytes(4).toString('hex')}`;
  return `${PG_URL}?store_id=${id}`;
}

/**
 * A suite that needs the PostgreSQL server: runs when it is there; under CI its absence is a
 * failing test naming the reason; elsewhere the suite is skipped with the reason in its title.
 */
export function describePg(title: string, fn: () => void): void {
  if (PG_URL) {
    describe(title, fn);
  } else if (isCi()) {
    describe(title, () => {
      it('needs its PostgreSQL server', () => {
        throw new Error(`CI=true: ${PG_MISSING}`);
      });
    });
  } else {
    describe.skip(`needs PostgreSQL (${PG_MISSING}): ${title}`, fn);
  }
}

/** The backends a parameterised suite runs on: the local store, and PostgreSQL when present. */
export type BackendName = 'local' | 'postgres';

/** The store for a suite case: the temp directory itself (local) or a fresh database store. */
export function storeFor(backend: BackendName, dir: string, label?: string): string {
  return backend === 'local' ? dir : pgStoreUrl(label);
}

/**
 * The matrix: `local` always; `postgres` when the server runs, or under CI (where a missing
 * server then fails).
 */
export const BACKENDS: readonly BackendName[] =
  PG_URL || isCi() ? ['local', 'postgres'] : ['local'];
