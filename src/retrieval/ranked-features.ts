import { bestSteps } from './best-steps.js';
import { FEATURE_NAMES, type FeatureName } from './linear-scorer.js';
import {
  blockCount,
  type DocLayout,
  hasId,
  keyHash,
  keyNumbers,
  localKey,
  type RankedDoc,
  type RankedIndexView,
  scoringLayout,
} from './ranked-index.js';
import { ANSWER_SHAPES, type PromptIntent } from './ranked-intent.js';
import { idf, keyCredit, type QueryKey } from './ranked-query.js';

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

const F = Object.fromEntries(FEATURE_NAMES.map((n, i) => [n, i])) as Record<FeatureName, number>;

/** Credit per (document slot, query key) and the match index that gave it. */
interface Credits {
  docs: number[];
  slotOf: Int32Array;
  credit: Float64Array;
  match: Int32Array;
}

/**
 * The credit and match arrays of the last scan, reused: they grow to a scan's candidates times
 * its keys (a large store: thousands by several), and {@link releaseCredits} clears what a scan
 * set, so a scan neither allocates nor zeroes them whole.
 */
let creditScratch = new Float64Array(1024);
let matchScratch = new Int32Array(1024).fill(-1);

function gatherCredits(
  index: RankedIndexView,
  query: readonly QueryKey[],
  maxPostings: number,
): Credits {
  const nq = query.length;
  const cr: Credits = {
    docs: [],
    slotOf: index.scratchSlots(),
    credit: creditScratch,
    match: matchScratch,
  };
  try {
    addCredits(index, query, maxPostings, cr);
  } catch (e) {
    // Left set, the shared arrays would credit the next scan with this one's postings.
    releaseCredits(cr, nq);
    throw e;
  }
  return cr;
}

function addCredits(
  index: RankedIndexView,
  query: readonly QueryKey[],
  maxPostings: number,
  cr: Credits,
): void {
  const nq = query.length;
  const n = index.size;
  for (let qi = 0; qi < nq; qi++) {
    const matches = query[qi]!.matches;
    for (let mi = 0; mi < matches.length; mi++) {
      const m = matches[mi]!;
      const p = index.postings(m.key);
      if (!p) continue;
      // A view may hold only the most recent postings: the frequency comes from the index.
      const w = m.weight * idf(n, index.docFrequency(m.key));
      // Postings are in fold order: the tail holds the most recent turns.
      for (let i = Math.max(0, p.docs.length - maxPostings); i < p.docs.length; i++) {
        const at = creditSlot(cr, p.docs[i]!, nq) * nq + qi;
        if (w > cr.credit[at]!) {
          cr.credit[at] = w;
          cr.match[at] = mi;
        }
      }
    }
  }
}

/** The credit slot of a document, given on its first posting (the arrays grow as needed). */
function creditSlot(cr: Credits, docNo: number, nq: number): number {
  const k = cr.slotOf[docNo]! - 1;
  if (k >= 0) return k;
  cr.docs.push(docNo);
  cr.slotOf[docNo] = cr.docs.length;
  if (cr.docs.length * nq > cr.credit.length) {
    const c = new Float64Array(cr.credit.length * 2);
    c.set(cr.credit);
    const m = new Int32Array(cr.match.length * 2).fill(-1);
    m.set(cr.match);
    cr.credit = c;
    cr.match = m;
    creditScratch = c;
    matchScratch = m;
  }
  return cr.docs.length - 1;
}

