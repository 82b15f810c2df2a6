import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  type Stats,
  statSync,
  unlinkSync,
} from 'node:fs';
import { appendDurable, fsyncDir, writeFileAtomic } from '../fs/durable-fs.js';
import { canonicalJson, prettyJson, sha256Hex } from '../protocol/canonical-json.js';
import { IntegrityCheckError } from '../protocol/errors.js';
import { checkEvictionLog, checkIndexEntry, checkRecallIndex } from '../protocol/schemas.js';
import { isoSeconds } from '../protocol/time.js';
import { type IndexEntry, IPCF_VERSION, PROJECTION_VERSION } from '../protocol/types.js';
import { type JournalRecord, journalLine, parseJournal } from './journal.js';
import { NODE_FILE_RE, type StoreLayout } from './layout.js';
import { isWriteLocked, withWriteLock } from './lock.js';

/** Receives every change to the index so an in-memory structure can follow it incrementally. */
export interface IndexListener {
  reset(entries: Iterable<IndexEntry>): void;
  add(entry: IndexEntry): void;
  evict(stepId: number): void;
}

/** A state problem found while loading: the store refuses to serve until it is resolved. */
export interface LoadProblem {
  kind: 'index' | 'journal';
  path: string;
  message: string;
}

interface FileId {
  ino: number;
  size: number;
  mtimeMs: number;
}

function fileId(st: Stats | undefined): FileId | null {
  return st ? { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs } : null;
}

