import { closeSync, openSync, readSync } from 'node:fs';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { foldToken } from '../extract/fold-token.js';
import type { IndexEntry } from '../protocol/types.js';
import type { NodeAnalysisRecord } from './analysis-record.js';
import type { FileIdentity } from './file-identity.js';
import type { FlagCounts, NodeFlag } from './node-flag.js';
import {
  decodePostings,
  encodePostings,
  type PostingBlock,
  PostingBlockError,
} from './posting-block.js';

/** `PRAGMA application_id` of a contextfold index ("CFx1"): anything else is a foreign file. */
export const APPLICATION_ID = 0x43467831;
/** `PRAGMA user_version`: the schema below. A different version is rebuilt, never migrated. */
export const SCHEMA_VERSION = 6;

/** Posting fields. `reference`: the terms RGSC and recall match; `ranked`: retrieval keys. */
export const FIELD_REFERENCE = 0;
export const FIELD_RANKED = 1;

/** A state problem found while loading: the store refuses to serve until it is resolved. */
export interface LoadProblem {
  kind: 'index' | 'journal';
  path: string;
  message: string;
  /** The journal's last line has no newline (an interrupted append), and nothing else is wrong. */
  torn?: true;
}

/**
 * Everything the index derived and how far: the durable files it reflects (identities, snapshot
 * hash, journal offset) and the collection counters. One JSON row, read on every refresh.
 */
export interface IndexState {
  /** A build finished: the rows reflect `snapshot` + `journal` up to `journalOffset`. */
  complete: boolean;
  snapshot: FileIdentity | null;
  snapshotSha256: string | null;
  /** The snapshot's content was hashed after its racy window: identity alone now proves it. */
  snapshotVerified: boolean;
  evictionLog: FileIdentity | null;
  journal: FileIdentity | null;
  journalOffset: number;
  journalLines: number;
  journalRecords: number;
  /** The journal's base names an older snapshot (a compaction died before removing it). */
  journalStale: boolean;
  createdAt: string | null;
  /** Version of the analyzer whose analyses `entries.akey` refer to. */
  analyzer: string | null;
  /** Bumped by every rebuild: caches of other processes drop everything. */
  epoch: number;
  entries: number;
  evicted: number;
  tokenEstimate: number;
  rankedDocs: number;
  rankedLength: number;
  /** Scoring parts (blocks) of the analysed documents and the sum of their lengths. */
  rankedParts: number;
  rankedPartLength: number;
  /** Next term id to assign. */
  nextTermId: number;
  /** Why the durable state cannot be served (as of the identities above), or null. */
  problem: LoadProblem | null;
}

/** A fresh state: nothing derived yet. */
export function emptyState(analyzer: string | null): IndexState {
  return {
    complete: false,
    snapshot: null,
    snapshotSha256: null,
    snapshotVerified: false,
    evictionLog: null,
    journal: null,
    journalOffset: 0,
    journalLines: 0,
    journalRecords: 0,
    journalStale: false,
    createdAt: null,
    analyzer,
    epoch: 0,
    entries: 0,
    evicted: 0,
    tokenEstimate: 0,
    rankedDocs: 0,
    rankedLength: 0,
    rankedParts: 0,
    rankedPartLength: 0,
    nextTermId: 1,
    problem: null,
  };
}

/** A node's stored analysis, as the backend defines it (see {@link NodeAnalysisRecord}). */
export type StoredAnalysis = NodeAnalysisRecord;

/** One fold to apply: the entry, its canonical JSON, and its analysis when known. */
export interface FoldRow {
  entry: IndexEntry;
  json: string;
  analysis?: StoredAnalysis;
}

/** Ranked statistics of one analysed node (what a scan reads for every turn it numbers). */
export interface DocStats {
  step: number;
  length: number;
}

/** What a scan reads only for the turns it scores in full: the analysis and the token key. */
export interface DocDetail {
  /** The analyzer's opaque features (see `decodeStoredAnalysis`). */
  features: string;
  /** Of the document's index entry: what its token count is stored under, without the entry. */
  payload_sha256: string;
  token_estimate: number;
}

/**
 * One change other processes' caches must follow (`op`: 1 fold, 2 evict, 3 analysed). A drop
 * (rare: repair) bumps the epoch instead, so every cache starts over.
 */
export interface ChangeRow {
  seq: number;
  step: number;
  op: number;
}

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

