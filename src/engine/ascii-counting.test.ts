import { describe, expect, it } from 'vitest';
import { o200kTokenizer } from '../extract/tokenizer.js';
import { asciiCopy, asciiCounting } from './ascii-counting.js';

describe('asciiCopy', () => {
  it('keeps every character, ASCII or not (lone surrogates included)', () => {
    const big = `${'x'.repeat(100)}\u2713\n${'y'.repeat(50)}\n`;
    for (const s of [
      '',
      'abc\r\n',
      big.slice(0, 60),
      big.slice(102),
      big,
      '\u00e9t\u00e9',
      '\ud83d',
      '\u0000\u007f',
    ]) {
      expect(asciiCopy(s)).toBe(s);
    }
  });
});

describe('asciiCounting', () => {
  it('counts as the tokenizer does and keeps its name and additivity', () => {
    const tok = o200kTokenizer();
    const counting = asciiCounting(tok);
    expect(counting.name).toBe('o200k');
    expect(counting.additiveAtLineStarts).toBe(true);
    const s = `plain ascii line\n\u2713 not ascii ${'word '.repeat(20)}\n`;
    for (const x of [s, s.slice(0, 17), s.slice(17)]) expect(counting.count(x)).toBe(tok.count(x));
    expect(
      asciiCounting({ name: 'n', count: (x) => x.length }).additiveAtLineStarts,
    ).toBeUndefined();
  });
});
