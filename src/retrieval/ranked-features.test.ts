import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bestSteps, FEATURE_NAMES, linearScore, linearScorer } from './ranked-features.js';
import { RANKED_WEIGHTS } from './ranked-weights.js';

describe('bestSteps', () => {
  it('keeps what a full sort by score (then later step) keeps, ties at the cut included', () => {
    // Scores from a small set, so ties at the cut-off are the common case.
    const arb = fc
      .uniqueArray(fc.integer({ min: 0, max: 5000 }), { maxLength: 400 })
      .chain((steps) =>
        fc.record({
          steps: fc.constant(steps),
          scores: fc.array(fc.constantFrom(0, 0.25, 0.5, 0.5000000000000001, 1), {
            minLength: steps.length,
            maxLength: steps.length,
          }),
          limit: fc.integer({ min: 0, max: 300 }),
        }),
      );
    fc.assert(
      fc.property(arb, ({ steps, scores, limit }) => {
        const score = Float64Array.from(scores);
        const full = steps
          .map((step, i) => ({ step, s: score[i]! }))
          .sort((a, b) => b.s - a.s || b.step - a.step)
          .slice(0, limit)
          .map((x) => x.step);
        expect(bestSteps(steps, score, limit)).toEqual(full);
      }),
      { numRuns: 300 },
    );
  });

  it('orders the example of its doc comment', () => {
    expect(bestSteps([3, 5, 7], Float64Array.from([0.2, 0.9, 0.2]), 2)).toEqual([5, 7]);
  });
});

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
