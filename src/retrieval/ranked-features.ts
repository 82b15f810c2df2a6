import {
  blockCount,
  hasId,
  isPlainKey,
  localKey,
  type RankedDoc,
  type RankedIndexView,
} from './ranked-index.js';
import { ANSWER_SHAPES, type PromptIntent } from './ranked-intent.js';
import type { QueryKey } from './ranked-query.js';

/**
 * The features a ranked scan scores a candidate turn on. All are generic (no cue word, file
 * name or format of any one session): coverage of the prompt's IDF mass by the turn, its header,
 * its neighbours (a tool result's call, the narration around it), the best block's BM25, answer
 * shape and failure signals, prose, length, and position in time read through the prompt's time
 * cue. `…N` features are the same coverage divided by its maximum over the candidates, so the
 * learned weights compare turns within one prompt rather than across stores.
 */
export const FEATURE_NAMES = [
  'block',
  'turn',
  'head',
  'prev',
  'union',
  'next',
  'ctx',
  'blockN',
  'turnN',
  'headN',
  'prevN',
  'unionN',
  'nextN',
  'ctxN',
  'shape',
  'shapeTurn',
  'err',
  'prose',
  'proseTurn',
  'len',
  'recLatest',
  'recEarliest',
  'recNone',
  'shapeBlockN',
  'errBlockN',
  'shapeLatest',
] as const;

/** One of {@link FEATURE_NAMES}. */
export type FeatureName = (typeof FEATURE_NAMES)[number];

/** Weights of a linear scorer over {@link FEATURE_NAMES} (missing names weigh 0). */
export type FeatureWeights = Readonly<Partial<Record<FeatureName, number>>>;

/** What the feature computation reads besides the index and the query. */
export interface FeatureTuning {
  /** BM25 term-frequency saturation of the block score. */
  k1: number;
  /** BM25 length normalisation of the block score. */
  b: number;
  /** A key's postings are read from the most recent this many turns only (bounded work). */
  maxPostings: number;
  /** At most this many candidates (best coverage of turn and call first) get full features. */
  maxCandidates: number;
}

/** A candidate turn with its features. */
export interface Candidate {
  docNo: number;
  stepId: number;
  /** Feature values, parallel to {@link FEATURE_NAMES}. */
  features: Float64Array;
  /** Index of the best-scoring block of the turn. */
  block: number;
  /** Per query key: the prompt-key credit (weight × IDF) the turn holds itself (0: none). */
  own: Float64Array;
  /** Per query key: the credit its previous turn (the call of a result) holds. */
  fromPrev: Float64Array;
  /** Per query key: the indexed key that gave the credit, own or from the previous turn. */
  matched: (string | undefined)[];
}

/** The candidate set of a prompt. */
export interface CandidateSet {
  candidates: Candidate[];
  /** Per query key: its best attainable credit (weight × IDF of its best match). */
  keyWeights: Float64Array;
  /** Per query key: its rarity, IDF over the IDF of a key in one turn (0..1]. */
  rarity: Float64Array;
}

