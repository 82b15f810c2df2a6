import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { o200kTokenizer, referenceTokenizer } from '../extract/tokenizer.js';
import { chunkUnits } from './chunk-units.js';
import { unitRangeCounter } from './unit-range-count.js';

const line = fc
  .array(
    fc.constantFrom(' ', '\t', '\r', ';', '.', '/', '/x', 'word', 'Ab', '42', '🙂', "n't", '  at'),
    { maxLength: 5 },
  )
  .map((ps) => `${ps.join('')}\n`);
const text = fc
  .tuple(fc.array(line, { maxLength: 14 }), fc.constantFrom('', 'tail', ' '))
  .map(([ls, tail]) => ls.join('') + tail);

describe('unitRangeCounter', () => {
  for (const tok of [o200kTokenizer(), referenceTokenizer]) {
    it(`counts every run of units as ${tok.name} counts their join`, () => {
      fc.assert(
        fc.property(text, fc.integer({ min: 1, max: 6 }), (t, cap) => {
          const units = chunkUnits(t, cap, tok);
          const count = unitRangeCounter(t, units, tok);
          const n = units.counts.length;
          for (let i = 0; i < n; i++) {
            for (let j = i + 1; j <= n; j++) {
              const join = t.slice(units.offsets[i], units.offsets[j]);
              expect(count(i, j)).toBe(tok.count(join));
            }
          }
          expect(units.offsets[n]).toBe(t.length);
        }),
        { numRuns: 300 },
      );
    });
  }
});
