import type { FeatureWeights } from './linear-scorer.js';

/**
 * Weights of the ranked scan's linear scorer. Learned, not hand-set: pairwise logistic
 * regression over the candidates of every question of `../shared/eval/questions.public.json`
 * (gold turns above the other candidates; for "evolving-value" questions the latest gold turn),
 * by `contextfold eval --fit` (src/eval/train.ts: deterministic, fixed schedule). The
 * leave-one-session-out figure of this procedure is what `contextfold eval --loso` prints
 * (docs/retrieval.md). Regenerate with `contextfold eval --fit --questions … --json`.
 */
export const RANKED_WEIGHTS: FeatureWeights = Object.freeze({
  block: 0.6137,
  turn: 0.3987,
  head: -0.3209,
  prev: 0.8826,
  union: 0.5095,
  next: 0.8723,
  ctx: 0.9398,
  blockN: 1.3695,
  turnN: 0.8945,
  headN: -0.1524,
  prevN: 1.0495,
  unionN: 0.8241,
  nextN: 0.8255,
  ctxN: 0.8524,
  shape: 1.5024,
  shapeTurn: 1.5951,
  err: 2.4304,
  prose: -0.3033,
  proseTurn: -0.2442,
  len: 0.33,
  recLatest: 1.2834,
  recEarliest: 0.1456,
  recNone: 1.5639,
  shapeBlockN: 0.3225,
  errBlockN: 0.417,
  shapeLatest: 1.1445,
});
