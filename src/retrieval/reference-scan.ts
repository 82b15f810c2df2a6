import { queryTerms } from '../extract/terms.js';
import { compareCodePoints } from '../protocol/canonical-json.js';
import type { ScanPick, ScanResult } from '../protocol/results.js';
import type { TermIndexReader } from './inverted-index.js';

/** Budget and cost inputs of a scan. */
export interface ScanBudget {
  perCall: number;
  perTurn: number;
  /** Tokens of a node's whole payload (the engine supplies it; the reference uses token_estimate). */
  tokensOf(stepId: number): number;
}

function popcount(x: number): number {
  let v = x - ((x >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/**
 * The reference software MMU (CONF-13): residual greedy set cover over the nodes that share a
 * query term. Repeatedly picks the node covering most still-unanswered terms (ties: larger
 * step); the first pick is always admitted, later ones while they fit the per-turn budget;
 * a pick's terms leave the residual whether admitted or not (intent ownership), so a budget cap
 * can drop an intent but never hands it to an older node.
 *
 * Cost: the postings touched, one pass over the candidates' bit masks, then per pick a heap
 * step and the gains that went stale (see {@link rgsc}).
 *
 * @example
 * referenceScan(index, 'Which port for PostgreSQL?', budget).selected[0]?.step_id;
 */
export function referenceScan(
  index: TermIndexReader,
  prompt: string,
  budget: ScanBudget,
): ScanResult {
  return rgsc(index, queryTerms(prompt), budget);
}

/** Each candidate's bit mask of the prompt terms it holds (`words` 32-bit words per candidate). */
interface Cover {
  cands: number[];
  words: number;
  masks: Uint32Array;
}

function coverOf(index: TermIndexReader, terms: readonly string[]): Cover {
  const words = Math.max(1, Math.ceil(terms.length / 32));
  const slot = index.scratchCounts(); // ord → candidate number + 1
  const cands: number[] = [];
  let masks = new Uint32Array(64 * words);
  terms.forEach((t, ti) => {
    const w = ti >>> 5;
    const bit = 1 << (ti & 31);
    for (const ord of index.postingsOf(t)) {
      let c = slot[ord]! - 1;
      if (c < 0) {
        c = cands.length;
        cands.push(ord);
        slot[ord] = c + 1;
        if ((c + 1) * words > masks.length) {
          const grown = new Uint32Array(masks.length * 2);
          grown.set(masks);
          masks = grown;
        }
      }
      masks[c * words + w]! |= bit;
    }
  });
  for (const ord of cands) slot[ord] = 0;
  return { cands, words, masks };
}

/**
 * Candidates with a positive upper bound of their gain, as a binary heap ordered by (bound
 * desc, step desc, candidate number asc).
 */
class GainHeap {
  readonly bound: Int32Array;
  readonly #stepOf: Float64Array;
  readonly #heap: Int32Array;
  size = 0;

  constructor(stepOf: Float64Array, gainOf: (c: number) => number) {
    const n = stepOf.length;
    this.#stepOf = stepOf;
    this.bound = new Int32Array(n);
    this.#heap = new Int32Array(n);
    for (let c = 0; c < n; c++) {
      this.bound[c] = gainOf(c);
      if (this.bound[c]! > 0) this.#heap[this.size++] = c;
    }
    for (let at = (this.size >>> 1) - 1; at >= 0; at--) this.siftDown(at);
  }

  get top(): number {
    return this.#heap[0]!;
  }

  #above(a: number, b: number): boolean {
    const { bound } = this;
    const steps = this.#stepOf;
    if (bound[a] !== bound[b]) return bound[a]! > bound[b]!;
    return steps[a]! > steps[b]! || (steps[a] === steps[b] && a < b);
  }

  /** Restores the order below `at` (its candidate's bound went down). */
  siftDown(at: number): void {
    const heap = this.#heap;
    const c = heap[at]!;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= this.size) break;
      if (child + 1 < this.size && this.#above(heap[child + 1]!, heap[child]!)) child++;
      if (!this.#above(heap[child]!, c)) break;
      heap[at] = heap[child]!;
      at = child;
    }
    heap[at] = c;
  }

  pop(): void {
    this.size--;
    if (this.size > 0) {
      this.#heap[0] = this.#heap[this.size]!;
      this.siftDown(0);
    }
  }
}

/**
 * RGSC over precomputed query terms (sorted by code point).
 *
 * Lazy greedy: a candidate's gain only shrinks as the residual does, so a gain computed earlier
 * is an upper bound. A heap top whose bound is still its gain is the candidate a pass over all
 * of them would pick (most gain, ties: larger step): the picks are the same, in the same order,
 * while each pick recomputes only the gains that went stale, not every candidate's.
 */
export function rgsc(index: TermIndexReader, terms: string[], budget: ScanBudget): ScanResult {
  index.prepare(terms);
  const { cands, words, masks } = coverOf(index, terms);
  const residual = new Uint32Array(words);
  terms.forEach((_, ti) => {
    residual[ti >>> 5]! |= 1 << (ti & 31);
  });
  const gainOf = (c: number): number => {
    if (words === 1) return popcount(masks[c]! & residual[0]!);
    let g = 0;
    for (let w = 0; w < words; w++) g += popcount(masks[c * words + w]! & residual[w]!);
    return g;
  };
  const stepOf = Float64Array.from(cands, (ord) => index.stepAt(ord));
  const heap = new GainHeap(stepOf, gainOf);

  const selected: ScanPick[] = [];
  const dropped: ScanPick[] = [];
  let consumed = 0;
  while (heap.size > 0) {
    const top = heap.top;
    const g = gainOf(top);
    if (g !== heap.bound[top]) {
      heap.bound[top] = g;
      if (g === 0) heap.pop();
      else heap.siftDown(0);
      continue;
    }
    heap.pop();
    const matched: string[] = [];
    for (let w = 0; w < words; w++) {
      let m = masks[top * words + w]! & residual[w]!;
      while (m !== 0) {
        const low = m & -m;
        matched.push(terms[w * 32 + 31 - Math.clz32(low)]!);
        m ^= low;
      }
      residual[w]! &= ~masks[top * words + w]!;
    }
    const step = stepOf[top]!;
    const cost = Math.min(budget.tokensOf(step), budget.perCall, budget.perTurn);
    const pick: ScanPick = { step_id: step, matched_terms: matched.sort(compareCodePoints), cost };
    if (selected.length === 0 || consumed + cost <= budget.perTurn) {
      selected.push(pick);
      consumed += cost;
    } else {
      dropped.push(pick);
    }
  }
  return { query_terms: terms, selected, budget_dropped: dropped };
}
