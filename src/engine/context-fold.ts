import { resolve } from 'node:path';
import { setImmediate as turn } from 'node:timers/promises';
import { resolveTokenizer, type Tokenizer } from '../extract/tokenizer.js';
import type { Redactor } from '../guard/redactor.js';
import {
  type ContextFoldError,
  isContextFoldError,
  type StepConflictError,
  StoreNotFoundError,
  UsageError,
} from '../protocol/errors.js';
import type { NodeNotFoundError } from '../protocol/ipcf-errors.js';
import { checkOptionKeys } from '../protocol/option-keys.js';
import { DEFAULT_POLICY, type HydrationPolicy, parsePolicy } from '../protocol/policy.js';
import { isoSeconds } from '../protocol/time.js';
import { DEFAULT_SESSION_ID, type IndexEntry } from '../protocol/types.js';
import { recall as recallIndex } from '../retrieval/recall.js';
import { referenceScan } from '../retrieval/reference-scan.js';
import type { IndexBackend } from '../store/index-backend.js';
import {
  assertNotAFile,
  assertNotInColdNodes,
  type StoreLayout,
  storeExists,
  storeLayout,
} from '../store/layout.js';
import type { PgStore } from '../store/pg/pg-store.js';
import { isPgUrl } from '../store/pg/pg-url.js';
import type { RecordsRead } from '../store/records-head.js';
import type { RecordsMark } from '../store/records-mark.js';
import { BatchFold, FOLD_ROUND, foldResult } from './batch-fold.js';
import {
  CLOSE_OPTION_KEYS,
  ENTRIES_AFTER_OPTION_KEYS,
  ENTRIES_PAGE_OPTION_KEYS,
  ENTRY_PAGES_OPTION_KEYS,
  HYDRATE_OPTION_KEYS,
  RECALL_OPTION_KEYS,
  REINDEX_OPTION_KEYS,
  SCAN_OPTION_KEYS,
} from './call-options.js';
import { DerivePool } from './derive-pool.js';
import { hydrateEntry } from './hydrate-node.js';
import { hydratedPages } from './hydrated-page.js';
import { checkNode } from './node-check.js';
import { checkOpenOptions } from './open-options.js';
import { type EngineStore, openBackend, readPolicy } from './open-store.js';
import { payloadText } from './payload-text.js';
import { RankedRetrieval } from './ranked-retrieval.js';
import { StoreHealth } from './store-health.js';
import { entryOrThrow, rankedCaps, readSynced, termView } from './store-reads.js';
import { localLayout, orphanEntry, quarantineFile } from './store-repair.js';
import { TokenCosts } from './token-costs.js';
import type {
  ContextFoldEngine,
  EntriesPage,
  EvictResult,
  FoldInput,
  FoldResult,
  HydrateOptions,
  HydrateResult,
  IndexWarning,
  NodeCheck,
  OpenOptions,
  PageInResult,
  RecallResult,
  RetrievalMode,
  ScanOptions,
  ScanResult,
  StatusResult,
  ValidateResult,
} from './types.js';

/** Entries read per page when the whole index is walked (validate, entries()). */
const ENTRY_PAGE = 1000;

/**
 * The IPCF-1.1 engine over one store directory.
 *
 * @example
 * const cf = await ContextFold.open({ dir: '.contextfold' });
 * await cf.fold({ stepId: 37, summary: 'PostgreSQL on 5433', content: '$ psql -p 5433' });
 * const { pages } = await cf.pageIn('Which port does PostgreSQL use?');
 * await cf.close();
 */
