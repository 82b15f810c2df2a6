import { createHash } from 'node:crypto';
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  unlinkSync,
} from 'node:fs';
import { open as openFile, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { appendDurable, fsyncDir, writeFileAtomic, writeFilesDurable } from '../fs/durable-fs.js';
import { canonicalJson, prettyJson } from '../protocol/canonical-json.js';
import { LockTimeoutError, UsageError } from '../protocol/errors.js';
import { IntegrityCheckError } from '../protocol/ipcf-errors.js';
import { isoSeconds } from '../protocol/time.js';
import type { ColdNode, IndexEntry } from '../protocol/types.js';
import { checkContainment } from './containment.js';
import { fieldStatsOf } from './field-stats.js';
import { type FileIdentity, fileIdentity, isRacy, sameIdentity } from './file-identity.js';
import type {
  CommitRow,
  DocDetail,
  DocStats,
  FieldStats,
  IndexBackend,
  IndexCheck,
  IndexStats,
  IndexWarning,
  NodeAnalysisRecord,
  PendingNode,
  PostingField,
  PostingList,
  WriteSession,
} from './index-backend.js';
import {
  emptyState,
  FIELD_RANKED,
  FIELD_REFERENCE,
  IndexDb,
  type IndexState,
  isRollbackFile,
  isUnusable,
  referenceTerms,
} from './index-db.js';
import { parseEntry } from './index-entry.js';
import { indexFileName, listIndexFiles, removeOldIndexFiles } from './index-files.js';
import {
  type AnalysisKeyOf,
  catchUpJournal,
  dropRow,
  type LoadProblem,
  loadEvictionLog,
  loadSnapshot,
} from './index-loader.js';
import { foldRecordJson, type JournalRecord, journalLine, parseJournal } from './journal.js';
import { findTornTail, quarantineTornTail } from './journal-tail.js';
import {
  canonicalNodePath,
  indexFilePath,
  NODE_FILE_RE,
  type StoreLayout,
  storeExists,
} from './layout.js';
import { commitFlags, type FlagCounts, type NodeFlag } from './node-flag.js';
import { quickCheck } from './quick-check.js';
import { ReadCache } from './read-cache.js';
import { SerialQueue } from './serial-queue.js';
import { readSnapshot } from './snapshot-reader.js';
import { type SnapshotNode, writeSnapshot } from './snapshot-writer.js';
import { type VerifiedNode, verifyNode } from './verify.js';
import { WriteLock, withWriteLock } from './write-lock.js';

/** Options of {@link LocalStore}. */
export interface LocalStoreOptions {
  /** How long a writer (or a reader that must catch up) waits for the write lock. */
  lockTimeoutMs: number;
  /** Compact when the journal holds more than max(this, snapshot entries) records. */
  compactThreshold: number;
  clock: () => Date;
  /** The analyzer whose analyses ranked postings come from (its version and content key). */
  analyzer?: { version: string; keyOf: AnalysisKeyOf };
  /** Told when the derived index had to be rebuilt, or lives in memory. */
  onWarning?: (warning: IndexWarning) => void;
  /**
   * Write nothing at all into the store (an inspector): the index is a private in-memory copy
   * of the current index file (or built from the store's files when there is none or it is
   * not current), and writes are refused.
   */
  readOnly?: boolean;
}

/** A current index file up to this size is copied into memory by a read-only store. */
const READ_ONLY_COPY_MAX = 512 * 1024 * 1024;

type Verdict =
  | { kind: 'fresh' }
  | { kind: 'absent' }
  | { kind: 'catch-up' }
  | { kind: 'reanalyze' }
  | { kind: 'rebuild'; reason: string; warn: boolean };

const FIELDS: Record<PostingField, number> = {
  reference: FIELD_REFERENCE,
  ranked: FIELD_RANKED,
};

/**
 * Entries per page of a compaction's snapshot stream, with a turn of the event loop between
 * pages: one page (read, inflate, write) stays well under 50 ms even on a loaded machine, so a
 * long-lived process keeps answering while a 100k store compacts (docs/benchmarks.md).
 */
const PAGE = 200;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const turn = () => new Promise<void>((r) => setImmediate(r));

async function hashFile(path: string): Promise<string | null> {
  const hash = createHash('sha256');
  let fh: Awaited<ReturnType<typeof openFile>>;
  try {
    fh = await openFile(path, 'r');
  } catch {
    return null;
  }
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      hash.update(buf.subarray(0, bytesRead));
    }
  } finally {
    await fh.close();
  }
  return hash.digest('hex');
}

/** Thrown by a read when the index file turned out corrupt; the engine syncs and retries. */
export class IndexBrokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IndexBrokenError';
  }
}

/**
 * The local store: cold node files and `recall_index.json` in the reference layout, the
 * checksummed journal of index records since the last compaction (the durable truth together
 * with the snapshot), and a derived SQLite index (`index-<n>.sqlite`) that remembers which
 * versions of those files it reflects and catches up by reading only what was appended. Writers
 * hold an OS lock ({@link WriteLock}); readers never wait unless the index must catch up with a
 * commit still being applied. See docs/store-format.md.
 *
 * @example
 * const store = new LocalStore(storeLayout('/repo/.contextfold'), { lockTimeoutMs: 30_000,
 *   compactThreshold: 4096, clock: () => new Date() });
 * await store.sync();
 * store.get(37)?.summary;
 */
