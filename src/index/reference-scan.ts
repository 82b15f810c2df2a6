import type { ScanPick, ScanResult } from '../engine/types.js';
import { queryTerms } from '../extract/terms.js';
import { compareCodePoints } from '../protocol/canonical-json.js';
import type { InvertedIndex } from './inverted-index.js';

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
 * Lazy greedy over a max-heap keyed by (gain, step): gains only shrink as the residual shrinks,
 * so the cost is the postings touched plus O(picks · log candidates).
 *
 * @example
 * referenceScan(index, 'Which port for PostgreSQL?', budget).selected[0]?.step_id;
 */
export function referenceScan(
  index: InvertedIndex,
  prompt: string,
  budget: ScanBudget,
): ScanResult {
  return rgsc(index, queryTerms(prompt), budget);
}

/** RGSC over precomputed query terms (sorted by code point). */
export function rgsc(index: InvertedIndex, terms: string[], budget: ScanBudget): ScanResult {
  index.prepare(terms);
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

  const residual = new Uint32Array(words);
  terms.forEach((_, ti) => {
    residual[ti >>> 5]! |= 1 << (ti & 31);
  });
  const gainOf = (c: number): number => {
    let g = 0;
    for (let w = 0; w < words; w++) g += popcount(masks[c * words + w]! & residual[w]!);
    return g;
  };

  // Max-heap of candidates by (gain desc, step desc), with lazily updated gains.
  const key = new Int32Array(cands.length);
  const heap: number[] = [];
  const before = (a: number, b: number): boolean =>
    key[a]! > key[b]! || (key[a] === key[b] && index.stepAt(cands[a]!) > index.stepAt(cands[b]!));
  const siftDown = (i: number): void => {
    const n = heap.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < n && before(heap[l]!, heap[m]!)) m = l;
      if (r < n && before(heap[r]!, heap[m]!)) m = r;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
  };
  for (let c = 0; c < cands.length; c++) {
    key[c] = gainOf(c);
    heap.push(c);
  }
  for (let i = (heap.length >> 1) - 1; i >= 0; i--) siftDown(i);

  const selected: ScanPick[] = [];
  const dropped: ScanPick[] = [];
  let consumed = 0;
  while (heap.length > 0) {
    const top = heap[0]!;
    const g = gainOf(top);
    if (g !== key[top]) {
      key[top] = g;
      siftDown(0);
      continue;
    }
    if (g === 0) break;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      siftDown(0);
    }
    const matched: string[] = [];
    for (let ti = 0; ti < terms.length; ti++) {
      const w = ti >>> 5;
      const bit = 1 << (ti & 31);
      if (masks[top * words + w]! & residual[w]! & bit) matched.push(terms[ti]!);
    }
    for (let w = 0; w < words; w++) residual[w]! &= ~masks[top * words + w]!;
    const step = index.stepAt(cands[top]!);
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
