import { existsSync, lstatSync, mkdirSync, readFileSync, realpathSync, renameSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { o200kTokenizer, resolveTokenizer, type Tokenizer } from '../extract/tokenizer.js';
import { fsyncDir, isTempFileName } from '../fs/durable-fs.js';
import type { Redactor } from '../guard/redactor.js';
import { scanPage } from '../guard/scan-page.js';
import {
  type ContextFoldError,
  isContextFoldError,
  StepConflictError,
  StoreNotFoundError,
  UsageError,
} from '../protocol/errors.js';
import {
  IntegrityCheckError,
  NodeNotFoundError,
  OrphanedNodeError,
} from '../protocol/ipcf-errors.js';
import {
  DEFAULT_POLICY,
  type HydrationPolicy,
  parsePolicy,
  perTurnCap,
  policyHash,
} from '../protocol/policy.js';
import { pageFailure } from '../protocol/results.js';
import { checkIndexEntry } from '../protocol/schemas.js';
import { isoSeconds } from '../protocol/time.js';
import {
  type ColdNode,
  DEFAULT_SESSION_ID,
  type IndexEntry,
  PROJECTION_VERSION,
  type RedactionRecord,
} from '../protocol/types.js';
import { analysisKey, RANKED_ANALYZER_VERSION } from '../retrieval/node-analysis.js';
import { focusedText } from '../retrieval/ranked-focus.js';
import { recall as recallIndex } from '../retrieval/recall.js';
import { referenceScan } from '../retrieval/reference-scan.js';
import { TermView } from '../retrieval/term-view.js';
import { indexEntryFor } from '../store/cold-node.js';
import {
  type CommitRow,
  type IndexBackend,
  type NodeFlag,
  NodeNotLoadedError,
  type WriteSession,
} from '../store/index-backend.js';
import {
  canonicalNodePath,
  indexFilePath,
  type StoreLayout,
  storeExists,
  storeLayout,
} from '../store/layout.js';
import { IndexBrokenError, LocalStore } from '../store/local-store.js';
import type { PgStore } from '../store/pg/pg-store.js';
import { isPgUrl } from '../store/pg/pg-url.js';
import { type VerifiedNode, verifyNode } from '../store/verify.js';
import { type BuiltNode, buildNode, type NodeContext } from './build-node.js';
import { chunkText } from './chunk.js';
import {
  type BuildJob,
  type BuildOutcome,
  buildInline,
  type DeriveCount,
  type DerivedText,
  DerivePool,
  DerivePoolClosedError,
  deriveInline,
} from './derive-pool.js';
import { hydratedPage } from './hydrated-page.js';
import { checkNode } from './node-check.js';
import { type RankedCaps, RankedRetrieval } from './ranked-retrieval.js';
import type {
  ContextFoldEngine,
  EntriesPage,
  EvictResult,
  FoldInput,
  FoldResult,
  HydrateOptions,
  HydrateResult,
  NodeCheck,
  OpenOptions,
  Page,
  PageInFailure,
  PageInResult,
  RecallResult,
  RetrievalMode,
  ScanOptions,
  ScanResult,
  StatusResult,
  ValidateResult,
  ValidationProblem,
} from './types.js';

interface Prepared {
  node: ColdNode;
  entry: IndexEntry;
  text: string;
}

/** Derives round `r` of a batch: its new turns by step, or undefined where the workers failed. */
type DeriveRound = (
  r: number,
  thisThread: boolean,
) => Promise<Map<number, DerivedText> | undefined>;

/** Turns committed per lock hold: other writers get the lock between rounds of a long batch. */
const FOLD_ROUND = 1024;
/**
 * Pause between rounds, longer than a waiting writer's polling interval (see `WriteLock`), so a
 * writer queued behind a long batch gets the lock instead of the batch re-taking it at once.
 */
const ROUND_PAUSE_MS = 20;
/** Entries read per page when the whole index is walked (validate, entries()). */
const ENTRY_PAGE = 1000;
/** Token counts kept in memory per engine (a cache of the store's). */
const TOKEN_CACHE = 4096;

const turn = () => new Promise<void>((r) => setImmediate(r));

/** The store class for a database URL when PostgreSQL was not loaded (open() loads it). */
function noPg(where: string): never {
  throw new UsageError(`${where} is a PostgreSQL store: open it with ContextFold.open`);
}

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
  private readonly store: LocalStore | PgStore;
  private readonly ranked: RankedRetrieval;
  private readonly clock: () => Date;
  private readonly tokenCache = new Map<string, number>();
  private readonly chunkCache = new Map<string, string[]>();
  private readonly readOnly: boolean;
  private readonly onWarning: OpenOptions['onWarning'];
  /** Worker threads for a long batch's analysis, made on the first one (see `deriveAhead`). */
  private pool: DerivePool | undefined;
  private closed = false;

  private constructor(options: OpenOptions, pgStore?: typeof PgStore) {
    const where = options?.store ?? options?.dir;
    if (!options || typeof where !== 'string' || where.length === 0) {
      throw new UsageError(
        'ContextFold.open needs { dir } (the store directory, e.g. ".contextfold") or { store } (a directory or postgres:// URL)',
      );
    }
    const pg = isPgUrl(where);
    this.layout = pg ? null : storeLayout(resolve(where));
    if (this.layout && options.mustExist && !storeExists(this.layout.dir)) {
      throw new StoreNotFoundError(
        `no store at ${this.layout.dir}: nothing has been folded or imported there`,
        { path: this.layout.dir },
      );
    }
    this.policy = options.policy
      ? parsePolicy(options.policy)
      : this.layout
        ? ContextFold.readPolicy(this.layout)
        : { ...DEFAULT_POLICY };
    this.tokenizer = resolveTokenizer(options.tokenizer);
    this.sessionId = options.sessionId ?? DEFAULT_SESSION_ID;
    this.retrieval = options.retrieval ?? 'ranked';
    this.clock = options.clock ?? (() => new Date());
    this.readOnly = options.readOnly === true;
    this.redact = options.redact ?? true;
    this.onWarning = options.onWarning;
    const analyzer = { version: RANKED_ANALYZER_VERSION, keyOf: analysisKey };
    this.store = this.layout
      ? new LocalStore(this.layout, {
          lockTimeoutMs: options.lockTimeoutMs ?? 30_000,
          compactThreshold: options.journalCompactThreshold ?? 4096,
          clock: this.clock,
          analyzer,
          onWarning: options.onWarning,
          readOnly: options.readOnly,
        })
      : new (pgStore ?? noPg(where))({
          url: where,
          lockTimeoutMs: options.lockTimeoutMs ?? 30_000,
          statementTimeoutMs: options.statementTimeoutMs,
          poolSize: options.poolSize,
          clock: this.clock,
          analyzer,
          onWarning: options.onWarning,
          readOnly: options.readOnly,
        });
    this.dir = this.store.location;
    this.ranked = new RankedRetrieval({
      tokenizer: this.tokenizer,
      backend: this.store,
      verifiedText: (step) => payloadText(this.store.verifyNode(this.entryOrThrow(step))),
      entryOf: (step) => this.store.get(step),
      tokensOf: (step) => this.tokensOf(step),
      knownTokens: (entry) => this.knownTokens(entry),
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

  private static readPolicy(layout: StoreLayout): HydrationPolicy {
    if (!existsSync(layout.policyPath)) return { ...DEFAULT_POLICY };
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(layout.policyPath, 'utf8'));
    } catch {
      throw new UsageError(`hydration policy is not valid JSON: ${layout.policyPath}`, {
        path: layout.policyPath,
      });
    }
    return parsePolicy(parsed, layout.policyPath);
  }

  private assertOpen(): void {
    if (this.closed)
      throw new UsageError('this ContextFold engine is closed; open the store again');
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

  /** Redacts the user text of a fold input (nothing to do when the engine does not redact). */
  private async redactInput(
    input: FoldInput,
  ): Promise<{ input: FoldInput; records: RedactionRecord[] }> {
    const redactor = this.loadRedactor();
    if (!redactor) return { input, records: [] };
    const { fields, records } = await (await redactor).redactFields(input);
    return { input: fields, records };
  }

  /** Checks and redacts one fold input: the part of preparing a fold that stays on this thread. */
  private async redacted(
    given: FoldInput,
  ): Promise<{ input: FoldInput; records: RedactionRecord[] }> {
    if (!given || typeof given !== 'object')
      throw new UsageError('fold needs { stepId, summary, content? }');
    return this.redactInput(given);
  }

  private nodeContext(foldedAt: string): NodeContext {
    return { policy: this.policy, sessionId: this.sessionId, foldedAt, sanitized: this.redact };
  }

  /** A built node with its index entry (and its sanitized flag remembered). */
  private prepared(b: BuiltNode): Prepared {
    this.sanitizedByArtifact.set(b.node.artifact_sha256, b.node.sanitized);
    const entry = indexEntryFor(b.node, this.store.entryFilePath(b.node.step_id));
    return { node: b.node, entry, text: b.text };
  }

  private async prepare(given: FoldInput, foldedAt: string): Promise<Prepared> {
    const { input, records } = await this.redacted(given);
    return this.prepared(buildNode(input, records, this.nodeContext(foldedAt)));
  }

  /**
   * Prepares a batch. One of more than a round is redacted here, then its nodes are built on
   * the worker pool beside this thread (projection, canonical JSON and hashes are pure; about a
   * fifth of a fold's time on the committing thread). An input a worker could not build is
   * built again here, so a bad input fails with its own error, the first in batch order; a pool
   * that fails builds the batch here. The caller closes the pool.
   */
  private async prepareAll(inputs: readonly FoldInput[], foldedAt: string): Promise<Prepared[]> {
    const pool = inputs.length > FOLD_ROUND ? this.derivePool() : null;
    const prepared: Prepared[] = [];
    if (!pool) {
      for (const i of inputs) prepared.push(await this.prepare(i, foldedAt));
      return prepared;
    }
    const jobs: BuildJob[] = [];
    for (const i of inputs) jobs.push(await this.redacted(i));
    const ctx = this.nodeContext(foldedAt);
    let built: BuildOutcome[];
    try {
      built = await pool.build(jobs, ctx);
    } catch (e) {
      // Closed under it (another batch of this engine ended): not a failure of the workers.
      if (!(e instanceof DerivePoolClosedError)) this.workersFailed(e as Error);
      built = buildInline(jobs, ctx);
    }
    for (let i = 0; i < jobs.length; i++) {
      const b = built[i]!;
      prepared.push(
        this.prepared('error' in b ? buildNode(jobs[i]!.input, jobs[i]!.records, ctx) : b),
      );
    }
    return prepared;
  }

  private result(entry: IndexEntry, already: boolean): FoldResult {
    return {
      step_id: entry.step_id,
      payload_sha256: entry.payload_sha256,
      projection_sha256: entry.projection_sha256,
      artifact_sha256: entry.artifact_sha256,
      file_path: entry.file_path,
      token_estimate: entry.token_estimate,
      folded_at: entry.folded_at,
      identifiers: entry.identifiers,
      files: entry.files,
      commands: entry.commands,
      errors: entry.errors,
      already_folded: already,
    };
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
    onProgress?: (done: number, total: number) => void,
  ): Promise<FoldResult[]> {
    this.assertOpen();
    if (!Array.isArray(inputs)) throw new UsageError('foldMany needs an array of fold inputs');
    const foldedAt = isoSeconds(this.clock());
    try {
      // Redaction happens here, before the lock and before any byte is written.
      const prepared = await this.prepareAll(inputs, foldedAt);
      return await this.foldPrepared(prepared, onProgress);
    } finally {
      // Only a batch of more than a round uses the workers. They hold a vocabulary each: a
      // long-lived process (a server, the hook server) does not keep them between batches, nor
      // after a batch that failed. A round still deriving ahead is cut short.
      if (inputs.length > FOLD_ROUND) await this.pool?.close();
    }
  }

  /** A prepared batch: checked as a whole, then folded round by round (see {@link foldMany}). */
  private async foldPrepared(
    prepared: readonly Prepared[],
    onProgress?: (done: number, total: number) => void,
  ): Promise<FoldResult[]> {
    const seen = new Map<number, Prepared>();
    for (const p of prepared) {
      const prev = seen.get(p.entry.step_id);
      if (prev && prev.entry.payload_sha256 !== p.entry.payload_sha256) {
        throw new StepConflictError(
          `step ${p.entry.step_id} appears twice in the batch with different payloads`,
          {
            stepId: p.entry.step_id,
          },
        );
      }
      seen.set(p.entry.step_id, p);
    }
    let fresh: Set<number> | undefined;
    if (prepared.length > FOLD_ROUND) {
      fresh = await this.store.write((tx) => {
        const planned = new Set<number>();
        for (const p of prepared) this.plan(tx, p, planned);
        return planned;
      });
    }
    const rounds: Prepared[][] = [];
    for (let i = 0; i < prepared.length; i += FOLD_ROUND) {
      rounds.push(prepared.slice(i, i + FOLD_ROUND));
    }
    const ahead = this.deriveAhead(rounds, fresh);
    let next = ahead?.(0, true);
    const results: FoldResult[] = [];
    for (let r = 0; r < rounds.length; r++) {
      const derived = await next;
      // The next round is derived on the workers while this one is written and committed.
      next = r + 1 < rounds.length ? ahead?.(r + 1, false) : undefined;
      if (r > 0) await new Promise((res) => setTimeout(res, ROUND_PAUSE_MS));
      results.push(...(await this.foldRound(rounds[r]!, derived)));
      onProgress?.(Math.min((r + 1) * FOLD_ROUND, prepared.length), prepared.length);
    }
    return results;
  }

  /**
   * For a batch of more than one round of new turns, where worker threads can run: a function
   * that derives a round's new turns on the pool (analysis and token count, see
   * {@link DerivePool}), resolving to them by step, or to undefined if the pool failed (the
   * round then derives inline, as a small batch always does).
   */
  private deriveAhead(
    rounds: readonly Prepared[][],
    fresh: ReadonlySet<number> | undefined,
  ): DeriveRound | undefined {
    if (!fresh || fresh.size <= FOLD_ROUND) return undefined;
    const pool = this.derivePool();
    if (!pool) return undefined;
    const count: DeriveCount = this.tokenizer === o200kTokenizer() ? 'o200k' : 'none';
    const queued = new Set<number>();
    return async (r, thisThread) => {
      const todo = rounds[r]!.filter((p) => {
        const step = p.entry.step_id;
        if (!fresh.has(step) || queued.has(step)) return false;
        queued.add(step);
        return true;
      });
      const jobs = todo.map((p) => ({ summary: p.entry.summary, text: p.text }));
      try {
        const out = await pool.derive(jobs, { count, thisThread });
        return new Map(todo.map((p, i) => [p.entry.step_id, out[i]!]));
      } catch (e) {
        // Closed under it: the batch failed or ended, and nothing waits for this round.
        if (e instanceof DerivePoolClosedError) return undefined;
        this.workersFailed(e as Error);
        return undefined;
      }
    };
  }

  private workersFailed(e: Error): void {
    this.onWarning?.({
      code: 'DERIVE_WORKERS_FAILED',
      message: `the batch's workers failed (${e.message}); the batch goes on, on this thread`,
      path: this.dir,
    });
  }

  /** The engine's worker pool, started on the first long batch; null where no worker can run. */
  private derivePool(): DerivePool | null {
    this.pool ??= new DerivePool();
    return this.pool.usable ? this.pool : null;
  }

  /**
   * What folding `p` would do: `existing` (already folded, same content), `planned` (earlier in
   * this batch) or `fresh`. Throws on a conflict or an orphaned node file.
   */
  private plan(
    tx: WriteSession,
    p: Prepared,
    planned: Set<number>,
  ): { kind: 'existing'; entry: IndexEntry } | { kind: 'planned' | 'fresh' } {
    const step = p.entry.step_id;
    const existing = tx.get(step);
    if (existing) {
      if (
        existing.payload_sha256 !== p.entry.payload_sha256 ||
        existing.projection_sha256 !== p.entry.projection_sha256
      ) {
        throw new StepConflictError(
          `step ${step} is already folded with a different payload or projection (payload ${existing.payload_sha256.slice(0, 12)}…); step ids come from the history and cannot be reused`,
          { stepId: step, path: existing.file_path },
        );
      }
      return { kind: 'existing', entry: existing };
    }
    if (planned.has(step)) return { kind: 'planned' };
    if (tx.nodeExists(step)) {
      const path = this.store.nodePath(step);
      throw new OrphanedNodeError(
        `step ${step} has a cold node file but no index entry (an interrupted fold?); refusing to overwrite it: ${path}`,
        { stepId: step, path },
      );
    }
    planned.add(step);
    return { kind: 'fresh' };
  }

  /** One round of a batch under the write lock: nodes written durably, then committed. */
  private async foldRound(
    round: Prepared[],
    derived?: ReadonlyMap<number, DerivedText>,
  ): Promise<FoldResult[]> {
    return this.store.write(async (tx) => {
      this.store.assertConsistent();
      const results: FoldResult[] = [];
      const fresh: Prepared[] = [];
      const planned = new Set<number>();
      for (const p of round) {
        const plan = this.plan(tx, p, planned);
        if (plan.kind === 'existing') results.push(this.result(plan.entry, true));
        else results.push(this.result(p.entry, plan.kind === 'planned'));
        if (plan.kind === 'fresh') fresh.push(p);
      }
      if (fresh.length === 0) return results;
      // Node files first (durable), then the commit: a crash in between leaves orphans that
      // validate reports, never an index entry without its node.
      await tx.writeNodes(fresh.map((p) => p.node));
      await tx.commit(fresh.map((p) => this.derived(p, derived?.get(p.entry.step_id))));
      return results;
    });
  }

  /**
   * What the index keeps of a fold's content: computed from the text in hand, or taken from
   * what a worker derived from the same text (`pre`).
   */
  private derived(p: Prepared, pre?: DerivedText): CommitRow {
    // Tokens are not part of a stored analysis: they are kept per tokenizer (below).
    const d = pre ?? deriveInline([{ summary: p.entry.summary, text: p.text }], 'none')[0]!;
    const analysis = { akey: analysisKey(p.entry), ...d.analysis };
    const sanitized = p.node.sanitized;
    if (this.tokenizer.name === 'reference') return { entry: p.entry, analysis, sanitized };
    const count = d.tokens ?? this.tokenizer.count(p.text);
    this.rememberTokens(p.entry.payload_sha256, count);
    const tokens = { tokenizer: this.tokenizer.name, count };
    return { entry: p.entry, analysis, tokens, sanitized };
  }

  /**
   * Runs a read against the synced index; if the index file turns out corrupt on the way, it
   * is rebuilt from the store's files and the read runs once more.
   */
  private async read<T>(fn: () => T | Promise<T>, load: readonly number[] = []): Promise<T> {
    this.assertOpen();
    await this.store.sync();
    await this.store.load(load);
    let rebuilt = false;
    for (let loads = 0; ; ) {
      try {
        return await fn();
      } catch (e) {
        if (e instanceof NodeNotLoadedError && loads++ < 1024) {
          // A database store fetches nodes asynchronously: fetch this one and run again.
          await this.store.load([e.step]);
          continue;
        }
        if (!(e instanceof IndexBrokenError) || rebuilt) throw e;
        rebuilt = true;
        await this.store.sync();
      }
    }
  }

  /** Explicit recall with coverage tiers and chronological labels (CONF-04). */
  async recall(query: string, options: { limit?: number } = {}): Promise<RecallResult> {
    if (typeof query !== 'string') throw new UsageError('recall needs a query string');
    return this.read(() => {
      this.store.assertConsistent();
      return recallIndex(this.termView(), query, options);
    });
  }

  private termView(): TermView {
    return new TermView({
      postings: (t) => this.store.postings('reference', t).steps,
      entry: (s) => this.store.get(s)!,
    });
  }

  private rememberTokens(payloadSha256: string, count: number): void {
    if (this.tokenCache.size >= TOKEN_CACHE) this.tokenCache.clear();
    this.tokenCache.set(payloadSha256, count);
  }

  /** Tokens of a payload known without counting (the reference estimate, or stored). */
  private knownTokens(
    entry: Pick<IndexEntry, 'payload_sha256' | 'token_estimate'>,
  ): number | undefined {
    if (this.tokenizer.name === 'reference') return entry.token_estimate;
    const cached = this.tokenCache.get(entry.payload_sha256);
    if (cached !== undefined) return cached;
    const stored = this.store.tokens(entry.payload_sha256, this.tokenizer.name);
    if (stored !== undefined) this.rememberTokens(entry.payload_sha256, stored);
    return stored;
  }

  /** Tokens of a node's whole payload under this engine's tokenizer (stored, else counted). */
  private tokensOf(stepId: number): number {
    const entry = this.store.get(stepId)!;
    const known = this.knownTokens(entry);
    if (known !== undefined) return known;
    try {
      const n = this.tokenizer.count(payloadText(this.store.verifyNode(entry)));
      this.rememberTokens(entry.payload_sha256, n);
      this.store.putTokens([
        { payload_sha256: entry.payload_sha256, tokenizer: this.tokenizer.name, count: n },
      ]);
      return n;
    } catch (e) {
      if (e instanceof NodeNotLoadedError) throw e;
      // Unverifiable: cost it at the cap; pageIn will refuse it and report why.
      return Number.MAX_SAFE_INTEGER;
    }
  }

  /** Caps and live boundary of a ranked page-in. */
  private rankedCaps(options: ScanOptions): RankedCaps {
    const perTurn = perTurnCap(this.policy);
    const max = options.maxTokens;
    if (max !== undefined && (!Number.isSafeInteger(max) || max < 1)) {
      throw new UsageError(`maxTokens must be a positive integer, got ${String(max)}`);
    }
    return {
      perCall: this.policy.max_rehydration_tokens_per_call,
      perTurn: max === undefined ? perTurn : Math.min(perTurn, max),
      ...(options.liveFrom !== undefined ? { liveFrom: options.liveFrom } : {}),
      ...(options.lossy ? { lossy: options.lossy } : {}),
      ...(options.tail ? { tail: true } : {}),
    };
  }

  /** The software MMU's selection for a prompt (CONF-13), without hydrating anything. */
  async scan(prompt: string, options: ScanOptions = {}): Promise<ScanResult> {
    if (typeof prompt !== 'string') throw new UsageError('scan needs a prompt string');
    const mode = options.mode ?? this.retrieval;
    if (mode !== 'reference' && mode !== 'ranked') {
      throw new UsageError(
        `unknown retrieval mode ${JSON.stringify(mode)}: use 'reference' or 'ranked'`,
      );
    }
    return this.read(async () => {
      this.store.assertConsistent();
      if (mode === 'ranked') {
        await this.ranked.prepare();
        return this.ranked.scan(prompt, this.rankedCaps(options));
      }
      return referenceScan(this.termView(), prompt, {
        perCall: this.policy.max_rehydration_tokens_per_call,
        perTurn: perTurnCap(this.policy),
        tokensOf: (s) => this.tokensOf(s),
      });
    });
  }

  private entryOrThrow(stepId: number): IndexEntry {
    if (!Number.isSafeInteger(stepId) || stepId < 0) {
      throw new UsageError(`step id must be a non-negative integer, got ${String(stepId)}`);
    }
    const entry = this.store.get(stepId);
    if (entry) return entry;
    const path = this.store.orphanPath(stepId);
    if (path !== null) {
      throw new OrphanedNodeError(
        `step ${stepId} has a cold node file but no index entry: ${path}`,
        {
          stepId,
          path,
        },
      );
    }
    throw new NodeNotFoundError(`step ${stepId} is not folded in this store (${this.dir})`, {
      stepId,
    });
  }

  /** A counter that knows the whole payload's stored count (no vocabulary load for it). */
  private counter(entry: IndexEntry, text: string): Tokenizer {
    const known = this.knownTokens(entry);
    const tok = this.tokenizer;
    if (known === undefined) return tok;
    return { name: tok.name, count: (s) => (s === text ? known : tok.count(s)) };
  }

  private chunksOf(entry: IndexEntry, text: string, cap: number): string[] {
    const key = `${entry.payload_sha256}:${cap}`;
    let chunks = this.chunkCache.get(key);
    if (!chunks) {
      chunks = chunkText(text, cap, this.counter(entry, text));
      if (this.chunkCache.size > 512) this.chunkCache.clear();
      this.chunkCache.set(key, chunks);
    }
    return chunks;
  }

  /**
   * Verified, bounded hydration (CONF-05/06/09/10/12): containment, existence, JSON, all three
   * hashes checked before any byte is returned. Over the per-call cap the payload is served in
   * chunks cut at line boundaries; `chunk` selects one.
   */
  async hydrate(stepId: number, options: HydrateOptions = {}): Promise<HydrateResult> {
    return this.read(() => this.hydrateNow(stepId, options), stepList(stepId));
  }

  private hydrateNow(stepId: number, options: HydrateOptions): HydrateResult {
    this.store.assertConsistent();
    const entry = this.entryOrThrow(stepId);
    const v = this.store.verifyNode(entry);
    const text = payloadText(v);
    const perCall = this.policy.max_rehydration_tokens_per_call;
    const cap = Math.max(1, Math.min(options.maxTokens ?? perCall, perCall));
    const encoding = v.node.raw_content_encoding === 'base64' ? 'base64' : 'utf8';
    if (options.window) {
      const w = options.window;
      const win = focusedText({
        content: text,
        startLine: w.start_line,
        endLine: w.end_line,
        ...(w.tail_lines !== undefined ? { tailLines: w.tail_lines } : {}),
        maxTokens: Math.max(1, Math.min(w.max_tokens, perCall)),
        count: (s) => this.tokenizer.count(s),
      });
      return {
        step_id: stepId,
        content: win.text,
        tokens: win.tokens,
        chunk: 0,
        chunks: 1,
        truncated: win.truncated,
        payload_sha256: entry.payload_sha256,
        verified: true,
        encoding,
        findings: scanPage(win.text),
      };
    }
    const chunks = this.chunksOf(entry, text, cap);
    const k = options.chunk ?? 0;
    if (!Number.isSafeInteger(k) || k < 0 || k >= chunks.length) {
      throw new UsageError(
        `step ${stepId} has ${chunks.length} chunk(s) (0..${chunks.length - 1}); chunk ${k} does not exist`,
        {
          stepId,
        },
      );
    }
    const content = chunks[k]!;
    return {
      step_id: stepId,
      content,
      tokens: this.counter(entry, text).count(content),
      chunk: k,
      chunks: chunks.length,
      truncated: chunks.length > 1,
      payload_sha256: entry.payload_sha256,
      verified: true,
      encoding,
      findings: scanPage(content),
    };
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
    if ((options.mode ?? this.retrieval) === 'ranked') {
      if (typeof prompt !== 'string') throw new UsageError('pageIn needs a prompt string');
      return this.read(async () => {
        this.store.assertConsistent();
        await this.ranked.prepare();
        // The picks' nodes fetched together (a database store), then paged in verified.
        const picks = this.ranked.scan(prompt, this.rankedCaps(options)).selected;
        await this.store.load(picks.map((p) => p.step_id));
        return this.ranked.pageIn(prompt, this.rankedCaps(options));
      });
    }
    const scan = await this.scan(prompt, options);
    const pages: Page[] = [];
    const failures: PageInFailure[] = [];
    let tokens = 0;
    for (const pick of scan.selected) {
      try {
        const h = await this.hydrate(pick.step_id, { maxTokens: pick.cost });
        pages.push(hydratedPage(h, pick.matched_terms));
        tokens += h.tokens;
      } catch (e) {
        if (!isContextFoldError(e)) throw e;
        failures.push(pageFailure(pick.step_id, e));
      }
    }
    return { scan, pages, failures, tokens };
  }

  /** Records that a step's page left the prompt (CONF-07): index `evicted`, eviction log. */
  async evict(stepId: number): Promise<EvictResult> {
    this.assertOpen();
    // A database store tells an orphan from an unknown step by the node's row.
    await this.store.load(stepList(stepId));
    return this.store.write(async (tx) => {
      this.store.assertConsistent();
      this.entryOrThrow(stepId);
      const evicted_at = isoSeconds(this.clock());
      await tx.evict(stepId, evicted_at);
      return { step_id: stepId, evicted_at };
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

  /** The store's directory; repair's file operations refuse a database store. */
  private localLayout(doing: string): StoreLayout {
    if (this.layout) return this.layout;
    throw new UsageError(`${doing} works on a store directory, not a database: ${this.dir}`);
  }

  private orphanEntry(stepId: number): IndexEntry {
    const layout = this.localLayout('re-indexing an orphaned node');
    const path = canonicalNodePath(layout, stepId);
    const bad = (why: string): never => {
      throw new IntegrityCheckError(`step ${stepId}: ${why}: ${path}`, { stepId, path });
    };
    let node: unknown;
    try {
      node = JSON.parse(readFileSync(path, 'utf8'));
    } catch {
      return bad('cold node file is unreadable or not valid JSON');
    }
    if (typeof node !== 'object' || node === null || (node as ColdNode).step_id !== stepId) {
      return bad('cold node file does not hold this step');
    }
    const entry = indexEntryFor(node as ColdNode, indexFilePath(layout, stepId));
    if (checkIndexEntry(entry)) return bad('cold node file lacks index fields');
    verifyNode(layout, entry);
    return entry;
  }

  /**
   * Gives a verified orphan (a node written by a fold whose journal append never happened) its
   * index entry back, under the write lock. Anything but a fully verified orphan is refused.
   */
  async reindexOrphan(stepId: number): Promise<FoldResult> {
    this.assertOpen();
    return this.store.write(async (tx) => {
      this.store.assertConsistent();
      if (tx.get(stepId)) {
        throw new UsageError(`step ${stepId} is indexed; only an orphaned node can be re-indexed`);
      }
      const entry = this.orphanEntry(stepId);
      // No analysis here: the node is analysed from its verified bytes on the next ranked scan.
      await tx.commit([{ entry }]);
      return this.result(entry, false);
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
    this.assertOpen();
    return this.store.write(async (tx) => {
      this.store.assertConsistent();
      this.entryOrThrow(stepId);
      const dropped_at = isoSeconds(this.clock());
      await tx.drop(stepId, dropped_at, reason);
      return { step_id: stepId, dropped_at };
    });
  }

  /**
   * Moves a file (or a symlink itself, never its target) from inside the store into
   * `quarantine/` under the store, keeping its relative path; an existing name gets a `.N`
   * suffix. Never deletes or rewrites bytes. Returns the new path.
   */
  async quarantine(path: string): Promise<string> {
    this.assertOpen();
    const layout = this.localLayout('quarantine');
    const abs = resolve(layout.root, path);
    const rel = relative(layout.dir, abs);
    if (
      rel === '' ||
      rel.startsWith('..') ||
      isAbsolute(rel) ||
      rel.split(sep)[0] === 'quarantine'
    ) {
      throw new UsageError(`only a file inside the store can be quarantined, not ${abs}`);
    }
    const realParent = realpathSync(dirname(abs));
    const realStore = realpathSync(layout.dir);
    if (realParent !== realStore && !realParent.startsWith(realStore + sep)) {
      throw new UsageError(
        `${abs} lies under a symlink leading out of the store; quarantine the link instead`,
      );
    }
    return this.store.write(() => {
      let to = join(layout.dir, 'quarantine', rel);
      for (let n = 1; existsSync(to) || isSymlink(to); n++)
        to = join(layout.dir, 'quarantine', `${rel}.${n}`);
      mkdirSync(dirname(to), { recursive: true });
      renameSync(abs, to);
      fsyncDir(dirname(to));
      fsyncDir(dirname(abs));
      return to;
    });
  }

  /** Counts and settings of the store, and the state of its derived index. */
  async status(): Promise<StatusResult> {
    const { s, index } = await this.read(() => {
      const stats = this.store.stats();
      const path = this.store.indexPath;
      return {
        s: stats,
        index: {
          path,
          state: path === null && stats.entries > 0 ? ('in-memory' as const) : ('fresh' as const),
          pending_analysis: this.store.pendingCount(),
        },
      };
    });
    const flags = await this.flagCounts();
    return {
      dir: this.dir,
      session_id: this.sessionId,
      projection_version: PROJECTION_VERSION,
      nodes: s.entries,
      evicted: s.evicted,
      journal_entries: s.journalRecords,
      total_token_estimate: s.tokenEstimate,
      policy: this.policy,
      folding_policy_hash: policyHash(this.policy),
      tokenizer: this.tokenizer.name,
      retrieval: this.retrieval,
      index,
      redact: this.redact,
      ...flags,
    };
  }

  /**
   * Nodes by their `sanitized` flag. The flag is in the node files only (the reference index has
   * no such field): the derived index records it by artifact hash when a node is folded or first
   * read here, so only nodes it has never seen (a reference-written store, a rebuilt index) are
   * read, and each once.
   */
  private async flagCounts(): Promise<{
    sanitized_nodes: number;
    unsanitized_nodes: number;
    unreadable_nodes: number;
  }> {
    const known = await this.read(() => this.store.flagCounts());
    const flags = {
      sanitized_nodes: known.sanitized,
      unsanitized_nodes: known.unsanitized,
      unreadable_nodes: 0,
    };
    if (known.unknown === 0) return flags;
    for (let after = -1; ; ) {
      const page = await this.read(() => this.store.unflagged(after, 1024));
      if (page.length === 0) break;
      after = page[page.length - 1]!.step_id;
      await this.store.load(
        page.filter((e) => !this.sanitizedByArtifact.has(e.artifact_sha256)).map((e) => e.step_id),
      );
      const found: NodeFlag[] = [];
      for (const e of page) {
        const f = this.sanitizedFlag(e);
        if (f === null) flags.unreadable_nodes++;
        else {
          found.push({ artifact_sha256: e.artifact_sha256, sanitized: f });
          if (f) flags.sanitized_nodes++;
          else flags.unsanitized_nodes++;
        }
      }
      this.store.putFlags(found);
    }
    return flags;
  }

  /**
   * A node's `sanitized` flag, read from its canonical file (memoised by artifact hash, which
   * names the file's content); null when the file is not contained in the store, cannot be
   * read or parsed, or is not the indexed artifact. Reads, never verifies hashes: `validate`
   * does that.
   */
  private sanitizedFlag(entry: IndexEntry): boolean | null {
    const known = this.sanitizedByArtifact.get(entry.artifact_sha256);
    if (known !== undefined) return known;
    try {
      const text = this.store.readNodeText(entry);
      if (text === null) return null;
      const node = JSON.parse(text);
      if (node?.artifact_sha256 !== entry.artifact_sha256) return null;
      const flag = node.sanitized === true;
      this.sanitizedByArtifact.set(entry.artifact_sha256, flag);
      return flag;
    } catch {
      return null;
    }
  }

  /**
   * Checks the whole store (CONF-09/10/12): every indexed node verified as on hydrate, every
   * cold node file without an index entry reported as orphaned, stray and temp files reported,
   * journal and index consistency, and the derived index against the store's files. Reports
   * every problem with its path; repairs nothing. Walks the index page by page, giving the
   * event loop a turn between pages.
   */
  async validate(): Promise<ValidateResult> {
    this.assertOpen();
    await this.store.sync();
    const problems: ValidationProblem[] = [];
    const lp = this.store.loadProblem;
    if (lp) problems.push({ kind: lp.kind, step_id: null, path: lp.path, message: lp.message });
    let checked = 0;
    let sanitized = 0;
    const indexed = new Set<number>();
    let since = performance.now();
    for await (const page of this.entryPages({ pageSize: 64 })) {
      await this.store.load(page.map((e) => e.step_id));
      for (const entry of page) {
        checked++;
        indexed.add(entry.step_id);
        const p = this.verifyProblem(entry);
        if (p === 'sanitized') sanitized++;
        else if (p) problems.push(p);
        // A turn of the event loop every few milliseconds: a server keeps serving meanwhile.
        if (performance.now() - since > 8) {
          await turn();
          since = performance.now();
        }
      }
    }
    const { steps, stray } = await this.store.listNodes();
    for (const [step] of steps) {
      if (!indexed.has(step)) {
        const path = this.store.nodePath(step);
        problems.push({
          kind: 'orphaned_node',
          step_id: step,
          path,
          message: `cold node file has no index entry (OrphanedNodeError): ${path}`,
        });
      }
    }
    for (const name of stray) {
      const path = `${this.layout?.coldDir ?? this.dir}/${name}`;
      problems.push({
        kind: 'integrity',
        step_id: null,
        path,
        message: isTempFileName(name)
          ? `leftover temp file of an interrupted write: ${path}`
          : `unexpected entry in cold_nodes: ${path}`,
      });
    }
    const index = await this.store.checkIndex();
    if (index.state === 'stale') {
      problems.push({
        kind: 'index',
        step_id: null,
        path: index.path,
        message: `the derived index is stale (${index.message}): run 'contextfold reindex': ${index.path}`,
      });
    }
    return { ok: problems.length === 0, checked, sanitized, problems };
  }

  /** Why a node fails verification, or whether it verified as sanitized (redacted) or not. */
  private verifyProblem(entry: IndexEntry): ValidationProblem | 'sanitized' | null {
    try {
      return this.store.verifyNode(entry).node.sanitized === true ? 'sanitized' : null;
    } catch (e) {
      if (!isContextFoldError(e)) throw e;
      const kind =
        e.code === 'PATH_CONTAINMENT'
          ? 'path_containment'
          : e.code === 'BROKEN_REFERENCE'
            ? 'broken_reference'
            : 'integrity';
      return {
        kind,
        step_id: entry.step_id,
        path: String(e.details.path ?? entry.file_path),
        message: e.message,
      };
    }
  }

  /** Folds the journal into `recall_index.json` (exactly the reference layout afterwards). */
  async compact(): Promise<{ nodes: number; journal_entries_compacted: number }> {
    this.assertOpen();
    const n = await this.store.compact();
    return { nodes: this.store.stats().entries, journal_entries_compacted: n };
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
    this.assertOpen();
    await this.store.reindex();
    return this.read(async () => {
      this.store.assertConsistent();
      const before = this.store.pendingCount();
      await this.ranked.prepare(options.onProgress);
      return {
        nodes: this.store.stats().entries,
        analysed: before - this.store.pendingCount(),
        index: this.store.indexPath,
      };
    });
  }

  /** The index entry of one step, or undefined if it is not folded. */
  async entry(stepId: number): Promise<IndexEntry | undefined> {
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
  async *entryPages(options: { pageSize?: number } = {}): AsyncGenerator<IndexEntry[]> {
    let after = -1;
    for (;;) {
      const page = await this.entriesAfter({ after, limit: options.pageSize ?? ENTRY_PAGE });
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
   * engine opened `readOnly` never compacts) and closes the engine. Safe to call twice.
   */
  async close(options: { compact?: boolean } = {}): Promise<void> {
    if (this.closed) return;
    try {
      const s = this.store.stats();
      const compact = options.compact ?? !this.readOnly;
      if (compact && s.journalRecords > 0 && !this.store.loadProblem) {
        await this.compact();
      }
    } finally {
      this.closed = true;
      await this.pool?.close();
      await this.store.close();
    }
  }

  /** Appends newline-terminated lines of a kind (`events`: a session's log) to the store. */
  async appendRecords(kind: string, text: string): Promise<void> {
    this.assertOpen();
    await this.store.appendRecords(kind, text);
  }

  /** Every line of a kind, in append order, and where it lives (for messages). */
  async readRecords(kind: string): Promise<{ path: string; text: string }> {
    this.assertOpen();
    return this.store.readRecords(kind);
  }
}

/** The step to load before a read, if it is a valid step id (else the read reports it). */
function stepList(stepId: number): number[] {
  return Number.isSafeInteger(stepId) && stepId >= 0 ? [stepId] : [];
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

const lossy = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

/** Text of a verified node's payload (lossy only for non-UTF-8 payloads). */
function payloadText(v: VerifiedNode): string {
  if (v.node.raw_content_encoding === 'base64') return lossy.decode(v.bytes);
  return v.node.raw_content === '' ? v.node.summary : v.node.raw_content;
}