export class LocalStore implements IndexBackend {
  /** A store in a directory. */
  readonly kind = 'local' as const;
  readonly layout: StoreLayout;
  readonly #opts: LocalStoreOptions;
  #db: IndexDb | null = null;
  #dbName: string | null = null;
  #dbIno: string | null = null;
  #state: IndexState;
  /** The index is private to this process (in memory): no lock, no files written. */
  #memory: boolean;
  /** The private index is a copy of the index file not yet found current (read-only stores). */
  #copied = false;
  /** The private index is the index file itself, opened read-only (it cannot catch up). */
  #direct = false;
  /** A read-only open of the index file needed changes once: private copies from then on. */
  #noDirect = false;
  /** The snapshot's identity when this process last found it hashing as the index recorded. */
  #snapshotVerified: FileIdentity | null = null;
  #lock: WriteLock | null = null;
  readonly #queue = new SerialQueue();
  #broken: string | null = null;
  #closed = false;
  readonly #cache = new ReadCache();
  readonly #warned = new Set<string>();

  constructor(layout: StoreLayout, options: LocalStoreOptions) {
    this.layout = layout;
    this.#opts = options;
    this.#state = emptyState(options.analyzer?.version ?? null);
    this.#memory = options.readOnly === true;
  }

  // --- state ---

  get generation(): string {
    return `${this.#dbName ?? 'memory'}#${this.#state.epoch}`;
  }

  /** The index file in use (null: none yet, or in memory). */
  get indexPath(): string | null {
    return this.#dbName === null ? null : join(this.layout.dir, this.#dbName);
  }

  get loadProblem(): LoadProblem | null {
    return this.#state.problem;
  }

  assertConsistent(): void {
    const p = this.loadProblem;
    if (p) {
      throw new IntegrityCheckError(`${p.message} (run 'contextfold validate')`, { path: p.path });
    }
  }

  stats(): IndexStats {
    const s = this.#state;
    return {
      entries: s.entries,
      evicted: s.evicted,
      tokenEstimate: s.tokenEstimate,
      journalRecords: s.journalRecords,
    };
  }

  #warn(w: IndexWarning): void {
    const key = `${w.code}:${w.message}`;
    if (this.#warned.has(key)) return;
    this.#warned.add(key);
    this.#opts.onWarning?.(w);
  }

