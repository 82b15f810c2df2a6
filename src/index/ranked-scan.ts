import { compareCodePoints } from '../protocol/canonical-json.js';
import type { RankedIndex } from './ranked-index.js';
import { distinctRankedTerms } from './ranked-terms.js';

/** Tuning of the ranked scan. Every field has a measured default ({@link RANKED_DEFAULTS}). */
export interface RankedTuning {
  /** BM25 term-frequency saturation. */
  k1: number;
  /** BM25 length normalisation (0 = none, 1 = full). */
  b: number;
  /** Weight of an indexed key that extends a prompt key (`postgres` → `postgresql`). */
  extendWeight: number;
  /** Weight of an indexed key that is a prefix of a prompt key (`postgresql` → `postgres`). */
  stemWeight: number;
  /** Shortest prompt key that is expanded by prefix. */
  minPrefix: number;
  /** At most this many extensions per prompt key (rarest first). */
  maxExtensions: number;
  /** Keys in more than this share of turns are ignored: they cannot tell turns apart. */
  maxDocShare: number;
  /** A pick needs at least this gain: a lone common word never selects a turn. */
  minGain: number;
  /** Later picks need at least this share of the first pick's gain. */
  relativeGain: number;
  /** Turns within this share of the best gain are equally good; the latest of them wins. */
  recencyBand: number;
  /** At most this many pages per prompt. */
  maxPages: number;
  /** Tokens one page may take at most (the window size for large turns). */
  pageTokens: number;
}

/** The measured defaults (see docs/retrieval.md). */
export const RANKED_DEFAULTS: Readonly<RankedTuning> = Object.freeze({
  k1: 1.2,
  b: 0.5,
  extendWeight: 0.7,
  stemWeight: 0.6,
  minPrefix: 4,
  maxExtensions: 32,
  maxDocShare: 0.5,
  minGain: 2,
  relativeGain: 0.4,
  recencyBand: 0.85,
  maxPages: 4,
  pageTokens: 1200,
});

/** Options of {@link rankedScan}. */
export interface RankedScanOptions {
  /** The per-turn page-in budget, in tokens. */
  perTurnCap: number;
  /** The per-call cap, in tokens. */
  perCallCap: number;
  tuning?: Partial<RankedTuning>;
}

/** One indexed key a prompt key matched, with its weight (1 exact, less for prefix matches). */
export interface KeyMatch {
  key: string;
  weight: number;
}

/** A ranked pick (shape of the engine's `ScanPick`, plus the score and the keys for focusing). */
export interface RankedPick {
  step_id: number;
  /** Prompt keys this pick took from the residual, sorted by code point. */
  matched_terms: string[];
  /** Tokens it costs: min(tokens, page size, per-call cap, per-turn cap). */
  cost: number;
  /** Residual gain when picked (BM25 units). */
  score: number;
  /** Indexed keys of this turn that matched, with weights: what a page window focuses on. */
  focus: KeyMatch[];
}

/** The ranked selection for a prompt, in pick order. */
export interface RankedScanResult {
  query_terms: string[];
  selected: RankedPick[];
  /** Picks whose intent was owned but that did not fit the per-turn budget (never replaced). */
  budget_dropped: RankedPick[];
}

/** A prompt key and the indexed keys it matches. */
export interface QueryKey {
  term: string;
  matches: KeyMatch[];
}

/** Prompt keys with their matches in the index. Keys that match nothing are dropped. */
export function expandQuery(
  index: RankedIndex,
  prompt: string,
  tuning: Partial<RankedTuning> = {},
): QueryKey[] {
  const t = { ...RANKED_DEFAULTS, ...tuning };
  const maxDf = Math.max(1, Math.floor(index.size * t.maxDocShare));
  const usable = (key: string): boolean => {
    const df = index.docFrequency(key);
    return df > 0 && (df <= maxDf || index.size < 4);
  };
  const out: QueryKey[] = [];
  for (const term of distinctRankedTerms(prompt)) {
    const matches: KeyMatch[] = [];
    if (usable(term)) matches.push({ key: term, weight: 1 });
    if (term.length >= t.minPrefix && /\p{L}/u.test(term)) {
      const ext = index
        .extensions(term)
        .filter(usable)
        .sort(
          (a, b) => index.docFrequency(a) - index.docFrequency(b) || compareCodePoints(a, b),
        )
        .slice(0, t.maxExtensions);
      for (const key of ext) matches.push({ key, weight: t.extendWeight });
      // Shorter indexed keys the prompt key extends: `configuration` meets `config`.
      for (let n = term.length - 1; n >= t.minPrefix; n--) {
        const key = term.slice(0, n);
        if (usable(key)) {
          matches.push({ key, weight: t.stemWeight });
          break;
        }
      }
    }
    if (matches.length > 0) out.push({ term, matches });
  }
  return out;
}

function idf(n: number, df: number): number {
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}