export class ContextFold implements ContextFoldEngine {
  readonly dir: string;
  readonly policy: HydrationPolicy;
  readonly tokenizer: Tokenizer;
  readonly sessionId: string;
  readonly retrieval: RetrievalMode;
  readonly redact: boolean;
  /** The secret redactor, loaded on first use: a process that only reads never loads it. */
  #redactor: Promise<Redactor> | undefined;
  /** `sanitized` flag of nodes by artifact hash (a node never changes under its hash). */
  private readonly sanitizedByArtifact = new Map<string, boolean>();
  /** The directory's paths (a local store; a database store has no directory). */
  private readonly layout: StoreLayout | null;
  private readonly store: EngineStore;
  private readonly ranked: RankedRetrieval;
  private readonly clock: () => Date;
  /** Token counts and chunks of payloads, cached (see `TokenCosts`). */
  private readonly costs: TokenCosts;
  private readonly readOnly: boolean;
  private readonly onWarning: OpenOptions['onWarning'];
  /** The warnings lists of the `validate` calls running (see `validate`). */
  private readonly warningLists = new Set<IndexWarning[]>();
  /** Tells a warning to `onWarning` and to the `validate` calls running. */
  private readonly warn = (warning: IndexWarning): void => {
    for (const list of this.warningLists) list.push(warning);
    this.onWarning?.(warning);
  };
  /** Worker threads for a long batch's analysis, made on the first one (see `BatchFold`). */
  private pool: DerivePool | undefined;
  /** Batch folding over this engine's state (see `BatchFold`). */
  private readonly batch: BatchFold;
  /** `status` and `validate` over this engine's state (see `StoreHealth`). */
  private readonly health: StoreHealth;
  private closed = false;
  /** Set by `close()`: it waits for the operations in flight, then closes. */
  private closing: Promise<void> | null = null;
  /** Operations started and not yet settled (see {@link ContextFold.track}). */
  private readonly inflight = new Set<Promise<unknown>>();

  private constructor(options: OpenOptions, pgStore?: typeof PgStore) {
    checkOpenOptions(options);
    const where = (options.store ?? options.dir)!;
    const pg = isPgUrl(where);
    this.layout = pg ? null : storeLayout(resolve(where));
    if (this.layout) {
      assertNotAFile(this.layout.dir);
      assertNotInColdNodes(this.layout.dir);
    }
    if (this.layout && options.mustExist && !storeExists(this.layout.dir)) {
      throw new StoreNotFoundError(
        `no store at ${this.layout.dir}: nothing has been folded or imported there`,
        { path: this.layout.dir },
      );
    }
    this.policy = options.policy
      ? parsePolicy(options.policy)
      : this.layout
        ? readPolicy(this.layout)
        : { ...DEFAULT_POLICY };
    this.tokenizer = resolveTokenizer(options.tokenizer);
    this.sessionId = options.sessionId ?? DEFAULT_SESSION_ID;
    this.retrieval = options.retrieval ?? 'ranked';
    this.clock = options.clock ?? (() => new Date());
    this.readOnly = options.readOnly === true;
    this.redact = options.redact ?? true;
    this.onWarning = options.onWarning;
    const opened = { ...options, onWarning: this.warn };
    this.store = openBackend(where, this.layout, opened, this.clock, pgStore);
    this.dir = this.store.location;
    this.costs = new TokenCosts(this.tokenizer, this.store);
    this.ranked = new RankedRetrieval({
      tokenizer: this.tokenizer,
      backend: this.store,
      verifiedText: (step) => payloadText(this.store.verifyNode(this.entryOrThrow(step))),
      entryOf: (step) => this.store.get(step),
      tokensOf: (step) => this.costs.tokensOf(step),
      knownTokens: (entry) => this.costs.knownTokens(entry),
      rememberTokens: (payload, count) => this.costs.rememberTokens(payload, count),
    });
    this.batch = new BatchFold({
      store: this.store,
      policy: this.policy,
      tokenizer: this.tokenizer,
      sessionId: this.sessionId,
      redact: this.redact,
      dir: this.dir,
      onWarning: this.warn,
      loadRedactor: () => this.loadRedactor(),
      derivePool: () => this.derivePool(),
      sanitizedByArtifact: this.sanitizedByArtifact,
      costs: this.costs,
    });
    this.health = new StoreHealth({
      store: this.store,
      layout: this.layout,
      dir: this.dir,
      read: (fn, load) => this.read(fn, load, true),
      entryPages: (o) => this.pages(o.pageSize ?? ENTRY_PAGE, true),
      sanitizedByArtifact: this.sanitizedByArtifact,
      warn: this.warn,
    });
  }

  /**
   * Opens (without creating) a store. Every operation first brings the derived index up to date
   * with the store's files (built on first use, caught up by what was appended since, rebuilt
   * if missing or unusable; see `onWarning`).
   */
  static async open(options: OpenOptions): Promise<ContextFold> {
    const where = options?.store ?? options?.dir;
    // The PostgreSQL client is loaded only for a database store: a local store's process (the
    // CLI, the hook) never pays for it.
    const pg = typeof where === 'string' && isPgUrl(where);
    const cf = new ContextFold(
      options,
      pg ? (await import('../store/pg/pg-store.js')).PgStore : undefined,
    );
    if (cf.store.kind === 'postgres') {
      try {
        if (options.mustExist) await cf.store.assertExists();
        else await cf.store.sync();
      } catch (e) {
        await cf.store.close();
        throw e;
      }
    }
    return cf;
  }

