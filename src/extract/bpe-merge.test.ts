import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type BpeRanks, heapMerge } from './bpe-merge.js';
import { o200kTokenizer } from './tokenizer.js';

const require = createRequire(import.meta.url);
const { BytePairEncodingCore } = require('gpt-tokenizer/cjs/BytePairEncodingCore') as {
  BytePairEncodingCore: { prototype: { bytePairMerge(piece: Uint8Array): number[] } };
};

/** The o200k processor, and the library's own (quadratic) merge, unpatched. */
function o200k(): { core: BpeRanks; libraryMerge: (piece: Uint8Array) => number[] } {
  o200kTokenizer().count('load'); // loads the vocabulary (and installs the heap merge)
  const m = require('gpt-tokenizer/cjs/encoding/o200k_base') as {
    default: { bytePairEncodingCoreProcessor: BpeRanks };
  };
  const core = m.default.bytePairEncodingCoreProcessor;
  const own = BytePairEncodingCore.prototype.bytePairMerge;
  return { core, libraryMerge: (piece) => own.call(core, piece) };
}

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('heapMerge', () => {
  it('gives the library merge’s tokens on arbitrary pieces (ties, repeats, multi-byte)', () => {
    const { core, libraryMerge } = o200k();
    const alphabet = fc.constantFrom('a', 'A', 'b', 'e', 'r', ' ', '=', '-', 'é', '中', '😀', '0');
    fc.assert(
      fc.property(fc.array(alphabet, { minLength: 1, maxLength: 400 }), (chars) => {
        const piece = utf8(chars.join(''));
        expect(heapMerge(core, piece)).toEqual(libraryMerge(piece));
      }),
      { numRuns: 300, seed: 43 },
    );
  });

  it('gives the library merge’s tokens on long runs of one or two characters', () => {
    const { core, libraryMerge } = o200k();
    for (const s of ['A'.repeat(3000), '='.repeat(2500), 'ab'.repeat(1200), ' '.repeat(2000)]) {
      expect(heapMerge(core, utf8(s))).toEqual(libraryMerge(utf8(s)));
    }
  });

  it('counts a 1 MB run without a break (it took minutes: the library merge is quadratic)', () => {
    const tok = o200kTokenizer();
    const run = 'A'.repeat(1_000_000);
    const n = tok.count(run);
    expect(n).toBeGreaterThan(100_000);
    expect(n).toBeLessThan(1_000_000);
    expect(tok.count(`${run}\n`)).toBe(n + 1);
  });
});
