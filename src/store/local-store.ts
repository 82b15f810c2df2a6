import { accessSync, constants, existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeDirs } from '../fs/make-dirs.js';
import { LockTimeoutError, UsageError } from '../protocol/errors.js';
import { IntegrityCheckError } from '../protocol/ipcf-errors.js';
import type { IndexEntry } from '../protocol/types.js';
import { fillCache, followChanges } from './cache-follower.js';
import { compactLocked } from './compaction.js';
import { checkContainment } from './containment.js';
import { fieldStatsOf } from './field-stats.js';
import { fileIdentity } from './file-identity.js';
import type {
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
import { compareEntries } from './index-check.js';
import {
  FIELD_RANKED,
  FIELD_REFERENCE,
  type IndexDb,
  type IndexState,
  isUnusable,
} from './index-db.js';
import { deadBuildFiles } from './index-files.js';
import { IndexGeneration } from './index-generation.js';
import type { LoadProblem } from './index-loader.js';
import {
  canonicalNodePath,
  indexFilePath,
  NODE_FILE_RE,
  nodeFileName,
  type StoreLayout,
  storeExists,
} from './layout.js';
import type { LocalStoreOptions } from './local-store-options.js';
import type { FlagCounts, NodeFlag } from './node-flag.js';
import { quickCheck } from './quick-check.js';
import { ReadCache } from './read-cache.js';
import {
  appendWithHead,
  fileLogLines,
  headFilePath,
  notAFile,
  type RecordsRead,
  readHeadFile,
} from './records-head.js';
import { expectRecords, fileSize, type RecordsMark } from './records-mark.js';
import { SerialQueue } from './serial-queue.js';
import { type VerifiedNode, verifyNode } from './verify.js';
import { WriteLock, waitNotice, withWriteLock } from './write-lock.js';
import { type WriteContext, writeSession } from './write-session.js';

export type { LocalStoreOptions } from './local-store-options.js';

const FIELDS: Record<PostingField, number> = {
  reference: FIELD_REFERENCE,
  ranked: FIELD_RANKED,
};

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

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
  /** The derived index in use, and the logic that opens, judges and repairs it. */
  readonly #gen: IndexGeneration;
  /** What the write path and compaction reach of this store. */
  readonly #ctx: WriteContext;
  #lock: WriteLock | null = null;
  readonly #queue = new SerialQueue();
  #closed = false;
  /** Whether this store looked for the build files of dead processes yet. */
  #buildsSwept = false;
  readonly #cache = new ReadCache();
  readonly #warned = new Set<string>();

  constructor(layout: StoreLayout, options: LocalStoreOptions) {
    this.layout = layout;
    this.#opts = options;
    this.#gen = new IndexGeneration(layout, options, {
      warn: (w) => this.#warn(w),
      followChanges: () => this.#followChanges(),
    });
    this.#ctx = {
      layout,
      options,
      gen: this.#gen,
      get: (step) => this.get(step),
      assertConsistent: () => this.assertConsistent(),
      warn: (w) => this.#warn(w),
      followChanges: () => this.#followChanges(),
    };
  }

  // --- state ---

  get generation(): string {
    return this.#gen.generation;
  }

  /** See {@link IndexBackend.readVersion}: the read cache's place in the change feed. */
  get readVersion(): string | undefined {
    const generation = this.generation;
    return this.#cache.generation === generation ? `${generation}:${this.#cache.seq}` : undefined;
  }

  /** The index file in use (null: none yet, or in memory). */
  get indexPath(): string | null {
    return this.#gen.indexPath;
  }

  get loadProblem(): LoadProblem | null {
    return this.#gen.state.problem;
  }

  assertConsistent(): void {
    const p = this.loadProblem;
    if (p) {
      throw new IntegrityCheckError(`${p.message} (run 'contextfold validate')`, { path: p.path });
    }
  }

  stats(): IndexStats {
    const s = this.#gen.state;
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

  /**
   * Brings the read cache in step with the index: every fold, eviction and analysis since the
   * last look (this process's or another's) updates the cached lists it touches.
   */
  #followChanges(): void {
    followChanges(this.#gen.db!, this.#cache, this.generation, this.#opts.analyzer?.keyOf);
  }

  /**
   * Caches what was just read only if no change happened since the cache's position in the
   * feed (another process may have committed meanwhile: that read could count it twice later).
   */
  #fill(put: () => void): void {
    fillCache(this.#gen.db, this.#cache, this.generation, put);
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
    this.#removeDeadBuilds(false);
    const v = await this.#gen.verdict();
    if (v.kind === 'fresh' || v.kind === 'absent') return;
    if (this.#gen.memory) {
      await this.#exclusive(() => this.#gen.repair());
      return;
    }
    await this.#exclusive(async () => {
      const lock = this.#lockHandle();
      const deadline = Date.now() + this.#opts.lockTimeoutMs;
      const notice = waitNotice(() => this.#lockWait(lock.path));
      let delay = 1;
      for (;;) {
        notice();
        if (lock.tryAcquire()) {
          try {
            this.#gen.healTornJournal();
            await this.#gen.repair();
          } finally {
            lock.release();
          }
          return;
        }
        const again = await this.#gen.verdict();
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
   * The files rebuilds of processes that are gone left in the directory (see
   * {@link LocalStore.#removeDeadBuilds}: a read-only or unwritable store keeps them).
   */
  deadBuildPaths(): string[] {
    return deadBuildFiles(this.layout.dir).map((name) => join(this.layout.dir, name));
  }

  /**
   * Removes what rebuilds of processes that are gone left (a SIGKILLed `reindex`: a build file
   * as large as the index), once per store opened, holding the write lock (every rebuild of a
   * store directory holds it) and never a file of a live process. `sync` only looks when the
   * lock is free at once: a read-only store or a busy lock leaves them to the next open or write.
   */
  #removeDeadBuilds(locked: boolean): void {
    if (this.#buildsSwept || this.#opts.readOnly || this.#gen.memory) return;
    if (!existsSync(this.layout.dir) || deadBuildFiles(this.layout.dir).length === 0) {
      this.#buildsSwept = true;
      return;
    }
    const lock = this.#lockHandle();
    try {
      if (!locked && !lock.tryAcquire()) return;
    } catch {
      return; // no lock file can be made here (a read-only directory)
    }
    try {
      for (const name of deadBuildFiles(this.layout.dir)) {
        rmSync(join(this.layout.dir, name), { force: true });
      }
      this.#buildsSwept = true;
    } catch {
      // Best effort: the next open (or the next rebuild) tries again.
    } finally {
      if (!locked) lock.release();
    }
  }

  /** Says that this process waits for another's write lock (once per process). */
  #lockWait(path: string): void {
    this.#warn({
      code: 'LOCK_WAIT',
      message: `waiting for the write lock, held by another process (a long batch, compaction or reindex, or a stopped process): ${path}; giving up after ${this.#opts.lockTimeoutMs} ms`,
      path,
    });
  }

  #assertOpen(): void {
    if (this.#closed) throw new UsageError('this store is closed; open it again');
  }

  // --- reads ---

  #read<T>(fallback: T, fn: (db: IndexDb) => T): T {
    if (!this.#gen.db) return fallback;
    try {
      return fn(this.#gen.db);
    } catch (e) {
      if (!isUnusable(e)) throw e;
      this.#gen.broken = `${this.#gen.dbName ?? 'the index'} is unusable (${(e as Error).message})`;
      throw new IndexBrokenError(this.#gen.broken);
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

  /** See {@link IndexBackend.dfMany}: the cached ones from memory, the others in one query. */
  dfMany(field: PostingField, terms: readonly string[]): number[] {
    const f = FIELDS[field];
    const out = new Array<number>(terms.length);
    const missing: string[] = [];
    const at: number[] = [];
    terms.forEach((term, i) => {
      const cached = this.#cache.df(f, term);
      if (cached !== undefined) out[i] = cached;
      else {
        missing.push(term);
        at.push(i);
      }
    });
    if (missing.length === 0) return out;
    const found = this.#read(
      missing.map(() => 0),
      (db) => db.dfMany(f, missing),
    );
    this.#fill(() => {
      for (let i = 0; i < missing.length; i++) this.#cache.putDf(f, missing[i]!, found[i]!);
    });
    at.forEach((to, i) => {
      out[to] = found[i]!;
    });
    return out;
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

  /** See {@link IndexBackend.topTermsWithPrefixMany}: cached ones from memory, the others together. */
  topTermsWithPrefixMany(
    field: PostingField,
    asks: readonly { prefix: string; maxLength: number }[],
    limit: number,
  ): string[][] {
    const f = FIELDS[field];
    const out = asks.map((a) => this.#cache.top(f, a.prefix, a.maxLength, limit));
    const missing = asks.filter((_, i) => out[i] === undefined);
    if (missing.length === 0) return out as string[][];
    const found = this.#read(
      missing.map(() => []),
      (db) => db.topTermsWithPrefixMany(f, missing, limit),
    );
    this.#fill(() => {
      missing.forEach((a, i) => {
        this.#cache.putTop(f, a.prefix, a.maxLength, limit, found[i]!);
      });
    });
    let next = 0;
    return out.map((terms) => terms ?? found[next++]!);
  }

  fieldStats(field: PostingField): FieldStats {
    return fieldStatsOf(field, this.#gen.state, () => this.#lastDocStep());
  }

  #lastDocStep(): number {
    const known = this.#cache.lastDocStep;
    if (known !== undefined) return known;
    const last = this.#read(-1, (db) => db.lastDocStep());
    this.#fill(() => {
      this.#cache.lastDocStep = last;
    });
    return last;
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

  docDetails(steps: readonly number[], tokenizer?: string): DocDetail[] {
    return this.#read([], (db) => db.docDetails(steps, tokenizer));
  }

  evictions(): { step_id: number; evicted_at: string }[] {
    return this.#read([], (db) => db.evictions());
  }

  pending(after: number, limit: number): PendingNode[] {
    return this.#read([], (db) => db.pending(after, limit));
  }

  pendingCount(): number {
    return this.#gen.state.entries - this.#gen.state.rankedDocs;
  }

  attachAnalyses(list: readonly (PendingNode & { analysis: NodeAnalysisRecord })[]): void {
    if (!this.#gen.db || list.length === 0) return;
    const db = this.#gen.db;
    try {
      db.transaction(() => {
        const st = db.state();
        if (db.attachAnalyses(list, st) > 0) db.setState(st);
      });
      this.#gen.state = { ...this.#gen.state, ...pickRanked(db.state()) };
      this.#followChanges();
    } catch (e) {
      if (isUnusable(e))
        this.#gen.broken = `${this.#gen.dbName} is unusable (${(e as Error).message})`;
      // Otherwise (busy, read-only): the analyses are simply computed again next time.
    }
  }

  tokens(payloadSha256: string, tokenizer: string): number | undefined {
    return this.#read(undefined, (db) => db.tokens(payloadSha256, tokenizer));
  }

  putTokens(list: readonly { payload_sha256: string; tokenizer: string; count: number }[]): void {
    if (!this.#gen.db || list.length === 0) return;
    try {
      this.#gen.db.transaction(() => this.#gen.db!.putTokens(list));
    } catch {
      // Best effort, as attachAnalyses.
    }
  }

  flagCounts(): FlagCounts {
    return this.#read({ sanitized: 0, unsanitized: 0, unknown: this.#gen.state.entries }, (db) =>
      db.flagCounts(),
    );
  }

  unflagged(after: number, limit: number): IndexEntry[] {
    return this.#read([], (db) => db.unflaggedAfter(after, limit)).map(
      (j) => JSON.parse(j) as IndexEntry,
    );
  }

  putFlags(list: readonly NodeFlag[]): void {
    if (!this.#gen.db || list.length === 0) return;
    try {
      this.#gen.db.transaction(() => this.#gen.db!.putFlags(list));
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

  async nodeSizes(steps: readonly number[]): Promise<Map<number, number>> {
    const sizes = new Map<number, number>();
    for (const step of steps) {
      const st = statSync(canonicalNodePath(this.layout, step), { throwIfNoEntry: false });
      if (st?.isFile()) sizes.set(step, st.size);
    }
    return sizes;
  }

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

  async appendRecords(kind: string, text: string, after?: RecordsMark): Promise<void> {
    if (text.length === 0) return;
    const dir = this.layout.dir;
    const path = join(dir, `${kind}.jsonl`);
    // The same lock as the harness's appendEvents: two processes never interleave lines.
    await withWriteLock(dir, `${path}.lock`, this.#opts.lockTimeoutMs, () => {
      const bytes = fileSize(path);
      if (after) expectRecords(path, bytes, after.bytes, 'bytes');
      appendWithHead(path, text, after ? after.lines : fileLogLines(path, bytes), bytes);
    });
  }

  async readRecords(kind: string): Promise<RecordsRead> {
    const path = join(this.layout.dir, `${kind}.jsonl`);
    // The head before the log: an append between the two reads leaves the log longer than
    // the head read, never shorter.
    const head = readHeadFile(path);
    const headPath = headFilePath(path);
    try {
      return { path, text: await readFile(path, 'utf8'), head, headPath };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw notAFile(e, path);
      return { path, text: '', head, headPath };
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
      // Only the canonical name is a step's node: `step_0000037.json` names no step (the
      // reference reports every step_*.json without an index entry), so it is stray, never
      // taken for step 37's file.
      if (m && nodeFileName(Number(m[1])) === name) steps.set(Number(m[1]), name);
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
      makeDirs(this.layout.coldDir);
      accessSync(dir, constants.W_OK);
      accessSync(this.layout.coldDir, constants.W_OK);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new UsageError(
        `store directory is not writable (${code ?? 'error'}): ${dir} (check its permissions, or choose another \`dir\`)`,
        { path: dir, option: 'dir' },
      );
    }
    if (this.#gen.memory) {
      this.#gen.memory = false;
      this.#gen.dropDb();
    }
  }

  async write<T>(fn: (session: WriteSession) => Promise<T> | T): Promise<T> {
    this.#assertOpen();
    return this.#exclusive(async () => {
      this.#ensureWritable();
      const lock = this.#lockHandle();
      await lock.acquire(this.#opts.lockTimeoutMs, () => this.#lockWait(lock.path));
      try {
        this.#removeDeadBuilds(true);
        this.#gen.healTornJournal();
        await this.#gen.repair();
        return await fn(writeSession(this.#ctx));
      } finally {
        lock.release();
      }
    });
  }

  reportBroken(reason: string): never {
    this.#gen.broken = `${this.#gen.dbName ?? 'the index'} is damaged (${reason})`;
    throw new IndexBrokenError(this.#gen.broken);
  }

  async compact(): Promise<number> {
    this.#assertOpen();
    if (!existsSync(this.layout.dir)) return 0;
    return this.write(() => compactLocked(this.#ctx));
  }

  async reindex(): Promise<void> {
    this.#assertOpen();
    if (!existsSync(this.layout.dir)) return;
    await this.write(() => this.#gen.rebuild('reindex', false, false));
  }

  /**
   * Throws if the index file this process writes to was deleted or replaced since it opened it:
   * what was written there since (a reindex's analyses) is lost.
   */
  assertIndexInPlace(): void {
    if (!this.#gen.displaced) return;
    const path = this.#gen.indexPath!;
    throw new UsageError(
      `the index ${path} was deleted or replaced while it was written (were index-*.sqlite files removed?): what was written there is lost; the store's files are unchanged, run the command again`,
      { path },
    );
  }

  // --- checks ---

  /**
   * Compares the index with the files. A check holds no lock: a writer in another process may
   * commit (a fold, a compaction) after the caller's last sync or while they are compared, and
   * the index looked stale when it was only behind. The index is brought up to date first, and a
   * check that finds it stale while the store's files changed since is done again (at most four
   * times); a stale index with unchanged files is reported at once.
   */
  async checkIndex(): Promise<IndexCheck> {
    this.#assertOpen();
    for (let attempt = 1; ; attempt++) {
      // Taken before the sync: a commit between the sync and the check changes it too.
      const before = this.#filesMark();
      await this.sync();
      const r = await this.#checkIndexOnce();
      if (r.state !== 'stale' || attempt === 4 || this.#filesMark() === before) return r;
    }
  }

  /** The identities of the files the index derives from: every commit changes one. */
  #filesMark(): string {
    const L = this.layout;
    return JSON.stringify([L.indexPath, L.journalPath, L.evictionLogPath].map(fileIdentity));
  }

  async #checkIndexOnce(): Promise<IndexCheck> {
    const path =
      this.indexPath ??
      (this.#gen.memory ? '(in memory)' : join(this.layout.dir, 'index-*.sqlite'));
    const base = { path, entries: this.#gen.state.entries, pending: 0 };
    if (!this.#gen.db) return { ...base, state: 'absent' };
    const v = await this.#gen.verdict();
    if (v.kind !== 'fresh') {
      return { ...base, state: 'stale', message: v.kind === 'rebuild' ? v.reason : v.kind };
    }
    const pending = this.pendingCount();
    const quick = this.#gen.memory ? 'ok' : await quickCheck(this.indexPath!);
    if (quick !== null && quick !== 'ok')
      return { ...base, pending, state: 'stale', message: `quick_check: ${quick}` };
    const mismatch = await compareEntries(this.#gen, this.layout);
    if (mismatch) return { ...base, pending, state: 'stale', message: mismatch };
    return { ...base, pending, state: 'fresh' };
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#lock?.close();
    if (!this.#gen.memory && this.#gen.db) this.#gen.db.closeAsRollback();
    this.#gen.dropDb();
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