  /**
   * The derived index backend (entries, postings, statistics; see `IndexBackend`), for the
   * engine's own modules (store transfer, the PostgreSQL mirror check) and tests.
   *
   * @internal Not part of the public surface: left out of the published declarations.
   */
  get backend(): IndexBackend {
    return this.store;
  }

  /**
   * Refuses an operation once `close()` was called. `inner`: a call an operation in flight makes
   * itself, which still runs while `close()` waits for that operation. (Passed explicitly: an
   * AsyncLocalStorage would make every promise of the process about three times as costly on
   * Node 20.)
   */
  private assertOpen(inner = false): void {
    if (this.closed || (this.closing !== null && !inner))
      throw new UsageError('this ContextFold engine is closed; open the store again');
  }

  /**
   * Runs an operation that `close()` waits for: a batch called without await and then `close()`
   * closed the store under it (rounds committed, the rest refused with 'this store is closed').
   * `inner`: see {@link ContextFold.assertOpen}.
   */
  private track<T>(op: () => Promise<T>, inner = false): Promise<T> {
    this.assertOpen(inner);
    const p = op();
    this.inflight.add(p);
    const done = () => this.inflight.delete(p);
    p.then(done, done);
    return p;
  }

  /** The redactor of a redacting engine (secretlint and the guard tables load on first use). */
  private loadRedactor(): Promise<Redactor> | null {
    if (!this.redact) return null;
    this.#redactor ??= import('../guard/redactor.js').then((m) => m.defaultRedactor());
    return this.#redactor;
  }

  /** The text as a fold would store it (see {@link ContextFoldEngine.redactText}). */
  async redactText(text: string): Promise<string> {
    if (typeof text !== 'string') throw new UsageError('redactText needs a string');
    const redactor = this.loadRedactor();
    return redactor ? (await (await redactor).redactText(text)).text : text;
  }

  /** Texts redacted jointly (see {@link ContextFoldEngine.redactTexts}). */
  async redactTexts(texts: readonly string[]): Promise<string[]> {
    if (!Array.isArray(texts) || texts.some((t) => typeof t !== 'string')) {
      throw new UsageError('redactTexts needs an array of strings');
    }
    const redactor = this.loadRedactor();
    if (!redactor) return [...texts];
    return (await (await redactor).redactTexts(texts)).map((r) => r.text);
  }

  /**
   * Folds one turn: writes its cold node (temp file, fsync, rename, fsync dir) and appends its
   * index entry to the fsynced journal. Returns once both are durable. Folding the same step
   * with the same payload again is a no-op (`already_folded`); with another payload it is a
   * {@link StepConflictError}.
   */
  async fold(input: FoldInput): Promise<FoldResult> {
    const [r] = await this.foldMany([input]);
    return r!;
  }

  /**
   * Folds a batch: node files first (fsynced together), then one durable journal append per
   * round of up to 1,024 turns (the write lock is released between rounds, so other writers
   * are not held up by a long batch). Inputs are validated, and every step checked for a
   * conflict, before anything is written.
   */
  async foldMany(
    inputs: FoldInput[],
    onProgress?: (done: number, total: number, phase: 'preparing' | 'writing') => void,
  ): Promise<FoldResult[]> {
    this.assertOpen();
    if (!Array.isArray(inputs)) throw new UsageError('foldMany needs an array of fold inputs');
    const foldedAt = isoSeconds(this.clock());
    return this.track(async () => {
      try {
        // Redaction happens here, before the lock and before any byte is written.
        const prepared = await this.batch.prepareAll(inputs, foldedAt, onProgress);
        return await this.batch.foldPrepared(prepared, onProgress);
      } finally {
        // Only a batch of more than a round uses the workers. They hold a vocabulary each: a
        // long-lived process (a server, the hook server) does not keep them between batches,
        // nor after a batch that failed. A round still deriving ahead is cut short.
        if (inputs.length > FOLD_ROUND) await this.pool?.close();
      }
    });
  }