  #hasDurableState(): boolean {
    return existsSync(this.layout.indexPath) || existsSync(this.layout.journalPath);
  }

  #dropDb(): void {
    try {
      this.#db?.close();
    } catch {}
    this.#db = null;
    this.#dbName = null;
    this.#dbIno = null;
  }

  #writableDir(): boolean {
    try {
      accessSync(this.layout.dir, constants.W_OK);
      return true;
    } catch {
      return false;
    }
  }

  /** Opens the current generation if not open (or if it was replaced). Null: it is open. */
  #openCurrent(): Verdict | null {
    if (this.#db && this.#dbName !== null) {
      const id = fileIdentity(join(this.layout.dir, this.#dbName));
      if (id && id.ino === this.#dbIno) return null;
      this.#dropDb();
    }
    const { current: name } = listIndexFiles(this.layout.dir);
    if (name === null) {
      return {
        kind: 'rebuild',
        reason: 'the derived index is missing',
        warn: this.#hasDurableState(),
      };
    }
    const path = join(this.layout.dir, name);
    try {
      this.#db = new IndexDb(path, { create: false });
    } catch (e) {
      return { kind: 'rebuild', reason: (e as Error).message, warn: true };
    }
    this.#dbName = name;
    this.#dbIno = fileIdentity(path)?.ino ?? null;
    return null;
  }

  /** How the index relates to the files now, without writing anything (but a verified mark). */
  async #verdict(): Promise<Verdict> {
    const L = this.layout;
    if (!existsSync(L.dir)) {
      this.#dropDb();
      this.#memory = this.#opts.readOnly === true;
      this.#state = emptyState(this.#opts.analyzer?.version ?? null);
      return { kind: 'absent' };
    }
    if (this.#broken) return { kind: 'rebuild', reason: this.#broken, warn: true };
    if (!this.#memory && !this.#writableDir()) {
      this.#dropDb();
      this.#memory = true;
      this.#warn({
        code: 'INDEX_IN_MEMORY',
        message: `store directory is not writable: the derived index is built in memory for this process (${L.dir})`,
        path: L.dir,
      });
    }
    if (!this.#memory) {
      const open = this.#openCurrent();
      if (open) return open;
    } else if (!this.#db) {
      return { kind: 'rebuild', reason: 'in-memory index', warn: false };
    }
    let st: IndexState;
    try {
      st = this.#db!.state();
    } catch (e) {
      return {
        kind: 'rebuild',
        reason: `${this.#dbName} is unusable (${(e as Error).message})`,
        warn: true,
      };
    }
    if (!st.complete)
      return {
        kind: 'rebuild',
        reason: `${this.#dbName} is incomplete (an interrupted rebuild)`,
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
    this.#state = st;
    this.#copied = false;
    this.#followChanges();
    return { kind: 'fresh' };
  }

  /**
   * Brings the read cache in step with the index: every fold, eviction and analysis since the
   * last look (this process's or another's) updates the cached lists it touches.
   */
  #followChanges(): void {
    const db = this.#db!;
    const cache = this.#cache;
    const generation = this.generation;
    const seq = db.changeSeq();
    if (cache.generation !== generation || seq < cache.seq) {
      cache.reset(generation, seq);
      return;
    }
    if (seq === cache.seq) return;
    const changes = db.changesSince(cache.seq, 10_001);
    if (changes.length > 10_000) {
      cache.reset(generation, seq);
      return;
    }
    for (const c of changes) {
      cache.forgetEntry(c.step);
      if (!cache.holdsTerms) continue;
      if (c.op === 1) {
        const json = db.entryJson(c.step);
        if (json === undefined) continue;
        const terms = referenceTerms(JSON.parse(json) as IndexEntry);
        cache.addPostings(
          FIELD_REFERENCE,
          c.step,
          terms,
          terms.map(() => 1),
        );
      }
      if (c.op === 1 || c.op === 3) this.#followAnalysis(db, c.step);
    }
    cache.seq = changes[changes.length - 1]!.seq;
  }

  /**
   * Caches what was just read only if no change happened since the cache's position in the
   * feed (another process may have committed meanwhile: that read could count it twice later).
   */
  #fill(put: () => void): void {
    const db = this.#db;
    if (!db) return;
    if (this.#cache.generation !== this.generation) return;
    if (db.changeSeq() === this.#cache.seq) put();
  }

  #followAnalysis(db: IndexDb, step: number): void {
    const keyOf = this.#opts.analyzer?.keyOf;
    if (!keyOf || db.docs([step]).length === 0) return;
    const json = db.entryJson(step);
    if (json === undefined) return;
    const akey = keyOf(JSON.parse(json) as IndexEntry);
    const a = db.analyses([akey]).get(akey);
    if (a) this.#cache.addDoc(FIELD_RANKED, step, a);
  }

  #markVerified(): void {
    if (this.#opts.readOnly) return;
    try {
      this.#db!.transaction(() => {
        const st = this.#db!.state();
        st.snapshotVerified = true;
        this.#db!.setState(st);
      });
    } catch {
      // Best effort: the next sync hashes it again.
    }
  }

  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.#queue.run(fn);
  }

  #lockHandle(): WriteLock {
    this.#lock ??= new WriteLock(this.layout.lockPath);
    return this.#lock;
  }

  /**
   * Brings the index up to date with the files. When it must change, takes the write lock (a
   * writer may be just about to apply its commit: then it waits, and finds the index fresh).
   */
  async sync(): Promise<void> {
    this.#assertOpen();
    const v = await this.#verdict();
    if (v.kind === 'fresh' || v.kind === 'absent') return;
    if (this.#memory) {
      await this.#exclusive(() => this.#repair());
      return;
    }
    await this.#exclusive(async () => {
      const lock = this.#lockHandle();
      const deadline = Date.now() + this.#opts.lockTimeoutMs;
      let delay = 1;
      for (;;) {
        if (lock.tryAcquire()) {
          try {
            this.#healTornJournal();
            await this.#repair();
          } finally {
            lock.release();
          }
          return;
        }
        const again = await this.#verdict();
        if (again.kind === 'fresh' || again.kind === 'absent') return;
        if (Date.now() > deadline) {
          throw new LockTimeoutError(
            `the index must catch up but the store stays locked for more than ${this.#opts.lockTimeoutMs} ms: ${lock.path}`,
            { path: lock.path },
          );
        }
        await sleep(delay + Math.random() * delay);
        delay = Math.min(delay * 2, 8);
      }
    });
  }

  /**
   * A journal line without its newline is the remains of an append that never returned (a
   * writer killed mid-write): its fold never reported done, and every complete line before it
   * stands. Under the write lock no append is in flight, so the tail is certainly torn: it moves
   * into `quarantine/` with a warning and the index goes on from the last complete line, instead
   * of every later writer refusing the store. Anything else wrong with the journal still refuses.
   */
  #healTornJournal(): void {
    if (this.#opts.readOnly || !this.#writableDir()) return;
    const tail = findTornTail(this.layout.journalPath);
    if (!tail) return;
    const to = quarantineTornTail(this.layout, tail);
    this.#warn({
      code: 'JOURNAL_TAIL_QUARANTINED',
      message: `the journal ended in a torn record (a fold interrupted before it committed): its ${tail.size - tail.cut} bytes moved to ${to}`,
      path: this.layout.journalPath,
    });
    const db = this.#memory ? null : this.#db;
    if (!db) return;
    try {
      db.transaction(() => {
        const st = db.state();
        // The index read this journal up to the cut (and maybe the torn bytes): it is current.
        const now = fileIdentity(this.layout.journalPath);
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
  async #repair(): Promise<void> {
    for (let attempt = 0; attempt < 8; attempt++) {
      const v = await this.#verdict();
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
            await this.#rebuild(`${v.kind} of a read-only index`, false, true);
          } else if (v.kind === 'catch-up') this.#catchUp();
          else this.#reanalyze();
          break;
        case 'rebuild':
          await this.#rebuild(v.reason, v.warn, true);
          break;
      }
    }
    throw new Error(`the derived index of ${this.layout.dir} does not settle`);
  }

  #catchUp(): void {
    const db = this.#db!;
    try {
      db.transaction(() => {
        const st = db.state();
        st.problem = catchUpJournal(db, st, this.layout, this.#opts.analyzer?.keyOf);
        db.setState(st);
      });
    } catch (e) {
      if (!isUnusable(e)) throw e;
      this.#broken = `${this.#dbName} is unusable (${(e as Error).message})`;
    }
  }

  #reanalyze(): void {
    const db = this.#db!;
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
    st.problem = await loadSnapshot(db, st, this.layout, keyOf);
    if (st.snapshot && st.snapshotSha256 === null)
      st.snapshotSha256 = await hashFile(this.layout.indexPath);
    st.evictionLog = fileIdentity(this.layout.evictionLogPath);
    st.journal = fileIdentity(this.layout.journalPath);
    if (st.problem) return;
    st.problem = loadEvictionLog(db, st, this.layout);
    if (st.problem) return;
    db.transaction(() => {
      st.problem = catchUpJournal(db, st, this.layout, keyOf);
    });
  }

  /**
   * Builds a new generation from the files under a private name, then renames it into place and
   * removes the older ones. Content-addressed analyses and token counts are carried over from
   * the previous generation when it is readable (`keep`).
   */
  async #rebuild(reason: string, warn: boolean, keep: boolean): Promise<void> {
    const analyzer = this.#opts.analyzer?.version ?? null;
    const st = emptyState(analyzer);
    if (this.#memory) {
      this.#dropDb();
      this.#direct = false;
      const usable = this.#opts.readOnly && !this.#broken && !this.#copied;
      const direct = usable && !this.#noDirect ? this.#readOnlyDirect() : null;
      if (direct) {
        this.#db = direct; // #dbName names it: status shows the file it reads
        this.#direct = true;
        this.#copied = true;
        this.#broken = null;
        return; // the verdict decides whether it is current
      }
      const copy = usable ? this.#readOnlyCopy() : null;
      this.#copied = copy !== null;
      if (copy) {
        this.#db = copy;
        this.#broken = null;
        return; // the verdict catches the copy up with the files, in memory
      }
      const db = new IndexDb(':memory:', { create: true });
      await this.#load(db, st);
      st.complete = true;
      db.setState(st);
      this.#db = db;
      this.#broken = null;
      return;
    }
    const dir = this.layout.dir;
    const n = listIndexFiles(dir).highest + 1;
    const name = indexFileName(n);
    const final = join(dir, name);
    const tmp = `${final}.build-${process.pid}`;
    const previous = this.#broken || !keep ? null : this.indexPath;
    this.#dropDb();
    const db = new IndexDb(tmp, { create: true });
    try {
      if (previous && existsSync(previous)) this.#carryOver(db, previous);
      await this.#load(db, st);
      st.complete = true;
      db.setState(st);
    } catch (e) {
      db.close();
      for (const f of [tmp, `${tmp}-wal`, `${tmp}-shm`]) rmSync(f, { force: true });
      throw e;
    }
    db.close();
    renameSync(tmp, final);
    removeOldIndexFiles(dir, name);
    this.#broken = null;
    const open = this.#openCurrent();
    if (open)
      throw new Error(`the rebuilt index ${final} cannot be opened: ${JSON.stringify(open)}`);
    if (warn) {
      this.#warn({
        code: 'INDEX_REBUILT',
        message: `${reason}: rebuilt ${name} from recall_index.json and the journal (${st.entries} entries)`,
        path: final,
      });
    }
  }

  /**
   * The current index file opened read-only, when that creates nothing beside it: a file a
   * writer closed in rollback-journal mode, no `-wal`, `-shm` or `-journal` file next to it.
   * Open in no time whatever the store's size; a writer that opens it meanwhile switches it to
   * WAL, which this connection then reads through.
   */
  #readOnlyDirect(): IndexDb | null {
    const { current } = listIndexFiles(this.layout.dir);
    if (current === null) return null;
    const path = join(this.layout.dir, current);
    for (const side of ['-wal', '-shm', '-journal']) if (existsSync(`${path}${side}`)) return null;
    if (!isRollbackFile(path)) return null;
    try {
      const db = new IndexDb(path, { create: false, readonly: true });
      if (db.state().complete) {
        this.#dbName = current;
        return db;
      }
      db.close();
      return null;
    } catch {
      return null;
    }
  }

  /** A private copy of the current index file, if there is a clean one (no WAL beside it). */
  #readOnlyCopy(): IndexDb | null {
    const { current } = listIndexFiles(this.layout.dir);
    if (current === null) return null;
    const path = join(this.layout.dir, current);
    if (existsSync(`${path}-wal`) || existsSync(`${path}-shm`)) return null;
    const id = fileIdentity(path);
    if (!id || id.size > READ_ONLY_COPY_MAX) return null;
    try {
      const db = new IndexDb(path, { create: false, bytes: readFileSync(path) });
      if (db.state().complete) return db;
      db.close();
      return null;
    } catch {
      return null;
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

  #assertOpen(): void {
    if (this.#closed) throw new UsageError('this store is closed; open it again');
  }

  // --- reads ---

  #read<T>(fallback: T, fn: (db: IndexDb) => T): T {
    if (!this.#db) return fallback;
    try {
      return fn(this.#db);
    } catch (e) {
      if (!isUnusable(e)) throw e;
      this.#broken = `${this.#dbName ?? 'the index'} is unusable (${(e as Error).message})`;
      throw new IndexBrokenError(this.#broken);
    }
  }

  get(step: number): IndexEntry | undefined {
    const cached = this.#cache.entry(step);
    if (cached) return cached;
    const json = this.#read(undefined, (db) => db.entryJson(step));
    if (json === undefined) return undefined;
    const entry = JSON.parse(json) as IndexEntry;
    this.#fill(() => this.#cache.putEntry(entry));
    return entry;
  }

  page(options: { after?: number; offset?: number; limit: number }): IndexEntry[] {
    const { after, offset, limit } = options;
    return this.#read([], (db) =>
      offset !== undefined ? db.entriesAt(offset, limit) : db.entriesAfter(after ?? -1, limit),
    ).map((j) => JSON.parse(j) as IndexEntry);
  }

  df(field: PostingField, term: string): number {
    const f = FIELDS[field];
    const cached = this.#cache.df(f, term);
    if (cached !== undefined) return cached;
    const df = this.#read(0, (db) => db.df(f, term));
    this.#fill(() => this.#cache.putDf(f, term, df));
    return df;
  }

  postings(field: PostingField, term: string, limit?: number): PostingList {
    const f = FIELDS[field];
    const cached = this.#cache.postings(f, term, limit);
    if (cached) return cached;
    const list = this.#read({ steps: [], tfs: [] }, (db) => db.postingList(f, term, limit));
    this.#fill(() => this.#cache.putPostings(f, term, limit, list));
    return list;
  }

  termsWithPrefix(field: PostingField, prefix: string): string[] {
    const f = FIELDS[field];
    const cached = this.#cache.prefix(f, prefix);
    if (cached) return cached;
    const terms = this.#read([], (db) => db.termsWithPrefix(f, prefix));
    this.#fill(() => this.#cache.putPrefix(f, prefix, terms));
    return terms;
  }

  topTermsWithPrefix(field: PostingField, prefix: string, maxLength: number, limit: number) {
    const f = FIELDS[field];
    const cached = this.#cache.top(f, prefix, maxLength, limit);
    if (cached) return cached;
    const terms = this.#read([], (db) => db.topTermsWithPrefix(f, prefix, maxLength, limit));
    this.#fill(() => this.#cache.putTop(f, prefix, maxLength, limit, terms));
    return terms;
  }

  fieldStats(field: PostingField): FieldStats {
    return fieldStatsOf(field, this.#state, () => this.#read(-1, (db) => db.lastDocStep()));
  }

  docStats(steps: readonly number[]): DocStats[] {
    const out: DocStats[] = [];
    const missing: number[] = [];
    for (const s of steps) {
      const d = this.#cache.doc(s);
      if (d) out.push(d);
      else missing.push(s);
    }
    if (missing.length === 0) return out;
    const found = this.#read([], (db) => db.docs(missing));
    this.#fill(() => {
      for (const d of found) this.#cache.putDoc(d);
    });
    out.push(...found);
    return out;
  }

  docDetail(step: number): DocDetail | undefined {
    return this.#read(undefined, (db) => db.docDetail(step));
  }

  evictions(): { step_id: number; evicted_at: string }[] {
    return this.#read([], (db) => db.evictions());
  }

  pending(after: number, limit: number): PendingNode[] {
    return this.#read([], (db) => db.pending(after, limit));
  }

  pendingCount(): number {
    return this.#state.entries - this.#state.rankedDocs;
  }

  attachAnalyses(list: readonly (PendingNode & { analysis: NodeAnalysisRecord })[]): void {
    if (!this.#db || list.length === 0) return;
    const db = this.#db;
    try {
      db.transaction(() => {
        const st = db.state();
        if (db.attachAnalyses(list, st) > 0) db.setState(st);
      });
      this.#state = { ...this.#state, ...pickRanked(db.state()) };
      this.#followChanges();
    } catch (e) {
      if (isUnusable(e)) this.#broken = `${this.#dbName} is unusable (${(e as Error).message})`;
      // Otherwise (busy, read-only): the analyses are simply computed again next time.
    }
  }

  tokens(payloadSha256: string, tokenizer: string): number | undefined {
    return this.#read(undefined, (db) => db.tokens(payloadSha256, tokenizer));
  }

  putTokens(list: readonly { payload_sha256: string; tokenizer: string; count: number }[]): void {
    if (!this.#db || list.length === 0) return;
    try {
      this.#db.transaction(() => this.#db!.putTokens(list));
    } catch {
      // Best effort, as attachAnalyses.
    }
  }

  flagCounts(): FlagCounts {
    return this.#read({ sanitized: 0, unsanitized: 0, unknown: this.#state.entries }, (db) =>
      db.flagCounts(),
    );
  }

  unflagged(after: number, limit: number): IndexEntry[] {
    return this.#read([], (db) => db.unflaggedAfter(after, limit)).map(
      (j) => JSON.parse(j) as IndexEntry,
    );
  }

  putFlags(list: readonly NodeFlag[]): void {
    if (!this.#db || list.length === 0) return;
    try {
      this.#db.transaction(() => this.#db!.putFlags(list));
    } catch {
      // Best effort, as putTokens: the flags are read from the nodes again next time.
    }
  }

  get location(): string {
    return this.layout.dir;
  }

  async exists(): Promise<boolean> {
    return storeExists(this.layout.dir);
  }

  entryFilePath(step: number): string {
    return indexFilePath(this.layout, step);
  }

  nodePath(step: number): string {
    return canonicalNodePath(this.layout, step);
  }

  orphanPath(step: number): string | null {
    const path = canonicalNodePath(this.layout, step);
    return existsSync(path) ? path : null;
  }

  /** Files are read where they are used: nothing to fetch. */
  async load(): Promise<void> {}

  verifyNode(entry: IndexEntry): VerifiedNode {
    return verifyNode(this.layout, entry);
  }

  readNodeText(entry: IndexEntry): string | null {
    try {
      return readFileSync(checkContainment(this.layout, entry.step_id, entry.file_path), 'utf8');
    } catch {
      return null;
    }
  }

  async appendRecords(kind: string, text: string): Promise<void> {
    if (text.length === 0) return;
    const dir = this.layout.dir;
    const path = join(dir, `${kind}.jsonl`);
    // The same lock as the harness's appendEvents: two processes never interleave lines.
    await withWriteLock(dir, `${path}.lock`, this.#opts.lockTimeoutMs, () =>
      appendDurable(path, text),
    );
  }

  async readRecords(kind: string): Promise<{ path: string; text: string }> {
    const path = join(this.layout.dir, `${kind}.jsonl`);
    try {
      return { path, text: await readFile(path, 'utf8') };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      return { path, text: '' };
    }
  }

  async listNodes(): Promise<{ steps: Map<number, string>; stray: string[] }> {
    const steps = new Map<number, string>();
    const stray: string[] = [];
    let names: string[] = [];
    try {
      // Off the event loop: a large store has a large directory.
      names = await readdir(this.layout.coldDir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    for (const name of names.sort()) {
      const m = NODE_FILE_RE.exec(name);
      if (m) steps.set(Number(m[1]), name);
      else stray.push(name);
    }
    return { steps, stray };
  }

  // --- writes ---

  #ensureWritable(): void {
    const dir = this.layout.dir;
    if (this.#opts.readOnly) {
      throw new UsageError(
        `this store was opened read-only; nothing can be written to it: ${dir}`,
        {
          path: dir,
        },
      );
    }
    try {
      mkdirSync(this.layout.coldDir, { recursive: true });
      accessSync(dir, constants.W_OK);
      accessSync(this.layout.coldDir, constants.W_OK);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new UsageError(
        `store directory is not writable (${code ?? 'error'}): ${dir} (check its permissions, or choose another --dir)`,
        { path: dir },
      );
    }
    if (this.#memory) {
      this.#memory = false;
      this.#dropDb();
    }
  }

  async write<T>(fn: (session: WriteSession) => Promise<T> | T): Promise<T> {
    this.#assertOpen();
    return this.#exclusive(async () => {
      this.#ensureWritable();
      const lock = this.#lockHandle();
      await lock.acquire(this.#opts.lockTimeoutMs);
      try {
        this.#healTornJournal();
        await this.#repair();
        return await fn(this.#session());
      } finally {
        lock.release();
      }
    });
  }

  #session(): WriteSession {
    return {
      get: (step) => this.get(step),
      nodeExists: (step) => existsSync(canonicalNodePath(this.layout, step)),
      writeNodes: (nodes) => this.#writeNodes(nodes),
      commit: (rows) => this.#commit(rows),
      evict: (step, at) => this.#evict(step, at),
      drop: (step, at, reason) => this.#drop(step, at, reason),
    };
  }

  async #writeNodes(nodes: readonly ColdNode[]): Promise<void> {
    await writeFilesDurable(
      nodes.map((n) => ({ path: canonicalNodePath(this.layout, n.step_id), data: prettyJson(n) })),
    );
  }

  /**
   * Appends records to the journal (fsynced: the commit point), then applies them to the index
   * in one transaction. A failure after the append cannot undo the commit: the index is marked
   * for rebuild from the files instead.
   */
  async #append(
    records: JournalRecord[],
    apply: (db: IndexDb, st: IndexState) => void,
    jsons?: readonly string[],
  ): Promise<void> {
    this.assertConsistent();
    const path = this.layout.journalPath;
    const st = { ...this.#state };
    let text = '';
    let created = false;
    if (st.journalStale) {
      unlinkSync(path);
      st.journalStale = false;
      st.journal = null;
    }
    if (st.journal === null) {
      st.journalOffset = 0;
      st.journalLines = 0;
      st.journalRecords = 0;
      st.createdAt ??= isoSeconds(this.#opts.clock());
      text += journalLine({
        op: 'base',
        snapshot_sha256: st.snapshotSha256,
        created_at: st.createdAt,
      });
      created = true;
    }
    records.forEach((r, i) => {
      text += journalLine(r, jsons?.[i]);
    });
    appendDurable(path, text);
    if (created) fsyncDir(this.layout.dir);
    // Committed. Everything below is derived.
    const db = this.#db!;
    try {
      db.transaction(() => {
        apply(db, st);
        st.journal = fileIdentity(path);
        st.journalOffset += Buffer.byteLength(text, 'utf8');
        st.journalLines += records.length + (created ? 1 : 0);
        st.journalRecords += records.length;
        db.setState(st);
      });
      this.#state = st;
      this.#followChanges();
    } catch (e) {
      this.#broken = `applying a commit to ${this.#dbName} failed (${(e as Error).message})`;
      this.#warn({ code: 'INDEX_REBUILT', message: this.#broken, path: this.indexPath ?? '' });
      return;
    }
    const snapshotSize = st.entries - st.journalRecords;
    if (st.journalRecords > Math.max(this.#opts.compactThreshold, snapshotSize)) {
      await this.#compactLocked();
    }
  }

  async #commit(rows: readonly CommitRow[]): Promise<void> {
    if (rows.length === 0) return;
    // Each entry is serialised once: for its journal record and for its index row.
    const jsons = rows.map((r) => canonicalJson(r.entry));
    await this.#append(
      rows.map((r) => ({ op: 'fold' as const, entry: r.entry })),
      (db, st) => {
        db.putTokens(
          rows.flatMap((r) =>
            r.tokens
              ? [
                  {
                    payload_sha256: r.entry.payload_sha256,
                    tokenizer: r.tokens.tokenizer,
                    count: r.tokens.count,
                  },
                ]
              : [],
          ),
        );
        db.putFlags(commitFlags(rows));
        db.insertFolds(
          rows.map((r, i) => ({ entry: r.entry, json: jsons[i]!, analysis: r.analysis })),
          st,
        );
      },
      jsons.map(foldRecordJson),
    );
  }

  async #evict(step: number, evictedAt: string): Promise<void> {
    await this.#append([{ op: 'evict', step_id: step, evicted_at: evictedAt }], (db, st) => {
      const json = db.entryJson(step);
      if (json === undefined) throw new Error(`step ${step} is not indexed`);
      const entry = JSON.parse(json) as IndexEntry;
      db.evict(step, canonicalJson({ ...entry, evicted: true }), evictedAt, entry.evicted, st);
    });
  }

  async #drop(step: number, droppedAt: string, reason: string): Promise<void> {
    await this.#append([{ op: 'drop', step_id: step, dropped_at: droppedAt, reason }], (db, st) => {
      if (!dropRow(db, st, step, this.#opts.analyzer?.keyOf)) {
        throw new Error(`step ${step} is not indexed`);
      }
    });
  }

  reportBroken(reason: string): never {
    this.#broken = `${this.#dbName ?? 'the index'} is damaged (${reason})`;
    throw new IndexBrokenError(this.#broken);
  }

  async compact(): Promise<number> {
    this.#assertOpen();
    if (!existsSync(this.layout.dir)) return 0;
    return this.write(() => this.#compactLocked());
  }

  /**
   * Writes `recall_index.json` (and `eviction_log.json`) exactly in the reference layout from
   * the index, streaming in key order, then removes the journal. Call holding the lock.
   */
  async #compactLocked(): Promise<number> {
    this.assertConsistent();
    const st = { ...this.#state };
    if (st.journal === null && !st.journalStale && st.snapshot !== null) return 0;
    if (st.entries === 0 && st.journal === null && !st.journalStale) return 0;
    const compacted = st.journalRecords;
    const db = this.#db!;
    const L = this.layout;
    const evictions = db.evictions();
    if (evictions.length > 0)
      writeFileAtomic(L.evictionLogPath, prettyJson({ evicted: evictions }), false);
    const createdAt = st.createdAt ?? isoSeconds(this.#opts.clock());
    async function* pages(): AsyncGenerator<SnapshotNode[]> {
      let key = '';
      for (;;) {
        const page = db.nodesAfterKey(key, PAGE);
        if (page.length === 0) return;
        yield page;
        key = page[page.length - 1]!.key;
        await turn();
      }
    }
    const sha = await writeSnapshot(L.indexPath, { createdAt, pages: pages() });
    if (existsSync(L.journalPath)) unlinkSync(L.journalPath);
    fsyncDir(L.dir);
    st.snapshot = fileIdentity(L.indexPath);
    st.snapshotSha256 = sha;
    st.snapshotVerified = false;
    st.evictionLog = fileIdentity(L.evictionLogPath);
    st.journal = null;
    st.journalOffset = 0;
    st.journalLines = 0;
    st.journalRecords = 0;
    st.journalStale = false;
    st.createdAt = createdAt;
    // The change feed starts over with the new snapshot (readers' caches start over too).
    st.epoch++;
    db.transaction(() => {
      db.clearChanges();
      db.setState(st);
    });
    this.#state = st;
    return compacted;
  }

  async reindex(): Promise<void> {
    this.#assertOpen();
    if (!existsSync(this.layout.dir)) return;
    await this.write(() => this.#rebuild('reindex', false, false));
  }

  // --- checks ---

  async checkIndex(): Promise<IndexCheck> {
    this.#assertOpen();
    const path =
      this.indexPath ?? (this.#memory ? '(in memory)' : join(this.layout.dir, 'index-*.sqlite'));
    const base = { path, entries: this.#state.entries, pending: 0 };
    if (!this.#db) return { ...base, state: 'absent' };
    const v = await this.#verdict();
    if (v.kind !== 'fresh') {
      return { ...base, state: 'stale', message: v.kind === 'rebuild' ? v.reason : v.kind };
    }
    const pending = this.pendingCount();
    const quick = this.#memory ? 'ok' : await quickCheck(this.indexPath!);
    if (quick !== null && quick !== 'ok')
      return { ...base, pending, state: 'stale', message: `quick_check: ${quick}` };
    const mismatch = await this.#compareEntries();
    if (mismatch) return { ...base, pending, state: 'stale', message: mismatch };
    return { ...base, pending, state: 'fresh' };
  }

  /** Compares every entry of the index with recall_index.json + journal. */
  async #compareEntries(): Promise<string | null> {
    const db = this.#db!;
    const L = this.layout;
    if (this.loadProblem) return null;
    // The journal's records (bounded by compaction to about the snapshot's size).
    // Step → its entry as of the journal's end (null: dropped).
    const journalFolds = new Map<number, IndexEntry | null>();
    const journalEvicted = new Set<number>();
    if (existsSync(L.journalPath) && !this.#state.journalStale) {
      const text = await readFile(L.journalPath, 'utf8');
      // In slices of whole lines, a turn of the event loop between them.
      for (let at = 0; at < text.length; ) {
        const end = text.indexOf('\n', Math.min(text.length - 1, at + (1 << 20)));
        const slice = text.slice(at, end < 0 ? text.length : end + 1);
        at += slice.length;
        for (const r of parseJournal(slice).records) {
          if (r.op === 'fold') journalFolds.set(r.entry.step_id, r.entry);
          else if (r.op === 'evict') journalEvicted.add(r.step_id);
          else if (r.op === 'drop') {
            journalFolds.set(r.step_id, null);
            journalEvicted.delete(r.step_id);
          }
        }
        await turn();
      }
    }
    const expect = (raw: unknown): { step: number; json: string } | string => {
      const p = parseEntry(raw);
      if (!p.ok) return `an entry ${p.reason}`;
      const e = journalEvicted.has(p.entry.step_id) ? { ...p.entry, evicted: true } : p.entry;
      return { step: e.step_id, json: canonicalJson(e) };
    };
    let seen = 0;
    let problem: string | null = null;
    const check = (raw: unknown) => {
      if (problem) return;
      const x = expect(raw);
      if (typeof x === 'string') {
        problem = x;
        return;
      }
      seen++;
      if (db.entryJson(x.step) !== x.json)
        problem = `step ${x.step} differs from the durable index`;
    };
    if (existsSync(L.indexPath)) {
      const r = await readSnapshot(L.indexPath, (members) => {
        for (const m of members) {
          if (m.kind !== 'node') continue;
          const step = Number(m.key);
          const j = journalFolds.get(step);
          journalFolds.delete(step);
          // Dropped by the journal (skipped), folded again after a drop, or as in the snapshot.
          if (j !== null) check(j ?? m.value);
        }
      });
      if (!r.ok) return `recall_index.json does not parse (${r.reason})`;
    }
    for (const e of journalFolds.values()) if (e !== null) check(e);
    if (problem) return problem;
    const count = this.#state.entries;
    if (seen !== count) return `the index holds ${count} entries, the durable state ${seen}`;
    return null;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#lock?.close();
    if (!this.#memory && this.#db) this.#db.closeAsRollback();
    this.#dropDb();
  }
}

type RankedCounters = 'rankedDocs' | 'rankedLength' | 'rankedParts' | 'rankedPartLength';

function pickRanked(st: IndexState): Pick<IndexState, RankedCounters> {
  return {
    rankedDocs: st.rankedDocs,
    rankedLength: st.rankedLength,
    rankedParts: st.rankedParts,
    rankedPartLength: st.rankedPartLength,
  };
}
