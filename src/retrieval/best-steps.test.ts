import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bestSteps } from './best-steps.js';

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
