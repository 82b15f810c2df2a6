// The ranked scan's scorer: the names of the features every candidate gets, in the order of its
// feature vector, and the linear model over them that the weights (learned, see
// `src/eval/train.ts`) define. Kept apart from the feature computation: training, the ablations
// and the scan's selection read these without computing any feature.

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

/**
 * The linear score of a candidate under `weights`.
 *
 * @example
 * linearScore(candidate.features, RANKED_WEIGHTS);
 */
export function linearScore(features: Float64Array, weights: FeatureWeights): number {
  let s = 0;
  for (let i = 0; i < FEATURE_NAMES.length; i++) {
    const w = weights[FEATURE_NAMES[i]!];
    if (w !== undefined) s += w * features[i]!;
  }
  return s;
}

/**
 * {@link linearScore} under `weights`, compiled once for many candidates: the features that weigh
 * and their weights in feature order (the same sum, without a look-up by name per feature).
 *
 * @example
 * const score = linearScorer(RANKED_WEIGHTS);
 * score(candidate.features); // linearScore(candidate.features, RANKED_WEIGHTS)
 */
export function linearScorer(weights: FeatureWeights): (features: Float64Array) => number {
  const at: number[] = [];
  const w: number[] = [];
  for (let i = 0; i < FEATURE_NAMES.length; i++) {
    const x = weights[FEATURE_NAMES[i]!];
    if (x === undefined) continue;
    at.push(i);
    w.push(x);
  }
  return (features) => {
    let s = 0;
    for (let j = 0; j < at.length; j++) s += w[j]! * features[at[j]!]!;
    return s;
  };
}
