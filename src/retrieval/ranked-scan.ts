import { compareCodePoints } from '../protocol/canonical-json.js';
import type { RecallStatus } from '../protocol/results.js';
import type { RankedIndex } from './ranked-index.js';
import {
  askedShapes,
  EARLIEST_CUES,
  LATEST_CUES,
  type PromptIntent,
  promptIntent,
} from './ranked-intent.js';
import { distinctRankedTerms, stemWord } from './ranked-terms.js';

/** Tuning of the ranked scan. Every field has a measured default ({@link RANKED_DEFAULTS}). */
export interface RankedTuning {
  /** BM25 term-frequency saturation. */
  k1: number;
  /** BM25 length normalisation (0 = none, 1 = full). */
  b: number;
  /** Weight of an indexed key that extends a prompt key (`postgres` → `postgresql`). */
  extendWeight: number;
  /** Weight of an indexed key that is a prefix of a prompt key (`configuration` → `config`). */
  stemWeight: number;
  /** Shortest prompt key that is expanded by prefix. */
  minPrefix: number;
  /** An extension may add at most this many characters (`config` → `configuration`: 7). */
  maxExtensionGrowth: number;
  /** At most this many extensions per prompt key (most frequent first). */
  maxExtensions: number;
  /** Keys in more than this share of turns are ignored: they cannot tell turns apart. */
  maxDocShare: number;
  /** At most this many candidates (the best by total) enter the greedy selection. */
  maxCandidates: number;
  /**
   * A key's postings are read from the most recent this many turns only, so a scan costs at most
   * (prompt keys × this) however large the store (recent turns are preferred anyway).
   */
  maxPostings: number;
  /**
   * Share of a turn's per-key score the next turn inherits: a tool result is about what its call
   * asked for. Only turns with a key of their own, or that look like the answer (a failure on an
   * error prompt, an asked answer shape), inherit.
   */
  nextWeight: number;
  /** Gain multiplier for turns that report a failure, on prompts that ask about one. */
  errorBoost: number;
  /** Gain multiplier for turns holding the answer shape the prompt asks for (hash, version…). */
  shapeBoost: number;
  /** Gain penalty per unit of prose ratio: data turns hold answers, narration restates them. */
  prosePenalty: number;
  /** A pick needs at least this gain: a lone common word never selects a turn. */
  minGain: number;
  /** Later picks need at least this share of the first pick's gain. */
  relativeGain: number;
  /** Turns within this share of the best gain are equally good; the latest of them wins. */
  recencyBand: number;
  /** The band when the prompt says "now" / "latest" / "last time". */
  latestBand: number;
  /** The band when the prompt says "first" / "initially": the earliest of the band wins. */
  earliestBand: number;
  /** On "now" / "latest" prompts, the latest candidate's gain is multiplied by 1 + this. */
  latestBoost: number;
  /** At most this many picks (intents) per prompt. */
  maxPicks: number;
  /** Page the neighbour a pick inherited its keys from (the call of a result) with it. */
  companions: boolean;
  /** Tokens an owner page may take at most (the window size for large turns). */
  pageTokens: number;
  /** Per owned intent, at most this many other candidates, with leftover budget only. */
  maxAlternatives: number;
  /** An alternative needs this share of the owner's gain on the owner's keys. */
  alternativeBand: number;
  /** Tokens an alternative page may take at most. */
  alternativeTokens: number;
}