/** BM25's IDF (always positive). */
export function idf(n: number, df: number): number {
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

const F = Object.fromEntries(FEATURE_NAMES.map((n, i) => [n, i])) as Record<FeatureName, number>;

/** Credit per (document slot, query key) and the match index that gave it. */
interface Credits {
  docs: number[];
  slotOf: Int32Array;
  credit: Float64Array;
  match: Int32Array;
}

function gatherCredits(
  index: RankedIndexView,
  query: readonly QueryKey[],
  maxPostings: number,
): Credits {
  const nq = query.length;
  const slotOf = index.scratchSlots();
  const docs: number[] = [];
  let credit = new Float64Array(64 * Math.max(1, nq));
  let match = new Int32Array(64 * Math.max(1, nq)).fill(-1);
  const slot = (docNo: number): number => {
    const k = slotOf[docNo]! - 1;
    if (k >= 0) return k;
    docs.push(docNo);
    slotOf[docNo] = docs.length;
    if (docs.length * nq > credit.length) {
      const c = new Float64Array(credit.length * 2);
      c.set(credit);
      credit = c;
      const m = new Int32Array(match.length * 2).fill(-1);
      m.set(match);
      match = m;
    }
    return docs.length - 1;
  };
  const n = index.size;
  query.forEach((q, qi) => {
    q.matches.forEach((m, mi) => {
      const p = index.postings(m.key);
      if (!p) return;
      // A view may hold only the most recent postings: the frequency comes from the index.
      const w = m.weight * idf(n, index.docFrequency(m.key));
      // Postings are in fold order: the tail holds the most recent turns.
      for (let i = Math.max(0, p.docs.length - maxPostings); i < p.docs.length; i++) {
        const at = slot(p.docs[i]!) * nq + qi;
        if (w > credit[at]!) {
          credit[at] = w;
          match[at] = mi;
        }
      }
    });
  });
  return { docs, slotOf, credit, match };
}

/** A scorer of one candidate, closed over the prompt's credits. */
class FeatureContext {
  readonly nq: number;
  readonly total: number;
  constructor(
    readonly index: RankedIndexView,
    readonly query: readonly QueryKey[],
    readonly cr: Credits,
    readonly keyWeights: Float64Array,
    readonly t: FeatureTuning,
  ) {
    this.nq = query.length;
    this.#present = { n: 0, id: new Int32Array(this.nq), w: new Float64Array(this.nq) };
    this.total = keyWeights.reduce((s, w) => s + w, 0) || 1;
    const n = index.size;
    this.matchCredit = query.map((q) =>
      Float64Array.from(q.matches, (m) => m.weight * idf(n, index.docFrequency(m.key))),
    );
    this.#plain = query.map((q) => q.matches.map((m) => isPlainKey(m.key)));
  }

  /** Credit slot of the turn at `step` (a turn that holds a prompt key), or -1. */
  slotOfStep(step: number): number {
    const d = this.index.docOf(step);
    return d === undefined ? -1 : this.cr.slotOf[d]! - 1;
  }

  /**
   * Share of the prompt's credit held by a turn and its call together (per prompt key the better
   * of the two), without allocating: run for every candidate.
   */
  callCoverage(step: number): number {
    const a = this.slotOfStep(step);
    const b = this.slotOfStep(step - 1);
    const { credit } = this.cr;
    const nq = this.nq;
    let s = 0;
    for (let q = 0; q < nq; q++) {
      const x = a < 0 ? 0 : credit[a * nq + q]!;
      const y = b < 0 ? 0 : credit[b * nq + q]!;
      s += Math.max(x, y);
    }
    return s / this.total;
  }

  /** Credit offsets of the turns `step - 3` … `step + 2` (-1: holds no prompt key), reused. */
  readonly #around = new Int32Array(6);

  /**
   * The five neighbourhood features of a candidate: the share of the prompt's credit held by
   * the turn itself, by its previous turn, by the two together, by the next turn, and by the
   * turns `step - 3` … `step + 2` together (per prompt key the best of the turns counted). One
   * pass over the prompt's keys, each turn's slot looked up once.
   */
  neighbourhood(step: number, out: Float64Array): void {
    const around = this.#around;
    for (let i = 0; i < 6; i++) {
      const k = this.slotOfStep(step - 3 + i);
      around[i] = k < 0 ? -1 : k * this.nq;
    }
    const { credit } = this.cr;
    const at = (i: number, q: number): number => {
      const o = around[i]!;
      return o < 0 ? 0 : credit[o + q]!;
    };
    let turn = 0;
    let prev = 0;
    let union = 0;
    let next = 0;
    let ctx = 0;
    for (let q = 0; q < this.nq; q++) {
      const c0 = at(3, q);
      const p = at(2, q);
      const nx = at(4, q);
      turn += c0;
      prev += p;
      union += Math.max(p, c0);
      next += nx;
      ctx += Math.max(at(0, q), at(1, q), p, c0, nx, at(5, q));
    }
    out[F.turn] = turn / this.total;
    out[F.prev] = prev / this.total;
    out[F.union] = union / this.total;
    out[F.next] = next / this.total;
    out[F.ctx] = ctx / this.total;
  }

  /** Credit (weight × IDF) of each match of each query key, computed once per prompt. */
  readonly matchCredit: Float64Array[];

  /** Per match of each query key: {@link isPlainKey}, computed once per prompt. */
  readonly #plain: boolean[][];

  /**
   * The matches the turn holds, one per query key (the match that gave the key its credit in the
   * postings), in query-key order: local key id and credit. One key lookup per prompt key, not
   * per match. The arrays are reused by the next candidate.
   */
  present(docNo: number, doc: RankedDoc): Present {
    const out = this.#present;
    out.n = 0;
    const k = this.cr.slotOf[docNo]! - 1;
    if (k < 0) return out;
    for (let q = 0; q < this.nq; q++) {
      const mi = this.cr.match[k * this.nq + q]!;
      if (mi < 0) continue;
      const id = localKey(doc.keys, this.query[q]!.matches[mi]!.key, this.#plain[q]![mi]!);
      if (id < 0) continue;
      out.id[out.n] = id;
      out.w[out.n] = this.matchCredit[q]![mi]!;
      out.n++;
    }
    return out;
  }

  readonly #present: Present;

  /** Credit of the turn's header: the matches (one per key) that the header holds. */
  headCoverage(doc: RankedDoc, present: Present): number {
    let s = 0;
    for (let i = 0; i < present.n; i++) if (hasId(doc.head, present.id[i]!)) s += present.w[i]!;
    return s / this.total;
  }

  /**
   * Per query key: the credit the turn at `step` holds itself (`own`) and the credit its call
   * (the previous turn) holds (`fromPrev`). Returns the indexed key that gave each, own first.
   */
  credits(step: number, own: Float64Array, fromPrev: Float64Array): (string | undefined)[] {
    const { credit, match } = this.cr;
    const nq = this.nq;
    const matched: (string | undefined)[] = new Array(nq);
    // Credit slots of the turn and of its call (the slot of a step is that of its document).
    const a = this.slotOfStep(step);
    const b = this.slotOfStep(step - 1);
    for (let q = 0; q < nq; q++) {
      own[q] = a < 0 ? 0 : credit[a * nq + q]!;
      fromPrev[q] = b < 0 ? 0 : credit[b * nq + q]!;
      const k = own[q]! > 0 ? a : fromPrev[q]! > 0 ? b : -1;
      if (k < 0) continue;
      matched[q] = this.query[q]!.matches[match[k * nq + q]!]?.key;
    }
    return matched;
  }

  /** The best block by BM25 over the prompt's keys (one match per key): its index and score. */
  bestBlock(doc: RankedDoc, present: Present): { block: number; score: number } {
    const { k1, b } = this.t;
    const avg = this.index.averageBlockLength;
    let block = 0;
    let score = 0;
    if (present.n === 0) return { block, score };
    const { blocks } = doc;
    for (let bi = 0; bi < blocks.length; bi++) {
      const blk = blocks[bi]!;
      const norm = k1 * (1 - b + (b * blk.length) / avg);
      let s = 0;
      for (let i = 0; i < present.n; i++) {
        const tf = blockCount(blk, present.id[i]!);
        if (tf !== 0) s += (present.w[i]! * tf * (k1 + 1)) / (tf + norm);
      }
      if (s > score) {
        block = bi;
        score = s;
      }
    }
    return { block, score: score / this.total };
  }
}

/** The matches one candidate holds (see `FeatureContext.present`): parallel arrays, `n` used. */
interface Present {
  n: number;
  id: Int32Array;
  w: Float64Array;
}

/** True when a shape bit mask holds one of the asked answer shapes. */
export const hasShape = (mask: number, asked: readonly string[]): boolean =>
  (mask & shapeMask(asked)) !== 0;

/** The bit mask of the named answer shapes (bit i: `ANSWER_SHAPES[i]`). */
function shapeMask(names: readonly string[]): number {
  let mask = 0;
  ANSWER_SHAPES.forEach((s, i) => {
    if (names.includes(s.name)) mask |= 1 << i;
  });
  return mask;
}

/**
 * The candidate turns of a prompt with their features: every turn that holds a prompt key (from
 * the most recent `maxPostings` of each key) and the turn after each (a tool result is about
 * what its call asked for). Only the `maxCandidates` best by coverage of turn and call get full
 * features, so a scan's work is bounded by the postings it reads, not by the store.
 *
 * @example
 * const set = candidateFeatures(index, query, intent, ['port'], tuning);
 * set.candidates[0]?.features[FEATURE_NAMES.indexOf('turn')]; // share of the prompt's IDF mass
 */
export function candidateFeatures(
  index: RankedIndexView,
  query: readonly QueryKey[],
  intent: PromptIntent,
  askedShapes: readonly string[],
  t: FeatureTuning,
): CandidateSet {
  const { keyWeights, rarity } = keyStats(index, query);
  const cr = gatherCredits(index, query, t.maxPostings);
  try {
    const ctx = new FeatureContext(index, query, cr, keyWeights, t);
    const pool = candidatePool(ctx, cr, t.maxCandidates);
    const lo = pool.reduce((m, step) => Math.min(m, step), Number.POSITIVE_INFINITY);
    const cue: CandidateCue = {
      intent,
      askedMask: shapeMask(askedShapes),
      lo,
      span: Math.max(1, index.lastStep - lo),
    };
    // Every candidate's arrays are views of one buffer: a small typed array of its own costs an
    // allocation outside the heap each, three per candidate.
    const stride = FEATURE_NAMES.length + 2 * query.length;
    const arrays = new Float64Array(pool.length * stride);
    const candidates = pool.map((step, i) =>
      fullCandidate(ctx, step, cue, arrays.subarray(i * stride, (i + 1) * stride)),
    );
    normalise(candidates);
    return { candidates, keyWeights, rarity };
  } finally {
    for (const d of cr.docs) cr.slotOf[d] = 0;
  }
}

/**
 * Per query key: its best attainable credit (weight × IDF of its best match), and its rarity,
 * that credit over the credit of a key found in one turn.
 */
function keyStats(
  index: RankedIndexView,
  query: readonly QueryKey[],
): { keyWeights: Float64Array; rarity: Float64Array } {
  const n = index.size;
  const keyWeights = new Float64Array(query.length);
  const rarity = new Float64Array(query.length);
  const top = idf(n, 1);
  query.forEach((q, qi) => {
    for (const m of q.matches) {
      const w = m.weight * idf(n, index.docFrequency(m.key));
      if (w > keyWeights[qi]!) keyWeights[qi] = w;
    }
    rarity[qi] = top > 0 ? Math.min(1, keyWeights[qi]! / top) : 0;
  });
  return { keyWeights, rarity };
}

/** The steps that get full features: the `limit` best candidates by coverage of turn and call. */
function candidatePool(ctx: FeatureContext, cr: Credits, limit: number): number[] {
  const stepList = candidateSteps(ctx.index, cr.docs);
  // A plain loop: `Float64Array.from` with a mapping function is several times slower.
  const pre = new Float64Array(stepList.length);
  for (let i = 0; i < stepList.length; i++) pre[i] = ctx.callCoverage(stepList[i]!);
  return bestSteps(stepList, pre, limit);
}

/** What the prompt asks beyond its keys, and the span of time its candidates cover. */
interface CandidateCue {
  intent: PromptIntent;
  /** Bit mask of the asked answer shapes (see {@link shapeMask}). */
  askedMask: number;
  /** The earliest candidate step, and the steps from it to the store's last. */
  lo: number;
  span: number;
}

/**
 * A candidate with every feature but the normalised ones. `buffer` holds its features, then its
 * own and its call's credit per query key.
 */
function fullCandidate(
  ctx: FeatureContext,
  step: number,
  cue: CandidateCue,
  buffer: Float64Array,
): Candidate {
  const { index, nq } = ctx;
  const docNo = index.docOf(step)!;
  const doc = index.doc(docNo);
  const f = buffer.subarray(0, FEATURE_NAMES.length);
  const present = ctx.present(docNo, doc);
  const best = ctx.bestBlock(doc, present);
  const blk = doc.blocks[best.block]!;
  f[F.block] = best.score;
  ctx.neighbourhood(step, f);
  f[F.head] = ctx.headCoverage(doc, present);
  f[F.shape] = (blk.shapes & cue.askedMask) !== 0 ? 1 : 0;
  f[F.shapeTurn] = (doc.shapes & cue.askedMask) !== 0 ? 1 : 0;
  f[F.err] = cue.intent.error && blk.error ? 1 : 0;
  f[F.prose] = blk.prose;
  f[F.proseTurn] = doc.prose;
  f[F.len] = Math.log(1 + doc.tokens) / 10;
  const rec = (step - cue.lo) / cue.span;
  f[F.recLatest] = cue.intent.time === 'latest' ? rec : 0;
  f[F.recEarliest] = cue.intent.time === 'earliest' ? 1 - rec : 0;
  f[F.recNone] = cue.intent.time === 'none' ? rec : 0;
  const own = buffer.subarray(FEATURE_NAMES.length, FEATURE_NAMES.length + nq);
  const fromPrev = buffer.subarray(FEATURE_NAMES.length + nq);
  const matched = ctx.credits(step, own, fromPrev);
  return { docNo, stepId: step, features: f, block: best.block, own, fromPrev, matched };
}

/**
 * The steps of the candidate turns: each turn that holds a prompt key (`docs`) and the turn
 * after it (a tool result is about what its call asked for), each once, in that order. Marked
 * by document number in a flat array: a scan of a large store has thousands of candidates.
 */
function candidateSteps(index: RankedIndexView, docs: readonly number[]): number[] {
  let seen = new Uint8Array(index.size + 2);
  const out: number[] = [];
  const add = (docNo: number, step: number): void => {
    if (docNo >= seen.length) {
      const grown = new Uint8Array(2 * docNo + 2);
      grown.set(seen);
      seen = grown;
    }
    if (seen[docNo] !== 0) return;
    seen[docNo] = 1;
    out.push(step);
  };
  for (const d of docs) {
    const step = index.doc(d).stepId;
    add(d, step);
    const next = index.docOf(step + 1);
    if (next !== undefined) add(next, step + 1);
  }
  return out;
}

/**
 * The `limit` steps with the highest `score`, best first, ties broken by the later step: the
 * same as sorting every step and keeping the first `limit`, without sorting them all (the
 * cut-off score comes from a numeric sort, then only the steps at or above it are sorted).
 *
 * @example
 * bestSteps([3, 5, 7], Float64Array.from([0.2, 0.9, 0.2]), 2); // [5, 7]
 */
export function bestSteps(steps: readonly number[], score: Float64Array, limit: number): number[] {
  let kept = steps.map((_, i) => i);
  if (steps.length > limit) {
    const cut = score.slice(0, steps.length).sort()[steps.length - limit]!;
    kept = kept.filter((i) => score[i]! >= cut);
  }
  kept.sort((i, j) => score[j]! - score[i]! || steps[j]! - steps[i]!);
  return kept.slice(0, limit).map((i) => steps[i]!);
}

const NORMALISED: readonly [FeatureName, FeatureName][] = [
  ['block', 'blockN'],
  ['turn', 'turnN'],
  ['head', 'headN'],
  ['prev', 'prevN'],
  ['union', 'unionN'],
  ['next', 'nextN'],
  ['ctx', 'ctxN'],
];

/** {@link NORMALISED} as feature indices (a scan normalises every candidate's seven). */
const NORMALISED_AT = NORMALISED.map(([from, to]) => [F[from], F[to]] as const);

function normalise(candidates: readonly Candidate[]): void {
  for (const [from, to] of NORMALISED_AT) {
    let max = 0;
    for (const c of candidates) max = Math.max(max, c.features[from]!);
    for (const c of candidates) c.features[to] = max > 0 ? c.features[from]! / max : 0;
  }
  for (const c of candidates) interact(c.features);
}

/**
 * Products of two features: a linear scorer cannot say "the asked shape counts when the block
 * that holds it also matches the prompt" with the two features alone.
 */
function interact(f: Float64Array): void {
  f[F.shapeBlockN] = f[F.shape]! * f[F.blockN]!;
  f[F.errBlockN] = f[F.err]! * f[F.blockN]!;
  f[F.shapeLatest] = f[F.shape]! * f[F.recLatest]!;
}

/**
 * The linear score of a candidate under `weights`.
 *
 * @example
 * linearScore(candidate.features, RANKED_WEIGHTS);
 */
export function linearScore(features: Float64Array, weights: FeatureWeights): number {
  let s = 0;
  FEATURE_NAMES.forEach((name, i) => {
    const w = weights[name];
    if (w !== undefined) s += w * features[i]!;
  });
  return s;
}
