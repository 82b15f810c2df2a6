// The derived SQLite index a LocalStore uses, with the state only its own logic changes: which
// generation file is open, how it relates to the store's files now (the verdict), and how it
// is brought up to date (catch-up, reanalysis, rebuild, a torn journal tail healed).
import { accessSync, constants, existsSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../protocol/errors.js';
import { hashFile } from './file-hash.js';
import { type FileIdentity, fileIdentity, isRacy, sameIdentity } from './file-identity.js';
import type { IndexWarning } from './index-backend.js';
import { emptyState, IndexDb, type IndexState, isUnusable } from './index-db.js';
import { indexFileName, listIndexFiles, removeOldIndexFiles } from './index-files.js';
import { catchUpJournal, loadEvictionLog, loadSnapshot } from './index-loader.js';
import { findTornTail, quarantineTornTail } from './journal-tail.js';
import type { StoreLayout } from './layout.js';
import type { LocalStoreOptions } from './local-store-options.js';
import { readOnlyCopy, readOnlyDirect } from './read-only-index.js';

/**
 * The index being built was deleted under the build (someone removed `index-*.sqlite*` while a
 * reindex ran): a raw ENOENT from the rename said nothing of it. The store's files are
 * untouched; the next run builds the index again.
 */
function buildRemoved(tmp: string, cause: unknown): UsageError {
  return new UsageError(
    `the index being built was deleted while it was built (were index-*.sqlite files removed?): ${tmp}; the store's files are unchanged, run the command again`,
    { path: tmp },
    { cause },
  );
}

/** Renames a finished build into place; a build file deleted meanwhile is {@link buildRemoved}. */
function moveIntoPlace(tmp: string, final: string): void {
  try {
    renameSync(tmp, final);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    for (const f of [`${tmp}-wal`, `${tmp}-shm`]) rmSync(f, { force: true });
    throw buildRemoved(tmp, e);
  }
}

/** How the index relates to the files now: what {@link IndexGeneration.repair} does about it. */
export type Verdict =
  | { kind: 'fresh' }
  | { kind: 'absent' }
  | { kind: 'catch-up' }
  | { kind: 'reanalyze' }
  | { kind: 'rebuild'; reason: string; warn: boolean };

/** What a generation needs of its store: where warnings go, and the read cache following it. */
export interface GenerationHooks {
  warn(w: IndexWarning): void;
  followChanges(): void;
}

/**
 * The index generation of one LocalStore: the open `index-<n>.sqlite` (or a private index in
 * memory), the state it holds, and the logic that opens, judges and repairs it. The store reads
 * and writes through `db` and `state`; everything else here is private to this logic.
 */
export class IndexGeneration {
  db: IndexDb | null = null;
  dbName: string | null = null;
  #dbIno: string | null = null;
  state: IndexState;
  /** The index is private to this process (in memory): no lock, no files written. */
  memory: boolean;
  /** The private index is a copy of the index file not yet found current (read-only stores). */
  #copied = false;
  /** The private index is the index file itself, opened read-only (it cannot catch up). */
  #direct = false;
  /** A read-only open of the index file needed changes once: private copies from then on. */
  #noDirect = false;
  /** The snapshot's identity when this process last found it hashing as the index recorded. */
  #snapshotVerified: FileIdentity | null = null;
  /** Why the index must be rebuilt before it is used again (null: it need not be). */
  broken: string | null = null;
  readonly #layout: StoreLayout;
  readonly #opts: LocalStoreOptions;
  readonly #hooks: GenerationHooks;

  constructor(layout: StoreLayout, options: LocalStoreOptions, hooks: GenerationHooks) {
    this.#layout = layout;
    this.#opts = options;
    this.#hooks = hooks;
    this.state = emptyState(options.analyzer?.version ?? null);
    this.memory = options.readOnly === true;
  }

  /** The generation's file name and epoch: a read cache belongs to exactly one. */
  get generation(): string {
    return `${this.dbName ?? 'memory'}#${this.state.epoch}`;
  }

  /** The index file in use (null: none yet, or in memory). */
  get indexPath(): string | null {
    return this.dbName === null ? null : join(this.#layout.dir, this.dbName);
  }

  /**
   * The open index file was deleted or replaced since this process opened it: what it writes
   * there now goes to a file no one else will open.
   */
  get displaced(): boolean {
    if (this.memory || !this.db || this.dbName === null) return false;
    return fileIdentity(join(this.#layout.dir, this.dbName))?.ino !== this.#dbIno;
  }

  #hasDurableState(): boolean {
    return existsSync(this.#layout.indexPath) || existsSync(this.#layout.journalPath);
  }

  /** Closes the index (if open) and forgets which file it was. */
  dropDb(): void {
    try {
      this.db?.close();
    } catch {}
    this.db = null;
    this.dbName = null;
    this.#dbIno = null;
  }

  #writableDir(): boolean {
    try {
      accessSync(this.#layout.dir, constants.W_OK);
      return true;
    } catch {
      return false;
    }
  }

  /** Opens the current generation if not open (or if it was replaced). Null: it is open. */
  #openCurrent(): Verdict | null {
    if (this.db && this.dbName !== null) {
      const id = fileIdentity(join(this.#layout.dir, this.dbName));
      if (id && id.ino === this.#dbIno) return null;
      this.dropDb();
    }
    const { current: name } = listIndexFiles(this.#layout.dir);
    if (name === null) {
      return {
        kind: 'rebuild',
        reason: 'the derived index is missing',
        warn: this.#hasDurableState(),
      };
    }
    const path = join(this.#layout.dir, name);
    try {
      this.db = new IndexDb(path, { create: false });
    } catch (e) {
      return { kind: 'rebuild', reason: (e as Error).message, warn: true };
    }
    this.dbName = name;
    this.#dbIno = fileIdentity(path)?.ino ?? null;
    return null;
  }

  /** How the index relates to the files now, without writing anything (but a verified mark). */
  async verdict(): Promise<Verdict> {
    const L = this.#layout;
    if (!existsSync(L.dir)) {
      this.dropDb();
      this.memory = this.#opts.readOnly === true;
      this.state = emptyState(this.#opts.analyzer?.version ?? null);
      return { kind: 'absent' };
    }
    if (this.broken) return { kind: 'rebuild', reason: this.broken, warn: true };
    if (!this.memory && !this.#writableDir()) {
      this.dropDb();
      this.memory = true;
      this.#hooks.warn({
        code: 'INDEX_IN_MEMORY',
        message: `store directory is not writable: the derived index is built in memory for this process (${L.dir})`,
        path: L.dir,
      });
    }
    if (!this.memory) {
      const open = this.#openCurrent();
      if (open) return open;
    } else if (!this.db) {
      return { kind: 'rebuild', reason: 'in-memory index', warn: false };
    }
    let st: IndexState;
    try {
      st = this.db!.state();
    } catch (e) {
      return {
        kind: 'rebuild',
        reason: `${this.dbName} is unusable (${(e as Error).message})`,
        warn: true,
      };
    }
    if (!st.complete)
      return {
        kind: 'rebuild',
        reason: `${this.dbName} is incomplete (an interrupted rebuild)`,
        warn: true,
      };
    const snap = fileIdentity(L.indexPath);
    if (!sameIdentity(st.snapshot, snap))
      return { kind: 'rebuild', reason: 'recall_index.json changed', warn: false };
    if (snap && !st.snapshotVerified && !sameIdentity(this.#snapshotVerified, snap)) {
      // Identity alone cannot rule out a same-size rewrite within the recorded clock tick.
      const sha = await hashFile(L.indexPath);
      if (sha !== st.snapshotSha256)
        return { kind: 'rebuild', reason: 'recall_index.json changed', warn: false };
      if (!isRacy(snap)) {
        this.#markVerified();
        this.#snapshotVerified = snap; // a read-only process cannot mark it: it remembers
      }
    }
    if (!sameIdentity(st.evictionLog, fileIdentity(L.evictionLogPath))) {
      return { kind: 'rebuild', reason: 'eviction_log.json changed', warn: false };
    }
    const j = fileIdentity(L.journalPath);
    if (!sameIdentity(st.journal, j)) {
      // Appended since (or begun after a compaction): read only the new bytes.
      const grown =
        j !== null &&
        (st.journal === null
          ? st.journalOffset === 0 && !st.journalStale
          : j.ino === st.journal.ino && j.size > st.journal.size);
      if (grown && !st.problem) return { kind: 'catch-up' };
      return { kind: 'rebuild', reason: 'the journal changed', warn: false };
    }
    const analyzer = this.#opts.analyzer?.version ?? null;
    if (analyzer !== null && st.analyzer !== analyzer && !st.problem) return { kind: 'reanalyze' };
    this.state = st;
    this.#copied = false;
    this.#hooks.followChanges();
    return { kind: 'fresh' };
  }

  #markVerified(): void {
    if (this.#opts.readOnly) return;
    try {
      this.db!.transaction(() => {
        const st = this.db!.state();
        st.snapshotVerified = true;
        this.db!.setState(st);
      });
    } catch {
      // Best effort: the next sync hashes it again.
    }
  }

  /**
   * A journal line without its newline is the remains of an append that never returned (a
   * writer killed mid-write): its fold never reported done, and every complete line before it
   * stands. Under the write lock no append is in flight, so the tail is certainly torn: it moves
   * into `quarantine/` with a warning and the index goes on from the last complete line, instead
   * of every later writer refusing the store. Anything else wrong with the journal still refuses.
   */
  healTornJournal(): void {
    if (this.#opts.readOnly || !this.#writableDir()) return;
    const tail = findTornTail(this.#layout.journalPath);
    if (!tail) return;
    const to = quarantineTornTail(this.#layout, tail);
    this.#hooks.warn({
      code: 'JOURNAL_TAIL_QUARANTINED',
      message: `the journal ended in a torn record (a fold interrupted before it committed): its ${tail.size - tail.cut} bytes moved to ${to}`,
      path: this.#layout.journalPath,
    });
    const db = this.memory ? null : this.db;
    if (!db) return;
    try {
      db.transaction(() => {
        const st = db.state();
        // The index read this journal up to the cut (and maybe the torn bytes): it is current.
        const now = fileIdentity(this.#layout.journalPath);
        if (st.journalOffset !== tail.cut || (st.problem && !st.problem.torn)) return;
        if (now && st.journal?.ino !== now.ino) return;
        st.journal = now;
        st.problem = null;
        db.setState(st);
      });
    } catch (e) {
      if (!isUnusable(e)) throw e;
    }
  }

  /** Repairs until fresh. Call holding the write lock (or in memory mode). */
  async repair(): Promise<void> {
    for (let attempt = 0; attempt < 8; attempt++) {
      const v = await this.verdict();
      switch (v.kind) {
        case 'fresh':
        case 'absent':
          return;
        case 'catch-up':
        case 'reanalyze':
          if (this.#direct) {
            // Read-only on the file itself: the changes go into a private copy instead.
            this.#noDirect = true;
            this.#copied = false;
            await this.rebuild(`${v.kind} of a read-only index`, false, true);
          } else if (v.kind === 'catch-up') this.#catchUp();
          else this.#reanalyze();
          break;
        case 'rebuild':
          await this.rebuild(v.reason, v.warn, true);
          break;
      }
    }
    throw new Error(`the derived index of ${this.#layout.dir} does not settle`);
  }

  #catchUp(): void {
    const db = this.db!;
    try {
      db.transaction(() => {
        const st = db.state();
        st.problem = catchUpJournal(db, st, this.#layout, this.#opts.analyzer?.keyOf);
        db.setState(st);
      });
    } catch (e) {
      if (!isUnusable(e)) throw e;
      this.broken = `${this.dbName} is unusable (${(e as Error).message})`;
    }
  }

  #reanalyze(): void {
    const db = this.db!;
    db.transaction(() => {
      const st = db.state();
      db.dropRanked();
      st.analyzer = this.#opts.analyzer?.version ?? null;
      st.rankedDocs = 0;
      st.rankedLength = 0;
      st.rankedParts = 0;
      st.rankedPartLength = 0;
      st.epoch++;
      db.setState(st);
    });
  }

  /** Loads snapshot, eviction log and journal into an empty index. */
  async #load(db: IndexDb, st: IndexState): Promise<void> {
    const keyOf = this.#opts.analyzer?.keyOf;
    st.problem = await loadSnapshot(db, st, this.#layout, keyOf);
    if (st.snapshot && st.snapshotSha256 === null)
      st.snapshotSha256 = await hashFile(this.#layout.indexPath);
    st.evictionLog = fileIdentity(this.#layout.evictionLogPath);
    st.journal = fileIdentity(this.#layout.journalPath);
    if (st.problem) return;
    st.problem = loadEvictionLog(db, st, this.#layout);
    if (st.problem) return;
    db.transaction(() => {
      st.problem = catchUpJournal(db, st, this.#layout, keyOf);
    });
  }

  /**
   * Builds a new generation from the files under a private name, then renames it into place and
   * removes the older ones. Content-addressed analyses and token counts are carried over from
   * the previous generation when it is readable (`keep`).
   */
  async rebuild(reason: string, warn: boolean, keep: boolean): Promise<void> {
    const analyzer = this.#opts.analyzer?.version ?? null;
    const st = emptyState(analyzer);
    if (this.memory) return this.#rebuildInMemory(st, reason, warn);
    const dir = this.#layout.dir;
    const n = listIndexFiles(dir).highest + 1;
    const name = indexFileName(n);
    const final = join(dir, name);
    const tmp = `${final}.build-${process.pid}`;
    const previous = this.broken || !keep ? null : this.indexPath;
    this.dropDb();
    let db: IndexDb | null = null;
    try {
      // Inside the try: a create that fails half-way (a full disk) leaves no build file either.
      db = new IndexDb(tmp, { create: true });
      if (previous && existsSync(previous)) this.#carryOver(db, previous);
      await this.#load(db, st);
      st.complete = true;
      db.setState(st);
    } catch (e) {
      db?.close();
      const gone = !existsSync(tmp);
      for (const f of [tmp, `${tmp}-wal`, `${tmp}-shm`]) rmSync(f, { force: true });
      throw gone ? buildRemoved(tmp, e) : e;
    }
    db.close();
    moveIntoPlace(tmp, final);
    removeOldIndexFiles(dir, name);
    this.broken = null;
    const open = this.#openCurrent();
    if (open)
      throw new Error(`the rebuilt index ${final} cannot be opened: ${JSON.stringify(open)}`);
    if (warn) {
      this.#hooks.warn({
        code: 'INDEX_REBUILT',
        message: `${reason}: rebuilt ${name} from recall_index.json and the journal (${st.entries} entries)`,
        path: final,
      });
    }
  }

  /**
   * A read-only (or unwritable) store's rebuild: the current index file itself or a private copy
   * when usable, else an index built in memory; a damaged index file is warned about.
   */
  async #rebuildInMemory(st: IndexState, reason: string, warn: boolean): Promise<void> {
    this.dropDb();
    this.#direct = false;
    const usable = this.#opts.readOnly && !this.broken && !this.#copied;
    const direct = usable && !this.#noDirect ? readOnlyDirect(this.#layout.dir) : null;
    if (direct) {
      this.db = direct.db;
      this.dbName = direct.name; // dbName names it: status shows the file it reads
      this.#direct = true;
      this.#copied = true;
      this.broken = null;
      return; // the verdict decides whether it is current
    }
    const copy = usable ? readOnlyCopy(this.#layout.dir) : null;
    this.#copied = copy instanceof IndexDb;
    if (copy instanceof IndexDb) {
      this.db = copy;
      this.broken = null;
      return; // the verdict catches the copy up with the files, in memory
    }
    const db = new IndexDb(':memory:', { create: true });
    await this.#load(db, st);
    st.complete = true;
    db.setState(st);
    this.db = db;
    this.broken = null;
    // A damaged index is said, as a writer says it when it rebuilds the file.
    const why = typeof copy === 'string' ? copy : warn ? reason : null;
    if (why !== null) {
      this.#hooks.warn({
        code: 'INDEX_REBUILT',
        message: `${why}: rebuilt in memory from recall_index.json and the journal (${st.entries} entries; read-only, nothing written)`,
        path: this.#layout.dir,
      });
    }
  }

  #carryOver(db: IndexDb, previous: string): void {
    try {
      db.db.prepare('ATTACH DATABASE ? AS old').run(previous);
      try {
        db.db.exec(
          'INSERT OR IGNORE INTO analyses SELECT * FROM old.analyses; INSERT OR IGNORE INTO tokens SELECT * FROM old.tokens; INSERT OR IGNORE INTO flags SELECT * FROM old.flags;',
        );
      } finally {
        db.db.exec('DETACH DATABASE old');
      }
    } catch {
      // An unreadable previous generation: everything is analysed again.
    }
  }
}
