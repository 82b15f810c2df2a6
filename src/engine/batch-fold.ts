// Folding a batch, from the inputs to the committed rows: inputs checked, redacted and built
// into nodes (a long batch on worker threads), conflicts planned, then written and committed
// round by round, each round's analysis derived on the workers while the round before it
// commits. The engine keeps what outlives a batch (the clock, the redactor, the worker pool).
import { o200kTokenizer, type Tokenizer } from '../extract/tokenizer.js';
import type { Redactor } from '../guard/redactor.js';
import { StepConflictError, UsageError } from '../protocol/errors.js';
import { OrphanedNodeError } from '../protocol/ipcf-errors.js';
import { checkOptionKeys } from '../protocol/option-keys.js';
import type { HydrationPolicy } from '../protocol/policy.js';
import type { ColdNode, IndexEntry, RedactionRecord } from '../protocol/types.js';
import { analysisKey } from '../retrieval/node-analysis.js';
import { indexEntryFor } from '../store/cold-node.js';
import type { CommitRow, WriteSession } from '../store/index-backend.js';
import { type BuiltNode, buildNode, type NodeContext } from './build-node.js';
import { FOLD_INPUT_KEYS } from './call-options.js';
import {
  type BuildJob,
  type BuildOutcome,
  buildInline,
  type DeriveCount,
  type DerivedText,
  type DerivePool,
  DerivePoolClosedError,
  deriveInline,
} from './derive-pool.js';
import type { EngineStore } from './open-store.js';
import type { TokenCosts } from './token-costs.js';
import type { FoldInput, FoldResult, OpenOptions } from './types.js';

/** A fold input checked, redacted and built: what a round writes and commits. */
export interface Prepared {
  node: ColdNode;
  entry: IndexEntry;
  text: string;
}

/**
 * Starts deriving round `r` of a batch on the workers; the function returned takes on this
 * thread what they have not started and resolves to the round's new turns by step, or to
 * undefined where the workers failed.
 */
type DeriveRound = (r: number) => () => Promise<Map<number, DerivedText> | undefined>;

/** Turns committed per lock hold: other writers get the lock between rounds of a long batch. */
export const FOLD_ROUND = 1024;
/**
 * Pause between rounds, longer than a waiting writer's polling interval (see `WriteLock`), so a
 * writer queued behind a long batch gets the lock instead of the batch re-taking it at once.
 */
const ROUND_PAUSE_MS = 20;

/** What a batch takes from its engine: settings, the store, and the state the engine keeps. */
export interface BatchFoldSources {
  store: EngineStore;
  policy: HydrationPolicy;
  tokenizer: Tokenizer;
  sessionId: string;
  redact: boolean;
  /** The engine's directory or URL, named in warnings. */
  dir: string;
  onWarning: OpenOptions['onWarning'];
  /** The engine's redactor, or null where it does not redact. */
  loadRedactor: () => Promise<Redactor> | null;
  /** The engine's worker pool, or null where no worker can run. */
  derivePool: () => DerivePool | null;
  /** The engine's `sanitized` flags by artifact hash, filled as nodes are built. */
  sanitizedByArtifact: Map<string, boolean>;
  costs: TokenCosts;
}

