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
 * Cost: the postings touched, plus one pass over the candidates' bit masks per pick (picks are
 * at most the number of prompt terms).
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

/** RGSC over precomputed query terms (sorted by code point). */
export function rgsc(index: TermIndexReader, terms: string[], budget: ScanBudget): ScanResult {
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

  // Each pick is one linear pass over the candidates' typed masks (picks are at most the
  // number of prompt terms): cheaper than maintaining a heap over every candidate of a common
  // term, and allocation-free.
  const n = cands.length;
  const stepOf = new Float64Array(n);
  for (let c = 0; c < n; c++) stepOf[c] = index.stepAt(cands[c]!);
  const picked = new Uint8Array(n);

  const selected: ScanPick[] = [];
  const dropped: ScanPick[] = [];
  let consumed = 0;
  for (;;) {
    let top = -1;
    let best = 0;
    for (let c = 0; c < n; c++) {
      if (picked[c]) continue;
      const g = words === 1 ? popcount(masks[c]! & residual[0]!) : gainOf(c);
      if (g > best || (g === best && g > 0 && stepOf[c]! > stepOf[top]!)) {
        best = g;
        top = c;
      }
    }
    if (top < 0) break;
    picked[top] = 1;
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
