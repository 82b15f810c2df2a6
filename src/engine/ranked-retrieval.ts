import type { Tokenizer } from '../extract/tokenizer.js';
import { scanPage } from '../guard/scan-page.js';
import { isContextFoldError } from '../protocol/errors.js';
import { pageFailure } from '../protocol/results.js';
import type { IndexEntry } from '../protocol/types.js';
import { analyzeNode, type NodeAnalysis } from '../retrieval/node-analysis.js';
import { focusWindow } from '../retrieval/ranked-focus.js';
import { RankedIndex } from '../retrieval/ranked-index.js';
import {
  type RankedPick,
  type RankedScanResult,
  type RankedTuning,
  rankedScan,
} from '../retrieval/ranked-scan.js';
import { defaultCacheDir, RankedCache, rankedCacheKey } from './ranked-cache.js';
import type { Page, PageInFailure, PageInResult } from './types.js';

/**
 * A catch-up after the first reads the analysis cache only when at least this many turns are
 * pending (a reset, a large refresh); a few new turns are cheaper to analyse than to find in a
 * cache file that grows with the store.
 */
export const CACHE_READ_MIN_PENDING = 16;

/** What the ranked retrieval needs from the engine. */
export interface RankedRetrievalDeps {
  tokenizer: Tokenizer;
  /** The verified payload text of a step; throws a contextfold error if it fails verification. */
  verifiedText(stepId: number): string;
  /** The index entry of a step (for its summary), if indexed. */
  entryOf(stepId: number): IndexEntry | undefined;
  /**
   * The store directory: with it, analyses of turns read from the store are kept in the
   * persistent cache (see `ranked-cache.ts`). Without it nothing is cached.
   */
  storeDir?: string;
  /** Where the cache lives; `false` disables it. Default {@link defaultCacheDir}. */
  cacheDir?: string | false;
}

/** Caps of one page-in, and the live boundary (see `RankedScanOptions.liveFrom`). */
export interface RankedCaps {
  perCall: number;
  perTurn: number;
  liveFrom?: number;
  lossy?: readonly number[];
}

/**
 * The engine side of `retrieval: 'ranked'`: keeps the in-memory {@link RankedIndex} in step with
 * the store (turns folded here are indexed from the text in hand; turns that arrive through a
 * refresh are indexed on the next ranked scan, from the persistent analysis cache when it holds
 * them, else from their verified node), and turns a ranked scan into verified, windowed pages.
 * Nothing here is written into the store or hashed into it; the analysis cache lives outside.
 *
 * @example
 * const ranked = new RankedRetrieval({ tokenizer, verifiedText, entryOf, storeDir, cacheDir });
 * ranked.addText(12, 'tool: psql', 'port 5433');
 * const r = ranked.pageIn('which port?', { perCall: 3000, perTurn: 3500 });
 */
export class RankedRetrieval {
  #index = new RankedIndex();
  #pending: number[] = [];
  readonly #deps: RankedRetrievalDeps;
  readonly #tuning: Partial<RankedTuning>;
  readonly #cache: RankedCache | undefined;
  #cacheRead = false;

