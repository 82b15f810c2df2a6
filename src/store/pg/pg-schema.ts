import type pg from 'pg';
import { UsageError } from '../../protocol/errors.js';

/**
 * The schema's migrations, in order; `contextfold_schema` records which ran. A migration is
 * never edited once released: a change is a new entry. Every table is keyed by `store_id`, so
 * one database holds many stores that never see each other's rows.
 */
export const MIGRATIONS: readonly { version: number; sql: string }[] = [
  {
    version: 1,
    sql: `
CREATE TABLE cf_stores (
  store_id text PRIMARY KEY,
  created_at text NOT NULL,
  -- The change feed's position: every commit adds its changes at seq+1.. under the store's lock.
  seq bigint NOT NULL DEFAULT 0,
  -- Bumped when derived rows were replaced wholesale (reindex): mirrors start over.
  epoch integer NOT NULL DEFAULT 0,
  entries bigint NOT NULL DEFAULT 0,
  evicted bigint NOT NULL DEFAULT 0,
  token_estimate bigint NOT NULL DEFAULT 0
);
-- A cold node: the exact bytes of its reference-layout file and its three hashes (metadata for
-- SQL, never trusted: every read re-hashes the bytes).
CREATE TABLE cf_nodes (
  store_id text NOT NULL REFERENCES cf_stores ON DELETE CASCADE,
  step bigint NOT NULL,
  body bytea NOT NULL,
  artifact_sha256 text NOT NULL,
  payload_sha256 text NOT NULL,
  projection_sha256 text NOT NULL,
  PRIMARY KEY (store_id, step)
);
-- An index entry as folded (canonical JSON, evicted false), whether it was evicted since, and
-- the key of its ranked analysis.
CREATE TABLE cf_entries (
  store_id text NOT NULL REFERENCES cf_stores ON DELETE CASCADE,
  step bigint NOT NULL,
  body text NOT NULL,
  evicted boolean NOT NULL DEFAULT false,
  akey text,
  -- No foreign key to cf_nodes: a node row deleted behind the engine's back must be reported
  -- (BrokenReferenceError, like a missing file), not make the entry vanish or block the delete.
  PRIMARY KEY (store_id, step)
);
-- Ranked postings in forward form: each analysis's retrieval keys with their term frequencies
-- (JSON [terms, tfs]), its length and the analyzer's opaque features.
CREATE TABLE cf_analyses (
  store_id text NOT NULL REFERENCES cf_stores ON DELETE CASCADE,
  akey text NOT NULL,
  length integer NOT NULL,
  features text NOT NULL,
  body text NOT NULL,
  PRIMARY KEY (store_id, akey)
);
CREATE TABLE cf_tokens (
  store_id text NOT NULL REFERENCES cf_stores ON DELETE CASCADE,
  payload_sha256 text NOT NULL,
  tokenizer text NOT NULL,
  count integer NOT NULL,
  PRIMARY KEY (store_id, payload_sha256, tokenizer)
);
-- The change feed (op 1 fold, 2 evict, 3 analysed): what every process's mirror follows, and
-- the eviction log (evicted_at) in order.
CREATE TABLE cf_changes (
  store_id text NOT NULL REFERENCES cf_stores ON DELETE CASCADE,
  seq bigint NOT NULL,
  step bigint NOT NULL,
  op smallint NOT NULL,
  evicted_at text,
  PRIMARY KEY (store_id, seq)
);
-- Opaque records a harness keeps beside the archive (session events), in append order.
CREATE TABLE cf_records (
  store_id text NOT NULL REFERENCES cf_stores ON DELETE CASCADE,
  kind text NOT NULL,
  seq bigserial,
  body text NOT NULL,
  PRIMARY KEY (store_id, kind, seq)
);
`,
  },
  {
    version: 2,
    sql: `
-- Ranked analyses' scoring parts (blocks) and their summed length (ranked v2). Rows of older
-- analyzers keep 0: their keys name another analyzer version, so they are never read as v2.
ALTER TABLE cf_analyses ADD COLUMN parts integer NOT NULL DEFAULT 0;
ALTER TABLE cf_analyses ADD COLUMN part_length integer NOT NULL DEFAULT 0;
-- Entries removed by repair (their node gone or untrustworthy), with the reason: the journal's
-- drop records. A drop deletes the entry's row and its feed rows and bumps the epoch.
CREATE TABLE cf_drops (
  store_id text NOT NULL REFERENCES cf_stores ON DELETE CASCADE,
  id bigserial,
  step bigint NOT NULL,
  dropped_at text NOT NULL,
  reason text NOT NULL,
  PRIMARY KEY (store_id, id)
);
`,
  },
  {
    version: 3,
    sql: `
-- Nodes' sanitized flags by artifact hash (which names the node's exact content, flag
-- included): status counts redacted nodes without reading every node. Derived, best effort.
CREATE TABLE cf_flags (
  store_id text NOT NULL REFERENCES cf_stores ON DELETE CASCADE,
  artifact_sha256 text NOT NULL,
  sanitized boolean NOT NULL,
  PRIMARY KEY (store_id, artifact_sha256)
);
`,
  },
];

