import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { canonicalJson } from '../protocol/canonical-json.js';
import { parsePgUrl } from '../store/pg/pg-url.js';
import { headFilePath, nextHead, type RecordsHead } from '../store/records-head.js';
import { type BackendName, PG_URL, pgStoreUrl } from './pg.js';
import { tempDir } from './temp-dir.js';
import { everyWrittenByte } from './written-bytes.js';

/**
 * One store of a parameterised suite, on either backend, with the edits a test makes "behind
 * the engine's back": on the local store they touch the files of the store directory, on
 * PostgreSQL the rows that stand for those files (`cf_nodes.body` for a node file, `cf_entries`
 * for an entry of `recall_index.json`, `cf_records` for `events.jsonl`). The engine must refuse
 * either with the same error codes.
 *
 * @example
 * const s = testStore(backend);
 * const cf = await ContextFold.open({ store: s.where });
 * await s.editNode(1, (t) => t.replace('5433', '5434'));
 */
export interface TestStore {
  backend: BackendName;
  /** What the engine opens: the store directory, or the PostgreSQL URL with a fresh store_id. */
  where: string;
  /** A directory of the test's own (the store directory's parent on local), for other files. */
  root: string;
  /** How a node is named in errors and `validate` (`details.path`). */
  nodePath(step: number): string;
  /** How the event log is named in errors. */
  eventsPath(): string;
  /** The stored bytes of a node (its file, its row); null when there is none. */
  readNode(step: number): Promise<Buffer | null>;
  /** Replaces (or creates: an orphan) the stored bytes of a node. */
  writeNode(step: number, bytes: string | Uint8Array): Promise<void>;
  /** Rewrites a node's stored text. */
  editNode(step: number, edit: (text: string) => string): Promise<void>;
  /** Removes a node's bytes, leaving its entry (a broken reference). */
  deleteNode(step: number): Promise<void>;
  /** The steps that have stored node bytes, ascending. */
  nodeSteps(): Promise<number[]>;
  /**
   * Rewrites a stored entry (the record of `recall_index.json`, the row of `cf_entries`). On
   * the local store the engine must have compacted first (`cf.compact()`), so the entry is in
   * the snapshot; an engine opened afterwards reads the edit (a PostgreSQL engine already open
   * keeps its mirror: open a new one).
   */
  editEntry(step: number, edit: (entry: Record<string, unknown>) => void): Promise<void>;
  /** The event log's text (`events.jsonl`, or the rows of `cf_records` one per line). */
  readEventsText(): Promise<string>;
  /**
   * Replaces the event log (every line a record). `head`: `rewrite` (the default) rewrites the
   * log's head to match, as whoever rewrites log and head together; `keep` leaves the head as it
   * was (an edit of the log alone); `remove` removes it (a log from before the head).
   */
  writeEventsText(text: string, options?: { head?: EventsHeadEdit }): Promise<void>;
  /** The event log's head as stored (`events.jsonl.head`, the `events.head` row); null if none. */
  readEventsHead(): Promise<string | null>;
  /** Replaces the event log's head as stored, with any text. */
  writeEventsHead(text: string): Promise<void>;
  /** A fingerprint of everything stored (to show an operation wrote nothing). */
  fingerprint(): Promise<string>;
  /**
   * Every byte stored, as a leak check must see it: every file under the test's directory
   * (the derived index's rows decoded), or every row of the store's tables with node bytes raw.
   */
  everyByte(): Promise<Buffer>;
  /**
   * Forgets what the derived index recorded of the nodes' `sanitized` flags: the local store's
   * index files are removed (rebuilt from the files alone), the `cf_flags` rows deleted.
   */
  forgetFlags(): Promise<void>;
}

/** What {@link TestStore.writeEventsText} does with the log's head. */
export type EventsHeadEdit = 'rewrite' | 'keep' | 'remove';

/** The head a writer would store for a whole log text (null for an empty log). */
function headFor(text: string): RecordsHead | null {
  return text === '' ? null : nextHead(0, text);
}

let pool: pg.Pool | null = null;

/** The run's database as its superuser, for edits behind the engine's back (closes when idle). */
function admin(): pg.Pool {
  if (!PG_URL) throw new Error('no PostgreSQL server for this run');
  pool ??= new pg.Pool({
    connectionString: PG_URL,
    max: 2,
    idleTimeoutMillis: 500,
    allowExitOnIdle: true,
  });
  return pool;
}

async function sql(text: string, params: unknown[]): Promise<pg.QueryResult> {
  return admin().query(text, params);
}