/** The terms RGSC and recall match for an entry: identifiers ∪ folded files ∪ folded errors. */
export function referenceTerms(entry: IndexEntry): string[] {
  const out = new Set<string>(entry.identifiers);
  for (const f of entry.files) out.add(foldToken(f));
  for (const e of entry.errors) out.add(foldToken(e));
  return [...out];
}

type Stmt = Database.Statement;

/** Postings of one term collected for a batch insert. */
interface Group {
  field: number;
  term: string;
  steps: number[];
  tfs: number[];
}

/**
 * Entry JSON and analyses are kept deflated (fast level) in an index file: they are most of its
 * bytes, and a row that fits a page several times over keeps lookups to one page read.
 */
function deflate(text: string): Buffer {
  return deflateRawSync(text, { level: 1 });
}

/** A stored body: a deflated BLOB in an index file, TEXT in an uncompressed (in-memory) index. */
type StoredBody = Buffer | string;

/**
 * A stored body as text. An index that is never written to disk (a database store's in-memory
 * mirror) keeps bodies as plain TEXT, which SQLite returns as a string; a file keeps BLOBs.
 */
function unpack(body: StoredBody): string {
  return typeof body === 'string' ? body : inflateRawSync(body).toString('utf8');
}

/** Posting blocks inserted per statement. */
const POST_ROWS = 128;
const POST_ONE = 'INSERT INTO postings (term, last, first, n, data) VALUES (?, ?, ?, ?, ?)';

/** The `k`-th highest step of the blocks (k ≤ their postings). */
function kthHighest(blocks: readonly PostingBlock[], k: number): number {
  if (blocks.length === 1) return blocks[0]!.steps[blocks[0]!.steps.length - k]!;
  const all = blocks.flatMap((b) => b.steps).sort((a, b) => b - a);
  return all[k - 1]!;
}

/** The `limit` highest postings of the blocks, ascending. */
function newestOf(blocks: readonly PostingBlock[], limit: number): PostingBlock {
  if (blocks.length === 1) {
    const b = blocks[0]!;
    const from = Math.max(0, b.steps.length - limit);
    return from === 0 ? b : { steps: b.steps.slice(from), tfs: b.tfs.slice(from) };
  }
  const pairs: [number, number][] = [];
  for (const b of blocks)
    for (let i = 0; i < b.steps.length; i++) pairs.push([b.steps[i]!, b.tfs[i]!]);
  pairs.sort((a, b) => a[0] - b[0]);
  const kept = pairs.slice(Math.max(0, pairs.length - limit));
  return { steps: kept.map((p) => p[0]), tfs: kept.map((p) => p[1]) };
}

/** Postings of a batch, by field and term. */
type Groups = [Map<string, Group>, Map<string, Group>];

const newGroups = (): Groups => [new Map(), new Map()];

function group(groups: Groups, field: number, term: string): Group {
  const byTerm = groups[field]!;
  let g = byTerm.get(term);
  if (!g) {
    g = { field, term, steps: [], tfs: [] };
    byTerm.set(term, g);
  }
  return g;
}

/** SQLite header offsets of the file format bytes: 2 and 2 in WAL mode, 1 and 1 in rollback. */
const FORMAT_WRITE = 18;
const FORMAT_READ = 19;

/**
 * The image of a WAL-mode database file as a rollback-journal one, for opening in memory: a
 * deserialised WAL database cannot be read at all (SQLite needs its -shm file), so the file
 * format bytes are set to 1 = legacy. Nothing else differs.
 */
function asRollbackImage(bytes: Buffer): Buffer {
  if (bytes.length >= 100 && bytes[FORMAT_WRITE] === 2 && bytes[FORMAT_READ] === 2) {
    bytes[FORMAT_WRITE] = 1;
    bytes[FORMAT_READ] = 1;
  }
  return bytes;
}

