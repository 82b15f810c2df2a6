// How the engine's reads run against its store: the read loop over the synced index (a node
// fetched, or the index rebuilt, and the read run again), the lookup of an indexed step with
// the error that tells an orphan from an unknown step, and the views and caps a scan reads
// through. Plain functions of the store and policy, so the facade keeps only its operations.
import { UsageError } from '../protocol/errors.js';
import { NodeNotFoundError, OrphanedNodeError } from '../protocol/ipcf-errors.js';
import { type HydrationPolicy, perTurnCap } from '../protocol/policy.js';
import type { IndexEntry } from '../protocol/types.js';
import { TermView } from '../retrieval/term-view.js';
import { NodeNotLoadedError } from '../store/index-backend.js';
import { IndexBrokenError } from '../store/local-store.js';
import type { EngineStore } from './open-store.js';
import type { RankedCaps } from './ranked-retrieval.js';
import type { ScanOptions } from './types.js';

/**
 * Runs a read against the synced index; if the index file turns out corrupt on the way, it
 * is rebuilt from the store's files and the read runs once more.
 */
export async function readSynced<T>(
  store: EngineStore,
  fn: () => T | Promise<T>,
  load: readonly number[],
): Promise<T> {
  await store.sync();
  await store.load(load);
  let rebuilt = false;
  for (let loads = 0; ; ) {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof NodeNotLoadedError && loads++ < 1024) {
        // A database store fetches nodes asynchronously: fetch this one and run again.
        await store.load([e.step]);
        continue;
      }
      if (!(e instanceof IndexBrokenError) || rebuilt) throw e;
      rebuilt = true;
      await store.sync();
    }
  }
}

/** The index entry of a step, or the error a read of it reports (`dir` names the store). */
export function entryOrThrow(store: EngineStore, dir: string, stepId: number): IndexEntry {
  if (!Number.isSafeInteger(stepId) || stepId < 0) {
    throw new UsageError(`step id must be a non-negative integer, got ${String(stepId)}`);
  }
  const entry = store.get(stepId);
  if (entry) return entry;
  const path = store.orphanPath(stepId);
  if (path !== null) {
    throw new OrphanedNodeError(`step ${stepId} has a cold node file but no index entry: ${path}`, {
      stepId,
      path,
    });
  }
  throw new NodeNotFoundError(`step ${stepId} is not folded in this store (${dir})`, {
    stepId,
  });
}

/** The store's reference postings and entries, as recall and the reference scan read them. */
export function termView(store: EngineStore): TermView {
  return new TermView({
    postings: (t) => store.postings('reference', t).steps,
    entry: (s) => store.get(s)!,
  });
}

const isStep = (x: unknown): boolean => Number.isSafeInteger(x) && (x as number) >= 0;

/**
 * Caps and live boundary of a page-in (`perTurn` bounds a reference scan too), the options
 * checked: a bad `maxTokens`, `liveFrom` or `lossy` is a UsageError, never ignored.
 */
export function rankedCaps(policy: HydrationPolicy, options: ScanOptions): RankedCaps {
  const perTurn = perTurnCap(policy);
  const max = options.maxTokens;
  if (max !== undefined && (!Number.isSafeInteger(max) || max < 1)) {
    throw new UsageError(`maxTokens must be a positive integer, got ${String(max)}`);
  }
  if (options.liveFrom !== undefined && !isStep(options.liveFrom)) {
    throw new UsageError(
      `liveFrom must be a step id (an integer >= 0), got ${String(options.liveFrom)}`,
    );
  }
  if (
    options.lossy !== undefined &&
    !(Array.isArray(options.lossy) && options.lossy.every(isStep))
  ) {
    throw new UsageError('lossy must be a list of step ids (integers >= 0)');
  }
  return {
    perCall: policy.max_rehydration_tokens_per_call,
    perTurn: max === undefined ? perTurn : Math.min(perTurn, max),
    ...(options.liveFrom !== undefined ? { liveFrom: options.liveFrom } : {}),
    ...(options.lossy ? { lossy: options.lossy } : {}),
    ...(options.tail ? { tail: true } : {}),
  };
}