  /** The engine's worker pool, started on the first long batch; null where no worker can run. */
  private derivePool(): DerivePool | null {
    this.pool ??= new DerivePool();
    return this.pool.usable ? this.pool : null;
  }

  /**
   * Runs a read against the synced index; if the index file turns out corrupt on the way, it
   * is rebuilt from the store's files and the read runs once more.
   */
  private async read<T>(
    fn: () => T | Promise<T>,
    load: readonly number[] = [],
    inner = false,
  ): Promise<T> {
    return this.track(() => readSynced(this.store, fn, load), inner);
  }

  /** Explicit recall with coverage tiers and chronological labels (CONF-04). */
  async recall(query: string, options: { limit?: number } = {}): Promise<RecallResult> {
    if (typeof query !== 'string') throw new UsageError('recall needs a query string');
    checkOptionKeys('recall', options, RECALL_OPTION_KEYS);
    const limit = options?.limit;
    if (limit !== undefined && !(Number.isSafeInteger(limit) && limit >= 0)) {
      throw new UsageError(`recall limit must be an integer >= 0, got ${String(limit)}`);
    }
    return this.read(() => {
      this.store.assertConsistent();
      return recallIndex(termView(this.store), query, options);
    });
  }

  /** The software MMU's selection for a prompt (CONF-13), without hydrating anything. */
  async scan(prompt: string, options: ScanOptions = {}): Promise<ScanResult> {
    if (typeof prompt !== 'string') throw new UsageError('scan needs a prompt string');
    checkOptionKeys('scan', options, SCAN_OPTION_KEYS);
    const mode = options.mode ?? this.retrieval;
    if (mode !== 'reference' && mode !== 'ranked') {
      throw new UsageError(
        `unknown retrieval mode ${JSON.stringify(mode)}: use 'reference' or 'ranked'`,
      );
    }
    return this.scanNow(prompt, mode, options, false);
  }

  private scanNow(
    prompt: string,
    mode: 'reference' | 'ranked',
    options: ScanOptions,
    inner: boolean,
  ): Promise<ScanResult> {
    const caps = rankedCaps(this.policy, options);
    return this.read(
      async () => {
        this.store.assertConsistent();
        if (mode === 'ranked') {
          await this.ranked.prepare();
          return this.ranked.scan(prompt, caps);
        }
        return referenceScan(termView(this.store), prompt, {
          perCall: this.policy.max_rehydration_tokens_per_call,
          perTurn: caps.perTurn,
          tokensOf: (s) => this.costs.tokensOf(s),
        });
      },
      [],
      inner,
    );
  }

  private entryOrThrow(stepId: number): IndexEntry {
    return entryOrThrow(this.store, this.dir, stepId);
  }

  /**
   * Verified, bounded hydration (CONF-05/06/09/10/12): containment, existence, JSON, all three
   * hashes checked before any byte is returned. Over the per-call cap the payload is served in
   * chunks cut at line boundaries; `chunk` selects one.
   */
  async hydrate(stepId: number, options: HydrateOptions = {}): Promise<HydrateResult> {
    checkOptionKeys('hydrate', options, HYDRATE_OPTION_KEYS);
    return this.read(() => this.hydrateNow(stepId, options), stepList(stepId));
  }

  private hydrateNow(stepId: number, options: HydrateOptions): HydrateResult {
    this.store.assertConsistent();
    const entry = this.entryOrThrow(stepId);
    return hydrateEntry(
      { store: this.store, policy: this.policy, tokenizer: this.tokenizer, costs: this.costs },
      stepId,
      entry,
      options,
    );
  }

  /** The exact payload bytes of a step, verified (for `hydrate --raw`). */
  async hydrateBytes(stepId: number): Promise<Uint8Array> {
    return this.read(() => {
      this.store.assertConsistent();
      return this.store.verifyNode(this.entryOrThrow(stepId)).bytes;
    }, stepList(stepId));
  }

