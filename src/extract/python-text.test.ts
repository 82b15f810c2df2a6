import { describe, expect, it } from 'vitest';
import {
  codePointLength,
  hasLoneSurrogate,
  isPythonWhitespace,
  PY_SPACE,
  PY_WORD,
  pythonRstrip,
  pythonStrip,
} from './python-text.js';

// The exact sets CPython 3.11 reports for str.isspace() / re's \s on str.
const PYTHON_WHITESPACE = [
  0x9, 0xa, 0xb, 0xc, 0xd, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002,
  0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f,
  0x3000,
];

describe('Python whitespace', () => {
  it('is exactly the 29 code points CPython lists', () => {
    const found: number[] = [];
    for (let c = 0; c <= 0x10ffff; c++) if (isPythonWhitespace(c)) found.push(c);
    expect(found).toEqual(PYTHON_WHITESPACE);
  });

  it('the regex class body agrees with isPythonWhitespace over the BMP', () => {
    const re = new RegExp(`^[${PY_SPACE}]$`, 'u');
    const mismatches: string[] = [];
    for (let c = 0; c <= 0xffff; c++) {
      if (c >= 0xd800 && c <= 0xdfff) continue;
      if (re.test(String.fromCharCode(c)) !== isPythonWhitespace(c))
        mismatches.push(c.toString(16));
    }
    expect(mismatches).toEqual([]);
  });

  it('rstrip strips Python whitespace only (not U+FEFF, U+200B, U+180E)', () => {
    const all = String.fromCodePoint(...PYTHON_WHITESPACE);
    expect(pythonRstrip(`a${all}`)).toBe('a');
    expect(pythonRstrip('a\u200b')).toBe('a\u200b');
    expect(pythonRstrip('a\uFEFF')).toBe('a\uFEFF');
    expect(pythonRstrip('a\u180e')).toBe('a\u180e');
    expect(pythonRstrip('  a \u007f')).toBe('  a \u007f');
    expect(pythonRstrip('  a  ')).toBe('  a');
    expect(pythonRstrip(' \n ')).toBe('');
    // JavaScript's trimEnd differs on both counts.
    expect('a\x1f'.trimEnd()).toBe('a\x1f');
    expect('a\uFEFF'.trimEnd()).toBe('a');
  });

  it('strip removes both ends', () => {
    expect(pythonStrip('\u3000 ls -la \r\x1c')).toBe('ls -la');
    expect(pythonStrip(' \t ')).toBe('');
    expect(pythonStrip('x')).toBe('x');
  });
});

describe('Python \\w', () => {
  const word = new RegExp(`^[${PY_WORD}]$`, 'u');
  it.each([
    ['a', true],
    ['_', true],
    ['é', true],
    ['ı', true],
    ['²', true],
    ['½', true],
    ['Ⅻ', true],
    ['٣', true],
    ['𝔘', true],
    ['\u0301', false], // combining marks are not \w in Python (JS \p{L} agrees)
    ['\u200b', false],
    ['-', false],
    ['$', false],
  ])('%s is word: %s', (ch, isWord) => {
    expect(word.test(ch)).toBe(isWord);
  });
});

describe('codePointLength / hasLoneSurrogate', () => {
  it('counts code points like Python len()', () => {
    expect(codePointLength('')).toBe(0);
    expect(codePointLength('a\u{1F680}b')).toBe(3);
    expect(codePointLength('\uD800x')).toBe(2);
    expect(codePointLength('x\uDC00\uD800')).toBe(3);
    expect(codePointLength('\u{1D518}\u{1D52B}')).toBe(2);
  });

  it('detects lone surrogates only', () => {
    expect(hasLoneSurrogate('\uD800x')).toBe(true);
    expect(hasLoneSurrogate('x\uDC00')).toBe(true);
    expect(hasLoneSurrogate('\uDC00\uD800')).toBe(true);
    expect(hasLoneSurrogate('\u{1F680}\uFFFD')).toBe(false);
  });
});