/** True when an index file's header says rollback-journal mode (a read-only open creates nothing). */
export function isRollbackFile(path: string): boolean {
  try {
    const fd = openSync(path, 'r');
    try {
      const head = Buffer.alloc(FORMAT_READ + 1);
      const n = readSync(fd, head, 0, head.length, 0);
      return n === head.length && head[FORMAT_WRITE] === 1 && head[FORMAT_READ] === 1;
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
}

/**
 * The SQLite file of the derived index (schema, statements, row-level operations). It knows
 * nothing of journals or locks: {@link LocalStore} decides what to apply and when. Opening checks
 * that the file is ours (application id, schema version, tables) and throws
 * {@link IndexUnusable} otherwise.
 */
export class IndexDb {
  readonly db: Database.Database;
  readonly path: string;
  readonly #s: Record<string, Stmt> = {};
  /** How bodies are stored: deflated BLOBs (an index file), or TEXT (`compress: false`). */
  readonly #pack: (text: string) => StoredBody = deflate;

  /**
   * Opens (or with `create`, creates) the index at `path`. With `bytes`, a private in-memory
   * copy of an index file is opened instead (`path` names it in messages): nothing is written
   * to the file system, not even SQLite's WAL files.
   */
  constructor(
    path: string,
    options: { create: boolean; bytes?: Buffer; readonly?: boolean; compress?: boolean },
  ) {
    this.path = path;
    if (options.compress === false) this.#pack = (text) => text;
    let db: Database.Database;
    try {
      db = options.bytes
        ? new Database(asRollbackImage(options.bytes))
        : new Database(path, {
            fileMustExist: !options.create,
            timeout: 10_000,
            readonly: options.readonly === true,
          });
    } catch (e) {
      throw new IndexUnusable(`cannot open ${path}: ${(e as Error).message}`, { cause: e });
    }
    this.db = db;
    try {
      this.#prepareFile(options.create);
    } catch (e) {
      db.close();
      if (e instanceof IndexUnusable) throw e;
      throw new IndexUnusable(`${path} is not a usable index: ${(e as Error).message}`, {
        cause: e,
      });
    }
  }

  #prepareFile(create: boolean): void {
    const db = this.db;
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
        throw new IndexUnusable(`${this.path} is not a contextfold index (a foreign SQLite file)`);
      }
      const version = db.pragma('user_version', { simple: true }) as number;
      if (version !== SCHEMA_VERSION) {
        throw new IndexUnusable(`${this.path} has index schema ${version}, not ${SCHEMA_VERSION}`);
      }
      if (tables.join(',') !== TABLES.join(',')) {
        throw new IndexUnusable(`${this.path} does not have the tables of an index`);
      }
      if (!db.readonly && db.pragma('journal_mode', { simple: true }) !== 'wal') {
        db.pragma('journal_mode = WAL');
      }
      db.pragma('synchronous = NORMAL');
    }
    db.pragma('cache_size = -32000');
    this.state(); // a first read: fails now on a file that is not a database
  }

  #stmt(key: string, sql: string): Stmt {
    let s = this.#s[key];
    if (!s) {
      s = this.db.prepare(sql);
      this.#s[key] = s;
    }
    return s;
  }

  /** Runs a statement that selects one deflated body column and unpacks each row's. */
  #bodies(key: string, sql: string, ...params: unknown[]): string[] {
    const bodies = this.#stmt(key, sql)
      .pluck()
      .all(...params) as StoredBody[];
    return bodies.map(unpack);
  }

  /** Runs `fn` in one write transaction (BEGIN IMMEDIATE). */
  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  /**
   * Closes, leaving the file in rollback-journal mode when this is its last connection (then a
   * read-only process can open it without creating `-wal`/`-shm` files beside it). With another
   * connection open anywhere the switch fails at once and the file stays in WAL mode; the next
   * writer to open it switches back to WAL.
   */
  closeAsRollback(): void {
    if (!this.db.open) return;
    try {
      this.db.pragma('busy_timeout = 0');
      this.db.pragma('journal_mode = DELETE');
    } catch {
      // Busy (another connection) or read-only: left as it is.
    }
    this.db.close();
  }

  // --- state ---

  state(): IndexState {
    const json = this.#stmt('state', 'SELECT json FROM state WHERE id = 1').pluck().get() as
      | string
      | undefined;
    if (json === undefined) throw new IndexUnusable(`${this.path} has no state row`);
    return JSON.parse(json) as IndexState;
  }

  setState(state: IndexState): void {
    this.#stmt('setState', 'UPDATE state SET json = ? WHERE id = 1').run(JSON.stringify(state));
  }

  /** Highest change sequence number (0 when none). */
  changeSeq(): number {
    return this.#stmt('seq', 'SELECT coalesce(max(seq), 0) FROM changes').pluck().get() as number;
  }

  /** Empties the change feed (call with an epoch bump: readers then start over). */
  clearChanges(): void {
    this.db.exec('DELETE FROM changes');
  }

  changesSince(seq: number, limit: number): ChangeRow[] {
    return this.#stmt(
      'changes',
      'SELECT seq, step, op FROM changes WHERE seq > ? ORDER BY seq LIMIT ?',
    ).all(seq, limit) as ChangeRow[];
  }

  // --- bulk lifecycle ---

  /** Forgets every ranked posting (the analyzer changed): every entry becomes pending again. */
  dropRanked(): void {
    this.db.exec(
      `DELETE FROM postings WHERE term IN (SELECT id FROM terms WHERE field = ${FIELD_RANKED});
       DELETE FROM terms WHERE field = ${FIELD_RANKED};
       DELETE FROM docs;
       UPDATE entries SET analysed = 0 WHERE analysed = 1;`,
    );
  }

  // --- entries ---

  entryJson(step: number): string | undefined {
    const body = this.#stmt('entry', 'SELECT body FROM entries WHERE step = ?').pluck().get(step) as
      | StoredBody
      | undefined;
    return body === undefined ? undefined : unpack(body);
  }

  /** Up to `limit` entries' JSON with step > `after`, in step order. */
  entriesAfter(after: number, limit: number): string[] {
    const sql = 'SELECT body FROM entries WHERE step > ? ORDER BY step LIMIT ?';
    return this.#bodies('page', sql, after, limit);
  }

  /** Up to `limit` entries' JSON from the `offset`-th on, in step order. */
  entriesAt(offset: number, limit: number): string[] {
    const sql = 'SELECT body FROM entries ORDER BY step LIMIT ? OFFSET ?';
    return this.#bodies('pageAt', sql, limit, offset);
  }

  /** Up to `limit` nodes after `key` in code-point order of their keys (for the snapshot). */
  nodesAfterKey(key: string, limit: number): { key: string; json: string }[] {
    const rows = this.#stmt(
      'byKey',
      'SELECT CAST(step AS TEXT), body FROM entries WHERE CAST(step AS TEXT) > ? ORDER BY CAST(step AS TEXT) LIMIT ?',
    )
      .raw()
      .all(key, limit) as [string, StoredBody][];
    return rows.map(([k, body]) => ({ key: k, json: unpack(body) }));
  }

  /** Entries whose ranked analysis is not applied yet, step > `after`, in step order. */
  pending(
    after: number,
    limit: number,
  ): { step: number; payload_sha256: string; summary: string }[] {
    return this.#stmt(
      'pending',
      'SELECT step, payload_sha256, summary FROM entries WHERE analysed = 0 AND step > ? ORDER BY step LIMIT ?',
    ).all(after, limit) as { step: number; payload_sha256: string; summary: string }[];
  }

  evictions(): { step_id: number; evicted_at: string }[] {
    return this.#stmt(
      'evictions',
      'SELECT step AS step_id, evicted_at FROM evictions ORDER BY seq',
    ).all() as { step_id: number; evicted_at: string }[];
  }

  // --- writes (inside a transaction) ---

  #termId(field: number, term: string, addDf: number, state: IndexState): number {
    // One statement per term of a batch: a known term gets its frequency added and keeps its
    // id; a new one takes the next id.
    const id = this.#stmt(
      'termUpsert',
      'INSERT INTO terms (field, term, id, df) VALUES (?, ?, ?, ?) ON CONFLICT (field, term) DO UPDATE SET df = df + excluded.df RETURNING id',
    )
      .pluck()
      .get(field, term, state.nextTermId, addDf) as number;
    if (id === state.nextTermId) state.nextTermId++;
    return id;
  }

  #post(groups: Groups, state: IndexState): void {
    // A row per term of the batch (its steps in one block, see posting-block.ts), many rows per
    // statement: the cost of a row is mostly the call into SQLite.
    const many = this.#stmt(
      'postMany',
      `INSERT INTO postings (term, last, first, n, data) VALUES ${'(?, ?, ?, ?, ?), '.repeat(POST_ROWS - 1)}(?, ?, ?, ?, ?)`,
    );
    const one = this.#stmt('post', POST_ONE);
    const byId: [number, Group][] = [];
    for (const g of [...groups[0].values(), ...groups[1].values()]) {
      byId.push([this.#termId(g.field, g.term, g.steps.length, state), g]);
    }
    // In key order, the rows of a batch go into the B-tree in one sweep instead of at random.
    byId.sort((a, b) => a[0] - b[0]);
    const args: (number | Buffer)[] = [];
    for (const [id, g] of byId) {
      const b = encodePostings(g.steps, g.tfs);
      args.push(id, b.last, b.first, g.steps.length, b.data);
      if (args.length === POST_ROWS * 5) {
        many.run(args);
        args.length = 0;
      }
    }
    for (let i = 0; i < args.length; i += 5) one.run(args.slice(i, i + 5));
  }

  /**
   * A document's ranked statistics, and its postings queued in `groups`. Its features are those
   * of its analysis row (stored once, by content address, here if it is not yet): a document row
   * stays a few bytes, so a scan that numbers thousands of turns reads few pages.
   */
  #doc(step: number, a: StoredAnalysis, groups: Groups, state: IndexState): void {
    const analysis = this.#analysisId(a.akey) ?? this.#putAnalysis(a);
    this.#stmt(
      'doc',
      'INSERT INTO docs (step, length, parts, part_length, analysis) VALUES (?, ?, ?, ?, ?)',
    ).run(step, a.length, a.parts, a.partLength, analysis);
    for (let i = 0; i < a.terms.length; i++) {
      const g = group(groups, FIELD_RANKED, a.terms[i]!);
      g.steps.push(step);
      g.tfs.push(a.tfs[i]!);
    }
    state.rankedDocs++;
    state.rankedLength += a.length;
    state.rankedParts += a.parts;
    state.rankedPartLength += a.partLength;
  }

  #change(step: number, op: number): void {
    this.#stmt('change', 'INSERT INTO changes (step, op) VALUES (?, ?)').run(step, op);
  }

  /** Stores analyses by content address (existing ones are kept). */
  putAnalyses(list: readonly StoredAnalysis[]): void {
    for (const a of list) this.#putAnalysis(a);
  }

  /** Stores one analysis unless its key is stored; returns its row id. */
  #putAnalysis(a: StoredAnalysis): number {
    // Compressed: the keys of the nodes are most of the index's bytes.
    const body = this.#pack(JSON.stringify([a.terms, a.tfs]));
    const r = this.#stmt(
      'putAnalysis',
      'INSERT OR IGNORE INTO analyses (akey, length, parts, part_length, features, body) VALUES (?, ?, ?, ?, ?, ?)',
    ).run(a.akey, a.length, a.parts, a.partLength, this.#pack(a.features), body);
    return r.changes === 1 ? Number(r.lastInsertRowid) : this.#analysisId(a.akey)!;
  }

  #analysisId(akey: string): number | undefined {
    return this.#stmt('analysisId', 'SELECT id FROM analyses WHERE akey = ?').pluck().get(akey) as
      | number
      | undefined;
  }

  /** Stored analyses by key (missing keys absent). */
  analyses(akeys: readonly string[]): Map<string, StoredAnalysis> {
    const out = new Map<string, StoredAnalysis>();
    const get = this.#stmt(
      'getAnalysis',
      'SELECT length, parts, part_length, features, body FROM analyses WHERE akey = ?',
    );
    for (const akey of akeys) {
      const r = get.get(akey) as
        | {
            length: number;
            parts: number;
            part_length: number;
            features: StoredBody;
            body: StoredBody;
          }
        | undefined;
      if (!r) continue;
      const [terms, tfs] = JSON.parse(unpack(r.body)) as [string[], number[]];
      out.set(akey, {
        akey,
        length: r.length,
        parts: r.parts,
        partLength: r.part_length,
        features: unpack(r.features),
        terms,
        tfs,
      });
    }
    return out;
  }

  /**
   * Inserts entries with their reference postings, and their ranked statistics and postings
   * when the analysis is given; counts them into `state`. Steps must not be indexed yet.
   */
  insertFolds(rows: readonly FoldRow[], state: IndexState): void {
    const groups = newGroups();
    const ins = this.#stmt(
      'insertEntry',
      'INSERT INTO entries (step, analysed, evicted, token_estimate, payload_sha256, artifact_sha256, summary, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    for (const r of rows) {
      const e = r.entry;
      ins.run(
        e.step_id,
        r.analysis ? 1 : 0,
        e.evicted ? 1 : 0,
        e.token_estimate,
        e.payload_sha256,
        e.artifact_sha256,
        e.summary,
        this.#pack(r.json),
      );
      for (const t of referenceTerms(e)) {
        const g = group(groups, FIELD_REFERENCE, t);
        g.steps.push(e.step_id);
        g.tfs.push(1);
      }
      if (r.analysis) this.#doc(e.step_id, r.analysis, groups, state);
      state.entries++;
      if (e.evicted) state.evicted++;
      state.tokenEstimate += e.token_estimate;
      this.#change(e.step_id, 1);
    }
    this.#post(groups, state);
  }

  /** Marks an entry evicted (its canonical JSON replaced) and logs the eviction. */
  evict(step: number, json: string, evictedAt: string, wasEvicted: boolean, state: IndexState) {
    this.#stmt('evict', 'UPDATE entries SET body = ?, evicted = 1 WHERE step = ?').run(
      this.#pack(json),
      step,
    );
    this.#stmt('logEvict', 'INSERT INTO evictions (step, evicted_at) VALUES (?, ?)').run(
      step,
      evictedAt,
    );
    if (!wasEvicted) state.evicted++;
    this.#change(step, 2);
  }

  /** Appends eviction log rows without touching entries (loading `eviction_log.json`). */
  logEvictions(list: readonly { step_id: number; evicted_at: string }[]): void {
    const ins = this.#stmt('logEvict', 'INSERT INTO evictions (step, evicted_at) VALUES (?, ?)');
    for (const e of list) ins.run(e.step_id, e.evicted_at);
  }

  /**
   * Applies analyses to pending entries (those still without one and with the same payload and
   * summary: an entry replaced meanwhile is left alone). Returns how many were applied.
   */
  attachAnalyses(
    list: readonly {
      step: number;
      payload_sha256: string;
      summary: string;
      analysis: StoredAnalysis;
    }[],
    state: IndexState,
  ): number {
    this.putAnalyses(list.map((x) => x.analysis));
    const upd = this.#stmt(
      'attach',
      'UPDATE entries SET analysed = 1 WHERE step = ? AND analysed = 0 AND payload_sha256 = ? AND summary = ?',
    );
    const groups = newGroups();
    let applied = 0;
    for (const x of list) {
      if (upd.run(x.step, x.payload_sha256, x.summary).changes === 0) continue;
      applied++;
      this.#doc(x.step, x.analysis, groups, state);
      this.#change(x.step, 3);
    }
    this.#post(groups, state);
    return applied;
  }

  putTokens(list: readonly { payload_sha256: string; tokenizer: string; count: number }[]): void {
    const ins = this.#stmt(
      'putTokens',
      'INSERT OR IGNORE INTO tokens (payload_sha256, tokenizer, count) VALUES (?, ?, ?)',
    );
    for (const t of list) ins.run(t.payload_sha256, t.tokenizer, t.count);
  }

  tokens(payloadSha256: string, tokenizer: string): number | undefined {
    return this.#stmt(
      'tokens',
      'SELECT count FROM tokens WHERE payload_sha256 = ? AND tokenizer = ?',
    )
      .pluck()
      .get(payloadSha256, tokenizer) as number | undefined;
  }

  /** Records nodes' `sanitized` flags (first write wins: a flag never changes under its hash). */
  putFlags(list: readonly NodeFlag[]): void {
    const ins = this.#stmt(
      'putFlags',
      'INSERT OR IGNORE INTO flags (artifact_sha256, sanitized) VALUES (?, ?)',
    );
    for (const f of list) ins.run(f.artifact_sha256, f.sanitized ? 1 : 0);
  }

  /** Entries by the recorded `sanitized` flag of their node: one pass in SQL, no row decoded. */
  flagCounts(): FlagCounts {
    const row = this.#stmt(
      'flagCounts',
      `SELECT count(*) AS entries, coalesce(sum(f.sanitized = 1), 0) AS sanitized,
              coalesce(sum(f.sanitized = 0), 0) AS unsanitized
         FROM entries e LEFT JOIN flags f ON f.artifact_sha256 = e.artifact_sha256`,
    ).get() as { entries: number; sanitized: number; unsanitized: number };
    return {
      sanitized: row.sanitized,
      unsanitized: row.unsanitized,
      unknown: row.entries - row.sanitized - row.unsanitized,
    };
  }

  /** Up to `limit` entries' JSON with step > `after` whose node has no recorded flag. */
  unflaggedAfter(after: number, limit: number): string[] {
    return this.#bodies(
      'unflagged',
      `SELECT e.body FROM entries e
        WHERE e.step > ? AND NOT EXISTS (SELECT 1 FROM flags f WHERE f.artifact_sha256 = e.artifact_sha256)
        ORDER BY e.step LIMIT ?`,
      after,
      limit,
    );
  }

  // --- postings ---

  /** Document frequency of a term in a field (0 when unknown). */
  df(field: number, term: string): number {
    return (
      (this.#stmt('df', 'SELECT df FROM terms WHERE field = ? AND term = ?')
        .pluck()
        .get(field, term) as number | undefined) ?? 0
    );
  }

  /** Every step holding a term, ascending. */
  allPostings(field: number, term: string): number[] {
    const rows = this.#stmt(
      'allPostings',
      'SELECT p.n, p.data FROM terms t JOIN postings p ON p.term = t.id WHERE t.field = ? AND t.term = ? ORDER BY p.last',
    )
      .raw()
      .all(field, term) as [number, Uint8Array][];
    if (rows.length === 1) return this.#decode(rows[0]![1], rows[0]![0]).steps;
    const steps: number[] = [];
    for (const [n, data] of rows) {
      for (const s of this.#decode(data, n).steps) steps.push(s);
    }
    // Blocks of batches folded out of step order overlap.
    for (let i = 1; i < steps.length; i++) {
      if (steps[i]! <= steps[i - 1]!) return steps.sort((a, b) => a - b);
    }
    return steps;
  }

  /**
   * The postings of a term, ascending: the `limit` most recent with their term frequencies, or
   * all of them (`limit` undefined; reference postings, whose frequency is always 1).
   */
  postingList(field: number, term: string, limit?: number): { steps: number[]; tfs: number[] } {
    if (limit !== undefined) return this.recentPostings(field, term, limit);
    const steps = this.allPostings(field, term);
    return { steps, tfs: new Array<number>(steps.length).fill(1) };
  }

  /** The `limit` highest steps holding a term with their term frequencies, ascending. */
  recentPostings(field: number, term: string, limit: number): { steps: number[]; tfs: number[] } {
    if (limit <= 0) return { steps: [], tfs: [] };
    const rows = this.#stmt(
      'recent',
      'SELECT p.last, p.n, p.data FROM terms t JOIN postings p ON p.term = t.id WHERE t.field = ? AND t.term = ? ORDER BY p.last DESC',
    )
      .raw()
      .iterate(field, term) as IterableIterator<[number, number, Uint8Array]>;
    // Blocks newest first. Blocks of batches folded out of step order overlap, so reading stops
    // only at a block whose highest step is below the `limit`-th highest step read so far.
    const blocks: PostingBlock[] = [];
    let read = 0;
    let floor = -1;
    for (const [last, n, data] of rows) {
      if (read >= limit && last < floor) break;
      const b = this.#decode(data, n);
      blocks.push(b);
      read += n;
      if (read >= limit) floor = kthHighest(blocks, limit);
    }
    return newestOf(blocks, limit);
  }

  /**
   * The `limit` most frequent terms of a field (ties in code-point order) that start with
   * `prefix`, are longer than it and have at most `maxLength` code points. SQLite sorts the
   * range: a prefix with 30,000 extensions costs one statement, not 30,000 lookups.
   */
  topTermsWithPrefix(field: number, prefix: string, maxLength: number, limit: number): string[] {
    return this.#stmt(
      'topPrefix',
      `SELECT term FROM terms WHERE field = ? AND term > ? AND term < ? AND length(term) <= ?
       ORDER BY df DESC, term LIMIT ?`,
    )
      .pluck()
      .all(field, prefix, `${prefix}\u{10FFFF}`, maxLength, limit) as string[];
  }

  /** Terms of a field that start with `prefix` and are longer than it. */
  termsWithPrefix(field: number, prefix: string): string[] {
    // Code-point order is byte order in UTF-8: every extension lies in [prefix, prefix + U+10FFFF).
    return this.#stmt(
      'prefix',
      'SELECT term FROM terms WHERE field = ? AND term > ? AND term < ? ORDER BY term',
    )
      .pluck()
      .all(field, prefix, `${prefix}\u{10FFFF}`) as string[];
  }

  /** Ranked statistics of the given steps (entries without an analysis are absent). */
  docs(steps: readonly number[]): DocStats[] {
    return this.#stmt(
      'docs',
      'SELECT d.step AS step, d.length AS length FROM json_each(?) j JOIN docs d ON d.step = j.value',
    ).all(JSON.stringify(steps)) as DocStats[];
  }

  /** The analysis and token key of an analysed step (undefined: not analysed). */
  docDetail(step: number): DocDetail | undefined {
    const row = this.#stmt(
      'docDetail',
      'SELECT a.features, e.payload_sha256, e.token_estimate FROM docs d JOIN analyses a ON a.id = d.analysis JOIN entries e ON e.step = d.step WHERE d.step = ?',
    )
      .raw()
      .get(step) as [StoredBody, string, number] | undefined;
    return row && { features: unpack(row[0]), payload_sha256: row[1], token_estimate: row[2] };
  }

  /** Largest analysed step (-1 when none). */
  lastDocStep(): number {
    return this.#stmt('lastDoc', 'SELECT coalesce(max(step), -1) FROM docs')
      .pluck()
      .get() as number;
  }

  /** A block's postings; a damaged block makes the index unusable (it is rebuilt). */
  #decode(data: Uint8Array, n: number): PostingBlock {
    try {
      return decodePostings(data, n);
    } catch (e) {
      if (e instanceof PostingBlockError) throw new IndexUnusable(`${this.path}: ${e.message}`);
      throw e;
    }
  }

  /** Takes `step` out of the term's block that holds it; false when no block does. */
  #unpost(term: number, step: number): boolean {
    const rows = this.#stmt(
      'blocksAt',
      'SELECT last, n, data FROM postings WHERE term = ? AND last >= ? AND first <= ?',
    )
      .raw()
      .all(term, step, step) as [number, number, Uint8Array][];
    for (const [last, n, data] of rows) {
      const b = this.#decode(data, n);
      const i = b.steps.indexOf(step);
      if (i < 0) continue;
      this.#stmt('blockDel', 'DELETE FROM postings WHERE term = ? AND last = ?').run(term, last);
      b.steps.splice(i, 1);
      b.tfs.splice(i, 1);
      if (b.steps.length > 0) {
        const e = encodePostings(b.steps, b.tfs);
        this.#stmt('post', POST_ONE).run(term, e.last, e.first, b.steps.length, e.data);
      }
      return true;
    }
    return false;
  }

  /**
   * Removes an indexed entry entirely (a journaled `drop`): its row, its reference and ranked
   * postings (frequencies follow; a term left without postings is removed), its ranked document
   * and its eviction log rows. `rankedTerms` are the terms of its analysis when it has one.
   */
  drop(step: number, rankedTerms: readonly string[] | undefined, state: IndexState): void {
    const json = this.entryJson(step);
    if (json === undefined) throw new Error(`step ${step} is not indexed`);
    const entry = JSON.parse(json) as IndexEntry;
    const unpost = (field: number, term: string) => {
      const row = this.#stmt('termGet', 'SELECT id, df FROM terms WHERE field = ? AND term = ?')
        .raw()
        .get(field, term) as [number, number] | undefined;
      if (!row) return;
      if (!this.#unpost(row[0], step)) return;
      if (row[1] <= 1) {
        this.#stmt('termDel', 'DELETE FROM terms WHERE field = ? AND term = ?').run(field, term);
      } else {
        this.#stmt('termDf', 'UPDATE terms SET df = ? WHERE field = ? AND term = ?').run(
          row[1] - 1,
          field,
          term,
        );
      }
    };
    for (const t of referenceTerms(entry)) unpost(FIELD_REFERENCE, t);
    const doc = this.#stmt('docGet', 'SELECT length, parts, part_length FROM docs WHERE step = ?')
      .raw()
      .get(step) as [number, number, number] | undefined;
    if (doc) {
      if (rankedTerms) for (const t of rankedTerms) unpost(FIELD_RANKED, t);
      else {
        // The analysis is not at hand: find the document's ranked postings the slow way (every
        // block whose range holds the step; a repair, never a fold or a scan).
        const rows = this.#stmt(
          'stepTerms',
          `SELECT t.term, p.n, p.data FROM postings p JOIN terms t ON t.id = p.term WHERE p.first <= ? AND p.last >= ? AND t.field = ${FIELD_RANKED}`,
        )
          .raw()
          .all(step, step) as [string, number, Uint8Array][];
        const ids = rows.filter(([, n, data]) => this.#decode(data, n).steps.includes(step));
        for (const [t] of ids) unpost(FIELD_RANKED, t);
      }
      this.#stmt('docDel', 'DELETE FROM docs WHERE step = ?').run(step);
      state.rankedDocs--;
      state.rankedLength -= doc[0];
      state.rankedParts -= doc[1];
      state.rankedPartLength -= doc[2];
    }
    this.#stmt('entryDel', 'DELETE FROM entries WHERE step = ?').run(step);
    this.#stmt('evictDel', 'DELETE FROM evictions WHERE step = ?').run(step);
    state.entries--;
    if (entry.evicted) state.evicted--;
    state.tokenEstimate -= entry.token_estimate;
    // Other processes' caches cannot follow a removal: they start over.
    state.epoch++;
  }
}