  /**
   * Passive page-in for one turn: scan the prompt, then hydrate each selected node within its
   * cost, verified. A node that fails verification is not paged in and is reported in
   * `failures` (never replaced by an older node).
   */
  async pageIn(prompt: string, options: ScanOptions = {}): Promise<PageInResult> {
    checkOptionKeys('pageIn', options, SCAN_OPTION_KEYS);
    if ((options.mode ?? this.retrieval) === 'ranked') {
      if (typeof prompt !== 'string') throw new UsageError('pageIn needs a prompt string');
      return this.read(async () => {
        this.store.assertConsistent();
        await this.ranked.prepare();
        // The picks' nodes fetched together (a database store), then paged in verified.
        const picks = this.ranked.scan(prompt, rankedCaps(this.policy, options)).selected;
        await this.store.load(picks.map((p) => p.step_id));
        return this.ranked.pageIn(prompt, rankedCaps(this.policy, options));
      });
    }
    // One operation: close() waits for the hydrations as well as the scan.
    return this.track(async () => {
      const scan = await this.scanNow(prompt, 'reference', options, true);
      return hydratedPages(scan, (stepId, o) =>
        this.read(() => this.hydrateNow(stepId, o), stepList(stepId), true),
      );
    });
  }

  /** Records that a step's page left the prompt (CONF-07): index `evicted`, eviction log. */
  async evict(stepId: number): Promise<EvictResult> {
    return this.track(async () => {
      // An unknown step is refused before the write lock is taken: taking it creates the store
      // directory (its lock file and index), so evicting in an empty directory made a store.
      // A database store tells an orphan from an unknown step by the node's row.
      await this.read(() => this.entryOrThrow(stepId), stepList(stepId), true);
      return this.store.write(async (tx) => {
        this.store.assertConsistent();
        this.entryOrThrow(stepId);
        const evicted_at = isoSeconds(this.clock());
        await tx.evict(stepId, evicted_at);
        return { step_id: stepId, evicted_at };
      });
    });
  }

  /**
   * Checks a step's canonical cold node file on its own, as if it had no index entry: contained
   * (no symlink), valid JSON, the step id it names, and every hash verified. Returns the index
   * entry it would get, or the error that refuses it. Reads only.
   */
  async checkOrphan(stepId: number): Promise<{ entry: IndexEntry } | { error: ContextFoldError }> {
    this.assertOpen();
    try {
      return { entry: this.orphanEntry(stepId) };
    } catch (e) {
      if (isContextFoldError(e)) return { error: e };
      throw e;
    }
  }

  private orphanEntry(stepId: number): IndexEntry {
    return orphanEntry(localLayout(this.layout, this.dir, 're-indexing an orphaned node'), stepId);
  }

  /**
   * Gives a verified orphan (a node written by a fold whose journal append never happened) its
   * index entry back, under the write lock. Anything but a fully verified orphan is refused.
   */
  async reindexOrphan(stepId: number): Promise<FoldResult> {
    return this.track(async () => {
      return this.store.write(async (tx) => {
        this.store.assertConsistent();
        if (tx.get(stepId)) {
          throw new UsageError(
            `step ${stepId} is indexed; only an orphaned node can be re-indexed`,
          );
        }
        const entry = this.orphanEntry(stepId);
        // No analysis here: the node is analysed from its verified bytes on the next ranked scan.
        await tx.commit([{ entry }]);
        return foldResult(entry, false);
      });
    });
  }

  /**
   * Removes a step's index entry (the node is gone or untrustworthy), journaled with the reason.
   * The node's bytes, if any, are not touched.
   */
  async dropEntry(
    stepId: number,
    reason: string,
  ): Promise<{ step_id: number; dropped_at: string }> {
    return this.track(async () => {
      return this.store.write(async (tx) => {
        this.store.assertConsistent();
        this.entryOrThrow(stepId);
        const dropped_at = isoSeconds(this.clock());
        await tx.drop(stepId, dropped_at, reason);
        return { step_id: stepId, dropped_at };
      });
    });
  }

  /**
   * Moves a file (or a symlink itself, never its target) from inside the store into
   * `quarantine/` under the store, keeping its relative path; an existing name gets a `.N`
   * suffix. Never deletes or rewrites bytes. Returns the new path.
   */
  async quarantine(path: string): Promise<string> {
    return this.track(async () => {
      return quarantineFile(this.store, localLayout(this.layout, this.dir, 'quarantine'), path);
    });
  }

  /** Counts and settings of the store, and the state of its derived index. */
  async status(): Promise<StatusResult> {
    return this.track(() => this.health.status(this));
  }