/** Clears what a scan set in the shared arrays (slots, credits, matches) for the next scan. */
function releaseCredits(cr: Credits, nq: number): void {
  for (const d of cr.docs) cr.slotOf[d] = 0;
  cr.credit.fill(0, 0, cr.docs.length * nq);
  cr.match.fill(-1, 0, cr.docs.length * nq);
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
    this.#present = {
      n: 0,
      at: new Int32Array(this.nq),
      w: new Float64Array(this.nq),
      layout: undefined,
    };
    this.total = keyWeights.reduce((s, w) => s + w, 0) || 1;
    const n = index.size;
    this.matchCredit = query.map((q) =>
      Float64Array.from(q.matches, (m) => m.weight * idf(n, index.docFrequency(m.key))),
    );
    this.#hash = query.map((q) => Int32Array.from(q.matches, (m) => keyHash(m.key)));
    this.#number = query.map((q) =>
      Int32Array.from(q.matches, (m) => keyNumbers.ofPromptKey(m.key)),
    );
  }

  /** Credit slot of the turn at `step` (a turn that holds a prompt key), or -1. */
  slotOfStep(step: number): number {
    const d = this.index.docOf(step);
    return d === undefined ? -1 : this.cr.slotOf[d]! - 1;
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
    let turn = 0;
    let prev = 0;
    let union = 0;
    let next = 0;
    let ctx = 0;
    for (let q = 0; q < this.nq; q++) {
      const c0 = creditAt(credit, around, 3, q);
      const p = creditAt(credit, around, 2, q);
      const nx = creditAt(credit, around, 4, q);
      turn += c0;
      prev += p;
      union += Math.max(p, c0);
      next += nx;
      ctx += Math.max(
        creditAt(credit, around, 0, q),
        creditAt(credit, around, 1, q),
        p,
        c0,
        nx,
        creditAt(credit, around, 5, q),
      );
    }
    out[F.turn] = turn / this.total;
    out[F.prev] = prev / this.total;
    out[F.union] = union / this.total;
    out[F.next] = next / this.total;
    out[F.ctx] = ctx / this.total;
  }

  /** Credit (weight × IDF) of each match of each query key, computed once per prompt. */
  readonly matchCredit: Float64Array[];

  /** Per match of each query key: its {@link keyHash}, computed once per prompt. */
  readonly #hash: Int32Array[];

  /** Per match of each query key: its number in the layouts (`keyNumbers`), once per prompt. */
  readonly #number: Int32Array[];

  /**
   * The matches the turn holds, one per query key (the match that gave the key its credit in the
   * postings), in query-key order: where the document holds the key (its entry in the layout,
   * or without one its local id) and its credit. One key lookup per prompt key, not per match.
   * The arrays are reused by the next candidate.
   */
  present(docNo: number, doc: RankedDoc): Present {
    const out = this.#present;
    out.n = 0;
    const layout = scoringLayout(doc);
    out.layout = layout;
    const k = this.cr.slotOf[docNo]! - 1;
    if (k < 0) return out;
    for (let q = 0; q < this.nq; q++) {
      const mi = this.cr.match[k * this.nq + q]!;
      if (mi < 0) continue;
      const at = layout
        ? layout.find(this.#number[q]![mi]!, this.#hash[q]![mi]!)
        : localKey(doc.keys, this.query[q]!.matches[mi]!.key);
      if (at < 0) continue;
      out.at[out.n] = at;
      out.w[out.n] = this.matchCredit[q]![mi]!;
      out.n++;
    }
    return out;
  }

  readonly #present: Present;

  /** Credit of the turn's header: the matches (one per key) that the header holds. */
  headCoverage(doc: RankedDoc, present: Present): number {
    let s = 0;
    const { layout } = present;
    for (let i = 0; i < present.n; i++) {
      const at = present.at[i]!;
      if (layout ? layout.inHead(at) : hasId(doc.head, at)) s += present.w[i]!;
    }
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

  /** Per block of the candidate being scored: its BM25 so far (zero between candidates). */
  #blockScores = new Float64Array(16);

  /**
   * The best block by BM25 over the prompt's keys (one match per key): its index and score.
   * Each present key adds its term to the blocks that hold it (its pairs in the document's
   * layout), in key order, so every block's sum is the one a pass over the blocks would make.
   */
  bestBlock(doc: RankedDoc, present: Present): { block: number; score: number } {
    if (present.n === 0) return { block: 0, score: 0 };
    const nb = present.layout ? present.layout.blocks : doc.blocks.length;
    if (this.#blockScores.length < nb) this.#blockScores = new Float64Array(2 * nb);
    const acc = this.#blockScores;
    if (present.layout) this.#addFromLayout(present.layout, present, acc);
    else this.#addFromBlocks(doc, present, acc);
    let block = 0;
    let score = 0;
    for (let bi = 0; bi < nb; bi++) {
      if (acc[bi]! > score) {
        block = bi;
        score = acc[bi]!;
      }
      acc[bi] = 0;
    }
    return { block, score: score / this.total };
  }

  /** The BM25 term of a key found `tf` times in a block of `length` keys. */
  #term(w: number, tf: number, length: number): number {
    const { k1, b } = this.t;
    const norm = k1 * (1 - b + (b * length) / this.index.averageBlockLength);
    return (w * tf * (k1 + 1)) / (tf + norm);
  }

  /** {@link bestBlock}'s sums from the layout: each present key's run of (block, count) pairs. */
  #addFromLayout(layout: DocLayout, present: Present, acc: Float64Array): void {
    const { ints } = layout;
    for (let i = 0; i < present.n; i++) {
      const w = present.w[i]!;
      // The key's run of (block, count) pairs, its last block stored complemented.
      const run = layout.runOf(present.at[i]!);
      let last = run < 0;
      for (let p = run; !last; p += 2) {
        let bi = ints[p]!;
        last = bi < 0;
        if (last) bi = ~bi;
        acc[bi]! += this.#term(w, ints[p + 1]!, layout.blockLength(bi));
      }
    }
  }

  /** {@link bestBlock}'s sums from the analysis (no layout): the same terms in the same order. */
  #addFromBlocks(doc: RankedDoc, present: Present, acc: Float64Array): void {
    const { blocks } = doc;
    for (let i = 0; i < present.n; i++) {
      const w = present.w[i]!;
      const id = present.at[i]!;
      for (let bi = 0; bi < blocks.length; bi++) {
        const tf = blockCount(blocks[bi]!, id);
        if (tf > 0) acc[bi]! += this.#term(w, tf, blocks[bi]!.length);
      }
    }
  }
}