/** The store's tables (all keyed by store_id). */
const TABLES = [
  'cf_stores',
  'cf_nodes',
  'cf_entries',
  'cf_analyses',
  'cf_tokens',
  'cf_changes',
  'cf_records',
  'cf_drops',
  'cf_flags',
] as const;

const nodeFile = (step: number) => `step_${String(step).padStart(6, '0')}.json`;

/** A fresh store for one test (the local directory is removed when the test ends). */
export function testStore(backend: BackendName, label = 't'): TestStore {
  const root = tempDir().dir;
  return backend === 'local' ? localStore(root) : pgStore(root, pgStoreUrl(label));
}

function localStore(root: string): TestStore {
  const dir = join(root, '.contextfold');
  const cold = join(dir, 'cold_nodes');
  const nodePath = (step: number) => join(cold, nodeFile(step));
  const indexPath = join(dir, 'recall_index.json');
  const eventsPath = () => join(dir, 'events.jsonl');
  return {
    backend: 'local',
    where: dir,
    root,
    nodePath,
    eventsPath,
    async readNode(step) {
      return existsSync(nodePath(step)) ? readFileSync(nodePath(step)) : null;
    },
    async writeNode(step, bytes) {
      mkdirSync(cold, { recursive: true });
      writeFileSync(nodePath(step), bytes);
    },
    async editNode(step, edit) {
      writeFileSync(nodePath(step), edit(readFileSync(nodePath(step), 'utf8')));
    },
    async deleteNode(step) {
      unlinkSync(nodePath(step));
    },
    async nodeSteps() {
      if (!existsSync(cold)) return [];
      return readdirSync(cold)
        .map((n) => /^step_(\d{6,})\.json$/.exec(n))
        .filter((m) => m !== null)
        .map((m) => Number(m[1]))
        .sort((a, b) => a - b);
    },
    async editEntry(step, edit) {
      const idx = JSON.parse(readFileSync(indexPath, 'utf8'));
      const entry = idx.nodes[String(step)];
      if (!entry) throw new Error(`no entry for step ${step} in ${indexPath}: compact first`);
      edit(entry);
      writeFileSync(indexPath, JSON.stringify(idx));
    },
    async readEventsText() {
      return existsSync(eventsPath()) ? readFileSync(eventsPath(), 'utf8') : '';
    },
    async writeEventsText(text, options = {}) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(eventsPath(), text);
      const edit = options.head ?? 'rewrite';
      const head = headFor(text);
      if (edit === 'remove' || (edit === 'rewrite' && !head)) {
        rmSync(headFilePath(eventsPath()), { force: true });
      } else if (edit === 'rewrite' && head) {
        const bytes = Buffer.byteLength(text, 'utf8');
        writeFileSync(headFilePath(eventsPath()), `${JSON.stringify({ ...head, bytes })}\n`);
      }
    },
    async readEventsHead() {
      const path = headFilePath(eventsPath());
      return existsSync(path) ? readFileSync(path, 'utf8') : null;
    },
    async writeEventsHead(text) {
      writeFileSync(headFilePath(eventsPath()), text);
    },
    async fingerprint() {
      const out: string[] = [];
      const walk = (d: string, rel: string) => {
        if (!existsSync(d)) return;
        for (const name of readdirSync(d).sort()) {
          const p = join(d, name);
          const st = statSync(p);
          if (st.isDirectory()) walk(p, `${rel}${name}/`);
          else
            out.push(`${rel}${name} ${st.size} ${st.mtimeMs} ${readFileSync(p).toString('hex')}`);
        }
      };
      walk(root, '');
      return out.join('\n');
    },
    async forgetFlags() {
      for (const f of readdirSync(dir)) if (f.startsWith('index-')) unlinkSync(join(dir, f));
    },
    async everyByte() {
      return everyWrittenByte(root);
    },
  };
}

