import type { FeatureWeights } from './ranked-features.js';

/**
 * Weights of the ranked scan's linear scorer. Learned, not hand-set: pairwise logistic
 * regression over the candidates of every question of `../shared/eval/questions.public.json`
 * (gold turns above the other candidates; for "evolving-value" questions the latest gold turn),
 * by `contextfold eval --fit` (src/eval/train.ts: deterministic, fixed schedule). The
 * leave-one-session-out figure of this procedure is what `contextfold eval --loso` prints
 * (docs/retrieval.md). Regenerate with `contextfold eval --fit --questions … --json`.
 */
export const RANKED_WEIGHTS: FeatureWeights = Object.freeze({
  block: 0.6371,
  turn: 0.3876,
  head: -0.3265,
  prev: 0.8946,
  union: 0.5235,
  next: 0.8931,
  ctx: 0.9266,
  blockN: 1.4466,
  turnN: 0.8735,
  headN: -0.1242,
  prevN: 1.0589,
  unionN: 0.8368,
  nextN: 0.8191,
  ctxN: 0.8057,
  shape: 1.6942,
  shapeTurn: 1.7103,
  err: 2.53,
  prose: -0.298,
  proseTurn: -0.2384,
  len: 0.3004,
  recLatest: 1.5853,
  recEarliest: 0.1495,
  recNone: 1.5471,
});
