import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSafeSplitInLine } from './safe-split-in-line.js';
import { o200kTokenizer } from './tokenizer.js';

const tok = o200kTokenizer();

const piece = fc.constantFrom(
  ' ',
  '\t',
  '\u00a0',
  '\r',
  '\n',
  ';',
  '.',
  '/',
  '"',
  '{"',
  '":',
  ',',
  '+',
  "'",
  "'ll",
  "'s",
  'don',
  'Error',
  'x',
  'A',
  '123',
  '4',
  '٣',
  '²',
  'Ⅻ',
  'f0',
  'e9b',
  '🙂',
  '𝔘',
  'é',
  '\u0301',
);
const part = fc.array(piece, { maxLength: 6 }).map((ps) => ps.join(''));

describe('isSafeSplitInLine', () => {
  it('holds only where o200k counts add across the split', () => {
    fc.assert(
      fc.property(part, part, (x, y) => {
        const t = x + y;
        if (isSafeSplitInLine(t, x.length)) expect(tok.count(t)).toBe(tok.count(x) + tok.count(y));
      }),
      { numRuns: 5000 },
    );
  });

  it('splits before a space after a word, punctuation after a letter or digit, and at letter–digit edges', () => {
    expect(isSafeSplitInLine('foo bar', 3)).toBe(true);
    expect(isSafeSplitInLine('{"key":1}', 5)).toBe(true);
    expect(isSafeSplitInLine('𝔘,', 2)).toBe(true);
    expect(isSafeSplitInLine('a3f9', 1)).toBe(true);
    expect(isSafeSplitInLine('a3f9', 2)).toBe(true);
    expect(isSafeSplitInLine('Ⅻx', 1)).toBe(true);
    expect(isSafeSplitInLine('1234', 2)).toBe(false);
    expect(isSafeSplitInLine('1\u0301', 1)).toBe(false);
    expect(isSafeSplitInLine('foo  bar', 4)).toBe(false);
    expect(isSafeSplitInLine("don't", 3)).toBe(false);
    expect(isSafeSplitInLine('a\u0301', 1)).toBe(false);
    expect(isSafeSplitInLine('a\nb', 1)).toBe(false);
    expect(isSafeSplitInLine('ab', 1)).toBe(false);
    expect(isSafeSplitInLine('a b', 0)).toBe(false);
  });
});
