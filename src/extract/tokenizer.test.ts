import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isUsageError } from '../protocol/errors.js';
import {
  countUpTo,
  derivedTokenizer,
  o200kTokenizer,
  referenceTokenizer,
  resolveTokenizer,
  type Tokenizer,
} from './tokenizer.js';

describe('referenceTokenizer', () => {
  it('is max(1, codepoints // 4)', () => {
    expect(referenceTokenizer.name).toBe('reference');
    expect(referenceTokenizer.count('')).toBe(1);
    expect(referenceTokenizer.count('abc')).toBe(1);
    expect(referenceTokenizer.count('abcdefgh')).toBe(2);
    expect(referenceTokenizer.count('abcdefghijk')).toBe(2);
    // Astral characters count once: 8 code points, 16 UTF-16 units.
    expect(referenceTokenizer.count('🚀'.repeat(8))).toBe(2);
  });
});

describe('o200kTokenizer', () => {
  const t = o200kTokenizer();

  it('counts o200k_base tokens', () => {
    expect(t.name).toBe('o200k');
    expect(t.count('hello world')).toBe(2);
    expect(t.count('')).toBe(0);
    expect(t.count('Hello, world!')).toBe(4);
    expect(t.count('The quick brown fox jumps over the lazy dog.')).toBe(10);
    // Digits split in groups of three: ' ', '543', '3'.
    expect(t.count('PostgreSQL running on port 5433')).toBe(9);
  });

  it('counts special-token text as plain text instead of throwing', () => {
    // '<', '|', 'end', 'of', 'text', '|', '>'
    expect(t.count('<|endoftext|>')).toBe(7);
  });

  it('counts a text its pre-tokenizer runs out of stack on (it threw RangeError)', () => {
    // 5 MB of one letter, then a NUL and U+FFFD: the library's regular expression overflows.
    const text = `${'A'.repeat(5_000_000)}\u0000\uFFFD`;
    const tok = o200kTokenizer();
    const n = tok.count(text);
    expect(n).toBeGreaterThan(600_000);
    expect(tok.count(text)).toBe(n);
    expect(countUpTo(tok, text, 1000)).toBe(1001);
  });

  it('is a shared instance', () => {
    expect(o200kTokenizer()).toBe(t);
  });
});

describe('countUpTo', () => {
  const text = fc
    .array(fc.constantFrom('a', 'Z', '7', ' ', '\n', '🚀', 'é', '<|endoftext|>', 'ab12cd'), {
      maxLength: 80,
    })
    .map((ps) => ps.join(''));

  for (const tok of [o200kTokenizer(), referenceTokenizer]) {
    it(`is the count up to the limit and over the limit past it (${tok.name})`, () => {
      fc.assert(
        fc.property(text, fc.integer({ min: 0, max: 60 }), (s, limit) => {
          const n = tok.count(s);
          const bounded = countUpTo(tok, s, limit);
          if (n <= limit) expect(bounded).toBe(n);
          else expect(bounded).toBeGreaterThan(limit);
          expect(countUpTo(tok, s, Number.POSITIVE_INFINITY)).toBe(n);
        }),
        { numRuns: 1000 },
      );
    });
  }

  it('is the count for a tokenizer without a bounded count', () => {
    const words: Tokenizer = { name: 'words', count: (s) => s.split(' ').length };
    expect(countUpTo(words, 'a b c', 1)).toBe(3);
  });

  it('is kept by a derived tokenizer only when the wrapped one has it', () => {
    const words: Tokenizer = { name: 'words', count: (s) => s.split(' ').length };
    expect(derivedTokenizer(words, words.count).countUpTo).toBeUndefined();
    const derived = derivedTokenizer(o200kTokenizer(), (s) => o200kTokenizer().count(s));
    expect(derived.additiveAtLineStarts).toBe(true);
    expect(derived.countUpTo?.('hello world', 1)).toBeGreaterThan(1);
    expect(derived.countUpTo?.('hello world', 5)).toBe(2);
    // Without a bounded form of its own, the wrapper's count answers (a cache, a stored count).
    const stored = derivedTokenizer(o200kTokenizer(), () => 42);
    expect(stored.countUpTo?.('hello world', 100)).toBe(42);
  });
});

describe('resolveTokenizer', () => {
  it('resolves names, instances and the default', () => {
    expect(resolveTokenizer().name).toBe('o200k');
    expect(resolveTokenizer('o200k').name).toBe('o200k');
    expect(resolveTokenizer('reference')).toBe(referenceTokenizer);
    const custom: Tokenizer = { name: 'words', count: (s) => s.split(' ').length };
    expect(resolveTokenizer(custom)).toBe(custom);
  });

  it('rejects unknown names with a UsageError', () => {
    let err: unknown;
    try {
      resolveTokenizer('cl100k' as 'o200k');
    } catch (e) {
      err = e;
    }
    expect(isUsageError(err)).toBe(true);
    expect((err as Error).message).toMatch(/unknown tokenizer "cl100k"/);
  });
});