/** A turn that shares a key with the prompt, with its score per prompt key. */
export interface Candidate {
  docNo: number;
  stepId: number;
  /** Best weighted BM25 score per query key (0 = no match). */
  perKey: Float64Array;
  /** The indexed key that gave each query key its score. */
  bestKey: (KeyMatch | undefined)[];
}

/** Scores every turn that shares a key with the prompt; step-descending order. */
export function scoreCandidates(
  index: RankedIndex,
  query: readonly QueryKey[],
  tuning: Partial<RankedTuning> = {},
): Candidate[] {
  const t = { ...RANKED_DEFAULTS, ...tuning };
  const n = index.size;
  const avgLen = index.averageLength;
  const candidates = new Map<number, Candidate>();
  query.forEach((q, qi) => {
    for (const m of q.matches) {
      const p = index.postings(m.key);
      if (!p) continue;
      const w = m.weight * idf(n, p.docs.length);
      for (let i = 0; i < p.docs.length; i++) {
        const docNo = p.docs[i]!;
        const tf = p.tfs[i]!;
        const doc = index.doc(docNo);
        const norm = tf + t.k1 * (1 - t.b + (t.b * doc.length) / avgLen);
        const s = (w * (tf * (t.k1 + 1))) / norm;
        let c = candidates.get(docNo);
        if (!c) {
          c = {
            docNo,
            stepId: doc.stepId,
            perKey: new Float64Array(query.length),
            bestKey: new Array(query.length),
          };
          candidates.set(docNo, c);
        }
        if (s > c.perKey[qi]!) {
          c.perKey[qi] = s;
          c.bestKey[qi] = m;
        }
      }
    }
  });

  return [...candidates.values()].sort((a, b) => b.stepId - a.stepId);
}

/**
 * Ranked scan: BM25 over retrieval keys with prefix expansion, then a residual greedy cover with
 * intent ownership (as CONF-13's RGSC): each pick removes the prompt keys it matched from the
 * residual, admitted or not, so a budget cap may drop an intent but never hands it to an older
 * turn. Among turns whose gain is within `recencyBand` of the best, the latest wins (evolving
 * values). Cost per scan: the postings of the prompt's keys, not the number of nodes.
 *
 * @example
 * const r = rankedScan(index, 'which postgres port?', { perTurnCap: 3500, perCallCap: 3000 });
 * r.selected[0]?.step_id; // the latest turn that states the port
 */
export function rankedScan(
  index: RankedIndex,
  prompt: string,
  options: RankedScanOptions,
): RankedScanResult {
  const t = { ...RANKED_DEFAULTS, ...options.tuning };
  const query = expandQuery(index, prompt, t);
  const queryTerms = query.map((q) => q.term).sort(compareCodePoints);
  const pool = scoreCandidates(index, query, t);
  const residual = new Array<boolean>(query.length).fill(true);
  const taken = new Set<number>();
  const selected: RankedPick[] = [];
  const dropped: RankedPick[] = [];
  const turnCap = options.perTurnCap;
  const pageCap = Math.min(t.pageTokens, options.perCallCap, turnCap);
  let consumed = 0;
  let firstGain = 0;
  while (selected.length + dropped.length < t.maxPages) {
    let best = 0;
    const gains = new Float64Array(pool.length);
    pool.forEach((c, i) => {
      if (taken.has(c.docNo)) return;
      let g = 0;
      for (let q = 0; q < query.length; q++) if (residual[q]) g += c.perKey[q]!;
      gains[i] = g;
      if (g > best) best = g;
    });
    if (best < t.minGain || best < firstGain * t.relativeGain) break;
    // The pool is in step-descending order: the first turn in the band is the latest.
    const pi = gains.findIndex((g) => g >= best * t.recencyBand);
    const c = pool[pi]!;
    taken.add(c.docNo);
    if (firstGain === 0) firstGain = gains[pi]!;
    const matched: string[] = [];
    const focus: KeyMatch[] = [];
    for (let q = 0; q < query.length; q++) {
      const m = c.bestKey[q];
      if (c.perKey[q]! <= 0 || !m) continue;
      focus.push({ key: m.key, weight: c.perKey[q]! });
      if (!residual[q]) continue;
      residual[q] = false;
      matched.push(query[q]!.term);
    }
    const cost = Math.min(index.doc(c.docNo).tokens, pageCap);
    const pick: RankedPick = {
      step_id: c.stepId,
      matched_terms: matched.sort(compareCodePoints),
      cost,
      score: round(gains[pi]!),
      focus: focus.sort((a, b) => b.weight - a.weight || compareCodePoints(a.key, b.key)),
    };
    if (selected.length === 0 || consumed + cost <= turnCap) {
      selected.push(pick);
      consumed += cost;
    } else {
      dropped.push(pick);
    }
  }
  return { query_terms: queryTerms, selected, budget_dropped: dropped };
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