  constructor(deps: RankedRetrievalDeps, tuning: Partial<RankedTuning> = {}) {
    this.#deps = deps;
    this.#tuning = tuning;
    if (deps.storeDir !== undefined && deps.cacheDir !== false) {
      this.#cache = new RankedCache({
        cacheDir: deps.cacheDir ?? defaultCacheDir(),
        storeDir: deps.storeDir,
      });
    }
  }

  /** Indexed turns (after catching up). */
  get size(): number {
    this.#catchUp();
    return this.#index.size;
  }

  /**
   * Indexes a turn whose text is already in hand (the fold path). With its `payloadSha256` the
   * analysis is also queued for the cache (the fold-time text is exactly the text a later
   * process would read back: the payload, or the summary when it is empty), so the next process
   * that opens the store finds it warm; call {@link flushCache} after a batch.
   */
  addText(stepId: number, summary: string, text: string, payloadSha256?: string): void {
    if (this.#index.has(stepId)) return;
    const analysis = this.#analyse(summary, text);
    this.#index.addAnalysis(stepId, analysis);
    if (this.#cache && payloadSha256 !== undefined) {
      this.#cache.queue(
        rankedCacheKey({ tokenizer: this.#deps.tokenizer.name, payloadSha256, summary }),
        analysis,
      );
    }
  }

  /** Appends queued analyses to the cache (best effort, one write). */
  flushCache(): void {
    this.#cache?.flush();
  }

  #analyse(summary: string, text: string): NodeAnalysis {
    return analyzeNode({ summary, text, tokens: this.#deps.tokenizer.count(text) });
  }

  /** Notes a turn the store learnt about; it is read and verified on the next ranked scan. */
  noteAdded(stepId: number): void {
    if (!this.#index.has(stepId)) this.#pending.push(stepId);
  }

  /** Forgets everything (the store reloaded its index): every entry is indexed again lazily. */
  reset(stepIds: Iterable<number>): void {
    this.#index = new RankedIndex();
    this.#pending = [...stepIds];
  }

  /**
   * Indexes the pending turns: from the analysis cache without touching the node file when it
   * holds the turn (so no tokenizer is needed either), else from the verified node, queuing the
   * new analysis for one batched append. Fail closed: a node that does not verify is indexed on
   * its index entry's terms only, so it keeps its intents and its page-in is refused and
   * reported (as for a cached turn whose node was tampered later).
   */
  #catchUp(): void {
    if (this.#pending.length === 0) return;
    const pending = this.#pending;
    this.#pending = [];
    const todo: { step: number; entry: IndexEntry; key: string | undefined }[] = [];
    const cache = this.#cache;
    for (const step of pending) {
      if (this.#index.has(step)) continue;
      const entry = this.#deps.entryOf(step);
      if (!entry) continue;
      const key = cache
        ? rankedCacheKey({
            tokenizer: this.#deps.tokenizer.name,
            payloadSha256: entry.payload_sha256,
            summary: entry.summary,
          })
        : undefined;
      todo.push({ step, entry, key });
    }
    let hits = new Map<string, NodeAnalysis>();
    if (cache && todo.length > 0 && (!this.#cacheRead || todo.length >= CACHE_READ_MIN_PENDING)) {
      this.#cacheRead = true;
      hits = cache.read(new Set(todo.map((t) => t.key!)));
    }
    try {
      for (const { step, entry, key } of todo) {
        if (this.#index.has(step)) continue;
        const hit = key === undefined ? undefined : hits.get(key);
        if (hit) {
          this.#index.addAnalysis(step, hit);
          continue;
        }
        let text: string;
        try {
          text = this.#deps.verifiedText(step);
        } catch (e) {
          if (!isContextFoldError(e)) throw e;
          // Fail closed and loud: a node that does not verify stays a candidate on the terms its
          // index entry records (never its unverified text, never cached), so if it owns an
          // intent its page-in is refused and reported; the intent is never silently handed to
          // another turn.
          const terms = [...entry.identifiers, ...entry.files, ...entry.errors].join('\n');
          this.#index.addAnalysis(step, this.#analyse(entry.summary, terms));
          continue;
        }
        const analysis = this.#analyse(entry.summary, text);
        this.#index.addAnalysis(step, analysis);
        if (cache && key !== undefined) cache.queue(key, analysis);
      }
    } finally {
      cache?.flush();
    }
  }

  /** The ranked selection for a prompt (no page is read). */
  scan(prompt: string, caps: RankedCaps): RankedScanResult {
    this.#catchUp();
    return rankedScan(this.#index, prompt, {
      perCallCap: caps.perCall,
      perTurnCap: caps.perTurn,
      tuning: this.#tuning,
      ...(caps.liveFrom !== undefined ? { liveFrom: caps.liveFrom } : {}),
      ...(caps.lossy ? { lossy: caps.lossy } : {}),
    });
  }

  /**
   * Scan, then page in each pick verified: a window of whole lines around the matched keys, at
   * most the pick's cost. If an intent's owner fails verification, its companions and
   * alternatives are not paged either (its intent is never handed to another turn).
   */
  pageIn(prompt: string, caps: RankedCaps): PageInResult {
    const scan = this.scan(prompt, caps);
    const pages: Page[] = [];
    const failures: PageInFailure[] = [];
    const failed = new Set<number>();
    let tokens = 0;
    for (const pick of scan.selected) {
      const principal = pick.companion_of ?? pick.alternative_of;
      if (principal !== undefined && failed.has(principal)) continue;
      try {
        const text = this.#deps.verifiedText(pick.step_id);
        const budget = Math.min(pick.cost, caps.perTurn - tokens);
        if (budget <= 0) continue;
        const w = focusWindow({
          content: text,
          focus: pick.focus,
          maxTokens: budget,
          count: (s) => this.#deps.tokenizer.count(s),
        });
        const entry = this.#deps.entryOf(pick.step_id)!;
        pages.push(pageOf(pick, entry, w, budget));
        tokens += w.tokens;
      } catch (e) {
        if (!isContextFoldError(e)) throw e;
        failed.add(pick.step_id);
        failures.push(pageFailure(pick.step_id, e));
      }
    }
    return { scan, pages, failures, tokens };
  }
}

function pageOf(
  pick: RankedPick,
  entry: IndexEntry,
  w: ReturnType<typeof focusWindow>,
  maxTokens: number,
): Page {
  return {
    step_id: pick.step_id,
    content: w.text,
    tokens: w.tokens,
    payload_sha256: entry.payload_sha256,
    chunk: 0,
    chunks: 1,
    truncated: w.truncated,
    matched_terms: pick.matched_terms,
    window: { start_line: w.startLine, end_line: w.endLine, lines: w.lines, max_tokens: maxTokens },
    findings: scanPage(w.text),
  };
}
