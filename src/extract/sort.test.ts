import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sortedUnique } from '../protocol/canonical-json.js';
import { sortedUniqueByCodePoint } from './sort.js';

describe('sortedUniqueByCodePoint', () => {
  it('orders astral characters after U+E000–U+FFFF, as Python does', () => {
    expect(sortedUniqueByCodePoint(['\u{1F600}', '\uFF01', 'a', 'a'])).toEqual([
      'a',
      '\uFF01',
      '\u{1F600}',
    ]);
  });

  it('equals sortedUnique on any strings', () => {
    const unit = fc.constantFrom(
      'a',
      'B',
      '\uD7FF',
      '\uE000',
      '\uFFFF',
      '\u{10000}',
      '\u{1F600}',
      'é',
    );
    const str = fc.oneof(
      fc.array(unit, { maxLength: 4 }).map((a) => a.join('')),
      fc.string({ unit: 'binary', maxLength: 6 }),
    );
    fc.assert(
      fc.property(fc.array(str, { maxLength: 20 }), (values) => {
        expect(sortedUniqueByCodePoint(values)).toEqual(sortedUnique(values));
      }),
      { numRuns: 2000 },
    );
  });
});
