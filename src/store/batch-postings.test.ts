import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BatchPostings } from './batch-postings.js';

describe('batch postings', () => {
  it('group postings by term in first-added order, each term in the order added', () => {
    const b = new BatchPostings();
    b.add('b', 9, 1);
    b.add('a', 3, 2);
    b.add('b', 4, 5);
    b.add('c', 7, 1);
    b.add('a', 1, 1);
    expect(b.terms).toEqual(['b', 'a', 'c']);
    expect(b.counts).toEqual([2, 2, 1]);
    const { start, steps, tfs } = b.byTerm();
    expect([...start]).toEqual([0, 2, 4, 5]);
    expect([...steps]).toEqual([9, 4, 3, 1, 7]);
    expect([...tfs]).toEqual([1, 5, 2, 1, 1]);
  });

  it('match a map of term to pushed postings, for any sequence (steps up to 2^53)', () => {
    const adds = fc.array(
      fc.tuple(fc.constantFrom('x', 'y', 'z', 'é', ''), fc.maxSafeNat(), fc.nat()),
    );
    fc.assert(
      fc.property(adds, (list) => {
        const b = new BatchPostings();
        const want = new Map<string, [number, number][]>();
        for (const [term, step, tf] of list) {
          b.add(term, step, tf);
          want.set(term, [...(want.get(term) ?? []), [step, tf]]);
        }
        expect(b.terms).toEqual([...want.keys()]);
        const { start, steps, tfs } = b.byTerm();
        b.terms.forEach((term, t) => {
          const got: [number, number][] = [];
          for (let i = start[t]!; i < start[t + 1]!; i++) got.push([steps[i]!, tfs[i]!]);
          expect(got).toEqual(want.get(term));
          expect(b.counts[t]).toBe(got.length);
        });
      }),
    );
  });
});