  /**
   * Checks the whole store (CONF-09/10/12): every indexed node verified as on hydrate, every
   * cold node file without an index entry reported as orphaned, stray and temp files reported,
   * journal and index consistency, and the derived index against the store's files. Reports
   * every problem with its path; repairs nothing. Walks the index page by page, giving the
   * event loop a turn between pages. The warnings said while it runs (a leftover rebuild file,
   * an index rebuilt from the store's files; also told to `onWarning`) are in its `warnings`.
   */
  async validate(): Promise<ValidateResult> {
    return this.track(async () => {
      const warnings: IndexWarning[] = [];
      this.warningLists.add(warnings);
      try {
        return { ...(await this.health.validate()), warnings };
      } finally {
        this.warningLists.delete(warnings);
      }
    });
  }

  /** Folds the journal into `recall_index.json` (exactly the reference layout afterwards). */
  async compact(): Promise<{ nodes: number; journal_entries_compacted: number }> {
    return this.track(() => this.compactNow());
  }

  private async compactNow(): Promise<{ nodes: number; journal_entries_compacted: number }> {
    const n = await this.store.compact();
    // Counted after a read: a database store's mirror catches up with its change feed there.
    return this.read(
      () => ({ nodes: this.store.stats().entries, journal_entries_compacted: n }),
      [],
      true,
    );
  }

  /**
   * Rebuilds the derived index from the store's files into a new file, then analyses every node
   * from its verified content (what a deleted or corrupt index costs, done on purpose).
   *
   * @example
   * await cf.reindex({ onProgress: (done, total) => console.error(`${done}/${total} analysed`) });
   */
  async reindex(
    options: {
      /** Nodes analysed so far, of those to analyse (the long part of a large store's rebuild). */
      onProgress?: (done: number, total: number) => void;
    } = {},
  ): Promise<{ nodes: number; analysed: number; index: string | null }> {
    checkOptionKeys('reindex', options, REINDEX_OPTION_KEYS);
    return this.track(async () => {
      await this.store.reindex();
      return this.read(
        async () => {
          this.store.assertConsistent();
          const before = this.store.pendingCount();
          await this.ranked.prepare(options.onProgress);
          // The index file deleted during the analysis took the analyses with it: not a success.
          if (this.store.kind === 'local') this.store.assertIndexInPlace();
          return {
            nodes: this.store.stats().entries,
            analysed: before - this.store.pendingCount(),
            index: this.store.indexPath,
          };
        },
        [],
        true,
      );
    });
  }

  /** The index entry of one step, or undefined if it is not folded. */
  async entry(stepId: number): Promise<IndexEntry | undefined> {
    if (!Number.isSafeInteger(stepId) || stepId < 0) {
      throw new UsageError(`step id must be a non-negative integer, got ${String(stepId)}`);
    }
    return this.read(() => this.store.get(stepId));
  }