function statOrNull(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

function sameId(a: FileId | null, b: FileId | null): boolean {
  if (a === null || b === null) return a === b;
  return a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

/** Options of {@link Store}. */
export interface StoreOptions {
  lockTimeoutMs: number;
  /** Compact when the journal holds more than max(this, snapshot entries) records. */
  compactThreshold: number;
  clock: () => Date;
}

function normaliseEntry(raw: Record<string, unknown>): IndexEntry {
  if (
    raw.projection_version !== undefined &&
    raw.summary !== undefined &&
    raw.token_estimate !== undefined &&
    raw.identifiers !== undefined &&
    raw.files !== undefined &&
    raw.commands !== undefined &&
    raw.errors !== undefined
  ) {
    return raw as unknown as IndexEntry;
  }
  return {
    ...(raw as unknown as IndexEntry),
    projection_version: (raw.projection_version as string | undefined) ?? PROJECTION_VERSION,
    summary: (raw.summary as string | undefined) ?? '',
    token_estimate: (raw.token_estimate as number | undefined) ?? 1,
    identifiers: (raw.identifiers as string[] | undefined) ?? [],
    files: (raw.files as string[] | undefined) ?? [],
    commands: (raw.commands as string[] | undefined) ?? [],
    errors: (raw.errors as string[] | undefined) ?? [],
  };
}

/**
 * The persistent page table: `recall_index.json` (snapshot) + `recall_index.journal`, and
 * `eviction_log.json`. Holds the index in memory; `refresh()` catches up with other processes
 * by stat-ing two files and reading only what was appended, and reloads fully only when
 * another process compacted.
 */
export class Store {
  readonly layout: StoreLayout;
  private readonly opts: StoreOptions;
  private readonly listener: IndexListener;
  private entries = new Map<number, IndexEntry>();
  private evictions: { step_id: number; evicted_at: string }[] = [];
  private createdAt: string | null = null;
  private snapId: FileId | null = null;
  private snapHash: string | null = null;
  private journalId: FileId | null = null;
  private journalOffset = 0;
  private journalLines = 0;
  private journalRecords = 0;
  private journalStale = false;
  private problem: LoadProblem | null = null;
  private holdingLock = false;

  constructor(layout: StoreLayout, opts: StoreOptions, listener: IndexListener) {
    this.layout = layout;
    this.opts = opts;
    this.listener = listener;
  }

  /** The load problem, if the persistent state is inconsistent. */
  get loadProblem(): LoadProblem | null {
    return this.problem;
  }

  /** Journal records not yet compacted into the snapshot. */
  get journalEntries(): number {
    return this.journalRecords;
  }

  get size(): number {
    return this.entries.size;
  }

  get(stepId: number): IndexEntry | undefined {
    return this.entries.get(stepId);
  }

  /** Entries in step order. */
  all(): IndexEntry[] {
    return [...this.entries.values()].sort((a, b) => a.step_id - b.step_id);
  }

  /** Throws the load problem as an {@link IntegrityCheckError} naming the path. */
  assertConsistent(): void {
    if (this.problem) {
      throw new IntegrityCheckError(`${this.problem.message} (run 'contextfold validate')`, {
        path: this.problem.path,
      });
    }
  }

  /** Brings the in-memory index up to date with the files on disk. */
  refresh(): void {
    for (let attempt = 0; attempt < 5; attempt++) {
      const snap = fileId(statOrNull(this.layout.indexPath));
      if (!sameId(snap, this.snapId)) {
        this.fullReload();
        if (sameId(fileId(statOrNull(this.layout.indexPath)), this.snapId)) return;
        continue;
      }
      const jst = fileId(statOrNull(this.layout.journalPath));
      if (jst === null) {
        if (this.journalId !== null) {
          // The journal vanished without the snapshot changing: someone removed it by hand.
          this.fullReload();
        }
        return;
      }
      if (
        this.journalId === null ||
        jst.ino !== this.journalId.ino ||
        jst.size < this.journalOffset
      ) {
        this.fullReload();
        return;
      }
      if (jst.size > this.journalOffset || this.problem?.kind === 'journal') this.readJournalTail();
      return;
    }
  }

  private fullReload(): void {
    this.entries = new Map();
    this.evictions = [];
    this.createdAt = null;
    this.problem = null;
    this.snapHash = null;
    this.journalId = null;
    this.journalOffset = 0;
    this.journalLines = 0;
    this.journalRecords = 0;
    this.journalStale = false;
    const st = statOrNull(this.layout.indexPath);
    this.snapId = fileId(st);
    if (st) this.loadSnapshot();
    if (!this.problem) this.loadEvictionLog();
    if (!this.problem) this.readJournalTail();
    this.listener.reset(this.entries.values());
  }

  private loadSnapshot(): void {
    const path = this.layout.indexPath;
    const bytes = readFileSync(path);
    this.snapHash = sha256Hex(bytes);
    let parsed: unknown;
    try {
      parsed = JSON.parse(bytes.toString('utf8'));
    } catch {
      this.problem = {
        kind: 'index',
        path,
        message: `recall index is not valid JSON (truncated or corrupted): ${path}`,
      };
      return;
    }
    const bad = checkRecallIndex(parsed);
    if (bad) {
      this.problem = {
        kind: 'index',
        path,
        message: `recall index is malformed at ${bad}: ${path}`,
      };
      return;
    }
    const index = parsed as { created_at?: string; nodes: Record<string, Record<string, unknown>> };
    this.createdAt = index.created_at ?? null;
    for (const [key, raw] of Object.entries(index.nodes)) {
      const e = checkIndexEntry(raw);
      if (e) {
        this.problem = {
          kind: 'index',
          path,
          message: `recall index entry ${key} is malformed at ${e}: ${path}`,
        };
        return;
      }
      if (String(raw.step_id) !== key) {
        this.problem = {
          kind: 'index',
          path,
          message: `recall index key ${key} holds step_id ${raw.step_id}: ${path}`,
        };
        return;
      }
      const entry = normaliseEntry(raw);
      this.entries.set(entry.step_id, entry);
    }
  }

  private loadEvictionLog(): void {
    const path = this.layout.evictionLogPath;
    if (!existsSync(path)) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(path, 'utf8'));
    } catch {
      this.problem = { kind: 'index', path, message: `eviction log is not valid JSON: ${path}` };
      return;
    }
    const bad = checkEvictionLog(parsed);
    if (bad) {
      this.problem = {
        kind: 'index',
        path,
        message: `eviction log is malformed at ${bad}: ${path}`,
      };
      return;
    }
    this.evictions = (parsed as { evicted: { step_id: number; evicted_at: string }[] }).evicted.map(
      (e) => ({
        step_id: e.step_id,
        evicted_at: e.evicted_at,
      }),
    );
  }

  private readJournalTail(): void {
    const path = this.layout.journalPath;
    const st = statOrNull(path);
    if (!st) return;
    // Read only what was appended since the last refresh.
    const id = fileId(st)!;
    const length = Math.max(0, st.size - this.journalOffset);
    const chunk = Buffer.alloc(length);
    const fd = openSync(path, 'r');
    let got = 0;
    try {
      while (got < length) {
        const n = readSync(fd, chunk, got, length - got, this.journalOffset + got);
        if (n === 0) break;
        got += n;
      }
    } finally {
      closeSync(fd);
    }
    const text = chunk.subarray(0, got).toString('utf8');
    const end = this.journalOffset + got;
    const parsed = parseJournal(text, this.journalLines + 1);
    let recs = parsed.records;
    if (this.journalOffset === 0 && recs.length > 0) {
      const base = recs[0]!;
      if (base.op !== 'base') {
        this.problem = {
          kind: 'journal',
          path,
          message: `journal does not start with its base record: ${path}`,
        };
        return;
      }
      if (base.snapshot_sha256 !== this.snapHash) {
        // A compaction committed (snapshot renamed) but died before removing the journal:
        // every record is already in the snapshot. The next writer removes it under the lock.
        this.journalStale = true;
        this.journalId = { ...id, size: end };
        this.journalOffset = end;
        return;
      }
      this.createdAt ??= base.created_at;
      recs = recs.slice(1);
    }
    for (const rec of recs) {
      const err = this.apply(rec);
      if (err) {
        this.problem = { kind: 'journal', path, message: `${err}: ${path}` };
        return;
      }
    }
    this.journalOffset += parsed.consumed;
    this.journalLines += parsed.records.length;
    this.journalRecords += recs.length;
    this.journalId = { ...id, size: this.journalOffset };
    if (parsed.invalid) {
      this.problem = {
        kind: 'journal',
        path,
        message: `journal line ${parsed.invalid.line} is corrupt (${parsed.invalid.reason})`,
      };
    } else if (
      parsed.tornTail &&
      // Another process may be mid-append; under our own lock a torn tail is certainly torn.
      (this.holdingLock || !isWriteLocked(this.layout.dir, this.layout.lockPath))
    ) {
      this.problem = {
        kind: 'journal',
        path,
        message: `journal ends in a torn record after line ${this.journalLines} (a fold was interrupted; nothing after it is trusted) : ${path}`,
      };
    } else if (this.problem?.kind === 'journal') {
      this.problem = null;
    }
  }

  private apply(rec: JournalRecord): string | null {
    switch (rec.op) {
      case 'fold': {
        const bad = checkIndexEntry(rec.entry);
        if (bad) return `journal fold record is malformed at ${bad}`;
        const entry = normaliseEntry(rec.entry as unknown as Record<string, unknown>);
        const had = this.entries.get(entry.step_id);
        if (had) {
          if (canonicalJson(had) === canonicalJson(entry)) return null;
          return `journal folds step ${entry.step_id} again with different content`;
        }
        this.entries.set(entry.step_id, entry);
        this.listener.add(entry);
        return null;
      }
      case 'evict': {
        const had = this.entries.get(rec.step_id);
        if (!had) return `journal evicts step ${rec.step_id}, which is not indexed`;
        if (!had.evicted) this.entries.set(rec.step_id, { ...had, evicted: true });
        this.evictions.push({ step_id: rec.step_id, evicted_at: rec.evicted_at });
        this.listener.evict(rec.step_id);
        return null;
      }
      case 'drop': {
        if (!this.entries.delete(rec.step_id))
          return `journal drops step ${rec.step_id}, which is not indexed`;
        this.evictions = this.evictions.filter((e) => e.step_id !== rec.step_id);
        // Rare (repair only): rebuild the listeners' view rather than widen their interface.
        this.listener.reset(this.entries.values());
        return null;
      }
      default:
        return `journal has a second base record`;
    }
  }

  /** Runs `fn` under the inter-process write lock, after catching up with the disk. */
  async locked<T>(fn: () => T | Promise<T>): Promise<T> {
    return withWriteLock(
      this.layout.dir,
      this.layout.lockPath,
      this.opts.lockTimeoutMs,
      async () => {
        this.holdingLock = true;
        try {
          this.refresh();
          return await fn();
        } finally {
          this.holdingLock = false;
        }
      },
    );
  }

  /** Creates the store directories. */
  ensureDirs(): void {
    mkdirSync(this.layout.coldDir, { recursive: true });
  }

  /**
   * Appends records to the journal and applies them in memory. Call under {@link locked}
   * with the state consistent. Compacts when the journal grew past its bound.
   */
  append(records: JournalRecord[]): void {
    this.assertConsistent();
    const path = this.layout.journalPath;
    let text = '';
    let created = false;
    if (this.journalStale) {
      unlinkSync(path);
      this.journalStale = false;
      this.journalId = null;
      this.journalOffset = 0;
      this.journalLines = 0;
    }
    if (this.journalId === null) {
      this.createdAt ??= isoSeconds(this.opts.clock());
      text += journalLine({
        op: 'base',
        snapshot_sha256: this.snapHash,
        created_at: this.createdAt,
      });
      created = true;
    }
    for (const r of records) text += journalLine(r);
    appendDurable(path, text);
    if (created) fsyncDir(this.layout.dir);
    for (const r of records) {
      const err = this.apply(r);
      if (err) throw new IntegrityCheckError(err, { path });
    }
    const st = statSync(path);
    this.journalLines += records.length + (created ? 1 : 0);
    this.journalRecords += records.length;
    this.journalOffset = st.size;
    this.journalId = fileId(st);
    // Compact once the journal outgrows the snapshot: geometric, so O(1) amortised per fold.
    const snapshotSize = this.entries.size - this.journalRecords;
    if (this.journalRecords > Math.max(this.opts.compactThreshold, snapshotSize)) this.compact();
  }

  /**
   * Writes the snapshot (`recall_index.json`, and `eviction_log.json` if anything was evicted)
   * exactly in the reference layout and removes the journal. Call under {@link locked}.
   * Returns the number of journal records folded in.
   */
  compact(): number {
    this.assertConsistent();
    const compacted = this.journalRecords;
    if (this.journalId === null && !this.journalStale && this.snapId !== null) return 0;
    if (this.entries.size === 0 && this.journalId === null && !this.journalStale) return 0;
    const nodes: Record<string, IndexEntry> = {};
    for (const e of this.entries.values()) nodes[String(e.step_id)] = e;
    const index = {
      created_at: this.createdAt ?? isoSeconds(this.opts.clock()),
      ipcf_version: IPCF_VERSION,
      nodes,
      projection_version: PROJECTION_VERSION,
    };
    // Compact canonical JSON: the reference's field set and layout; formatting is free and
    // hashes never depend on it, and the compact form loads in about half the time.
    const bytes = Buffer.from(canonicalJson(index), 'utf8');
    if (this.evictions.length > 0) {
      writeFileAtomic(this.layout.evictionLogPath, prettyJson({ evicted: this.evictions }), false);
    }
    writeFileAtomic(this.layout.indexPath, bytes, false);
    if (existsSync(this.layout.journalPath)) unlinkSync(this.layout.journalPath);
    fsyncDir(this.layout.dir);
    this.snapHash = sha256Hex(bytes);
    this.snapId = fileId(statSync(this.layout.indexPath));
    this.journalId = null;
    this.journalOffset = 0;
    this.journalLines = 0;
    this.journalRecords = 0;
    this.journalStale = false;
    return compacted;
  }

  /** Names of everything in `cold_nodes/`, sorted: node files by step, and other entries. */
  listColdDir(): { steps: Map<number, string>; stray: string[] } {
    const steps = new Map<number, string>();
    const stray: string[] = [];
    let names: string[] = [];
    try {
      names = readdirSync(this.layout.coldDir);
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
}
