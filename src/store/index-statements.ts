// The prepared statements of one index connection, shared by `IndexDb` and the modules it
// delegates to. Preparing costs more than running most of them, so each is prepared once, on
// first use, under its key, and kept for the connection's life (never re-prepared per call).
import type Database from 'better-sqlite3';
import { type StoredBody, unpack } from './index-body.js';

/** A prepared statement of the index. */
export type Stmt = Database.Statement;

/**
 * The statement cache of one connection. Two callers naming one key share its statement (they
 * pass the same SQL): the eviction log rows and the single posting row are written from two
 * places each.
 */
export class IndexStatements {
  readonly db: Database.Database;
  readonly #s: Record<string, Stmt> = {};

  constructor(db: Database.Database) {
    this.db = db;
  }

  /** The statement under `key`, prepared from `sql` on first use. */
  get(key: string, sql: string): Stmt {
    let s = this.#s[key];
    if (!s) {
      s = this.db.prepare(sql);
      this.#s[key] = s;
    }
    return s;
  }

  /** Runs a statement that selects one deflated body column and unpacks each row's. */
  bodies(key: string, sql: string, ...params: unknown[]): string[] {
    const bodies = this.get(key, sql)
      .pluck()
      .all(...params) as StoredBody[];
    return bodies.map(unpack);
  }
}
