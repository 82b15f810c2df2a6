// The layout of an index file and the check that a file is one: its identity (application id,
// schema version), its tables (DDL), the posting fields, and the error that sends an unusable
// file to a rebuild. A different schema is rebuilt, never migrated, so all of it lives here.
import type Database from 'better-sqlite3';
import { emptyState } from './index-state.js';

/** `PRAGMA application_id` of a contextfold index ("CFx1"): anything else is a foreign file. */
export const APPLICATION_ID = 0x43467831;
/** `PRAGMA user_version`: the schema below. A different version is rebuilt, never migrated. */
export const SCHEMA_VERSION = 6;

/** Posting fields. `reference`: the terms RGSC and recall match; `ranked`: retrieval keys. */
export const FIELD_REFERENCE = 0;
export const FIELD_RANKED = 1;

/** The index file cannot be used as ours: foreign, of another schema, or corrupt. */
export class IndexUnusable extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'IndexUnusable';
  }
}

const CORRUPT = new Set([
  'SQLITE_CORRUPT',
  'SQLITE_NOTADB',
  'SQLITE_CORRUPT_INDEX',
  'SQLITE_CORRUPT_SEQUENCE',
  'SQLITE_CORRUPT_VTAB',
  'SQLITE_IOERR_SHORT_READ',
  'SQLITE_FORMAT',
  'SQLITE_CANTOPEN',
]);

/** True for an error that means the file is not (or no longer) a usable index. */
export function isUnusable(e: unknown): boolean {
  if (e instanceof IndexUnusable) return true;
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' && CORRUPT.has(code);
}

const SCHEMA = `
CREATE TABLE state (id INTEGER PRIMARY KEY CHECK (id = 1), json TEXT NOT NULL);
CREATE TABLE entries (
  step INTEGER PRIMARY KEY,
  analysed INTEGER NOT NULL,
  evicted INTEGER NOT NULL,
  token_estimate INTEGER NOT NULL,
  payload_sha256 TEXT NOT NULL,
  artifact_sha256 TEXT NOT NULL,
  summary TEXT NOT NULL,
  body BLOB NOT NULL
);
CREATE INDEX entries_by_key ON entries (CAST(step AS TEXT));
CREATE INDEX entries_pending ON entries (step) WHERE analysed = 0;
CREATE INDEX entries_by_artifact ON entries (artifact_sha256);
CREATE TABLE docs (
  step INTEGER PRIMARY KEY,
  length INTEGER NOT NULL,
  parts INTEGER NOT NULL,
  part_length INTEGER NOT NULL,
  analysis INTEGER NOT NULL REFERENCES analyses (id)
);
CREATE TABLE terms (
  field INTEGER NOT NULL,
  term TEXT NOT NULL,
  id INTEGER NOT NULL,
  df INTEGER NOT NULL,
  PRIMARY KEY (field, term)
) WITHOUT ROWID;
CREATE TABLE postings (
  term INTEGER NOT NULL,
  last INTEGER NOT NULL,
  first INTEGER NOT NULL,
  n INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (term, last)
) WITHOUT ROWID;
CREATE TABLE analyses (
  id INTEGER PRIMARY KEY,
  akey TEXT NOT NULL UNIQUE,
  length INTEGER NOT NULL,
  parts INTEGER NOT NULL,
  part_length INTEGER NOT NULL,
  features BLOB NOT NULL,
  body BLOB NOT NULL
);
CREATE TABLE tokens (
  payload_sha256 TEXT NOT NULL,
  tokenizer TEXT NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (payload_sha256, tokenizer)
) WITHOUT ROWID;
CREATE TABLE flags (
  artifact_sha256 TEXT PRIMARY KEY,
  sanitized INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE evictions (seq INTEGER PRIMARY KEY, step INTEGER NOT NULL, evicted_at TEXT NOT NULL);
CREATE TABLE changes (seq INTEGER PRIMARY KEY, step INTEGER NOT NULL, op INTEGER NOT NULL);
`;

const TABLES = [
  'analyses',
  'changes',
  'docs',
  'entries',
  'evictions',
  'flags',
  'postings',
  'state',
  'terms',
  'tokens',
];

/**
 * Makes the open connection `db` an index to use: creates the schema in an empty file (with
 * `create`), else checks that the file is ours (application id, schema version, tables) and
 * throws {@link IndexUnusable} otherwise; then sets the connection's pragmas.
 */
export function prepareIndexFile(db: Database.Database, path: string, create: boolean): void {
  const appId = db.pragma('application_id', { simple: true }) as number;
  const tables = (
    db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").pluck().all() as string[]
  ).sort();
  if (tables.length === 0 && appId === 0 && create) {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec('BEGIN IMMEDIATE');
    // Another connection may have created it meanwhile: re-check under the write lock.
    const again = db.prepare("SELECT count(*) FROM sqlite_schema WHERE type = 'table'").pluck();
    if ((again.get() as number) === 0) {
      db.exec(SCHEMA);
      db.pragma(`application_id = ${APPLICATION_ID}`);
      db.pragma(`user_version = ${SCHEMA_VERSION}`);
      db.prepare('INSERT INTO state (id, json) VALUES (1, ?)').run(
        JSON.stringify(emptyState(null)),
      );
    }
    db.exec('COMMIT');
  } else {
    if (appId !== APPLICATION_ID) {
      throw new IndexUnusable(`${path} is not a contextfold index (a foreign SQLite file)`);
    }
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version !== SCHEMA_VERSION) {
      throw new IndexUnusable(`${path} has index schema ${version}, not ${SCHEMA_VERSION}`);
    }
    if (tables.join(',') !== TABLES.join(',')) {
      throw new IndexUnusable(`${path} does not have the tables of an index`);
    }
    if (!db.readonly && db.pragma('journal_mode', { simple: true }) !== 'wal') {
      db.pragma('journal_mode = WAL');
    }
    db.pragma('synchronous = NORMAL');
  }
  db.pragma('cache_size = -32000');
}
