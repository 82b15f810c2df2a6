import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSafeLineStart } from './safe-line-start.js';
import { o200kTokenizer } from './tokenizer.js';

const tok = o200kTokenizer();

const piece = fc.constantFrom(
  '\n',
  '\r\n',
  ' ',
  '\t',
  '\u00a0',
  '\u2028',
  ';',
  '.',
  '/',
  '//',
  '/usr',
  'a/',
  '\u0301',
  '\r',
  '**',
  "'ll",
  'don',
  'Error',
  'x',
  '123',
  '🙂',
  'é',
);
const part = fc.array(piece, { maxLength: 8 }).map((ps) => ps.join(''));

describe('isSafeLineStart', () => {
  it('holds only where o200k counts add across the line start', () => {
    fc.assert(
      fc.property(part, part, (head, y) => {
        const x = `${head}\n`;
        const t = x + y;
        if (isSafeLineStart(t, x.length, t.length)) {
          expect(tok.count(t)).toBe(tok.count(x) + tok.count(y));
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('refuses the starts where the pieces of o200k run on (counts that do not add)', () => {
    const runOn: Array<[string, string]> = [
      ['a.\n', '//b\n'], // '.\n//' is one piece
      ['a\n', '\nb\n'], // blank line: '\n\n' is one piece
      ['a\n', '  \n b'], // white space then LF: one piece
      ['a \n', '\n\n'],
      ['foo\n', ' \nbar'],
    ];
    for (const [x, y] of runOn) {
      expect(tok.count(x + y)).not.toBe(tok.count(x) + tok.count(y));
      expect(isSafeLineStart(x + y, x.length, x.length + y.length)).toBe(false);
    }
  });

  it('needs a LF before and a non-space character before the end', () => {
    expect(isSafeLineStart('a\nb', 2, 3)).toBe(true);
    expect(isSafeLineStart('a\n  b', 2, 5)).toBe(true);
    expect(isSafeLineStart('a\n  /b', 2, 6)).toBe(true);
    expect(isSafeLineStart('a\n  b', 2, 4)).toBe(false);
    expect(isSafeLineStart('ab', 1, 2)).toBe(false);
    expect(isSafeLineStart(';\n/b', 2, 4)).toBe(false);
    expect(isSafeLineStart('a/\r\n/b', 4, 6)).toBe(false);
    expect(isSafeLineStart('a\n/b', 2, 4)).toBe(true);
    expect(isSafeLineStart('a1 \r\n\n/b', 6, 8)).toBe(true);
    expect(isSafeLineStart('\ud835\udd18\n/b', 3, 5)).toBe(true);
    expect(isSafeLineStart('\n/b', 1, 3)).toBe(true);
    expect(isSafeLineStart('b', 0, 1)).toBe(false);
  });
});