/** The index entry's part of a fold result (`already`: nothing was written for it). */
export function foldResult(entry: IndexEntry, already: boolean): FoldResult {
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
 * The engine's batch folding (see `ContextFold.foldMany`): preparation first, then the rounds.
 * Holds no state of its own; the engine's caches and pool come in through its sources.
 */

/** Inputs between two `preparing` progress calls of a batch. */
const PROGRESS_EVERY = 256;
export class BatchFold {
  private readonly src: BatchFoldSources;

  constructor(src: BatchFoldSources) {
    this.src = src;
  }

  /** Redacts the user text of a fold input (nothing to do when the engine does not redact). */
  private async redactInput(
    input: FoldInput,
  ): Promise<{ input: FoldInput; records: RedactionRecord[] }> {
    const redactor = this.src.loadRedactor();
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
    checkOptionKeys('fold input', given, FOLD_INPUT_KEYS, 'field');
    return this.redactInput(given);
  }

  private nodeContext(foldedAt: string): NodeContext {
    return {
      policy: this.src.policy,
      sessionId: this.src.sessionId,
      foldedAt,
      sanitized: this.src.redact,
    };
  }

  /** A built node with its index entry (and its sanitized flag remembered). */
  private prepared(b: BuiltNode): Prepared {
    this.src.sanitizedByArtifact.set(b.node.artifact_sha256, b.node.sanitized);
    const entry = indexEntryFor(b.node, this.src.store.entryFilePath(b.node.step_id));
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
  async prepareAll(
    inputs: readonly FoldInput[],
    foldedAt: string,
    onProgress?: (done: number, total: number, phase: 'preparing') => void,
  ): Promise<Prepared[]> {
    const pool = inputs.length > FOLD_ROUND ? this.src.derivePool() : null;
    const prepared: Prepared[] = [];
    const tell = (done: number): void => {
      if (done % PROGRESS_EVERY === 0 || done === inputs.length) {
        onProgress?.(done, inputs.length, 'preparing');
      }
    };
    if (!pool) {
      for (const i of inputs) {
        prepared.push(await this.prepare(i, foldedAt));
        tell(prepared.length);
      }
      return prepared;
    }
    const jobs: BuildJob[] = [];
    for (const i of inputs) {
      jobs.push(await this.redacted(i));
      tell(jobs.length);
    }
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

  /** A prepared batch: checked as a whole, then folded round by round (see `foldMany`). */
  async foldPrepared(
    prepared: readonly Prepared[],
    onProgress?: (done: number, total: number, phase: 'writing') => void,
  ): Promise<FoldResult[]> {
    const seen = new Map<number, Prepared>();
    for (const p of prepared) {
      const prev = seen.get(p.entry.step_id);
      if (
        prev &&
        (prev.entry.payload_sha256 !== p.entry.payload_sha256 ||
          prev.entry.projection_sha256 !== p.entry.projection_sha256)
      ) {
        throw new StepConflictError(
          `step ${p.entry.step_id} appears twice in the batch with different payloads or projections`,
          {
            stepId: p.entry.step_id,
          },
        );
      }
      seen.set(p.entry.step_id, p);
    }
    let fresh: Set<number> | undefined;
    if (prepared.length > FOLD_ROUND) {
      fresh = await this.src.store.write((tx) => {
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
    let next = ahead?.(0);
    const results: FoldResult[] = [];
    for (let r = 0; r < rounds.length; r++) {
      const derived = await next?.();
      // The next round is derived on the workers while this one is written and committed.
      next = r + 1 < rounds.length ? ahead?.(r + 1) : undefined;
      if (r > 0) await new Promise((res) => setTimeout(res, ROUND_PAUSE_MS));
      results.push(...(await this.foldRound(rounds[r]!, derived)));
      onProgress?.(Math.min((r + 1) * FOLD_ROUND, prepared.length), prepared.length, 'writing');
    }
    return results;
  }

  /**
   * For a batch of more than one round of new turns, where worker threads can run: a function
   * that starts deriving a round's new turns on the pool (analysis and token count, see
   * {@link DerivePool.share}) and returns the one that finishes it on this thread, resolving to
   * them by step, or to undefined if the pool failed (the round then derives inline, as a small
   * batch always does).
   */
  private deriveAhead(
    rounds: readonly Prepared[][],
    fresh: ReadonlySet<number> | undefined,
  ): DeriveRound | undefined {
    if (!fresh || fresh.size <= FOLD_ROUND) return undefined;
    const pool = this.src.derivePool();
    if (!pool) return undefined;
    const count: DeriveCount = this.src.tokenizer === o200kTokenizer() ? 'o200k' : 'none';
    // A local store's index deflates analyses: the workers do it for the committing thread.
    const pack = this.src.store.kind === 'local';
    const queued = new Set<number>();
    return (r) => {
      const todo = rounds[r]!.filter((p) => {
        const step = p.entry.step_id;
        if (!fresh.has(step) || queued.has(step)) return false;
        queued.add(step);
        return true;
      });
      const jobs = todo.map((p) => ({ summary: p.entry.summary, text: p.text }));
      const finish = pool.share(jobs, { count, pack });
      return async () => {
        try {
          const out = await finish();
          return new Map(todo.map((p, i) => [p.entry.step_id, out[i]!]));
        } catch (e) {
          // Closed under it: the batch failed or ended, and nothing waits for this round.
          if (e instanceof DerivePoolClosedError) return undefined;
          this.workersFailed(e as Error);
          return undefined;
        }
      };
    };
  }

  private workersFailed(e: Error): void {
    this.src.onWarning?.({
      code: 'DERIVE_WORKERS_FAILED',
      message: `the batch's workers failed (${e.message}); the batch goes on, on this thread`,
      path: this.src.dir,
    });
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
          { stepId: step, path: this.src.store.nodePath(step) },
        );
      }
      return { kind: 'existing', entry: existing };
    }
    if (planned.has(step)) return { kind: 'planned' };
    if (tx.nodeExists(step)) {
      const path = this.src.store.nodePath(step);
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
    return this.src.store.write(async (tx) => {
      this.src.store.assertConsistent();
      const results: FoldResult[] = [];
      const fresh: Prepared[] = [];
      const planned = new Set<number>();
      for (const p of round) {
        const plan = this.plan(tx, p, planned);
        if (plan.kind === 'existing') results.push(foldResult(plan.entry, true));
        else results.push(foldResult(p.entry, plan.kind === 'planned'));
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
    const analysis = { akey: analysisKey(p.entry), ...d.analysis, packed: d.packed };
    const sanitized = p.node.sanitized;
    if (this.src.tokenizer.name === 'reference') return { entry: p.entry, analysis, sanitized };
    const count = d.tokens ?? this.src.tokenizer.count(p.text);
    this.src.costs.rememberTokens(p.entry.payload_sha256, count);
    const tokens = { tokenizer: this.src.tokenizer.name, count };
    return { entry: p.entry, analysis, tokens, sanitized };
  }
}