function pgStore(root: string, url: string): TestStore {
  const where = parsePgUrl(url);
  const id = where.storeId;
  return {
    backend: 'postgres',
    where: url,
    root,
    nodePath: (step) => `${where.display}#cold_nodes/${nodeFile(step)}`,
    eventsPath: () => `${where.display}#events`,
    async readNode(step) {
      const r = await sql('SELECT body FROM cf_nodes WHERE store_id = $1 AND step = $2', [
        id,
        step,
      ]);
      return r.rows.length === 0 ? null : (r.rows[0].body as Buffer);
    },
    async writeNode(step, bytes) {
      const body = Buffer.from(bytes);
      const r = await sql('UPDATE cf_nodes SET body = $3 WHERE store_id = $1 AND step = $2', [
        id,
        step,
        body,
      ]);
      if (r.rowCount === 0) {
        // A row of its own (an orphan): the hash columns are never trusted, any value does.
        await sql(
          `INSERT INTO cf_nodes (store_id, step, body, artifact_sha256, payload_sha256, projection_sha256)
           VALUES ($1, $2, $3, repeat('0', 64), repeat('0', 64), repeat('0', 64))`,
          [id, step, body],
        );
      }
    },
    async editNode(step, edit) {
      const bytes = await this.readNode(step);
      if (!bytes) throw new Error(`no node row for step ${step}`);
      await this.writeNode(step, edit(bytes.toString('utf8')));
    },
    async deleteNode(step) {
      const r = await sql('DELETE FROM cf_nodes WHERE store_id = $1 AND step = $2', [id, step]);
      if (r.rowCount !== 1) throw new Error(`no node row for step ${step}`);
    },
    async nodeSteps() {
      const r = await sql('SELECT step FROM cf_nodes WHERE store_id = $1 ORDER BY step', [id]);
      return r.rows.map((x) => Number(x.step));
    },
    async editEntry(step, edit) {
      const r = await sql('SELECT body FROM cf_entries WHERE store_id = $1 AND step = $2', [
        id,
        step,
      ]);
      if (r.rows.length === 0) throw new Error(`no entry row for step ${step}`);
      const entry = JSON.parse(r.rows[0].body);
      edit(entry);
      await sql('UPDATE cf_entries SET body = $3 WHERE store_id = $1 AND step = $2', [
        id,
        step,
        canonicalJson(entry),
      ]);
    },
    async readEventsText() {
      const r = await sql(
        "SELECT body FROM cf_records WHERE store_id = $1 AND kind = 'events' ORDER BY seq",
        [id],
      );
      return r.rows.map((x) => `${x.body}\n`).join('');
    },
    async writeEventsText(text, options = {}) {
      const lines = text.split('\n');
      if (lines.pop() !== '') throw new Error('an event log ends with a newline');
      await sql(
        'INSERT INTO cf_stores (store_id, created_at) VALUES ($1, $2) ON CONFLICT DO NOTHING',
        [id, '2026-01-01T00:00:00Z'],
      );
      await sql("DELETE FROM cf_records WHERE store_id = $1 AND kind = 'events'", [id]);
      await sql(
        "INSERT INTO cf_records (store_id, kind, body) SELECT $1, 'events', * FROM unnest($2::text[])",
        [id, lines],
      );
      const edit = options.head ?? 'rewrite';
      if (edit === 'keep') return;
      await sql("DELETE FROM cf_records WHERE store_id = $1 AND kind = 'events.head'", [id]);
      const head = headFor(text);
      if (edit === 'rewrite' && head) {
        await sql("INSERT INTO cf_records (store_id, kind, body) VALUES ($1, 'events.head', $2)", [
          id,
          JSON.stringify(head),
        ]);
      }
    },
    async readEventsHead() {
      const r = await sql(
        "SELECT body FROM cf_records WHERE store_id = $1 AND kind = 'events.head'",
        [id],
      );
      return r.rows[0]?.body ?? null;
    },
    async writeEventsHead(text) {
      await sql("DELETE FROM cf_records WHERE store_id = $1 AND kind = 'events.head'", [id]);
      await sql("INSERT INTO cf_records (store_id, kind, body) VALUES ($1, 'events.head', $2)", [
        id,
        text,
      ]);
    },
    async fingerprint() {
      const parts: string[] = [];
      for (const table of TABLES) {
        const r = await sql(
          `SELECT t::text AS row FROM ${table} t WHERE store_id = $1 ORDER BY 1`,
          [id],
        );
        parts.push(`${table}: ${r.rows.map((x) => x.row).join('\n')}`);
      }
      return parts.join('\n');
    },
    async forgetFlags() {
      await sql('DELETE FROM cf_flags WHERE store_id = $1', [id]);
    },
    async everyByte() {
      const parts: Buffer[] = [];
      for (const table of TABLES) {
        const r = await sql(`SELECT t::text AS row FROM ${table} t WHERE store_id = $1`, [id]);
        for (const x of r.rows) parts.push(Buffer.from(`${x.row}\n`));
      }
      // The node bytes as stored (a row's text shows a bytea as hex).
      const nodes = await sql('SELECT body FROM cf_nodes WHERE store_id = $1', [id]);
      for (const x of nodes.rows) parts.push(x.body as Buffer);
      return Buffer.concat(parts);
    },
  };
}
