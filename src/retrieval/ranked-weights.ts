import type { FeatureWeights } from './ranked-features.js';

/**
 * Weights of the ranked scan's linear scorer. Learned, not hand-set: pairwise logistic
 * regression over the candidates of every question of `../shared/eval/questions.public.json`
 * (gold turns above the other candidates; for "evolving-value" questions the latest gold turn),
 * by `contextfold eval --train` (src/eval/train.ts: deterministic, fixed schedule). The
 * leave-one-session-out figure of this procedure is what `contextfold eval --loso` prints
 * (docs/retrieval.md). Regenerate with `contextfold eval --train --questions … --json`.
 */
export const RANKED_WEIGHTS: FeatureWeights = Object.freeze({
  block: 0.6114,
  turn: 0.418,
  head: -0.3273,
  prev: 0.8879,
  union: 0.5326,
  next: 0.8973,
  ctx: 0.9277,
  blockN: 1.3873,
  turnN: 0.9174,
  headN: -0.1812,
  prevN: 1.0473,
  unionN: 0.8458,
  nextN: 0.8313,
  ctxN: 0.8062,
  shape: 1.7081,
  shapeTurn: 1.7159,
  err: 2.5125,
  prose: -0.29,
  proseTurn: -0.228,
  len: 0.2558,
  recLatest: 1.5961,
  recEarliest: 0.1483,
  recNone: 1.567,
});