/** The newest schema version this code knows. */
export const PG_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/** Advisory lock key taken (session level) while migrating: one migrator at a time. */
const MIGRATE_LOCK = 0x43466d31;

/** The tables the migrations create (what a database must not hold before contextfold's first use). */
const TABLES = MIGRATIONS.flatMap((m) =>
  [...m.sql.matchAll(/CREATE TABLE (\w+)/g)].map((x) => x[1]!),
);

/** The table that records which migrations ran. */
const SCHEMA_TABLE =
  'CREATE TABLE contextfold_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())';

/**
 * Brings the database's schema to {@link PG_SCHEMA_VERSION}: each missing migration in its own
 * transaction, under an advisory lock so concurrent first opens do not race. A current schema
 * is only read (a role without CREATE rights can use it). A database newer than this code is
 * refused (never downgraded), and so is one holding tables of contextfold's names that it did
 * not create (another application's database): nothing is created there.
 */
export async function migrate(client: pg.ClientBase): Promise<number> {
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATE_LOCK]);
  try {
    const known = await client.query<{ known: boolean }>(
      "SELECT to_regclass('contextfold_schema') IS NOT NULL AS known",
    );
    let recorded = known.rows[0]?.known === true;
    let current = 0;
    if (recorded) {
      const r = await client.query<{ v: number | null }>(
        'SELECT max(version) AS v FROM contextfold_schema',
      );
      current = r.rows[0]?.v ?? 0;
    } else {
      const taken = await client.query<{ t: string }>(
        'SELECT t FROM unnest($1::text[]) AS t WHERE to_regclass(t) IS NOT NULL ORDER BY t',
        [TABLES],
      );
      if (taken.rows.length > 0) {
        throw new UsageError(
          `the database already holds tables contextfold did not create (${taken.rows.map((r) => r.t).join(', ')}) and no contextfold_schema: give contextfold a database of its own`,
        );
      }
    }
    if (current > PG_SCHEMA_VERSION) {
      throw new UsageError(
        `the database's contextfold schema is version ${current}, newer than this contextfold understands (${PG_SCHEMA_VERSION}): upgrade contextfold`,
      );
    }
    for (const m of MIGRATIONS) {
      if (m.version <= current) continue;
      await client.query('BEGIN');
      try {
        if (!recorded) await client.query(SCHEMA_TABLE);
        await client.query(m.sql);
        await client.query('INSERT INTO contextfold_schema (version) VALUES ($1)', [m.version]);
        await client.query('COMMIT');
        recorded = true;
      } catch (e) {
        await client.query('ROLLBACK').catch(() => {});
        throw e;
      }
    }
    return PG_SCHEMA_VERSION;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATE_LOCK]).catch(() => {});
  }
}
