import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StepMap } from './step-map.js';

describe('StepMap', () => {
  it('answers like a Map, for small, large and huge step ids in any order', () => {
    const step = fc.oneof(
      fc.nat(2000),
      fc.integer({ min: 2 ** 20 - 3, max: 2 ** 20 + 3 }),
      fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(step, fc.integer())), fc.array(step), (writes, reads) => {
        const m = new StepMap<number>();
        const ref = new Map<number, number>();
        for (const [s, v] of writes) {
          m.set(s, v);
          ref.set(s, v);
        }
        for (const s of [...reads, ...ref.keys()]) expect(m.get(s)).toBe(ref.get(s));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps every value while its array grows', () => {
    const m = new StepMap<number>();
    for (let s = 0; s < 5000; s++) m.set(s, s * 2);
    m.set(2 ** 20 - 1, 7);
    for (let s = 0; s < 5000; s++) expect(m.get(s)).toBe(s * 2);
    expect(m.get(5000)).toBeUndefined();
    expect(m.get(2 ** 20 - 1)).toBe(7);
  });
});