  /**
   * Up to `limit` (default 1,000) index entries with a step greater than `after`, in step order:
   * a page of a walk over a large index (pass the last step of a page as the next `after`).
   *
   * @example
   * let page = await cf.entriesAfter({ limit: 500 });
   * while (page.length > 0) page = await cf.entriesAfter({ after: page.at(-1)!.step_id, limit: 500 });
   */
  async entriesAfter(options: { after?: number; limit?: number } = {}): Promise<IndexEntry[]> {
    checkOptionKeys('entriesAfter', options, ENTRIES_AFTER_OPTION_KEYS);
    const limit = options.limit ?? ENTRY_PAGE;
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new UsageError(`entriesAfter limit must be a positive integer, got ${String(limit)}`);
    }
    return this.read(() => this.store.page({ after: options.after, limit }));
  }

  /**
   * Every index entry in step order, page by page (memory bounded by one page; the event loop
   * gets a turn between pages).
   *
   * @example
   * for await (const page of cf.entryPages()) for (const e of page) console.log(e.step_id);
   */
  entryPages(options: { pageSize?: number } = {}): AsyncGenerator<IndexEntry[]> {
    checkOptionKeys('entryPages', options, ENTRY_PAGES_OPTION_KEYS);
    return this.pages(options.pageSize ?? ENTRY_PAGE, false);
  }

  /** {@link ContextFold.entryPages}; `inner`: see {@link ContextFold.assertOpen}. */
  private async *pages(pageSize: number, inner: boolean): AsyncGenerator<IndexEntry[]> {
    if (!Number.isSafeInteger(pageSize) || pageSize < 1) {
      throw new UsageError(
        `entryPages pageSize must be a positive integer, got ${String(pageSize)}`,
      );
    }
    let after = -1;
    for (;;) {
      const page = await this.read(() => this.store.page({ after, limit: pageSize }), [], inner);
      if (page.length === 0) return;
      yield page;
      after = page[page.length - 1]!.step_id;
      await turn();
    }
  }

  /** Index entries in step order (all in memory: prefer `entryPages` for large stores). */
  async entries(): Promise<IndexEntry[]> {
    const all: IndexEntry[] = [];
    for await (const page of this.entryPages()) all.push(...page);
    return all;
  }

  /**
   * One page of index entries in step order (`offset` from 0, at most `limit`), with the total:
   * what a list view needs without copying the whole index out.
   *
   * @example
   * const { total, entries } = await cf.entriesPage({ offset: 0, limit: 50 });
   */
  async entriesPage(options: { offset?: number; limit?: number } = {}): Promise<EntriesPage> {
    checkOptionKeys('entriesPage', options, ENTRIES_PAGE_OPTION_KEYS);
    const offset = options.offset ?? 0;
    const limit = options.limit ?? 100;
    if (!Number.isSafeInteger(offset) || offset < 0 || !Number.isSafeInteger(limit) || limit < 0) {
      throw new UsageError(
        `entriesPage needs non-negative integers, got offset ${offset} and limit ${limit}`,
      );
    }
    return this.read(() => ({
      total: this.store.stats().entries,
      offset,
      entries: this.store.page({ offset, limit }),
    }));
  }

  /**
   * Hydrate's verdict on one node, hash by hash, without serving its payload (see
   * `node-check.ts`). Read-only: a failing node is reported with its path, never repaired.
   * Throws {@link NodeNotFoundError} for a step that is not indexed.
   */
  async checkNode(stepId: number): Promise<NodeCheck> {
    return this.read(() => checkNode(this.store, this.entryOrThrow(stepId)), stepList(stepId));
  }

  /**
   * Compacts the journal (if any; `{ compact: false }` skips it, for read-only callers; an
   * engine opened `readOnly` never compacts) and closes the engine. Operations still in flight
   * (a `foldMany`, `scan` or `pageIn` not awaited) settle first; one started after `close()` was
   * called is refused as on a closed engine. Safe to call twice.
   */
  async close(options: { compact?: boolean } = {}): Promise<void> {
    checkOptionKeys('close', options, CLOSE_OPTION_KEYS);
    if (options?.compact !== undefined && typeof options.compact !== 'boolean') {
      throw new UsageError(
        `close: compact must be true or false, got ${JSON.stringify(options.compact)}`,
      );
    }
    if (this.closed) return;
    this.closing ??= this.closeNow(options.compact ?? !this.readOnly);
    return this.closing;
  }

  private async closeNow(compact: boolean): Promise<void> {
    // Operations in flight (a batch called without await, a scan, a page-in), and any they
    // start, settle first: a batch commits every round or reports its own error.
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
    try {
      const s = this.store.stats();
      if (compact && s.journalRecords > 0 && !this.store.loadProblem) {
        await this.track(() => this.compactNow(), true);
      }
    } finally {
      this.closed = true;
      await this.pool?.close();
      await this.store.close();
    }
  }

  /** Appends newline-terminated lines of a kind (`events`: a session's log) to the store. */
  async appendRecords(kind: string, text: string, after?: RecordsMark): Promise<void> {
    return this.track(async () => {
      recordKind(kind);
      await this.store.appendRecords(kind, text, after);
    });
  }

  /** Every line of a kind, in append order, and where it lives (for messages). */
  async readRecords(kind: string): Promise<RecordsRead> {
    return this.track(async () => {
      recordKind(kind);
      return this.store.readRecords(kind);
    });
  }
}

/**
 * Checks a record kind: it names the file `<kind>.jsonl` in the store (a database row's kind), so
 * it is a plain name; `../x` would have appended to a file outside the store.
 */
function recordKind(kind: string): void {
  if (typeof kind !== 'string' || !/^[a-z][a-z0-9_-]{0,63}$/.test(kind)) {
    throw new UsageError(
      `record kind must be a plain name (a-z, 0-9, '-', '_'; e.g. 'events'), got ${JSON.stringify(kind)}`,
    );
  }
}

/** The step to load before a read, if it is a valid step id (else the read reports it). */
function stepList(stepId: number): number[] {
  return Number.isSafeInteger(stepId) && stepId >= 0 ? [stepId] : [];
}