/** Credit of query key `q` held by neighbour `i` (see `FeatureContext.neighbourhood`). */
function creditAt(credit: Float64Array, around: Int32Array, i: number, q: number): number {
  const o = around[i]!;
  return o < 0 ? 0 : credit[o + q]!;
}

/** The matches one candidate holds (see `FeatureContext.present`): parallel arrays, `n` used. */
interface Present {
  n: number;
  /** The key's table entry in the layout (see `DocLayout.find`), or its local id without one. */
  at: Int32Array;
  w: Float64Array;
  /** The layout the candidate is scored with (undefined: its first scoring, see `scoringLayout`). */
  layout: DocLayout | undefined;
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
  // Before any key is numbered for this scan: starting over voids the numbers handed out.
  keyNumbers.trim();
  const { keyWeights, rarity } = keyStats(index, query);
  const cr = gatherCredits(index, query, t.maxPostings);
  try {
    const ctx = new FeatureContext(index, query, cr, keyWeights, t);
    const pool = candidatePool(ctx, cr, t.maxCandidates);
    index.prefetch?.(pool.map((step) => index.docOf(step)!));
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
    releaseCredits(cr, query.length);
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
    keyWeights[qi] = keyCredit(index, q);
    rarity[qi] = top > 0 ? Math.min(1, keyWeights[qi]! / top) : 0;
  });
  return { keyWeights, rarity };
}

/** Pre-scores of the last scan's candidate steps (reused: read only while the pool is chosen). */
let preScratch = new Float64Array(1024);

/**
 * The steps that get full features: the `limit` best candidates by coverage of turn and call.
 * The candidates are each turn that holds a prompt key (`cr.docs`) and the turn after it (a tool
 * result is about what its call asked for). A turn after one that holds a key is listed here
 * only when it holds none itself (else it is listed as a holder): each candidate once, with no
 * marks to set and clear, and the credit slots of both turns at hand.
 */
function candidatePool(ctx: FeatureContext, cr: Credits, limit: number): number[] {
  const { index } = ctx;
  const { docs, slotOf } = cr;
  if (preScratch.length < 2 * docs.length) preScratch = new Float64Array(4 * docs.length);
  const pre = preScratch;
  const steps: number[] = [];
  for (let k = 0; k < docs.length; k++) {
    const step = index.stepOf(docs[k]!);
    pre[steps.length] = callCoverage(ctx, cr, k, ctx.slotOfStep(step - 1));
    steps.push(step);
    const next = index.docOf(step + 1);
    if (next !== undefined && slotOf[next] === 0) {
      pre[steps.length] = callCoverage(ctx, cr, -1, k);
      steps.push(step + 1);
    }
  }
  return bestSteps(steps, pre, limit);
}

/**
 * Share of the prompt's credit held by a turn and its call together (per prompt key the better
 * of the two), from their credit slots (-1: holds no key). Plain loops: run for every candidate.
 */
function callCoverage(ctx: FeatureContext, cr: Credits, a: number, b: number): number {
  const { credit } = cr;
  const nq = ctx.nq;
  let s = 0;
  for (let q = 0; q < nq; q++) {
    const x = a < 0 ? 0 : credit[a * nq + q]!;
    const y = b < 0 ? 0 : credit[b * nq + q]!;
    s += Math.max(x, y);
  }
  return s / ctx.total;
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
  f[F.block] = best.score;
  ctx.neighbourhood(step, f);
  f[F.head] = ctx.headCoverage(doc, present);
  // From the layout when there is one (the analysis is not read), else from the analysis.
  const { layout } = present;
  const block = layout ? undefined : doc.blocks[best.block]!;
  const shapes = block ? block.shapes : layout!.blockShapes(best.block);
  f[F.shape] = (shapes & cue.askedMask) !== 0 ? 1 : 0;
  f[F.shapeTurn] = ((layout ?? doc).shapes & cue.askedMask) !== 0 ? 1 : 0;
  f[F.err] = cue.intent.error && (block ? block.error : layout!.blockError(best.block)) ? 1 : 0;
  f[F.prose] = block ? block.prose : layout!.blockProse(best.block);
  f[F.proseTurn] = (layout ?? doc).prose;
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