/** The measured defaults (docs/retrieval.md has the measurements behind each). */
export const RANKED_DEFAULTS: Readonly<RankedTuning> = Object.freeze({
  k1: 2,
  b: 0.75,
  extendWeight: 0.7,
  stemWeight: 0.6,
  minPrefix: 4,
  maxExtensionGrowth: 7,
  maxExtensions: 8,
  maxDocShare: 0.5,
  maxPostings: 256,
  maxCandidates: 256,
  nextWeight: 1,
  errorBoost: 0.5,
  shapeBoost: 1,
  prosePenalty: 1,
  minGain: 2,
  relativeGain: 0.4,
  recencyBand: 0.95,
  latestBand: 0.7,
  earliestBand: 0.85,
  latestBoost: 1,
  maxPicks: 4,
  companions: true,
  pageTokens: 3000,
  maxAlternatives: 2,
  alternativeBand: 0.6,
  alternativeTokens: 200,
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

/** A ranked pick (the engine's `ScanPick` plus score, focus keys and companion link). */
export interface RankedPick {
  step_id: number;
  /** Prompt keys this pick took from the residual, sorted by code point (empty for companions). */
  matched_terms: string[];
  /** Tokens it costs: min(tokens, page size, per-call cap, per-turn cap). */
  cost: number;
  /** Gain when picked (BM25 units; 0 for companions). */
  score: number;
  /** Indexed keys to focus a page window on, heaviest first. */
  focus: KeyMatch[];
  /** For a neighbour paged with a pick: that pick's step. */
  companion_of?: number;
  /** For another candidate of an owned intent: the owner's step. */
  alternative_of?: number;
  /**
   * Chronological label (CONF-04) within its intent (owner and alternatives, by step
   * descending: latest_chronological, superseded…, historical); `related` for companions.
   */
  status: RecallStatus;
}

/** The ranked selection for a prompt, in pick order (companions right after their pick). */
export interface RankedScanResult {
  query_terms: string[];
  intent: PromptIntent;
  selected: RankedPick[];
  /** Picks whose intent was owned but that did not fit the per-turn budget (never replaced). */
  budget_dropped: RankedPick[];
}

/** A prompt key and the indexed keys it matches. */
export interface QueryKey {
  term: string;
  matches: KeyMatch[];
}

const WORD_KEY = /^[\p{L}\p{N}]+$/u;
const CUE_STEMS = new Set([...LATEST_CUES, ...EARLIEST_CUES].map(stemWord));

/**
 * Prompt keys with their matches in the index. A key in more than `maxDocShare` of the turns is
 * dropped with its expansions (it cannot tell turns apart); time cue words are not keys.
 */
export function expandQuery(
  index: RankedIndex,
  prompt: string,
  tuning: Partial<RankedTuning> = {},
): QueryKey[] {
  const t = { ...RANKED_DEFAULTS, ...tuning };
  const maxDf = index.size < 4 ? index.size : Math.max(1, Math.floor(index.size * t.maxDocShare));
  const usable = (key: string): boolean => {
    const df = index.docFrequency(key);
    return df > 0 && df <= maxDf;
  };
  const out: QueryKey[] = [];
  for (const term of distinctRankedTerms(prompt)) {
    if (CUE_STEMS.has(term)) continue;
    if (index.docFrequency(term) > maxDf) continue;
    const matches: KeyMatch[] = [];
    if (usable(term)) matches.push({ key: term, weight: 1 });
    if (term.length >= t.minPrefix && WORD_KEY.test(term) && /\p{L}/u.test(term)) {
      const ext = index
        .extensions(term)
        .filter(
          (k) => k.length <= term.length + t.maxExtensionGrowth && WORD_KEY.test(k) && usable(k),
        )
        .sort((a, b) => index.docFrequency(b) - index.docFrequency(a) || compareCodePoints(a, b))
        .slice(0, t.maxExtensions);
      for (const key of ext) matches.push({ key, weight: t.extendWeight });
      // The longest shorter indexed key the prompt key extends: `configuration` meets `config`.
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

/** Store size from which the absolute gain floor applies unscaled. */
const SMALL_STORE = 32;

function idf(n: number, df: number): number {
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

/** A turn that shares a key with the prompt (or neighbours one that does). */
export interface Candidate {
  docNo: number;
  stepId: number;
  /** Best weighted score per query key (0 = no match), own or inherited from a neighbour. */
  perKey: Float64Array;
  /** The indexed key that gave each query key its score. */
  bestKey: (KeyMatch | undefined)[];
  /** Gain multiplier (error turns on error prompts). */
  boost: number;
  /** Per query key: the step whose text gave the score (this turn or a neighbour). */
  source: Int32Array;
}

/**
 * Scores every turn that shares a key with the prompt (BM25 per prompt key, best expansion),
 * lets the next turn of each inherit a share of its scores, applies the boosts, and keeps the
 * `maxCandidates` best (time-weighted on "latest" prompts). Step-descending. Work is bounded by
 * the postings read (prompt keys × `maxPostings`), never by the number of turns.
 */
export function scoreCandidates(
  index: RankedIndex,
  query: readonly QueryKey[],
  tuning: Partial<RankedTuning> = {},
  intent: PromptIntent = { time: 'none', error: false },
  shapes: readonly string[] = [],
): Candidate[] {
  const t = { ...RANKED_DEFAULTS, ...tuning };
  const n = index.size;
  const nq = query.length;
  const avgLen = index.averageLength;
  const matches = query.map((q) => q.matches);
  // Hot loops read locals, not the (large, spread) tuning object.
  const { k1, b: bm25b, maxPostings, nextWeight } = t;
  const slotOf = index.scratchSlots(); // docNo → slot + 1 (0: none); reset before returning
  const docs: number[] = [];
  const steps: number[] = [];
  let scores = new Float64Array(64 * Math.max(1, nq));
  let best = new Int32Array(64 * Math.max(1, nq)).fill(-1); // match index per (slot, key)
  let source = new Int32Array(64 * Math.max(1, nq)); // step that gave the score
  const slot = (docNo: number): number => {
    let k = slotOf[docNo]! - 1;
    if (k >= 0) return k;
    k = docs.length;
    docs.push(docNo);
    slotOf[docNo] = k + 1;
    if ((k + 1) * nq > scores.length) {
      const grow = <T extends Float64Array | Int32Array>(a: T, fill: number): T => {
        const b = new (a.constructor as new (len: number) => T)(a.length * 2);
        b.set(a);
        b.fill(fill as never, a.length);
        return b;
      };
      scores = grow(scores, 0);
      best = grow(best, -1);
      source = grow(source, 0);
    }
    const step = index.doc(docNo).stepId;
    steps.push(step);
    for (let q = 0; q < nq; q++) source[k * nq + q] = step;
    return k;
  };
  query.forEach((q, qi) => {
    q.matches.forEach((m, mi) => {
      const p = index.postings(m.key);
      if (!p) return;
      const w = m.weight * idf(n, p.docs.length);
      // Postings are in fold order: the tail holds the most recent turns.
      const lengths = index.lengths();
      for (let i = Math.max(0, p.docs.length - maxPostings); i < p.docs.length; i++) {
        const docNo = p.docs[i]!;
        const tf = p.tfs[i]!;
        const norm = tf + k1 * (1 - bm25b + (bm25b * lengths[docNo]!) / avgLen);
        const sc = (w * (tf * (k1 + 1))) / norm;
        const at = slot(docNo) * nq + qi;
        if (sc > scores[at]!) {
          scores[at] = sc;
          best[at] = mi;
        }
      }
    });
  });
  // The next turn inherits from own scores only (a frozen count), so shares never chain.
  const owned = docs.length;
  const looksLikeAnswer = (docNo: number): boolean => {
    const doc = index.doc(docNo);
    return (intent.error && doc.error) || shapes.some((x) => doc.shapes.includes(x));
  };
  if (nextWeight > 0) {
    const ownScores = scores.slice(0, owned * nq);
    const ownBest = best.slice(0, owned * nq);
    for (let k = 0; k < owned; k++) {
      const fromStep = steps[k]!;
      const nextDoc = index.docOf(fromStep + 1);
      if (nextDoc === undefined) continue;
      // A turn without a key of its own inherits only if it looks like the answer asked for.
      if (slotOf[nextDoc] === 0 && !looksLikeAnswer(nextDoc)) continue;
      const to = slot(nextDoc);
      for (let q = 0; q < nq; q++) {
        const sc = ownScores[k * nq + q]! * nextWeight;
        if (sc <= scores[to * nq + q]!) continue;
        scores[to * nq + q] = sc;
        best[to * nq + q] = ownBest[k * nq + q]!;
        source[to * nq + q] = fromStep;
      }
    }
  }
  for (const d of docs) slotOf[d] = 0;

  // Boosts, then the best `maxCandidates` by (time-weighted) total.
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const step of steps) {
    if (step < lo) lo = step;
    if (step > hi) hi = step;
  }
  const span = Math.max(1, hi - lo);
  const boosts = new Float64Array(docs.length);
  const totals = new Float64Array(docs.length);
  docs.forEach((d, k) => {
    const doc = index.doc(d);
    let b = 1;
    if (intent.error && doc.error) b *= 1 + t.errorBoost;
    if (shapes.some((x) => doc.shapes.includes(x))) b *= 1 + t.shapeBoost;
    b *= Math.max(0, 1 - t.prosePenalty * doc.prose);
    boosts[k] = b;
    let sum = 0;
    for (let q = 0; q < nq; q++) sum += scores[k * nq + q]!;
    const time = intent.time === 'latest' ? 1 + (t.latestBoost * (doc.stepId - lo)) / span : 1;
    totals[k] = sum * b * time;
  });
  let keep = docs.map((_, k) => k);
  if (keep.length > t.maxCandidates) {
    // The k-th best total by a native numeric sort; ties at the cut go to later steps.
    const cut = Float64Array.from(totals).sort()[totals.length - t.maxCandidates]!;
    keep = keep
      .filter((k) => totals[k]! >= cut)
      .sort((a, b) => totals[b]! - totals[a]! || steps[b]! - steps[a]!)
      .slice(0, t.maxCandidates);
  }
  const out = keep.map((k): Candidate => {
    const docNo = docs[k]!;
    const c: Candidate = {
      docNo,
      stepId: steps[k]!,
      perKey: scores.slice(k * nq, (k + 1) * nq),
      bestKey: new Array(nq),
      boost: boosts[k]!,
      source: source.slice(k * nq, (k + 1) * nq),
    };
    for (let q = 0; q < nq; q++) {
      const mi = best[k * nq + q]!;
      if (mi >= 0) c.bestKey[q] = matches[q]![mi];
    }
    return c;
  });
  return out.sort((a, b) => b.stepId - a.stepId);
}

/**
 * Ranked scan: BM25 over retrieval keys with prefix expansion, neighbour inheritance, then a
 * residual greedy cover with intent ownership (as CONF-13's RGSC): each pick removes the prompt
 * keys it matched from the residual, admitted or not, so a budget cap may drop an intent but
 * never hands it to an older turn. Among turns whose gain is within the band of the best, the
 * latest wins (the earliest when the prompt says "first"). Cost per scan: the postings of the
 * prompt's keys, not the number of nodes.
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
  const intent = promptIntent(prompt);
  const query = expandQuery(index, prompt, t);
  const queryTerms = query.map((q) => q.term).sort(compareCodePoints);
  const shapes = askedShapes(prompt);
  const pool = scoreCandidates(index, query, t, intent, shapes);
  const residual = new Array<boolean>(query.length).fill(true);
  const taken = new Set<number>();
  const selected: RankedPick[] = [];
  const dropped: RankedPick[] = [];
  const turnCap = options.perTurnCap;
  const pageCap = Math.min(t.pageTokens, options.perCallCap, turnCap);
  const altCap = Math.min(t.alternativeTokens, pageCap);
  const band = Math.min(
    1,
    intent.time === 'latest'
      ? t.latestBand
      : intent.time === 'earliest'
        ? t.earliestBand
        : t.recencyBand,
  );
  // "now" / "latest": later turns weigh more, linearly over the candidates' span of steps.
  const lo = pool.length > 0 ? pool[pool.length - 1]!.stepId : 0;
  const span = pool.length > 0 ? Math.max(1, pool[0]!.stepId - lo) : 1;
  const recency = (c: Candidate): number =>
    intent.time === 'latest' ? 1 + (t.latestBoost * (c.stepId - lo)) / span : 1;
  // In a small store every key is common by construction (IDF is low for all of them), so the
  // absolute floor scales with the best IDF a key can have until the store has SMALL_STORE turns.
  const minGain = t.minGain * Math.max(0, Math.min(1, idf(index.size, 1) / idf(SMALL_STORE, 1)));
  let consumed = 0;
  let firstGain = 0;
  const owners: { c: Candidate; keys: number[]; gain: number; pick: RankedPick }[] = [];

  const focusOf = (c: Candidate): KeyMatch[] => {
    const focus: KeyMatch[] = [];
    for (let q = 0; q < query.length; q++) {
      const m = c.bestKey[q];
      if (c.perKey[q]! > 0 && m) focus.push({ key: m.key, weight: c.perKey[q]! });
    }
    return focus.sort((a, b) => b.weight - a.weight || compareCodePoints(a.key, b.key));
  };
  const admit = (pick: RankedPick): boolean => {
    if (consumed + pick.cost > turnCap) return false;
    selected.push(pick);
    consumed += pick.cost;
    return true;
  };
  /** Pages the neighbours whose text gave `c` its score on `keys` (the call of a result). */
  const addSources = (c: Candidate, keys: readonly number[], focus: KeyMatch[]): void => {
    if (!t.companions) return;
    const steps = [...new Set(keys.map((q) => c.source[q]!))].filter((s) => s !== c.stepId);
    for (const step of steps.sort((a, b) => b - a)) {
      const docNo = index.docOf(step);
      if (docNo === undefined || taken.has(docNo)) continue;
      const cost = Math.min(index.doc(docNo).tokens, pageCap);
      const pick: RankedPick = {
        step_id: step,
        matched_terms: [],
        cost,
        score: 0,
        focus,
        companion_of: c.stepId,
        status: 'related',
      };
      if (admit(pick)) taken.add(docNo);
    }
  };

  // 1. Intent owners: residual greedy cover; the latest (or earliest) turn of the band wins.
  const gains = new Float64Array(pool.length);
  while (owners.length + dropped.length < t.maxPicks) {
    let best = 0;
    for (let i = 0; i < pool.length; i++) {
      const c = pool[i]!;
      let g = 0;
      if (!taken.has(c.docNo)) {
        for (let q = 0; q < query.length; q++) if (residual[q]) g += c.perKey[q]!;
        g *= c.boost * recency(c);
      }
      gains[i] = g;
      if (g > best) best = g;
    }
    if (best <= 0 || best < minGain || best < firstGain * t.relativeGain) break;
    // The pool is step-descending: the first turn in the band is the latest, the last the earliest.
    let pi = -1;
    for (let i = 0; i < pool.length; i++) {
      if (gains[i]! < best * band) continue;
      pi = i;
      if (intent.time !== 'earliest') break;
    }
    const c = pool[pi]!;
    taken.add(c.docNo);
    if (firstGain === 0) firstGain = gains[pi]!;
    const keys: number[] = [];
    for (let q = 0; q < query.length; q++) {
      if (!residual[q] || c.perKey[q]! <= 0) continue;
      residual[q] = false;
      keys.push(q);
    }
    const focus = focusOf(c);
    const pick: RankedPick = {
      step_id: c.stepId,
      matched_terms: keys.map((q) => query[q]!.term).sort(compareCodePoints),
      cost: Math.min(index.doc(c.docNo).tokens, pageCap),
      score: round(gains[pi]!),
      focus,
      status: 'latest_chronological',
    };
    // The first pick is always admitted (as the reference); a dropped pick keeps its intent.
    if (selected.length > 0 && consumed + pick.cost > turnCap) {
      dropped.push(pick);
      continue;
    }
    admit(pick);
    // Alternatives compare on the plain gain (no time weighting).
    owners.push({ c, keys, gain: gains[pi]! / recency(c), pick });
    addSources(c, keys, focus);
  }

  // 2. Alternatives: other turns nearly as good on an admitted owner's keys, with what budget
  // is left (never for a dropped intent, never displacing an owner).
  for (const o of owners) {
    if (t.maxAlternatives <= 0) break;
    const alts: { c: Candidate; g: number }[] = [];
    for (const c of pool) {
      if (taken.has(c.docNo)) continue;
      let g = 0;
      for (const q of o.keys) g += c.perKey[q]!;
      g *= c.boost;
      if (g >= o.gain * t.alternativeBand && g >= minGain) alts.push({ c, g });
    }
    // On "now" / "latest" prompts the latest candidates are the useful alternatives.
    alts.sort((a, b) =>
      intent.time === 'latest' ? b.c.stepId - a.c.stepId : b.g - a.g || b.c.stepId - a.c.stepId,
    );
    const group: RankedPick[] = [o.pick];
    for (const a of alts.slice(0, t.maxAlternatives)) {
      const focus = focusOf(a.c);
      const pick: RankedPick = {
        step_id: a.c.stepId,
        matched_terms: [],
        cost: Math.min(index.doc(a.c.docNo).tokens, altCap),
        score: round(a.g),
        focus,
        alternative_of: o.c.stepId,
        status: 'historical',
      };
      if (!admit(pick)) continue;
      taken.add(a.c.docNo);
      group.push(pick);
    }
    labelChronologically(group);
  }
  return { query_terms: queryTerms, intent, selected, budget_dropped: dropped };
}

/** CONF-04 labels by step descending: latest_chronological, superseded…, historical. */
function labelChronologically(group: RankedPick[]): void {
  const byStep = [...group].sort((a, b) => b.step_id - a.step_id);
  byStep.forEach((p, i) => {
    p.status =
      i === 0 ? 'latest_chronological' : i === byStep.length - 1 ? 'historical' : 'superseded';
  });
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
