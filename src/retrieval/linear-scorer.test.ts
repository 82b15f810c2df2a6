import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FEATURE_NAMES, linearScore, linearScorer } from './linear-scorer.js';
import { RANKED_WEIGHTS } from './ranked-weights.js';

describe('linearScorer', () => {
  it('sums what linearScore sums, bit for bit, whichever features weigh', () => {
    const n = FEATURE_NAMES.length;
    const weight = fc.option(fc.double({ min: -50, max: 50, noNaN: true }), { nil: undefined });
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -1e3, max: 1e3, noNaN: true }), { minLength: n, maxLength: n }),
        fc.array(weight, { minLength: n, maxLength: n }),
        (values, ws) => {
          const features = Float64Array.from(values);
          const weights = Object.fromEntries(
            FEATURE_NAMES.flatMap((name, i) => (ws[i] === undefined ? [] : [[name, ws[i]]])),
          );
          expect(Object.is(linearScorer(weights)(features), linearScore(features, weights))).toBe(
            true,
          );
          const learned = linearScorer(RANKED_WEIGHTS)(features);
          expect(Object.is(learned, linearScore(features, RANKED_WEIGHTS))).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});
