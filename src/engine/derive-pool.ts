import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { o200kTokenizer } from '../extract/tokenizer.js';
import { packagePath } from '../fs/package-root.js';
import type { RedactionRecord } from '../protocol/types.js';
import {
  analyzeNode,
  type StoredNodeAnalysis,
  storedAnalysis,
} from '../retrieval/node-analysis.js';
import type { PackedAnalysis } from '../store/analysis-record.js';
import { packAnalysis } from '../store/index-analyses.js';
import { type BuiltNode, buildNode, type NodeContext } from './build-node.js';
import type { FoldInput } from './types.js';

/** What a fold derives from a turn's text for the index: its analysis and its token count. */
export interface DerivedText {
  analysis: StoredNodeAnalysis;
  /** Tokens of the text under o200k, or null when the job asked for no count. */
  tokens: number | null;
  /** The analysis deflated as an index file stores it, when the derive asked for it. */
  packed?: PackedAnalysis;
}

/** One text to derive from. */
export interface DeriveJob {
  summary: string;
  text: string;
}

/**
 * Whether a derivation also counts o200k tokens (`o200k`) or leaves counting to the caller
 * (`none`: the reference estimator, or a tokenizer of the caller's own that cannot cross a
 * thread).
 */
export type DeriveCount = 'o200k' | 'none';

/**
 * Derives on the calling thread: what a worker runs, and the engine's own path for a small batch.
 * Every token count comes first, then every analysis: alternated turn by turn, the tokenizer's
 * rank table and the analysis's tables evict each other from the processor's caches (a batch
 * derives about a fifth faster this way).
 */
export function deriveInline(jobs: readonly DeriveJob[], count: DeriveCount): DerivedText[] {
  const tokenizer = count === 'o200k' ? o200kTokenizer() : null;
  const tokens = jobs.map((j) => (tokenizer ? tokenizer.count(j.text) : null));
  return jobs.map((j, i) => ({
    analysis: storedAnalysis(analyzeNode({ summary: j.summary, text: j.text, tokens: 0 })),
    tokens: tokens[i] ?? null,
  }));
}

/**
 * {@link deriveInline}, each analysis also deflated as an index file stores it: the part of a
 * commit a worker can do for the committing thread.
 */
export function derivePacked(jobs: readonly DeriveJob[], count: DeriveCount): DerivedText[] {
  const out = deriveInline(jobs, count);
  for (const d of out) d.packed = packAnalysis(d.analysis);
  return out;
}

/**
 * Jobs a thread claims at a time: enough that a claim's token counts run together before its
 * analyses (see {@link deriveInline}), few enough that the threads finish a round together.
 */
const CLAIM = 16;

/**
 * Derives the jobs this thread claims, a few at a time, from a counter shared with the threads
 * that derive the same jobs: each job is derived once, by whichever thread was free first.
 * Returns the derived jobs at their index, null where another thread claimed the job.
 */
export function deriveClaimed(
  jobs: readonly DeriveJob[],
  count: DeriveCount,
  pack: boolean,
  claim: Int32Array,
): (DerivedText | null)[] {
  const derive = pack ? derivePacked : deriveInline;
  const out = new Array<DerivedText | null>(jobs.length).fill(null);
  for (let i = Atomics.add(claim, 0, CLAIM); i < jobs.length; i = Atomics.add(claim, 0, CLAIM)) {
    const end = Math.min(i + CLAIM, jobs.length);
    derive(jobs.slice(i, end), count).forEach((d, k) => {
      out[i + k] = d;
    });
  }
  return out;
}

/** A fold input already redacted, and the redactions made: what a node is built from. */
export interface BuildJob {
  input: FoldInput;
  records: RedactionRecord[];
}

/** A built node, or why a job could not be built (its own thread tells the error again). */
export type BuildOutcome = BuiltNode | { error: string };

/**
 * Builds nodes on the calling thread ({@link buildNode}), an input that cannot be built giving
 * its error's message: what a worker runs for a batch's nodes.
 */
export function buildInline(jobs: readonly BuildJob[], ctx: NodeContext): BuildOutcome[] {
  return jobs.map((j) => {
    try {
      return buildNode(j.input, j.records, ctx);
    } catch (e) {
      return { error: String((e as Error)?.message ?? e) };
    }
  });
}

// The worker is a script of its own: it imports the compiled module and runs `deriveInline`
// or `buildInline`.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const ready = import(workerData.module);
parentPort.on('message', async (m) => {
  try {
    const mod = await ready;
    const out = m.ctx
      ? mod.buildInline(m.jobs, m.ctx)
      : m.claim
        ? mod.deriveClaimed(m.jobs, m.count, m.pack, new Int32Array(m.claim))
        : (m.pack ? mod.derivePacked : mod.deriveInline)(m.jobs, m.count);
    parentPort.postMessage({ id: m.id, out });
  } catch (e) {
    parentPort.postMessage({ id: m.id, error: String((e && e.message) || e) });
  }
});
`;

/**
 * This module's compiled file, or null when it runs from sources (a test runner's transform).
 * Found in the package, not at this module's own URL: the bundled CLI runs this code from a
 * chunk whose exports are renamed, and a worker imports `deriveInline` and `buildInline`.
 */
function compiledModule(): string | null {
  if (!new URL(import.meta.url).pathname.endsWith('.js')) return null;
  const file = packagePath('dist', 'engine', 'derive-pool.js');
  return existsSync(file) ? pathToFileURL(file).href : null;
}

/** What a derive still running when its pool was closed rejects with. */
export class DerivePoolClosedError extends Error {
  constructor() {
    super('the derive pool was closed');
    this.name = 'DerivePoolClosedError';
  }
}

type Pending = {
  worker: Worker;
  resolve: (out: unknown[]) => void;
  reject: (e: Error) => void;
};

/** Options of a {@link DerivePool}. */
export interface DerivePoolOptions {
  /** Worker threads at most (default: the cores beyond this thread, at most 3). */
  threads?: number;
  /** The module URL workers import `deriveInline` from (default: this module's compiled file). */
  module?: string;
}

/**
 * Worker threads that build the nodes of a long batch, and analyse and count its turns, beside
 * the thread that commits them. Building, analysis and counting are pure functions of their
 * inputs, so the results are the same whichever thread computed them. A worker that fails makes {@link DerivePool.derive}
 * reject and the pool unusable from then on (the caller derives inline). Workers start on first
 * use, hold the process open only while they have work, and stop on {@link DerivePool.close}.
 *
 * @example
 * const pool = new DerivePool();
 * const out = await pool.derive(jobs, { count: 'o200k' }); // on this thread where no worker can run
 * await pool.close();
 */
export class DerivePool {
  readonly #size: number;
  readonly #module: string | null;
  #workers: Worker[] = [];
  #pending = new Map<number, Pending>();
  #next = 0;
  #broken = false;
  #started = 0;

  constructor(options: DerivePoolOptions = {}) {
    this.#size = options.threads ?? Math.max(0, Math.min(3, availableParallelism() - 1));
    this.#module = options.module ?? compiledModule();
  }

  /** Whether derive runs work on workers (false from sources, on one core, or after a failure). */
  get usable(): boolean {
    return this.#size > 0 && this.#module !== null && !this.#broken;
  }

  /** Workers started over the pool's life (a diagnostic: 0 means nothing ran off this thread). */
  get started(): number {
    return this.#started;
  }

  /** Workers running now (0 before the first derive and after close). */
  get running(): number {
    return this.#workers.length;
  }

  /**
   * Derives every job, in order. The jobs are cut into one contiguous part per worker, plus one
   * for this thread with `thisThread` (computed while the workers run theirs). Without it this
   * thread stays free, for a caller that commits one round while the next is derived.
   */
  async derive(
    jobs: readonly DeriveJob[],
    options: { count: DeriveCount; thisThread?: boolean; pack?: boolean },
  ): Promise<DerivedText[]> {
    const { count, pack = false } = options;
    const derive = pack ? derivePacked : deriveInline;
    return this.#split(jobs, options.thisThread === true, { count, pack }, (part) =>
      derive(part, count),
    );
  }

  /**
   * Derives every job, in order, shared with this thread: the workers start claiming jobs at
   * once, one by one ({@link deriveClaimed}); the function returned derives on this thread the
   * jobs no worker has claimed yet, then waits for theirs. A caller busy meanwhile (committing
   * the round before) takes what is left instead of waiting for the workers to finish it.
   */
  share(
    jobs: readonly DeriveJob[],
    options: { count: DeriveCount; pack?: boolean },
  ): () => Promise<DerivedText[]> {
    const { count, pack = false } = options;
    const claim = new Int32Array(new SharedArrayBuffer(4));
    const here = () => deriveClaimed(jobs, count, pack, claim);
    if (!this.usable || jobs.length === 0) return async () => here() as DerivedText[];
    this.#start();
    const message = { count, pack, claim: claim.buffer };
    const theirs = Promise.all(
      this.#workers.map((w) => this.#send<DerivedText | null>(w, jobs, message)),
    );
    // Awaited by the function returned; a failure before then is reported there.
    theirs.catch(() => undefined);
    return async () => {
      const out = here();
      let parts: (DerivedText | null)[][];
      try {
        parts = await theirs;
      } catch (e) {
        if (e instanceof DerivePoolClosedError) throw e;
        this.#broken = true;
        await this.close();
        throw e;
      }
      for (const part of parts) {
        for (let i = 0; i < part.length; i++) out[i] ??= part[i]!;
      }
      return out as DerivedText[];
    };
  }

  /**
   * Builds the nodes of a batch ({@link buildInline}), in order, one part on each worker and one
   * on this thread. Rejects if a worker fails (the pool is then unusable, as for `derive`).
   */
  async build(jobs: readonly BuildJob[], ctx: NodeContext): Promise<BuildOutcome[]> {
    return this.#split(jobs, true, { ctx }, (part) => buildInline(part, ctx));
  }

  /** Cuts `jobs` into one contiguous part per worker (plus this thread's), results in order. */
  async #split<J, O>(
    jobs: readonly J[],
    thisThread: boolean,
    message: Record<string, unknown>,
    inline: (part: readonly J[]) => O[],
  ): Promise<O[]> {
    if (!this.usable || jobs.length === 0) return inline(jobs);
    this.#start();
    const parts = this.#workers.length + (thisThread ? 1 : 0);
    const per = Math.ceil(jobs.length / parts);
    const sent = this.#workers.map((w, i) =>
      this.#send<O>(w, jobs.slice(i * per, (i + 1) * per), message),
    );
    const mine = thisThread ? inline(jobs.slice(this.#workers.length * per)) : [];
    try {
      const theirs = await Promise.all(sent);
      return [...theirs.flat(), ...mine];
    } catch (e) {
      if (e instanceof DerivePoolClosedError) throw e;
      this.#broken = true;
      await this.close();
      throw e;
    }
  }

  #start(): void {
    if (this.#workers.length > 0) return;
    for (let i = 0; i < this.#size; i++) {
      const w = new Worker(WORKER, {
        eval: true,
        workerData: { module: this.#module },
        // Not the parent's flags: a loader or --input-type of the parent would break the worker.
        execArgv: [],
      });
      this.#started++;
      w.unref();
      w.on('message', (m: { id: number; out?: unknown[]; error?: string }) => {
        const p = this.#pending.get(m.id);
        if (!p) return;
        this.#pending.delete(m.id);
        this.#release(w);
        if (m.out) p.resolve(m.out);
        else p.reject(new Error(`derive worker: ${m.error}`));
      });
      const fail = (e: Error) => {
        // Workers stopped by close() are not a failure: the pool stays usable.
        if (this.#workers.includes(w)) this.#broken = true;
        for (const p of this.#pending.values()) p.reject(e);
        this.#pending.clear();
      };
      w.on('error', (e) => fail(new Error(`derive worker: ${e.message}`)));
      w.on('exit', (code) => {
        if (!this.#workers.includes(w)) fail(new DerivePoolClosedError());
        else if (this.#pending.size > 0) fail(new Error(`derive worker exited (${code})`));
      });
      this.#workers.push(w);
    }
  }

  #send<O>(w: Worker, jobs: readonly unknown[], message: Record<string, unknown>): Promise<O[]> {
    if (jobs.length === 0) return Promise.resolve([]);
    const id = this.#next++;
    return new Promise<O[]>((resolve, reject) => {
      this.#pending.set(id, { worker: w, resolve: resolve as (out: unknown[]) => void, reject });
      // Referenced while it has work: a process awaiting it must not exit meanwhile.
      w.ref();
      w.postMessage({ id, jobs, ...message });
    });
  }

  /** Lets the process exit past `w` once it has no job left. */
  #release(w: Worker): void {
    for (const p of this.#pending.values()) if (p.worker === w) return;
    w.unref();
  }

  /**
   * Stops the workers; a derive still running rejects with {@link DerivePoolClosedError}. A later
   * derive starts new workers unless the pool broke.
   */
  async close(): Promise<void> {
    const ws = this.#workers;
    this.#workers = [];
    await Promise.all(ws.map((w) => w.terminate()));
  }
}
